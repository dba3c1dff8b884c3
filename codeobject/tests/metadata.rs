//! The metadata parser on hand-built MessagePack: every value kind, and
//! every validation error.

mod common;

use aqueduct_codeobject::{Access, AddressSpace, KernelRef, Location, MetadataError, ValueKind, parse_metadata};
use common::*;
use rmpv::Value;

fn kernel_named(name: &str) -> Location {
    Location::Kernel(KernelRef::Name(name.to_owned()))
}

fn parse(value: &Value) -> Result<aqueduct_codeobject::Metadata, MetadataError> {
    parse_metadata(&encode(value))
}

#[test]
fn parses_every_field_and_value_kind() {
    let kinds = [
        "by_value",
        "global_buffer",
        "dynamic_shared_pointer",
        "sampler",
        "image",
        "pipe",
        "queue",
        "hidden_global_offset_x",
        "hidden_global_offset_y",
        "hidden_global_offset_z",
        "hidden_none",
        "hidden_printf_buffer",
        "hidden_hostcall_buffer",
        "hidden_default_queue",
        "hidden_completion_action",
        "hidden_multigrid_sync_arg",
        "hidden_block_count_x",
        "hidden_block_count_y",
        "hidden_block_count_z",
        "hidden_group_size_x",
        "hidden_group_size_y",
        "hidden_group_size_z",
        "hidden_remainder_x",
        "hidden_remainder_y",
        "hidden_remainder_z",
        "hidden_grid_dims",
        "hidden_heap_v1",
        "hidden_dynamic_lds_size",
        "hidden_private_base",
        "hidden_shared_base",
        "hidden_queue_ptr",
        "hidden_some_future_kind",
    ];
    let args: Vec<Value> = kinds.iter().enumerate().map(|(i, kind)| arg(i as u64 * 8, 8, kind)).collect();
    let mut kernel_map = kernel("everything", kinds.len() as u64 * 8, args);
    kernel_map.push((".reqd_workgroup_size", Value::Array(vec![64u64.into(), 2u64.into(), 1u64.into()])));
    kernel_map.push((".workgroup_size_hint", Value::Array(vec![32u64.into(), 1u64.into(), 1u64.into()])));
    kernel_map.push((".uses_dynamic_stack", Value::Boolean(false)));
    kernel_map.push((".language", s("OpenCL C")));
    let metadata = parse(&document(vec![kernel_map])).unwrap();

    assert_eq!(metadata.version, (1, 2));
    assert_eq!(metadata.target, "amdgcn-amd-amdhsa--gfx1100");
    let kernel = &metadata.kernels[0];
    assert_eq!(kernel.reqd_workgroup_size, Some([64, 2, 1]));
    assert_eq!(kernel.workgroup_size_hint, Some([32, 1, 1]));
    assert_eq!((kernel.sgpr_count, kernel.vgpr_count, kernel.max_flat_workgroup_size), (10, 4, 256));
    for (arg, kind) in kernel.args.iter().zip(kinds) {
        assert_eq!(arg.value_kind.as_str(), kind);
        assert_eq!(arg.value_kind.is_hidden(), kind.starts_with("hidden_"));
    }
    assert_eq!(kernel.args[2].value_kind, ValueKind::DynamicSharedPointer);
    assert_eq!(kernel.args[27].value_kind, ValueKind::HiddenDynamicLdsSize);
    assert_eq!(kernel.args[28].value_kind, ValueKind::HiddenPrivateBase);
    assert_eq!(kernel.args[29].value_kind, ValueKind::HiddenSharedBase);
    assert_eq!(kernel.args[10].value_kind, ValueKind::HiddenNone);
    assert_eq!(kernel.args[31].value_kind, ValueKind::Other("hidden_some_future_kind".into()));
}

