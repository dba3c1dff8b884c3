#!/usr/bin/env bash
# Runs CMD... as on a machine with an AMD GPU, on the soft HSA runtime's drop-in
# libhsa-runtime64.so.1: a harness for ROCm tools nobody here wrote (rocminfo) and for C programs
# linked with -lhsa-runtime64.
#
# Inside a private mount namespace (nothing outside it changes; it needs root, for `unshare -m`):
# - /dev/kfd exists and opens: an overlay on /dev adds it as the null device. ROCm tools open it
#   before hsa_init; the soft runtime never touches it.
# - the amdgpu module is listed: rocminfo checks with `lsmod | grep amdgpu`, and this harness puts
#   an `lsmod` first on PATH that lists it (/proc/modules, which the real lsmod reads, may not
#   exist in a container at all).
# - the drop-in is first on LD_LIBRARY_PATH: $AQUEDUCT_SOFT_LIBHSA_DIR if set, else built now by
#   scripts/build-libhsa.sh.
#
# Usage: scripts/with-soft-gpu.sh rocminfo
set -euo pipefail
if (($# == 0)); then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# A drop-in built already (scripts/test.sh sets this), else built now.
lib_dir="${AQUEDUCT_SOFT_LIBHSA_DIR:-$("$root/scripts/build-libhsa.sh" | tail -n 1)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/upper" "$work/overlay-work"
cat >"$work/bin/lsmod" <<'LSMOD'
#!/bin/sh
echo "Module                  Size  Used by"
echo "amdgpu                     0  0"
LSMOD
chmod +x "$work/bin/lsmod"
status=0
unshare --mount --propagation private -- env \
    LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    PATH="$work/bin:$PATH" \
    WORK="$work" \
    bash -c 'mount -t overlay overlay -o "lowerdir=/dev,upperdir=$WORK/upper,workdir=$WORK/overlay-work" /dev &&
             mknod -m 666 /dev/kfd c 1 3 &&
             exec "$@"' harness "$@" || status=$?
exit "$status"
