//! Shared fixtures and helpers for the integration tests.
#![allow(dead_code)]

use object::LittleEndian;
use object::read::elf::{FileHeader, ProgramHeader};
use rmpv::Value;

pub const GFX90A_XNACK_ON_V4: &[u8] = include_bytes!("../fixtures/kernels-gfx90a-xnack+-v4.hsaco");
pub const GFX90A_XNACK_OFF_V5: &[u8] = include_bytes!("../fixtures/kernels-gfx90a-xnack--v5.hsaco");
pub const GFX942_V5: &[u8] = include_bytes!("../fixtures/kernels-gfx942-v5.hsaco");
pub const GFX1100_V5: &[u8] = include_bytes!("../fixtures/kernels-gfx1100-v5.hsaco");
pub const GFX11_GENERIC_V6: &[u8] = include_bytes!("../fixtures/kernels-gfx11-generic-v6.hsaco");
pub const GFX9_GENERIC_V6: &[u8] = include_bytes!("../fixtures/kernels-gfx9-generic-v6.hsaco");
pub const OPENCL_GFX1100_V5: &[u8] = include_bytes!("../fixtures/ocl-gfx1100-v5.hsaco");
pub const MANY_KERNELS: &[u8] = include_bytes!("../fixtures/many-gfx1100-v5.hsaco");
pub const BUNDLE: &[u8] = include_bytes!("../fixtures/bundle-gfx90a-gfx1100.bin");
pub const COMPRESSED_BUNDLE: &[u8] = include_bytes!("../fixtures/bundle-compressed.bin");
pub const HOST_WITH_FATBIN: &[u8] = include_bytes!("../fixtures/host-with-fatbin.o");

/// File range of the NT_AMDGPU_METADATA note: (note header offset, descriptor offset, descriptor length).
pub fn metadata_note_range(bytes: &[u8]) -> (usize, usize, usize) {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    for segment in header.program_headers(LittleEndian, bytes).unwrap() {
        if let Some(mut notes) = segment.notes(LittleEndian, bytes).unwrap() {
            while let Some(note) = notes.next().unwrap() {
                if note.name() == b"AMDGPU" && note.n_type(LittleEndian).0 == 32 {
                    let desc = note.desc();
                    let desc_offset = desc.as_ptr() as usize - bytes.as_ptr() as usize;
                    // Note header: namesz, descsz, type (12 bytes) + "AMDGPU\0" padded to 8.
                    return (desc_offset - 20, desc_offset, desc.len());
                }
            }
        }
    }
    panic!("no metadata note");
}

pub fn metadata_note(bytes: &[u8]) -> &[u8] {
    let (_, offset, len) = metadata_note_range(bytes);
    &bytes[offset..offset + len]
}

pub fn s(text: &str) -> Value {
    Value::from(text)
}

pub fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (s(k), v)).collect())
}

pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).unwrap();
    out
}

/// A well-formed argument map.
pub fn arg(offset: u64, size: u64, kind: &str) -> Value {
    map(vec![(".offset", offset.into()), (".size", size.into()), (".value_kind", s(kind))])
}

/// A well-formed kernel map with the given args and kernarg size.
pub fn kernel(name: &str, kernarg_size: u64, args: Vec<Value>) -> Vec<(&'static str, Value)> {
    vec![
        (".name", s(name)),
        (".symbol", s(&format!("{name}.kd"))),
        (".kernarg_segment_size", kernarg_size.into()),
        (".kernarg_segment_align", 8u64.into()),
        (".group_segment_fixed_size", 0u64.into()),
        (".private_segment_fixed_size", 0u64.into()),
        (".wavefront_size", 64u64.into()),
        (".sgpr_count", 10u64.into()),
        (".vgpr_count", 4u64.into()),
        (".max_flat_workgroup_size", 256u64.into()),
        (".args", Value::Array(args)),
    ]
}

/// A metadata document holding the given kernels.
pub fn document(kernels: Vec<Vec<(&str, Value)>>) -> Value {
    map(vec![
        ("amdhsa.version", Value::Array(vec![1u64.into(), 2u64.into()])),
        ("amdhsa.target", s("amdgcn-amd-amdhsa--gfx1100")),
        ("amdhsa.kernels", Value::Array(kernels.into_iter().map(map).collect())),
    ])
}
