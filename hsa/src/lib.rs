//! HSA table
