//! Every checked-in fixture parses to the values `llvm-readelf-19 --notes`,
//! `-h` and `-s` print for it.

mod common;

use ValueKind::*;
use aqueduct_codeobject::{
    AbiVersion, Access, AddressSpace, CodeObject, FeatureState, KernelMetadata, TargetId, ValueKind,
};
use common::*;

/// (offset, size, kind) of each argument.
type Args = &'static [(u32, u32, ValueKind)];

const FILL: Args = &[(0, 8, GlobalBuffer), (8, 4, ByValue)];
const AXPY: Args = &[(0, 4, ByValue), (8, 8, GlobalBuffer), (16, 8, GlobalBuffer)];
const MIXED: Args =
    &[(0, 1, ByValue), (2, 2, ByValue), (8, 8, ByValue), (16, 8, ByValue), (24, 8, ByValue), (32, 8, GlobalBuffer)];
/// Code-object v5+ implicit arguments, pulled in by `__builtin_amdgcn_implicitarg_ptr`.
const WITH_HIDDEN_V5: Args = &[
    (0, 8, GlobalBuffer),
    (8, 4, HiddenBlockCountX),
    (12, 4, HiddenBlockCountY),
    (16, 4, HiddenBlockCountZ),
    (20, 2, HiddenGroupSizeX),
    (22, 2, HiddenGroupSizeY),
    (24, 2, HiddenGroupSizeZ),
    (26, 2, HiddenRemainderX),
    (28, 2, HiddenRemainderY),
    (30, 2, HiddenRemainderZ),
    (48, 8, HiddenGlobalOffsetX),
    (56, 8, HiddenGlobalOffsetY),
    (64, 8, HiddenGlobalOffsetZ),
    (72, 2, HiddenGridDims),
    (88, 8, HiddenHostcallBuffer),
    (96, 8, HiddenMultigridSyncArg),
    (104, 8, HiddenHeapV1),
    (112, 8, HiddenDefaultQueue),
    (120, 8, HiddenCompletionAction),
    (208, 8, HiddenQueuePtr),
];
/// Code-object v4 implicit arguments.
const WITH_HIDDEN_V4: Args = &[
    (0, 8, GlobalBuffer),
    (8, 8, HiddenGlobalOffsetX),
    (16, 8, HiddenGlobalOffsetY),
    (24, 8, HiddenGlobalOffsetZ),
    (32, 8, HiddenHostcallBuffer),
    (40, 8, HiddenDefaultQueue),
    (48, 8, HiddenCompletionAction),
    (56, 8, HiddenMultigridSyncArg),
];

fn assert_args(kernel: &KernelMetadata, expected: Args) {
    let actual: Vec<(u32, u32, ValueKind)> =
        kernel.args.iter().map(|a| (a.offset, a.size, a.value_kind.clone())).collect();
    assert_eq!(actual, expected, "args of {}", kernel.name);
}

/// Checks the four kernels of `kernels.c`.
fn assert_kernels_c(code_object: &CodeObject, wavefront: u32, hidden: Args, hidden_kernarg_size: u32) {
    let names: Vec<&str> = code_object.kernels().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["fill", "axpy", "mixed", "with_hidden"]);
    let expected =
        [("fill", 12, FILL), ("axpy", 24, AXPY), ("mixed", 40, MIXED), ("with_hidden", hidden_kernarg_size, hidden)];
    for (index, (name, kernarg_size, args)) in expected.into_iter().enumerate() {
        let kernel = code_object.kernel(name).unwrap();
        assert_eq!(kernel.symbol, format!("{name}.kd"));
        assert_eq!(kernel.kernarg_segment_size, kernarg_size, "{name}");
        assert_eq!(kernel.kernarg_segment_align, 8, "{name}");
        assert_eq!(kernel.group_segment_fixed_size, 0, "{name}");
        assert_eq!(kernel.private_segment_fixed_size, 0, "{name}");
        assert_eq!(kernel.wavefront_size, wavefront, "{name}");
        assert_eq!(kernel.max_flat_workgroup_size, 1024, "{name}");
        assert_eq!(kernel.reqd_workgroup_size, None);
        assert_args(kernel, args);
        // Pointers from C are generic-address-space global buffers.
        for arg in &kernel.args {
            let expected_space = (arg.value_kind == GlobalBuffer).then_some(AddressSpace::Generic);
            assert_eq!(arg.address_space, expected_space, "{name}");
        }
        assert_eq!(code_object.kernel_index(name), Ok(index));
    }
}

/// The kernel descriptor's `kernarg_size` field (bytes 8..12) must agree with
/// the metadata, which proves the descriptor offsets point at real descriptors.
fn assert_descriptors_match_metadata(bytes: &[u8], code_object: &CodeObject) {
    for (index, kernel) in code_object.kernels().iter().enumerate() {
        let descriptor = code_object.kernel_descriptor_bytes(bytes, index).unwrap();
        let group = u32::from_le_bytes(descriptor[0..4].try_into().unwrap());
        let private = u32::from_le_bytes(descriptor[4..8].try_into().unwrap());
        let kernarg = u32::from_le_bytes(descriptor[8..12].try_into().unwrap());
        assert_eq!(group, kernel.group_segment_fixed_size, "{}", kernel.name);
        assert_eq!(private, kernel.private_segment_fixed_size, "{}", kernel.name);
        assert_eq!(kernarg, kernel.kernarg_segment_size, "{}", kernel.name);
    }
    let count = code_object.kernels().len();
    assert_eq!(code_object.kernel_descriptor_bytes(bytes, count), None);
    assert_eq!(code_object.kernel_descriptor(count), None);
}

