//! A minimal HSA client used by the soft-runtime tests and benches. It talks only to the HSA table
//! and to ring memory, the way any HSA application (and the engine) does.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use aqueduct_abi::packet::amd_format;
use aqueduct_abi::{
    BarrierAndPacket, BarrierValuePacket, FenceScope, HostBuild, KernelDispatchPacket, PacketHeader, PacketType,
    VendorPacketHeader, WorkgroupContext,
};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::{hsa_agent_t, hsa_amd_memory_pool_t, hsa_queue_t, hsa_signal_t};
use aqueduct_hsa::{Hsa, KernelSymbol, PoolKindInfo};

pub const TEST_KERNELS_GFX1100: &[u8] = include_bytes!("../fixtures/test_kernels_gfx1100.hsaco");
pub const TEST_KERNELS_GFX90A: &[u8] = include_bytes!("../fixtures/test_kernels_gfx90a.hsaco");

/// CPU twin of `store_value(u32* out, u32 value, u32 count)`: kernargs out@0, value@8, count@12.
unsafe extern "C" fn store_value(context: *const WorkgroupContext) {
    // SAFETY: the runner passes a valid context, this kernel's kernarg segment and a valid `out`.
    unsafe {
        let context = &*context;
        let out: u64 = context.kernarg(0);
        let value: u32 = context.kernarg(8);
        let count: u32 = context.kernarg(12);
        let start = context.workgroup_id[0] * u32::from(context.workgroup_size[0]);
        for lane in 0..context.active_size()[0] {
            let index = start + lane;
            if index < count {
                (out as *mut u32).add(index as usize).write(value + index);
            }
        }
    }
}

/// CPU twin of `add_from(u32* out, const u32* in, u32 addend, u32 count)`:
/// kernargs out@0, in@8, addend@16, count@20.
unsafe extern "C" fn add_from(context: *const WorkgroupContext) {
    // SAFETY: as above.
    unsafe {
        let context = &*context;
        let out: u64 = context.kernarg(0);
        let input: u64 = context.kernarg(8);
        let addend: u32 = context.kernarg(16);
        let count: u32 = context.kernarg(20);
        let start = context.workgroup_id[0] * u32::from(context.workgroup_size[0]);
        for lane in 0..context.active_size()[0] {
            let index = (start + lane) as usize;
            if index < count as usize {
                let value = (input as *const u32).add(index).read();
                (out as *mut u32).add(index).write(value + addend);
            }
        }
    }
}

/// CPU twin of `accumulate(u32* out, const u32* in, u32 scale, u32 count)`:
/// kernargs out@0, in@8, scale@16, count@20. Only work-item 0 of workgroup 0 acts, and it runs
/// `out[i] += in[i] * scale` for every `i < count` with wrapping u32 arithmetic.
unsafe extern "C" fn accumulate(context: *const WorkgroupContext) {
    // SAFETY: the runner passes a valid context.
    let context = unsafe { &*context };
    if context.workgroup_id[0] != 0 || context.active_size()[0] == 0 {
        return;
    }
    // SAFETY: as above; `out` and `in` hold at least `count` u32s.
    unsafe {
        let out: u64 = context.kernarg(0);
        let input: u64 = context.kernarg(8);
        let scale: u32 = context.kernarg(16);
        let count: u32 = context.kernarg(20);
        for index in 0..count as usize {
            let value = (input as *const u32).add(index).read();
            let slot = (out as *mut u32).add(index);
            slot.write(slot.read().wrapping_add(value.wrapping_mul(scale)));
        }
    }
}

/// Rust kernels for the fixtures' kernels (`no_cpu_twin` has none on purpose). They read raw
/// kernargs, so they declare no layout (`args: None`).
pub const TEST_KERNELS: [HostBuild; 3] = [
    HostBuild { symbol: "store_value.kd", function: store_value, args: None },
    HostBuild { symbol: "add_from.kd", function: add_from, args: None },
    HostBuild { symbol: "accumulate.kd", function: accumulate, args: None },
];

