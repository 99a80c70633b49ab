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
//!
//! A pid read in `/proc` may be given to another process once the one the scan saw exits.
//! So each process found is signalled through a pidfd opened while its start time is
//! still the one the scan read with its pid: not an unrelated process that came after
//! (unless it started within the same clock tick, the start time's unit).
//! Where no pidfd can be opened (a kernel before 5.3, a seccomp filter), kill(2) follows
//! that check, which narrows the window but cannot close it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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

/// Processes found by a scan: each pid with the start time read with it.
type Found = BTreeMap<u32, u64>;

/// Kills `root` and all its descendants, whatever their process groups and sessions.
/// False when no scan of `/proc` saw `root` (not yet reaped, so there to see): `/proc`
/// could not be read (no descriptor left, no `/proc` mounted), and nothing was killed.
pub fn kill_tree(root: u32) -> bool {
    let seen = std::cell::Cell::new(false);
    kill_all(|| {
        let processes = processes();
        seen.set(seen.get() || processes.contains_key(&root));
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for (&pid, &(parent, _)) in &processes {
            children.entry(parent).or_default().push(pid);
        }
        let mut found = Found::new();
        let mut todo = vec![root];
        while let Some(pid) = todo.pop() {
            if let Some(&(_, start)) = processes.get(&pid) {
                found.insert(pid, start);
            }
            for &child in children.get(&pid).into_iter().flatten() {
                if !found.contains_key(&child) {
                    todo.push(child);
                }
            }
        }
        found
    });
    seen.get()
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
            .filter(|&pid| pid != me)
            .filter_map(|pid| Some((pid, start_time(pid).filter(|&t| t >= since)?)))
            .filter(|&(pid, _)| holds(pid, &names))
            .collect()
    });
}

/// Stops what `scan` finds until a scan finds nothing new, then kills them all. Each is
/// opened for one signal at a time and checked again at the kill: a stopped process cannot
/// exit by itself, and a descriptor held for each member until then would run out on a
/// large tree (1024 by default), leaving the rest neither stopped nor killed.
fn kill_all(scan: impl Fn() -> Found) {
    // By pid and start time: a member that exited before it was stopped may leave its pid
    // to a new one, which is another process to stop.
    let mut stopped: BTreeSet<(u32, u64)> = BTreeSet::new();
    for _ in 0..ROUNDS {
        let found = scan();
        let new: Vec<(u32, u64)> = (found.into_iter())
            .filter(|member| !stopped.contains(member))
            .collect();
        if new.is_empty() {
            break;
        }
        for (pid, start) in new {
            if let Some(t) = Target::open(pid, start) {
                t.signal(libc::SIGSTOP);
            }
            stopped.insert((pid, start));
        }
    }
    for &(pid, start) in &stopped {
        if let Some(t) = Target::open(pid, start) {
            t.signal(libc::SIGKILL);
        }
    }
}

/// One process to signal: the one with this pid that started at the time a scan read.
#[derive(Debug)]
struct Target {
    pid: libc::pid_t,
    /// A pidfd of it, which keeps naming it after it exits; None where pidfd_open fails
    /// (kernels before 5.3, seccomp filters that refuse it).
    fd: Option<OwnedFd>,
}

