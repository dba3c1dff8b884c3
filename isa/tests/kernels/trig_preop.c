// v_trig_preop_f64, as ocml's f64 sine and cosine use it for large arguments: the segment of 2/pi
// each (x, segment) pair selects, scaled for x's exponent.
typedef unsigned int u32;

#define KERNEL __attribute__((amdgpu_kernel))

KERNEL void trig_preop(double *out, const double *x, const u32 *segment) {
  u32 i = __builtin_amdgcn_workitem_id_x();
  out[i] = __builtin_amdgcn_trig_preop(x[i], (int)segment[i]);
}
