//! The interpreter's failures, each a typed error naming where it happened: hand-encoded
//! kernels (a descriptor followed by its code) run over `Regions`, with no runtime.

use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, MemoryFault, Regions};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

const S_ENDPGM: u32 = 0xBF80_0000 | 48 << 16;
const S_CODE_END: u32 = 0xBF80_0000 | 31 << 16;
const S_TRAP: u32 = 0xBF80_0000 | 16 << 16;
/// `s_branch simm16`: the target is the next instruction plus `simm16` dwords.
const fn s_branch(dwords: i16) -> u32 {
    0xBF80_0000 | 32 << 16 | dwords as u16 as u32
}

/// A kernel descriptor (code right after it; wave32 unless told otherwise) and its code, in
/// memory that lives as long as the value.
struct Kernel {
    words: Vec<u32>,
}

impl Kernel {
    fn new(code: &[u32], wave32: bool) -> Kernel {
        let mut words = vec![0u32; 16];
        words[4] = 64; // kernel_code_entry_byte_offset, low half
        words[14] = if wave32 { 1 << 10 } else { 0 }; // kernel_code_properties
        words.extend_from_slice(code);
        words.push(S_CODE_END);
        Kernel { words }
    }

    fn address(&self) -> u64 {
        self.words.as_ptr() as u64
    }

    fn memory(&self) -> Regions {
        Regions(vec![(self.address(), self.words.len() as u64 * 4)])
    }
}

fn dispatch(kernel: &DecodedKernel, workgroup: [u16; 3], instruction_limit: u64, tier: Tier) -> Dispatch<'_> {
    Dispatch {
        instruction_limit,
        tier,
        ..Dispatch::new(kernel, [u32::from(workgroup[0]), u32::from(workgroup[1]), u32::from(workgroup[2])], workgroup)
    }
}

fn run(code: &[u32], workgroup: [u16; 3], instruction_limit: u64) -> (u64, Result<u64, ExecError>) {
    run_as(code, true, workgroup, instruction_limit)
}

fn run_as(code: &[u32], wave32: bool, workgroup: [u16; 3], instruction_limit: u64) -> (u64, Result<u64, ExecError>) {
    let kernel = Kernel::new(code, wave32);
    let memory = kernel.memory();
    let decoded = DecodedKernel::load(&memory, kernel.address()).expect("the kernel decodes");
    let result =
        |tier| run_workgroup(&dispatch(&decoded, workgroup, instruction_limit, tier), &memory, [0; 3], &mut Vec::new());
    let interpreted = result(Tier::Interpreter);
    // The native tier (where it runs: wave32, AVX2) fails and ends exactly as the interpreter does.
    if native::unavailable().is_none() {
        assert_eq!(result(Tier::Native), interpreted, "the native tier and the interpreter disagree");
    }
    (decoded.entry, interpreted)
}

#[test]
fn a_program_that_ends_reports_what_it_ran() {
    let (_, result) = run(&[s_branch(0), S_ENDPGM], [32, 1, 1], 100);
    assert_eq!(result, Ok(2), "one wave ran the branch and s_endpgm");
    let (_, result) = run(&[S_ENDPGM], [64, 1, 1], 100);
    assert_eq!(result, Ok(2), "two waves ran s_endpgm each");
}

#[test]
fn a_wave_that_never_ends_stops_at_its_instruction_budget() {
    let (entry, result) = run(&[s_branch(-1)], [32, 1, 1], 1000);
    assert_eq!(result, Err(ExecError::InstructionLimit { pc: entry, limit: 1000 }));
}

#[test]
fn a_branch_out_of_the_code_is_refused_at_its_target() {
    // Past the one s_endpgm and the s_code_end, where decoding stopped.
    let (entry, result) = run(&[s_branch(4), S_ENDPGM], [32, 1, 1], 100);
    assert_eq!(result, Err(ExecError::PcOutOfRange { pc: entry + 4 + 16 }));
}

#[test]
fn s_trap_traps_naming_its_pc() {
    let (entry, result) = run(&[s_branch(0), S_TRAP, S_ENDPGM], [32, 1, 1], 100);
    assert_eq!(result, Err(ExecError::Trap { pc: entry + 4, reason: "s_trap" }));
}

#[test]
fn a_load_from_unmapped_memory_is_a_fault_naming_the_address() {
    // s_load_b32 s0, s[0:1], null: s[0:1] is 0 (no user SGPRs are enabled).
    let (entry, result) = run(&[0xF400_0000, 0xF800_0000, S_ENDPGM], [32, 1, 1], 100);
    let fault = MemoryFault { address: 0, length: 4, write: false };
    assert_eq!(result, Err(ExecError::Fault { pc: entry, fault }));
}

