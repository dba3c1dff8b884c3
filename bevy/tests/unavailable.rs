//! A device that cannot open: the app runs on without compute. Every resource exists, systems
//! gated by `aqueduct_available` do not run, systems taking `ResMut<AqueductFrame>` run without
//! panicking, and what they ask for is refused with the reason.

use aqueduct_bevy::{
    AqueductDevice, AqueductError, AqueductFrame, AqueductPlugin, AqueductQueues, Lane, Readback, SubmitRefused,
    aqueduct_available,
};
use aqueduct_engine::{Buffer, Engine, MemoryKind, QueueConfig};
use bevy_app::{App, Update};
use bevy_ecs::prelude::*;

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Physics;
impl Lane for Physics {}

struct Heights;

/// A buffer from another engine: what a read-back would be asked of.
#[derive(Resource)]
struct Terrain(Buffer<f32>);

#[derive(Resource, Default)]
struct Ran {
    gated: u32,
    fallback: u32,
    refused_calls: Vec<AqueductError>,
    read_backs: u32,
    refused: u32,
}

fn gated(mut ran: ResMut<Ran>, _frame: ResMut<AqueductFrame>) {
    ran.gated += 1;
}

fn fallback(mut ran: ResMut<Ran>) {
    ran.fallback += 1;
}

/// Not gated: asks for work and a read-back every frame, as a careless system would.
fn submit_work(
    mut frame: ResMut<AqueductFrame>,
    terrain: Res<Terrain>,
    queues: Res<AqueductQueues>,
    mut ran: ResMut<Ran>,
) {
    let submitted = frame.submit(Physics, |batch, context| batch.barrier().wait(context.previous()).submit());
    let asked = frame.read_back(Physics, &terrain.0, .., Heights);
    ran.refused_calls.extend(submitted.err().into_iter().chain(asked.err()).chain(queues.get(Physics).err()));
}

fn receive(
    mut ran: ResMut<Ran>,
    mut readbacks: MessageReader<Readback<f32, Heights>>,
    mut refused: MessageReader<SubmitRefused>,
) {
    ran.read_backs += readbacks.read().count() as u32;
    ran.refused += refused.read().count() as u32;
}

#[test]
fn without_a_device_resources_exist_gated_systems_skip_and_work_is_refused() {
    // GPU 99: ROCr does not load here, and no machine has that GPU, so this never opens.
    let plugin = AqueductPlugin::new("amdgpu:99").unwrap().lane(Physics, QueueConfig::new()).readback::<f32, Heights>();
    let elsewhere = Engine::new("soft").unwrap();
    let terrain = elsewhere.device().allocate_typed::<f32>(MemoryKind::HostVisible, 16).unwrap();
    let mut app = App::new();
    app.add_plugins(plugin).insert_resource(Terrain(terrain)).init_resource::<Ran>().add_systems(
        Update,
        (gated.run_if(aqueduct_available), fallback.run_if(not(aqueduct_available)), submit_work, receive),
    );
    const FRAMES: u32 = 5;
    for _ in 0..FRAMES {
        app.update();
    }
    let ran = app.world().resource::<Ran>();
    assert_eq!((ran.gated, ran.fallback), (0, FRAMES), "gated systems skip, the fallback runs");
    assert_eq!(ran.refused_calls.len() as u32, 3 * FRAMES, "work, read-back and queue refused every frame");
    let reason = match &ran.refused_calls[0] {
        AqueductError::Unavailable { reason } => reason.clone(),
        other => panic!("not the reason the device is unavailable: {other}"),
    };
    assert!(reason.contains("device"), "{reason}");
    assert!(
        ran.refused_calls.iter().all(|error| *error == AqueductError::Unavailable { reason: reason.clone() }),
        "every refusal carries the one reason: {:?}",
        ran.refused_calls
    );
    assert_eq!((ran.read_backs, ran.refused), (0, 0), "nothing was submitted, so nothing comes back");
    let device = app.world().resource::<AqueductDevice>();
    assert!(!device.is_available());
    assert_eq!(device.device().err(), Some(AqueductError::Unavailable { reason: reason.clone() }));
    let frame = app.world().resource::<AqueductFrame>();
    assert_eq!((frame.frame(), frame.completed()), (u64::from(FRAMES) + 1, 0), "frames are counted, none run");
    assert!(frame.timeline().is_err());
    assert_eq!(app.world().resource::<AqueductQueues>().iter().count(), 0);
}

#[test]
fn without_the_plugin_aqueduct_is_not_available() {
    let mut world = World::new();
    assert!(!world.run_system_cached(aqueduct_available).unwrap());
}
