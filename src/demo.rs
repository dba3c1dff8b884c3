//! The end-to-end demo workload: a chain of real kernel dispatches handed between queues, each
//! step waiting on the previous one through a device-side BARRIER_AND, with results verified.
//!
//! It runs on the embedded soft HSA runtime and drives it exactly as the engine drives hardware:
//! packets in ring memory, header release stores, direct doorbell stores.

use std::time::{Duration, Instant};

use aqueduct_abi::{BarrierAndPacket, FenceScope, KernelDispatchPacket, KernelFault, PacketHeader, PacketType, SoftKernel, WorkgroupContext};
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::soft::SoftConfig;
use aqueduct_hsa::sys::{hsa_queue_t, hsa_signal_t};
use aqueduct_hsa::{Hsa, HsaError, KernelSymbol, PoolKindInfo};

/// The demo kernels, built from `kernels/demo.c` by `kernels/regen.sh`.
pub const DEMO_CODE_OBJECT: &[u8] = include_bytes!("../kernels/demo_gfx11-generic.hsaco");

/// CPU twin of `iota(u32* out, u32 base, u32 count)`: kernargs out@0, base@8, count@12.
unsafe fn iota(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the dispatcher passes iota's kernarg segment, whose `out` holds `count` u32s.
    unsafe {
        let (out, base, count) = (context.kernarg::<u64>(0) as *mut u32, context.kernarg::<u32>(8), context.kernarg::<u32>(12));
        let first = context.workgroup_id[0] * u32::from(context.workgroup_size[0]);
        for index in first..first + context.active_size()[0] {
            if index < count {
                out.add(index as usize).write(base + index);
            }
        }
    }
    Ok(())
}

/// CPU twin of `saxpy(float* y, const float* x, float a, u32 count)`: y@0, x@8, a@16, count@20.
unsafe fn saxpy(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the dispatcher passes saxpy's kernarg segment; `y` and `x` hold `count` floats.
    unsafe {
        let y = context.kernarg::<u64>(0) as *mut f32;
        let x = context.kernarg::<u64>(8) as *const f32;
        let (a, count) = (context.kernarg::<f32>(16), context.kernarg::<u32>(20));
        let first = context.workgroup_id[0] * u32::from(context.workgroup_size[0]);
        for index in first..first + context.active_size()[0] {
            if index < count {
                let index = index as usize;
                y.add(index).write(a * x.add(index).read() + y.add(index).read());
            }
        }
    }
    Ok(())
}

pub const DEMO_CPU_KERNELS: [SoftKernel; 2] =
    [SoftKernel { symbol: "iota.kd", function: iota }, SoftKernel { symbol: "saxpy.kd", function: saxpy }];

/// Elements per buffer.
pub const ELEMENTS: u32 = 4096;
const WORKGROUP: u16 = 256;

#[derive(Debug)]
pub struct DemoReport {
    pub provider: &'static str,
    pub agent: String,
    pub queues: u32,
    pub handoffs: u32,
    pub packets: u64,
    pub packets_per_queue: Vec<u64>,
    pub submit_time: Duration,
    pub end_to_end: Duration,
    pub verified_elements: usize,
}