#[test]
fn parses_address_spaces_access_and_names() {
    let spaces = ["global", "constant", "local", "private", "generic", "region"];
    let expected_spaces = [
        AddressSpace::Global,
        AddressSpace::Constant,
        AddressSpace::Local,
        AddressSpace::Private,
        AddressSpace::Generic,
        AddressSpace::Region,
    ];
    let accesses = ["read_only", "write_only", "read_write", "read_only", "write_only", "read_write"];
    let args = spaces
        .iter()
        .zip(accesses)
        .enumerate()
        .map(|(i, (space, access))| {
            map(vec![
                (".name", s(&format!("p{i}"))),
                (".offset", (i as u64 * 8).into()),
                (".size", 8u64.into()),
                (".value_kind", s("global_buffer")),
                (".address_space", s(space)),
                (".access", s(access)),
                (".actual_access", s(access)),
            ])
        })
        .collect();
    let metadata = parse(&document(vec![kernel("k", 48, args)])).unwrap();
    let args = &metadata.kernels[0].args;
    for (i, arg) in args.iter().enumerate() {
        assert_eq!(arg.name.as_deref(), Some(format!("p{i}").as_str()));
        assert_eq!(arg.address_space.as_ref(), Some(&expected_spaces[i]));
    }
    assert_eq!(args[0].access, Some(Access::ReadOnly));
    assert_eq!(args[1].actual_access, Some(Access::WriteOnly));
    assert_eq!(args[2].access, Some(Access::ReadWrite));
}

#[test]
fn kernel_without_args_and_document_without_kernels() {
    let mut no_args = kernel("k", 0, vec![]);
    no_args.retain(|(key, _)| *key != ".args");
    assert!(parse(&document(vec![no_args])).unwrap().kernels[0].args.is_empty());
    let empty = map(vec![
        ("amdhsa.version", Value::Array(vec![1u64.into(), 1u64.into()])),
        ("amdhsa.target", s("amdgcn-amd-amdhsa--gfx90a")),
    ]);
    assert!(parse(&empty).unwrap().kernels.is_empty());
}

#[test]
fn missing_required_kernel_fields() {
    let required = [
        ".symbol",
        ".kernarg_segment_size",
        ".kernarg_segment_align",
        ".group_segment_fixed_size",
        ".private_segment_fixed_size",
        ".wavefront_size",
        ".sgpr_count",
        ".vgpr_count",
        ".max_flat_workgroup_size",
    ];
    for field in required {
        let mut k = kernel("k", 8, vec![]);
        k.retain(|(key, _)| *key != field);
        assert_eq!(
            parse(&document(vec![k])),
            Err(MetadataError::MissingField { location: kernel_named("k"), field }),
            "{field}"
        );
    }
    // Without a name, the kernel is named by its index.
    let mut k = kernel("k", 8, vec![]);
    k.retain(|(key, _)| *key != ".name");
    let error = parse(&document(vec![kernel("first", 0, vec![]), k])).unwrap_err();
    assert_eq!(error, MetadataError::MissingField { location: Location::Kernel(KernelRef::Index(1)), field: ".name" });
    assert_eq!(error.to_string(), "kernel #1: missing required field `.name`");
}

#[test]
fn missing_required_arg_and_root_fields() {
    for field in [".offset", ".size", ".value_kind"] {
        let mut a = vec![(".offset", 0u64.into()), (".size", 4u64.into()), (".value_kind", s("by_value"))];
        a.retain(|(key, _)| *key != field);
        let error = parse(&document(vec![kernel("k", 8, vec![arg(0, 4, "by_value"), map(a)])])).unwrap_err();
        let location = Location::Arg { kernel: KernelRef::Name("k".into()), index: 1 };
        assert_eq!(error, MetadataError::MissingField { location, field }, "{field}");
        assert_eq!(error.to_string(), format!("kernel `k` argument 1: missing required field `{field}`"));
    }
    for field in ["amdhsa.version", "amdhsa.target"] {
        let Value::Map(mut entries) = document(vec![]) else { unreachable!() };
        entries.retain(|(key, _)| key.as_str() != Some(field));
        assert_eq!(parse(&Value::Map(entries)), Err(MetadataError::MissingField { location: Location::Root, field }));
    }
}

