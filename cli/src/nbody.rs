//! Gravitational n-body for the game example: the HIP step (`cli/kernels/nbody.hip`, LDS-tiled, no
//! host build, so the soft runtime runs its machine code), the starting state, and the host
//! mirror every read-back is checked against.

/// `nbody_step`, built from `cli/kernels/nbody.hip` by `kernels/regen.sh` for each of its targets
/// ([`crate::WORKLOAD_TARGETS`]).
pub const NBODY_CODE_OBJECTS: [&[u8]; crate::WORKLOAD_TARGETS] = workload_code_objects!("nbody");

/// Bodies per workgroup (the kernel's LDS tile).
pub const WORKGROUP: u16 = 128;
/// Softening², so close bodies do not fling each other apart.
pub const SOFTENING2: f32 = 0.01;
/// How far a read-back may be from the mirror's step from the same state, relative to the
/// value (plus as much absolute): the kernel fuses multiply-adds and takes 1/sqrt from
/// `v_rsq_f32` (1 ULP), the mirror rounds each operation and divides exactly.
pub const TOLERANCE: f32 = 1e-4;

/// A body: position and mass (`w`), as the kernel reads a `float4`.
pub type Body = [f32; 4];

/// `count` bodies of total mass 1 in a flattened disc of radius about 1, each on a roughly
/// circular orbit around the centre; the same for the same count (a fixed LCG).
pub fn initial_state(count: u32) -> (Vec<Body>, Vec<[f32; 4]>) {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    let mass = 1.0 / count as f32;
    (0..count)
        .map(|_| {
            let (radius, angle, height) = (0.1 + 0.9 * next(), std::f32::consts::TAU * next(), 0.05 * (next() - 0.5));
            let (sin, cos) = angle.sin_cos();
            // A circular orbit's speed, sqrt(M(r) / r), with M(r) ≈ r² inside radius r.
            let speed = radius.sqrt();
            ([radius * cos, radius * sin, height, mass], [-speed * sin, speed * cos, 0.0, 0.0])
        })
        .unzip()
}

/// One step on the host, as the kernel computes it: every body's pull summed in body order, then
/// semi-implicit Euler.
pub fn step_host(bodies: &[Body], velocities: &[[f32; 4]], dt: f32) -> (Vec<Body>, Vec<[f32; 4]>) {
    bodies
        .iter()
        .zip(velocities)
        .map(|(me, velocity)| {
            let mut acceleration = [0.0f32; 3];
            for other in bodies {
                let delta = [other[0] - me[0], other[1] - me[1], other[2] - me[2]];
                let inverse =
                    1.0 / (delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2] + SOFTENING2).sqrt();
                let pull = other[3] * inverse * inverse * inverse;
                for axis in 0..3 {
                    acceleration[axis] += delta[axis] * pull;
                }
            }
            let mut velocity = *velocity;
            let mut moved = *me;
            for axis in 0..3 {
                velocity[axis] += dt * acceleration[axis];
                moved[axis] += dt * velocity[axis];
            }
            (moved, velocity)
        })
        .unzip()
}

/// `float4`s as the flat floats a buffer holds.
pub fn flatten(values: &[[f32; 4]]) -> Vec<f32> {
    values.iter().flatten().copied().collect()
}

/// Flat floats read back as `float4`s (a trailing partial one is dropped).
pub fn unflatten(values: &[f32]) -> Vec<[f32; 4]> {
    values.chunks_exact(4).map(|chunk| [chunk[0], chunk[1], chunk[2], chunk[3]]).collect()
}

/// The first component of `got` farther than [`TOLERANCE`] from `want`: (index, got, want).
pub fn first_difference(got: &[f32], want: &[f32]) -> Option<(usize, f32, f32)> {
    got.iter()
        .zip(want)
        .enumerate()
        // A NaN is a difference too.
        .find(|(_, (got, want))| (*got - *want).abs().is_nan() || (*got - *want).abs() > TOLERANCE * (1.0 + want.abs()))
        .map(|(index, (got, want))| (index, *got, *want))
}
