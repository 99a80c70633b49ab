//! Running handlers the way a host does, and reading what they answer (seeds/004).
//!
//! A handler runs as `$SHELL -lc COMMAND` (fallback `/bin/sh`) in its own process group,
//! with the payload on stdin and an environment stripped of secret-shaped names, and only
//! while its trust hash, taken again just before it starts, still matches. A timeout
//! kills the whole group, grandchildren included, and so does the handler's exit: nothing a
//! handler started in its group outlives it. A process it moved to a session of its own is
//! out of reach of that; the handler's pipes are waited for until the timeout only, so such
//! a process cannot hold `run` up, and on Linux it is killed at the timeout if it is still
//! the handler's descendant or, started since the handler, still holds one of its pipes
//! (an older one did not come from the handler). Output is captured up to a
//! cap. A process that ignores SIGCHLD cannot read its handlers' exit codes (the kernel
//! reaps them): the CLI takes the default disposition back first, and a host embedding
//! this must not ignore it.
//!
//! Answers: exit 0 with nothing on stdout is no decision; exit 0 with one JSON object is a
//! decision; text that looks like JSON but does not parse is a failure, and so are a
//! rewrite of the wrong type (a string `updatedInput`) and stdout over [`OUTPUT_CAP`] (a
//! reason of the wrong type, or a rewrite beside a deny, ask or block, is left out with a
//! warning, and the decision stands); exit 2 with stderr blocks on tool and prompt events; anything else
//! is a failure, which denies only under `failurePolicy: deny` on PreToolUse. Combining: a
//! deny wins, and the last non-blocking rewrite wins.

use crate::event::Event;
use serde::Serialize;
use serde_json::Value;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(unix)]
pub mod interrupt;
#[cfg(target_os = "linux")]
mod strays;

/// A signal's name for messages (`SIGINT`).
pub fn signal_name(sig: i32) -> &'static str {
    #[cfg(unix)]
    return interrupt::name(sig);
    #[cfg(not(unix))]
    {
        let _ = sig;
        "a signal"
    }
}

/// How a signal that ended a handler is shown (`SIGSEGV`; `signal 34` for one without a
/// name, such as a real-time signal).
pub fn signal_shown(sig: i32) -> String {
    #[cfg(unix)]
    if let Some(name) = interrupt::known_name(sig) {
        return name.to_string();
    }
    format!("signal {sig}")
}

/// The error to stop with when a signal interrupted the command (its running handlers are
/// killed already).
pub fn check_interrupted() -> Result<(), crate::error::Error> {
    #[cfg(unix)]
    if let Some(signal) = interrupt::interrupted() {
        return Err(crate::error::Error::Interrupted {
            signal,
            killed: interrupt::killed(),
        });
    }
    Ok(())
}

/// Whether a signal came while `pack` or `assemble` (writing `out`) deferred it (see
/// [`interrupt::defer`]): then [`Error::StoppedBeforeCommit`](crate::error::Error). Called
/// where stopping leaves `out` as it was.
pub fn check_stopped(out: &std::path::Path) -> Result<(), crate::error::Error> {
    #[cfg(unix)]
    if let Some(signal) = interrupt::interrupted() {
        return Err(crate::error::Error::StoppedBeforeCommit {
            signal,
            out: out.to_path_buf(),
        });
    }
    let _ = out;
    Ok(())
}

/// `e`, or the error of [`check_stopped`] when a signal came: `e` is then what the stop
/// made of the work (a wait for a lock given up, a file read cut short).
pub fn stopped_or(e: crate::error::Error, out: &std::path::Path) -> crate::error::Error {
    check_stopped(out).err().unwrap_or(e)
}

/// Most bytes of stdout or stderr kept from one handler.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// Longest `command` a handler may have, in bytes: hosts pass it as one argument of
/// `$SHELL -lc COMMAND`, and Linux refuses to start a program given an argument of more
/// than `MAX_ARG_STRLEN` (32 pages of 4 KiB, 131072 bytes) with its terminating NUL.
pub const MAX_COMMAND_BYTES: usize = 32 * 4096 - 1;

/// Longest a handler is waited for, about a century: any whole number of seconds is a
/// valid `timeout`, and one near `u64::MAX` would overflow the clock.
const MAX_WAIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// True for environment variable names that look like credentials; hosts strip these.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if n.starts_with("FINCLAW_HOOK_") {
        // The documented way to hand a judge token to official recipes.
        return false;
    }
    // Read word by word, so that a key numbered or tagged (`OPENAI_API_KEY_2`,
    // `LANGSMITH_API_KEY1`, `SLACK_BOT_TOKEN_PROD`) is one too, and a name that only starts
    // like one (`TOKENIZERS_PARALLELISM`, `MAX_TOKENS`, `SECRETARY`) is not.
    let words: Vec<&str> = n
        .split('_')
        .map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit()))
        .filter(|w| !w.is_empty())
        .collect();
    const ALONE: [&str; 11] = [
        "APIKEY",
        "SECRET",
        "SECRETS",
        "CREDENTIALS",
        "TOKEN",
        "AUTHTOKEN",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "PAT",
    ];
    const PAIRS: [[&str; 2]; 3] = [["API", "KEY"], ["PRIVATE", "KEY"], ["ACCESS", "KEY"]];
    // A key named after what it unlocks (`AZURE_OPENAI_KEY`, `LLM_KEY`, `STRIPE_KEY`), as
    // a host's configured LLM key names often are: the last of two or more words.
    let named_key = words.len() >= 2 && words.last() == Some(&"KEY");
    words.iter().any(|w| ALONE.contains(w))
        || named_key
        || words.windows(2).any(|p| PAIRS.iter().any(|q| p == q))
        || n.starts_with("FINSAFE_LICENSE")
        || matches!(n.as_str(), "PGPASSWORD" | "MYSQL_PWD")
}

/// What one process did.
#[derive(Debug, Clone, Serialize)]
pub struct RawOutput {
    /// Exit code; `None` when killed by a signal (including the timeout).
    pub exit: Option<i32>,
    /// The signal that ended it, if one did (`SIGKILL` at the timeout: hookpack's).
    #[serde(skip)]
    pub signal: Option<i32>,
    /// True when the timeout fired: the handler was killed (`exit` is `None`), or it exited
    /// in time (`exit` is its code) but a process outside its process group
    /// still held its stdin, stdout or stderr open at the deadline.
    pub timed_out: bool,
    /// True when a process holding the handler's stdin, stdout or stderr at the deadline
    /// still held it after `run` tried to kill it (or could not be found, as another
    /// user's process cannot, or was older than the handler, so not from it): it was left
    /// running.
    #[serde(skip)]
    pub left_running: bool,
    /// True when the timeout fired but `/proc` could not be read (Linux: no descriptor
    /// left, no `/proc` mounted), so only the handler's process group was killed: what it
    /// started in other groups or sessions was not looked for.
    #[serde(skip)]
    pub tree_unseen: bool,
    /// Captured stdout: its first [`OUTPUT_CAP`] bytes, and one more if there was more.
    #[serde(skip)]
    pub stdout: Vec<u8>,
    /// Captured stderr, capped as stdout is.
    #[serde(skip)]
    pub stderr: Vec<u8>,
    /// Wall time.
    pub duration: Duration,
}

