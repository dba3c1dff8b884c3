; Typed buffer accesses, written in LLVM IR because clang 19 has no C builtins for them:
; MTBUF tbuffer_load/store_format (with d16), and MUBUF buffer_load/store_format taking the
; V#'s format and destination selects. gfx11 only: gfx10's format numbers differ.
target triple = "amdgcn-amd-amdhsa"

declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i32, i32)
declare <4 x float> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f32(ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare <4 x i32> @llvm.amdgcn.raw.ptr.tbuffer.load.v4i32(ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare <4 x half> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f16(ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare <4 x float> @llvm.amdgcn.raw.ptr.buffer.load.format.v4f32(ptr addrspace(8), i32, i32, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @typed_loads(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i32 1024, i32 822177708)
  %off4 = mul i32 %lane, 4
  %off8 = mul i32 %lane, 8
  %a = call <4 x float> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f32(ptr addrspace(8) %rsrc, i32 %off4, i32 0, i32 42, i32 0)
  %b = call <4 x float> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f32(ptr addrspace(8) %rsrc, i32 %off4, i32 0, i32 43, i32 0)
  %c = call <4 x i32> @llvm.amdgcn.raw.ptr.tbuffer.load.v4i32(ptr addrspace(8) %rsrc, i32 %off4, i32 0, i32 47, i32 0)
  %d = call <4 x float> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f32(ptr addrspace(8) %rsrc, i32 %off4, i32 0, i32 29, i32 0)
  %e = call <4 x half> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f16(ptr addrspace(8) %rsrc, i32 %off8, i32 0, i32 57, i32 0)
  %f = call <4 x float> @llvm.amdgcn.raw.ptr.tbuffer.load.v4f32(ptr addrspace(8) %rsrc, i32 %off8, i32 0, i32 52, i32 0)
  ; the V#'s format (8_8_8_8_USCALED, 44) and destination selects W, Z, Y, X.
  %swz = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i32 1024, i32 805489015)
  %g = call <4 x float> @llvm.amdgcn.raw.ptr.buffer.load.format.v4f32(ptr addrspace(8) %swz, i32 %off4, i32 0, i32 0)
  %base = mul i32 %lane, 7
  %pa = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %base
  store <4 x float> %a, ptr addrspace(1) %pa
  %i1 = add i32 %base, 1
  %pb = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i1
  store <4 x float> %b, ptr addrspace(1) %pb
  %i2 = add i32 %base, 2
  %pc = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %i2
  store <4 x i32> %c, ptr addrspace(1) %pc
  %i3 = add i32 %base, 3
  %pd = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i3
  store <4 x float> %d, ptr addrspace(1) %pd
  %i4 = add i32 %base, 4
  %pe = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i4
  store <4 x half> %e, ptr addrspace(1) %pe
  %i5 = add i32 %base, 5
  %pf = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i5
  store <4 x float> %f, ptr addrspace(1) %pf
  %i6 = add i32 %base, 6
  %pg = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i6
  store <4 x float> %g, ptr addrspace(1) %pg
  ret void
}

declare void @llvm.amdgcn.raw.ptr.tbuffer.store.v4f32(<4 x float>, ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare void @llvm.amdgcn.raw.ptr.tbuffer.store.v4i32(<4 x i32>, ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare void @llvm.amdgcn.raw.ptr.tbuffer.store.v4f16(<4 x half>, ptr addrspace(8), i32, i32, i32 immarg, i32 immarg)
declare void @llvm.amdgcn.raw.ptr.buffer.store.format.v4f32(<4 x float>, ptr addrspace(8), i32, i32, i32 immarg)

; Each lane's float4 and int4 stored through five formats into regions of %out: 8_8_8_8_UNORM at
; 4i, 16_16_16_16_SNORM at 256 + 8i, 8_8_8_8_UINT at 768 + 4i, 16_16_16_16_UNORM from halves
; (d16) at 1024 + 8i, and the V#'s 16_16_FLOAT (buffer_store_format_xyzw: x and y) at 1536 + 4i.
define amdgpu_kernel void @typed_stores(ptr addrspace(1) %out, ptr addrspace(1) %floats, ptr addrspace(1) %ints) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %pf = getelementptr <4 x float>, ptr addrspace(1) %floats, i32 %lane
  %f = load <4 x float>, ptr addrspace(1) %pf
  %pi = getelementptr <4 x i32>, ptr addrspace(1) %ints, i32 %lane
  %i = load <4 x i32>, ptr addrspace(1) %pi
  %h = fptrunc <4 x float> %f to <4 x half>
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i32 2048, i32 822177708)
  %off4 = mul i32 %lane, 4
  %off8 = mul i32 %lane, 8
  call void @llvm.amdgcn.raw.ptr.tbuffer.store.v4f32(<4 x float> %f, ptr addrspace(8) %rsrc, i32 %off4, i32 0, i32 42, i32 0)
  %b = add i32 %off8, 256
  call void @llvm.amdgcn.raw.ptr.tbuffer.store.v4f32(<4 x float> %f, ptr addrspace(8) %rsrc, i32 %b, i32 0, i32 52, i32 0)
  %c = add i32 %off4, 768
  call void @llvm.amdgcn.raw.ptr.tbuffer.store.v4i32(<4 x i32> %i, ptr addrspace(8) %rsrc, i32 %c, i32 0, i32 46, i32 0)
  %d = add i32 %off8, 1024
  call void @llvm.amdgcn.raw.ptr.tbuffer.store.v4f16(<4 x half> %h, ptr addrspace(8) %rsrc, i32 %d, i32 0, i32 51, i32 0)
  %fmt = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i32 2048, i32 805429164)
  %e = add i32 %off4, 1536
  call void @llvm.amdgcn.raw.ptr.buffer.store.format.v4f32(<4 x float> %f, ptr addrspace(8) %fmt, i32 %e, i32 0, i32 0)
  ret void
}