#[derive(Debug)]
pub enum DemoError {
    Hsa(HsaError),
    Setup(String),
    Timeout { waited: Duration },
    Mismatch { buffer: &'static str, index: usize, expected: f64, found: f64 },
}

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Hsa(error) => error.fmt(f),
            Self::Setup(reason) => write!(f, "demo setup failed: {reason}"),
            Self::Timeout { waited } => write!(f, "the chain did not complete within {waited:?}"),
            Self::Mismatch { buffer, index, expected, found } => {
                write!(f, "verification failed: {buffer}[{index}] is {found}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for DemoError {}

impl From<HsaError> for DemoError {
    fn from(error: HsaError) -> Self {
        Self::Hsa(error)
    }
}

struct Queue {
    raw: *mut hsa_queue_t,
    ring: AqlRing,
}

fn dispatch(kernel: &KernelSymbol, kernarg: u64, completion: hsa_signal_t) -> KernelDispatchPacket {
    kernel.dispatch_1d(ELEMENTS, WORKGROUP, kernarg, completion)
}

/// Runs `handoffs` saxpy steps alternating over `queues` queues and checks every element.
pub fn run(handoffs: u32, queues: u32) -> Result<DemoReport, DemoError> {
    if queues == 0 || handoffs == 0 {
        return Err(DemoError::Setup("queues and handoffs must be at least 1".into()));
    }
    aqueduct_hsa::soft::register_kernels(&DEMO_CPU_KERNELS);
    let hsa = Hsa::soft(SoftConfig::default())?;
    let agent = *hsa.agents()?.first().ok_or_else(|| DemoError::Setup("the soft runtime has no agents".into()))?;
    let agent_name = hsa.isa_names(agent)?.join(", ");
    let pools = hsa.pools(agent)?;
    let pool = |kind| pools.iter().find(|pool| pool.kind == kind).map(|pool| pool.pool);
    let (device, kernarg_pool) = match (pool(PoolKindInfo::CoarseGrained), pool(PoolKindInfo::Kernarg)) {
        (Some(device), Some(kernarg)) => (device, kernarg),
        _ => return Err(DemoError::Setup("the agent lacks a device-local or kernarg pool".into())),
    };
    let executable = hsa.load_executable(agent, DEMO_CODE_OBJECT)?;
    let iota_kernel = hsa.kernel_symbol(executable, agent, "iota.kd")?;
    let saxpy_kernel = hsa.kernel_symbol(executable, agent, "saxpy.kd")?;

    let bytes = ELEMENTS as usize * 4;
    let (indices, x, y) = (hsa.allocate(device, bytes)?, hsa.allocate(device, bytes)?, hsa.allocate(device, bytes)?);
    // SAFETY: soft device memory is host memory; `x` holds ELEMENTS floats and nothing else uses it yet.
    let x_values = unsafe { core::slice::from_raw_parts_mut(x.cast::<f32>(), ELEMENTS as usize) };
    for (index, value) in x_values.iter_mut().enumerate() {
        *value = (index % 7) as f32;
    }
    let kernargs = |bytes: &[u8]| -> Result<u64, HsaError> {
        let memory = hsa.allocate(kernarg_pool, 64)?;
        // SAFETY: a fresh 4 KiB kernarg allocation holds the ≤ 24 bytes written here.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), memory, bytes.len()) };
        Ok(memory as u64)
    };
    let iota_args = kernargs(&[(indices as u64).to_le_bytes().as_slice(), &100u32.to_le_bytes(), &ELEMENTS.to_le_bytes()].concat())?;
    let saxpy_args = kernargs(&[(y as u64).to_le_bytes().as_slice(), &(x as u64).to_le_bytes(), &1.0f32.to_le_bytes(), &ELEMENTS.to_le_bytes()].concat())?;

    let mut rings = Vec::with_capacity(queues as usize);
    for _ in 0..queues {
        // SAFETY: no callback, so the null data pointer is never used.
        let raw = unsafe { hsa.queue_create(agent, 1024, None, core::ptr::null_mut()) }?;
        // SAFETY: the queue stays alive until it is destroyed at the end of this function.
        rings.push(Queue { raw, ring: unsafe { AqlRing::new(raw) } });
    }
    let signals = (0..=handoffs).map(|_| hsa.signal_create(1)).collect::<Result<Vec<_>, _>>()?;

    let started = Instant::now();
    let header = |kind| PacketHeader::new(kind, true, FenceScope::System, FenceScope::System);
    // Step 0: iota on queue 0.
    let first = reserve(&rings[0].ring, 1);
    // SAFETY: `first` was reserved above and is published once.
    unsafe { rings[0].ring.write_and_publish(first, &dispatch(&iota_kernel, iota_args, signals[0]), header(PacketType::KernelDispatch), 1) };
    rings[0].ring.ring_doorbell(first);
    let mut packets_per_queue = vec![1u64; 1];
    packets_per_queue.resize(queues as usize, 0);
    for step in 1..=handoffs as usize {
        let queue = &rings[step % queues as usize].ring;
        let wait = BarrierAndPacket { dep_signal: [signals[step - 1].handle, 0, 0, 0, 0], ..Default::default() };
        let id = reserve(queue, 2);
        // SAFETY: ids `id` and `id + 1` were reserved above; each is published once, in order.
        unsafe {
            queue.write_and_publish(id, &wait, header(PacketType::BarrierAnd), 0);
            queue.write_and_publish(id + 1, &dispatch(&saxpy_kernel, saxpy_args, signals[step]), header(PacketType::KernelDispatch), 1);
        }
        queue.ring_doorbell(id + 1);
        packets_per_queue[step % queues as usize] += 2;
    }
    let submit_time = started.elapsed();
    let last = signals[handoffs as usize];
    let timeout = Duration::from_secs(60);
    // SAFETY: table call on a live signal; the timeout is in ns ticks on the soft runtime.
    let value = unsafe { (hsa.api().hsa_signal_wait_scacquire)(last, 0, 0, timeout.as_nanos() as u64, 0) };
    let end_to_end = started.elapsed();
    if value != 0 {
        return Err(DemoError::Timeout { waited: timeout });
    }

    // SAFETY: all packets retired (the last signal reached 0 and the chain is ordered).
    let (indices, y) = unsafe {
        (core::slice::from_raw_parts(indices.cast::<u32>(), ELEMENTS as usize), core::slice::from_raw_parts(y.cast::<f32>(), ELEMENTS as usize))
    };
    for (index, value) in indices.iter().enumerate() {
        if *value != 100 + index as u32 {
            return Err(DemoError::Mismatch { buffer: "iota", index, expected: 100.0 + index as f64, found: f64::from(*value) });
        }
    }
    for (index, value) in y.iter().enumerate() {
        let expected = handoffs as f32 * (index % 7) as f32;
        if *value != expected {
            return Err(DemoError::Mismatch { buffer: "y", index, expected: f64::from(expected), found: f64::from(*value) });
        }
    }
    for queue in &rings {
        // SAFETY: all work retired; nothing uses the queue afterwards.
        unsafe { hsa.queue_destroy(queue.raw)? };
    }
    for signal in signals {
        hsa.signal_destroy(signal)?;
    }
    Ok(DemoReport {
        provider: hsa.kind().name(),
        agent: agent_name,
        queues,
        handoffs,
        packets: packets_per_queue.iter().sum(),
        packets_per_queue,
        submit_time,
        end_to_end,
        verified_elements: indices.len() + y.len(),
    })
}

/// Reserves `count` slots, yielding while the ring is full (backpressure).
fn reserve(ring: &AqlRing, count: u64) -> u64 {
    loop {
        if let Some(id) = ring.try_reserve(count) {
            return id;
        }
        std::thread::yield_now();
    }
}
