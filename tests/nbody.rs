//! The game example's n-body step from its machine code (no host build), against the host mirror.

use std::time::Duration;

use aqueduct::{Engine, MemoryKind};
use aqueduct_cli::nbody::{self, NBODY_CODE_OBJECTS, SOFTENING2, WORKGROUP};

#[test]
fn three_steps_of_300_bodies_match_the_mirror_step_by_step() {
    let engine = Engine::new("soft").expect("soft engine");
    let device = engine.device();
    let kernel = device
        .load_executable(device.select_code_object(&NBODY_CODE_OBJECTS).expect("a code object runs"))
        .expect("loads")
        .kernel("nbody_step")
        .expect("kernel");
    // 300 bodies: the last workgroup's tile is part past the end (massless padding).
    let count = 300u32;
    let (mut bodies, mut velocities) = nbody::initial_state(count);
    assert_eq!(nbody::initial_state(count).0, bodies, "the same start for the same count");
    let flat = nbody::flatten;
    let current = device.buffer_from(MemoryKind::HostVisible, &flat(&bodies)).unwrap();
    let next = device.allocate_typed::<f32>(MemoryKind::HostVisible, u64::from(4 * count)).unwrap();
    let velocity = device.buffer_from(MemoryKind::HostVisible, &flat(&velocities)).unwrap();
    let queue = device.create_queue().unwrap();
    let done = device.create_semaphore(0).unwrap();
    let dt = 1.0 / 240.0f32;
    for step in 1..=3u64 {
        let (from, to) = if step % 2 == 1 { (&current, &next) } else { (&next, &current) };
        queue
            .launch(&kernel)
            .grid([count.div_ceil(u32::from(WORKGROUP)) * u32::from(WORKGROUP), 1, 1])
            .workgroup([WORKGROUP, 1, 1])
            .arg(to)
            .arg(&velocity)
            .arg(from)
            .arg(count)
            .arg(dt)
            .arg(SOFTENING2)
            .signal(done.at(step))
            .submit()
            .expect("submitted");
        done.wait(step, Duration::from_secs(60)).expect("stepped");
        (bodies, velocities) = nbody::step_host(&bodies, &velocities, dt);
        let (got_positions, got_velocities) = (to.to_vec().unwrap(), velocity.to_vec().unwrap());
        assert_eq!(nbody::first_difference(&got_positions, &flat(&bodies)), None, "step {step} positions");
        assert_eq!(nbody::first_difference(&got_velocities, &flat(&velocities)), None, "step {step} velocities");
        // The next step starts from what the GPU computed, as the example's mirror does.
        (bodies, velocities) = (nbody::unflatten(&got_positions), nbody::unflatten(&got_velocities));
    }
    // The bodies moved: a step that wrote nothing would fail above, this guards a zero dt.
    assert_ne!(bodies, nbody::initial_state(count).0);
}