/// Registers [`TEST_KERNELS`] for both fixture code objects, through the soft runtime's one entry
/// point for host builds (keyed by code object).
pub fn register_test_kernels() {
    for code_object in [TEST_KERNELS_GFX1100, TEST_KERNELS_GFX90A] {
        aqueduct_soft_hsa::register_kernels(aqueduct_codeobject::CodeObjectId::of(code_object), &TEST_KERNELS);
    }
}

/// Records the last status the queue error callback received.
pub static LAST_QUEUE_ERROR: AtomicU32 = AtomicU32::new(0);

pub unsafe extern "C" fn record_queue_error(status: u32, _queue: *mut hsa_queue_t, data: *mut core::ffi::c_void) {
    LAST_QUEUE_ERROR.store(status, Ordering::SeqCst);
    if !data.is_null() {
        // SAFETY: tests pass a pointer to a static AtomicU32 as callback data.
        unsafe { (*data.cast::<AtomicU32>()).store(status, Ordering::SeqCst) };
    }
}

pub struct Client {
    pub hsa: Hsa,
    pub agent: hsa_agent_t,
    pub device_pool: hsa_amd_memory_pool_t,
    pub kernarg_pool: hsa_amd_memory_pool_t,
}

impl Client {
    pub fn new() -> Self {
        // Tiny rings make a full ring easy to reach; ROCr's minimum is 64 packets.
        Self::configured(aqueduct_soft_hsa::SoftConfig { queue_min_packets: 4, ..Default::default() })
    }

    /// A client of the soft runtime initialized with `config` (if this process has not
    /// initialized it yet).
    pub fn configured(config: aqueduct_soft_hsa::SoftConfig) -> Self {
        register_test_kernels();
        aqueduct_soft_hsa::configure(config);
        let hsa = aqueduct_soft_hsa::open_current().expect("soft runtime initializes");
        let agent = hsa.gpu_agents().expect("agents")[0].agent;
        let pools = hsa.pools(agent).expect("pools");
        let device_pool = pools.iter().find(|pool| pool.kind == PoolKindInfo::CoarseGrained).expect("device pool").pool;
        // Kernarg memory is the CPU agent's, mapped for the GPU by `kernargs` below.
        let kernarg_pool = hsa.host_pool(PoolKindInfo::Kernarg).expect("kernarg pool").pool;
        Self { hsa, agent, device_pool, kernarg_pool }
    }

    pub fn queue(&self, packets: u32) -> Queue {
        self.queue_with_callback(packets, core::ptr::null_mut())
    }

    pub fn queue_with_callback(&self, packets: u32, data: *mut core::ffi::c_void) -> Queue {
        // SAFETY: tests pass null or a pointer to a static AtomicU32, valid for the whole run.
        let raw = unsafe { self.hsa.queue_create(self.agent, packets, Some(record_queue_error), data) }.expect("queue");
        // SAFETY: the queue was just created and tests never use it after destroying it.
        Queue { raw, ring: unsafe { AqlRing::new(raw, self.hsa.api()) } }
    }

    pub fn kernel(&self, code_object: &[u8], symbol: &str) -> KernelSymbol {
        let executable = self.hsa.load_executable(self.agent, code_object).expect("executable loads");
        self.hsa.kernel_symbol(executable, self.agent, symbol).expect("symbol")
    }

