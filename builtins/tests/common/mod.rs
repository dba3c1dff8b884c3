//! Shared test helpers: running a plan on the host build of the C kernels directly, and a small
//! soft-runtime client that submits plans as real dispatch packets.
#![allow(dead_code)]

use std::collections::HashMap;

use aqueduct_abi::{FenceScope, HostBuild, KernelDispatchPacket, PacketHeader, PacketType, WorkgroupContext};
use aqueduct_builtins::{Builtin, DeviceLibrary, DispatchPlan, SelectedLibrary, host_kernels};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::{enums, hsa_agent_t, hsa_amd_memory_pool_t, hsa_queue_t};
use aqueduct_hsa::{Hsa, KernelSymbol, PoolKindInfo};

/// The host build of one builtin.
pub fn host_kernel(builtin: Builtin) -> &'static HostBuild {
    host_kernels().iter().find(|kernel| kernel.symbol == builtin.symbol()).expect("host build")
}

/// What `aq_steady_counter()` reads in host-only tests.
pub const FAKE_COUNTER: u64 = 0x0123_4567_89AB_CDEF;

unsafe extern "C" fn fake_counter() -> u64 {
    FAKE_COUNTER
}

/// Runs one workgroup of a host build outside the soft runtime, with a 1-D packet built from
/// `workgroup_size` and `grid_size`.
///
/// # Safety
/// `kernarg` holds the kernel's full argument struct; the addresses in it must be valid for what
/// the kernel does with them.
pub unsafe fn run_workgroup(
    kernel: &HostBuild,
    kernarg: &[u8],
    workgroup_id: [u32; 3],
    workgroup_size: [u16; 3],
    grid_size: [u32; 3],
) {
    let packet = KernelDispatchPacket {
        workgroup_size_x: workgroup_size[0],
        workgroup_size_y: workgroup_size[1],
        workgroup_size_z: workgroup_size[2],
        grid_size_x: grid_size[0],
        grid_size_y: grid_size[1],
        grid_size_z: grid_size[2],
        kernarg_address: kernarg.as_ptr() as u64,
        ..bytemuck::Zeroable::zeroed()
    };
    let context = WorkgroupContext {
        packet: &packet,
        kernarg: kernarg.as_ptr(),
        implicit_args: core::ptr::null(),
        group_memory: core::ptr::null_mut(),
        group_memory_len: 0,
        steady_counter: fake_counter,
        workgroup_id,
        grid_size,
        workgroup_size,
        trapped: core::cell::Cell::new(0),
        ring_doorbell: aqueduct_abi::host_build_abi::no_doorbell,
    };
    // SAFETY: the context and the packet it points at outlive the call; the caller vouches for
    // the kernargs and the memory they address.
    unsafe { (kernel.function)(&context) };
}

/// Runs `plan` by calling its host build once per workgroup, serially, as the soft runtime
/// would (it runs them in parallel).
///
/// # Safety
/// The plan's addresses must be valid for the accesses it describes.
pub unsafe fn run_on_cpu(plan: &DispatchPlan) {
    let kernel = host_kernel(plan.kernel);
    let kernarg = plan.kernarg_bytes().to_vec();
    let groups = plan.grid_size.div_ceil(u32::from(plan.workgroup_size));
    for group in 0..groups {
        // SAFETY: `kernarg` holds the plan's full kernarg struct; the caller vouches for memory.
        unsafe { run_workgroup(kernel, &kernarg, [group, 0, 0], [plan.workgroup_size, 1, 1], [plan.grid_size, 1, 1]) };
    }
}

/// Most packets a batch submits before ringing the doorbell.
const DOORBELL_EVERY: usize = 64;
/// Kernarg bytes reserved per packet in a batch (every builtin needs at most 208).
const KERNARG_SLOT: usize = 256;
const QUEUE_PACKETS: u32 = 1024;
const MAX_BATCH: usize = 4096;

/// One soft agent with the device library loaded, a queue and a reusable kernarg arena.
pub struct Client {
    pub hsa: Hsa,
    pub agent: hsa_agent_t,
    pub isa: String,
    pub library: SelectedLibrary,
    pub device_pool: hsa_amd_memory_pool_t,
    kernels: HashMap<Builtin, KernelSymbol>,
    queue: *mut hsa_queue_t,
    ring: AqlRing,
    kernarg_arena: *mut u8,
}

impl Client {
    /// A client for the first GPU agent of the already-initialized (or default) soft runtime.
    pub fn new() -> Self {
        Self::for_agent(0)
    }

    pub fn for_agent(index: usize) -> Self {
        Self::loading(index, None)
    }

