//! Fills, copies and updates across sizes, offsets and alignments. Every case starts from random
//! bytes, so the bytes around the range (guards) must come out exactly as they went in, and the
//! range itself must match a host model byte for byte.

mod common;

use std::cell::Cell;

use aqueduct_engine::{
    Buffer, Device, Engine, EngineError, MAX_UPDATE_BYTES, MemoryKind, Queue, Semaphore, SemaphorePoint, WaitStrategy,
};
use common::*;
use proptest::prelude::*;

/// Lengths around every kernel-choice boundary: bytewise, 4/8/16-byte blocks, the 128-byte
/// unaligned-block threshold, the inline-update limit, pages, the update-update limit.
const SIZES: &[u64] =
    &[0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 4095, 4096, 4097, 65536];

/// One queue and a timeline semaphore; `run` submits one operation and waits for it.
struct Rig {
    _engine: Engine,
    device: Device,
    queue: Queue,
    done: Semaphore,
    value: Cell<u64>,
}

impl Rig {
    fn new() -> Self {
        let engine = engine(WaitStrategy::BarrierValue);
        let device = engine.device().clone();
        let queue = queue(&device);
        let done = device.create_semaphore(0).unwrap();
        Self { _engine: engine, device, queue, done, value: Cell::new(0) }
    }

    /// Submits `op` signalling the next value and waits for it.
    fn run<T>(&self, op: impl FnOnce(&Queue, &[SemaphorePoint]) -> Result<T, EngineError>) {
        let value = self.value.get() + 1;
        self.value.set(value);
        op(&self.queue, &[self.done.at(value)]).expect("submission");
        self.done.wait(value, TIMEOUT).expect("operation completes");
    }

    fn random_buffer(&self, rng: &mut Xorshift, size: u64) -> (Buffer, Vec<u8>) {
        let contents = rng.bytes(size as usize);
        (host_buffer(&self.device, &contents), contents)
    }
}

fn check(actual: &[u8], expected: &[u8], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: buffer length");
    if let Some(first) = actual.iter().zip(expected).position(|(a, e)| a != e) {
        let last = actual.iter().zip(expected).rposition(|(a, e)| a != e).unwrap();
        panic!(
            "{what}: bytes {first}..={last} differ; first: got {:#04x}, expected {:#04x}",
            actual[first], expected[first]
        );
    }
}

