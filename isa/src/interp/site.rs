//! Where a wave runs on its agent: the agent's compute-unit topology ([`Topology`], which a
//! dispatch carries) and each wave's place and allocation ([`WaveSite`], set when it starts), from
//! which `hw_registers.rs` answers `s_getreg_b32` of the identity and allocation registers.

/// Where a soft agent's compute units sit: how many, and the shader engines and arrays per engine
/// they are spread over (`hsa_agent_get_info`'s counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    pub compute_units: u32,
    pub shader_engines: u32,
    pub shader_arrays_per_engine: u32,
}

impl Default for Topology {
    /// One compute unit in one shader array of one engine: every workgroup runs on CU 0.
    fn default() -> Topology {
        Topology { compute_units: 1, shader_engines: 1, shader_arrays_per_engine: 1 }
    }
}

/// What a wave's hardware registers are derived from, set when it starts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WaveSite {
    /// The compute unit its workgroup runs on (0 .. `topology.compute_units`).
    pub cu: u32,
    /// Its index among its workgroup's waves.
    pub wave: u32,
    /// Its workgroup's wave count.
    pub waves: u32,
    pub topology: Topology,
    /// COMPUTE_PGM_RSRC1 (granulated VGPR count 5:0, SGPR count 9:6, WGP_MODE 29).
    pub rsrc1: u32,
    pub wave32: bool,
    /// The workgroup's LDS bytes.
    pub lds_bytes: u32,
}