impl Target {
    /// The process `pid` if it is still the one that started at `start`; None if it has
    /// exited, or its pid went to another process since.
    fn open(pid: u32, start: u64) -> Option<Target> {
        let pid = libc::pid_t::try_from(pid).ok().filter(|&p| p > 0)?;
        // SAFETY: pidfd_open(2) takes two integers and returns a new descriptor or -1.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = if raw >= 0 {
            let raw = libc::c_int::try_from(raw).ok()?;
            // SAFETY: the descriptor was just returned by pidfd_open and is owned by no one.
            Some(unsafe { OwnedFd::from_raw_fd(raw) })
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            return None;
        } else {
            // No pidfd to be had (a kernel before 5.3, a seccomp filter refusing the call):
            // kill(2) on the pid, once its start time is checked below.
            None
        };
        // Opened first, checked after: the pidfd names the process that had the pid then,
        // and the start time says whether that is the one the scan saw.
        (crate::leftover::start_time(pid) == Some(start)).then_some(Target { pid, fd })
    }

    fn signal(&self, sig: libc::c_int) {
        match &self.fd {
            // SAFETY: pidfd_send_signal(2) on a descriptor this value owns; no memory is
            // passed (the siginfo pointer is null).
            Some(fd) => unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd.as_raw_fd(),
                    sig,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
            },
            // SAFETY: kill(2) on one process; no memory is touched.
            None => unsafe {
                libc::kill(self.pid, sig);
            },
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

/// Each process's parent id and start time, from `/proc/PID/stat`.
fn processes() -> HashMap<u32, (u32, u64)> {
    pids()
        .filter_map(|pid| Some((pid, parent_and_start(pid)?)))
        .collect()
}

/// The parent id of `pid` and when it started, from one read of `/proc/PID/stat`.
fn parent_and_start(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let stat = String::from_utf8_lossy(&stat);
    Some((
        crate::leftover::stat_field(&stat, 4)?,
        crate::leftover::stat_field(&stat, 22)?,
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt as _;

    /// A `sleep 30` child, its pid and start time.
    fn sleeping() -> (std::process::Child, u32, u64) {
        let child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("start sleep");
        let pid = child.id();
        let start = start_time(pid).expect("the child's start time");
        (child, pid, start)
    }

    #[test]
    fn a_process_is_signalled_only_while_it_started_when_the_scan_read() {
        let (mut child, pid, start) = sleeping();
        // Another start time is another process that had the pid: left alone.
        assert!(Target::open(pid, start + 1).is_none());
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child was signalled"
        );
        let target = Target::open(pid, start).expect("the child, as the scan saw it");
        target.signal(libc::SIGKILL);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Gone (reaped): no process to open, whatever the start time.
        assert!(Target::open(pid, start).is_none());
    }

    /// pidfd_open refused by a seccomp filter (as container runtimes' profiles from before
    /// pidfd_open refuse it, with EPERM) left the process unsignalled, where kill(2) still
    /// reaches it: only ENOSYS fell back to it. Run in a thread of its own, as each test is:
    /// the filter is the thread's.
    #[test]
    fn a_process_is_signalled_where_pidfd_open_is_refused() {
        let (mut child, pid, start) = sleeping();
        let nr = u32::try_from(libc::SYS_pidfd_open).unwrap();
        let errno = u32::try_from(libc::EPERM).unwrap();
        let filter = [
            // The syscall number, at offset 0 of struct seccomp_data.
            bpf(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, 0),
            bpf(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 1, nr),
            bpf(
                libc::BPF_RET | libc::BPF_K,
                0,
                0,
                libc::SECCOMP_RET_ERRNO | errno,
            ),
            bpf(libc::BPF_RET | libc::BPF_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        ];
        let prog = libc::sock_fprog {
            len: u16::try_from(filter.len()).unwrap(),
            filter: filter.as_ptr().cast_mut(),
        };
        // SAFETY: prctl(2) reads the filter program, which outlives the call.
        let filtered = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) == 0
        };
        if !filtered {
            // A kernel without seccomp filters, or a sandbox refusing them: nothing to test.
            eprintln!("no seccomp filter: {}", std::io::Error::last_os_error());
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        let target = Target::open(pid, start);
        if let Some(t) = &target {
            t.signal(libc::SIGKILL);
        } else {
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        assert!(target.is_some(), "not opened where pidfd_open is refused");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    fn bpf(code: u32, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code: u16::try_from(code).unwrap(),
            jt,
            jf,
            k,
        }
    }

    /// Each process found held a pidfd from its stop to the kill, so a tree larger than the
    /// descriptors left (1024 by default) ran out of them: past that, pidfd_open failed and
    /// the rest were neither stopped nor killed, and kept forking. Run in a process of its
    /// own, since the descriptor limit is the whole process's.
    #[test]
    fn a_tree_larger_than_the_descriptors_left_is_killed_whole() {
        const CHILD: &str = "HOOKPACK_TEST_STRAYS_FEW_FDS";
        let name = "run::strays::tests::a_tree_larger_than_the_descriptors_left_is_killed_whole";
        if std::env::var_os(CHILD).is_none() {
            let o = std::process::Command::new(std::env::current_exe().unwrap())
                .args([name, "--exact", "--test-threads=1", "--nocapture"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "{out}{}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(out.contains("1 passed"), "{out}");
            return;
        }
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "for i in $(seq 20); do sleep 60 & done; wait"])
            .spawn()
            .expect("start sh");
        let root = shell.id();
        let tree = || -> Vec<(u32, u64)> {
            let all = processes();
            let mut found = vec![];
            let mut todo = vec![root];
            while let Some(pid) = todo.pop() {
                if let Some(&(_, start)) = all.get(&pid) {
                    found.push((pid, start));
                }
                todo.extend(all.iter().filter(|(_, &(p, _))| p == pid).map(|(&c, _)| c));
            }
            found
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while tree().len() < 21 {
            assert!(
                std::time::Instant::now() < deadline,
                "the sleeps did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let members = tree();
        // Room for the scan's own reads and a few descriptors more, not one per process:
        // the limit ROOM above the highest open now, and every free one taken but ROOM.
        // (Made above the highest, not left below it: with only 0, 1 and 2 open, as in CI,
        // the one free below it was the one this read_dir held, and the scan read nothing.)
        const ROOM: usize = 6;
        let highest = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u64>().ok())
            .max()
            .unwrap();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write the one struct given.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
            limit.rlim_cur = highest + 1 + ROOM as u64;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
        let mut filler: Vec<std::fs::File> =
            std::iter::from_fn(|| std::fs::File::open("/dev/null").ok()).collect();
        assert!(filler.len() >= ROOM, "{} descriptors taken", filler.len());
        // With none left, `/proc` cannot be read: nothing is found, and that is said.
        let seen = kill_tree(root);
        filler.truncate(filler.len() - ROOM);
        // (Checked once there is room to read `/proc` again; a failure must not leave the
        // tree running.)
        let untouched = (members.iter()).all(|&(pid, start)| start_time(pid) == Some(start));
        if seen || !untouched {
            for &(pid, _) in &members {
                // SAFETY: kill(2) on the shell and sleeps this test started.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        }
        assert!(!seen, "a tree found with no descriptor left");
        assert!(untouched, "a process was signalled with no descriptor left");
        assert!(members.len() > ROOM, "a tree no larger than the room left");
        assert!(kill_tree(root), "the tree was not found");
        drop(filler);
        let alive = |&&(pid, start): &&(u32, u64)| {
            parent_and_start(pid).is_some_and(|(_, s)| s == start)
                && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, f)| f.trim_start().starts_with('Z'))
                })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while members.iter().any(|m| alive(&m)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let left: Vec<_> = members.iter().filter(alive).collect();
        for &&(pid, _) in &left {
            // SAFETY: kill(2) on a sleep this test started; no memory is touched.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        // Waited for only now: a shell stopped and never killed would not end till then.
        let status = shell.wait().unwrap();
        assert!(left.is_empty(), "left running: {left:?}");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