/// How to spawn one handler.
#[derive(Debug, Clone)]
pub struct Spawn<'a> {
    /// The shell command.
    pub command: &'a str,
    /// Working directory.
    pub cwd: &'a Path,
    /// Bytes for stdin.
    pub stdin: &'a [u8],
    /// Variables to set (after secrets are stripped from the inherited environment).
    pub env: &'a [(String, OsString)],
    /// Kill the group after this long.
    pub timeout: Duration,
}

fn shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty() && Path::new(s).is_file())
        .unwrap_or_else(|| "/bin/sh".into())
}

/// Reads `r` to its end into `into`, keeping the first [`OUTPUT_CAP`] bytes and one more,
/// which tells that there was more (the rest is drained, so the handler never blocks on a
/// full pipe).
fn read_capped(mut r: impl Read, into: &std::sync::Mutex<Vec<u8>>) {
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut out = into.lock().unwrap_or_else(|e| e.into_inner());
                let room = (OUTPUT_CAP + 1).saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn kill_process(pid: u32) {
    // SAFETY: kill(2) on one process; no memory is touched.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

/// Waits up to `timeout` for `child` (whose id is `pid`) to exit, and says whether it did.
/// On Unix the child is not reaped: until `Child::wait`, its pid stays its own, so a kill by
/// that pid or its group's id cannot reach a process that took the number over.
#[cfg(unix)]
fn wait_exited(_child: &mut std::process::Child, pid: u32, timeout: Duration) -> bool {
    // A waiter thread reports the exit at once, so a fast handler costs no polling delay;
    // the timeout is a bounded wait on that report. The thread ends when the handler does
    // (it is killed at the timeout).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        loop {
            // SAFETY: waitid(2) writes only the siginfo_t it is given.
            let r = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break;
            }
        }
        let _ = tx.send(());
    });
    recv_until(&rx, Instant::now() + timeout).is_some()
}

/// The next message on `rx` if one comes before `until` and no signal interrupts the
/// command first: the wait is in short slices, so an interrupt ends it at once, as its
/// deadline would.
fn recv_until<T>(rx: &std::sync::mpsc::Receiver<T>, until: Instant) -> Option<T> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(m) => return Some(m),
            Err(_) if left.is_zero() || check_interrupted().is_err() => return None,
            Err(_) => {}
        }
    }
}

#[cfg(not(unix))]
fn wait_exited(child: &mut std::process::Child, _pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => return false,
            _ => return true,
        }
    }
}

/// `$SHELL -lc COMMAND` in `cwd`, in its own process group, with stdin piped, secret-shaped
/// variables removed and `env` added: how every handler is started.
fn handler_command(command: &str, cwd: &Path, env: &[(String, OsString)]) -> Command {
    let mut cmd = Command::new(shell());
    cmd.arg("-lc").arg(command).current_dir(cwd);
    for (k, _) in std::env::vars_os() {
        if is_secret_name(&k.to_string_lossy()) {
            cmd.env_remove(&k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd
}

/// Runs one handler to completion or timeout.
pub fn spawn(s: &Spawn) -> std::io::Result<RawOutput> {
    let start = Instant::now();
    let mut cmd = handler_command(s.command, s.cwd, s.env);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    interrupt::install();
    let mut child = cmd.spawn()?;
    let pid = child.id();
    // Killed with its group should the command be interrupted.
    #[cfg(unix)]
    let interruptible = interrupt::guard(pid);
    // Read while the handler runs (it is not reaped before the end, so the pid stays its
    // own): a process holding its pipes that is older did not come from it.
    #[cfg(target_os = "linux")]
    let started = strays::start_time(pid);
    #[cfg(target_os = "linux")]
    let pipe_inodes: Vec<u64> = [
        child.stdin.as_ref().and_then(strays::pipe_inode),
        child.stdout.as_ref().and_then(strays::pipe_inode),
        child.stderr.as_ref().and_then(strays::pipe_inode),
    ]
    .into_iter()
    .flatten()
    .collect();
    let timeout = s.timeout.min(MAX_WAIT);
    let deadline = start + timeout;
    // The pipes are served by threads that report when they are done. A process the
    // handler started in a session of its own is out of reach of the group kill and may
    // hold them open for as long as it lives: they are waited for until the deadline only,
    // then (on Linux) the processes holding them are killed.
    let (done, pipes_done) = std::sync::mpsc::channel::<()>();
    let mut pipes = 0;
    let stdin_bytes = s.stdin.to_vec();
    if let Some(mut w) = child.stdin.take() {
        let done = done.clone();
        pipes += 1;
        std::thread::spawn(move || {
            // A handler that ignores stdin closes the pipe early; that is not an error.
            let _ = w.write_all(&stdin_bytes);
            drop(w);
            let _ = done.send(());
        });
    }
    let stdout = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    for (pipe, into) in [
        (
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            &stdout,
        ),
        (
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
            &stderr,
        ),
    ] {
        if let Some(pipe) = pipe {
            let (done, into) = (done.clone(), into.clone());
            pipes += 1;
            std::thread::spawn(move || {
                read_capped(pipe, &into);
                let _ = done.send(());
            });
        }
    }
    let timed_out = !wait_exited(&mut child, pid, timeout);
    // The handler itself first: it may have moved to another process group (that of `run`,
    // say), out of reach of the group kill. On Linux, with everything it started in other
    // groups and sessions, unless `/proc` cannot be read to find them.
    #[cfg(target_os = "linux")]
    let tree_unseen = timed_out && !strays::kill_tree(pid);
    #[cfg(not(target_os = "linux"))]
    let tree_unseen = false;
    if timed_out {
        #[cfg(unix)]
        if interrupt::interrupted().is_some() {
            interrupt::note_killed();
        }
        #[cfg(all(unix, not(target_os = "linux")))]
        kill_process(pid);
        #[cfg(not(unix))]
        let _ = child.kill();
    }
    // Whatever the handler left running (a forked grandchild holding the pipes) goes too,
    // before the handler is reaped: until then its pid, which names the group, is not
    // reused.
    #[cfg(unix)]
    kill_group(pid);
    // Before the reaping frees its group id for another process.
    #[cfg(unix)]
    drop(interruptible);
    let status = child.wait().ok();
    // After a timeout, what the kill closes closes at once; a short grace lets the readers
    // see it.
    let mut closed = 0;
    let mut wait_pipes = |until: Instant| {
        while closed < pipes && recv_until(&pipes_done, until).is_some() {
            closed += 1;
        }
        closed < pipes
    };
    let held_open = wait_pipes(deadline.max(Instant::now() + Duration::from_millis(200)));
    // A process the handler started in a session of its own, still holding a pipe at the
    // deadline (the handler may have exited long ago: it is no descendant any more). Once
    // the last holder is dead, the readers see the pipes close. Without the handler's
    // start time, what came from it is not told apart: nothing is killed.
    #[cfg(target_os = "linux")]
    let left_running = held_open && {
        if let Some(since) = started {
            strays::kill_holders(&pipe_inodes, since);
        }
        wait_pipes(Instant::now() + Duration::from_millis(500))
    };
    #[cfg(not(target_os = "linux"))]
    let left_running = held_open;
    let taken = |b: &std::sync::Mutex<Vec<u8>>| {
        std::mem::take(&mut *b.lock().unwrap_or_else(|e| e.into_inner()))
    };
    Ok(RawOutput {
        exit: status.and_then(|s| s.code()).filter(|_| !timed_out),
        #[cfg(unix)]
        signal: status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
        #[cfg(not(unix))]
        signal: None,
        timed_out: timed_out || held_open,
        left_running,
        tree_unseen,
        stdout: taken(&stdout),
        stderr: taken(&stderr),
        duration: start.elapsed(),
    })
}

/// What one handler decided.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Decision {
    /// `allow`, `deny`, `ask`, `block` or `reject`; `None` for no decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The reason given with the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// PreToolUse rewrite of the tool input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// UserPromptSubmit rewrite of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_prompt: Option<String>,
    /// UserPromptSubmit model route.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_model: Option<String>,
    /// Context added for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// Why the handler counts as failed, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the handler likely meant but is not read so, though it is no failure
    /// (stdout that is JSON after a byte order mark). One handler's only: a combined
    /// outcome has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The warning of a handler whose stdout is JSON after a UTF-8 byte order mark.
pub const BOM_WARNING: &str = "stdout starts with a UTF-8 byte order mark, so it is not read \
     as JSON and gave no decision (a host that strips the mark first would read the answer): \
     write the JSON without the mark (bytes EF BB BF)";

/// A verdict, strongest last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Let it proceed without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Stop reject: the reason replaces the answer.
    Reject,
    /// Exit-2 block (or `decision: block`).
    Block,
    /// Deny the tool call.
    Deny,
}

fn looks_like_json(s: &str) -> bool {
    matches!(s.trim_start().chars().next(), Some('{' | '['))
}

/// The first line of `stdout` (cut short) when text comes before a JSON object that reads
/// as an answer (one with `hookSpecificOutput` or a top-level `decision`) on a later line.
fn answer_after_text(stdout: &str) -> Option<String> {
    let at = stdout.find("\n{")? + 1;
    let v: Value = serde_json::from_str(stdout[at..].trim()).ok()?;
    let answer = v.get("hookSpecificOutput").is_some() || v.get("decision").is_some();
    let first = first_line(stdout.trim_start());
    answer.then(|| first.chars().take(60).collect())
}

/// The string `field` of an answer (named `name`), if any: `null` is taken for no value,
/// and a value of another type is the failure to report, as an unknown
/// `permissionDecision` is (a host reading the answer into typed fields refuses it).
fn str_field(field: Option<&Value>, name: &str) -> Result<Option<String>, String> {
    match field {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "{name} must be a string, found {}; print it as one, or leave it out",
            shown(other)
        )),
    }
}

