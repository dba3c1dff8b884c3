//! The API that is easy to hold: submission builders with defaults, typed buffers, and typed
//! launches whose arguments are checked against the kernel's metadata.

mod common;

use aqueduct_engine::{EngineError, MemoryKind, WaitStrategy};
use common::*;

#[test]
fn builders_default_to_no_waits_and_take_points_one_at_a_time_or_as_lists() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let queue = device.create_queue().unwrap();
    let buffer = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    let semaphores: Vec<_> = (0..6).map(|_| device.create_semaphore(0).unwrap()).collect();
    queue.fill(buffer.whole(), &[7]).submit().unwrap();
    // More signals than the builder holds inline.
    let all: Vec<_> = semaphores.iter().map(|semaphore| semaphore.at(1)).collect();
    queue.barrier().signals(&all).submit().unwrap();
    queue
        .fill(buffer.range(0, 4), &[9])
        .wait(semaphores[0].at(1))
        .waits(&all[1..])
        .signal(semaphores[0].at(2))
        .submit()
        .unwrap();
    semaphores[0].wait(2, TIMEOUT).unwrap();
    assert!(semaphores.iter().all(|semaphore| semaphore.value() >= 1));
    assert_eq!(buffer.to_vec().unwrap()[..6], [9, 9, 9, 9, 7, 7]);
    // A builder that is dropped submits nothing.
    let before = queue.stats();
    drop(queue.fill(buffer.whole(), &[1]).signal(semaphores[1].at(5)));
    assert_eq!(queue.stats(), before);
    // The same builder stages into a batch.
    queue
        .batch(|batch| {
            batch.fill(buffer.range(4, 4), &[3]).submit()?;
            batch.barrier().signal(semaphores[1].at(2)).submit()
        })
        .unwrap();
    semaphores[1].wait(2, TIMEOUT).unwrap();
    assert_eq!(buffer.to_vec().unwrap()[4..8], [3, 3, 3, 3]);
}

#[test]
fn typed_buffers_count_elements_and_check_their_casts() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let values = device.buffer_from(MemoryKind::HostVisible, &[1.5f32, 2.5, 3.5, 4.5]).unwrap();
    assert_eq!((values.len(), values.size()), (4, 16));
    values.write(2, &[8.0]).unwrap();
    let mut two = [0f32; 2];
    values.read(1, &mut two).unwrap();
    assert_eq!(two, [2.5, 8.0]);
    let range = values.range(1, 2);
    assert_eq!((range.offset, range.length), (4, 8), "bindings count bytes");
    assert!(matches!(values.write(4, &[0.0]), Err(EngineError::OutOfBounds { .. })), "past the last element");
    assert!(matches!(values.read(u64::MAX, &mut two), Err(EngineError::OutOfBounds { .. })), "overflow saturates");
    let words = values.clone().cast::<u32>().unwrap();
    assert_eq!(words.to_vec().unwrap()[0], 1.5f32.to_bits());
    assert!(
        matches!(values.clone().cast::<[u8; 3]>(), Err(EngineError::InvalidArgument { .. })),
        "16 bytes are no whole number of 3"
    );
    assert_eq!(values.bytes().to_vec().unwrap()[..4], 1.5f32.to_le_bytes());
    assert!(matches!(device.buffer_from(MemoryKind::DeviceLocal, &[1u32]), Err(EngineError::NotHostAccessible { .. })));
    assert!(device.allocate_typed::<u64>(MemoryKind::HostVisible, u64::MAX).is_err(), "the size overflows");
}

#[test]
fn a_typed_launch_runs_and_every_mismatch_is_refused_before_anything_is_enqueued() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = device.create_queue().unwrap();
    let store = &rig.kernels.store_value; // store_value(out, value, count): out[i] = value + i
    let out = device.allocate_typed::<u32>(MemoryKind::HostVisible, 64).unwrap();
    let done = device.create_semaphore(0).unwrap();
    queue
        .launch(store)
        .grid([64, 1, 1])
        .workgroup([64, 1, 1])
        .arg(&out)
        .arg(100u32)
        .arg(64u32)
        .signal(done.at(1))
        .submit()
        .unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(out.to_vec().unwrap(), (100..164).collect::<Vec<u32>>());

    let before = queue.stats();
    let refused = |result: Result<aqueduct_engine::Submitted, EngineError>| match result {
        Err(EngineError::KernelArgument { kernel, index, reason }) => {
            assert_eq!(kernel, "store_value");
            (index, reason)
        }
        other => panic!("expected a kernel argument error, got {other:?}"),
    };
    let (index, reason) = refused(queue.launch(store).grid([64, 1, 1]).arg(1u32).arg(2u32).arg(3u32).submit());
    assert_eq!(index, 0);
    assert!(reason.contains("global buffer pointer") && reason.contains("u32"), "{reason}");
    let (index, reason) = refused(queue.launch(store).arg(&out).arg(&out).arg(64u32).submit());
    assert_eq!(index, 1);
    assert!(reason.contains("4-byte value") && reason.contains("a buffer"), "{reason}");
    let (index, reason) = refused(queue.launch(store).arg(&out).arg(100u64).arg(64u32).submit());
    assert_eq!(index, 1);
    assert!(reason.contains("8-byte u64"), "{reason}");
    let (index, reason) = refused(queue.launch(store).arg(&out).arg(1u32).arg(2u32).arg(3u32).submit());
    assert_eq!(index, 3);
    assert!(reason.contains("takes 3 arguments"), "{reason}");
    let (index, reason) = refused(queue.launch(store).arg(&out).submit());
    assert_eq!(index, 1);
    assert!(reason.contains("missing"), "{reason}");
    assert_eq!(queue.stats(), before, "nothing was enqueued");
}

#[test]
fn a_command_buffer_records_a_typed_launch_with_slots_and_refuses_mismatches() {
    use aqueduct_engine::{BindingTable, BufferRef, CommandBufferUsage};
    let rig = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = rig.device();
    let queue = device.create_queue().unwrap();
    let store = &rig.kernels.store_value; // store_value(out, value, count): out[i] = value + i
    let add = &rig.kernels.add_from; // add_from(out, in, addend, count): out[i] = in[i] + addend
    let (first, second) = (
        device.allocate_typed::<u32>(MemoryKind::HostVisible, 64).unwrap(),
        device.allocate_typed::<u32>(MemoryKind::HostVisible, 64).unwrap(),
    );
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    // Slot 0 is each execution's output; the input is a fixed buffer.
    cb.launch(store).grid([64, 1, 1]).arg(&first).arg(10u32).arg(64u32).record().unwrap();
    cb.barrier().unwrap();
    cb.launch(add)
        .grid([64, 1, 1])
        .arg(BufferRef::slot_of::<u32>(0, 0, 64))
        .arg(&first)
        .arg(5u32)
        .arg(64u32)
        .record()
        .unwrap();
    let refused = cb.launch(add).grid([64, 1, 1]).arg(1.5f32).record();
    assert!(matches!(refused, Err(EngineError::KernelArgument { index: 0, .. })), "{refused:?}");
    let missing = cb.launch(add).arg(&first).record();
    assert!(matches!(missing, Err(EngineError::KernelArgument { index: 1, .. })), "{missing:?}");
    cb.finish().unwrap();
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&cb, &BindingTable::from_bindings(&[second.whole()]).unwrap()).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(second.to_vec().unwrap(), (15..79).collect::<Vec<u32>>(), "the refused launches recorded nothing");
}