#[test]
fn gfx90a_xnack_on_code_object_v4() {
    let co = CodeObject::parse(GFX90A_XNACK_ON_V4).unwrap();
    // llvm-readelf: ABI Version 2, Flags 0x73F (gfx90a, xnack+, sramecc any).
    assert_eq!(co.abi_version(), AbiVersion::V4);
    assert_eq!(co.abi_version().elf_abi_version(), 2);
    assert_eq!(co.target().to_string(), "gfx90a:xnack+");
    assert_eq!(co.target().xnack(), FeatureState::On);
    assert_eq!(co.target().sramecc(), FeatureState::Any);
    assert_eq!(co.target_string(), "amdgcn-amd-amdhsa--gfx90a:xnack+");
    assert_eq!(co.code_object_version(), (1, 1));
    assert_kernels_c(&co, 64, WITH_HIDDEN_V4, 64);
    assert_descriptors_match_metadata(GFX90A_XNACK_ON_V4, &co);
}

#[test]
fn gfx90a_xnack_off_code_object_v5() {
    let co = CodeObject::parse(GFX90A_XNACK_OFF_V5).unwrap();
    // Flags 0x63F: gfx90a, xnack-, sramecc any.
    assert_eq!(co.abi_version(), AbiVersion::V5);
    assert_eq!(co.target().to_string(), "gfx90a:xnack-");
    assert_eq!(co.target_string(), "amdgcn-amd-amdhsa--gfx90a:xnack-");
    assert_eq!(co.code_object_version(), (1, 2));
    assert_kernels_c(&co, 64, WITH_HIDDEN_V5, 264);
    assert_descriptors_match_metadata(GFX90A_XNACK_OFF_V5, &co);
}

#[test]
fn gfx942_code_object_v5() {
    let co = CodeObject::parse(GFX942_V5).unwrap();
    // Flags 0x54C: gfx942, xnack any, sramecc any.
    assert_eq!(co.target().to_string(), "gfx942");
    assert_eq!(co.target().xnack(), FeatureState::Any);
    assert_eq!(co.target().sramecc(), FeatureState::Any);
    assert_eq!(co.target().generic_version(), None);
    assert_eq!(co.target_string(), "amdgcn-amd-amdhsa--gfx942");
    assert_kernels_c(&co, 64, WITH_HIDDEN_V5, 264);
    assert_descriptors_match_metadata(GFX942_V5, &co);
}

#[test]
fn gfx1100_code_object_v5() {
    let co = CodeObject::parse(GFX1100_V5).unwrap();
    assert_eq!(co.abi_version(), AbiVersion::V5);
    assert_eq!(co.target().to_string(), "gfx1100");
    assert_eq!(co.target().xnack(), FeatureState::Unsupported);
    assert_eq!(co.code_object_version(), (1, 2));
    assert_kernels_c(&co, 32, WITH_HIDDEN_V5, 264);
    // llvm-readelf --notes: sgpr/vgpr counts.
    let counts: Vec<(u32, u32)> = co.kernels().iter().map(|k| (k.sgpr_count, k.vgpr_count)).collect();
    assert_eq!(counts, [(18, 3), (18, 4), (14, 5), (24, 17)]);
    // llvm-readelf -s: fill.kd at 0xd80 ... with_hidden.kd at 0xe40, in .rodata at file offset 0xd80.
    let addresses: Vec<u64> = (0..4).map(|i| co.kernel_descriptor(i).unwrap().address).collect();
    assert_eq!(addresses, [0xd80, 0xdc0, 0xe00, 0xe40]);
    let offsets: Vec<u64> = (0..4).map(|i| co.kernel_descriptor(i).unwrap().file_offset).collect();
    assert_eq!(offsets, [0xd80, 0xdc0, 0xe00, 0xe40]);
    assert_descriptors_match_metadata(GFX1100_V5, &co);
}

#[test]
fn gfx11_generic_code_object_v6() {
    let co = CodeObject::parse(GFX11_GENERIC_V6).unwrap();
    // Flags 0x1000054: gfx11-generic, generic_v1.
    assert_eq!(co.abi_version(), AbiVersion::V6);
    assert_eq!(co.target().to_string(), "gfx11-generic");
    assert_eq!(co.target().generic_version(), Some(1));
    assert_eq!(co.target_string(), "amdgcn-amd-amdhsa--gfx11-generic");
    assert_kernels_c(&co, 32, WITH_HIDDEN_V5, 264);
    assert_descriptors_match_metadata(GFX11_GENERIC_V6, &co);

    for agent in ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"] {
        co.target().runs_on(&TargetId::parse(agent).unwrap()).unwrap();
    }
    for agent in ["gfx1030", "gfx1200", "gfx90a"] {
        assert!(co.target().runs_on(&TargetId::parse(agent).unwrap()).is_err(), "{agent}");
    }
}