/// A text that goes with a decision (its reason, added context): one of the wrong type is
/// left out with a `warning` naming it, and the decision stands, since a deny whose reason
/// is a number is still a deny.
fn side_text(warning: &mut Option<String>, field: Option<&Value>, name: &str) -> Option<String> {
    str_field(field, name).unwrap_or_else(|why| {
        add_warning(warning, format!("{why} (left out; the decision stands)"));
        None
    })
}

/// Adds `why` to a handler's warning, after any it has.
fn add_warning(warning: &mut Option<String>, why: String) {
    *warning = Some(match warning.take() {
        Some(w) => format!("{w}; {why}"),
        None => why,
    });
}

/// What an answer holds that hosts do not read on `event`, each with what to write instead
/// where that is clear: a top-level `decision` other than a `"block"` the event honours, a
/// `hookSpecificOutput` field of another event or none, a `hookEventName` of another event.
/// A gate printing `{"decision": "deny"}` (another CLI's shape) denies nothing, and `run`
/// would otherwise say only "no decision".
fn unread_fields(event: Event, obj: &serde_json::Map<String, Value>, hso: &Value) -> Vec<String> {
    let mut unread = Vec::new();
    // The top level holds `hookSpecificOutput` and a Codex-style `decision` and `reason`.
    for key in obj.keys() {
        let hint = match key.as_str() {
            "hookSpecificOutput" | "decision" | "reason" => continue,
            "additionalContext" if event.takes_context() => {
                "; hosts read it as hookSpecificOutput.additionalContext".to_string()
            }
            "continue" | "stopReason" | "systemMessage" | "suppressOutput" => {
                " (a field of other agents' hooks, which this host does not read)".to_string()
            }
            _ => crate::event::did_you_mean(key, &["hookSpecificOutput", "decision", "reason"]),
        };
        unread.push(format!("the top-level \"{key}\" is not read{hint}"));
    }
    let deny_shape = "print {\"hookSpecificOutput\": {\"permissionDecision\": \"deny\"}} \
                      (or \"ask\", \"allow\") to decide on the call";
    match obj.get("decision") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "block" && event.can_block() => {}
        Some(other) => {
            let instead = if event.takes_permission() {
                format!("; {deny_shape}")
            } else if event == Event::Stop {
                "; a Stop reject is {\"hookSpecificOutput\": {\"decision\": \"reject\", \
                 \"reason\": \"…\"}}"
                    .to_string()
            } else {
                String::new()
            };
            let read = match event.can_block() {
                true => format!("hosts read only \"block\" there on {event}"),
                false => format!("{event} cannot be blocked"),
            };
            unread.push(format!(
                "the top-level \"decision\": {} is not read: {read}{instead}",
                shown(other)
            ));
        }
    }
    let Some(fields) = hso.as_object() else {
        return unread;
    };
    let mut known = vec!["hookEventName"];
    if event.takes_context() {
        known.push("additionalContext");
    }
    if event.takes_permission() {
        known.extend([
            "permissionDecision",
            "permissionDecisionReason",
            "updatedInput",
        ]);
    }
    match event {
        Event::UserPromptSubmit => known.extend(["updatedModel", "prompt", "updatedPrompt"]),
        Event::Stop => known.extend(["decision", "reason"]),
        _ => {}
    }
    for key in fields.keys().filter(|k| !known.contains(&k.as_str())) {
        let hint = match key.as_str() {
            "decision" if event.takes_permission() => format!("; {deny_shape}"),
            "reason" if event.takes_permission() => {
                " (did you mean `permissionDecisionReason`?)".to_string()
            }
            _ => crate::event::did_you_mean(key, &known),
        };
        unread.push(format!(
            "hookSpecificOutput.{key} is not read on {event}{hint}"
        ));
    }
    match fields.get("hookEventName") {
        Some(Value::String(name)) if name != event.name() => unread.push(format!(
            "hookSpecificOutput.hookEventName is \"{name}\", but this answers {event}; the \
             fields are read as {event}'s"
        )),
        _ => {}
    }
    if event == Event::Stop {
        match fields.get("decision") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "reject" => {}
            Some(other) => unread.push(format!(
                "hookSpecificOutput.decision {} is not read: on Stop it is \"reject\" or absent",
                shown(other)
            )),
        }
    }
    unread
}

