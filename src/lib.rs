//! aqueduct: re-exports.