    pub fn alloc_u32(&self, count: usize) -> &'static mut [u32] {
        let pointer = self.hsa.allocate(self.device_pool, count * 4).expect("allocation");
        // SAFETY: a fresh zeroed allocation of `count` u32s, leaked for the test's duration.
        unsafe { core::slice::from_raw_parts_mut(pointer.cast::<u32>(), count) }
    }

    pub fn kernargs(&self, bytes: &[u8]) -> u64 {
        let pointer = self.hsa.allocate(self.kernarg_pool, bytes.len().max(64)).expect("kernarg allocation");
        self.hsa.allow_access(&[self.agent], pointer).expect("kernargs mapped for the GPU");
        // SAFETY: the allocation holds at least `bytes.len()` bytes.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), pointer, bytes.len()) };
        pointer as u64
    }

    pub fn signal(&self, initial: i64) -> hsa_signal_t {
        self.hsa.signal_create(initial).expect("signal")
    }

    pub fn load(&self, signal: hsa_signal_t) -> i64 {
        // SAFETY: table call on a handle the runtime validates.
        unsafe { (self.hsa.api().hsa_signal_load_scacquire)(signal) }
    }

    /// Waits until `signal == value` or `timeout_ms` passes; returns the last value seen.
    pub fn wait_eq(&self, signal: hsa_signal_t, value: i64, timeout_ms: u64) -> i64 {
        // SAFETY: table call; the timeout is in timestamp ticks (ns on the soft runtime).
        unsafe { (self.hsa.api().hsa_signal_wait_scacquire)(signal, 0, value, timeout_ms * 1_000_000, 0) }
    }
}

pub struct Queue {
    pub raw: *mut hsa_queue_t,
    pub ring: AqlRing,
}

impl Queue {
    pub fn size(&self) -> u64 {
        self.ring.capacity()
    }

    pub fn read_index(&self) -> u64 {
        self.ring.read_index()
    }

    pub fn write_index(&self) -> u64 {
        self.ring.write_index_now()
    }

    pub fn try_reserve(&self) -> Option<u64> {
        self.ring.try_reserve(1)
    }

    pub fn reserve_spinning(&self) -> u64 {
        loop {
            if let Some(id) = self.try_reserve() {
                return id;
            }
            std::thread::yield_now();
        }
    }

    pub fn publish<T: bytemuck::Pod>(&self, id: u64, packet: &T, header: PacketHeader, setup: u16) {
        // SAFETY: `id` was reserved by this test and is published once.
        unsafe { self.ring.write_and_publish(id, packet, header, setup) }
    }

    pub fn ring(&self, id: u64) {
        self.ring.ring_doorbell(id);
    }
}

pub fn dispatch_packet(
    kernel: &KernelSymbol,
    grid: u32,
    workgroup: u16,
    kernarg: u64,
    completion: hsa_signal_t,
) -> KernelDispatchPacket {
    kernel.dispatch_1d(grid, workgroup, kernarg, completion)
}

pub fn dispatch_header(barrier: bool) -> PacketHeader {
    PacketHeader::new(PacketType::KernelDispatch, barrier, FenceScope::System, FenceScope::System)
}

pub fn barrier_and(deps: &[hsa_signal_t], completion: hsa_signal_t) -> (BarrierAndPacket, PacketHeader) {
    let mut packet = BarrierAndPacket { completion_signal: completion.handle, ..Default::default() };
    for (slot, dep) in packet.dep_signal.iter_mut().zip(deps) {
        *slot = dep.handle;
    }
    (packet, PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System))
}

pub fn barrier_value(
    signal: hsa_signal_t,
    condition: u32,
    value: i64,
    mask: i64,
    completion: hsa_signal_t,
) -> (BarrierValuePacket, PacketHeader) {
    let header = PacketHeader::new(PacketType::VendorSpecific, true, FenceScope::System, FenceScope::System);
    let packet = BarrierValuePacket {
        header: VendorPacketHeader { header, amd_format: amd_format::BARRIER_VALUE, reserved: 0 },
        signal: signal.handle,
        value,
        mask,
        cond: condition,
        completion_signal: completion.handle,
        ..Default::default()
    };
    (packet, header)
}

/// The 16-bit word after the header of a vendor packet: the AMD format byte and a reserved byte.
pub fn barrier_value_setup() -> u16 {
    u16::from(amd_format::BARRIER_VALUE)
}

pub fn kernargs_store_value(out: *mut u32, value: u32, count: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(16);
    bytes.extend_from_slice(&(out as u64).to_le_bytes());
    bytes.extend_from_slice(&value.to_le_bytes());
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes
}

pub fn kernargs_add_from(out: *mut u32, input: *const u32, addend: u32, count: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(24);
    bytes.extend_from_slice(&(out as u64).to_le_bytes());
    bytes.extend_from_slice(&(input as u64).to_le_bytes());
    bytes.extend_from_slice(&addend.to_le_bytes());
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes
}