#[test]
fn fills_every_width_size_and_offset() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(1);
    const PATTERN: [u8; 8] = [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18];
    let mut cases = 0;
    for width in [1usize, 2, 4, 8] {
        let pattern = &PATTERN[..width];
        for &elements in &[0u64, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 64, 65, 255, 1024, 4097] {
            let length = elements * width as u64;
            for (case, &offset) in [0u64, 1, 2, 3, 4, 6, 8, 12, 16, 17, 24, 40].iter().enumerate() {
                // Every other case ends exactly at the end of the buffer.
                let tail = if case % 2 == 0 { 0 } else { 13 };
                let (buffer, mut expected) = rig.random_buffer(&mut rng, (offset + length + tail).max(1));
                rig.run(|queue, signal| queue.fill(buffer.range(offset, length), pattern).signals(signal).submit());
                for k in 0..length as usize {
                    expected[offset as usize + k] = pattern[k % width];
                }
                check(&buffer.to_vec().unwrap(), &expected, &format!("fill width {width}, {length} bytes at {offset}"));
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 4 * 18 * 12);
}

#[test]
fn fill_of_the_whole_buffer_and_of_device_local_memory() {
    let rig = Rig::new();
    for size in [1u64, 7, 64, 4096, 65537] {
        let whole = rig.device.allocate(MemoryKind::HostVisible, size).unwrap();
        rig.run(|queue, signal| queue.fill(whole.whole(), &[0x5A]).signals(signal).submit());
        assert!(whole.to_vec().unwrap().iter().all(|&byte| byte == 0x5A), "whole fill of {size} bytes");

        // Device-local memory is checked through a copy back to host-visible memory.
        let local = rig.device.allocate(MemoryKind::DeviceLocal, size + 8).unwrap();
        let readback = rig.device.allocate(MemoryKind::HostVisible, size + 8).unwrap();
        rig.run(|queue, signal| queue.fill(local.whole(), &[0xEE]).signals(signal).submit());
        rig.run(|queue, signal| queue.fill(local.range(4, size), &[0x11]).signals(signal).submit());
        rig.run(|queue, signal| queue.copy(local.whole(), readback.whole()).signals(signal).submit());
        let bytes = readback.to_vec().unwrap();
        assert!(bytes[..4].iter().chain(&bytes[4 + size as usize..]).all(|&byte| byte == 0xEE), "guards of {size}");
        assert!(bytes[4..4 + size as usize].iter().all(|&byte| byte == 0x11), "device-local fill of {size} bytes");
    }
}

#[test]
fn copies_every_size_and_alignment() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(2);
    // (source offset, target offset): both 16-aligned, 8-aligned, 4-aligned, mixed and unaligned.
    let offsets = [(0u64, 0u64), (16, 32), (8, 24), (4, 12), (16, 0), (1, 0), (0, 1), (3, 5), (7, 7), (2, 6)];
    let mut cases = 0;
    for &length in SIZES.iter().chain(&[65537]) {
        for &(source_offset, target_offset) in &offsets {
            let (source, source_bytes) = rig.random_buffer(&mut rng, source_offset + length + 9);
            let tail = if cases % 2 == 0 { 0 } else { 11 };
            let (target, mut expected) = rig.random_buffer(&mut rng, (target_offset + length + tail).max(1));
            rig.run(|queue, signal| {
                queue
                    .copy(source.range(source_offset, length), target.range(target_offset, length))
                    .signals(signal)
                    .submit()
            });
            let (s, t, n) = (source_offset as usize, target_offset as usize, length as usize);
            expected[t..t + n].copy_from_slice(&source_bytes[s..s + n]);
            check(
                &target.to_vec().unwrap(),
                &expected,
                &format!("copy of {length} bytes {source_offset} -> {target_offset}"),
            );
            check(&source.to_vec().unwrap(), &source_bytes, "copy source is unchanged");
            cases += 1;
        }
    }
    assert_eq!(cases, (SIZES.len() + 1) * offsets.len());
}

#[test]
fn copies_within_one_buffer_between_disjoint_and_touching_ranges() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(3);
    for &length in &[1u64, 3, 16, 17, 128, 129, 4096] {
        for gap in [0u64, 1, 5, 16] {
            // Forward: [0, n) -> [n + gap, 2n + gap); backward: the reverse.
            for forward in [true, false] {
                let size = 2 * length + gap + 7;
                let (buffer, mut expected) = rig.random_buffer(&mut rng, size);
                let (from, to) = if forward { (0, length + gap) } else { (length + gap, 0) };
                rig.run(|queue, signal| {
                    queue.copy(buffer.range(from, length), buffer.range(to, length)).signals(signal).submit()
                });
                let source = expected[from as usize..(from + length) as usize].to_vec();
                expected[to as usize..(to + length) as usize].copy_from_slice(&source);
                check(
                    &buffer.to_vec().unwrap(),
                    &expected,
                    &format!("in-buffer copy of {length}, gap {gap}, forward {forward}"),
                );
            }
        }
    }
}

#[test]
fn copies_through_device_local_memory() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(4);
    for &length in &[1u64, 17, 128, 4097, 65536] {
        let (source, bytes) = rig.random_buffer(&mut rng, length);
        let local = rig.device.allocate(MemoryKind::DeviceLocal, length + 32).unwrap();
        let (back, mut expected) = rig.random_buffer(&mut rng, length + 3);
        rig.run(|queue, signal| queue.copy(source.whole(), local.range(16, length)).signals(signal).submit());
        rig.run(|queue, signal| queue.copy(local.range(16, length), back.range(3, length)).signals(signal).submit());
        expected[3..].copy_from_slice(&bytes);
        check(&back.to_vec().unwrap(), &expected, &format!("host -> device-local -> host, {length} bytes"));
    }
}

