//! aqueduct-codeobject: AMDGPU code-object parsing and target IDs.