#[test]
fn gfx9_generic_code_object_v6() {
    let co = CodeObject::parse(GFX9_GENERIC_V6).unwrap();
    // Flags 0x1000151: gfx9-generic, xnack any, generic_v1.
    assert_eq!(co.target().to_string(), "gfx9-generic");
    assert_eq!(co.target().xnack(), FeatureState::Any);
    assert_eq!(co.target().sramecc(), FeatureState::Unsupported);
    assert_eq!(co.target().generic_version(), Some(1));
    assert_kernels_c(&co, 64, WITH_HIDDEN_V5, 264);
    assert_descriptors_match_metadata(GFX9_GENERIC_V6, &co);
    co.target().runs_on(&TargetId::parse("gfx906:sramecc+:xnack-").unwrap()).unwrap();
    assert!(co.target().runs_on(&TargetId::parse("gfx90a").unwrap()).is_err());
}

#[test]
fn exact_code_object_compatibility() {
    let xnack_on = CodeObject::parse(GFX90A_XNACK_ON_V4).unwrap();
    let xnack_off = CodeObject::parse(GFX90A_XNACK_OFF_V5).unwrap();
    let agent = TargetId::parse("gfx90a:sramecc+:xnack-").unwrap();
    assert!(xnack_off.target().runs_on(&agent).is_ok());
    assert_eq!(
        xnack_on.target().runs_on(&agent).unwrap_err().to_string(),
        "code object target gfx90a:xnack+ cannot run on agent gfx90a:sramecc+:xnack-: xnack mismatch"
    );
}

#[test]
fn opencl_argument_kinds() {
    let co = CodeObject::parse(OPENCL_GFX1100_V5).unwrap();
    let names: Vec<&str> = co.kernels().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["reduce", "images", "pipes_and_queues", "prints"]);

    let reduce = co.kernel("reduce.kd").unwrap();
    assert_eq!(reduce.kernarg_segment_size, 36);
    assert_eq!(reduce.reqd_workgroup_size, Some([64, 1, 1]));
    assert_eq!(reduce.max_flat_workgroup_size, 64);
    assert_eq!(reduce.wavefront_size, 32);
    assert_args(
        reduce,
        &[
            (0, 8, GlobalBuffer),
            (8, 8, GlobalBuffer),
            (16, 4, DynamicSharedPointer),
            (24, 8, GlobalBuffer),
            (32, 4, ByValue),
        ],
    );
    let spaces: Vec<Option<AddressSpace>> = reduce.args.iter().map(|a| a.address_space.clone()).collect();
    assert_eq!(
        spaces,
        [
            Some(AddressSpace::Global),
            Some(AddressSpace::Global),
            Some(AddressSpace::Local),
            Some(AddressSpace::Constant),
            None
        ]
    );
    assert_eq!(reduce.args[0].actual_access, Some(Access::ReadOnly));
    assert_eq!(reduce.args[0].access, None);

    let images = co.kernel("images").unwrap();
    assert_args(images, &[(0, 8, Image), (8, 8, Image), (16, 8, Sampler), (24, 8, GlobalBuffer)]);
    assert_eq!(images.args[0].access, Some(Access::ReadOnly));
    assert_eq!(images.args[1].access, Some(Access::WriteOnly));

    let pipes = co.kernel("pipes_and_queues").unwrap();
    assert_args(pipes, &[(0, 8, Pipe), (8, 8, Queue), (16, 8, GlobalBuffer)]);

    let prints = co.kernel("prints").unwrap();
    assert_eq!(prints.kernarg_segment_size, 264);
    let kinds: Vec<&str> = prints.args.iter().map(|a| a.value_kind.as_str()).collect();
    assert!(kinds.contains(&"hidden_printf_buffer"), "{kinds:?}");
    assert_eq!(prints.args.iter().filter(|a| a.value_kind.is_hidden()).count(), 20);
    assert_descriptors_match_metadata(OPENCL_GFX1100_V5, &co);
}

#[test]
fn thousand_kernels() {
    let co = CodeObject::parse(MANY_KERNELS).unwrap();
    assert_eq!(co.kernels().len(), 1000);
    for (index, kernel) in co.kernels().iter().enumerate() {
        assert_eq!(kernel.name, format!("kernel_{index:04}"));
        assert_args(kernel, &[(0, 8, GlobalBuffer), (8, 8, GlobalBuffer), (16, 4, ByValue)]);
    }
    assert_descriptors_match_metadata(MANY_KERNELS, &co);
}

#[test]
fn unknown_kernel_lists_the_available_ones() {
    let co = CodeObject::parse(GFX1100_V5).unwrap();
    let error = co.kernel("fil").unwrap_err();
    assert_eq!(error.available, ["fill", "axpy", "mixed", "with_hidden"]);
    assert_eq!(error.to_string(), "no kernel `fil` in code object; available: fill, axpy, mixed, with_hidden");
}
