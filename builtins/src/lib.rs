//! aqueduct-builtins: the device library (filled by the code-object issue).
