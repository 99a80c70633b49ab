//! Handlers running when `run` or `test` is interrupted (Ctrl-C, SIGTERM, SIGHUP).
//!
//! Each handler runs in a process group of its own, which a terminal's Ctrl-C does not
//! reach: without this, an interrupted `run` left its handler running. While a handler
//! runs, its group is registered here, and a signal is only recorded: the thread waiting
//! for the handler sees it within its polling slice and goes on as at a timeout (killing
//! the handler's whole tree, what it started in other sessions too, then its group; a
//! group killed from the signal handler would orphan those first), so the command returns
//! [`crate::error::Error::Interrupted`] once the handler is reaped, its temporary folders
//! are removed on the way out, and [`reraise`] ends the process by the same signal. A
//! signal while no handler runs ends the process at once, unless the command [`defer`]s
//! it (`test`, between its handlers, with temporary folders to remove): then it is only
//! recorded, and the command stops at its next [`crate::run::check_interrupted`]. A second
//! signal ends the process at once; one the process was started ignoring (nohup, a
//! background job) stays ignored.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Once;

/// How many handlers may run at once and still be killed on a signal (one at a time is
/// what `run` and `test` do).
const SLOTS: usize = 16;

/// The process groups of the handlers running now; 0 is a free slot.
static RUNNING: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// The signal that interrupted the command; 0 until one did.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();
/// Whether the signal found a handler running, and it was killed.
static KILLED: AtomicBool = AtomicBool::new(false);
/// How many [`Deferred`] are held: while any is, a first signal with no handler running is
/// only recorded.
static DEFERRING: AtomicUsize = AtomicUsize::new(0);

/// The signals that interrupt a command.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A running handler's process group: while this is held, a first signal is left to the
/// thread waiting for the handler, which kills it. Drop it before the handler is reaped.
pub struct Guard(Option<usize>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            RUNNING[i].store(0, Ordering::SeqCst);
        }
    }
}

/// While held, a first signal that finds no handler running is recorded, not acted on:
/// the command checks for it between handlers and stops there, removing its temporary
/// folders. Hold it only where the command reaches such a check soon (no blocking read).
pub struct Deferred(());

impl Drop for Deferred {
    fn drop(&mut self) {
        DEFERRING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Defers a signal that finds no handler running until [`Deferred`] is dropped (see there).
pub fn defer() -> Deferred {
    install();
    DEFERRING.fetch_add(1, Ordering::SeqCst);
    Deferred(())
}

/// Installs the signal handlers, once; call before the first handler starts.
pub fn install() {
    INSTALL.call_once(install_handlers);
}

/// Registers the process group `pgid` of a handler that is running now (its leader's pid,
/// not yet reaped).
pub fn guard(pgid: u32) -> Guard {
    install();
    let Some(pgid) = i32::try_from(pgid).ok().filter(|&p| p > 0) else {
        return Guard(None);
    };
    let free = RUNNING.iter().position(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    Guard(free)
}

/// The signal that interrupted the command, if one did.
pub fn interrupted() -> Option<i32> {
    Some(SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// Whether the interrupt killed a running handler (else it came between handlers).
pub fn killed() -> bool {
    KILLED.load(Ordering::SeqCst)
}

/// Records that a handler was killed because of the interrupt: one that started just as a
/// deferred signal came, before its group was registered, is killed by the thread waiting
/// for it instead.
pub fn note_killed() {
    KILLED.store(true, Ordering::SeqCst);
}

/// Ends the process by the signal that interrupted the command (as it would have ended
/// without hookpack's handling), if one did; returns otherwise.
pub fn reraise() {
    if let Some(sig) = interrupted() {
        // SAFETY: signal(2) restores the default disposition, and raise(3) sends the
        // signal to this process; no memory is touched.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// The signal's name, for messages.
pub fn name(sig: i32) -> &'static str {
    known_name(sig).unwrap_or("a signal")
}

/// The name of a signal POSIX (or Linux) names: those that end a process by default, and
/// the others, since a handler may be sent any.
pub fn known_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGSTKFLT => "SIGSTKFLT",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGPWR => "SIGPWR",
        _ => return None,
    })
}

fn install_handlers() {
    for sig in SIGNALS {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: signal(2) installs `on_signal`, which only does async-signal-safe work
        // (atomics, kill, signal, raise). A signal this process was started ignoring (as
        // under nohup) stays ignored.
        unsafe {
            if libc::signal(sig, handler) == libc::SIG_IGN {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Recorded for the thread waiting for a handler; a second signal (or one while no
    // handler runs, unless deferred) ends the process at once.
    let first = SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    // A running handler is not killed here: the thread waiting for it sees the signal
    // within its polling slice and kills it as at a timeout, its whole tree first. Killing
    // its group here would orphan what it started in other sessions before that tree was
    // read, and they would outlive the command.
    let running = first && RUNNING.iter().any(|slot| slot.load(Ordering::SeqCst) > 0);
    let deferred = first && DEFERRING.load(Ordering::SeqCst) > 0;
    if !running && !deferred {
        // A second signal before the waiting thread got to the handler (Ctrl-C twice, a
        // closed terminal's two SIGHUPs): its group at least goes with the command.
        for slot in &RUNNING {
            let pgid = slot.load(Ordering::SeqCst);
            if pgid > 0 {
                // SAFETY: kill(2) on a registered handler's process group, and on its
                // leader, which may have left the group (it is not reaped while
                // registered, so the pid is still its own).
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                    libc::kill(pgid, libc::SIGKILL);
                }
            }
        }
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}