#[test]
fn wrong_types() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (".kernarg_segment_size", s("12"), "an unsigned 32-bit integer"),
        (".kernarg_segment_size", Value::from(-1i64), "an unsigned 32-bit integer"),
        (".kernarg_segment_size", Value::from(1u64 << 32), "an unsigned 32-bit integer"),
        (".sgpr_count", Value::F64(1.0), "an unsigned 32-bit integer"),
        (".symbol", 7u64.into(), "a string"),
        (".args", map(vec![]), "an array"),
        (".reqd_workgroup_size", Value::Array(vec![1u64.into(), 1u64.into()]), "an array of three integers"),
        (".reqd_workgroup_size", s("64,1,1"), "an array of three integers"),
    ];
    for (field, value, expected) in cases {
        let mut k = kernel("k", 8, vec![]);
        k.retain(|(key, _)| *key != field);
        k.push((field, value.clone()));
        let error = parse(&document(vec![k])).unwrap_err();
        match error {
            MetadataError::WrongType { location, field: f, expected: e } => {
                assert_eq!((location, f, e), (kernel_named("k"), field, expected), "{field} = {value}");
            }
            other => panic!("{field} = {value}: {other}"),
        }
    }
    let bad_version = map(vec![
        ("amdhsa.version", Value::Array(vec![1u64.into()])),
        ("amdhsa.target", s("amdgcn-amd-amdhsa--gfx90a")),
    ]);
    assert!(matches!(
        parse(&bad_version),
        Err(MetadataError::WrongType { location: Location::Root, field: "amdhsa.version", .. })
    ));
    let bad_space = map(vec![
        (".offset", 0u64.into()),
        (".size", 8u64.into()),
        (".value_kind", s("global_buffer")),
        (".address_space", s("flat")),
    ]);
    assert_eq!(
        parse(&document(vec![kernel("k", 8, vec![bad_space])])),
        Err(MetadataError::UnknownValue {
            location: Location::Arg { kernel: KernelRef::Name("k".into()), index: 0 },
            field: ".address_space",
            value: "flat".into(),
        })
    );
}

#[test]
fn duplicate_keys_are_rejected_at_every_level() {
    let mut k = kernel("k", 8, vec![]);
    k.push((".sgpr_count", 99u64.into()));
    assert_eq!(
        parse(&document(vec![k])),
        Err(MetadataError::DuplicateKey { location: kernel_named("k"), key: ".sgpr_count".into() })
    );

    let dup_arg = map(vec![
        (".offset", 0u64.into()),
        (".size", 4u64.into()),
        (".value_kind", s("by_value")),
        (".offset", 4u64.into()),
    ]);
    assert_eq!(
        parse(&document(vec![kernel("k", 8, vec![dup_arg])])),
        Err(MetadataError::DuplicateKey {
            location: Location::Arg { kernel: KernelRef::Name("k".into()), index: 0 },
            key: ".offset".into(),
        })
    );

    let Value::Map(mut root) = document(vec![]) else { unreachable!() };
    root.push((s("amdhsa.target"), s("amdgcn-amd-amdhsa--gfx90a")));
    assert_eq!(
        parse(&Value::Map(root)),
        Err(MetadataError::DuplicateKey { location: Location::Root, key: "amdhsa.target".into() })
    );

    let error = parse(&document(vec![kernel("k", 0, vec![]), kernel("k", 0, vec![])])).unwrap_err();
    assert_eq!(error, MetadataError::DuplicateKernel("k.kd".into()));
}