#[test]
fn updates_inline_and_copied() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(5);
    let sizes =
        [0u64, 1, 3, 4, 15, 16, 17, 63, 64, 65, 191, 192, 193, 255, 256, 4096, 4097, 65535, MAX_UPDATE_BYTES as u64];
    let mut cases = 0;
    for &length in &sizes {
        for (case, &offset) in [0u64, 1, 3, 4, 16, 17].iter().enumerate() {
            let tail = if case % 2 == 0 { 0 } else { 5 };
            let (buffer, mut expected) = rig.random_buffer(&mut rng, (offset + length + tail).max(1));
            let data = rng.bytes(length as usize);
            rig.run(|queue, signal| queue.update(&buffer, offset, &data).signals(signal).submit());
            expected[offset as usize..(offset + length) as usize].copy_from_slice(&data);
            check(&buffer.to_vec().unwrap(), &expected, &format!("update of {length} bytes at {offset}"));
            cases += 1;
        }
    }
    assert_eq!(cases, sizes.len() * 6);
}

#[test]
fn update_data_is_captured_at_submission() {
    // The caller's slice may change (or be freed) as soon as `update` returns.
    let rig = Rig::new();
    let target = rig.device.allocate(MemoryKind::HostVisible, 8192).unwrap();
    let blocker = rig.device.create_semaphore(0).unwrap();
    let mut inline = vec![7u8; 100];
    let mut update = vec![9u8; 5000];
    // Held back by a host-signalled wait, so the device cannot have read anything yet.
    rig.queue.update(&target, 0, &inline).wait(blocker.at(1)).submit().unwrap();
    rig.queue.update(&target, 1000, &update).signal(rig.done.at(1)).submit().unwrap();
    inline.fill(0xFF);
    update.fill(0xFF);
    drop((inline, update));
    blocker.signal(1).unwrap();
    rig.done.wait(1, TIMEOUT).unwrap();
    let bytes = target.to_vec().unwrap();
    assert!(bytes[..100].iter().all(|&byte| byte == 7));
    assert!(bytes[100..1000].iter().all(|&byte| byte == 0));
    assert!(bytes[1000..6000].iter().all(|&byte| byte == 9));
    assert!(bytes[6000..].iter().all(|&byte| byte == 0));
}

#[test]
fn updates_into_device_local_memory() {
    let rig = Rig::new();
    let mut rng = Xorshift::new(6);
    for &length in &[1u64, 192, 193, 65536] {
        let local = rig.device.allocate(MemoryKind::DeviceLocal, length + 2).unwrap();
        let readback = rig.device.allocate(MemoryKind::HostVisible, length + 2).unwrap();
        let data = rng.bytes(length as usize);
        rig.run(|queue, signal| queue.fill(local.whole(), &[0x33]).signals(signal).submit());
        rig.run(|queue, signal| queue.update(&local, 1, &data).signals(signal).submit());
        rig.run(|queue, signal| queue.copy(local.whole(), readback.whole()).signals(signal).submit());
        let bytes = readback.to_vec().unwrap();
        assert_eq!(bytes[0], 0x33);
        assert_eq!(*bytes.last().unwrap(), 0x33);
        check(&bytes[1..=length as usize], &data, &format!("device-local update of {length}"));
    }
}

#[test]
fn zero_length_operations_still_signal() {
    let rig = Rig::new();
    let buffer = host_buffer(&rig.device, &[1, 2, 3, 4]);
    rig.run(|queue, signal| queue.fill(buffer.range(4, 0), &[9]).signals(signal).submit());
    rig.run(|queue, signal| queue.copy(buffer.range(0, 0), buffer.range(2, 0)).signals(signal).submit());
    rig.run(|queue, signal| queue.update(&buffer, 4, &[]).signals(signal).submit());
    assert_eq!(buffer.to_vec().unwrap(), [1, 2, 3, 4]);
    assert_eq!(rig.done.value(), 3);
    assert_eq!(rig.queue.stats().submissions, 3);
}