/// A rewrite of the wrong type, `why`: a failure, unless the decision beside it `stands` (a
/// deny, ask or block, which needs no rewrite), when it is left out with a `warning`.
fn refused_rewrite(warning: &mut Option<String>, stands: bool, why: String) -> Result<(), String> {
    if !stands {
        return Err(why);
    }
    add_warning(warning, format!("{why} (left out; the decision stands)"));
    Ok(())
}

/// A JSON value for a message, cut short past 100 characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Reads a handler's answer for `event` as a host of the newest CLI does.
/// `deny_on_failure` is `failurePolicy: deny`.
pub fn interpret(event: Event, out: &RawOutput, deny_on_failure: bool) -> Decision {
    interpret_as(event, out, deny_on_failure, None)
}

/// [`interpret`], as a host of CLI version `cli` reads the answer (`None`: the newest). A
/// host older than [`HONOURS_FROM`] passes over an ask (on PreToolUse the tool then runs
/// without asking; on PermissionRequest the host asks, as it would with no answer), a
/// model route (the turn keeps its model) and a Stop reject (the answer stands), each
/// named in the decision's warning and not checked further: a malformed one fails nothing
/// on such a host.
pub fn interpret_as(
    event: Event,
    out: &RawOutput,
    deny_on_failure: bool,
    cli: Option<&crate::version::Version>,
) -> Decision {
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let mut d = Decision::default();
    let fail = |why: String| -> Decision {
        failed(
            event,
            why,
            deny_on_failure || (event == Event::PermissionRequest && out.exit.is_none()),
        )
    };
    if out.timed_out {
        // Not "a process it started": one left running may be older than the handler,
        // handed its output (README, run).
        let unseen = if out.tree_unseen {
            "; /proc could not be read, so only its process group was killed: what it \
             started in another group or session may still be running"
        } else {
            ""
        };
        return fail(match (out.exit, out.left_running) {
            (None, false) => format!("timed out after {:.1}s{unseen}", out.duration.as_secs_f64()),
            (None, true) => format!(
                "timed out after {:.1}s; a process outside its process group still held its \
                 output open, and was left running{unseen}",
                out.duration.as_secs_f64()
            ),
            (Some(code), left_running) => format!(
                "exited {code}, but a process outside its process group still held its output \
                 open when the timeout ran out ({:.1}s); its answer is not used, and that \
                 process was {}",
                out.duration.as_secs_f64(),
                if left_running {
                    "left running"
                } else {
                    "killed"
                }
            ),
        });
    }
    match out.exit {
        Some(0) => {}
        Some(2) if !stderr.is_empty() => {
            let blocks = event.can_block();
            if blocks {
                d.verdict = Some(Verdict::Block);
                d.reason = Some(stderr);
                return d;
            }
            let stop = match event {
                Event::Stop => " (and is not a Stop reject)",
                _ => "",
            };
            return fail(format!("exit 2 does not block on {event}{stop}"));
        }
        Some(2) => {
            return fail("exit 2 with empty stderr; a block needs a reason on stderr".into())
        }
        Some(code) => {
            return fail(format!(
                "exit {code}{}",
                if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {}", first_line(&stderr))
                }
            ))
        }
        None => {
            return fail(match out.signal {
                Some(sig) => format!("killed by {}", signal_shown(sig)),
                None => "killed by a signal".into(),
            })
        }
    }
    if out.stdout.len() > OUTPUT_CAP {
        // Its end, where the answer usually is, was never read.
        return fail(format!(
            "stdout is over {} MiB, more than an answer may be; print the decision only \
             (logs go to stderr)",
            OUTPUT_CAP / (1024 * 1024)
        ));
    }
    if stdout.trim().is_empty() {
        return d;
    }
    if !looks_like_json(&stdout) {
        // Plain text is not a decision. Nor is JSON after a byte order mark: JSON.parse and
        // json.loads refuse the mark, so a host that does not strip it first takes it for
        // text (one that does would read the answer); say so.
        if stdout.strip_prefix('\u{FEFF}').is_some_and(looks_like_json) {
            d.warning = Some(BOM_WARNING.into());
        } else if let Some(first) = answer_after_text(&stdout) {
            // A log line printed before the answer: hosts read no decision, and a gate
            // fails open without a word.
            d.warning = Some(format!(
                "stdout starts with text (`{first}`), so hosts read it all as plain text and \
                 the JSON answer after it is not read; print only the answer on stdout (logs \
                 go to stderr)"
            ));
        }
        return d;
    }
    // As a host's `JSON.parse` reads it: a lone surrogate or a number past f64's range
    // beside a deny must not turn the deny into a failure.
    let v: Value = match crate::json::parse_as_javascript(stdout.trim().as_bytes()) {
        Ok(parsed) => parsed.value,
        Err(e) => return fail(format!("stdout looks like JSON but does not parse ({e})")),
    };
    let Some(obj) = v.as_object() else {
        return fail("stdout JSON is not an object".into());
    };
    let hso = obj
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    if !hso.is_null() && !hso.is_object() {
        return fail(format!("hookSpecificOutput is not an object: {hso}"));
    }
    let older = cli.filter(|v| !honours_all(v));
    match read_answer(event, obj, &hso, d, older) {
        Ok(d) => d,
        Err(why) => fail(why),
    }
}