#[test]
fn wave64_waves_hold_64_lanes_and_refuse_what_their_layout_does_not_model() {
    let (_, result) = run_as(&[S_ENDPGM], false, [128, 1, 1], 100);
    assert_eq!(result, Ok(2), "two wave64 waves ran s_endpgm each");
    // v_wmma_f32_16x16x16_f16 v[0:3], v[8:15], v[16:23], v[0:3] (llvm-mc-19, gfx1100, wave64):
    // the wave64 WMMA layout is not modelled, so it is refused by name.
    let (entry, result) = run_as(&[0xCC40_4000, 0x1C02_2108, S_ENDPGM], false, [64, 1, 1], 100);
    assert_eq!(result, Err(ExecError::Unsupported { pc: entry, mnemonic: "v_wmma_f32_16x16x16_f16" }));
    // v_permlane64_b32 v0, v1 swaps a wave64 wave's halves; a wave32 wave has none to swap.
    let (entry, result) = run_as(&[0x7E00_CF01, S_ENDPGM], true, [32, 1, 1], 100);
    assert_eq!(result, Err(ExecError::Unsupported { pc: entry, mnemonic: "v_permlane64_b32" }));
}

#[test]
fn typed_buffer_formats_the_interpreter_does_not_convert_are_refused_by_name() {
    // tbuffer_load_format_x v0, off, s[0:3], 0 format:[BUF_FMT_10_11_11_FLOAT] (llvm-mc-19,
    // gfx1100): a packed mixed-width format; then the same with format 0, BUF_FMT_INVALID.
    for format in [30u32, 0] {
        let (entry, result) = run(&[0xE800_0000 | format << 19, 0x8000_0000, S_ENDPGM], [32, 1, 1], 100);
        assert_eq!(
            result,
            Err(ExecError::Unsupported { pc: entry, mnemonic: "tbuffer_load_format_x" }),
            "format {format}"
        );
    }
}

#[test]
fn a_buffer_with_add_tid_enable_other_than_the_private_segment_buffer_is_refused_by_name() {
    // s_mov_b32 s3, 0x800000 (ADD_TID_ENABLE in V# word 3, base 0: not the private segment
    // buffer's marker base); buffer_load_b32 v0, off, s[0:3], 0 (llvm-mc-19, gfx1100). A swizzled
    // global buffer is not modelled: refused, not read as scratch or as plain memory.
    let code = [0xBE83_00FF, 0x0080_0000, 0xE050_0000, 0x8000_0000, S_ENDPGM];
    let (entry, result) = run(&code, [32, 1, 1], 100);
    assert_eq!(result, Err(ExecError::Unsupported { pc: entry + 8, mnemonic: "buffer_load_b32" }));
}

#[test]
fn an_inexact_operation_under_a_directed_rounding_it_does_not_model_is_refused_by_name() {
    // s_round_mode 0x0; v_ldexp_f32 v1, v0, v0; s_round_mode 0x1 (f32 toward +inf); the same
    // v_ldexp_f32 (llvm-mc-19, gfx1100): the first runs, the second would round to nearest.
    let (ldexp_low, ldexp_high) = (0xD71C_0001, 0x0002_0100);
    let code = [0xBF91_0000, ldexp_low, ldexp_high, 0xBF91_0001, ldexp_low, ldexp_high, S_ENDPGM];
    let (entry, result) = run(&code, [32, 1, 1], 100);
    assert_eq!(result, Err(ExecError::Unsupported { pc: entry + 16, mnemonic: "v_ldexp_f32" }));
}

#[test]
fn descriptors_and_workgroups_the_interpreter_cannot_run_are_refused() {
    let (_, result) = run(&[S_ENDPGM], [64, 32, 1], 100);
    assert!(matches!(result, Err(ExecError::Descriptor(ref text)) if text.contains("2048 work-items")), "{result:?}");
    // A descriptor outside every region.
    let kernel = Kernel::new(&[S_ENDPGM], true);
    let error = DecodedKernel::load(&kernel.memory(), 0x1000).err().expect("nothing there");
    assert!(matches!(error, ExecError::Fault { pc: 0x1000, .. }), "{error}");
}

#[test]
fn a_wave64_kernel_runs_natively_where_the_host_allows_and_forcing_it_elsewhere_names_why() {
    let kernel = Kernel::new(&[S_ENDPGM], false);
    let memory = kernel.memory();
    let decoded = DecodedKernel::load(&memory, kernel.address()).expect("the kernel decodes");
    let result = run_workgroup(&dispatch(&decoded, [64, 1, 1], 100, Tier::Native), &memory, [0; 3], &mut Vec::new());
    match native::unavailable() {
        Some(reason) => assert_eq!(result, Err(ExecError::NativeUnavailable(reason))),
        None => assert_eq!(result, Ok(1)),
    }
    // `Auto` runs it either way.
    let result = run_workgroup(&dispatch(&decoded, [64, 1, 1], 100, Tier::Auto), &memory, [0; 3], &mut Vec::new());
    assert_eq!(result, Ok(1));
}
