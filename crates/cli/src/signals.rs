//! Ctrl-C (SIGINT) and SIGTERM for the commands that run long: `check`
//! and `hw run` catch them, finish what they can and report.
//!
//! The handler only records the signal (an atomic swap); a second signal
//! ends the process at once (`_exit`, async-signal-safe). `check` passes
//! [`CANCEL`] to every search (`SearchOptions::cancel`), which stops with
//! `stop: interrupted` at its next look at its budget, keeping its
//! findings, so the report of every test is printed before the exit
//! (128 + the signal, the shell's convention). `hw run` polls
//! [`interrupted`] and ends the process groups it started.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signal that interrupted the run, 0 while none has.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Set with [`SIGNAL`]: the searches' cancel flag.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

/// The handler of SIGINT and SIGTERM: records the signal; a second one
/// ends the process at once.
extern "C" fn on_interrupt(sig: libc::c_int) {
    CANCEL.store(true, Ordering::SeqCst);
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: _exit(2) is async-signal-safe and takes an integer.
        unsafe { libc::_exit(128 + sig) }
    }
}

/// Catches SIGINT and SIGTERM for the rest of the process, leaving a
/// signal ignored at start (`nohup`, a background job) ignored.
pub fn catch_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: signal(2) with a handler that only touches atomics and
        // calls `_exit`; the previous disposition is a plain value.
        unsafe {
            let handler: extern "C" fn(libc::c_int) = on_interrupt;
            if libc::signal(sig, handler as libc::sighandler_t) == libc::SIG_IGN {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
    }
}

/// The signal that interrupted the run, if one has.
pub fn interrupted() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}