    /// A client whose builtin kernels come from `code_object` (the device-library bytes selected
    /// for the agent when `None`).
    pub fn loading(index: usize, code_object: Option<&'static [u8]>) -> Self {
        for (id, kernels) in aqueduct_builtins::soft_registrations() {
            aqueduct_soft_hsa::register_kernels(id, kernels);
        }
        let hsa = aqueduct_soft_hsa::open_current().expect("soft runtime initializes");
        let info = hsa.gpu_agents().expect("agents").into_iter().nth(index).expect("agent");
        let isa = info.isa_names.first().expect("an ISA").clone();
        let library = DeviceLibrary::select(&isa).unwrap_or_else(|error| panic!("{isa}: {error}"));
        let agent = info.agent;
        let executable =
            hsa.load_executable(agent, code_object.unwrap_or(library.code_object)).expect("device library loads");
        let kernels = Builtin::ALL
            .into_iter()
            .map(|builtin| (builtin, hsa.kernel_symbol(executable, agent, builtin.symbol()).expect("builtin symbol")))
            .collect();
        let pools = hsa.pools(agent).expect("pools");
        let find = |kind| pools.iter().find(|pool| pool.kind == kind).expect("pool kind").pool;
        let device_pool = find(PoolKindInfo::CoarseGrained);
        // Kernarg memory is the CPU agent's, mapped for the GPU explicitly (as ROCr requires).
        let kernarg_pool = hsa.host_pool(PoolKindInfo::Kernarg).expect("kernarg pool").pool;
        let kernarg_arena = hsa.allocate(kernarg_pool, MAX_BATCH * KERNARG_SLOT).expect("kernargs");
        hsa.allow_access(&[agent], kernarg_arena).expect("kernargs mapped");
        // SAFETY: no callback, so the null data pointer is never used.
        let queue = unsafe { hsa.queue_create(agent, QUEUE_PACKETS, None, core::ptr::null_mut()) }.expect("queue");
        // SAFETY: the queue was just created and lives as long as the client (never destroyed).
        let ring = unsafe { AqlRing::new(queue, hsa.api()) };
        Self { hsa, agent, isa, library, device_pool, kernels, queue, ring, kernarg_arena }
    }

    pub fn kernel(&self, builtin: Builtin) -> &KernelSymbol {
        &self.kernels[&builtin]
    }

    /// A zeroed device buffer, valid while the client lives: dropping the last client shuts
    /// the runtime down, which frees every allocation.
    #[allow(clippy::mut_from_ref)]
    pub fn alloc(&self, bytes: usize) -> &mut [u8] {
        let pointer = self.hsa.allocate(self.device_pool, bytes.max(1)).expect("allocation");
        // SAFETY: a fresh allocation of at least `bytes` bytes that nothing else references.
        unsafe { core::slice::from_raw_parts_mut(pointer, bytes) }
    }

    /// Submits every plan as a dispatch packet on one queue and waits for all of them.
    pub fn run(&self, plans: &[DispatchPlan]) {
        if plans.is_empty() {
            return;
        }
        let done = self.submit(plans);
        // SAFETY: table call on a live signal; the timeout is in ns on the soft runtime.
        let value = unsafe {
            (self.hsa.api().hsa_signal_wait_scacquire)(done, enums::SIGNAL_CONDITION_EQ, 0, 60_000_000_000, 0)
        };
        let detail = aqueduct_soft_hsa::queue_error_detail(self.queue).ok().flatten();
        assert_eq!(value, 0, "batch of {} did not complete; queue error: {detail:?}", plans.len());
        self.hsa.signal_destroy(done).expect("signal destroy");
    }

    /// Submits one plan that must fault the queue; returns the queue's error status and detail.
    /// The client's queue is dead afterwards.
    pub fn run_faulting(&self, plan: &DispatchPlan) -> (u32, String) {
        let done = self.submit(core::slice::from_ref(plan));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if let Some(error) = aqueduct_soft_hsa::queue_error_detail(self.queue).ok().flatten() {
                // SAFETY: table call on a live signal.
                let value = unsafe { (self.hsa.api().hsa_signal_load_scacquire)(done) };
                assert_eq!(value, 1, "a faulted packet does not complete");
                return error;
            }
            assert!(std::time::Instant::now() < deadline, "the queue did not fault");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Writes the plans as dispatch packets, rings the doorbell and returns their signal.
    /// The client's queue.
    pub fn queue(&self) -> *mut hsa_queue_t {
        self.queue
    }

    pub fn submit(&self, plans: &[DispatchPlan]) -> aqueduct_hsa::sys::hsa_signal_t {
        assert!(plans.len() <= MAX_BATCH, "batch too large");
        let done = self.hsa.signal_create(plans.len() as i64).expect("signal");
        let header = PacketHeader::new(PacketType::KernelDispatch, false, FenceScope::System, FenceScope::System);
        let mut last = 0;
        for (index, plan) in plans.iter().enumerate() {
            let kernel = self.kernel(plan.kernel);
            let bytes = plan.kernarg_bytes();
            assert!(bytes.len() <= KERNARG_SLOT && kernel.kernarg_segment_size as usize <= KERNARG_SLOT);
            // SAFETY: slot `index` of the arena is KERNARG_SLOT bytes and no packet in flight uses
            // it (the previous batch finished before this one started).
            let kernarg = unsafe {
                let slot = self.kernarg_arena.add(index * KERNARG_SLOT);
                core::ptr::copy_nonoverlapping(bytes.as_ptr(), slot, bytes.len());
                slot
            };
            let packet = kernel.dispatch_1d(plan.grid_size, plan.workgroup_size, kernarg as u64, done);
            last = loop {
                if let Some(id) = self.ring.try_reserve(1) {
                    break id;
                }
                self.ring.ring_doorbell(last);
                std::thread::yield_now();
            };
            // SAFETY: `last` was reserved just now and is published once.
            unsafe { self.ring.write_and_publish(last, &packet, header, 1) };
            if index % DOORBELL_EVERY == DOORBELL_EVERY - 1 {
                self.ring.ring_doorbell(last);
            }
        }
        self.ring.ring_doorbell(last);
        done
    }
}

/// A byte no fill pattern or copy source in the tests uses: whatever still holds it was untouched.
pub const SENTINEL: u8 = 0xEE;

/// Deterministic test bytes that never equal [`SENTINEL`].
pub fn source_byte(seed: usize, index: usize) -> u8 {
    let mixed = (seed.wrapping_mul(0x9E37_79B9) ^ index.wrapping_mul(0x85EB_CA6B)).wrapping_add(index >> 3);
    let byte = (mixed ^ (mixed >> 13)) as u8;
    if byte == SENTINEL { 0x17 } else { byte }
}
