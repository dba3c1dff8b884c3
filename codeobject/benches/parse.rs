//! Parsing cost of a code object with 1,000 kernels (the metadata note is
//! about 400 KB of MessagePack). Target: well under 5 ms.

use std::hint::black_box;

use aqueduct_codeobject::{CodeObject, parse_metadata};
use criterion::{Criterion, criterion_group, criterion_main};

const MANY_KERNELS: &[u8] = include_bytes!("../tests/fixtures/many-gfx1100-v5.hsaco");

fn parse(c: &mut Criterion) {
    let parsed = CodeObject::parse(MANY_KERNELS).expect("fixture parses");
    assert_eq!(parsed.kernels().len(), 1000);

    c.bench_function("CodeObject::parse 1000 kernels", |b| b.iter(|| CodeObject::parse(black_box(MANY_KERNELS))));

    let note = metadata_note(MANY_KERNELS);
    c.bench_function("parse_metadata 1000 kernels", |b| b.iter(|| parse_metadata(black_box(note))));
    c.bench_function("rmpv decode only 1000 kernels", |b| {
        b.iter(|| rmpv::decode::read_value_ref(&mut black_box(note)).map(|_| ()))
    });
}

/// The NT_AMDGPU_METADATA descriptor, found with `object` so the bench can
/// time the metadata parser alone.
fn metadata_note(bytes: &[u8]) -> &[u8] {
    use object::read::elf::{FileHeader, ProgramHeader};
    let header = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes).expect("ELF");
    for segment in header.program_headers(object::LittleEndian, bytes).expect("segments") {
        if let Ok(Some(mut notes)) = segment.notes(object::LittleEndian, bytes) {
            while let Ok(Some(note)) = notes.next() {
                if note.name() == b"AMDGPU" && note.n_type(object::LittleEndian).0 == 32 {
                    return note.desc();
                }
            }
        }
    }
    panic!("no metadata note");
}

criterion_group!(benches, parse);
criterion_main!(benches);
