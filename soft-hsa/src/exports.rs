//! Every soft entry point as the `extern "C"` function that [`SOFT_API`] binds
//! and the drop-in library (`soft-hsa/`) exports, each behind [`guard`].
//!
//! A panic must not unwind out of an `extern "C"` function: Rust aborts the process there, and a
//! C client has no way to recover. So each export catches it, logs it, and returns the HSA
//! failure for its return type ([`AfterPanic`]). Panics are bugs (every input has a status), but
//! a hostile argument that finds one must cost its caller a status, never the process.

#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use aqueduct_hsa::sys::*;

/// What an entry point returns when its body panicked.
pub trait AfterPanic {
    fn after_panic() -> Self;
}

/// `hsa_status_t` (and `hsa_amd_signal_wait_any`'s index, for which any value past the signal
/// count means none satisfied): HSA_STATUS_ERROR.
impl AfterPanic for u32 {
    fn after_panic() -> Self {
        status::ERROR
    }
}

/// Queue indices: 0, as for a queue that is not live.
impl AfterPanic for u64 {
    fn after_panic() -> Self {
        0
    }
}

/// Signal values: 0, as for a signal that is not live.
impl AfterPanic for hsa_signal_value_t {
    fn after_panic() -> Self {
        0
    }
}

impl AfterPanic for () {
    fn after_panic() -> Self {}
}

/// Runs an entry point's body; a panic is logged (stderr and `tracing`) and becomes
/// [`AfterPanic::after_panic`]. Used by every export of this crate and of the drop-in.
pub fn guard<R: AfterPanic>(entry_point: &str, body: impl FnOnce() -> R) -> R {
    // The body's state is the runtime's, whose locks recover from poisoning (`into_inner`), so
    // observing it after a caught panic is sound; at worst it reports an error later.
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        eprintln!("aqueduct soft runtime: {entry_point} panicked ({message}); it returns an error instead");
        tracing::error!(entry_point, %message, "soft runtime entry point panicked");
        R::after_panic()
    })
}

macro_rules! guarded_entry_points {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        guarded_entry_points!(@in entry; $( fn $name($($arg: $ty),*) -> $ret; )*);
    };
    (@in $module:ident; $( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {$(
        #[doc = concat!("`", stringify!($name), "`, behind [`guard`].")]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            // SAFETY: forwarded: the caller keeps the C function's contract.
            guard(stringify!($name), || unsafe { super::$module::$name($($arg),*) })
        }
    )*};
}

/// The drop-in's own entry points (`drop_in.rs`), guarded the same way.
macro_rules! guarded_drop_in_entry_points {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        guarded_entry_points!(@in drop_in; $( fn $name($($arg: $ty),*) -> $ret; )*);
    };
}

aqueduct_hsa::with_hsa_entry_points!(guarded_entry_points);
crate::with_drop_in_entry_points!(guarded_drop_in_entry_points);

/// The soft binding of the table: each entry point is the guarded export above.
macro_rules! soft_table {
    ($( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        /// The soft runtime's implementation of every entry point: the table the embedded
        /// provider ([`crate::open`]) hands the engine.
        pub static SOFT_API: HsaApi = HsaApi { $( $name, )* };
    };
}

aqueduct_hsa::with_hsa_entry_points!(soft_table);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_failure_of_its_return_type() {
        assert_eq!(guard("test_status", || -> hsa_status_t { panic!("boom") }), status::ERROR);
        assert_eq!(guard("test_index", || -> u64 { panic!("{}", String::from("boom")) }), 0);
        assert_eq!(guard("test_value", || -> hsa_signal_value_t { panic!("boom") }), 0);
        let unit: fn() = || panic!("boom");
        guard("test_unit", unit);
        assert_eq!(guard("test_fine", || status::SUCCESS), status::SUCCESS, "no panic, the body's value");
    }
}