/// The decision in the answer object `obj` (whose `hookSpecificOutput` is `hso`, `null`
/// when absent), or why it is a failure; `older` is the CLI version of a host that passes
/// over what [`HONOURS_FROM`] brought (see [`interpret_as`]).
fn read_answer(
    event: Event,
    obj: &serde_json::Map<String, Value>,
    hso: &Value,
    mut d: Decision,
    older: Option<&crate::version::Version>,
) -> Result<Decision, String> {
    // A top-level block (read last) stands over a rewrite of the wrong type beside it.
    let blocks = obj.get("decision").and_then(Value::as_str) == Some("block") && event.can_block();
    let passed_over = |warning: &mut Option<String>, what: &str, so: &str| {
        if let Some(cli) = older {
            add_warning(
                warning,
                format!(
                    "a {cli} host passes over {what} ({HONOURS_FROM} and later act on it), so {so}"
                ),
            );
        }
    };
    match event {
        _ if event.takes_permission() => {
            match hso.get("permissionDecision") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if s == "deny" => d.verdict = Some(Verdict::Deny),
                Some(Value::String(s)) if s == "ask" && older.is_some() => {
                    let so = if event == Event::PermissionRequest {
                        "the host asks the user, as it does when no hook decides"
                    } else {
                        "the tool runs without asking"
                    };
                    passed_over(&mut d.warning, "an ask", so);
                }
                Some(Value::String(s)) if s == "ask" => d.verdict = Some(Verdict::Ask),
                Some(Value::String(s)) if s == "allow" => d.verdict = Some(Verdict::Allow),
                Some(other) => return Err(format!("unknown permissionDecision {other}")),
            }
            let reason = side_text(
                &mut d.warning,
                hso.get("permissionDecisionReason"),
                "hookSpecificOutput.permissionDecisionReason",
            );
            // The reason of an ask passed over is shown to no one.
            let asked = hso.get("permissionDecision").and_then(Value::as_str) == Some("ask");
            d.reason = reason.filter(|_| !(asked && older.is_some()));
            // The tool's input is an object: anything else is no rewrite a tool could take.
            // Beside a deny or a block, which need none, it is left out and they stand; so
            // it is beside an ask, and the user is asked about the input as it is (as a
            // failure, the tool would run without asking, unless under failurePolicy: deny).
            let stands = blocks || matches!(d.verdict, Some(Verdict::Deny | Verdict::Ask));
            d.updated_input = match hso.get("updatedInput") {
                None | Some(Value::Null) => None,
                Some(input @ Value::Object(_)) => Some(input.clone()),
                Some(other) => {
                    let why = format!(
                        "hookSpecificOutput.updatedInput must be an object (the tool input to use \
                         instead), found {}; print the whole input object, or leave it out",
                        shown(other)
                    );
                    refused_rewrite(&mut d.warning, stands, why)?;
                    None
                }
            };
        }
        Event::UserPromptSubmit => {
            let model_passed_over =
                older.is_some() && hso.get("updatedModel").is_some_and(|m| !m.is_null());
            let mut rewrite = |name: &str| {
                str_field(hso.get(name), &format!("hookSpecificOutput.{name}"))
                    .or_else(|why| refused_rewrite(&mut d.warning, blocks, why).map(|()| None))
            };
            let model = if model_passed_over {
                None
            } else {
                rewrite("updatedModel")?
            };
            // No provider has a model named "": no route (an earlier one stands).
            let (model, model_was_empty) = match model {
                Some(m) if m.trim().is_empty() => (None, true),
                other => (other, false),
            };
            let prompt = rewrite("prompt")?;
            d.updated_prompt = rewrite("updatedPrompt")?.or(prompt);
            d.updated_model = model;
            if model_passed_over {
                passed_over(&mut d.warning, "updatedModel", "the turn keeps its model");
            }
            if model_was_empty {
                add_warning(
                    &mut d.warning,
                    "hookSpecificOutput.updatedModel is empty, which names no model, so it is \
                     no route; leave it out to keep the model"
                        .to_string(),
                );
            }
        }
        Event::Stop
            if hso.get("decision").and_then(Value::as_str) == Some("reject") && older.is_some() =>
        {
            passed_over(&mut d.warning, "a Stop reject", "the answer stands");
        }
        Event::Stop if hso.get("decision").and_then(Value::as_str) == Some("reject") => {
            match str_field(hso.get("reason"), "hookSpecificOutput.reason")?
                .filter(|r| !r.trim().is_empty())
            {
                Some(r) => {
                    d.verdict = Some(Verdict::Reject);
                    d.reason = Some(r);
                }
                None => return Err("Stop reject needs a non-empty reason".into()),
            }
        }
        _ => {}
    }
    // Elsewhere it is not read: named by `unread_fields`, as a host passes it over.
    if event.takes_context() {
        if let Some(ctx) = side_text(
            &mut d.warning,
            hso.get("additionalContext"),
            "hookSpecificOutput.additionalContext",
        ) {
            d.additional_context = Some(ctx);
        }
    }
    // Codex-style top-level block.
    if obj.get("decision").and_then(Value::as_str) == Some("block") && event.can_block() {
        d.verdict = Some(Verdict::Block);
        d.reason = side_text(&mut d.warning, obj.get("reason"), "reason");
    }
    for why in unread_fields(event, obj, hso) {
        add_warning(&mut d.warning, why);
    }
    Ok(d)
}

/// A failed handler's decision: a deny when `deny` (and the event can deny), else none.
fn failed(event: Event, why: String, deny: bool) -> Decision {
    let mut f = Decision {
        failure: Some(why.clone()),
        ..Decision::default()
    };
    if deny && event.takes_permission() {
        f.verdict = Some(Verdict::Deny);
        f.reason = Some(format!("handler failed: {why}"));
    }
    f
}