#[test]
fn arguments_outside_the_kernarg_segment() {
    // (offset, size, kernarg size, ok)
    let cases = [
        (0u64, 8u64, 8u64, true),
        (8, 4, 12, true),
        (8, 8, 12, false),
        (12, 1, 12, false),
        (0, 0, 0, true),
        (u32::MAX as u64, u32::MAX as u64, u32::MAX as u64, false), // would overflow u32
        (u32::MAX as u64, 1, u32::MAX as u64, false),
    ];
    for (offset, size, kernarg_size, ok) in cases {
        let result = parse(&document(vec![kernel("k", kernarg_size, vec![arg(offset, size, "by_value")])]));
        if ok {
            assert!(result.is_ok(), "{offset}+{size} in {kernarg_size}: {result:?}");
        } else {
            assert_eq!(
                result,
                Err(MetadataError::ArgOutsideKernarg {
                    kernel: KernelRef::Name("k".into()),
                    index: 0,
                    offset: offset as u32,
                    size: size as u32,
                    kernarg_segment_size: kernarg_size as u32,
                }),
                "{offset}+{size} in {kernarg_size}"
            );
        }
    }
}

#[test]
fn kernarg_alignment_wavefront_size_and_symbol_checks() {
    for (align, ok) in [(0u64, false), (1, true), (3, false), (8, true), (16, true), (24, false)] {
        let mut k = kernel("k", 8, vec![]);
        k.retain(|(key, _)| *key != ".kernarg_segment_align");
        k.push((".kernarg_segment_align", align.into()));
        let result = parse(&document(vec![k]));
        assert_eq!(result.is_ok(), ok, "align {align}: {result:?}");
        if !ok {
            assert_eq!(
                result.unwrap_err(),
                MetadataError::KernargAlignNotPowerOfTwo { kernel: KernelRef::Name("k".into()), align: align as u32 }
            );
        }
    }
    for (size, ok) in [(32u64, true), (64, true), (16, false), (0, false), (128, false)] {
        let mut k = kernel("k", 8, vec![]);
        k.retain(|(key, _)| *key != ".wavefront_size");
        k.push((".wavefront_size", size.into()));
        let result = parse(&document(vec![k]));
        assert_eq!(result.is_ok(), ok, "wavefront {size}");
        if !ok {
            assert!(matches!(result, Err(MetadataError::InvalidWavefrontSize { .. })));
        }
    }
    let mut k = kernel("k", 8, vec![]);
    k.retain(|(key, _)| *key != ".symbol");
    k.push((".symbol", s("k")));
    assert_eq!(
        parse(&document(vec![k])),
        Err(MetadataError::SymbolNotKernelDescriptor { kernel: KernelRef::Name("k".into()), symbol: "k".into() })
    );
}

#[test]
fn malformed_message_pack() {
    let good = encode(&document(vec![kernel("k", 8, vec![arg(0, 8, "global_buffer")])]));
    assert!(parse_metadata(&good).is_ok());
    for len in 0..good.len() {
        assert!(parse_metadata(&good[..len]).is_err(), "prefix {len}");
    }
    assert!(parse_metadata(&[0xc1]).is_err());
    assert!(matches!(parse_metadata(&[]), Err(MetadataError::MessagePack(_))));
    // A map claiming 2^32-1 entries with no data must fail fast, not allocate.
    assert!(matches!(parse_metadata(&[0xdf, 0xff, 0xff, 0xff, 0xff]), Err(MetadataError::MessagePack(_))));
    // Deep nesting is refused without exhausting the stack.
    let deep = vec![0x91u8; 100_000];
    assert!(matches!(parse_metadata(&deep), Err(MetadataError::MessagePack(_))));
    // Root must be a map with string keys.
    assert_eq!(parse(&Value::Array(vec![])), Err(MetadataError::NotAMap { location: Location::Root }));
    assert_eq!(
        parse(&Value::Map(vec![(Value::from(1u64), Value::Nil)])),
        Err(MetadataError::NonStringKey { location: Location::Root })
    );
    let kernels_not_maps = map(vec![
        ("amdhsa.version", Value::Array(vec![1u64.into(), 2u64.into()])),
        ("amdhsa.target", s("amdgcn-amd-amdhsa--gfx1100")),
        ("amdhsa.kernels", Value::Array(vec![Value::Nil])),
    ]);
    assert_eq!(
        parse(&kernels_not_maps),
        Err(MetadataError::NotAMap { location: Location::Kernel(KernelRef::Index(0)) })
    );
}
