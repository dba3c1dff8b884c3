// The approximate and exponent-manipulating VALU ops, each reached through its builtin so the
// compiler adds no range reduction or correction around it: v_exp_f32, v_log_f32, v_rcp_f32,
// v_rsq_f32, v_sqrt_f32, v_sin_f32, v_cos_f32, their f16 forms (v_exp_f16, v_log_f16, v_rcp_f16,
// v_rsq_f16, v_sqrt_f16, v_sin_f16, v_cos_f16), the f64 v_rcp_f64, v_rsq_f64, v_sqrt_f64, and the
// exact ones: v_frexp_mant_*, v_frexp_exp_*, v_ldexp_*, v_fract_*, v_cmp_class_*, v_med3_f32.
// Op k of a kernel reads its own inputs, in[k * count + i], so the test picks each op's domain;
// results are stored bit for bit, out[k * count + i]. ldexp takes its exponent from e[i], class
// its mask from mask[i].
typedef unsigned int u32;
typedef _Float16 half;

#define KERNEL __attribute__((amdgpu_kernel))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())
#define IN(k) in[(k) * count + i]
#define OUT(k) out[(k) * count + i]

// Rows: 0 exp2, 1 log2, 2 rcp, 3 rsq, 4 sqrt, 5 sin (revolutions), 6 cos, 7 frexp_mant,
// 8 frexp_exp (an int), 9 ldexp(x, e[i]), 10 fract, 11 class(x, mask[i]) (a bool), 12 med3 of the
// inputs of rows 12, 13 and 14 (rows 13 and 14 are inputs only).
KERNEL void transcendental_f32(float *out, const float *in, const int *e, const int *mask, u32 count) {
  u32 i = global_id();
  OUT(0) = __builtin_amdgcn_exp2f(IN(0));
  OUT(1) = __builtin_amdgcn_logf(IN(1));
  OUT(2) = __builtin_amdgcn_rcpf(IN(2));
  OUT(3) = __builtin_amdgcn_rsqf(IN(3));
  OUT(4) = __builtin_amdgcn_sqrtf(IN(4));
  OUT(5) = __builtin_amdgcn_sinf(IN(5));
  OUT(6) = __builtin_amdgcn_cosf(IN(6));
  OUT(7) = __builtin_amdgcn_frexp_mantf(IN(7));
  OUT(8) = __builtin_bit_cast(float, __builtin_amdgcn_frexp_expf(IN(8)));
  OUT(9) = __builtin_amdgcn_ldexpf(IN(9), e[i]);
  OUT(10) = __builtin_amdgcn_fractf(IN(10));
  OUT(11) = __builtin_bit_cast(float, (u32)__builtin_amdgcn_classf(IN(11), mask[i]));
  OUT(12) = __builtin_amdgcn_fmed3f(IN(12), IN(13), IN(14));
}

// Rows: 0 rcp, 1 rsq, 2 sqrt, 3 frexp_mant, 4 frexp_exp (an int in the low word), 5 ldexp(x,
// e[i]), 6 fract, 7 class(x, mask[i]).
KERNEL void transcendental_f64(double *out, const double *in, const int *e, const int *mask, u32 count) {
  u32 i = global_id();
  OUT(0) = __builtin_amdgcn_rcp(IN(0));
  OUT(1) = __builtin_amdgcn_rsq(IN(1));
  OUT(2) = __builtin_amdgcn_sqrt(IN(2));
  OUT(3) = __builtin_amdgcn_frexp_mant(IN(3));
  OUT(4) = __builtin_bit_cast(double, (unsigned long long)(u32)__builtin_amdgcn_frexp_exp(IN(4)));
  OUT(5) = __builtin_amdgcn_ldexp(IN(5), e[i]);
  OUT(6) = __builtin_amdgcn_fract(IN(6));
  OUT(7) = __builtin_bit_cast(double, (unsigned long long)__builtin_amdgcn_class(IN(7), mask[i]));
}

// Rows: 0 exp2, 1 log2, 2 rcp, 3 rsq, 4 sqrt, 5 sin, 6 cos, 7 frexp_mant, 8 frexp_exp (an i16),
// 9 ldexp(x, e[i]), 10 fract, 11 class(x, mask[i]).
KERNEL void transcendental_f16(half *out, const half *in, const int *e, const int *mask, u32 count) {
  u32 i = global_id();
  OUT(0) = __builtin_exp2f16(IN(0));
  OUT(1) = __builtin_log2f16(IN(1));
  OUT(2) = __builtin_amdgcn_rcph(IN(2));
  OUT(3) = __builtin_amdgcn_rsqh(IN(3));
  OUT(4) = __builtin_amdgcn_sqrth(IN(4));
  OUT(5) = __builtin_amdgcn_sinh(IN(5));
  OUT(6) = __builtin_amdgcn_cosh(IN(6));
  OUT(7) = __builtin_amdgcn_frexp_manth(IN(7));
  OUT(8) = __builtin_bit_cast(half, __builtin_amdgcn_frexp_exph(IN(8)));
  OUT(9) = __builtin_amdgcn_ldexph(IN(9), e[i]);
  OUT(10) = __builtin_amdgcn_fracth(IN(10));
  OUT(11) = __builtin_bit_cast(half, (short)__builtin_amdgcn_classh(IN(11), mask[i]));
}
