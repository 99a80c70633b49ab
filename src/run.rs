//! Running handlers the way a host does, and reading what they answer (seeds/004).
//!
//! A handler runs as `$SHELL -lc COMMAND` (fallback `/bin/sh`) in its own process group,
//! with the payload on stdin and an environment stripped of secret-shaped names. A timeout
//! kills the whole group, grandchildren included, and so does the handler's exit: nothing a
//! handler started outlives it. Output is captured up to a cap.
//!
//! Answers: exit 0 with nothing on stdout is no decision; exit 0 with one JSON object is a
//! decision; text that looks like JSON but does not parse is a failure; exit 2 with stderr
//! blocks on tool and prompt events; anything else is a failure, which denies only under
//! `failurePolicy: deny` on PreToolUse. Combining: a deny wins, and the last non-blocking
//! rewrite wins.

use crate::event::Event;
use serde::Serialize;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Most bytes of stdout or stderr kept from one handler.
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// True for environment variable names that look like credentials; hosts strip these.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if n.starts_with("FINCLAW_HOOK_") {
        // The documented way to hand a judge token to official recipes.
        return false;
    }
    const SUFFIXES: [&str; 9] = [
        "_API_KEY",
        "_APIKEY",
        "_SECRET",
        "_SECRET_KEY",
        "_TOKEN",
        "_PASSWORD",
        "_PASSWD",
        "_ACCESS_KEY",
        "_PRIVATE_KEY",
    ];
    SUFFIXES.iter().any(|s| n.ends_with(s))
        || n.starts_with("FINSAFE_LICENSE")
        || matches!(n.as_str(), "API_KEY" | "TOKEN" | "PASSWORD")
}

/// What one process did.
#[derive(Debug, Clone, Serialize)]
pub struct RawOutput {
    /// Exit code; `None` when killed by a signal (including the timeout).
    pub exit: Option<i32>,
    /// True when the timeout fired.
    pub timed_out: bool,
    /// Captured stdout (capped).
    #[serde(skip)]
    pub stdout: Vec<u8>,
    /// Captured stderr (capped).
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
    pub env: &'a [(String, String)],
    /// Kill the group after this long.
    pub timeout: Duration,
}

fn shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty() && Path::new(s).is_file())
        .unwrap_or_else(|| "/bin/sh".into())
}

fn read_capped(mut r: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    out
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
}

/// Runs one handler to completion or timeout.
pub fn spawn(s: &Spawn) -> std::io::Result<RawOutput> {
    let start = Instant::now();
    let mut cmd = Command::new(shell());
    cmd.arg("-lc").arg(s.command).current_dir(s.cwd);
    for (k, _) in std::env::vars_os() {
        if is_secret_name(&k.to_string_lossy()) {
            cmd.env_remove(&k);
        }
    }
    for (k, v) in s.env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let stdin_bytes = s.stdin.to_vec();
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut w) = stdin.take() {
            // A handler that ignores stdin closes the pipe early; that is not an error.
            let _ = w.write_all(&stdin_bytes);
        }
    });
    let out = child
        .stdout
        .take()
        .map(|o| std::thread::spawn(move || read_capped(o)));
    let err = child
        .stderr
        .take()
        .map(|e| std::thread::spawn(move || read_capped(e)));
    let deadline = start + s.timeout;
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if Instant::now() >= deadline {
            timed_out = true;
            #[cfg(unix)]
            kill_group(pid);
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(
            Duration::from_millis(2)
                .min(deadline.saturating_duration_since(Instant::now()))
                .max(Duration::from_micros(200)),
        );
    };
    // Whatever the handler left running (a forked grandchild holding the pipes) goes too.
    #[cfg(unix)]
    kill_group(pid);
    let _ = writer.join();
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(RawOutput {
        exit: status.and_then(|s| s.code()).filter(|_| !timed_out),
        timed_out,
        stdout,
        stderr,
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
}

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

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(String::from)
}