/// The decision of a handler whose shell could not be started: a failure, which denies on
/// PermissionRequest (seeds/004: "PermissionRequest spawn failure denies") and under
/// `failurePolicy: deny`.
pub fn start_failed(event: Event, err: &std::io::Error, deny_on_failure: bool) -> Decision {
    // The command or the environment is more than the kernel passes to a program.
    let why = if err.raw_os_error() == Some(libc::E2BIG) {
        format!(
            "cannot start the shell: {err}: the command and the environment together are more \
             than the system passes to a program (the command at most {MAX_COMMAND_BYTES} \
             bytes); move long text from the command into the script, or unset large \
             environment variables"
        )
    } else {
        format!("cannot start the shell: {err}")
    };
    failed(
        event,
        why,
        deny_on_failure || event == Event::PermissionRequest,
    )
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The combined outcome of several handlers, in order: the strongest verdict wins (a deny
/// over everything; of equals, the first), and the last non-blocking rewrite wins. The
/// failure is that of the handler whose verdict won when it failed (its reason then says
/// `handler failed: …` of that same failure), else the first handler's that failed.
pub fn combine<'a>(decisions: impl IntoIterator<Item = &'a Decision>) -> Decision {
    let mut out = Decision::default();
    for d in decisions {
        if d.verdict > out.verdict {
            out.verdict = d.verdict;
            out.reason = d.reason.clone();
            // A handler that decided by failing (a deny under `failurePolicy: deny`): its
            // failure is the outcome's, so that the two name one handler.
            if d.failure.is_some() {
                out.failure = d.failure.clone();
            }
        }
        // A blocking answer's rewrites are not rewrites (seeds/004: the last non-blocking
        // value wins).
        let blocking = d.verdict.is_some_and(|v| v > Verdict::Ask);
        if !blocking && d.updated_input.is_some() {
            out.updated_input = d.updated_input.clone();
        }
        if !blocking && d.updated_prompt.is_some() {
            out.updated_prompt = d.updated_prompt.clone();
        }
        if !blocking && d.updated_model.is_some() {
            out.updated_model = d.updated_model.clone();
        }
        if let Some(c) = &d.additional_context {
            out.additional_context = Some(match out.additional_context.take() {
                Some(prev) => format!("{prev}\n{c}"),
                None => c.clone(),
            });
        }
        if d.failure.is_some() && out.failure.is_none() {
            out.failure = d.failure.clone();
        }
    }
    // A call denied or blocked never runs, nor does a blocked turn: no rewrite applies to
    // it (found by review: a deny was shown with the rewrite of another handler).
    if out.verdict.is_some_and(|v| v > Verdict::Ask) {
        out.updated_input = None;
        out.updated_prompt = None;
        out.updated_model = None;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(exit: Option<i32>, stdout: &str, stderr: &str) -> RawOutput {
        RawOutput {
            exit,
            signal: None,
            timed_out: false,
            left_running: false,
            tree_unseen: false,
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn answers_are_read_as_seeds_004_says() {
        let deny = r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}"#;
        assert_eq!(
            interpret(Event::PreToolUse, &raw(Some(0), deny, ""), false).verdict,
            Some(Verdict::Deny)
        );
        assert_eq!(
            interpret(Event::PreToolUse, &raw(Some(0), "", ""), false),
            Decision::default()
        );
        assert!(
            interpret(Event::PreToolUse, &raw(Some(0), "{oops", ""), false)
                .failure
                .is_some()
        );
        assert_eq!(
            interpret(Event::PreToolUse, &raw(Some(2), "", "nope"), false).verdict,
            Some(Verdict::Block)
        );
        assert!(interpret(Event::Stop, &raw(Some(2), "", "nope"), false)
            .failure
            .is_some());
        let failed = interpret(Event::PreToolUse, &raw(Some(1), "", "boom"), true);
        assert_eq!(failed.verdict, Some(Verdict::Deny));
        assert_eq!(
            interpret(Event::PreToolUse, &raw(Some(1), "", "boom"), false).verdict,
            None
        );
        let bom_deny = format!("\u{FEFF}{deny}");
        let d = interpret(Event::PreToolUse, &raw(Some(0), &bom_deny, ""), true);
        assert_eq!(d.verdict, None);
        assert_eq!(d.failure, None);
        assert_eq!(d.warning.as_deref(), Some(BOM_WARNING));
        assert_eq!(
            interpret(Event::PreToolUse, &raw(Some(0), "\u{FEFF}ok", ""), false),
            Decision::default()
        );
        let reject = r#"{"hookSpecificOutput":{"decision":"reject","reason":""}}"#;
        assert!(interpret(Event::Stop, &raw(Some(0), reject, ""), false)
            .failure
            .is_some());
    }

    /// A timeout's kill that could not read `/proc` killed the group alone, and said
    /// nothing of what it could not look for.
    #[test]
    fn a_timeout_that_could_not_look_for_strays_says_so() {
        let mut out = raw(None, "", "");
        out.timed_out = true;
        out.duration = Duration::from_secs(2);
        let said = |out: &RawOutput| interpret(Event::Stop, out, false).failure.unwrap();
        assert_eq!(said(&out), "timed out after 2.0s");
        out.tree_unseen = true;
        assert_eq!(
            said(&out),
            "timed out after 2.0s; /proc could not be read, so only its process group was \
             killed: what it started in another group or session may still be running"
        );
    }

    #[test]
    fn a_start_refused_for_its_size_names_the_cause() {
        let e = std::io::Error::from_raw_os_error(libc::E2BIG);
        let d = start_failed(Event::PermissionRequest, &e, false);
        assert_eq!(d.verdict, Some(Verdict::Deny));
        let why = d.failure.unwrap();
        assert!(
            why.contains("more than the system passes to a program")
                && why.contains("move long text from the command into the script"),
            "{why}"
        );
    }

    #[test]
    fn deny_wins_and_last_rewrite_wins() {
        let a = Decision {
            verdict: Some(Verdict::Deny),
            reason: Some("a".into()),
            ..Default::default()
        };
        let b = Decision {
            verdict: Some(Verdict::Ask),
            updated_model: Some("m1".into()),
            ..Default::default()
        };
        let c = Decision {
            updated_model: Some("m2".into()),
            ..Default::default()
        };
        let all = combine([&b, &c]);
        assert_eq!(all.verdict, Some(Verdict::Ask));
        assert_eq!(all.updated_model.as_deref(), Some("m2"));
        // Denied, the call never runs: no rewrite is shown for it.
        let all = combine([&b, &a, &c]);
        assert_eq!(all.verdict, Some(Verdict::Deny));
        assert_eq!(all.reason.as_deref(), Some("a"));
        assert_eq!(all.updated_model, None);
    }

    #[test]
    fn secret_names() {
        for s in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "FINSAFE_LICENSE_KEY",
            "AWS_SECRET_ACCESS_KEY",
            // Found by review: passed on before.
            "SECRET",
            "SECRET_KEY",
            "PRIVATE_KEY",
            "PGPASSWORD",
            "MYSQL_PWD",
            "OPENAI_API_KEY_2",
            "CLIENT_SECRET_1",
            "npm_config__authToken",
            // Found by the second review: passed on before.
            "LANGSMITH_API_KEY1",
            "API_KEY_V2",
            "OPENAI_API_KEY_OLD",
            "SLACK_BOT_TOKEN_PROD",
            "SECRET_KEY_BASE",
            "DB_PASS",
            "SMTP_PASS",
            "GPG_PASSPHRASE",
            "GITHUB_PAT",
            // Found by the host-side sweep (LLM key names a host configures).
            "AZURE_OPENAI_KEY",
            "LLM_KEY",
            "ANTHROPIC_KEY_2",
            "SECRETS",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(s), "{s}");
        }
        for s in [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "FINCLAW_HOOK_JUDGE_TOKEN",
            "TOKENIZER",
            "SECRETARY",
            "NODE_VERSION_2",
            "MAX_TOKENS",
            "TOKENIZERS_PARALLELISM",
            "KEY",
            "SSH_AUTH_SOCK",
            "PGPASSFILE",
            "INIT_PWD",
            "PATH_INFO",
            "BYPASS_PROXY",
            "KEYCHAIN_PATH",
            "KEY_ID_FORMAT",
        ] {
            assert!(!is_secret_name(s), "{s}");
        }
    }
}

/// How to dispatch.
#[derive(Debug, Clone, Default)]
pub struct DispatchOptions {
    /// Run handlers that are not trusted (still never invalid ones).
    pub include_untrusted: bool,
    /// The host's CLI version, when known: one older than [`HONOURS_FROM`] passes over an
    /// ask, a model route and a Stop reject ([`interpret_as`]).
    pub cli_version: Option<crate::version::Version>,
}

/// The first CLI version that honours `permissionDecision: "ask"`, `updatedModel` and
/// Stop's `reject` (seeds/004: "Older 0.13.0 builds still spawn the events but ignore
/// those three honours").
pub const HONOURS_FROM: &str = "0.13.1";

/// Whether a host of CLI version `cli` acts on everything an answer can say (it is
/// [`HONOURS_FROM`] or later).
pub fn honours_all(cli: &crate::version::Version) -> bool {
    crate::version::Version::parse(HONOURS_FROM).is_ok_and(|from| *cli >= from)
}

/// One handler in a dispatch.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    /// `profile` or `workspace`.
    pub source: &'static str,
    /// Handler id, if any.
    pub id: Option<String>,
    /// The recipe that installed it.
    pub recipe: Option<String>,
    /// The command.
    pub command: String,
    /// `ran`, `started` (async), or why it was skipped.
    pub state: String,
    /// Exit code, when it ran to completion.
    pub exit: Option<i32>,
    /// The signal that ended it (`SIGSEGV`, `SIGKILL`, …), when one did: then `exit` is
    /// `None`. A handler killed at its timeout shows `SIGKILL`, sent by hookpack.
    pub signal: Option<String>,
    /// Milliseconds.
    pub ms: Option<u128>,
    /// Its decision.
    pub decision: Option<Decision>,
    /// The start of its stderr.
    pub stderr: String,
}

