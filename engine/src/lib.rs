//! aqueduct-engine: filled by the engine-core issue (see docs/ARCHITECTURE.md).
