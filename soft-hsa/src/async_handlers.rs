//! `hsa_amd_signal_async_handler`: callbacks run on one runtime thread when their signal meets its
//! condition, as ROCr runs them on its async-events thread (`Runtime::SetAsyncSignalHandler`);
//! `hsa_amd_async_function`'s functions run once on the same thread.
//!
//! A handler that returns true stays registered and is called again while the condition holds;
//! one that returns false is removed (`hsa_ext_amd.h`). A handler whose signal is destroyed is
//! dropped uncalled. The thread starts with the first registration and ends at `hsa_shut_down`.

use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aqueduct_abi::SignalCondition;

use super::signals::{self, SignalSlot};
use aqueduct_hsa::sys::*;

/// `hsa_amd_signal_handler`.
pub(crate) type SignalHandler = unsafe extern "C" fn(hsa_signal_value_t, *mut c_void) -> bool;

#[derive(Clone, Copy)]
struct Registration {
    id: u64,
    slot: &'static SignalSlot,
    condition: SignalCondition,
    compare: hsa_signal_value_t,
    handler: SignalHandler,
    argument: usize,
}

/// `hsa_amd_async_function`'s work: a callback and its argument, run once.
type AsyncFunction = (unsafe extern "C" fn(*mut c_void), usize);

#[derive(Default)]
struct State {
    next_id: u64,
    registrations: Vec<Registration>,
    functions: Vec<AsyncFunction>,
    thread: Option<std::thread::Thread>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// A registration arrived: the thread's wait ends and it takes a fresh snapshot.
    changed: AtomicBool,
    stop: AtomicBool,
}

/// The runtime's async handlers and the thread that runs them.
#[derive(Default)]
pub(crate) struct AsyncHandlers {
    shared: Arc<Shared>,
}

/// How long the thread waits before it looks again with nothing new registered: a bound, since
/// a destroyed signal wakes no one.
const RECHECK: Duration = Duration::from_millis(50);

impl AsyncHandlers {
    /// Queues `function(argument)` to run once on the handler thread (`hsa_amd_async_function`);
    /// starts the thread on first use.
    pub fn call(&self, function: unsafe extern "C" fn(*mut c_void), argument: usize) -> Result<(), hsa_status_t> {
        let mut state = self.lock_started()?;
        state.functions.push((function, argument));
        self.wake(&state);
        Ok(())
    }

    /// The state, with the thread started.
    fn lock_started(&self) -> Result<std::sync::MutexGuard<'_, State>, hsa_status_t> {
        let mut state = self.shared.state.lock().unwrap_or_else(|poison| poison.into_inner());
        if state.thread.is_none() {
            let shared = self.shared.clone();
            let thread = std::thread::Builder::new()
                .name("soft-async-handlers".into())
                .spawn(move || run(&shared))
                .map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
            state.thread = Some(thread.thread().clone());
        }
        Ok(state)
    }

    fn wake(&self, state: &State) {
        self.shared.changed.store(true, Ordering::Release);
        if let Some(thread) = &state.thread {
            thread.unpark();
        }
    }

    /// Registers a handler; starts the thread on first use. Fails only if no thread can start.
    pub fn register(
        &self,
        slot: &'static SignalSlot,
        condition: SignalCondition,
        compare: hsa_signal_value_t,
        handler: SignalHandler,
        argument: usize,
    ) -> Result<(), hsa_status_t> {
        let mut state = self.lock_started()?;
        state.next_id += 1;
        let id = state.next_id;
        state.registrations.push(Registration { id, slot, condition, compare, handler, argument });
        self.wake(&state);
        Ok(())
    }

    /// Stops the thread (`hsa_shut_down`); registrations are dropped uncalled.
    pub fn shut_down(&self) {
        self.shared.stop.store(true, Ordering::Release);
        let mut state = self.shared.state.lock().unwrap_or_else(|poison| poison.into_inner());
        state.registrations.clear();
        state.functions.clear();
        if let Some(thread) = &state.thread {
            thread.unpark();
        }
    }
}

fn run(shared: &Shared) {
    while !shared.stop.load(Ordering::Acquire) {
        shared.changed.store(false, Ordering::Release);
        let (snapshot, functions) = {
            let mut state = shared.state.lock().unwrap_or_else(|poison| poison.into_inner());
            state.registrations.retain(|registration| registration.slot.is_live());
            (state.registrations.clone(), std::mem::take(&mut state.functions))
        };
        for (function, argument) in functions {
            // SAFETY: the client's function with the client's argument, called with no lock held.
            unsafe { function(argument as *mut c_void) };
        }
        if snapshot.is_empty() {
            if !shared.changed.load(Ordering::Acquire) {
                std::thread::park_timeout(RECHECK);
            }
            continue;
        }
        let slots: Vec<&SignalSlot> = snapshot.iter().map(|registration| registration.slot).collect();
        let found = signals::wait_until(
            &slots,
            None,
            |index, value| snapshot[index].condition.holds(value, snapshot[index].compare),
            Some(Instant::now() + RECHECK),
            Duration::ZERO,
            &|| shared.changed.load(Ordering::Acquire) || shared.stop.load(Ordering::Acquire),
        );
        let Some(index) = found else { continue };
        let registration = snapshot[index];
        let value = registration.slot.value().load(Ordering::Acquire);
        // SAFETY: the client's handler with the client's argument, called with no lock held.
        let keep = unsafe { (registration.handler)(value, registration.argument as *mut c_void) };
        if !keep {
            let mut state = shared.state.lock().unwrap_or_else(|poison| poison.into_inner());
            state.registrations.retain(|other| other.id != registration.id);
        }
    }
}