/// The outcome of a dispatch.
#[derive(Debug, Clone, Serialize)]
pub struct Dispatch {
    /// The event.
    pub event: Event,
    /// The string matchers were tested against (the tool name), if any.
    pub match_string: Option<String>,
    /// The combined outcome.
    pub outcome: Decision,
    /// Every handler considered, in host order.
    pub handlers: Vec<Trace>,
    /// What of the payload's `turn` was cut to the hosts' caps before it was sent.
    pub turn_cut: Vec<String>,
    /// The host CLI version the answers were read as (`--cli-version`), if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
}

/// Dispatches `payload` for `event` through the profile's and workspace's handlers, the
/// way a host does: profile first, matcher as a whole-string regex on the tool name, only
/// trusted handlers unless asked, each with the original stdin.
pub fn dispatch(
    profile: &crate::profile::Profile,
    workspace: &Path,
    event: Event,
    payload: &serde_json::Map<String, Value>,
    opts: &DispatchOptions,
) -> Result<Dispatch, crate::error::Error> {
    if !workspace.is_dir() {
        // Every handler would fail to start in it.
        return Err(crate::error::Error::WorkspaceNotFolder {
            path: workspace.to_path_buf(),
        });
    }
    // Most likely a misspelt name: "no handlers" would hide that.
    profile.require_folder()?;
    let workspace = crate::fs::absolute(workspace);
    let trust = crate::trust::TrustFile::read(&profile.trust_file())?;
    let handlers = crate::list::all_handlers(profile, &workspace, &trust)?;
    let (stdin_doc, cut) = crate::fixture::host_stdin(event, &workspace, payload);
    let stdin = serde_json::to_vec(&Value::Object(stdin_doc.clone())).unwrap_or_default();
    // Only tool events are matched (others' matchers are ignored, as `validate` warns).
    let match_string = (stdin_doc.get("tool_name"))
        .and_then(Value::as_str)
        .filter(|_| event.is_tool_event())
        .map(String::from);
    // The root as the path it is, not its text: a handler's `${FINCLAW_PROFILE_ROOT}` must
    // name the folder even when its path is not UTF-8.
    let mut env: Vec<(String, OsString)> = vec![
        ("FINCLAW_HOOK_EVENT".into(), event.name().into()),
        ("FINCLAW_PROFILE_ROOT".into(), profile.root.clone().into()),
    ];
    env.push((
        "FINCLAW_PROFILE".into(),
        match &profile.name {
            Some(name) => name.into(),
            None => profile.root.file_name().unwrap_or_default().to_os_string(),
        },
    ));
    let hash_env = crate::list::env_of(profile, &workspace);
    // The recipe a crash left half changed, whose handlers `trust` refuses until recovery.
    let half_changed = crate::install::interrupted_change(profile).map(|c| c.id);
    let mut traces = Vec::new();
    let mut decisions = Vec::new();
    for h in handlers.iter().filter(|h| h.event == event.name()) {
        let mut trace = Trace {
            source: h.source,
            id: h.id.clone(),
            recipe: h.recipe.clone(),
            command: h.command.clone(),
            state: String::new(),
            exit: None,
            signal: None,
            ms: None,
            decision: None,
            stderr: String::new(),
        };
        let skip = |why: String, trace: &mut Trace| trace.state = format!("skipped: {why}");
        // Held to it whether waited for or not (async: by the watchdog).
        let timeout = (h.handler.get("timeout"))
            .and_then(Value::as_u64)
            .unwrap_or(crate::hooks_json::DEFAULT_TIMEOUT);
        // One hosts load but cannot start fails to start when run, as a host's would.
        if !(h.problems.is_empty() || h.unstartable && opts.include_untrusted) {
            skip(format!("invalid ({})", h.problems.join("; ")), &mut trace);
        } else if event.is_tool_event()
            && !crate::hooks_json::compile_matcher(h.matcher.as_deref())
                .ok()
                .flatten()
                .is_none_or(|m| m.is_match(match_string.as_deref().unwrap_or("")))
        {
            let why = match (&match_string, stdin_doc.get("tool_name")) {
                (Some(_), _) => "matcher does not match".to_string(),
                // Hosts read the tool's name from a string only.
                (None, Some(other)) => format!(
                    "matcher does not match (the payload's `tool_name` is no string, but \
                     {other}, and matchers are tested against a tool name string)"
                ),
                // Most likely a misspelt key (`tool`, `toolName`).
                (None, None) => "matcher does not match (the payload has no `tool_name`, the \
                                 tool name matchers are tested against)"
                    .to_string(),
            };
            skip(why, &mut trace);
        } else if !event.is_spawned() {
            skip(format!("hosts never spawn {event} handlers"), &mut trace);
        } else if let Some(why) = (!opts.include_untrusted)
            .then(|| not_trusted_now(h, &handlers, &trust, &hash_env, half_changed.as_deref()))
            .flatten()
        {
            skip(why, &mut trace);
        } else if h.handler.get("async").and_then(Value::as_bool) == Some(true) {
            match spawn_detached(&h.command, &workspace, &stdin, &env, timeout) {
                Ok(()) => trace.state = "started (async, not awaited)".into(),
                Err(e) => {
                    trace.state = "not started".into();
                    let decision = start_failed(event, &e, false);
                    trace.decision = Some(decision.clone());
                    decisions.push(decision);
                }
            }
        } else {
            let spawned = spawn(&Spawn {
                command: &h.command,
                cwd: &workspace,
                stdin: &stdin,
                env: &env,
                timeout: Duration::from_secs(timeout),
            });
            check_interrupted()?;
            let deny_on_failure =
                h.handler.get("failurePolicy").and_then(Value::as_str) == Some("deny");
            let (decision, out) = match spawned {
                Ok(out) => (
                    interpret_as(event, &out, deny_on_failure, opts.cli_version.as_ref()),
                    Some(out),
                ),
                Err(e) => {
                    trace.state = "not started".into();
                    (start_failed(event, &e, deny_on_failure), None)
                }
            };
            if let Some(out) = out {
                trace.exit = out.exit;
                trace.signal = out.signal.map(signal_shown);
                trace.ms = Some(out.duration.as_millis());
                trace.stderr = String::from_utf8_lossy(&out.stderr)
                    .chars()
                    .take(400)
                    .collect();
                trace.state = if out.timed_out {
                    "timed out".into()
                } else {
                    "ran".into()
                };
            }
            trace.decision = Some(decision.clone());
            decisions.push(decision);
        }
        traces.push(trace);
    }
    Ok(Dispatch {
        event,
        match_string,
        outcome: combine(&decisions),
        handlers: traces,
        turn_cut: cut,
        cli_version: opts.cli_version.as_ref().map(ToString::to_string),
    })
}

