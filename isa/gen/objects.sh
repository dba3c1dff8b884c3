#!/bin/sh
# The checked-in code objects whose machine code is gfx1100's: the decoder's test reads these.
cd "$(dirname "$0")/../.."
ls builtins/prebuilt/amdgcn-amd-amdhsa--gfx1100.hsaco builtins/prebuilt/amdgcn-amd-amdhsa--gfx11-generic.hsaco \
    codeobject/tests/fixtures/*gfx1100*.hsaco codeobject/tests/fixtures/*gfx11-generic*.hsaco \
    soft-hsa/tests/fixtures/*gfx1100*.hsaco kernels/*gfx11-generic.hsaco cli/kernels/*gfx11-generic.hsaco \
    isa/tests/kernels/*gfx1100.hsaco isa/tests/kernels/*gfx1100-wave64.hsaco isa/tests/kernels/*gfx11-generic.hsaco
