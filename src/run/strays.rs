//! Processes a handler started out of reach of its process group (Linux: read from
//! `/proc`).
//!
//! A process that moved to a session of its own is not hit by the group kill. At a
//! handler's timeout its whole tree of descendants goes, whatever their groups; at the
//! deadline, so does every process started since the handler that still holds one of its
//! pipes (it got that pipe from the handler, even if the process between them has exited
//! since). One older than the handler did not come from it, though it may hold a pipe the
//! handler handed it over a socket (as an ssh client hands its stdio to a ControlMaster
//! the user started earlier): it is left alone. Each set is stopped first, so none of
//! them can fork a process the scan has not seen, and killed once no new member turns up.
//! Out of reach still: a process that left the tree (its parent exited) and holds none of
//! the pipes.

use std::collections::{BTreeSet, HashMap};
use std::os::fd::AsRawFd;

/// Rounds of scanning for new members before the set found so far is killed: each round
/// stops the members it found, and a stopped process forks no more.
const ROUNDS: usize = 8;

/// The inode of the pipe behind `fd` (both ends of a pipe share it).
pub fn pipe_inode(fd: &impl AsRawFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()
        .map(|m| m.ino())
}

/// Kills `root` and all its descendants, whatever their process groups and sessions.
pub fn kill_tree(root: u32) {
    kill_all(|| {
        let children = children();
        let mut found = BTreeSet::from([root]);
        let mut todo = vec![root];
        while let Some(pid) = todo.pop() {
            for &child in children.get(&pid).into_iter().flatten() {
                if found.insert(child) {
                    todo.push(child);
                }
            }
        }
        found
    });
}

/// Kills every other process started at `since` (a [`start_time`]) or later that holds
/// an end of one of the pipes with these inodes.
pub fn kill_holders(inodes: &[u64], since: u64) {
    if inodes.is_empty() {
        return;
    }
    let names: Vec<String> = inodes.iter().map(|i| format!("pipe:[{i}]")).collect();
    let me = std::process::id();
    kill_all(|| {
        pids()
            .filter(|&pid| {
                pid != me && start_time(pid).is_some_and(|t| t >= since) && holds(pid, &names)
            })
            .collect()
    });
}

/// Stops what `scan` finds until a scan finds nothing new, then kills them all.
fn kill_all(scan: impl Fn() -> BTreeSet<u32>) {
    let mut stopped = BTreeSet::new();
    for _ in 0..ROUNDS {
        let new: Vec<u32> = scan().difference(&stopped).copied().collect();
        if new.is_empty() {
            break;
        }
        for pid in new {
            signal(pid, libc::SIGSTOP);
            stopped.insert(pid);
        }
    }
    for &pid in &stopped {
        signal(pid, libc::SIGKILL);
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid > 0 {
        // SAFETY: kill(2) on one process; no memory is touched.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// The ids of all processes this one can see.
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

/// Each process's children, from the parent id in `/proc/PID/stat`.
fn children() -> HashMap<u32, Vec<u32>> {
    let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
    for pid in pids() {
        if let Some(parent) = parent(pid) {
            map.entry(parent).or_default().push(pid);
        }
    }
    map
}

/// The parent id of `pid`.
fn parent(pid: u32) -> Option<u32> {
    crate::leftover::proc_stat_field(i32::try_from(pid).ok()?, 4)
}

/// When `pid` started (see [`crate::leftover::start_time`]).
pub fn start_time(pid: u32) -> Option<u64> {
    crate::leftover::start_time(i32::try_from(pid).ok()?)
}

/// True when one of `pid`'s open files is one of the pipes named (as `/proc` links name
/// them: `pipe:[INODE]`). Another user's process cannot be read, and counts as not.
fn holds(pid: u32, names: &[String]) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .ok()
            .and_then(|target| target.to_str().map(|t| names.iter().any(|n| n == t)))
            .unwrap_or(false)
    })
}