/// Why `h` may not run now, if it may not. Hosts hash a handler's script again before each
/// spawn (seeds/004): one trusted when the dispatch began may have changed since (an earlier
/// handler may have rewritten it), and is then `modified` and skipped. `interrupted` is the
/// recipe a crash left half changed: its handlers are trusted only after recovery.
fn not_trusted_now(
    h: &crate::list::Listed,
    handlers: &[crate::list::Listed],
    trust: &crate::trust::TrustFile,
    env: &crate::trust::Env,
    interrupted: Option<&str>,
) -> Option<String> {
    use crate::trust::Status;
    let (status, script) = match h.status {
        Status::Trusted => {
            let subject = crate::trust::Subject {
                event: &h.event,
                matcher: h.matcher.as_deref(),
                handler: &h.handler,
            };
            match crate::trust::hash(&subject, env) {
                Ok((hash, script)) => (
                    crate::trust::status(trust, &h.key, &hash, &script, true),
                    script,
                ),
                Err(e) => return Some(format!("its script cannot be hashed again ({e})")),
            }
        }
        other => (other, h.script.clone()),
    };
    // `hookpack trust` alone is a usage error: name what takes this handler. One without an
    // id, or a workspace handler whose id the profile has too, is named by its trust key:
    // `--all` would trust every other handler as well.
    let trust = || match h.id.as_deref() {
        Some(id) if !crate::trust::shadowed(h, handlers) => format!("hookpack trust {id}"),
        _ => crate::trust::trust_command(&h.key),
    };
    // Its files are half way, and `hookpack trust` refuses it until recovery (which may
    // also put back a script that is missing now).
    let recovering = (h.source == "profile")
        .then_some(h.recipe.as_deref())
        .flatten()
        .filter(|r| Some(*r) == interrupted);
    (status != Status::Trusted).then(|| match (status, &script, recovering) {
        // `hookpack trust` refuses it: only the shell knows the file it runs.
        (Status::ScriptUnknown, _, _) => format!(
            "{} (only the shell knows the file it runs, so `hookpack trust` refuses it; \
             write the script path out, or pass --include-untrusted)",
            status.word()
        ),
        // `hookpack trust` refuses it too; once put right it runs again, trusted as before
        // if its bytes are those trusted.
        (Status::ScriptWritableByOthers, crate::trust::Script::File(p), _) => format!(
            "{} ({}; a trusted handler runs again once that is done, its bytes unchanged)",
            status.word(),
            crate::trust::script_exposure(p)
                .refusal(p)
                .unwrap_or_else(|| "another user can change its script".into())
        ),
        (_, _, Some(recipe)) => format!(
            "{} (a change of its recipe `{recipe}` was interrupted: run `hookpack doctor \
             --fix` first, then trust it with `{}`, or pass --include-untrusted)",
            status.word(),
            trust()
        ),
        // `hookpack trust` refuses it, and run it would fail: the file is what is wanted.
        (Status::ScriptMissing, crate::trust::Script::Missing(p), None) => format!(
            "{} (the command runs {}, which {}; restore it or correct the command's path, \
             then trust it)",
            status.word(),
            p.display(),
            if std::fs::symlink_metadata(p).is_ok() {
                "is not a regular file"
            } else {
                "does not exist"
            }
        ),
        _ => format!(
            "{} (trust it with `{}`, or pass --include-untrusted)",
            status.word(),
            trust()
        ),
    })
}

/// Starts `hookpack __watch-async` for the async handler `pid`, in a process group of its
/// own (out of reach of the terminal's Ctrl-C, as the handler is), to kill it at its
/// timeout. Best effort: a watchdog that cannot start leaves the handler as before.
#[cfg(target_os = "linux")]
fn start_watchdog(pid: u32, timeout: u64) {
    use std::os::unix::process::CommandExt;
    let Some(start) = strays::start_time(pid) else {
        return;
    };
    // This very binary, even when its file was deleted or replaced since it started.
    let mut cmd = Command::new("/proc/self/exe");
    cmd.args(["__watch-async", &pid.to_string(), &start.to_string()])
        .arg(timeout.min(MAX_WAIT.as_secs()).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    if let Ok(mut watchdog) = cmd.spawn() {
        std::thread::spawn(move || {
            let _ = watchdog.wait();
        });
    }
}

/// `__watch-async`: waits until `pid` (started at `start`, `/proc` ticks) has ended or
/// `timeout` has passed; then, if it is still that process and running, kills it and what
/// it started, then its process group, as a timeout of a handler `run` waits for does. A handler that ended by itself (a zombie too) ends the watch: what it left in its
/// group is not killed, as once it is reaped its group id may be another's.
pub fn watch_async(pid: u32, start: u64, timeout: Duration) {
    #[cfg(target_os = "linux")]
    {
        // Nothing `run`'s caller left open is held past `run` (stdin, stdout and stderr are
        // /dev/null already).
        let open: Vec<i32> = std::fs::read_dir("/proc/self/fd")
            .map(|dir| {
                dir.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&fd| fd > 2)
                    .collect()
            })
            .unwrap_or_default();
        for fd in open {
            // SAFETY: close(2) of descriptors this process inherited and does not use.
            unsafe { libc::close(fd) };
        }
        let same = || crate::leftover::running_since(pid as i32) == Some(start);
        let deadline = Instant::now() + timeout.min(MAX_WAIT);
        while same() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // Checked just above: while it runs unreaped, its pid and group id are its
                // own. What it started elsewhere first, while their parent links still lead
                // to it, then its group.
                strays::kill_tree(pid);
                kill_group(pid);
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(500)));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (pid, start, timeout);
}

/// Starts an async handler and does not wait for it.
/// An unlinked temporary file holding `bytes`, positioned at its start.
fn payload_file(bytes: &[u8]) -> Option<std::fs::File> {
    use std::io::Seek;
    let mut file = tempfile::tempfile().ok()?;
    file.write_all(bytes).ok()?;
    file.rewind().ok()?;
    Some(file)
}

fn spawn_detached(
    command: &str,
    cwd: &Path,
    stdin: &[u8],
    env: &[(String, OsString)],
    timeout: u64,
) -> std::io::Result<()> {
    let mut cmd = handler_command(command, cwd, env);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    // The payload in a file of its own (unlinked, in $TMPDIR), read at the handler's pace:
    // through a pipe, a handler that read it after `run` ended got only what the pipe held,
    // cut off mid-JSON. A pipe is the fallback when no such file can be made.
    if let Some(file) = payload_file(stdin) {
        cmd.stdin(Stdio::from(file));
    }
    let mut child = cmd.spawn()?;
    // Held to its timeout once `run` has ended, as a host holds it.
    #[cfg(target_os = "linux")]
    start_watchdog(child.id(), timeout);
    #[cfg(not(target_os = "linux"))]
    let _ = timeout;
    if let Some(mut w) = child.stdin.take() {
        let bytes = stdin.to_vec();
        // Hand over the payload, but a handler that never reads it must not hold up the
        // host for long.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(Duration::from_secs(2));
    }
    // Reap it in the background so it never lingers as a zombie of a long-lived host.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}