/// Reads a handler's answer for `event`. `deny_on_failure` is `failurePolicy: deny`.
pub fn interpret(event: Event, out: &RawOutput, deny_on_failure: bool) -> Decision {
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let mut d = Decision::default();
    let fail = |why: String| -> Decision {
        let mut f = Decision {
            failure: Some(why.clone()),
            ..Decision::default()
        };
        if (deny_on_failure && event == Event::PreToolUse)
            || event == Event::PermissionRequest && out.exit.is_none()
        {
            f.verdict = Some(Verdict::Deny);
            f.reason = Some(format!("handler failed: {why}"));
        }
        f
    };
    if out.timed_out {
        return fail(format!(
            "timed out after {:.1}s",
            out.duration.as_secs_f64()
        ));
    }
    match out.exit {
        Some(0) => {}
        Some(2) if !stderr.is_empty() => {
            let blocks = event.is_tool_event() || event == Event::UserPromptSubmit;
            if blocks {
                d.verdict = Some(Verdict::Block);
                d.reason = Some(stderr);
                return d;
            }
            return fail(format!(
                "exit 2 does not block on {event} (and is not a Stop reject)"
            ));
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
        None => return fail("killed by a signal".into()),
    }
    if stdout.trim().is_empty() {
        return d;
    }
    if !looks_like_json(&stdout) {
        // Plain text is not a decision.
        return d;
    }
    let v: Value = match serde_json::from_str(stdout.trim()) {
        Ok(v) => v,
        Err(e) => return fail(format!("stdout looks like JSON but does not parse ({e})")),
    };
    let Some(obj) = v.as_object() else {
        return fail("stdout JSON is not an object".into());
    };
    let hso = obj
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    match event {
        Event::PreToolUse | Event::PermissionRequest => {
            match hso.get("permissionDecision").and_then(Value::as_str) {
                Some("deny") => d.verdict = Some(Verdict::Deny),
                Some("ask") => d.verdict = Some(Verdict::Ask),
                Some("allow") => d.verdict = Some(Verdict::Allow),
                Some(other) => return fail(format!("unknown permissionDecision `{other}`")),
                None => {}
            }
            d.reason = str_field(&hso, "permissionDecisionReason");
            d.updated_input = hso.get("updatedInput").cloned();
        }
        Event::UserPromptSubmit => {
            d.updated_model = str_field(&hso, "updatedModel");
            d.updated_prompt =
                str_field(&hso, "updatedPrompt").or_else(|| str_field(&hso, "prompt"));
        }
        Event::Stop if hso.get("decision").and_then(Value::as_str) == Some("reject") => {
            match str_field(&hso, "reason").filter(|r| !r.trim().is_empty()) {
                Some(r) => {
                    d.verdict = Some(Verdict::Reject);
                    d.reason = Some(r);
                }
                None => return fail("Stop reject needs a non-empty reason".into()),
            }
        }
        _ => {}
    }
    if let Some(ctx) = str_field(&hso, "additionalContext") {
        d.additional_context = Some(ctx);
    }
    // Codex-style top-level block.
    if obj.get("decision").and_then(Value::as_str) == Some("block")
        && (event.is_tool_event() || event == Event::UserPromptSubmit)
    {
        d.verdict = Some(Verdict::Block);
        d.reason = str_field(&v, "reason");
    }
    d
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The combined outcome of several handlers, in order: the strongest verdict wins (a deny
/// over everything), and the last non-blocking rewrite wins.
pub fn combine<'a>(decisions: impl IntoIterator<Item = &'a Decision>) -> Decision {
    let mut out = Decision::default();
    for d in decisions {
        if d.verdict > out.verdict {
            out.verdict = d.verdict;
            out.reason = d.reason.clone();
        }
        if d.updated_input.is_some() {
            out.updated_input = d.updated_input.clone();
        }
        if d.updated_prompt.is_some() {
            out.updated_prompt = d.updated_prompt.clone();
        }
        if d.updated_model.is_some() {
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(exit: Option<i32>, stdout: &str, stderr: &str) -> RawOutput {
        RawOutput {
            exit,
            timed_out: false,
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
        let reject = r#"{"hookSpecificOutput":{"decision":"reject","reason":""}}"#;
        assert!(interpret(Event::Stop, &raw(Some(0), reject, ""), false)
            .failure
            .is_some());
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
        let all = combine([&b, &a, &c]);
        assert_eq!(all.verdict, Some(Verdict::Deny));
        assert_eq!(all.reason.as_deref(), Some("a"));
        assert_eq!(all.updated_model.as_deref(), Some("m2"));
    }

    #[test]
    fn secret_names() {
        for s in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "FINSAFE_LICENSE_KEY",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(is_secret_name(s), "{s}");
        }
        for s in ["PATH", "HOME", "FINCLAW_HOOK_JUDGE_TOKEN", "TOKENIZER"] {
            assert!(!is_secret_name(s), "{s}");
        }
    }
}
