//! Who made a staging folder or temporary file, as its name says, and whether that process
//! still runs: what tells a crash's leftover, which the next command removes, from the
//! work of a command under way, which it must leave alone.
//!
//! A pid alone cannot tell: once its process is gone, the number goes to another one, and a
//! leftover named for it would pass for live for as long as that one runs. So on Linux the
//! name also holds the maker's start time (field 22 of `/proc/<pid>/stat`, clock ticks
//! since boot), `<pid>-<start>-…`, and a process of that pid that started at another time
//! is not its maker. Where `/proc` cannot tell (another system, or a `/proc` of another pid
//! namespace), names are `<pid>-…` as older versions wrote them, and those are judged by
//! the pid alone, as they were.

use std::sync::OnceLock;

/// The process named at the start of a leftover's name (after its prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Maker {
    /// Its pid.
    pub pid: i32,
    /// When it started, in clock ticks since boot; None in a name without it.
    pub start: Option<u64>,
}

impl Maker {
    /// What this process puts after a prefix in the names of what it makes, before a `-`:
    /// `<pid>-<start>`, or `<pid>` where its start time cannot be read.
    pub fn tag() -> &'static str {
        static TAG: OnceLock<String> = OnceLock::new();
        TAG.get_or_init(|| {
            let pid = std::process::id();
            match own_start_time() {
                Some(start) => format!("{pid}-{start}"),
                None => pid.to_string(),
            }
        })
    }

    /// The maker named at the start of `rest` (a name after its prefix): `<pid>-<start>-…`
    /// or `<pid>-…` (tempfile's random part holds no `-`). None when `rest` starts
    /// otherwise: not a name hookpack gives.
    pub fn of(rest: &str) -> Option<Maker> {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (pid, rest) = rest.split_once('-').filter(|(pid, _)| digits(pid))?;
        let start = rest
            .split_once('-')
            .filter(|(start, _)| digits(start))
            .and_then(|(start, _)| start.parse().ok());
        Some(Maker {
            pid: pid.parse().ok()?,
            start,
        })
    }

    /// Whether the maker may still run: a process of its pid runs (one of another user
    /// counts) and, where both its name and `/proc` tell when it started, started then.
    /// A pid of 0 names no single process, so it is taken for running (left alone).
    pub fn alive(&self) -> bool {
        if self.pid <= 0 {
            return true;
        }
        if !process_alive(self.pid) {
            return false;
        }
        match (self.start, start_time(self.pid)) {
            (Some(made), Some(now)) => made == now,
            _ => true,
        }
    }
}

/// Whether a process of this pid runs (or may: one of another user counts as running).
fn process_alive(pid: i32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// When the process `pid` started, in clock ticks since boot, from `/proc/<pid>/stat`
/// (of two processes, the one started later has the greater number, or within one tick
/// the same); None where that cannot be read.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    proc_stat_field(pid, 22)
}

/// The start time of `pid` while it runs: `None` once it has ended, even before it is
/// reaped (a zombie keeps its `/proc` entry and start time).
pub(crate) fn running_since(pid: i32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let stat = String::from_utf8_lossy(&stat);
    let state: String = stat_field(&stat, 3)?;
    (!matches!(state.as_str(), "Z" | "X" | "x"))
        .then(|| stat_field(&stat, 22))
        .flatten()
}

/// Field `n` (counted from 1, as proc(5) does) of `/proc/<pid>/stat`.
pub(crate) fn proc_stat_field<T: std::str::FromStr>(pid: i32, n: usize) -> Option<T> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&String::from_utf8_lossy(&stat), n)
}

/// This process's start time, from `/proc/self/stat`, when that file is of this process's
/// pid namespace (its pid is the one this process has): else others could not read it at
/// `/proc/<pid>`.
fn own_start_time() -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let pid = stat.split_once(' ')?.0;
    (pid == std::process::id().to_string())
        .then(|| stat_field(&stat, 22))
        .flatten()
}

/// Field `n` (from 1) of a `/proc/<pid>/stat` line. The command name, the second, is in
/// parentheses and may itself hold `)` and blanks, so the fields from the third on are
/// counted after the last `)`.
pub(crate) fn stat_field<T: std::str::FromStr>(stat: &str, n: usize) -> Option<T> {
    let (_, fields) = stat.rsplit_once(')')?;
    fields
        .split_whitespace()
        .nth(n.checked_sub(3)?)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that has ended but is not reaped yet (a zombie) keeps its `/proc` entry
    /// and start time; the async watchdog must see it as ended (found by review).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_is_not_running() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // Not reaped: `try_wait` would reap it.
        while proc_stat_field::<String>(pid, 3).as_deref() != Some("Z") {
            assert!(std::time::Instant::now() < deadline, "`true` never ended");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(start_time(pid).is_some());
        assert_eq!(running_since(pid), None);
        child.wait().unwrap();
        let me = std::process::id() as i32;
        assert_eq!(running_since(me), start_time(me));
    }

    #[test]
    fn a_maker_is_read_from_both_forms_of_name_and_nothing_else() {
        let m = |pid, start| Some(Maker { pid, start });
        for (rest, want) in [
            ("123-4567-AbC9xz", m(123, Some(4567))),
            ("123-AbC9xz", m(123, None)),
            ("123-456789", m(123, None)),
            ("999999-leftover", m(999999, None)),
            ("123-99999999999999999999999-x", m(123, None)),
            ("123", None),
            ("-123-x", None),
            ("+123-x", None),
            ("12a-x", None),
            ("99999999999-x", None),
            ("mine", None),
        ] {
            assert_eq!(Maker::of(rest), want, "{rest}");
        }
    }

    #[test]
    fn the_start_time_is_field_22_after_the_command_name() {
        let stat = "4242 (a) b (c) 1 2) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    987654 2203648 200 18446744073709551615";
        assert_eq!(stat_field::<u64>(stat, 22), Some(987654));
        assert_eq!(stat_field::<u64>(stat, 4), Some(1));
        assert_eq!(stat_field::<u64>("4242 (x) S 1 2", 22), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_its_own_leftovers_maker() {
        let tag = Maker::tag();
        let me = Maker::of(&format!("{tag}-x")).unwrap();
        assert_eq!(me.pid as u32, std::process::id());
        assert!(me.start.is_some(), "{tag}");
        assert!(me.alive());
        let before = Maker {
            start: me.start.map(|s| s - 1),
            ..me
        };
        assert!(!before.alive());
        let unknown = Maker { start: None, ..me };
        assert!(unknown.alive());
    }
}