/// One operation of a random sequence on two 1 KiB buffers.
#[derive(Clone, Debug)]
enum Op {
    Fill { buffer: usize, offset: u64, elements: u64, width: usize, pattern: [u8; 8] },
    Copy { from: usize, from_offset: u64, to: usize, to_offset: u64, length: u64 },
    Update { buffer: usize, offset: u64, data: Vec<u8> },
}

const MODEL_SIZE: u64 = 1024;

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2usize, 0..MODEL_SIZE, 0..300u64, prop::sample::select(vec![1usize, 2, 4, 8]), any::<[u8; 8]>()).prop_map(
            |(buffer, offset, elements, width, pattern)| Op::Fill { buffer, offset, elements, width, pattern }
        ),
        (0..2usize, 0..MODEL_SIZE, 0..2usize, 0..MODEL_SIZE, 0..600u64).prop_map(
            |(from, from_offset, to, to_offset, length)| Op::Copy { from, from_offset, to, to_offset, length }
        ),
        (0..2usize, 0..MODEL_SIZE, prop::collection::vec(any::<u8>(), 0..400))
            .prop_map(|(buffer, offset, data)| Op::Update { buffer, offset, data }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// A random sequence runs back to back (no host waits between operations, relaxed mode), so
    /// both each operation and queue order must hold for the buffers to match the model.
    #[test]
    fn random_sequences_match_a_host_model(ops in prop::collection::vec(op_strategy(), 1..16), seed in any::<u64>()) {
        let rig = Rig::new();
        let mut rng = Xorshift::new(seed);
        let mut model: Vec<Vec<u8>> = (0..2).map(|_| rng.bytes(MODEL_SIZE as usize)).collect();
        let buffers: Vec<Buffer> = model.iter().map(|bytes| host_buffer(&rig.device, bytes)).collect();
        let mut submitted = 0u64;
        for op in &ops {
            let signal = [rig.done.at(submitted + 1)];
            match op {
                Op::Fill { buffer, offset, elements, width, pattern } => {
                    let length = (elements * *width as u64).min((MODEL_SIZE - offset) / *width as u64 * *width as u64);
                    rig.queue.fill(buffers[*buffer].range(*offset, length), &pattern[..*width]).signals(&signal).submit().unwrap();
                    for k in 0..length as usize {
                        model[*buffer][*offset as usize + k] = pattern[k % width];
                    }
                }
                Op::Copy { from, from_offset, to, to_offset, length } => {
                    let length = (*length).min(MODEL_SIZE - from_offset).min(MODEL_SIZE - to_offset);
                    let overlaps = from == to && length > 0 && from_offset < &(to_offset + length) && to_offset < &(from_offset + length);
                    let result = rig.queue.copy(buffers[*from].range(*from_offset, length), buffers[*to].range(*to_offset, length)).signals(&signal).submit();
                    if overlaps {
                        prop_assert!(matches!(result, Err(EngineError::Plan(aqueduct_builtins::PlanError::OverlappingCopy { .. }))), "{result:?}");
                        continue;
                    }
                    result.unwrap();
                    let bytes = model[*from][*from_offset as usize..(from_offset + length) as usize].to_vec();
                    model[*to][*to_offset as usize..(to_offset + length) as usize].copy_from_slice(&bytes);
                }
                Op::Update { buffer, offset, data } => {
                    let length = (data.len() as u64).min(MODEL_SIZE - offset) as usize;
                    rig.queue.update(&buffers[*buffer], *offset, &data[..length]).signals(&signal).submit().unwrap();
                    model[*buffer][*offset as usize..*offset as usize + length].copy_from_slice(&data[..length]);
                }
            }
            submitted += 1;
        }
        rig.done.wait(submitted, TIMEOUT).unwrap();
        for (buffer, expected) in buffers.iter().zip(&model) {
            prop_assert_eq!(&buffer.to_vec().unwrap(), expected);
        }
    }
}
