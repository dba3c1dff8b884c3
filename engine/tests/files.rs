//! File reads and writes in queue order: round trips at odd offsets and sizes into host-visible
//! memory and, streamed through the bounce buffer, device-local memory larger than it; ranges
//! past the end refused up front; short reads and I/O errors failing the signals.

mod common;

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::PathBuf;

use aqueduct_engine::tuning::BOUNCE_BUFFER_BYTES;
use aqueduct_engine::{Buffer, Device, EngineError, MemoryKind, Queue, Semaphore, WaitStrategy};
use common::{KernelRig, TIMEOUT, Xorshift, controls, queue, release};

/// A file in the temp directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn with(name: &str, contents: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!("aqueduct-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        Self(path)
    }

    fn open(&self) -> File {
        OpenOptions::new().read(true).write(true).open(&self.0).unwrap()
    }

    fn contents(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        File::open(&self.0).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A buffer's bytes, through a copy into host-visible memory when the host cannot read it.
fn read_back(device: &Device, queue: &Queue, buffer: &Buffer, done: &Semaphore, value: u64) -> Vec<u8> {
    if buffer.kind() == MemoryKind::HostVisible {
        done.wait(value - 1, TIMEOUT).unwrap();
        return buffer.to_vec().unwrap();
    }
    let visible = device.allocate(MemoryKind::HostVisible, buffer.size()).unwrap();
    queue.copy(buffer.whole(), visible.whole()).wait(done.at(value - 1)).signal(done.at(value)).submit().unwrap();
    done.wait(value, TIMEOUT).unwrap();
    visible.to_vec().unwrap()
}

#[test]
fn round_trips_at_odd_offsets_and_sizes_stream_through_the_bounce_buffer() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let mut random = Xorshift::new(17);
    // Larger than the bounce buffer, so the device-local case takes several chunks.
    let contents = random.bytes(BOUNCE_BUFFER_BYTES as usize * 2 + 1234);
    let source = TempFile::with("round-trip-source", &contents);
    let sink = TempFile::with("round-trip-sink", &[]);
    let done = device.create_semaphore(0).unwrap();
    let mut value = 0;
    for kind in [MemoryKind::HostVisible, MemoryKind::DeviceLocal] {
        for (file_offset, buffer_offset, length) in
            [(0u64, 0u64, 1u64), (7, 3, 4093), (333, 129, contents.len() as u64 - 333)]
        {
            let buffer = device.allocate(kind, buffer_offset + length + 5).unwrap();
            a.fill(buffer.whole(), &[0xEE]).submit().unwrap();
            value += 1;
            a.read_file(&source.open(), file_offset, buffer.range(buffer_offset, length))
                .signal(done.at(value))
                .submit()
                .unwrap();
            value += 1;
            let bytes = read_back(device, &a, &buffer, &done, value);
            let (start, end) = (buffer_offset as usize, (buffer_offset + length) as usize);
            assert!(bytes[..start].iter().all(|&byte| byte == 0xEE), "{kind:?}: before the range");
            assert!(
                bytes[start..end] == contents[file_offset as usize..(file_offset + length) as usize],
                "{kind:?} {length}"
            );
            assert!(bytes[end..].iter().all(|&byte| byte == 0xEE), "{kind:?}: after the range");
            // And back out, at another odd offset of the sink.
            value += 1;
            let sink_offset = file_offset + 11;
            a.write_file(buffer.range(buffer_offset, length), &sink.open(), sink_offset)
                .signal(done.at(value))
                .submit()
                .unwrap();
            done.wait(value, TIMEOUT).unwrap();
            let written = sink.contents();
            assert!(
                written[sink_offset as usize..(sink_offset + length) as usize] == bytes[start..end],
                "{kind:?} {length}: written back"
            );
        }
    }
}

#[test]
fn a_range_past_the_end_is_refused_up_front() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let file = TempFile::with("past-the-end", &[1; 100]);
    let buffer = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    let before = a.stats();
    match a.read_file(&file.open(), 50, buffer.whole()).submit() {
        Err(EngineError::OutOfBounds { offset: 50, length: 64, size: 100, .. }) => {}
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
    assert!(matches!(
        a.read_file(&file.open(), u64::MAX, buffer.whole()).submit(),
        Err(EngineError::OutOfBounds { .. })
    ));
    assert!(matches!(
        a.read_file(&file.open(), 0, buffer.range(32, 64)).submit(),
        Err(EngineError::OutOfBounds { .. })
    ));
    assert_eq!(a.stats(), before, "nothing was submitted");
}

#[test]
fn a_short_read_or_an_io_error_fails_the_signals() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let file = TempFile::with("short", &[7; 4096]);
    for kind in [MemoryKind::HostVisible, MemoryKind::DeviceLocal] {
        std::fs::write(&file.0, [7; 4096]).unwrap();
        let buffer = device.allocate(kind, 4096).unwrap();
        let done = device.create_semaphore(0).unwrap();
        // The file shrinks after the read is submitted, before the queue reaches it.
        controls(&a).inject_fault(a.hsa_queue(), a.stats().packets, aqueduct_soft_hsa::Fault::Stall).unwrap();
        a.barrier().submit().unwrap();
        a.read_file(&file.open(), 0, buffer.whole()).signal(done.at(1)).submit().unwrap();
        file.open().set_len(1000).unwrap();
        release(&a, || done.query().is_err());
        let error = done.wait(1, TIMEOUT).unwrap_err();
        assert!(error.to_string().contains("short read: 1000 of 4096 bytes"), "{kind:?}: {error}");
    }
    // A write through a read-only handle: the operating system's error.
    let read_only = File::open(&file.0).unwrap();
    let buffer = device.allocate(MemoryKind::HostVisible, 16).unwrap();
    let later = device.create_semaphore(0).unwrap();
    a.write_file(buffer.whole(), &read_only, 0).signal(later.at(1)).submit().unwrap();
    let error = later.wait(1, TIMEOUT).unwrap_err();
    assert!(error.to_string().contains("host call failed"), "{error}");
}
