#!/bin/sh
# Extracts one target's code objects (gfx1030 unless TARGET names another: gfx900, gfx906, gfx908,
# gfx90a; Debian's 5.2.3 builds also carry gfx803 and gfx1010-1012) from Debian's ROCm libraries (librocsparse0, librocrand1:
# `apt-get install -y --no-install-recommends librocsparse0 librocrand1`) into DIR, as
# DIR/<library>_<bundle index>.hsaco. The libraries hold their device code in the `.hip_fatbin`
# section: clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`, then a u64 entry count and per entry
# u64 offset, u64 size, u64 triple length and the triple, e.g. `hipv4-amdgcn-amd-amdhsa--gfx1030`),
# concatenated with zero padding between them; `aqueduct-codeobject`'s `bundle.rs` reads the same
# layout. Nothing extracted is checked in: isa/gen/golden_gfx10.sh runs this into a temporary
# directory.
#
# Usage: [TARGET=gfx90a] sh isa/gen/extract_rocm.sh DIR [LIBRARY...]
set -eu
out=${1:?usage: [TARGET=gfx90a] extract_rocm.sh DIR [LIBRARY...]}
shift
[ $# -gt 0 ] || set -- /usr/lib/x86_64-linux-gnu/librocsparse.so.0 /usr/lib/x86_64-linux-gnu/librocrand.so.1
mkdir -p "$out"
python3 - "${TARGET:-gfx1030}" "$out" "$@" <<'EOF'
import mmap, os, struct, sys

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
PROCESSOR = sys.argv[1]
out = sys.argv[2]
for library in sys.argv[3:]:
    name = os.path.basename(library).split(".")[0]
    with open(library, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    # ELF64 little-endian section headers: find `.hip_fatbin`.
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def section(index):
        return struct.unpack_from("<IIQQQQ", data, shoff + index * shentsize)
    names = section(shstrndx)[4]
    fatbin = None
    for index in range(shnum):
        sh_name, _, _, _, offset, size = section(index)
        end = data.find(b"\0", names + sh_name)
        if data[names + sh_name:end] == b".hip_fatbin":
            fatbin = (offset, offset + size)
    if fatbin is None:
        sys.exit(f"{library}: no .hip_fatbin section")
    position, stop = fatbin
    bundles = written = 0
    while position < stop:
        if data[position] == 0:  # padding between bundles
            position += 1
            continue
        if data[position:position + len(MAGIC)] != MAGIC:
            sys.exit(f"{library}: no bundle magic at 0x{position:x}")
        count, = struct.unpack_from("<Q", data, position + len(MAGIC))
        cursor, end = position + len(MAGIC) + 8, position
        for _ in range(count):
            offset, size, length = struct.unpack_from("<QQQ", data, cursor)
            triple = data[cursor + 24:cursor + 24 + length].decode()
            cursor += 24 + length
            end = max(end, position + offset + size, cursor)
            # The entry ID's target may carry features (`gfx90a:xnack-`): match the processor.
            target_id = triple.split("amdgcn-amd-amdhsa--", 1)[-1]
            if "amdgcn-amd-amdhsa--" in triple and target_id.split(":")[0] == PROCESSOR and size:
                features = target_id[len(PROCESSOR):].replace(":", "_")
                with open(os.path.join(out, f"{name}_{bundles:04d}{features}.hsaco"), "wb") as target:
                    target.write(data[position + offset:position + offset + size])
                written += 1
        bundles += 1
        position = end
    print(f"{library}: {written} {PROCESSOR} code objects from {bundles} bundles", file=sys.stderr)
EOF