pub fn kernargs_accumulate(out: *mut u32, input: *const u32, scale: u32, count: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(24);
    bytes.extend_from_slice(&(out as u64).to_le_bytes());
    bytes.extend_from_slice(&(input as u64).to_le_bytes());
    bytes.extend_from_slice(&scale.to_le_bytes());
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes
}

/// A copy of `code_object` with `kernel`'s descriptor changed by `change`: a code object of its
/// own identity, so no host build registered for the original applies and its kernels run from
/// their machine code.
pub fn patched_code_object(
    code_object: &[u8],
    kernel: &str,
    change: impl FnOnce(&mut aqueduct_abi::KernelDescriptor),
) -> &'static [u8] {
    let mut bytes = code_object.to_vec();
    let parsed = aqueduct_codeobject::CodeObject::parse(&bytes).expect("the code object parses");
    let index = parsed.kernel_index(kernel).expect("the kernel");
    let offset = parsed.kernel_descriptor(index).expect("its descriptor").file_offset as usize;
    let mut descriptor: aqueduct_abi::KernelDescriptor = bytemuck::pod_read_unaligned(&bytes[offset..offset + 64]);
    change(&mut descriptor);
    bytes[offset..offset + 64].copy_from_slice(bytemuck::bytes_of(&descriptor));
    // A byte past the ELF's contents, which loaders ignore, makes the code object another
    // identity even where `change` leaves the descriptor as it was.
    bytes.push(0);
    // Kept for the process, reachable, so valgrind's leak check (scripts/memcheck.sh) does not
    // count it.
    static PATCHED: std::sync::Mutex<Vec<&'static [u8]>> = std::sync::Mutex::new(Vec::new());
    let patched: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    PATCHED.lock().unwrap().push(patched);
    patched
}

/// Kernels that misbehave on purpose (`fixtures/hostile_kernels.c`), gfx1100.
pub const HOSTILE_KERNELS: &[u8] = include_bytes!("../fixtures/hostile_kernels_gfx1100.hsaco");

/// A system event handler that takes memory-fault events (ROCr aborts the process where no
/// handler takes one).
pub unsafe extern "C" fn take_fault(
    _event: *const aqueduct_hsa::sys::hsa_amd_event_t,
    _data: *mut core::ffi::c_void,
) -> u32 {
    aqueduct_hsa::sys::status::SUCCESS
}

/// What `touch` (`hostile_kernels.c`) reaches, by its `class` argument.
pub const MEMORY_CLASSES: [&str; 6] =
    ["global load", "global store", "global atomic", "FLAT store", "scalar load", "buffer store"];

/// Runs `touch` on one work-item of a new queue with `kernarg`, and checks that it faults the
/// queue as a memory fault naming the kernel and the PC.
pub fn touch_faults(client: &Client, touch: &KernelSymbol, kernarg: u64, what: &str) {
    let queue = client.queue(16);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(touch, 1, 1, kernarg, hsa_signal_t { handle: 0 }), dispatch_header(true), 1);
    queue.ring(id);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let recorded = || aqueduct_soft_hsa::queue_error_detail(queue.raw).expect("queue");
    while recorded().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (code, detail) = recorded().unwrap_or_else(|| panic!("{what} faults"));
    assert_eq!(code, aqueduct_hsa::sys::status::ERROR_MEMORY_FAULT, "{what}: {detail}");
    assert!(detail.contains("touch") && detail.contains("memory fault at pc"), "{what}: {detail}");
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the faulted queue is destroyed");
}

/// `touch`'s kernargs: the pointer it reaches, its class, and where it stores what it read.
pub fn touch_kernargs(client: &Client, pointer: u64, class: usize, out: &[u32]) -> u64 {
    let words = [pointer, class as u64, out.as_ptr() as u64];
    client.kernargs(&words.iter().flat_map(|word| word.to_le_bytes()).collect::<Vec<u8>>())
}
