//! `trust`, `revoke`, `list` statuses, `run` dispatch like a host, and `doctor`.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;

/// A sandbox with the workspace folder `ws` that `run` and the other host verbs use.
fn with_workspace() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    sb
}

/// A profile whose hooks.json runs the given handlers (event → handler objects).
fn profile_with(sb: &Sandbox, handlers: Value) {
    let mut hooks = serde_json::Map::new();
    for (event, hs) in handlers.as_object().unwrap() {
        hooks.insert(event.clone(), json!([{ "hooks": hs }]));
    }
    sb.write(
        "prof/hooks.json",
        serde_json::to_vec_pretty(&json!({ "hooks": hooks })).unwrap(),
    );
}

fn run(sb: &Sandbox, event: &str, payload: Value, extra: &[&str]) -> Value {
    sb.write("payload.json", payload.to_string());
    let o = run_output(sb, event, &[&["--format", "json"], extra].concat());
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `run EVENT` of `payload.json` on the profile `prof` and the workspace `ws`, untrusted
/// handlers included, with `extra` arguments; whatever it exits.
fn run_output(sb: &Sandbox, event: &str, extra: &[&str]) -> std::process::Output {
    run_cmd(sb, event, extra).output().unwrap()
}

/// The command [`run_output`] runs, to be given more (an environment variable).
fn run_cmd(sb: &Sandbox, event: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = sb.cmd();
    cmd.args(["run", event, "--payload", "payload.json"])
        .args(["--profile", "prof", "--workspace", "ws"])
        .args(extra);
    cmd
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only a running or sleeping process counts.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_timeout_kills_the_handler_and_its_grandchild() {
    let sb = with_workspace();
    let pids = sb.join("pids");
    let cmd = format!(
        "sh -c 'sleep 60 & echo $! >> {p}; echo $$ >> {p}; sleep 60'",
        p = pids.display()
    );
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "slow", "type": "command", "command": cmd, "timeout": 1, "failurePolicy": "deny"}]}),
    );
    // On a loaded machine the login shell may not reach the `echo`s within the 1 s timeout;
    // such a run proves nothing about the grandchild, so it is run again (a few times).
    let mut list: Vec<u32> = Vec::new();
    for _ in 0..5 {
        let _ = std::fs::remove_file(&pids);
        let start = std::time::Instant::now();
        let d = run(
            &sb,
            "PreToolUse",
            json!({"tool_name": "exec"}),
            &["--include-untrusted"],
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(d["handlers"][0]["state"], "timed out");
        assert_eq!(
            d["outcome"]["verdict"], "deny",
            "failurePolicy deny turns a timeout into a deny: {d:#}"
        );
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        list = text
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        if list.len() == 2 {
            break;
        }
        // Killed before it wrote both: whatever it started must be gone too.
        std::thread::sleep(std::time::Duration::from_millis(200));
        for &pid in &list {
            assert!(!alive(pid), "process {pid} survived the timeout");
        }
    }
    assert_eq!(
        list.len(),
        2,
        "the handler never started both processes in 1 s"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    for pid in list {
        assert!(!alive(pid), "process {pid} survived the timeout");
    }
}

/// A handler that starts a process in a session of its own (out of reach of the group
/// kill) which keeps stdout open: `run` waited for that process to close it, past the
/// timeout, for as long as it lived (a daemon: for ever). Then it stopped waiting at the
/// timeout but left that process running; now it kills it.
#[cfg(target_os = "linux")]
#[test]
fn a_process_that_leaves_the_group_holding_the_output_cannot_hang_run() {
    let sb = with_workspace();
    let pid = sb.join("pid");
    sb.write(
        "ws/escape.py",
        format!(
            // The handler answers once its child has its own session (else the group kill
            // at the handler's exit may catch the child before its setsid).
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    open({p:?}, 'w').write(str(os.getpid()))\n    time.sleep(60)\n    os._exit(0)\nwhile not os.path.exists({p:?}):\n    time.sleep(0.01)\nprint('{{\"decision\": \"block\", \"reason\": \"no\"}}')\n",
            p = pid.display().to_string()
        ),
    );
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "daemon", "type": "command", "command": "python3 escape.py", "timeout": 2, "failurePolicy": "deny"}]}),
    );
    let start = std::time::Instant::now();
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let took = start.elapsed();
    let survived = kill_survivor(&pid);
    assert!(
        took < std::time::Duration::from_secs(10),
        "run took {took:?}"
    );
    assert_eq!(d["handlers"][0]["state"], "timed out", "{d:#}");
    assert_eq!(d["handlers"][0]["exit"], 0, "{d:#}");
    let failure = d["handlers"][0]["decision"]["failure"].as_str().unwrap();
    assert!(
        failure.contains("still held its output open") && failure.contains("was killed"),
        "{failure}"
    );
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    assert_eq!(
        survived, None,
        "the process holding the output survived run"
    );
}

/// Reads the pid a test's escaped process wrote to `file`; when that process is still
/// alive (after a moment for a kill to land), kills it and returns its pid.
#[cfg(target_os = "linux")]
fn kill_survivor(file: &Path) -> Option<u32> {
    let pid: u32 = std::fs::read_to_string(file).ok()?.trim().parse().ok()?;
    std::thread::sleep(std::time::Duration::from_millis(200));
    if !alive(pid) {
        return None;
    }
    // SAFETY: kill(2) on the pid the test's own escaped process wrote.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    Some(pid)
}

/// A handler that starts a process in a session of its own, its stdin, stdout and stderr
/// on /dev/null, and then outlives its timeout: the timeout killed the handler and its
/// process group, and left that process running for as long as it lived.
#[cfg(target_os = "linux")]
#[test]
fn a_timeout_kills_what_the_handler_started_in_a_session_of_its_own() {
    let sb = with_workspace();
    let pid = sb.join("pid");
    sb.write(
        "ws/detach.py",
        format!(
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    fd = os.open('/dev/null', os.O_RDWR)\n    for n in (0, 1, 2):\n        os.dup2(fd, n)\n    open({p:?}, 'w').write(str(os.getpid()))\n    time.sleep(60)\n    os._exit(0)\ntime.sleep(60)\n",
            p = pid.display().to_string()
        ),
    );
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "detacher", "type": "command", "command": "python3 detach.py", "timeout": 2, "failurePolicy": "deny"}]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let survived = kill_survivor(&pid);
    assert!(pid.exists(), "the handler never started its process: {d:#}");
    assert_eq!(d["handlers"][0]["state"], "timed out", "{d:#}");
    assert_eq!(survived, None, "the detached process survived the timeout");
}

/// A process that was running before the handler started, and that the handler handed its
/// stdout to (as an ssh client hands its stdio to a ControlMaster the user started earlier,
/// over its socket), did not come from the handler: at the deadline `run` stopped and
/// killed it, with whatever else of the user's it served. It is left running, and said to
/// be, whether the handler exited in time (the failure called it "a process it started",
/// which this one, older, is not) or outlived its timeout (the failure said only "timed
/// out").
#[cfg(target_os = "linux")]
#[test]
fn a_timed_out_handler_says_an_older_holder_of_its_output_was_left_running() {
    let sb = with_workspace();
    for outlives in [true, false] {
        let (handler_pid, got) = (sb.join("handler-pid"), sb.join("got"));
        let _ = std::fs::remove_file(&handler_pid);
        let _ = std::fs::remove_file(&got);
        sb.write(
            "bystander.py",
            format!(
                "import os, time\nwhile not os.path.exists({h:?}) or not open({h:?}).read().strip():\n    time.sleep(0.02)\nfd = os.open('/proc/%s/fd/1' % open({h:?}).read().strip(), os.O_WRONLY)\nopen({g:?}, 'w').close()\ntime.sleep(60)\n",
                h = handler_pid.display().to_string(),
                g = got.display().to_string()
            ),
        );
        let mut bystander = std::process::Command::new("python3")
            .arg(sb.join("bystander.py"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Older by more than the clock tick start times are counted in.
        std::thread::sleep(std::time::Duration::from_millis(100));
        profile_with(
            &sb,
            json!({"PreToolUse": [{"id": "handing", "type": "command", "command": format!(
                "echo $$ > {h}; while [ ! -e {g} ]; do sleep 0.05; done{then}",
                h = handler_pid.display(),
                g = got.display(),
                then = if outlives { "; sleep 30" } else { "" }
            ), "timeout": 2}]}),
        );
        let d = run(
            &sb,
            "PreToolUse",
            json!({"tool_name": "exec"}),
            &["--include-untrusted"],
        );
        let survived = bystander.try_wait().unwrap().is_none();
        let _ = bystander.kill();
        let _ = bystander.wait();
        assert!(got.exists(), "the bystander never took the output: {d:#}");
        assert!(
            survived,
            "run killed a process older than the handler: {d:#}"
        );
        assert_eq!(d["handlers"][0]["state"], "timed out", "{d:#}");
        let failure = d["handlers"][0]["decision"]["failure"].as_str().unwrap();
        assert!(
            failure.contains("still held its output open")
                && failure.contains("left running")
                && !failure.contains("it started"),
            "outlives {outlives}: {failure}"
        );
    }
}

/// A handler that moves itself out of its process group (into the group of `run` itself,
/// which it may join: one session) is out of reach of the group kill: `run` waited for it
/// past its timeout, for as long as it lived.
#[cfg(target_os = "linux")]
#[test]
fn a_handler_that_leaves_its_process_group_is_killed_at_its_timeout() {
    let sb = with_workspace();
    let pid = sb.join("pid");
    sb.write(
        "ws/leave.py",
        format!(
            "import os, time\nos.setpgid(0, os.getpgid(os.getppid()))\nopen({:?}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n",
            pid.display().to_string()
        ),
    );
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "leaver", "type": "command", "command": "exec python3 leave.py", "timeout": 2, "failurePolicy": "deny"}]}),
    );
    let start = std::time::Instant::now();
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let took = start.elapsed();
    let left = std::fs::read_to_string(&pid)
        .ok()
        .and_then(|p| p.trim().parse::<u32>().ok());
    let survived = left.is_some_and(alive);
    if let (Some(p), true) = (left, survived) {
        // SAFETY: kill(2) on the pid the test's own handler wrote.
        unsafe {
            libc::kill(p as i32, libc::SIGKILL);
        }
    }
    assert!(left.is_some(), "the handler never ran: {d:#}");
    assert!(
        took < std::time::Duration::from_secs(10),
        "run took {took:?}"
    );
    assert!(!survived, "the handler survived its timeout");
    assert_eq!(d["handlers"][0]["state"], "timed out", "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
}

/// A script that cannot be read (another user's, mode 0600; here a file whose reads fail
/// even for root) made `list`, `trust`, `run` and `doctor` stop with `cannot read …`
/// (exit 3), so no other handler ran and doctor reported nothing. It is that handler's
/// problem: hosts cannot hash it, so it is invalid and skipped, and the others go on.
/// (The file: one of mode 0000, or for root, who reads that, a write-only sysfs attribute,
/// which no one may open to read; `/proc/self/mem` is a script unknown now.)
#[cfg(target_os = "linux")]
#[test]
fn a_script_that_cannot_be_read_is_that_handler_s_problem_alone() {
    use std::os::unix::fs::PermissionsExt as _;
    let sb = Sandbox::new();
    sb.write(
        "ws/ok.sh",
        "echo '{\"decision\": \"block\", \"reason\": \"ok ran\"}'\n",
    );
    sb.write("ws/locked.sh", "true\n");
    let locked = sb.join("ws/locked.sh");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let unreadable = [locked, std::path::PathBuf::from("/sys/bus/pci/rescan")]
        .into_iter()
        .find(|p| p.is_file() && std::fs::File::open(p).is_err());
    let Some(unreadable) = unreadable else {
        eprintln!("skipped: root reads a file of mode 0000, and /sys/bus/pci/rescan is not here");
        return;
    };
    let unreadable = unreadable.display().to_string();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "ok", "type": "command", "command": "sh ok.sh"},
            {"id": "unreadable", "type": "command", "command": format!("sh {unreadable}")}
        ]}),
    );
    let list = in_prof_output(&sb, &["list", "--format", "json"]);
    ok(&list);
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    let bad = &list["handlers"][1];
    assert_eq!(bad["status"], "invalid", "{list:#}");
    let why = bad["problems"][0].as_str().unwrap();
    assert!(
        why.contains(&unreadable) && why.contains("readable"),
        "{why}"
    );
    let trust = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(trust.status.code(), Some(1), "{trust:?}");
    let out = String::from_utf8_lossy(&trust.stdout);
    assert!(out.contains("trusted    PreToolUse ok"), "{out}");
    assert!(out.contains("refused    PreToolUse unreadable"), "{out}");
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert_eq!(d["outcome"]["reason"], "ok ran", "{d:#}");
    assert!(
        d["handlers"][1]["state"]
            .as_str()
            .unwrap()
            .starts_with("skipped: invalid"),
        "{d:#}"
    );
    let doctor = in_prof_output(&sb, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(1), "{doctor:?}");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("handler-invalid") && text.contains(&unreadable),
        "{text}"
    );
}

/// Only the first 1 MiB of a handler's stdout is kept. What followed the cap was dropped
/// and the prefix read as the answer: a block after 1 MiB of blanks became "no decision",
/// under `failurePolicy: deny` too, and a big JSON answer "does not parse (EOF …)" as if
/// the handler had cut it short. An answer over the cap is now a failure that says so.
#[test]
fn an_answer_over_the_output_cap_is_a_failure_that_says_so() {
    let sb = with_workspace();
    let blanks = "head -c 1100000 /dev/zero | tr '\\0' ' '; echo '{\"decision\": \"block\", \"reason\": \"no\"}'";
    let big = "printf '{\"x\": \"'; head -c 1100000 /dev/zero | tr '\\0' x; printf '\"}'";
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "blanks", "type": "command", "command": blanks, "failurePolicy": "deny"},
            {"id": "big", "type": "command", "command": big},
            {"id": "fits", "type": "command", "command": "head -c 1048000 /dev/zero | tr '\\0' ' '; echo '{}'"}
        ]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    for (i, id) in ["blanks", "big"].iter().enumerate() {
        let h = &d["handlers"][i];
        assert_eq!(h["id"], *id, "{d:#}");
        let failure = h["decision"]["failure"].as_str().unwrap_or_default();
        assert!(failure.contains("stdout is over 1 MiB"), "{id}: {d:#}");
    }
    assert_eq!(d["handlers"][2]["decision"], json!({}), "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
}

#[test]
fn answers_are_read_like_a_host() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({
            "PreToolUse": [
                {"id": "bad-json", "type": "command", "command": "echo '{not json'"},
                {"id": "blocks", "type": "command", "command": "echo 'no way' >&2; exit 2"},
                {"id": "crashes", "type": "command", "command": "exit 1", "failurePolicy": "deny"},
                {"id": "crashes-open", "type": "command", "command": "exit 1"}
            ],
            "UserPromptSubmit": [
                {"id": "route-a", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\"a\"}}'"},
                {"id": "route-b", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\"b\"}}'"}
            ],
            "Stop": [
                {"id": "empty-reject", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"decision\":\"reject\",\"reason\":\"\"}}'"},
                {"id": "exit2-stop", "type": "command", "command": "echo x >&2; exit 2"}
            ]
        }),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let by_id = |d: &Value, id: &str| {
        d["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap()
            .clone()
    };
    assert!(by_id(&d, "bad-json")["decision"]["failure"]
        .as_str()
        .unwrap()
        .contains("looks like JSON"));
    assert_eq!(by_id(&d, "blocks")["decision"]["verdict"], "block");
    assert_eq!(by_id(&d, "crashes")["decision"]["verdict"], "deny");
    assert!(by_id(&d, "crashes-open")["decision"]["verdict"].is_null());
    // Deny wins over block.
    assert_eq!(d["outcome"]["verdict"], "deny");
    let d = run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["updated_model"], "b", "the last rewrite wins");
    let d = run(&sb, "Stop", json!({}), &["--include-untrusted"]);
    assert!(d["outcome"]["verdict"].is_null(), "{d:#}");
    assert!(by_id(&d, "empty-reject")["decision"]["failure"]
        .as_str()
        .unwrap()
        .contains("non-empty reason"));
    assert!(by_id(&d, "exit2-stop")["decision"]["failure"]
        .as_str()
        .unwrap()
        .contains("not a Stop reject"));
}

/// Found by review: a gate printing `{"decision": "deny"}` (another CLI's shape) denied
/// nothing, and `run` said only "no decision", even under `failurePolicy: deny`. Hosts do
/// not read it, so neither does `run`, but each field hosts pass over is a warning on that
/// handler's line, with the shape they do read; an answer hosts read in full has none.
#[test]
fn fields_hosts_do_not_read_are_warned_of() {
    let sb = with_workspace();
    let answer = |id: &str, json: &str| json!({"id": id, "type": "command", "failurePolicy": "deny", "command": format!("echo '{json}'")});
    profile_with(
        &sb,
        json!({
            "PreToolUse": [
                answer("top-deny", r#"{"decision":"deny","reason":"no"}"#),
                answer("reason", r#"{"hookSpecificOutput":{"permissionDecision":"ask","reason":"x"}}"#),
                answer("other-event", r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"c"}}"#),
                answer("misspelt", r#"{"hookSpecificOutput":{"permisionDecision":"deny"}}"#),
                answer("read-in-full", r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}"#),
                // Only SessionStart's and PostToolUse's is read (a later sweep).
                answer("context", r#"{"hookSpecificOutput":{"additionalContext":"c"}}"#)
            ],
            "PostToolUse": [
                {"id": "post-context", "type": "command", "command": r#"echo '{"hookSpecificOutput":{"additionalContext":"read"}}'"#}
            ],
            "Stop": [
                {"id": "stop-block", "type": "command", "command": r#"echo '{"hookSpecificOutput":{"decision":"block","reason":"r"}}'"#}
            ]
        }),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let warning = |d: &Value, id: &str| {
        let h = d["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap();
        h["decision"]["warning"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    for (id, says) in [
        ("top-deny", "the top-level \"decision\": \"deny\" is not read: hosts read only \"block\" there on PreToolUse; print {\"hookSpecificOutput\": {\"permissionDecision\": \"deny\"}}"),
        ("reason", "hookSpecificOutput.reason is not read on PreToolUse (did you mean `permissionDecisionReason`?)"),
        ("other-event", "hookSpecificOutput.hookEventName is \"PostToolUse\", but this answers PreToolUse"),
        ("misspelt", "hookSpecificOutput.permisionDecision is not read on PreToolUse (did you mean `permissionDecision`?)"),
        ("context", "hookSpecificOutput.additionalContext is not read on PreToolUse"),
    ] {
        assert!(warning(&d, id).contains(says), "{id}: {d:#}");
    }
    assert_eq!(warning(&d, "read-in-full"), "", "{d:#}");
    assert!(d["outcome"]["additional_context"].is_null(), "{d:#}");
    let post = run(
        &sb,
        "PostToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(post["outcome"]["additional_context"], "read", "{post:#}");
    assert_eq!(warning(&post, "post-context"), "", "{post:#}");
    // As hosts do, the unread deny decides nothing: the ask stands.
    assert_eq!(d["outcome"]["verdict"], "ask", "{d:#}");
    let d = run(&sb, "Stop", json!({}), &["--include-untrusted"]);
    assert!(
        warning(&d, "stop-block").contains(
            "hookSpecificOutput.decision \"block\" is not read: on Stop it is \"reject\""
        ),
        "{d:#}"
    );
}

/// Found by the host-side sweep: a deny beside a lone surrogate escape (`"\udc00"` in its
/// reason) or an unrelated number past f64's range (`1e999`), which `JSON.parse` reads,
/// made the answer a failure, so without `failurePolicy: deny` the call went ahead where a
/// host denies it. The answer is read as `JSON.parse` reads it.
#[test]
fn an_answer_javascript_reads_is_read_as_it_reads_it() {
    let sb = with_workspace();
    for (n, answer) in [
        r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no \udc00"}}"#,
        r#"{"x":1e999,"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}"#,
        r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no \ud800\u0041"}}"#,
    ]
    .into_iter()
    .enumerate()
    {
        sb.write(&format!("ws/a{n}.json"), answer);
        profile_with(
            &sb,
            json!({"PreToolUse": [{"id": "gate", "type": "command", "command": format!("cat a{n}.json")}]}),
        );
        let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &["--include-untrusted"]);
        assert_eq!(d["outcome"]["verdict"], "deny", "{answer}: {d:#}");
        assert!(
            (d["outcome"]["reason"].as_str().unwrap()).starts_with("no"),
            "{answer}: {d:#}"
        );
    }
}

/// Found by the host-side sweep: a payload's `turn` of another type than an object
/// (`null`, `5`) reached the handler as it was, where hosts send an object. It is taken as
/// none (an empty turn is sent), and `run` says so.
#[test]
fn a_payload_turn_that_is_no_object_is_sent_as_an_empty_one() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "t", "type": "command", "command": "cat > stdin.json"}]}),
    );
    for turn in [json!(null), json!(5), json!("x")] {
        sb.write(
            "payload.json",
            json!({"tool_name": "exec", "turn": turn}).to_string(),
        );
        let o = run_output(&sb, "PreToolUse", &["--include-untrusted"]);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("the payload's `turn` is"), "{turn}: {err}");
        let stdin: Value =
            serde_json::from_slice(&std::fs::read(sb.join("ws/stdin.json")).unwrap()).unwrap();
        assert_eq!(stdin["turn"]["tools"], json!([]), "{turn}: {stdin:#}");
    }
}

#[test]
fn secrets_are_stripped_and_host_variables_set() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"SessionStart": [{"id": "env", "type": "command", "command": "echo \"key=${OPENAI_API_KEY:-unset} tok=${GITHUB_TOKEN:-unset} judge=$FINCLAW_HOOK_JUDGE_TOKEN ev=$FINCLAW_HOOK_EVENT root=$FINCLAW_PROFILE_ROOT cwd=$(pwd)\" >&2; cat > stdin.json"}]}),
    );
    let o = sb
        .cmd()
        .env("OPENAI_API_KEY", "sk-secret")
        .env("GITHUB_TOKEN", "ghp_secret")
        .env("FINCLAW_HOOK_JUDGE_TOKEN", "judge")
        .args([
            "run",
            "SessionStart",
            "--include-untrusted",
            "--profile",
            "prof",
            "--workspace",
            "ws",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    ok(&o);
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let stderr = d["handlers"][0]["stderr"].as_str().unwrap().to_string();
    assert!(
        stderr.contains("key=unset tok=unset judge=judge ev=SessionStart"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("root={}", sb.join("prof").display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "cwd={}",
            std::fs::canonicalize(sb.join("ws")).unwrap().display()
        )),
        "{stderr}"
    );
    let stdin: Value =
        serde_json::from_slice(&std::fs::read(sb.join("ws/stdin.json")).unwrap()).unwrap();
    for f in [
        "session_id",
        "turn_id",
        "cwd",
        "hook_event_name",
        "model",
        "permission_mode",
        "transcript_path",
    ] {
        assert!(stdin.get(f).is_some(), "stdin lacks {f}: {stdin}");
    }
}

/// Found by the host-side hostile-input sweep: a handler whose command holds a NUL byte
/// or is past the kernel's argument size, which hosts load but cannot start, was skipped as
/// invalid even under `--include-untrusted`, so a PermissionRequest gave no decision where
/// a host's spawn failure denies (seeds/004). It fails to start, as on a host.
#[test]
fn a_command_hosts_cannot_start_fails_to_start_and_denies_a_permission_request() {
    for command in [
        format!("true #{}", "x".repeat(140_000)),
        "true \u{0}x".to_string(),
    ] {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.join("ws")).unwrap();
        profile_with(
            &sb,
            json!({"PermissionRequest": [{"id": "a", "type": "command", "command": command}]}),
        );
        let d = run(
            &sb,
            "PermissionRequest",
            json!({"tool_name": "exec"}),
            &["--include-untrusted"],
        );
        assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
        assert_eq!(d["handlers"][0]["state"], "not started", "{d:#}");
        // Untrusted (trust refuses it), it is skipped as invalid.
        let d = run(&sb, "PermissionRequest", json!({"tool_name": "exec"}), &[]);
        assert!(
            (d["handlers"][0]["state"].as_str().unwrap()).starts_with("skipped: invalid"),
            "{d:#}"
        );
    }
}

/// `child`'s output once it ends, if within `secs` seconds; else it and the processes
/// whose command line holds `marker` are killed, and the test fails.
#[cfg(target_os = "linux")]
fn output_within(mut child: std::process::Child, secs: u64, marker: &str) -> std::process::Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            for pid in processes_with(marker) {
                // SAFETY: kill(2) on a process this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            panic!("hookpack did not end within {secs} s of the signal");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Waits up to `secs` seconds for a process whose command line holds `marker`.
fn wait_for_process(marker: &str, secs: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while processes_with(marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the handler did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits until no process's command line holds `marker`; past `deadline`, kills those
/// (processes this test started) and fails saying `why`.
#[cfg(target_os = "linux")]
fn gone_by(marker: &str, deadline: std::time::Instant, why: &str) {
    while !processes_with(marker).is_empty() {
        if std::time::Instant::now() > deadline {
            for pid in processes_with(marker) {
                // SAFETY: kill(2) on a process this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            panic!("{why}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The pids of the processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Found by the host-side hostile-input sweep: a Ctrl-C (or SIGTERM, SIGHUP) of `run`
/// ended hookpack but not its handler, which runs in a process group of its own, out of
/// the terminal's reach: it ran on for as long as it liked. The handler is killed, `run`
/// says so, and ends by the same signal.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_run_kills_the_handler_it_was_running() {
    use std::os::unix::process::ExitStatusExt as _;
    // The third moves to a session of its own, out of the group's reach, holding the
    // handler's output (the review found the interrupt waited out the timeout for such a
    // one). The last starts a child in a session of its own holding nothing (a later
    // review found it survived the interrupt, which killed the handler's group first, so
    // the child was no longer its descendant when its tree was looked for; a timeout
    // killed it).
    for (sig, name, kind) in [
        (libc::SIGINT, "SIGINT", 0u8),
        (libc::SIGTERM, "SIGTERM", 0),
        (libc::SIGINT, "SIGINT", 1),
        (libc::SIGTERM, "SIGTERM", 2),
    ] {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.join("ws")).unwrap();
        let marker = format!("987.{}{sig}{kind}", std::process::id());
        let command = match kind {
            0 => format!("sleep {marker}"),
            // With `; true` after it the shell forks python rather than becoming it: the
            // group's leader may not call setsid (the test passed only where python3 was
            // pyenv's shim, a shell script, which forked it).
            1 => {
                format!("python3 -c 'import os, time; os.setsid(); time.sleep(600)' {marker}; true")
            }
            _ => format!("setsid sleep {marker} </dev/null >/dev/null 2>&1 & sleep 600"),
        };
        profile_with(
            &sb,
            json!({"PreToolUse": [{"id": "slow", "type": "command", "command": command, "timeout": 600}]}),
        );
        sb.write("payload.json", r#"{"tool_name": "exec"}"#);
        let child = with_default_signals(&mut sb.std_cmd())
            .args([
                "run",
                "PreToolUse",
                "--payload",
                "payload.json",
                "--profile",
                "prof",
            ])
            .args(["--workspace", "ws", "--include-untrusted"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The process given the marker as an argument, not the shell whose command names
        // it: the one to outlive the interrupt has started.
        wait_for_process(&format!("\0{marker}"), 10);
        // SAFETY: kill(2) on the hookpack this test started.
        unsafe { libc::kill(child.id() as i32, sig) };
        let o = output_within(child, 10, &marker);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.signal(), Some(sig), "{err}");
        assert!(
            err.contains(&format!(
                "error: interrupted by {name}; the handler that was running was killed"
            )),
            "{err}"
        );
        gone_by(
            &marker,
            std::time::Instant::now() + std::time::Duration::from_secs(5),
            &format!("{name}: the handler was left running"),
        );
    }
}

/// Found by a review: with the first signal left to the thread waiting for the handler, a
/// second one right after it (Ctrl-C twice; a closed terminal sends SIGHUP twice) ended
/// `run` at once and left the handler running. The second signal kills the handler's
/// group before it ends the command.
#[cfg(target_os = "linux")]
#[test]
fn a_second_signal_right_after_the_first_still_kills_the_handler() {
    use std::os::unix::process::ExitStatusExt as _;
    for round in 0..3 {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.join("ws")).unwrap();
        let marker = format!("988.{}{round}", std::process::id());
        profile_with(
            &sb,
            json!({"PreToolUse": [{"id": "slow", "type": "command", "command": format!("sleep {marker}"), "timeout": 600}]}),
        );
        sb.write("payload.json", r#"{"tool_name": "exec"}"#);
        let child = with_default_signals(&mut sb.std_cmd())
            .args(["run", "PreToolUse", "--payload", "payload.json"])
            .args([
                "--profile",
                "prof",
                "--workspace",
                "ws",
                "--include-untrusted",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_process(&format!("\0{marker}"), 10);
        // SAFETY: kill(2) on the hookpack this test started, twice.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
            libc::kill(child.id() as i32, libc::SIGHUP);
        }
        let o = output_within(child, 10, &marker);
        assert!(o.status.signal().is_some(), "{o:?}");
        gone_by(
            &marker,
            std::time::Instant::now() + std::time::Duration::from_secs(5),
            "a second signal left the handler running",
        );
    }
}

/// The same for `test`: the case's handler is killed, and the temporary folders of the
/// assembled recipe and of the case are removed before it ends by the signal.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_test_kills_its_handler_and_removes_its_folders() {
    use std::os::unix::process::ExitStatusExt as _;
    let sb = Sandbox::new();
    let mut m = manifest("slow");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(600);
    write_recipe(&sb, "slow", &m);
    sb.write("slow/scripts/main.js", "setTimeout(() => {}, 600000);\n");
    sb.write(
        "slow/tests/waits.json",
        r#"{"name": "waits", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "expect": {"decision": "none"}}"#,
    );
    std::fs::create_dir_all(sb.join("tmp")).unwrap();
    let marker = sb.join("slow/scripts/main.js").display().to_string();
    let child = with_default_signals(&mut sb.std_cmd())
        .args(["test", "slow"])
        .env("TMPDIR", sb.join("tmp"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_process(&marker, 20);
    // SAFETY: kill(2) on the hookpack this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = output_within(child, 10, &marker);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGTERM), "{err}");
    assert!(err.contains("error: interrupted by SIGTERM"), "{err}");
    assert!(
        processes_with(&marker).is_empty(),
        "the handler was left running"
    );
    assert_eq!(
        std::fs::read_dir(sb.join("tmp")).unwrap().count(),
        0,
        "temporary folders left"
    );
}

/// A signal to `test` while no handler ran (here, while it assembled the second recipe)
/// ended it at once, leaving that recipe's temporary folder behind. It is now recorded,
/// and `test` stops before the next handler, removing its folders, and ends by the signal.
#[cfg(target_os = "linux")]
#[test]
fn a_test_interrupted_between_handlers_removes_its_folders() {
    use std::os::unix::process::ExitStatusExt as _;
    let sb = Sandbox::new();
    write_recipe(&sb, "first", &manifest("first"));
    sb.write(
        "first/scripts/main.js",
        "import('node:fs').then((fs) => fs.writeFileSync(process.env.MARK, 'ran'));\n",
    );
    let mark = sb.join("first-ran");
    sb.write(
        "first/tests/marks.json",
        serde_json::to_vec(&json!({
            "name": "marks", "event": "PreToolUse", "payload": {"tool_name": "exec"},
            "env": {"MARK": mark}, "expect": {"decision": "none"}
        }))
        .unwrap(),
    );
    // TypeScript that takes a while to compile: the signal comes while it does.
    write_ts_recipe(&sb, ".", "big");
    let mut main = String::new();
    for k in 0..4 {
        let mut part = String::new();
        for i in 0..9000 {
            part.push_str(&format!(
                "export function f{i}(a: number, b: string): string {{ return b + (a * {i}).toString(); }}\n"
            ));
        }
        sb.write(&format!("big/src/m{k}.ts"), part);
        main.push_str(&format!(
            "import {{ f1 as g{k} }} from \"./m{k}.ts\";\nvoid g{k};\n"
        ));
    }
    sb.write("big/src/main.ts", main + "process.exit(0);\n");
    sb.write(
        "big/tests/none.json",
        r#"{"name": "none", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "expect": {"decision": "none"}}"#,
    );
    std::fs::create_dir_all(sb.join("tmp")).unwrap();
    let child = with_default_signals(&mut sb.std_cmd())
        .args(["test", "first", "big"])
        .env("TMPDIR", sb.join("tmp"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let assembling = || -> Vec<std::ffi::OsString> {
        (std::fs::read_dir(sb.join("tmp")).unwrap())
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with("hookpack-assembled-"))
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !mark.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first case never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The first recipe's assembled folder is there now; the signal goes once the second
    // one's is, while it compiles, with no handler running.
    let first = assembling();
    while assembling().iter().all(|n| first.contains(n)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the second recipe was never assembled"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the hookpack this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = output_within(child, 60, "big/src");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGINT), "{err}");
    assert!(
        err.contains(
            "error: interrupted by SIGINT; it came between handlers, and the command stopped there"
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(sb.join("tmp")).unwrap().count(),
        0,
        "temporary folders left"
    );
}

/// Found by the host-side hostile-input sweep: `run` sent no `turn` on the events hosts
/// send one on (seeds/004: UserPromptSubmit, PreToolUse, PostToolUse, Stop), and passed a
/// payload's `turn` on past the hosts' caps (8192 bytes of text, 32 tools, 1024 bytes a
/// summary), so a handler reading it saw a stdin no host sends. `run` and `test` send
/// what a host does, and `run` says what it cut.
#[test]
fn the_turn_object_is_sent_and_cut_as_hosts_do() {
    let sb = with_workspace();
    let handler = json!([{"id": "t", "type": "command", "command": "cat > stdin.json"}]);
    profile_with(
        &sb,
        json!({"Stop": handler, "UserPromptSubmit": handler, "SessionEnd": handler}),
    );
    let stdin = || -> Value {
        serde_json::from_slice(&std::fs::read(sb.join("ws/stdin.json")).unwrap()).unwrap()
    };
    run(&sb, "Stop", json!({}), &["--include-untrusted"]);
    assert_eq!(
        stdin()["turn"],
        json!({"user_text": "", "assistant_text": null, "tools": []})
    );
    run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    assert_eq!(stdin()["turn"]["user_text"], "hi");
    // The prompt is sent whole; in the turn it is cut as hosts cut it (found by review).
    let long = "p".repeat(9000);
    run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": long}),
        &["--include-untrusted"],
    );
    assert_eq!(stdin()["prompt"].as_str().unwrap().len(), 9000);
    assert_eq!(stdin()["turn"]["user_text"].as_str().unwrap().len(), 8192);
    run(&sb, "SessionEnd", json!({}), &["--include-untrusted"]);
    assert!(stdin().get("turn").is_none(), "{}", stdin());

    // Over the caps: the text cut at a character boundary, the oldest tools dropped.
    let tools: Vec<Value> = (0..40)
        .map(|i| json!({"name": format!("t{i}"), "input_summary": "é".repeat(600), "result_summary": "ok"}))
        .collect();
    let payload = json!({"turn": {"user_text": "x".repeat(9000), "assistant_text": "é".repeat(5000), "tools": tools}});
    sb.write("payload.json", payload.to_string());
    let o = sb
        .cmd()
        .args([
            "run",
            "Stop",
            "--payload",
            "payload.json",
            "--profile",
            "prof",
        ])
        .args(["--workspace", "ws", "--include-untrusted"])
        .output()
        .unwrap();
    ok(&o);
    let turn = stdin()["turn"].clone();
    assert_eq!(turn["user_text"].as_str().unwrap().len(), 8192);
    assert_eq!(turn["assistant_text"].as_str().unwrap().len(), 8192);
    let tools = turn["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 32);
    assert_eq!(tools[0]["name"], "t8");
    assert_eq!(tools[0]["input_summary"].as_str().unwrap().len(), 1024);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "note: the payload's `turn` was cut as hosts cut it before sending: `turn.user_text` \
             to 8192 bytes, `turn.assistant_text` to 8192 bytes, `turn.tools` to the newest 32 \
             (8 dropped), 32 tool summaries to 1024 bytes"
        ),
        "{err}"
    );
}

#[test]
fn trust_lifecycle_and_matchers() {
    let sb = with_workspace();
    sb.write(
        "prof/scripts/gate.sh",
        "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'\n",
    );
    let script = sb.join("prof/scripts/gate.sh");
    sb.write(
        "prof/hooks.json",
        serde_json::to_vec_pretty(&json!({"hooks": {
            "PreToolUse": [
                {"matcher": "exec", "hooks": [{"id": "gate", "type": "command", "command": format!("bash {}", script.display())}]},
                {"matcher": "(", "hooks": [{"id": "broken", "type": "command", "command": "true"}]},
                {"matcher": "write_file", "hooks": [{"id": "gone", "type": "command", "command": "node /nowhere/x.js"}]},
                {"matcher": "exec", "hooks": [{"id": "odd", "type": "command", "command": "true", "x-custom": 1}]}
            ]
        }}))
        .unwrap(),
    );
    let list = |sb: &Sandbox| -> Vec<(String, String)> {
        list_json(sb)["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["id"].as_str().unwrap().to_string(),
                    h["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(
        list(&sb),
        [
            ("gate".into(), "untrusted".into()),
            ("broken".into(), "invalid".into()),
            ("gone".into(), "script-missing".into()),
            // Hosts skip a handler with a field they do not know (found by review: it
            // was listed, trusted and run as if it were fine).
            ("odd".into(), "invalid".into())
        ]
    );
    // Untrusted handlers do not run.
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(d["outcome"]["verdict"].is_null());
    // Trusting all trusts only what can be trusted, prints hashes, and exits 1 for the rest.
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("trusted    PreToolUse gate ")
            && text.contains("refused    PreToolUse broken ")
            && text.contains("#id:broken): invalid")
            && text.contains("#id:gone): its script is missing"),
        "{text}"
    );
    assert_eq!(list(&sb)[0].1, "trusted");
    assert_eq!(list(&sb)[3].1, "invalid");
    // The matcher is a whole-string regex on the tool name.
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert_eq!(d["outcome"]["verdict"], "ask");
    let odd = (d["handlers"].as_array().unwrap().iter())
        .find(|h| h["id"] == "odd")
        .unwrap();
    assert!(
        odd["state"]
            .as_str()
            .unwrap()
            .starts_with("skipped: invalid (unknown handler field `x-custom`"),
        "{odd}"
    );
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec2"}), &[]);
    assert!(d["outcome"]["verdict"].is_null());
    assert_eq!(d["handlers"][0]["state"], "skipped: matcher does not match");
    // Editing the script flips it to modified, and it stops running.
    std::fs::write(
        &script,
        "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'\n",
    )
    .unwrap();
    assert_eq!(list(&sb)[0].1, "modified");
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(d["outcome"]["verdict"].is_null());
    // Adding a handler before it does not disturb its trust (keyed by id, not position).
    in_prof(&sb, &["trust", "gate"]);
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(sb.join("prof/hooks.json")).unwrap()).unwrap();
    doc["hooks"]["PreToolUse"].as_array_mut().unwrap().insert(
        0,
        json!({"hooks": [{"id": "new", "type": "command", "command": "true"}]}),
    );
    std::fs::write(
        sb.join("prof/hooks.json"),
        serde_json::to_vec(&doc).unwrap(),
    )
    .unwrap();
    assert!(list(&sb).contains(&("gate".to_string(), "trusted".to_string())));
    // Revoke.
    in_prof(&sb, &["revoke", "gate"]);
    assert!(list(&sb).contains(&("gate".to_string(), "untrusted".to_string())));
    let o = sb
        .cmd()
        .args(["trust", "nope", "--profile", "prof"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let trust: Value =
        serde_json::from_slice(&std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap())
            .unwrap();
    assert_eq!(trust["schema"], "hookpack.trust.v1");
}

/// Runs hookpack with `args` on the profile `prof` and the workspace `ws`; it must succeed.
/// Found by review: a handler of the user's own that runs a script without an execute bit
/// fails every time (exit 126), and doctor said "no problems". It names the script, the fix
/// and, for a `failurePolicy: deny` gate, that every call is denied.
#[cfg(unix)]
#[test]
fn doctor_names_a_script_run_directly_that_is_not_executable() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    sb.write("gate.sh", "#!/bin/sh\necho {}\n");
    let gate = sb.join("gate.sh");
    let gate_text = gate.display().to_string();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"type": "command", "id": "gate", "failurePolicy": "deny", "command": gate_text},
            {"type": "command", "id": "by-sh", "command": format!("sh {gate_text}")}
        ]}),
    );
    let mode = |m: u32| std::fs::set_permissions(&gate, std::fs::Permissions::from_mode(m));
    mode(0o644).unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("script-not-executable"))
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    for says in [
        "/hooks/PreToolUse/0/hooks/0",
        "no execute bit",
        "denies every call",
        &format!("`sh {gate_text}`"),
    ] {
        assert!(lines[0].contains(says), "{says}: {out}");
    }
    mode(0o755).unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("script-not-executable"), "{out}");
}

/// Found by a review: doctor said "no problems" of a profile whose hooks.json gives a
/// `UserPromptSubmit` group a `matcher` (hosts ignore it and run the group on every prompt),
/// or a workspace handler whose command has an unclosed quote (the shell fails it on every
/// run), though `validate` of the same files warns of both. Doctor reports what validate
/// warns of, at its line, column and pointer: the matcher as a warning, the command that
/// fails every run as an error.
#[test]
fn doctor_reports_what_validate_warns_of_in_hooks_json() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        "{\"hooks\": {\"UserPromptSubmit\": [\n  {\"matcher\": \"Bash\",\n   \"hooks\": \
         [{\"type\": \"command\", \"id\": \"p\", \"command\": \"true\"}]}]}}\n",
    );
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec_pretty(&json!({"hooks": {"PreToolUse": [
            {"hooks": [{"type": "command", "id": "q", "command": "echo \"x"}]}
        ]}}))
        .unwrap(),
    );
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    // The unclosed quote is an error (a later review: the handler fails every run, and
    // blocks every call on PreToolUse); the ignored matcher a warning.
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = |code: &str| {
        let found: Vec<&str> = out.lines().filter(|l| l.contains(code)).collect();
        assert_eq!(found.len(), 1, "{code}: {out}");
        found[0].to_string()
    };
    let ignored = line("warning[matcher-ignored]");
    assert!(
        ignored.contains("prof/hooks.json:2:15: ")
            && ignored.contains("(at /hooks/UserPromptSubmit/0/matcher)"),
        "{ignored}"
    );
    let unparsable = line("error[command-unparsable]");
    assert!(
        unparsable.contains("ws/.finclaw/hooks.json:")
            && unparsable.contains("(at /hooks/PreToolUse/0/hooks/0/command)"),
        "{unparsable}"
    );
    let o = in_prof_output(&sb, &["doctor", "--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let warned = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "warning")
        .count();
    assert_eq!(warned, 1, "{report:#}");

    // A handler hosts skip (an unknown field) is named once, not also in a warning; a
    // config.yaml install would stop on is named too.
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec_pretty(&json!({"hooks": {"PreToolUse": [
            {"hooks": [{"type": "command", "id": "q", "command": "true", "bogus": 1}]}
        ]}}))
        .unwrap(),
    );
    std::fs::create_dir_all(sb.join("prof/config.yaml")).unwrap();
    let o = in_prof_output(&sb, &["doctor", "--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&str> = (report["problems"].as_array().unwrap().iter())
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "handler-invalid").count(),
        1,
        "{report:#}"
    );
    assert!(!codes.contains(&"unknown-field"), "{report:#}");
    assert!(codes.contains(&"config-invalid"), "{report:#}");
}

fn in_prof(sb: &Sandbox, args: &[&str]) {
    ok(&in_prof_output(sb, args));
}

/// Runs hookpack with `args` on the profile `prof` and the workspace `ws`, whatever it exits.
fn in_prof_output(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.cmd()
        .args(args)
        .args(["--profile", "prof", "--workspace", "ws"])
        .output()
        .unwrap()
}

/// [`in_prof_output`] with `stdin` on standard input (a payload given as `--payload -`).
fn in_prof_with_stdin(
    sb: &Sandbox,
    args: &[&str],
    stdin: impl Into<Vec<u8>>,
) -> std::process::Output {
    sb.cmd()
        .args(args)
        .args(["--profile", "prof", "--workspace", "ws"])
        .write_stdin(stdin)
        .output()
        .unwrap()
}

#[test]
fn installed_recipes_run_after_trust() {
    let sb = with_workspace();
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "secret-guard", "--profile", "prof"])
        .output()
        .unwrap());
    in_prof(&sb, &["trust", "--recipe", "tool-gate"]);
    let rm_rf = |sb: &Sandbox| {
        run(
            sb,
            "PreToolUse",
            json!({"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}),
            &[],
        )
    };
    let d = rm_rf(&sb);
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    let states: Vec<&str> = d["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["state"].as_str().unwrap())
        .collect();
    assert_eq!(states[0], "ran");
    assert!(states[1].starts_with("skipped: untrusted"), "{states:?}");

    // Removing the recipe drops its trust: doctor finds nothing dangling, and a reinstall
    // starts untrusted.
    let trust_file = sb.join("finclaw-home/hooks-trust.json");
    let trusted = |sb: &Sandbox| {
        read_json(&sb.join("finclaw-home/hooks-trust.json"))["handlers"]
            .as_object()
            .map_or(0, |m| m.len())
    };
    assert!(trust_file.is_file() && trusted(&sb) > 0);
    ok(&sb
        .cmd()
        .args(["remove", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap());
    assert_eq!(trusted(&sb), 0);
    in_prof(&sb, &["doctor"]);
    install_at(&sb, "tool-gate");
    let d = rm_rf(&sb);
    assert!(
        d["handlers"].as_array().unwrap().iter().all(|h| h["state"]
            .as_str()
            .unwrap()
            .starts_with("skipped: untrusted")),
        "{d:#}"
    );
}

#[test]
fn doctor_finds_damage_and_fixes_what_is_safe() {
    let sb = with_workspace();
    ok(&sb
        .cmd()
        .args([
            "install",
            "tool-gate",
            "turn-review",
            "audit-log",
            "--profile",
            "prof",
        ])
        .output()
        .unwrap());
    in_prof(&sb, &["trust", "--all"]);
    in_prof(&sb, &["doctor"]);
    // Damage by hand.
    std::fs::remove_dir_all(sb.join("prof/hooks/turn-review")).unwrap();
    std::fs::remove_file(sb.join("prof/hooks/.receipts/audit-log.json")).unwrap();
    std::fs::write(sb.join("prof/hooks/tool-gate/rules.json"), "{}").unwrap();
    std::fs::write(sb.join("prof/hooks/tool-gate/extra.txt"), "x").unwrap();
    std::fs::create_dir_all(sb.join("prof/.hookpack-staging/999999-leftover/x")).unwrap();
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(sb.join("prof/hooks.json")).unwrap()).unwrap();
    doc["hooks"]["PreToolUse"][0]["matcher"] = json!("exec(");
    doc["hooks"].as_object_mut().unwrap().remove("Stop");
    std::fs::write(
        sb.join("prof/hooks.json"),
        serde_json::to_vec_pretty(&doc).unwrap(),
    )
    .unwrap();
    let check = |fix: bool| -> (i32, Value) {
        let mut c = sb.cmd();
        c.args([
            "doctor",
            "--profile",
            "prof",
            "--workspace",
            "ws",
            "--format",
            "json",
        ]);
        if fix {
            c.arg("--fix");
        }
        let o = c.output().unwrap();
        (
            o.status.code().unwrap(),
            serde_json::from_slice(&o.stdout).unwrap(),
        )
    };
    let (code, r) = check(false);
    assert_eq!(code, 1);
    let codes: Vec<&str> = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    for want in [
        "staging-leftover",
        "handler-invalid",
        "receipt-missing",
        "recipe-folder-missing",
        "entries-missing",
        "tree-modified",
        "tree-extra-file",
        "trust-dangling",
    ] {
        assert!(codes.contains(&want), "missing {want}: {codes:?}");
    }
    let (code, r) = check(true);
    assert_eq!(code, 1, "unsafe problems remain");
    let fixed = r["fixed"].as_array().unwrap();
    assert!(fixed
        .iter()
        .any(|f| f.as_str().unwrap().contains("staging leftovers")));
    assert!(fixed
        .iter()
        .any(|f| f.as_str().unwrap().contains("removed the trust entry")));
    assert!(!Path::new(&sb.join("prof/.hookpack-staging/999999-leftover")).exists());
    let codes: Vec<&str> = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes.contains(&"staging-leftover") && !codes.contains(&"trust-dangling"),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"tree-modified"),
        "doctor --fix must not touch installed files"
    );
    // In text, --fix says why problems remain rather than only repeating them.
    let o = in_prof_output(&sb, &["doctor", "--fix"]);
    assert_eq!(o.status.code(), Some(1));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("--fix removes only what is safe"), "{said}");
}

/// Installs `spec` (`ID` or `ID@VERSION`) from the built-in catalog into `prof`.
/// A sandbox with the folder `ws` and tool-gate installed in the profile `prof`.
fn with_tool_gate() -> Sandbox {
    let sb = with_workspace();
    install_at(&sb, "tool-gate");
    sb
}

fn install_at(sb: &Sandbox, spec: &str) {
    ok(&sb
        .cmd()
        .args(["install", spec, "--profile", "prof"])
        .output()
        .unwrap());
}

/// doctor's advice restores an older version as installed: `install ID` alone would install
/// the newest, which is refused over files the user changed (found by a new-user
/// walk-through).
#[test]
fn doctor_names_the_installed_version_to_restore() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    install_at(&sb, "tool-gate@0.1.0");
    let main_js = sb.join("prof/hooks/tool-gate/scripts/main.js");
    let original = std::fs::read(&main_js).unwrap();
    std::fs::write(&main_js, "process.exit(0);\n").unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "`hookpack install tool-gate@0.1.0{p}` restores it"
        )),
        "{said}"
    );
    // Pinned to that version already, the advice changes no pin, and says none; so for
    // the pin written as the range `=0.1.0`.
    assert!(!said.contains("pins"), "{said}");
    install_at(&sb, "tool-gate@=0.1.0");
    std::fs::write(&main_js, "process.exit(0);\n").unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("restores it"), "{said}");
    assert!(!said.contains("pins"), "{said}");
    install_at(&sb, "tool-gate@0.1.0");
    assert_eq!(std::fs::read(&main_js).unwrap(), original);
    assert_eq!(in_prof_output(&sb, &["doctor"]).status.code(), Some(0));
    // Without its receipt, the version comes from the folder's recipe.json (found by the
    // review of this change).
    std::fs::remove_file(sb.join("prof/hooks/.receipts/tool-gate.json")).unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("receipt-missing")
            && said.contains(&format!("`hookpack install tool-gate@0.1.0{p}`"))
            && said.contains(&format!(
                "adding the `--index` it came from if that is not the default (with no \
                 receipt, hookpack cannot tell where it came from; for one installed from an \
                 archive, `hookpack install --archive FILE --sha256 HEX{p}`)"
            )),
        "{said}"
    );
    install_at(&sb, "tool-gate@0.1.0");
    assert_eq!(in_prof_output(&sb, &["doctor"]).status.code(), Some(0));
}

/// Found by a README walk-through: doctor's findings in a hooks.json gave only the JSON
/// pointer, where `validate` gives `file:line:col` for the same problem. They carry the
/// line and column of the spot too.
#[test]
fn doctor_gives_the_line_and_column_of_a_problem_in_hooks_json() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        "{\"hooks\": {\"Stop\": [{\"hooks\": [\n  {\"type\": \"command\", \"command\": \"echo {}\", \"timeoutMs\": 5}]}]}}\n",
    );
    let o = sb
        .cmd()
        .args(["doctor", "--profile", "prof"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("prof/hooks.json:2:3: error[handler-invalid]"),
        "{err}"
    );
}

/// One handler of an installed recipe deleted from hooks.json (audit-log's SessionEnd, its
/// other handler left): doctor said "no problems" while hosts never ran it and `install
/// audit-log@VERSION` called it damage (`repair`, `entries-differ`). Found by a new-user
/// walk-through of the README, which says doctor reports receipts whose entries are gone.
#[test]
fn doctor_reports_a_recipe_handler_deleted_from_hooks_json() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    install_at(&sb, "audit-log");
    let hooks = sb.join("prof/hooks.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&hooks).unwrap()).unwrap();
    doc["hooks"].as_object_mut().unwrap().remove("SessionEnd");
    std::fs::write(&hooks, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let o = in_prof_output(&sb, &["doctor", "--format", "json"]);
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{r}");
    let problems = r["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{r}");
    assert_eq!(problems[0]["code"], "entries-missing");
    let message = problems[0]["message"].as_str().unwrap();
    assert!(
        message.contains("`audit-session-end` (SessionEnd)")
            && message.contains(&format!("`hookpack install audit-log@0.2.9{p}` puts"))
            && !message.contains("audit-tool-call"),
        "{message}"
    );
    // The command it names puts the handler back, and doctor is then content.
    install_at(&sb, "audit-log@0.2.9");
    let back: Value = serde_json::from_slice(&std::fs::read(&hooks).unwrap()).unwrap();
    assert_eq!(
        back["hooks"]["SessionEnd"][0]["hooks"][0]["id"],
        "audit-session-end"
    );
    assert_eq!(in_prof_output(&sb, &["doctor"]).status.code(), Some(0));
}

/// Installed within a range, the advice's `@VERSION` would replace the user's pin: it says
/// so, and how to put the range back.
#[test]
fn doctor_says_its_advice_replaces_a_range_pin() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    install_at(&sb, "tool-gate@^0.1");
    std::fs::write(sb.join("prof/hooks/tool-gate/scripts/main.js"), "//\n").unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!(
            "`hookpack install tool-gate@0.1.0{p}` restores it (that pins `tool-gate` to 0.1.0 \
             in place of `^0.1`; `hookpack install 'tool-gate@^0.1'{p}` then records your pin \
             again, and takes the newest version it allows)"
        )),
        "{said}"
    );
}

/// The command that puts a range pin back is quoted for the shell: unquoted, the `>` of
/// `>=0.1, <0.2` redirected the output to a file `=0.1,` and installed `tool-gate@`.
#[test]
fn doctor_quotes_the_range_pin_it_puts_back() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    install_at(&sb, "tool-gate@>=0.1, <0.2");
    std::fs::write(sb.join("prof/hooks/tool-gate/scripts/main.js"), "//\n").unwrap();
    let o = in_prof_output(&sb, &["doctor"]);
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(&format!(
            "`hookpack install 'tool-gate@>=0.1, <0.2'{p}` then records your pin again"
        )),
        "{said}"
    );
}

/// Found by a new-user walk-through: doctor said "`hookpack install ID` restores it", and
/// install answered "already installed" without looking at the installed files.
#[test]
fn install_repairs_what_doctor_reports_and_trust_comes_back() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "audit-log", "--profile", "prof"])
        .output()
        .unwrap());
    in_prof(&sb, &["trust", "--all"]);
    let doctor = || in_prof_output(&sb, &["doctor"]);
    let install = |dry_run: bool| {
        let mut c = sb.cmd();
        c.args(["install", "tool-gate", "audit-log", "--profile", "prof"]);
        if dry_run {
            c.arg("--dry-run");
        }
        let o = c.output().unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let main_js = sb.join("prof/hooks/tool-gate/scripts/main.js");
    let original = std::fs::read(&main_js).unwrap();
    std::fs::write(&main_js, "process.exit(0);\n").unwrap();
    std::fs::write(sb.join("prof/hooks/tool-gate/extra.txt"), "x").unwrap();
    std::fs::remove_dir_all(sb.join("prof/hooks/audit-log")).unwrap();
    let o = doctor();
    assert_eq!(o.status.code(), Some(1));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains(&format!(
            "`hookpack install tool-gate@0.4.7{p}` restores it"
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "`hookpack install audit-log@0.2.9{p}` restores it"
        )),
        "{said}"
    );
    // Installed without a pin, the `@VERSION` of the advice would pin them: it says so.
    for (id, v) in [("tool-gate", "0.4.7"), ("audit-log", "0.2.9")] {
        assert!(
            said.contains(&format!(
                "(that pins `{id}` to {v}, where `update` then leaves it; a later `hookpack \
                 install {id}{p}` lifts the pin)"
            )),
            "{said}"
        );
    }

    let before = std::fs::read(&main_js).unwrap();
    let planned = install(true);
    assert!(
        planned.contains("would repair  tool-gate 0.4.7 (its installed files differed"),
        "{planned}"
    );
    assert!(planned.contains("would repair  audit-log"), "{planned}");
    assert_eq!(std::fs::read(&main_js).unwrap(), before, "dry run wrote");

    let done = install(false);
    assert!(done.contains("repair  tool-gate 0.4.7"), "{done}");
    assert_eq!(std::fs::read(&main_js).unwrap(), original);
    assert!(!sb.join("prof/hooks/tool-gate/extra.txt").exists());
    assert!(sb.join("prof/hooks/audit-log/scripts/main.js").is_file());
    ok(&doctor());
    // The same bytes hash the same: the handlers trusted before the damage are trusted.
    let listed = list_json(&sb);
    let statuses: Vec<&str> = listed["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap())
        .collect();
    assert!(
        !statuses.is_empty() && statuses.iter().all(|s| *s == "trusted"),
        "{listed:#}"
    );
    assert!(install(false).contains("ok      tool-gate 0.4.7 (already installed)"));
    assert!(install(true).contains("would leave   tool-gate 0.4.7 (already installed; nothing"));

    // hooks.json entries the user deleted come back the same way.
    let hooks_json = sb.join("prof/hooks.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&hooks_json).unwrap()).unwrap();
    doc["hooks"].as_object_mut().unwrap().remove("PreToolUse");
    std::fs::write(&hooks_json, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert!(install(false).contains("repair  tool-gate 0.4.7 (its hooks.json entries differed"));
    ok(&doctor());
}

/// Found by a new-user walk-through: `update` printed only the version change, and the
/// gate the user had trusted silently stopped running (status `modified`).
#[test]
fn an_update_that_changes_trusted_handlers_says_so() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    // Installed when 0.1.0 was the newest: `install tool-gate@0.1.0` would pin it, and
    // `update` would leave it.
    let o = install_older_unpinned(&sb, "prof", "tool-gate", "0.1.0");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(!said.contains("note:"), "nothing was trusted yet: {said}");
    in_prof(&sb, &["trust", "--all"]);
    let o = sb
        .cmd()
        .args(["update", "--profile", "prof"])
        .output()
        .unwrap();
    ok(&o);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("handler(s) of tool-gate that you trusted changed with this version")
            && said.contains(&format!("`hookpack trust --recipe tool-gate{p}`")),
        "{said}"
    );
    in_prof(&sb, &["trust", "--recipe", "tool-gate"]);
    let o = sb
        .cmd()
        .args(["install", "tool-gate@0.1.0", "--profile", "prof"])
        .output()
        .unwrap();
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("note: "));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("downgrade tool-gate 0.4.7 -> 0.1.0"),
        "{o:?}"
    );
}

/// Found by the user-flow sweep: a `hooks.json` nested past hookpack's limit was called
/// "not valid JSON … hosts cannot use it either", though it is valid JSON a host may read.
/// The same holds for one of more values than hookpack reads (the network sweep's cap).
#[test]
fn a_hooks_json_nested_too_deep_is_not_called_invalid() {
    let sb = Sandbox::new();
    let deep = format!(
        "{{\"hooks\": {{}}, \"x\": {}{}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let large = format!(
        "{{\"hooks\": {{}}, \"x\": [{}]}}",
        vec!["0"; 1_000_001].join(",")
    );
    // Found by a hostile sweep: a lone surrogate escape, which JSON.parse reads.
    let surrogate = "{\"hooks\": {}, \"s\": \"\\udc00\"}".to_string();
    for (doc, said) in [
        (&deep, "it is nested deeper than hookpack reads"),
        (&large, "it holds more values than hookpack reads"),
        (
            &surrogate,
            "it holds a lone surrogate escape, which JSON's grammar allows",
        ),
    ] {
        sb.write("prof/hooks.json", doc);
        for args in [&["list"][..], &["install", "tool-gate"][..]] {
            let o = sb
                .cmd()
                .args(args)
                .args(["--profile", "prof"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(said), "{args:?}: {err}");
            assert!(
                !err.contains("not valid JSON") && !err.contains("hosts cannot use it"),
                "{args:?}: {err}"
            );
        }
        assert_eq!(
            &std::fs::read_to_string(sb.join("prof/hooks.json")).unwrap(),
            doc
        );
    }
}

#[test]
fn a_hooks_json_that_cannot_be_read_is_reported_and_no_trust_is_lost() {
    // Found by review: list, run, trust and doctor said "refusing to rewrite" a file they
    // only read, and doctor stopped there instead of reporting it.
    let sb = with_workspace();
    install_and_trust_tool_gate(&sb, "prof");
    let trust_before = std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap();
    sb.write("prof/hooks.json", "{\"hooks\": {\"Stop\": [}\n");
    let at = "prof/hooks.json: it is not valid JSON (1:21: ";
    for args in [
        &["list"][..],
        &["run", "Stop", "--payload", "payload.json"],
        &["trust", "--all"],
    ] {
        sb.write("payload.json", "{}");
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} {err}");
        assert!(
            err.contains("error: cannot read ") && err.contains(at),
            "{args:?} {err}"
        );
        assert!(err.contains("fix it (hosts cannot use it either)"), "{err}");
        assert!(!err.contains("rewrite"), "{err}");
    }
    for fix in [&[][..], &["--fix"]] {
        let o = in_prof_output(&sb, &[&["doctor"][..], fix].concat());
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(
            out.contains("error[hooks-json-unreadable]: it is not valid JSON (1:21: "),
            "{out}"
        );
        assert!(!out.contains("trust-dangling"), "{out}");
    }
    assert_eq!(
        std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
        trust_before
    );
    assert_eq!(
        std::fs::read_to_string(sb.join("prof/hooks.json")).unwrap(),
        "{\"hooks\": {\"Stop\": [}\n"
    );
    // Found by review: one unreadable file hid the other file's problems. Here the
    // workspace's cannot be read and the profile's has a handler hosts skip.
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "bogus": 1}]}]}}"#,
    );
    sb.write("ws/.finclaw/hooks.json", "{bad");
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("ws/.finclaw/hooks.json: error[hooks-json-unreadable]"),
        "{out}"
    );
    assert!(
        out.contains("prof/hooks.json:1:32: error[handler-invalid]"),
        "{out}"
    );
}

/// A `hooks.json` that parses but whose shape hosts cannot walk (an event written as one
/// group instead of an array of them, `"hooks": null`, a document that is not an object):
/// doctor said "no problems" and called the trust entries of the handlers in it dangling,
/// and `--fix` deleted them, so fixing the typo left every handler untrusted.
#[test]
fn doctor_reports_an_odd_shaped_hooks_json_and_keeps_its_trust() {
    let sb = with_workspace();
    let good = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "id": "mine"}]}],
 "SessionStart": [{"hooks": [{"type": "command", "command": "true", "id": "greet"}]}]}}"#;
    sb.write("prof/hooks.json", good);
    in_prof(&sb, &["trust", "--all"]);
    let trust_before = std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap();
    for (body, at) in [
        (
            good.replace(
                r#""Stop": [{"hooks": [{"type": "command", "command": "true", "id": "mine"}]}]"#,
                r#""Stop": {"hooks": [{"type": "command", "command": "true", "id": "mine"}]}"#,
            ),
            "prof/hooks.json:1:20: error[hooks-json-shape]: the event is not an array of groups",
        ),
        (
            r#"{"hooks": null}"#.to_string(),
            "prof/hooks.json:1:11: error[hooks-json-shape]",
        ),
        (
            "[]".to_string(),
            "prof/hooks.json:1:1: error[hooks-json-shape]: the document is not an object",
        ),
    ] {
        sb.write("prof/hooks.json", &body);
        for fix in [&[][..], &["--fix"]] {
            let o = in_prof_output(&sb, &[&["doctor"][..], fix].concat());
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(o.status.code(), Some(1), "{body} {fix:?}: {out}");
            assert!(
                out.contains("error[hooks-json-shape]") && out.contains(at),
                "{body} {fix:?}: {out}"
            );
            assert!(!out.contains("trust-dangling"), "{body} {fix:?}: {out}");
        }
        assert_eq!(
            std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
            trust_before,
            "{body}"
        );
    }
}

/// The same odd shapes made `list` say "no handlers", `trust --all` "no handler matched"
/// and `run` "no PreToolUse handlers", each exiting 0: an event written as one group
/// instead of an array of them (a common slip) was never said to be wrong. They stop on it
/// as on a hooks.json that is not JSON, naming the spot (README: `cannot read …`, exit 1).
#[test]
fn list_trust_and_run_stop_on_an_odd_shaped_hooks_json() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {"PreToolUse": {"hooks": [{"type": "command", "command": "true", "id": "gate"}]}}}"#,
    );
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    for args in [
        &["list"][..],
        &["trust", "--all"],
        &["run", "PreToolUse", "--payload", "payload.json"],
    ] {
        let o = in_prof_output(&sb, args);
        fails_saying(
            &o,
            1,
            "prof/hooks.json: its shape is not one hosts can walk: the event is not an array of groups at 1:26 (/hooks/PreToolUse), and hosts skip what it holds; fix it by hand",
        );
    }
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
}

/// An event written at the top level of a hooks.json, beside or instead of `hooks` (its
/// wrapper forgotten), is read by no host: `list`, `trust` and `run` said there were no
/// handlers (exit 0), and `doctor` "no problems". It is an odd shape like the others.
#[test]
fn an_event_outside_hooks_is_an_odd_shape() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {}, "PreToolUse": [{"hooks": [{"type": "command", "command": "true", "id": "gate"}]}]}"#,
    );
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    let want = "an event (`PreToolUse`) is at the top level, outside `hooks`, where hosts look for none at 1:29 (/PreToolUse)";
    for args in [
        &["list"][..],
        &["trust", "--all"],
        &["run", "PreToolUse", "--payload", "payload.json"],
    ] {
        fails_saying(&in_prof_output(&sb, args), 1, want);
    }
    let (code, r) = validate_json(&sb, &["prof/hooks.json"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/PreToolUse", "event-outside-hooks");
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("prof/hooks.json:1:29: error[hooks-json-shape]: an event (`PreToolUse`) is at the top level"),
        "{out}"
    );
}

/// The script `list` reports for each handler's command, as (kind, path relative to the
/// sandbox): what the trust hash covers.
fn scripts(sb: &Sandbox) -> Vec<(String, String)> {
    let l = list_json(sb);
    let root = format!("{}/", sb.path().display());
    l["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let s = &h["script"];
            (
                s["kind"].as_str().unwrap().to_string(),
                s["path"].as_str().unwrap_or("").replace(&root, ""),
            )
        })
        .collect()
}

/// The trust hash covers the file the command runs, as (command, what `list` reports):
/// - a path to an interpreter is not an interpreter: `bin/node` (found from the workspace)
///   is the program run, so its bytes are hashed, not those of its argument;
/// - a flag's value is never the script (`node -r ./evil.js x.js` runs `x.js`; validate
///   refuses `-r` in recipes), and node reads `--disable_warning` as `--disable-warning`,
///   which takes a value, so `node --disable_warning x.js evil.js` runs `evil.js`;
/// - after `ruby -C sub` or `bun --cwd sub` the script is found from `sub`; `bash -s`
///   reads its code from stdin, so there is no script; a debugger or rc file loaded before
///   the script leaves the script covered.
#[test]
fn the_trust_hash_covers_the_file_the_command_runs() {
    let sb = Sandbox::new();
    for (file, body) in [
        ("ws/x.js", "process.exit(0);\n"),
        ("ws/evil.js", "// evil\n"),
        ("ws/bin/node", "#!/bin/sh\n"),
        ("ws/x.rb", "# top\n"),
        ("ws/sub/x.rb", "# sub\n"),
        ("ws/sub/deeper/x.rb", "# deeper\n"),
    ] {
        sb.write(file, body);
    }
    let cases = [
        ("node x.js", "file", "ws/x.js"),
        ("bin/node x.js", "file", "ws/bin/node"),
        ("/nowhere/python3 x.js", "missing", "/nowhere/python3"),
        ("node -r ./evil.js x.js", "file", "ws/x.js"),
        ("node --title evil.js x.js", "file", "ws/x.js"),
        ("python3 -m evil", "unresolved", "python3 -m evil"),
        ("node --disable_warning x.js evil.js", "file", "ws/evil.js"),
        (
            "node --disable_warning=x evil.js x.js",
            "file",
            "ws/evil.js",
        ),
        ("node --env_file evil.js x.js", "file", "ws/x.js"),
        ("ruby -C sub x.rb", "file", "ws/sub/x.rb"),
        ("ruby -Csub -C deeper x.rb", "file", "ws/sub/deeper/x.rb"),
        ("bun --cwd=sub x.rb", "file", "ws/sub/x.rb"),
        ("bash -s x.rb", "none", ""),
        ("perl -d:Evil x.rb", "file", "ws/x.rb"),
        ("bash --rcfile sub/x.rb x.rb", "file", "ws/x.rb"),
    ];
    let handlers: Vec<Value> = (cases.iter().enumerate())
        .map(|(i, (command, _, _))| json!({"id": format!("h{i}"), "type": "command", "command": command}))
        .collect();
    profile_with(&sb, json!({ "PreToolUse": handlers }));
    let want: Vec<(String, String)> = (cases.iter())
        .map(|(_, kind, path)| (kind.to_string(), path.to_string()))
        .collect();
    assert_eq!(scripts(&sb), want);
}

#[test]
fn trust_keys_do_not_depend_on_the_folder_the_profile_was_named_from() {
    // Found by review: `--profile ../prof` keyed the handler as `…/ws/../prof/hooks.json`,
    // so a handler trusted as `--profile prof` showed as untrusted from `ws/`.
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("ws/.finclaw")).unwrap();
    install_and_trust_tool_gate(&sb, "prof");
    let listed = |dir: &str, profile: &str, workspace: &str| -> Value {
        let o = sb
            .cmd()
            .current_dir(sb.join(dir))
            .args(["list", "--format", "json", "--profile", profile])
            .args(["--workspace", workspace])
            .output()
            .unwrap();
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let expected = sb.path().canonicalize().unwrap().join("prof");
    for (dir, profile, workspace) in [
        (".", "prof", "ws"),
        ("ws", "../prof", "."),
        ("ws/.finclaw", "../../ws/./../prof/", ".."),
    ] {
        let l = listed(dir, profile, workspace);
        assert_eq!(l["profile"], expected.to_str().unwrap(), "{l:#}");
        let handlers = l["handlers"].as_array().unwrap();
        assert!(!handlers.is_empty(), "{l:#}");
        for h in handlers {
            assert_eq!(h["status"], "trusted", "from {dir}: {h:#}");
        }
    }
    // Keys an earlier hookpack wrote with the `..` (from `ws/`, `--profile ../prof`) still
    // count (found by the second review: upgrading left such handlers untrusted).
    let trust_file = sb.join("finclaw-home/hooks-trust.json");
    let root = sb.path().canonicalize().unwrap();
    let from_ws = format!("{}/ws/../prof/", root.display());
    let text = std::fs::read_to_string(&trust_file).unwrap();
    let old = text.replace(&format!("{}/prof/", root.display()), &from_ws);
    assert!(old.contains(&from_ws), "{old}");
    std::fs::write(&trust_file, old).unwrap();
    for h in listed("ws", "../prof", ".")["handlers"].as_array().unwrap() {
        assert_eq!(h["status"], "trusted", "{h:#}");
    }
    // With both forms there (trusted again after upgrading), a revoke sticks: the old key
    // does not come back in its place (found by the third review).
    let now_form = format!("{}/prof/", root.display());
    let one: Value = serde_json::from_str(&std::fs::read_to_string(&trust_file).unwrap()).unwrap();
    let mut handlers = serde_json::Map::new();
    for (k, v) in one["handlers"].as_object().unwrap() {
        let new_key = k.replace(&from_ws, &now_form);
        handlers.insert(new_key.replace(&now_form, &from_ws), v.clone());
        handlers.insert(new_key, v.clone());
    }
    assert_eq!(handlers.len(), 2, "{handlers:#?}");
    let both = json!({"schema": one["schema"], "handlers": handlers});
    std::fs::write(&trust_file, both.to_string()).unwrap();
    in_prof(&sb, &["revoke", "--all"]);
    for h in listed(".", "prof", "ws")["handlers"].as_array().unwrap() {
        assert_eq!(h["status"], "untrusted", "{h:#}");
    }
    assert!(!std::fs::read_to_string(&trust_file)
        .unwrap()
        .contains("/ws/../"));
    // A `..` after a link is kept: it leaves the link's target, not the link's folder.
    std::fs::create_dir_all(sb.join("deep/inner")).unwrap();
    std::os::unix::fs::symlink(sb.join("deep/inner"), sb.join("jump")).unwrap();
    let l = listed(".", "jump/../prof", "ws");
    assert!(
        l["profile"].as_str().unwrap().ends_with("/jump/../prof"),
        "{l:#}"
    );
}

/// Installs tool-gate into `profile` and trusts every handler of `profile` and of the
/// workspace `ws`.
fn install_and_trust_tool_gate(sb: &Sandbox, profile: &str) {
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", profile])
        .output()
        .unwrap());
    ok(&sb
        .cmd()
        .args(["trust", "--all", "--profile", profile, "--workspace", "ws"])
        .output()
        .unwrap());
}

#[test]
fn doctor_reads_trust_keys_of_a_profile_whose_path_holds_a_hash_sign() {
    // Found by review: doctor took a key's file to end at its first `#`, so a stale entry
    // of the profile `a#b/p` was never reported.
    let sb = with_workspace();
    install_and_trust_tool_gate(&sb, "a#b/p");
    let trust_file = sb.join("finclaw-home/hooks-trust.json");
    let mut trust: Value = serde_json::from_slice(&std::fs::read(&trust_file).unwrap()).unwrap();
    let stale = format!(
        "{}/a#b/p/hooks.json#PreToolUse#id:gone",
        sb.path().canonicalize().unwrap().display()
    );
    let entry = trust["handlers"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    trust["handlers"][&stale] = entry;
    std::fs::write(&trust_file, trust.to_string()).unwrap();
    let o = sb
        .cmd()
        .args(["doctor", "--profile", "a#b/p", "--workspace", "ws"])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains("trust-dangling") && said.contains("id:gone"),
        "{said}"
    );
}

/// Fields hookpack does not know are kept at the top of the trust file, and were dropped
/// from its entries: trusting one handler rewrote every other entry without them.
#[test]
fn trusting_keeps_the_fields_of_other_trust_entries() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "mine", "type": "command", "command": "true"}]}),
    );
    let key = format!("{}#Stop#id:gone", sb.join("prof/hooks.json").display());
    sb.write(
        "finclaw-home/hooks-trust.json",
        json!({
            "schema": "hookpack.trust.v1",
            "handlers": {key.clone(): {
                "hash": "0".repeat(64),
                "trusted_at": "2026-01-01T00:00:00Z",
                "note": "approved by security"
            }},
            "x-host": 1
        })
        .to_string(),
    );
    in_prof(&sb, &["trust", "mine"]);
    let trust = read_json(&sb.join("finclaw-home/hooks-trust.json"));
    assert_eq!(
        trust["handlers"][&key]["note"], "approved by security",
        "{trust:#}"
    );
    assert_eq!(trust["x-host"], 1, "{trust:#}");
}

/// A trust file of another schema (a host's own, or a later hookpack's) is refused, not
/// read as ours and rewritten under its old schema string.
#[test]
fn a_trust_file_of_another_schema_is_refused_and_kept() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "mine", "type": "command", "command": "true"}]}),
    );
    let theirs = json!({"schema": "finclaw.trust.v2", "handlers": {}, "pins": [1]}).to_string();
    sb.write("finclaw-home/hooks-trust.json", &theirs);
    for args in [&["trust", "mine"][..], &["list"], &["revoke", "--all"]] {
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("hooks-trust.json")
                && err.contains("finclaw.trust.v2")
                && err.contains("hookpack.trust.v1"),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
            theirs
        );
    }
}

#[test]
fn trust_and_revoke_of_a_recipe_with_no_handlers_is_refused() {
    let sb = with_tool_gate();
    // A misspelt id must not look like success: the gate would stay off.
    for verb in ["trust", "revoke"] {
        let o = in_prof_output(&sb, &[verb, "--recipe", "tool-gat"]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no handler of recipe `tool-gat`"), "{err}");
        // The near recipe is named, as for a misspelt handler id (found by review).
        assert!(err.contains("; did you mean `tool-gate`?"), "{err}");
    }
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
    assert!(list_json(&sb)["handlers"][0]["status"] == "untrusted");
}

/// `trust tool-gate` (the recipe's id where a handler id goes) was told only that no
/// handler has that id; it is told the flag that takes a recipe's handlers, and a
/// misspelt handler id the near one (found by review).
#[test]
fn trust_of_a_recipe_id_or_a_misspelt_handler_id_names_what_was_meant() {
    let sb = with_tool_gate();
    let p = profile_flag(&sb, "prof");
    let w = workspace_flag(&sb, "ws");
    for verb in ["trust", "revoke"] {
        let o = in_prof_output(&sb, &[verb, "tool-gate"]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("no handler with id `tool-gate` in the profile or workspace hooks.json; `tool-gate` is a recipe: give `--recipe tool-gate` for its handlers"),
            "{verb}: {err}"
        );
        let o = in_prof_output(&sb, &[verb, "gate-mutatin"]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("no handler with id `gate-mutatin` in the profile or workspace hooks.json; did you mean `gate-mutating`?"),
            "{verb}: {err}"
        );
        let o = in_prof_output(&sb, &[verb, "zzz"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("no handler with id `zzz` in the profile or workspace hooks.json; `hookpack list{p}{w}` shows them")),
            "{verb}: {err}"
        );
    }
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
}

#[test]
fn run_text_does_not_call_a_route_no_decision() {
    let sb = with_workspace();
    ok(&sb
        .cmd()
        .args(["install", "turn-router", "--profile", "prof"])
        .output()
        .unwrap());
    in_prof(&sb, &["trust", "--recipe", "turn-router"]);
    sb.write(
        "payload.json",
        json!({"model": "deepseek-v4-pro", "prompt": "#fast summarise this diff"}).to_string(),
    );
    let o = in_prof_output(
        &sb,
        &["run", "UserPromptSubmit", "--payload", "payload.json"],
    );
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("UserPromptSubmit: no verdict; the handlers changed:"),
        "{out}"
    );
    assert_eq!(
        lines.next(),
        Some("  updatedModel: deepseek-v4-flash"),
        "{out}"
    );
    assert!(out.contains("route-turn [ran] exit 0"), "{out}");
}

/// A handler's stderr (the reason of a block, a stack trace) keeps its lines in `run`'s
/// text: each is a line of its own under `stderr:`, indented, with control characters
/// escaped so none can drive the terminal or pass for a line of hookpack's. (Escaped as
/// one line, a stack trace became one long line of `\n`.)
#[test]
fn run_text_shows_a_handler_s_stderr_line_by_line() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "noisy", "type": "command",
            "command": "printf 'first line\\nsecond \\033[31mred\\n' >&2; exit 1"}]}),
    );
    sb.write("payload.json", "{}");
    let o = sb
        .cmd()
        .args(["run", "Stop", "--include-untrusted", "--profile", "prof"])
        .args(["--workspace", "ws", "--payload", "payload.json"])
        .output()
        .unwrap();
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("    stderr: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(lines[at], "    stderr: first line", "{out}");
    assert_eq!(lines[at + 1], "            second \\u{1b}[31mred", "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
}

/// `remove` with a trust file it cannot read (truncated JSON) exited 0 and left the removed
/// handlers' trust entries in it: once the file was fixed, a reinstall of the recipe was
/// trusted without asking. It is now refused before anything changes, naming the trust file
/// and what to do; once the file is fixed, the remove drops the entries as usual.
#[test]
fn remove_with_an_unreadable_trust_file_is_refused_and_changes_nothing() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    install_and_trust_tool_gate(&sb, "prof");
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let good = std::fs::read(&trust).unwrap();
    let truncated = good[..good.len() / 2].to_vec();
    std::fs::write(&trust, &truncated).unwrap();
    let before = crate::pack::snapshot(&sb.join("prof"));
    let in_prof_no_ws = |args: &[&str]| {
        sb.cmd()
            .args(args)
            .args(["--profile", "prof"])
            .output()
            .unwrap()
    };
    for dry in [&[][..], &["--dry-run"]] {
        let o = in_prof_no_ws(&[&["remove", "tool-gate"][..], dry].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{dry:?} {err}");
        assert!(
            err.contains(&format!("the trust file {}", trust.display()))
                && err.contains("nothing was changed")
                && err.contains(&format!("then run `hookpack remove tool-gate{p}` again")),
            "{dry:?} {err}"
        );
        assert_eq!(crate::pack::snapshot(&sb.join("prof")), before, "{dry:?}");
        assert_eq!(std::fs::read(&trust).unwrap(), truncated);
    }
    // Fixed, the remove goes ahead and the reinstall starts untrusted.
    std::fs::write(&trust, &good).unwrap();
    ok(&in_prof_no_ws(&["remove", "tool-gate"]));
    assert!(!sb.join("prof/hooks/tool-gate").exists());
    assert_eq!(read_json(&trust)["handlers"], json!({}));
    ok(&in_prof_no_ws(&["install", "tool-gate"]));
    assert_eq!(list_json(&sb)["handlers"][0]["status"], "untrusted");
}

/// `list` and `doctor` on a profile folder that does not exist (a misspelt `--profile` or
/// `$FINCLAW_PROFILE`) said "no handlers" and "no problems", exit 0. `list` now says the
/// folder does not exist (exit 0: there is nothing to list), `doctor` reports it as
/// `profile-missing` (exit 1), and neither creates it nor drops trust entries for it.
#[test]
fn list_and_doctor_say_the_profile_folder_does_not_exist() {
    let sb = with_workspace();
    install_and_trust_tool_gate(&sb, "prof");
    let trust = std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap();
    std::fs::rename(sb.join("prof"), sb.join("moved")).unwrap();
    let gone = format!(
        "the profile folder {} does not exist",
        sb.join("prof").display()
    );

    let o = in_prof_output(&sb, &["list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(&gone) && !err.contains("no handlers"), "{err}");
    assert_eq!(list_json(&sb)["profile_exists"], false);

    for fix in [&[][..], &["--fix"]] {
        let o = in_prof_output(&sb, &[&["doctor"][..], fix].concat());
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{fix:?} {out} {err}");
        assert!(
            out.contains("error[profile-missing]") && out.contains(&gone),
            "{out}"
        );
        assert!(
            !out.contains("trust-dangling") && !err.contains("no problems"),
            "{out}"
        );
        assert!(!sb.join("prof").exists(), "{fix:?} created the profile");
    }
    let o = in_prof_output(&sb, &["doctor", "--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["problems"][0]["code"], "profile-missing");
    assert_eq!(
        std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
        trust
    );
    // Back in place, all is well again; install still creates a new profile.
    std::fs::rename(sb.join("moved"), sb.join("prof")).unwrap();
    in_prof(&sb, &["doctor"]);
    assert_eq!(list_json(&sb)["profile_exists"], true);
    ok(&sb
        .cmd()
        .args(["install", "audit-log", "--profile", "new"])
        .output()
        .unwrap());
    assert!(sb.join("new/hooks.json").is_file());
}

/// A timeout too large to add to the clock (it is a valid whole number of seconds, so the
/// handler is not invalid) panicked `run` with "overflow when adding duration to instant".
#[test]
fn a_timeout_too_large_for_the_clock_is_waited_for_without_a_panic() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "huge", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'", "timeout": u64::MAX}
        ]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "ask", "{d:#}");
}

/// seeds/004: "PermissionRequest spawn failure denies". A handler whose shell cannot be
/// started was read as a failed run (exit 127), which denies nothing.
#[cfg(unix)]
#[test]
fn a_permission_request_handler_that_cannot_start_denies() {
    let sb = with_workspace();
    let shell = sb.write("not-a-shell", "not executable");
    profile_with(
        &sb,
        json!({
            "PermissionRequest": [{"id": "gate", "type": "command", "command": "true"}],
            "PreToolUse": [{"id": "open", "type": "command", "command": "true"}]
        }),
    );
    sb.write("payload.json", r#"{"tool_name": "exec"}"#);
    for (event, verdict) in [
        ("PermissionRequest", json!("deny")),
        ("PreToolUse", Value::Null),
    ] {
        let o = sb
            .cmd()
            .env("SHELL", &shell)
            .args([
                "run",
                event,
                "--payload",
                "payload.json",
                "--include-untrusted",
            ])
            .args(["--profile", "prof", "--workspace", "ws", "--format", "json"])
            .output()
            .unwrap();
        ok(&o);
        let d: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(d["outcome"]["verdict"], verdict, "{event}: {d:#}");
        let failure = d["handlers"][0]["decision"]["failure"].as_str().unwrap();
        assert!(failure.contains("cannot start"), "{event}: {failure}");
    }
}

/// A payload on stdin over the 16 MiB limit was cut at the limit and read as broken JSON
/// ("EOF while parsing … at line 1 column 16777216"); a file that size names the limit.
#[test]
fn a_payload_on_stdin_over_the_limit_says_so() {
    let sb = with_workspace();
    profile_with(&sb, json!({"PreToolUse": []}));
    let big = json!({"tool_name": "exec", "x": "a".repeat(17 * 1024 * 1024)}).to_string();
    let o = in_prof_with_stdin(&sb, &["run", "PreToolUse", "--payload", "-"], big);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("16777216-byte limit"), "{err}");
    assert!(!err.contains("EOF"), "{err}");
}

/// seeds/004: "Rewrites: last non-blocking value wins". The rewrite of a handler that
/// blocked or denied was taken as the last one. And once the outcome blocks or denies, no
/// rewrite is shown at all: the call (or turn) never runs (found by review: a deny was
/// shown with another handler's rewrite). Without the blocking handler, the last
/// non-blocking rewrite is the outcome's.
#[test]
fn a_blocking_handler_s_rewrite_does_not_win() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({
            "UserPromptSubmit": [
                {"id": "route", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\"kept\"}}'"},
                {"id": "blocks", "type": "command", "command": "echo '{\"decision\":\"block\",\"reason\":\"no\",\"hookSpecificOutput\":{\"updatedModel\":\"blocked\"}}'"}
            ],
            "PreToolUse": [
                {"id": "rewrite", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedInput\":{\"command\":\"kept\"}}}'"},
                {"id": "denies", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\",\"updatedInput\":{\"command\":\"denied\"}}}'"}
            ]
        }),
    );
    let d = run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["verdict"], "block", "{d:#}");
    assert!(d["outcome"]["updated_model"].is_null(), "{d:#}");
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    assert!(d["outcome"]["updated_input"].is_null(), "{d:#}");
    // The text says the deny and no rewrite.
    let o = in_prof_output(
        &sb,
        &[
            "run",
            "PreToolUse",
            "--payload",
            "payload.json",
            "--include-untrusted",
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("PreToolUse: deny\n"), "{out}");
    assert!(!out.contains("updatedInput"), "{out}");
    // Without the blocking handlers, the last non-blocking rewrite is the outcome's.
    profile_with(
        &sb,
        json!({
            "UserPromptSubmit": [
                {"id": "route", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\"kept\"}}'"}
            ]
        }),
    );
    let d = run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["updated_model"], "kept", "{d:#}");
}

/// Handlers run in the workspace. One that does not exist (or is a file) made every
/// handler fail with "cannot start the shell: No such file or directory", and `run` exit 0.
#[test]
fn run_in_a_workspace_that_is_not_a_folder_is_refused() {
    let sb = Sandbox::new();
    sb.write("ws-file", "x");
    profile_with(
        &sb,
        json!({"PermissionRequest": [{"id": "gate", "type": "command", "command": "true"}]}),
    );
    for ws in ["missing", "ws-file"] {
        let o = sb
            .cmd()
            .args(["run", "PermissionRequest", "--include-untrusted"])
            .args(["--profile", "prof", "--workspace", ws])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{ws}: {err}");
        assert!(err.contains("is not a folder"), "{ws}: {err}");
        assert!(o.stdout.is_empty(), "{ws}");
    }
}

/// An answer of the wrong shape was no decision, even under `failurePolicy: deny`, while
/// an unknown `permissionDecision` string is a failure: a `hookSpecificOutput` that is not
/// an object and a `permissionDecision` that is not a string are failures too.
#[test]
fn answers_of_the_wrong_shape_are_failures() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "hso-string", "type": "command", "command": "echo '{\"hookSpecificOutput\":\"deny\"}'", "failurePolicy": "deny"},
            {"id": "decision-number", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":5}}'", "failurePolicy": "deny"}
        ]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    for h in d["handlers"].as_array().unwrap() {
        assert_eq!(h["decision"]["verdict"], "deny", "{d:#}");
        assert!(h["decision"]["failure"].is_string(), "{d:#}");
    }
}

/// Fields of an answer of the wrong type were ignored in silence (a reason of 5, an
/// `updatedModel` of 5, an `additionalContext` of `[]`) or passed through (a string
/// `updatedInput` became the rewrite of the tool input). A rewrite of the wrong type is a
/// failure naming the field, as a `permissionDecision` hosts do not know is, and never a
/// rewrite; a reason or context of the wrong type is left out with a warning naming it, and
/// the decision stands (a deny with a reason of 5 still denies), and so is a rewrite beside
/// a deny, an ask or a top-level block.
#[cfg(target_os = "linux")]
#[test]
fn answer_fields_of_the_wrong_type_are_named() {
    let sb = with_workspace();
    let answer = |hso: Value| format!("echo '{}'", json!({ "hookSpecificOutput": hso }));
    profile_with(
        &sb,
        json!({
            "PreToolUse": [
                {"id": "reason", "type": "command",
                 "command": answer(json!({"permissionDecision": "deny", "permissionDecisionReason": 5}))},
                {"id": "context", "type": "command",
                 "command": answer(json!({"additionalContext": []}))},
                {"id": "input", "type": "command",
                 "command": answer(json!({"updatedInput": "rm -rf /"}))},
                {"id": "deny-input", "type": "command",
                 "command": answer(json!({"permissionDecision": "deny", "updatedInput": "x"}))},
                {"id": "ask-input", "type": "command",
                 "command": answer(json!({"permissionDecision": "ask", "updatedInput": "x"}))},
                {"id": "block-input", "type": "command",
                 "command": format!("echo '{}'", json!({"decision": "block", "reason": "no",
                     "hookSpecificOutput": {"updatedInput": "x"}}))}
            ],
            "UserPromptSubmit": [
                {"id": "model", "type": "command", "command": answer(json!({"updatedModel": 5}))},
                {"id": "prompt", "type": "command", "command": answer(json!({"updatedPrompt": ["x"]}))},
                {"id": "block-model", "type": "command",
                 "command": format!("echo '{}'", json!({"decision": "block", "reason": "no",
                     "hookSpecificOutput": {"updatedModel": 5}}))}
            ]
        }),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let by_id = |d: &Value, id: &str| {
        d["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .cloned()
            .unwrap()
    };
    for (id, field, verdict) in [
        ("reason", "permissionDecisionReason", json!("deny")),
        ("context", "additionalContext", Value::Null),
    ] {
        let h = by_id(&d, id);
        let warning = h["decision"]["warning"].as_str().unwrap_or_default();
        assert!(warning.contains(field), "{id}: {d:#}");
        assert!(h["decision"]["failure"].is_null(), "{id}: {d:#}");
        assert!(h["decision"]["reason"].is_null(), "{id}: {d:#}");
        assert_eq!(h["decision"]["verdict"], verdict, "{id}: {d:#}");
    }
    let h = by_id(&d, "input");
    let failure = h["decision"]["failure"].as_str().unwrap_or_default();
    assert!(failure.contains("updatedInput"), "{d:#}");
    assert!(h["decision"]["updated_input"].is_null(), "{d:#}");
    // A deny needs no rewrite: one of the wrong type beside it is left out, and it denies
    // (a failure would let the tool run without failurePolicy: deny). So does an ask: the
    // user is asked about the input as it is, where a failure would let the tool run.
    for (id, verdict) in [
        ("deny-input", "deny"),
        ("ask-input", "ask"),
        ("block-input", "block"),
    ] {
        let h = by_id(&d, id);
        assert_eq!(h["decision"]["verdict"], verdict, "{id}: {d:#}");
        assert!(h["decision"]["failure"].is_null(), "{id}: {d:#}");
        let warning = h["decision"]["warning"].as_str().unwrap_or_default();
        assert!(warning.contains("updatedInput"), "{id}: {d:#}");
        assert!(h["decision"]["updated_input"].is_null(), "{id}: {d:#}");
    }
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    assert!(d["outcome"]["updated_input"].is_null(), "{d:#}");
    assert!(d["outcome"]["additional_context"].is_null(), "{d:#}");
    let d = run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    for (id, field) in [("model", "updatedModel"), ("prompt", "updatedPrompt")] {
        let failure = by_id(&d, id)["decision"]["failure"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(failure.contains(field), "{id}: {d:#}");
    }
    let h = by_id(&d, "block-model");
    assert_eq!(h["decision"]["verdict"], "block", "{d:#}");
    assert!(h["decision"]["failure"].is_null(), "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "block", "{d:#}");
    assert!(d["outcome"]["updated_model"].is_null(), "{d:#}");
    assert!(d["outcome"]["updated_prompt"].is_null(), "{d:#}");
}

/// `run` started an async handler and ended, leaving it to run on past its `timeout`, where
/// a host kills it. A watchdog `run` starts beside it (`hookpack __watch-async`, in a
/// process group of its own) now kills it there, with its group.
#[cfg(target_os = "linux")]
#[test]
fn an_async_handler_is_killed_at_its_timeout_after_run_ends() {
    let sb = with_workspace();
    let marker = format!("654.{}", std::process::id());
    profile_with(
        &sb,
        json!({"PostToolUse": [{"id": "slow", "type": "command", "command": format!("sleep {marker}"), "async": true, "timeout": 1}]}),
    );
    let started = std::time::Instant::now();
    let o = sb
        .cmd()
        .args([
            "run",
            "PostToolUse",
            "--profile",
            "prof",
            "--workspace",
            "ws",
        ])
        .arg("--include-untrusted")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("started (async, not awaited)"),
        "{o:?}"
    );
    gone_by(
        &marker,
        started + std::time::Duration::from_secs(15),
        "the async handler outlived its 1 s timeout by 14 s",
    );
    // Not before its timeout.
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
}

/// Found by the host-side sweep: an async handler that read its stdin after `run` had
/// ended (a slow start: `npx tsx`, a loaded machine) got only what the pipe held, 64 KiB of
/// a 1 MiB payload, cut off mid-JSON, and `run` waited 2 s for each one that was slow to
/// read. Its payload is now in a file it reads at its own pace, whole.
#[cfg(unix)]
#[test]
fn an_async_handler_that_reads_late_gets_the_whole_payload() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PostToolUse": [{"id": "late", "type": "command",
            "command": "sleep 2; wc -c > got.tmp; mv got.tmp got", "async": true, "timeout": 30}]}),
    );
    let big = "x".repeat(1024 * 1024);
    sb.write(
        "payload.json",
        json!({"tool_name": "exec", "tool_input": {}, "tool_response": big}).to_string(),
    );
    let o = run_output(&sb, "PostToolUse", &["--include-untrusted"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let got = sb.join("ws/got");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !got.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the handler never wrote"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let count: usize = std::fs::read_to_string(&got)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(count > 1024 * 1024, "the handler read {count} bytes");
}

/// An async handler whose shell could not be started stopped the whole `run` (exit 3, no
/// outcome), while a synchronous one in the same spot is a failure of that handler only.
#[cfg(unix)]
#[test]
fn an_async_handler_that_cannot_start_fails_alone() {
    let sb = with_workspace();
    let shell = sb.write("not-a-shell", "not executable");
    profile_with(
        &sb,
        json!({"SessionEnd": [
            {"id": "later", "type": "command", "command": "true", "async": true},
            {"id": "now", "type": "command", "command": "true"}
        ]}),
    );
    let o = sb
        .cmd()
        .env("SHELL", &shell)
        .args([
            "run",
            "SessionEnd",
            "--include-untrusted",
            "--format",
            "json",
        ])
        .args(["--profile", "prof", "--workspace", "ws"])
        .output()
        .unwrap();
    ok(&o);
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    for h in d["handlers"].as_array().unwrap() {
        assert_eq!(h["state"], "not started", "{d:#}");
        let failure = h["decision"]["failure"].as_str().unwrap_or_default();
        assert!(failure.contains("cannot start"), "{d:#}");
    }
}

/// A command holding a NUL byte cannot be started by any shell. `trust` recorded it; it is
/// invalid, so trust refuses it (nothing written). Run under `--include-untrusted`, it fails
/// to start, as on a host, which loads it (only unknown fields and bad regexes make hosts
/// skip a handler) and cannot start it.
#[test]
fn a_command_holding_a_nul_byte_is_never_trusted_or_started() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "nul", "type": "command", "command": "true\u{0} x"}]}),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("refused    PreToolUse nul ")
            && out.contains("#id:nul): invalid")
            && out.contains("NUL"),
        "{out}"
    );
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
    let listed = list_json(&sb);
    assert_eq!(listed["handlers"][0]["status"], "invalid", "{listed:#}");
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["handlers"][0]["state"], "not started", "{d:#}");
    assert!(d["outcome"]["verdict"].is_null(), "{d:#}");
}

/// A command longer than Linux gives one argument (MAX_ARG_STRLEN, 131072 bytes with the
/// NUL; `$SHELL -lc COMMAND` passes it as one) passed `validate` and `trust`, then every
/// run failed with "Argument list too long (os error 7)", which denies under
/// `failurePolicy: deny`. It is invalid, as a NUL is: trust refuses it, doctor and
/// validate report it at the command with the fix; run under `--include-untrusted` fails
/// to start it, naming the cause, as a host would (so it denies here). One byte shorter,
/// it runs.
#[cfg(target_os = "linux")]
#[test]
fn a_command_longer_than_one_argument_may_be_is_invalid() {
    let sb = with_workspace();
    let longest = format!("true #{}", "x".repeat(131071 - 6));
    let over = format!("sh ok.sh {}", "x".repeat(200000));
    sb.write("ws/ok.sh", "exit 0\n");
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "longest", "type": "command", "command": longest},
            {"id": "over", "type": "command", "command": over, "failurePolicy": "deny"}
        ]}),
    );
    let o = in_prof_output(&sb, &["trust", "over"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("#id:over): invalid") && out.contains("131071"),
        "{out}"
    );
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
    assert_eq!(d["handlers"][0]["exit"], 0, "{d:#}");
    assert_eq!(d["handlers"][1]["state"], "not started", "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    let failure = d["handlers"][1]["decision"]["failure"].as_str().unwrap();
    assert!(
        failure.contains("Argument list too long") && failure.contains("131071"),
        "{failure}"
    );
    let o = in_prof_output(&sb, &["doctor", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let problems: Vec<_> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["code"] == "handler-invalid")
        .collect();
    assert_eq!(problems.len(), 1, "{doc:#}");
    assert_eq!(
        problems[0]["pointer"], "/hooks/PreToolUse/0/hooks/1",
        "{doc:#}"
    );
    let (code, report) = validate_json(&sb, &["prof/hooks.json"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report),
        [(
            "/hooks/PreToolUse/0/hooks/1/command".to_string(),
            "command-too-long".to_string()
        )],
        "{report:#}"
    );
}

/// A `timeout` past a 64-bit float's range (`1e400`, which JSON.parse reads as Infinity)
/// made the whole `hooks.json` "not valid JSON", stopping `list` and `run` for every
/// handler, while `1e30` or `2^64` there is one handler's invalid `timeout`, named at its
/// spot with the fix. It is that too now; install still will not write the file back.
#[test]
fn a_timeout_past_a_float_s_range_is_one_handler_s_problem() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"hooks": [
  {"id": "huge", "type": "command", "command": "true", "timeout": 1e400},
  {"id": "small", "type": "command", "command": "true", "timeout": -1e400},
  {"id": "fine", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'"}
]}]}}"#,
    );
    let (code, report) = validate_json(&sb, &["prof/hooks.json"]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        findings(&report),
        [
            (
                "/hooks/PreToolUse/0/hooks/0/timeout".to_string(),
                "timeout-not-integer".to_string()
            ),
            (
                "/hooks/PreToolUse/0/hooks/1/timeout".to_string(),
                "timeout-not-integer".to_string()
            )
        ],
        "{report:#}"
    );
    let messages = report["diagnostics"].to_string();
    assert!(
        messages.contains("larger than") && !messages.contains("1.797"),
        "{messages}"
    );
    let listed = list_json(&sb);
    let statuses: Vec<_> = listed["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["invalid", "invalid", "untrusted"], "{listed:#}");
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["verdict"], "ask", "{d:#}");
    let before = std::fs::read(sb.join("prof/hooks.json")).unwrap();
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`1e400` at 2:67 (/hooks/PreToolUse/0/hooks/0/timeout) is past the range"),
        "{err}"
    );
    assert_eq!(std::fs::read(sb.join("prof/hooks.json")).unwrap(), before);
}

/// A payload saved with a UTF-8 byte-order mark (as some Windows editors do) is not JSON
/// to a host's JSON.parse either, so it stays refused; but "not JSON (expected value at
/// line 1 column 1)" did not say why: the message names the mark and how to drop it.
#[test]
fn a_payload_starting_with_a_byte_order_mark_is_refused_naming_it() {
    let sb = with_workspace();
    profile_with(&sb, json!({"PreToolUse": []}));
    let body = b"\xEF\xBB\xBF{\"tool_name\": \"exec\"}";
    sb.write("bom.json", body);
    for src in ["bom.json", "-"] {
        let o = in_prof_with_stdin(&sb, &["run", "PreToolUse", "--payload", src], body.to_vec());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{src}: {err}");
        assert!(
            err.contains(&format!("payload {src}"))
                && err.contains("byte-order mark")
                && err.contains("save it as UTF-8 without"),
            "{src}: {err}"
        );
    }
}

/// `list` and `doctor` say when the profile folder does not exist; `trust` and `revoke`
/// said "no handler matched" (exit 0) and `run` "no PreToolUse handlers" (exit 0), so a
/// misspelt --profile passed for a profile without handlers. They refuse it (exit 1),
/// naming the folder, and create nothing.
#[test]
fn trust_revoke_and_run_say_the_profile_folder_does_not_exist() {
    let sb = with_workspace();
    install_and_trust_tool_gate(&sb, "prof");
    let trust = std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap();
    std::fs::rename(sb.join("prof"), sb.join("moved")).unwrap();
    sb.write("payload.json", r#"{"tool_name": "exec"}"#);
    let gone = format!(
        "the profile folder {} does not exist",
        sb.join("prof").display()
    );
    for args in [
        &["trust", "--all"][..],
        &["trust", "gate-mutating"],
        &["revoke", "--all"],
        &["run", "PreToolUse", "--payload", "payload.json"],
        &["run", "Stop", "--include-untrusted"],
    ] {
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&gone) && err.contains("--profile"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!sb.join("prof").exists(), "{args:?} created the profile");
        assert_eq!(
            std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
            trust,
            "{args:?}"
        );
    }
    // Back in place, all three work again.
    std::fs::rename(sb.join("moved"), sb.join("prof")).unwrap();
    in_prof(&sb, &["trust", "--all"]);
    in_prof(&sb, &["run", "PreToolUse", "--payload", "payload.json"]);
}

/// A trust file saved with a UTF-8 byte-order mark (some editors add one) got "expected
/// value at line 1 column 1"; hooks.json names the mark, and so does the trust file now
/// (found by a user-side sweep). Nothing is rewritten.
#[test]
fn a_trust_file_with_a_byte_order_mark_is_named_as_such() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    let body = b"\xEF\xBB\xBF{\"schema\": \"hookpack.trust.v1\", \"handlers\": {}}\n";
    let path = sb.write("finclaw-home/hooks-trust.json", body);
    for args in [&["list"][..], &["trust", "--all"]] {
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("hooks-trust.json") && err.contains("byte-order mark"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&path).unwrap(), body);
}

/// Found by the conformance audit: `{"updatedModel": ""}` was reported as a route to the
/// model "", which no provider has. It is no route, with a warning, and an earlier
/// handler's route stands.
#[test]
fn an_empty_updated_model_is_no_route() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"UserPromptSubmit": [
            {"id": "route", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\"fast\"}}'"},
            {"id": "empty", "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"updatedModel\":\" \"}}'"}
        ]}),
    );
    let d = run(
        &sb,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["updated_model"], "fast", "{d:#}");
    let h = &d["handlers"][1]["decision"];
    assert!(h.get("updated_model").is_none_or(Value::is_null), "{d:#}");
    assert!(
        h["warning"]
            .as_str()
            .is_some_and(|w| w.contains("hookSpecificOutput.updatedModel is empty")),
        "{d:#}"
    );
}

/// Found by the conformance audit: a group whose `matcher` is misspelt (`matchers`) runs
/// on every tool, as hosts pass the field over, while `trust --all` and `list` said
/// nothing (only `validate` and `doctor` warned). Both now warn, naming the field and the
/// effect; the handler is trusted and runs as before.
#[test]
fn a_misspelt_group_field_is_warned_of_by_trust_and_list() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        json!({"hooks": {"PreToolUse": [
            {"matchers": "exec", "hooks": [{"id": "gate", "type": "command", "command": "true"}]}
        ]}})
        .to_string(),
    );
    let said = "its group has the field `matchers` (did you mean `matcher`?), which hosts pass \
                over, so the group has no matcher and runs on every tool";
    let o = in_prof_output(&sb, &["trust", "--all"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("warning: PreToolUse gate: {said}")),
        "{err}"
    );
    let o = in_prof_output(&sb, &["list"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(said), "{err}");
    let d = run(&sb, "PreToolUse", json!({"tool_name": "write_file"}), &[]);
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
}

/// Found by the conformance audit: `run` on a SubagentStart payload with a `tool_name`
/// reported it as `match_string`, though the matcher is ignored there (it ran). Only tool
/// events have a match string.
#[test]
fn only_tool_events_have_a_match_string() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        json!({"hooks": {
            "SubagentStart": [
                {"matcher": "exec", "hooks": [{"id": "s", "type": "command", "command": "true"}]}
            ],
            "PreToolUse": [
                {"hooks": [{"id": "p", "type": "command", "command": "cat > stdin.json"}]}
            ]
        }})
        .to_string(),
    );
    let d = run(
        &sb,
        "SubagentStart",
        json!({"tool_name": "write_file", "subagent_id": "a", "task": "t"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["match_string"], Value::Null, "{d:#}");
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["match_string"], "exec", "{d:#}");
    // A tool event's stdin carries the call's id, as the seed lists (it lacked one).
    let stdin = read_json(&sb.join("ws/stdin.json"));
    assert_eq!(stdin["tool_use_id"], "hookpack-test-tool-use", "{stdin}");
}

/// Found by the conformance audit: answers hosts pass over drew no word. A log line before
/// the JSON answer makes stdout plain text (a gate ported from elsewhere then fails open in
/// silence), and top-level fields of other hosts' hooks (`continue`, `stopReason`,
/// `systemMessage`) or a top-level `additionalContext` are not read. Each gets a warning
/// naming what is not read and the fix; the decisions stay as hosts take them.
#[test]
fn answers_hosts_pass_over_are_warned_of() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "logs-first", "type": "command", "command": "echo checking; echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\"}}'"},
            {"id": "other-host", "type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"x\", \"systemMessage\": \"y\"}'"},
            {"id": "plain", "type": "command", "command": "echo just text"}
        ], "PostToolUse": [
            {"id": "top-context", "type": "command", "command": "echo '{\"additionalContext\": \"note\"}'"}
        ]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert!(d["outcome"].get("verdict").is_none(), "{d:#}");
    let warning = |i: usize| {
        d["handlers"][i]["decision"]["warning"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        warning(0).contains("stdout starts with text (`checking`), so hosts read it all as plain text and the JSON answer after it is not read")
            && warning(0).contains("print only the answer on stdout"),
        "{d:#}"
    );
    for key in ["continue", "stopReason", "systemMessage"] {
        assert!(
            warning(1).contains(&format!("the top-level \"{key}\" is not read")),
            "{key}: {d:#}"
        );
    }
    assert_eq!(warning(2), "", "{d:#}");
    let d = run(
        &sb,
        "PostToolUse",
        json!({"tool_name": "exec", "tool_response": {}}),
        &["--include-untrusted"],
    );
    let w = d["handlers"][0]["decision"]["warning"]
        .as_str()
        .unwrap_or_default();
    assert!(
        w.contains("the top-level \"additionalContext\" is not read")
            && w.contains("hookSpecificOutput.additionalContext"),
        "{d:#}"
    );
}

/// A handler whose stdout is a UTF-8 byte order mark and then its JSON answer gives no
/// decision, as hosts read it (JSON.parse and json.loads refuse the mark), but `run` says
/// why on the handler's line, and in JSON as the handler decision's `warning`; a mark
/// before plain text, which is no answer anyway, draws no warning.
#[test]
fn an_answer_after_a_byte_order_mark_gives_no_decision_and_says_why() {
    let sb = Sandbox::new();
    sb.write(
        "ws/bom.js",
        r#"process.stdout.write("\uFEFF" + JSON.stringify({hookSpecificOutput: {permissionDecision: "deny", permissionDecisionReason: "no"}}));"#,
    );
    sb.write("ws/bom-text.js", r#"process.stdout.write("\uFEFFok\n");"#);
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "bom-json", "type": "command", "command": "node bom.js"},
            {"id": "bom-text", "type": "command", "command": "node bom-text.js"}
        ]}),
    );
    let warning = "stdout starts with a UTF-8 byte order mark, so it is not read as JSON \
                   and gave no decision";
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert!(d["outcome"].get("verdict").is_none(), "{d:#}");
    let h = &d["handlers"];
    assert_eq!(h[0]["exit"], 0, "{d:#}");
    assert!(h[0]["decision"].get("verdict").is_none(), "{d:#}");
    assert!(h[0]["decision"].get("failure").is_none(), "{d:#}");
    assert!(
        h[0]["decision"]["warning"]
            .as_str()
            .is_some_and(|w| w.starts_with(warning)),
        "{d:#}"
    );
    assert!(h[1]["decision"].get("warning").is_none(), "{d:#}");

    let o = run_output(&sb, "PreToolUse", &["--include-untrusted"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("PreToolUse: no decision\n"), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains(" bom-json "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(&format!("warning: {warning}")), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains(" bom-text "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!line.contains("warning"), "{out}");
}

/// `list` prints a `profile` line, then one line per recipe and per handler. A profile path
/// holding a line break (`--profile $'p\nq'`) split the `profile` line in two, and so did
/// that path in a command `install --absolute-paths` wrote there, and the line break of a
/// hand-written command (a shell may be given one): what followed it read as a line of its
/// own. So did the path in the note on a profile folder that does not exist, and in the
/// warning on a workspace that is not a folder. Each is now one line, the control
/// characters shown escaped (`\n`, `\t`), as diagnostics and `catalog list` show them.
#[test]
fn list_text_keeps_each_entry_on_one_line() {
    let sb = Sandbox::new();
    let at = sb.path().display().to_string();
    ok(&sb
        .cmd()
        .args([
            "install",
            "tool-gate",
            "--absolute-paths",
            "--profile",
            "p\nq",
        ])
        .output()
        .unwrap());
    let file = sb.join("p\nq/hooks.json");
    let mut doc = read_json(&file);
    doc["hooks"]["Stop"] = json!([{"hooks": [
        {"id": "mine", "type": "command", "command": "true\necho done\tnow"}]}]);
    std::fs::write(&file, doc.to_string()).unwrap();
    let list = |profile: &str| {
        sb.cmd()
            .args(["list", "--profile", profile])
            .output()
            .unwrap()
    };

    let o = list("p\nq");
    ok(&o);
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], format!(r"profile {at}/p\nq"), "{out}");
    assert!(lines[1].starts_with("recipe  tool-gate "), "{out}");
    assert!(
        lines[2].starts_with("profile   PreToolUse ")
            && lines[2].contains(&format!(r"{at}/p\nq/hooks/tool-gate/scripts/main.js"))
            && lines[2].ends_with("[untrusted]"),
        "{out}"
    );
    assert!(
        lines[3].starts_with("profile   Stop ")
            && lines[3].contains(r"true\necho done\tnow")
            && lines[3].ends_with("[untrusted]"),
        "{out}"
    );

    let o = sb
        .cmd()
        .args(["list", "--profile", "no\nne", "--workspace", "w\nx"])
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("warning: the workspace ") && lines[0].contains(r"/w\nx"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("note: the profile folder ") && lines[1].contains(r"/no\nne"),
        "{err}"
    );
}

/// `run`'s advice for a handler without an id names its trust key, which holds the profile
/// path; with a line break there, the key was quoted as it is and the advice printed
/// escaped (`\n`), so it could not be pasted back. Both the key and the `--profile` are
/// written `$'…'` now: the advice stays on its line, and bash, run as printed, trusts the
/// handler.
#[test]
fn trust_advice_with_a_line_break_in_the_profile_path_runs_as_printed() {
    let sb = with_workspace();
    sb.write(
        "p\nq/hooks.json",
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let profile = sb.join("p\nq");
    let run = || {
        sb.cmd()
            .args(["run", "Stop", "--profile", profile.to_str().unwrap()])
            .current_dir(sb.join("ws"))
            .output()
            .unwrap()
    };
    let o = run();
    ok(&o);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
    let start = out.find("`hookpack trust --key $'").expect(&out) + 1;
    let command = &out[start..start + out[start..].find("`,").expect(&out)];
    assert!(command.contains("--profile $'"), "{command}");
    ok(&sb.shell("bash", command).output().unwrap());
    let out = String::from_utf8(run().stdout).unwrap();
    assert!(out.contains("[ran]"), "{out}");
}

/// The advice over a hooks.json hosts cannot walk named `hookpack validate PATH` with the
/// path as it is: one holding a blank or a `'` (`Bob's p`) could not be pasted back. It is
/// quoted for a shell now, and run as printed it validates that file.
#[test]
fn validate_advice_quotes_the_hooks_json_path() {
    let sb = Sandbox::new();
    sb.write("Bob's p/hooks.json", r#"{"hooks": []}"#);
    let o = sb
        .cmd()
        .args(["list", "--profile", "Bob's p"])
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(1), "{err}");
    let start = err.find("`hookpack validate ").expect(&err) + 1;
    let command = &err[start..start + err[start..].find('`').unwrap()];
    let file = sb.join("Bob's p/hooks.json");
    let quoted = format!("'{}'", file.display().to_string().replace('\'', r"'\''"));
    assert_eq!(command, format!("hookpack validate {quoted}"));
    let o = sb.shell("sh", command).output().unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!("{}:1:11: error[hooks-not-object]", file.display())),
        "{out}"
    );
}

/// `list` shows each entry on one line, but the other verbs printed a profile path holding
/// a line break (`--profile $'p\nq'`) as it is: the outcome lines of install and remove
/// (`(path)`), the trust key of each `trust` and `revoke` line, `run`'s trace line of a
/// handler without an id (its command), `doctor`'s findings and its "no problems in" note,
/// and the notes on stderr that quote the profile (install's `index: …; profile: …`,
/// update's "no recipes are installed in"). Each split in two, and what followed the break
/// read as a line of its own. They are now one line each, the path shown escaped (`\n`) as
/// `list` shows it.
#[test]
fn host_verbs_keep_each_line_whole_with_a_line_break_in_the_profile_path() {
    let sb = Sandbox::new();
    let at = sb.path().display().to_string();
    let escaped = format!(r"{at}/p\nq");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    let hookpack = |args: &[&str]| {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "p\nq"])
            .output()
            .unwrap();
        let out = String::from_utf8(o.stdout.clone()).unwrap();
        let err = String::from_utf8(o.stderr.clone()).unwrap();
        (o, out, err)
    };
    // Each line is whole: as many as expected, and the ones that name the profile name it
    // escaped.
    let whole = |what: &str, text: &str, count: usize, naming: usize| {
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), count, "{what}: {text}");
        let named = lines.iter().filter(|l| l.contains(&escaped)).count();
        assert_eq!(named, naming, "{what}: {text}");
    };

    let (o, out, err) = hookpack(&["install", "tool-gate", "--absolute-paths"]);
    ok(&o);
    whole("install stdout", &out, 1, 1);
    whole("install stderr", &err, 1, 1);
    let file = sb.join("p\nq/hooks.json");
    let mut doc = read_json(&file);
    doc["hooks"]["Stop"] = json!([{"hooks": [{"type": "command", "command": "true\ntrue"}]}]);
    std::fs::write(&file, doc.to_string()).unwrap();

    let (o, out, err) = hookpack(&["trust", "--all", "--workspace", "ws"]);
    ok(&o);
    whole("trust stdout", &out, 2, 2);
    whole("trust stderr", &err, 0, 0);

    let (o, out, _) = hookpack(&["run", "Stop", "--workspace", "ws"]);
    ok(&o);
    whole("run stdout", &out, 2, 0);
    assert!(
        out.lines().nth(1).unwrap().contains(r"true\ntrue [ran]"),
        "{out}"
    );

    let (o, out, err) = hookpack(&["doctor", "--workspace", "ws"]);
    ok(&o);
    whole("doctor stdout", &out, 0, 0);
    whole("doctor stderr", &err, 1, 1);
    std::fs::remove_file(sb.join("p\nq/hooks/tool-gate/scripts/main.js")).unwrap();
    let (o, out, _) = hookpack(&["doctor", "--workspace", "ws"]);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // The script-missing finding names the script in its message too.
    whole("doctor findings", &out, 2, 2);
    assert!(out.contains("script-missing"), "{out}");

    let (o, out, err) = hookpack(&["revoke", "--all", "--workspace", "ws"]);
    ok(&o);
    whole("revoke stdout", &out, 2, 2);
    whole("revoke stderr", &err, 0, 0);

    let (o, out, err) = hookpack(&["remove", "tool-gate"]);
    ok(&o);
    whole("remove stdout", &out, 1, 1);
    whole("remove stderr", &err, 0, 0);

    let (o, _, err) = hookpack(&["update"]);
    ok(&o);
    whole("update stderr", &err, 1, 1);
}

/// A `$FINCLAW_HOME` that is a file is the user's setup being wrong, and every verb that
/// reads or writes the trust file in it said so differently: `trust` and `revoke` "cannot
/// create folder …: File exists" (exit 3, as if the disk had failed), `list`, `run` and
/// `remove` "cannot inspect …/hooks-trust.json: Not a directory", `list` without
/// `--profile` the same of `active-profile`. Each now names the path, says it is a file
/// where a folder belongs, and gives the fix, with exit 1 as for other invalid
/// configuration; `doctor` reports it as its finding. The file is left as it is.
#[test]
fn a_finclaw_home_that_is_a_file_is_refused_alike_by_every_verb() {
    let sb = with_workspace();
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap());
    let home = sb.write("home-file", "not a folder\n");
    let path = home.display().to_string();
    for args in [
        &["list", "--profile", "prof", "--workspace", "ws"][..],
        &["list"],
        &[
            "run",
            "PreToolUse",
            "--profile",
            "prof",
            "--workspace",
            "ws",
        ],
        &["trust", "--all", "--profile", "prof", "--workspace", "ws"],
        &["revoke", "--all", "--profile", "prof", "--workspace", "ws"],
        &["remove", "tool-gate", "--profile", "prof"],
        &["doctor", "--fix", "--profile", "prof", "--workspace", "ws"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .env("FINCLAW_HOME", &home)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {out}{err}");
        let shown = if args[0] == "doctor" { &out } else { &err };
        assert!(
            shown.contains(&path)
                && shown.contains("$FINCLAW_HOME is a file, not a folder")
                && shown.contains("make it a folder")
                && shown.contains("point FINCLAW_HOME at a folder"),
            "{args:?}: {out}{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&home).unwrap(), "not a folder\n");
    assert!(sb.join("prof/hooks/tool-gate").is_dir());
}

/// A trust file that is a symbolic link stays refused, but `list` and `run`, which only
/// read it, refused it as "refusing to rewrite …: hookpack does not write through links",
/// and `doctor`'s finding said only that hookpack does not write through links. Every verb
/// now says why a link is refused
/// whether it reads or writes (the trust file is the record of what may run: a link could
/// point it at a file someone else controls, and trust's writes would go through it), names
/// where it points and the fix, exit 1; the link and its target are left as they are.
#[cfg(unix)]
#[test]
fn a_trust_file_that_is_a_link_is_refused_with_why_and_the_fix() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "true"}]}),
    );
    in_prof(&sb, &["trust", "s"]);
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let kept = std::fs::read(&trust).unwrap();
    std::fs::rename(&trust, sb.join("elsewhere.json")).unwrap();
    std::os::unix::fs::symlink(sb.join("elsewhere.json"), &trust).unwrap();
    for args in [
        &["list"][..],
        &["run", "Stop"],
        &["trust", "s"],
        &["revoke", "s"],
        &["doctor", "--fix"],
    ] {
        let o = in_prof_output(&sb, args);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(!said.contains("refusing to rewrite"), "{args:?}: {said}");
        for needle in [
            trust.display().to_string(),
            format!(
                "is a symbolic link (to {})",
                sb.join("elsewhere.json").display()
            ),
            "the record of what may run".to_string(),
            "replace the link with the file it points to".to_string(),
        ] {
            assert!(said.contains(&needle), "{args:?}: no {needle:?} in {said}");
        }
    }
    assert!(std::fs::symlink_metadata(&trust).unwrap().is_symlink());
    assert_eq!(std::fs::read(sb.join("elsewhere.json")).unwrap(), kept);
}

/// What each verb that reads the trust file says (stdout and stderr) when it refuses it,
/// after checking that it exits 1, names the file, and neither writes it nor lets `doctor`
/// call the profile fine.
#[cfg(unix)]
fn every_trust_verb_refuses(sb: &Sandbox, trust: &Path, needles: &[String]) {
    use std::os::unix::fs::MetadataExt as _;
    let before = std::fs::symlink_metadata(trust).unwrap();
    let kept = std::fs::read(trust).unwrap();
    sb.write("payload.json", "{}");
    for args in [
        &["list"][..],
        &["run", "Stop", "--payload", "payload.json"],
        &["trust", "s"],
        &["revoke", "s"],
        &["doctor"],
        &["doctor", "--fix"],
    ] {
        let o = in_prof_output(sb, args);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(!said.contains("no problems"), "{args:?}: {said}");
        assert!(!sb.join("ws/handler-ran").exists(), "{args:?}: {said}");
        for needle in [&trust.display().to_string()].into_iter().chain(needles) {
            assert!(said.contains(needle), "{args:?}: no {needle:?} in {said}");
        }
        let now = std::fs::symlink_metadata(trust).unwrap();
        assert_eq!(
            (now.ino(), now.mode(), now.uid()),
            (before.ino(), before.mode(), before.uid()),
            "{args:?}"
        );
        assert_eq!(std::fs::read(trust).unwrap(), kept, "{args:?}");
    }
}

/// Found by review: a trust file another user could change was read as any other, so an
/// entry they added ran their handler, `doctor` said "no problems", and `trust` kept the
/// file as writable as it was. As ssh's StrictModes: one writable by group or others, one
/// owned by someone else, or one in a folder others can write to without the sticky bit is
/// refused by every verb that reads it (exit 1), naming the file, why and the fix.
#[cfg(unix)]
#[test]
fn a_trust_file_someone_else_can_change_is_refused_with_why_and_the_fix() {
    use std::os::unix::fs::PermissionsExt as _;
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "touch handler-ran"}]}),
    );
    in_prof(&sb, &["trust", "s"]);
    let home = sb.join("finclaw-home");
    let trust = home.join("hooks-trust.json");
    let chmod = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let why = "a file someone else can change decides what runs".to_string();
    let chmod_600 = format!("`chmod 600 {}`", trust.display());
    for (mode, writable_by) in [
        (0o666, "its group and others"),
        (0o620, "its group"),
        (0o602, "others"),
    ] {
        chmod(&trust, mode);
        let what = format!("writable by {writable_by} (mode {mode:04o})");
        every_trust_verb_refuses(&sb, &trust, &[what, why.clone(), chmod_600.clone()]);
    }
    chmod(&trust, 0o644);
    chmod(&home, 0o777);
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            format!(
                "in {}, a folder others can write to (mode 0777) without the sticky bit",
                home.display()
            ),
            why.clone(),
            format!("`chmod o-w {}`", home.display()),
        ],
    );
    // With the sticky bit (as /tmp has) no one else can remove or rename the file.
    chmod(&home, 0o1777);
    ok(&in_prof_output(&sb, &["list"]));
    chmod(&home, 0o755);
    ok(&in_prof_output(&sb, &["doctor"]));
    // Read as before, it runs the handler it trusts (so the refusals above kept it from it).
    sb.write("payload.json", "{}");
    ok(&in_prof_output(
        &sb,
        &["run", "Stop", "--payload", "payload.json"],
    ));
    assert!(sb.join("ws/handler-ran").exists());
    std::fs::remove_file(sb.join("ws/handler-ran")).unwrap();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    if me != 0 {
        eprintln!("skipped the other owner: needs root, to give a file to another user");
        return;
    }
    std::os::unix::fs::chown(&trust, Some(1234), None).unwrap();
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            format!("owned by user 1234, not by you (user {me}) or root"),
            why,
            // Root is told to run as that user, never to take the file (found by the
            // review of the diff: `chown 0` locked the user out of their own trust).
            "run hookpack as user 1234 rather than as root with their HOME".to_string(),
        ],
    );
    // A folder of another user's holding the trust file is refused too: its owner can put
    // another file in its place (found by the same review).
    std::os::unix::fs::chown(&trust, Some(0), None).unwrap();
    let home = trust.parent().unwrap();
    std::os::unix::fs::chown(home, Some(1234), None).unwrap();
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            format!("a folder owned by user 1234, not by you (user {me}) or root"),
            "run hookpack as user 1234 rather than as root with their HOME".to_string(),
        ],
    );
    std::os::unix::fs::chown(home, Some(0), None).unwrap();
}

/// Only the folder holding the trust file was looked at, while a script's whole way from
/// `/` was: a folder above `FINCLAW_HOME` that others can write to (they can rename
/// `FINCLAW_HOME` away and put theirs in its place), or a link on the way owned by another
/// user, went unseen. Both are now refused by every verb that reads the file.
#[cfg(unix)]
#[test]
fn a_trust_file_reached_through_a_folder_or_link_others_control_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "touch handler-ran"}]}),
    );
    in_prof(&sb, &["trust", "s"]);
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let root = sb.join("");
    let root = root.as_path();
    let kept = std::fs::metadata(root).unwrap().permissions();
    // FINCLAW_HOME's own folder is private; the one above it is everyone's.
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let above = root.display().to_string();
    let above = above.trim_end_matches('/');
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            format!(
                "under {above}, a folder others can write to (mode 0777) without the sticky bit"
            ),
            format!("`chmod o-w {above}`"),
        ],
    );
    std::fs::set_permissions(root, kept).unwrap();
    ok(&in_prof_output(&sb, &["list"]));
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the link of another user: needs root, to give a link away");
        return;
    }
    // FINCLAW_HOME is a link another user owns: they can point it at a trust file of theirs.
    std::fs::rename(sb.join("finclaw-home"), sb.join("real-home")).unwrap();
    std::os::unix::fs::symlink("real-home", sb.join("finclaw-home")).unwrap();
    ok(&in_prof_output(&sb, &["list"]));
    std::os::unix::fs::lchown(sb.join("finclaw-home"), Some(1234), None).unwrap();
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            format!(
                "is reached through {}, a symbolic link owned by user 1234",
                sb.join("finclaw-home").display()
            ),
            "run hookpack as user 1234 rather than as root with their HOME".to_string(),
        ],
    );
}

/// The first `trust` under `umask 000` made `FINCLAW_HOME` writable by everyone, so the
/// next command refused the trust file in it (see above). The folders it makes are 0755,
/// whatever the umask.
#[cfg(unix)]
#[test]
fn the_first_trust_under_a_permissive_umask_leaves_a_trust_file_that_is_read() {
    use std::os::unix::fs::PermissionsExt as _;
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "true"}]}),
    );
    let o = sb
        .shell(
            "sh",
            "umask 000 && hookpack trust s --profile prof --workspace ws",
        )
        .output()
        .unwrap();
    ok(&o);
    let mode = |rel: &str| {
        std::fs::metadata(sb.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("finclaw-home"), 0o755);
    assert_eq!(mode("finclaw-home/hooks-trust.json"), 0o644);
    assert_eq!(list_json(&sb)["handlers"][0]["status"], "trusted");
}

/// Found by review: a trust file with a second name (`ln hooks-trust.json elsewhere`) was
/// split by the next write, which renames a new file into place: the other name kept the
/// old entries, a revoked handler trusted there. It is refused as a `hooks.json` with two
/// names is, by every verb that reads it.
#[cfg(unix)]
#[test]
fn a_trust_file_with_a_second_name_is_refused_and_never_split() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "touch handler-ran"}]}),
    );
    in_prof(&sb, &["trust", "s"]);
    let trust = sb.join("finclaw-home/hooks-trust.json");
    std::fs::hard_link(&trust, sb.join("elsewhere.json")).unwrap();
    every_trust_verb_refuses(
        &sb,
        &trust,
        &[
            "has 2 names (hard links".to_string(),
            "give it one name, or make the other a copy".to_string(),
        ],
    );
    // Given one name again, it is read as before.
    std::fs::remove_file(sb.join("elsewhere.json")).unwrap();
    in_prof(&sb, &["revoke", "s"]);
    assert_eq!(read_json(&trust)["handlers"], json!({}));
}

/// seeds/004: "Claw re-hashes the file before each spawn". `run` hashed every handler once,
/// before the first ran, so a trusted handler whose script changed in the meantime (here,
/// rewritten by the handler before it) still ran, though `list` called it `modified`. Its
/// script is hashed again just before it starts, and a change skips it.
#[test]
fn a_script_changed_during_a_run_is_not_run() {
    let sb = Sandbox::new();
    sb.write(
        "ws/second.sh",
        "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\"}}'\n",
    );
    sb.write(
        "ws/first.sh",
        "echo \"echo '{\\\"hookSpecificOutput\\\":{\\\"permissionDecision\\\":\\\"allow\\\"}}'\" > second.sh\n",
    );
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "first", "type": "command", "command": "sh first.sh"},
            {"id": "second", "type": "command", "command": "sh second.sh"}
        ]}),
    );
    in_prof(&sb, &["trust", "--all"]);
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
    assert!(
        d["handlers"][1]["state"]
            .as_str()
            .unwrap()
            .starts_with("skipped: modified"),
        "{d:#}"
    );
    assert!(d["outcome"].get("verdict").is_none(), "{d:#}");
    let second = (list_json(&sb)["handlers"].as_array().unwrap().iter())
        .find(|h| h["id"] == "second")
        .unwrap()["status"]
        .clone();
    assert_eq!(second, "modified");
}

/// `doctor --fix` with a `--workspace` that is not a folder (moved, on a drive not mounted,
/// or misspelt) warned that only the profile's handlers were taken, then called the trust
/// entries of that workspace's `hooks.json` dangling and deleted them, so putting the folder
/// back left every handler there untrusted. They are left alone, as for a missing profile.
#[test]
fn doctor_keeps_the_trust_of_a_workspace_that_is_not_a_folder() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"Stop": [{"hooks": [{"id": "w", "type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    in_prof(&sb, &["trust", "w"]);
    let trust = std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap();
    std::fs::rename(sb.join("ws"), sb.join("moved")).unwrap();
    for fix in [&[][..], &["--fix"]] {
        let o = in_prof_output(&sb, &[&["doctor"][..], fix].concat());
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is not a folder"), "{fix:?} {err}");
        assert!(
            !out.contains("trust-dangling") && !out.contains("removed the trust entry"),
            "{fix:?} {out}"
        );
        assert_eq!(o.status.code(), Some(0), "{fix:?} {out} {err}");
    }
    assert_eq!(
        std::fs::read(sb.join("finclaw-home/hooks-trust.json")).unwrap(),
        trust
    );
    std::fs::rename(sb.join("moved"), sb.join("ws")).unwrap();
    let status = &list_json(&sb)["handlers"][0]["status"];
    assert_eq!(status, "trusted");
}

/// Two handlers without an `id` running one command in one event share a trust key (file,
/// event and the command's digest), though their hashes differ (here by matcher): `trust
/// --all` said `trusted` for both and exited 0, but the second entry replaced the first, so
/// one was `modified` at once and never ran, and trusting again flipped which. Such
/// handlers are refused, naming the other and the fix (give each an `id`); nothing is
/// written.
#[test]
fn handlers_that_share_a_trust_key_are_refused() {
    let sb = with_workspace();
    sb.write(
        "prof/hooks.json",
        json!({"hooks": {"PreToolUse": [
            {"matcher": "exec", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "true"}]},
            {"hooks": [{"id": "other", "type": "command", "command": "true"}]}
        ]}})
        .to_string(),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("refused    PreToolUse - ")
            && lines[0].contains(
                "): its trust key is also that of the handler at /hooks/PreToolUse/1/hooks/0"
            )
            && lines[1].starts_with("refused    PreToolUse - ")
            && lines[1].contains(
                "): its trust key is also that of the handler at /hooks/PreToolUse/0/hooks/0"
            )
            && lines[0].contains("give each an `id`"),
        "{out}"
    );
    assert!(lines[2].starts_with("trusted "), "{out}");
    let statuses: Vec<Value> = (list_json(&sb)["handlers"].as_array().unwrap().iter())
        .map(|h| h["status"].clone())
        .collect();
    assert_eq!(statuses, ["untrusted", "untrusted", "trusted"]);
    let trust = read_json(&sb.join("finclaw-home/hooks-trust.json"));
    assert_eq!(trust["handlers"].as_object().unwrap().len(), 1, "{trust:#}");
}

/// A trust file holding one key twice (merged or edited by hand) was read keeping the last
/// value in silence (here the right hash, after a wrong one), so `list` and `run` called
/// the handler trusted by whichever came last, and the next `trust` dropped the other. It
/// is refused, at the key's lines, by every verb that reads it, and nothing is written.
#[test]
fn a_trust_file_with_a_key_given_twice_is_refused() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    in_prof(&sb, &["trust", "a"]);
    let path = sb.join("finclaw-home/hooks-trust.json");
    let good = read_json(&path);
    let (key, entry) = good["handlers"].as_object().unwrap().iter().next().unwrap();
    let body = format!(
        "{{\"schema\": \"hookpack.trust.v1\", \"handlers\": {{\n{k}: {{\"hash\": \"{z}\", \"trusted_at\": \"2020-01-01T00:00:00Z\"}},\n{k}: {e}\n}}}}\n",
        k = Value::from(key.clone()),
        z = "0".repeat(64),
        e = entry
    );
    std::fs::write(&path, &body).unwrap();
    for args in [
        &["list"][..],
        &["trust", "a"],
        &["revoke", "a"],
        &["run", "Stop"],
    ] {
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("hooks-trust.json")
                && err.contains("appears twice, at 2:1 and 3:1 (in /handlers)"),
            "{args:?}: {err}"
        );
    }
    let o = in_prof_output(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("error[trust-file-unreadable]"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), body);
}

/// Found by a hostile sweep: a folder in the place of the trust file was "is a folder,
/// expected a file" to `list` and `trust`, with no fix (only `doctor` had one). Every
/// verb names what it is and what to do; nothing is written.
#[test]
fn a_trust_file_that_is_a_folder_is_named_with_its_fix() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    let path = sb.join("finclaw-home/hooks-trust.json");
    std::fs::create_dir_all(path.join("kept")).unwrap();
    for args in [&["list"][..], &["trust", "a"], &["revoke", "a"]] {
        let o = in_prof_output(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(
                "hooks-trust.json: the trust file is a folder, where hookpack reads and writes \
                 a file; move it away"
            ),
            "{args:?}: {err}"
        );
    }
    assert!(path.join("kept").is_dir());

    // A trust file of the wrong shape was told in Rust's words ("invalid type: sequence,
    // expected a map at line 1 column 41"): in JSON's now, with the place.
    std::fs::remove_dir_all(&path).unwrap();
    sb.write(
        "finclaw-home/hooks-trust.json",
        r#"{"schema":"hookpack.trust.v1","handlers":[]}"#,
    );
    let o = in_prof_output(&sb, &["list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "it cannot be read as a hookpack trust file, as its entries are not shaped as \
             hookpack writes them: invalid type: array, expected an object (at 1:41); fix it"
        ),
        "{err}"
    );
    // One cut short (found by review: it was called "not a hookpack trust file", with
    // removal as the fix and nothing of what removal costs).
    sb.write(
        "finclaw-home/hooks-trust.json",
        "{\"schema\":\"hookpack.trust.v1\",\"handlers\":",
    );
    let o = in_prof_output(&sb, &["list"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("it cannot be read as a hookpack trust file, as it is cut short")
            && err.contains("removing it drops every trust it records"),
        "{err}"
    );
}

/// A payload nested deeper than hookpack reads (valid JSON a host may well send) was
/// refused as "not JSON (recursion limit exceeded …)". It is refused as nested too deep,
/// with the line and column, from a file and from stdin alike.
#[test]
fn a_payload_nested_too_deep_is_not_called_invalid_json() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    let deep = format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200));
    sb.write("deep.json", &deep);
    for (payload, stdin) in [("deep.json", ""), ("-", deep.as_str())] {
        let o = in_prof_with_stdin(&sb, &["run", "Stop", "--payload", payload], stdin);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "payload {payload}: it is nested deeper than hookpack reads (1:"
            )) && err.contains("nesting is deeper than 128 levels")
                && !err.contains("not JSON"),
            "{err}"
        );
    }
    // Nor is a lone surrogate escape, which JSON.parse reads (found by a hostile sweep).
    let o = in_prof_with_stdin(
        &sb,
        &["run", "Stop", "--payload", "-"],
        "{\"a\": \"\\ud800\"}",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("payload -: it holds a lone surrogate escape, which JSON's grammar allows")
            && !err.contains("not JSON"),
        "{err}"
    );
}

/// A payload of plain text starting with `n`, `t` or `f` was answered "did you mean
/// `null`?" (`true`, `false`), whatever the word. The hint is kept for a word near the
/// literal (`nul`, `ture`), and any other word is told what a JSON value is (found by
/// review).
#[test]
fn a_word_far_from_null_true_and_false_is_not_taken_for_them() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    for (stdin, says) in [
        (
            "not json",
            "1:1: expected a JSON value (object, array, string, number, true, false or null)",
        ),
        (
            "{\"a\": test}",
            "1:7: expected a JSON value (object, array, string, number, true, false or null)",
        ),
        (
            "fix this",
            "1:1: expected a JSON value (object, array, string, number, true, false or null)",
        ),
        (
            "{\"a\": nul}",
            "1:7: expected a JSON value here (did you mean `null`?)",
        ),
        (
            "{\"a\": ture}",
            "1:7: expected a JSON value here (did you mean `true`?)",
        ),
        (
            "{\"a\": fals",
            "1:7: expected a JSON value here (did you mean `false`?)",
        ),
    ] {
        let o = in_prof_with_stdin(&sb, &["run", "Stop", "--payload", "-"], stdin);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stdin}: {err}");
        assert!(
            err.contains(&format!("error: payload -: not JSON ({says})")),
            "{stdin}: {err}"
        );
    }
}

/// A payload holding a key twice (`tool_input` written twice while editing a test payload)
/// was read keeping the last value in silence: matchers and handlers saw the second
/// `tool_input`, `ls`, where the first was `rm -rf /`. It is refused, naming the key and
/// both lines, as `test` refuses such a case.
#[test]
fn a_payload_with_a_key_given_twice_is_refused() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    sb.write(
        "twice.json",
        "{\"tool_name\": \"exec\",\n \"tool_input\": {\"command\": \"rm -rf /\"},\n \"tool_input\": {\"command\": \"ls\"}}\n",
    );
    let o = in_prof_output(
        &sb,
        &[
            "run",
            "PreToolUse",
            "--payload",
            "twice.json",
            "--include-untrusted",
        ],
    );
    fails_saying(
        &o,
        1,
        "payload twice.json: key `tool_input` appears twice, at 2:2 and 3:2 (in /),",
    );
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Found by the hostile-input sweep: with `$FINCLAW_HOME` unset and `$HOME` unset, empty
/// or relative, the FinClaw home was `./.finclaw`, relative to the folder hookpack ran in:
/// in a checked-out repository that is the workspace's own `.finclaw`, so a repository
/// shipping `.finclaw/hooks-trust.json` (and a `profiles/default` folder) had `run` start
/// its own workspace handlers as trusted. The home comes from the user database when
/// `$HOME` is unset or empty, and a relative one is refused.
#[test]
fn a_repository_cannot_bring_its_own_trust_file() {
    let sb = Sandbox::new();
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo ran > ran.txt", "id": "x"}
    ]}]}});
    sb.write(".finclaw/hooks.json", serde_json::to_vec(&hooks).unwrap());
    sb.write(".finclaw/profiles/default/.keep", "");
    // What the repository's author prepared, on a machine with the same checkout path.
    let o = sb
        .cmd()
        .env("FINCLAW_HOME", sb.join(".finclaw"))
        .args(["trust", "--all"])
        .output()
        .unwrap();
    ok(&o);
    assert!(sb.join(".finclaw/hooks-trust.json").is_file());
    let o = sb
        .cmd()
        .env_remove("FINCLAW_HOME")
        .env("HOME", ".")
        .args(["run", "PreToolUse", "--payload", "-"])
        .write_stdin(r#"{"tool_name": "exec"}"#)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !sb.join("ran.txt").exists(),
        "the repository's handler ran: {err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("$HOME") && err.contains("FINCLAW_HOME"),
        "{err}"
    );
}

/// Found by the hostile-input sweep: the trust hash expanded a quoted `~/` (`sh "~/x.sh"`)
/// to `$HOME`, which no shell does: the hash covered `$HOME/x.sh` while the handler ran
/// `~/x.sh` in the workspace, so that file (a repository's) could change after it was
/// trusted and still run. Only an unquoted `~/` is the home folder.
#[test]
fn a_quoted_tilde_is_not_the_home_folder() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("hm/x.sh", "echo home\n");
    sb.write("ws/~/x.sh", "echo workspace\n");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sh \"~/x.sh\"", "id": "quoted"},
        {"type": "command", "command": "sh ~/x.sh", "id": "bare"}
    ]}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    let list = || {
        let mut cmd = sb.cmd();
        cmd.env("HOME", sb.join("hm"));
        list_json_of(cmd)["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["id"].as_str().unwrap().to_string(),
                    h["script"]["path"].as_str().unwrap().to_string(),
                    h["status"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let shown = |rel: &str| sb.join(rel).display().to_string();
    assert_eq!(
        list(),
        [
            ("quoted".into(), shown("ws/~/x.sh"), "untrusted".into()),
            ("bare".into(), shown("hm/x.sh"), "untrusted".into()),
        ]
    );
    let o = sb
        .cmd()
        .env("HOME", sb.join("hm"))
        .args(["trust", "--all", "--profile", "prof", "--workspace", "ws"])
        .output()
        .unwrap();
    ok(&o);
    sb.write("ws/~/x.sh", "echo changed > ran.txt\n");
    assert_eq!(list()[0].2, "modified");
    assert_eq!(list()[1].2, "trusted");
}

/// Found by the hostile-input sweep: a handler whose script path names a folder (or a
/// fifo, or a device) was reported by `doctor` as running a file "which does not exist".
#[test]
fn doctor_says_a_script_that_is_no_file_is_no_file() {
    let sb = Sandbox::new();
    // Relative to the workspace, where handlers run.
    std::fs::create_dir_all(sb.join("ws/scripts/gate.sh")).unwrap();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"type": "command", "command": "sh scripts/gate.sh", "id": "gate"},
            {"type": "command", "command": "sh scripts/gone.sh", "id": "gone"}
        ]}),
    );
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("scripts/gate.sh, which is not a regular file")
            && out.contains("scripts/gone.sh, which does not exist"),
        "{out}"
    );
}

/// Found by the hostile-input sweep: the trust hash put the profile root in for a
/// single-quoted `'${FINCLAW_PROFILE_ROOT}/…'`, which the shell leaves as it is: a
/// workspace handler `node '${FINCLAW_PROFILE_ROOT}/hooks/tool-gate/scripts/main.js'` was
/// listed, hashed and trusted as the installed tool-gate's script while the shell ran the
/// repository's file of that name in a folder named `${FINCLAW_PROFILE_ROOT}`, which could
/// then change and still run. Only a `$` the shell expands is the profile root.
#[test]
fn a_single_quoted_profile_root_is_not_the_profile() {
    let sb = Sandbox::new();
    sb.write("prof/x.js", "// the profile's\n");
    sb.write("ws/${FINCLAW_PROFILE_ROOT}/x.js", "// the workspace's\n");
    let (doc, _) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "node '${FINCLAW_PROFILE_ROOT}/x.js'", "id": "single"},
            {"type": "command", "command": "node \"${FINCLAW_PROFILE_ROOT}/x.js\"", "id": "double"},
            {"type": "command", "command": "node ${FINCLAW_PROFILE_ROOT}/x.js", "id": "bare"},
            {"type": "command", "command": "node \\${FINCLAW_PROFILE_ROOT}/x.js", "id": "escaped"}
        ]),
    );
    let scripts: Vec<(String, String)> = doc["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap().to_string(),
                h["script"]["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let shown = |rel: &str| sb.join(rel).display().to_string();
    assert_eq!(
        scripts,
        [
            ("single".into(), shown("ws/${FINCLAW_PROFILE_ROOT}/x.js")),
            ("double".into(), shown("prof/x.js")),
            ("bare".into(), shown("prof/x.js")),
            ("escaped".into(), shown("ws/${FINCLAW_PROFILE_ROOT}/x.js")),
        ]
    );
}

/// A script path holding a shell expansion hookpack does not make (`$PWD`, `$(…)`, a
/// backquote) names a file only the shell knows: it was hashed as the file of that literal
/// name in the workspace, so a decoy there was trusted while the shell ran another file,
/// which could then change and still run as trusted (found by the user-side sweep). Such a
/// script is unknown: listed as such, never trusted, never run, and named by doctor.
#[test]
fn a_script_path_with_a_shell_expansion_is_never_trusted() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "echo real > ran-real.txt\n");
    sb.write("ws/$PWD/x.sh", "echo decoy\n");
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "sh \"$PWD/x.sh\"", "id": "pwd"},
            {"type": "command", "command": "sh $(pwd)/x.sh", "id": "subst"},
            {"type": "command", "command": "sh '$PWD/x.sh'", "id": "single"}
        ]),
    );
    for id in ["pwd", "subst"] {
        let h = &by_id[id];
        assert_eq!(h["status"], "script-unknown", "{doc:#}");
        assert_eq!(h["script"]["kind"], "unresolved", "{doc:#}");
    }
    // Single-quoted, the `$` is a plain character: that file is the one the shell runs.
    let h = &by_id["single"];
    assert_eq!(h["status"], "untrusted", "{doc:#}");
    assert_eq!(h["script"]["kind"], "file", "{doc:#}");

    let o = in_prof_output(&sb, &["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains(
            "): its command names its script with `$PWD/x.sh`, which holds a shell \
             expansion hookpack does not make, so the file it runs cannot be known or hashed"
        ),
        "{out}"
    );
    let out = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran-real.txt").exists(), "{out:#}");
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("error[script-unknown]"), "{out}");
    assert_eq!(o.status.code(), Some(1), "{out}");
}

/// `--payload` names a pipe as well as a file: `--payload <(jq …)` gives `/dev/fd/N`, a
/// pipe, which was refused as "a fifo, socket or device" (found by the user-side sweep);
/// it is read as stdin is.
#[cfg(unix)]
#[test]
fn a_payload_from_a_pipe_is_read() {
    let sb = with_tool_gate();
    in_prof(&sb, &["trust", "--all"]);
    let fifo = sb.join("payload.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // The writer waits at most 30 s for a reader, so a run that never opens the pipe fails
    // the test instead of hanging it.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write as _;
            use std::os::unix::fs::OpenOptionsExt as _;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            let mut file = loop {
                match std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&fifo)
                {
                    Ok(f) => break f,
                    Err(_) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    Err(e) => panic!("no reader opened the pipe: {e}"),
                }
            };
            file.write_all(br#"{"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}"#)
                .unwrap();
        })
    };
    let o = in_prof_output(
        &sb,
        &[
            "run",
            "PreToolUse",
            "--payload",
            fifo.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    writer.join().unwrap();
    let d = one_json_document(&o);
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
}

/// An unquoted `*`, `?` or `[` in a script path is pathname expansion: the shell runs
/// whichever file the pattern matches, while the hash covered the file of that literal name,
/// so a decoy `[x].sh` was trusted while `sh [x].sh` ran `x.sh`, which could then change
/// and still run as trusted. Such a script is unknown: never trusted, never run.
#[test]
fn a_script_path_with_a_glob_is_never_trusted() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "echo real > ran-real.txt\n");
    sb.write("ws/[x].sh", "echo decoy\n");
    sb.write("ws/sub/x.rb", "\n");
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "sh [x].sh", "id": "bracket"},
            {"type": "command", "command": "sh [x]*.sh", "id": "star"},
            {"type": "command", "command": "ruby -C s?b x.rb", "id": "chdir"},
            {"type": "command", "command": "sh '[x].sh'", "id": "quoted"}
        ]),
    );
    for id in ["bracket", "star", "chdir"] {
        assert_eq!(by_id[id]["status"], "script-unknown", "{id}: {doc:#}");
    }
    // Quoted, the brackets are plain characters: that file is the one the shell runs.
    assert_eq!(by_id["quoted"]["script"]["kind"], "file", "{doc:#}");

    in_prof_output(&sb, &["trust", "--all"]);
    let out = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran-real.txt").exists(), "{out:#}");
}

/// Found by the host-side sweep: the hash covered a file other than the one that runs.
/// `sh /proc/self/cwd/x.sh` was hashed as hookpack read it (a file of hookpack's working
/// folder) while the handler's shell ran the workspace's; so was a workspace link to
/// `/proc/self/cwd`. `perl -S x.pl` was hashed as the workspace's `x.pl` while perl ran
/// the one PATH names. Each is unknown now: never trusted, never run, with the reason.
#[cfg(target_os = "linux")]
#[test]
fn a_script_each_process_reads_as_its_own_or_perl_finds_on_path_is_never_trusted() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "echo real > ran-real.txt\n");
    sb.write("ws/x.pl", "\n");
    std::os::unix::fs::symlink("/proc/self/cwd", sb.join("ws/here")).unwrap();
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "sh /proc/self/cwd/x.sh", "id": "proc"},
            {"type": "command", "command": "sh here/x.sh", "id": "link"},
            {"type": "command", "command": "sh /dev/fd/0", "id": "fd"},
            {"type": "command", "command": "perl -S x.pl", "id": "search"},
            {"type": "command", "command": "perl -wS x.pl", "id": "grouped"},
            {"type": "command", "command": "perl x.pl", "id": "plain"}
        ]),
    );
    for id in ["proc", "link", "fd", "search", "grouped"] {
        assert_eq!(by_id[id]["status"], "script-unknown", "{id}: {doc:#}");
    }
    assert_eq!(by_id["plain"]["script"]["kind"], "file", "{doc:#}");
    let o = in_prof_output(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("with `-S`, which looks the script up on PATH"),
        "{out}"
    );
    assert!(out.contains("leads through `/proc` or `/dev/fd`"), "{out}");

    in_prof_output(&sb, &["trust", "--all"]);
    let out = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran-real.txt").exists(), "{out:#}");
}

/// A leading unquoted `~` not followed by `/` is a tilde prefix the shell expands too:
/// `~+` to the working folder (bash), `~NAME` to that user's home. Only `~/` was expanded,
/// so `sh ~+/x.sh` was hashed as the decoy `~+/x.sh` in the workspace while bash ran
/// `x.sh`, which could then change and still run as trusted.
#[test]
fn a_script_path_with_a_tilde_prefix_is_never_trusted() {
    if !Path::new("/bin/bash").exists() {
        return;
    }
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "echo real > ran-real.txt\n");
    sb.write("ws/~+/x.sh", "echo decoy\n");
    sb.write("ws/~nobody/x.sh", "echo decoy\n");
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "sh ~+/x.sh", "id": "plus"},
            {"type": "command", "command": "sh ~nobody/x.sh", "id": "user"},
            {"type": "command", "command": "sh '~+/x.sh'", "id": "quoted"}
        ]),
    );
    assert_eq!(by_id["plus"]["status"], "script-unknown", "{doc:#}");
    assert_eq!(by_id["user"]["status"], "script-unknown", "{doc:#}");
    assert_eq!(by_id["quoted"]["status"], "untrusted", "{doc:#}");

    in_prof_output(&sb, &["trust", "--all"]);
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    let o = sb
        .cmd()
        .env("SHELL", "/bin/bash")
        .args(["run", "PreToolUse", "--payload", "payload.json"])
        .args(["--profile", "prof", "--workspace", "ws"])
        .output()
        .unwrap();
    ok(&o);
    assert!(!sb.join("ws/ran-real.txt").exists());
}

/// A shell expansion in a word before the script (a flag's value) may split into several
/// words and move the script: `python3 -X *.py x.py` runs `b.py` when the workspace holds
/// `a.py` and `b.py`, while the hash covered `x.py`, so `b.py` could change after trust and
/// still run as trusted. Such a script is unknown.
#[test]
fn a_shell_expansion_before_the_script_makes_it_unknown() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.py", "\n");
    sb.write("ws/a.py", "\n");
    sb.write("ws/b.py", "open(\"ran-real.txt\", \"w\")\n");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "python3 -X *.py x.py", "id": "glob"},
        {"type": "command", "command": "python3 -X $OPTS x.py", "id": "var"},
        {"type": "command", "command": "python3 -X 'a*' x.py", "id": "quoted"}
    ]}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    let o = in_prof_output(&sb, &["list", "--format", "json"]);
    let doc = one_json_document(&o);
    let script = |id: &str| {
        doc["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap()["script"]
            .clone()
    };
    assert_eq!(
        script("glob"),
        json!({"kind": "unresolved", "path": "-X *.py x.py"})
    );
    assert_eq!(
        script("var"),
        json!({"kind": "unresolved", "path": "-X $OPTS x.py"})
    );
    assert_eq!(script("quoted")["kind"], "file", "{doc:#}");
    let o = in_prof_output(&sb, &["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains(
            "): its command names its script with `-X *.py x.py`, which holds a shell expansion"
        ),
        "{out}"
    );
    // Run, python3 takes `b.py` for its script (`-X a.py b.py x.py x.py`).
    run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran-real.txt").exists());
}

/// `run` skips a handler whose script is unknown, and says so without advising `hookpack
/// trust`, which refuses such a handler: it said "run `hookpack trust` or pass
/// --include-untrusted", as for an untrusted one.
#[test]
fn run_does_not_advise_trust_for_a_script_unknown() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sh $PWD/x.sh", "id": "pwd"}
    ]}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    let o = in_prof_output(&sb, &["run", "PreToolUse", "--payload", "payload.json"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("[skipped: script unknown"), "{out}");
    assert!(!out.contains("run `hookpack trust`"), "{out}");
    assert!(out.contains("--include-untrusted"), "{out}");
}

/// A command whose program name is an expansion (`$(cat cmd.txt)`, `` `cat cmd.txt` ``)
/// runs whatever the shell makes of it: it was taken for a program on PATH, so the hash
/// covered the command text alone, and the workspace's `cmd.txt` could then name another
/// script and still run as trusted. Such a script is unknown.
#[test]
fn a_program_name_made_by_the_shell_is_a_script_unknown() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/cmd.txt", "true\n");
    sb.write("ws/x.sh", "echo real > ran-real.txt\n");
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "$(cat cmd.txt)", "id": "subst"},
            {"type": "command", "command": "`cat cmd.txt`", "id": "backquote"},
            {"type": "command", "command": "echo $HOME", "id": "plain"}
        ]),
    );
    assert_eq!(by_id["subst"]["status"], "script-unknown", "{doc:#}");
    assert_eq!(by_id["backquote"]["status"], "script-unknown", "{doc:#}");
    assert_eq!(by_id["plain"]["status"], "untrusted", "{doc:#}");
    in_prof_output(&sb, &["trust", "--all"]);
    sb.write("ws/cmd.txt", "sh x.sh\n");
    run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran-real.txt").exists());
}

/// With `$HOME` unset, the shell takes `~/` from the user database; the trust hash took it
/// as a folder named `~` in the workspace, another file than the one that runs (found by
/// review).
#[cfg(unix)]
#[test]
fn a_tilde_without_home_is_the_user_databases_home() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sh ~/hookpack-test-x.sh", "id": "tilde"}
    ]}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    let o = sb
        .cmd()
        .env_remove("HOME")
        .args([
            "list",
            "--profile",
            "prof",
            "--workspace",
            "ws",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let doc = one_json_document(&o);
    let path = doc["handlers"][0]["script"]["path"].as_str().unwrap();
    // The user database's home, whatever this process's `$HOME` is.
    let entry = std::process::Command::new("sh")
        .args(["-c", "getent passwd \"$(id -u)\""])
        .output()
        .unwrap();
    let entry = String::from_utf8(entry.stdout).unwrap();
    let home = std::path::PathBuf::from(entry.trim_end().split(':').nth(5).unwrap());
    assert_eq!(
        std::path::Path::new(path),
        home.join("hookpack-test-x.sh"),
        "{doc:#}"
    );
}

/// Writes the workspace's `hooks.json` with `handlers` as one PreToolUse group, and lists
/// them: `list --format json`'s document, and each handler's entry by its id.
fn list_workspace_handlers(
    sb: &Sandbox,
    handlers: Value,
) -> (Value, std::collections::BTreeMap<String, Value>) {
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": handlers}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    let doc = one_json_document(&in_prof_output(sb, &["list", "--format", "json"]));
    let by_id = (doc["handlers"].as_array().unwrap().iter())
        .map(|h| (h["id"].as_str().unwrap().to_string(), h.clone()))
        .collect();
    (doc, by_id)
}

/// Asserts that `list` (its report `doc`, its handlers `by_id`) gives each handler of
/// `cases` (id, command) an unknown script: never trusted.
fn assert_scripts_unknown(
    doc: &Value,
    by_id: &std::collections::BTreeMap<String, Value>,
    cases: &[(&str, &str)],
) {
    for (id, _) in cases {
        assert_eq!(by_id[*id]["status"], "script-unknown", "{id}: {doc:#}");
    }
}

/// What `hookpack trust --all` prints on stdout for the profile `prof` and workspace `ws`.
fn trust_all_stdout(sb: &Sandbox) -> String {
    let o = in_prof_output(sb, &["trust", "--all"]);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Handlers of `cases` (id, command), as a `hooks` array of one group.
fn command_handlers<'a>(cases: impl Iterator<Item = &'a (&'a str, &'a str)>) -> Value {
    cases
        .map(|(id, cmd)| json!({"type": "command", "command": cmd, "id": id}))
        .collect()
}

/// Asserts that `list` (its report `doc`, its handlers `by_id`) gives each handler of
/// `cases` (id, command) the script file whose path ends with `path`.
fn assert_scripts_are(
    doc: &Value,
    by_id: &std::collections::BTreeMap<String, Value>,
    cases: &[(&str, &str)],
    path: &str,
) {
    for (id, _) in cases {
        let script = &by_id[*id]["script"];
        assert_eq!(script["kind"], "file", "{id}: {doc:#}");
        let found = script["path"].as_str().unwrap_or_default();
        assert!(found.ends_with(path), "{id}: {doc:#}");
    }
}

/// The shell splits an unquoted `$FINCLAW_PROFILE_ROOT` at blanks (and globs it): with the
/// profile in `my prof`, `sh $FINCLAW_PROFILE_ROOT/x.sh` runs the file `my` beside it, while
/// `my prof/x.sh` was the file hashed and trusted. Such a script is unknown, never run; a
/// quoted one is the file it names.
#[test]
fn an_unquoted_profile_root_that_the_shell_splits_is_never_trusted() {
    let sb = with_workspace();
    sb.write("my", "echo split > ran-split.txt\n");
    sb.write("my prof/x.sh", "echo quoted > ran-quoted.txt\n");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sh $FINCLAW_PROFILE_ROOT/x.sh", "id": "bare"},
        {"type": "command", "command": "sh ${FINCLAW_PROFILE_ROOT}/x.sh", "id": "braced"},
        {"type": "command", "command": "sh \"$FINCLAW_PROFILE_ROOT/x.sh\"", "id": "quoted"}
    ]}]}});
    sb.write("my prof/hooks.json", serde_json::to_vec(&hooks).unwrap());
    let in_profile = |args: &[&str]| {
        sb.cmd()
            .args(args)
            .args(["--profile", "my prof", "--workspace", "ws"])
            .output()
            .unwrap()
    };
    let doc = one_json_document(&in_profile(&["list", "--format", "json"]));
    let status = |id: &str| {
        (doc["handlers"].as_array().unwrap().iter())
            .find(|h| h["id"] == id)
            .map(|h| h["status"].clone())
            .unwrap()
    };
    assert_eq!(status("bare"), "script-unknown", "{doc:#}");
    assert_eq!(status("braced"), "script-unknown", "{doc:#}");
    assert_eq!(status("quoted"), "untrusted", "{doc:#}");

    let o = in_profile(&["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains(
            "id:bare): its command leaves `$FINCLAW_PROFILE_ROOT` unquoted in \
             `$FINCLAW_PROFILE_ROOT/x.sh`, and the profile's path holds a blank or a glob \
             character, so the shell splits it into other words"
        ),
        "{out}"
    );
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    let o = in_profile(&["run", "PreToolUse", "--payload", "payload.json"]);
    assert!(!sb.join("ws/ran-split.txt").exists(), "{o:?}");
    assert!(sb.join("ws/ran-quoted.txt").exists(), "{o:?}");
}

/// `run E --payload '{"tool_name": …}'` (the JSON itself where a file goes) was told only
/// that no file has that name; it is told how to give JSON text (found by review). The
/// file is still read when there is one of that name.
#[test]
fn a_payload_given_as_json_text_is_told_to_pipe_it() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "a", "type": "command", "command": "true"}]}),
    );
    let text = r#"{"tool_name": "exec"}"#;
    let o = in_prof_output(&sb, &["run", "Stop", "--payload", text]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "error: payload {text}: no file has that name; --payload takes a file, or - to read the JSON from stdin (echo '{{…}}' | hookpack run EVENT --payload -)"
        )),
        "{err}"
    );
    // A missing file of another name is said to be missing, and named as the payload
    // (found by the host-side hostile-input sweep: it said only `cannot open nosuch.json`).
    let o = in_prof_output(&sb, &["run", "Stop", "--payload", "nosuch.json"]);
    fails_saying(
        &o,
        1,
        "payload nosuch.json: no file has that name; --payload takes a file holding the JSON \
         object, or - to read it from stdin",
    );
    // A folder given for it was "cannot read ws: is a folder", without saying it was the
    // payload (found by a README walk-through).
    let o = in_prof_output(&sb, &["run", "Stop", "--payload", "ws"]);
    fails_saying(
        &o,
        1,
        "payload ws: is a folder; --payload takes a file holding the JSON object, or - to \
         read it from stdin",
    );
}

/// `run` skipping an untrusted handler advised "run `hookpack trust`", which alone is a
/// usage error (it takes handler ids, --recipe or --all). The advice names the handler's
/// id, or its recipe when it has none (found by review).
#[test]
fn run_advises_the_trust_command_that_takes_the_skipped_handler() {
    let sb = with_tool_gate();
    let p = profile_flag(&sb, "prof");
    let w = workspace_flag(&sb, "ws");
    let o = in_prof_with_stdin(
        &sb,
        &["run", "PreToolUse", "--payload", "-"],
        r#"{"tool_name": "exec", "tool_input": {"command": "ls"}}"#,
    );
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("[skipped: untrusted (trust it with `hookpack trust gate-mutating{p}{w}`, or pass --include-untrusted)]")),
        "{out}"
    );
    // A hand-written handler without an id is named by its trust key.
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let o = sb
        .cmd()
        .args(["run", "Stop", "--profile", "prof", "--workspace", "ws"])
        .output()
        .unwrap();
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let key = format!(
        "{}#Stop#command:{}",
        sb.join("ws/.finclaw/hooks.json").display(),
        hookpack::sha256::Sha256::of(b"true")
    );
    let command = format!("hookpack trust --key '{key}'{p}{w}");
    assert!(
        out.contains(&format!(
            "[skipped: untrusted (trust it with `{command}`, or pass --include-untrusted)]"
        )),
        "{out}"
    );
    // Run as printed, it trusts that handler (and no other), which then runs.
    run_as_printed(&sb, &command);
    let o = in_prof_output(&sb, &["run", "Stop"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("[ran]"), "{out}");
    assert!(!out.contains("skipped"), "{out}");
}

/// A repair (the installed version written again) that puts back a script the user had
/// edited and trusted said the handlers "changed with this version", though the version is
/// the one installed; it says the repair changed them (found by review).
#[test]
fn a_repair_that_changes_trusted_handlers_says_the_repair_did() {
    let sb = with_tool_gate();
    let main = sb.join("prof/hooks/tool-gate/scripts/main.js");
    let mut text = std::fs::read_to_string(&main).unwrap();
    text.push_str("// edited\n");
    std::fs::write(&main, text).unwrap();
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    let version = read_json(&sb.join("prof/hooks/.receipts/tool-gate.json"))["version"]
        .as_str()
        .unwrap()
        .to_string();
    let o = sb
        .cmd()
        .args([
            "install",
            &format!("tool-gate@{version}"),
            "--profile",
            "prof",
        ])
        .output()
        .unwrap();
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("repair"), "{out}");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("note: 1 handler(s) of tool-gate that you trusted changed with this repair and will not run until trusted again"),
        "{said}"
    );
}

/// A payload without `tool_name` (`{"tool": "exec"}`, a misspelt key) left every handler
/// with a matcher "skipped: matcher does not match", with nothing saying why; the trace
/// says the payload has no `tool_name` (found by review).
#[test]
fn a_payload_without_tool_name_is_said_to_lack_it() {
    let sb = with_tool_gate();
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    let o = in_prof_with_stdin(
        &sb,
        &["run", "PreToolUse", "--payload", "-", "--format", "json"],
        r#"{"tool": "exec", "tool_input": {"command": "rm -rf /"}}"#,
    );
    ok(&o);
    let d = one_json_document(&o);
    assert_eq!(
        d["handlers"][0]["state"],
        "skipped: matcher does not match (the payload has no `tool_name`, the tool name matchers are tested against)"
    );
}

/// A `tool_name` that is no string was said to be missing ("the payload has no
/// `tool_name`"), sending the user to look for a misspelt key that is not misspelt.
#[test]
fn a_tool_name_that_is_no_string_is_not_said_to_be_missing() {
    let sb = with_tool_gate();
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    let o = in_prof_with_stdin(
        &sb,
        &["run", "PreToolUse", "--payload", "-", "--format", "json"],
        r#"{"tool_name": ["exec"], "tool_input": {"command": "rm -rf /"}}"#,
    );
    ok(&o);
    let d = one_json_document(&o);
    assert_eq!(
        d["handlers"][0]["state"],
        "skipped: matcher does not match (the payload's `tool_name` is no string, but [\"exec\"], and matchers are tested against a tool name string)"
    );
}

/// `trust` printed a refused handler as `refused: <reason> <event> <id> <hash>  (<key>)`,
/// so a reason ran into the event (`… is missing Stop m …`) and the handler came after a
/// sentence of any length. The line has the columns of the others, the reason at its end
/// (found by review).
#[test]
fn a_refused_handler_is_printed_in_the_columns_of_the_others() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [
            {"id": "m", "type": "command", "command": "sh missing.sh"},
            {"id": "ok", "type": "command", "command": "true"}
        ]}),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("refused    Stop m "), "{out}");
    assert!(
        lines[0].ends_with("#Stop#id:m): its script is missing"),
        "{out}"
    );
    assert!(lines[1].starts_with("trusted    Stop ok "), "{out}");
}

/// Hosts skip a handler that was never trusted, or changed since it was (an update), and
/// `doctor` said "no problems" all the same: the likeliest reason a hook does not run went
/// unsaid (found by the new-user walkthrough). It is a note, not a problem: doctor still
/// exits 0, and JSON lists such handlers as `awaiting_trust`.
#[test]
fn doctor_names_handlers_that_hosts_skip_until_trusted() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    let w = workspace_flag(&sb, "ws");
    std::fs::create_dir_all(sb.join("ws")).unwrap();
    let install = |sb: &Sandbox, spec: &str| {
        ok(&(sb.cmd())
            .args(["install", spec, "--profile", "prof"])
            .output()
            .unwrap());
    };
    install(&sb, "tool-gate@0.2.1");
    let doctor = |sb: &Sandbox| {
        let o = in_prof_output(sb, &["doctor"]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let json = one_json_document(&in_prof_output(sb, &["doctor", "--format", "json"]));
        let statuses: Vec<String> = (json["awaiting_trust"].as_array().unwrap().iter())
            .map(|h| format!("{} {}", h["status"].as_str().unwrap(), h["recipe"]))
            .collect();
        (err, statuses)
    };
    let (err, statuses) = doctor(&sb);
    assert!(
        err.contains(&format!(
            "note: 1 handler will not run until it is trusted (1 never trusted); `hookpack \
             list{p}{w}` names it, `hookpack trust --all{p}{w}` trusts it"
        )),
        "{err}"
    );
    assert_eq!(statuses, ["untrusted \"tool-gate\""]);

    in_prof(&sb, &["trust", "--all"]);
    let (err, statuses) = doctor(&sb);
    assert!(!err.contains("trusted"), "{err}");
    assert!(statuses.is_empty(), "{statuses:?}");

    // Another version changes the handler: it is modified, and hosts skip it again.
    install(&sb, "tool-gate@0.1.0");
    let (err, statuses) = doctor(&sb);
    assert!(
        err.contains("1 handler will not run until it is trusted (1 changed since it was trusted)"),
        "{err}"
    );
    assert_eq!(statuses, ["modified \"tool-gate\""]);
}

/// `FOO=1 node x.js`, `env node x.js` and `exec node x.js` were taken to run no script
/// (their first word is no interpreter), so the hash left `x.js` out: edited after trust,
/// it still ran as trusted (found by review). The script is the one the program runs; one
/// behind another wrapper (`nice`, `timeout`, `sudo`) is unknown, never trusted.
#[test]
fn a_script_behind_an_assignment_or_a_wrapper_is_hashed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.js", "process.exit(0);\n");
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        json!([
            {"type": "command", "command": "FOO=1 node x.js", "id": "assign"},
            {"type": "command", "command": "env A=1 node x.js", "id": "env"},
            {"type": "command", "command": "exec node x.js", "id": "exec"},
            {"type": "command", "command": "nice -n 5 node x.js", "id": "nice"}
        ]),
    );
    for id in ["assign", "env", "exec"] {
        assert_eq!(by_id[id]["script"]["kind"], "file", "{doc:#}");
    }
    assert_eq!(by_id["nice"]["status"], "script-unknown", "{doc:#}");
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("its command runs `nice`, which runs another program"),
        "{out}"
    );
    sb.write(
        "ws/x.js",
        "require('fs').writeFileSync('ran.txt', 'edited');\n",
    );
    let doc = one_json_document(&in_prof_output(&sb, &["list", "--format", "json"]));
    for h in doc["handlers"].as_array().unwrap() {
        let want = if h["id"] == "nice" {
            "script-unknown"
        } else {
            "modified"
        };
        assert_eq!(h["status"], want, "{doc:#}");
    }
    run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert!(!sb.join("ws/ran.txt").exists());
}

/// With a trust file that cannot be read, `doctor` added to its `trust-file-unreadable`
/// finding a note that every handler was "never trusted" and that `hookpack trust --all`
/// trusts them: which were trusted cannot be told, and `trust` refuses that file too.
#[test]
fn doctor_does_not_call_handlers_never_trusted_when_the_trust_file_cannot_be_read() {
    let sb = Sandbox::new();
    sb.write("ws/ok.sh", "exit 0\n");
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "ok", "type": "command", "command": "sh ok.sh"}]}),
    );
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    sb.write("finclaw-home/hooks-trust.json", "{\"schema\": ");
    let o = in_prof_output(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("trust-file-unreadable"),
        "{o:?}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("never trusted"), "{err}");
    let json = one_json_document(&in_prof_output(&sb, &["doctor", "--format", "json"]));
    assert_eq!(json["awaiting_trust"], json!([]), "{json:#}");
}

/// `run` skipped a handler whose script is gone with "trust it with `hookpack trust ID`",
/// which refuses such a handler (`its script is missing`). It names the missing file and
/// the fix instead.
#[test]
fn run_does_not_advise_trust_for_a_script_that_is_missing() {
    let sb = Sandbox::new();
    sb.write("ws/gone.sh", "exit 0\n");
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "gone", "type": "command", "command": "sh gone.sh"}]}),
    );
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    std::fs::remove_file(sb.join("ws/gone.sh")).unwrap();
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    let state = d["handlers"][0]["state"].as_str().unwrap();
    assert!(state.starts_with("skipped: script missing"), "{state}");
    assert!(!state.contains("hookpack trust gone"), "{state}");
    assert!(state.contains("gone.sh"), "{state}");
}

/// `trust --recipe ID` took every handler stamped `"recipe": "ID"`, those of the
/// workspace's `.finclaw/hooks.json` too: a cloned repository could stamp its own handler
/// with the id of a recipe the user installed, and the user's `trust --recipe tool-gate`
/// after an update trusted it along. Install writes recipes into the profile only, so the
/// selection is the profile's handlers; a workspace one is trusted by its id or `--all`.
#[test]
fn trust_of_a_recipe_takes_no_workspace_handler_stamped_with_it() {
    let sb = with_tool_gate();
    sb.write("ws/evil.sh", "exit 0\n");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sh evil.sh", "id": "evil", "recipe": "tool-gate"}
    ]}]}});
    sb.write(
        "ws/.finclaw/hooks.json",
        serde_json::to_vec(&hooks).unwrap(),
    );
    for verb in ["trust", "revoke"] {
        let o = in_prof_output(&sb, &[verb, "--recipe", "tool-gate"]);
        ok(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("evil"), "{verb}: {out}");
    }
    ok(&in_prof_output(&sb, &["trust", "--recipe", "tool-gate"]));
    let list = one_json_document(&in_prof_output(&sb, &["list", "--format", "json"]));
    let statuses: Vec<(String, String)> = (list["handlers"].as_array().unwrap().iter())
        .map(|h| {
            (
                h["source"].as_str().unwrap().to_string(),
                h["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        statuses.contains(&("profile".into(), "trusted".into()))
            && statuses.contains(&("workspace".into(), "untrusted".into())),
        "{statuses:?}"
    );
}

/// A redirection before the program (`2>/dev/null node x.js`), a reserved word (`! node
/// x.js`, `{ node x.js; }`, `if node x.js; then …`) or a builtin that runs its words as a
/// command (`eval node x.js`, `builtin exec node x.js`) made the program word `2`, `!`,
/// `{`, `eval`…: a bare name, taken to run no script, so the hash left out `x.js`, which the
/// shell runs: edited after trust, it still ran as trusted. Redirections are passed over
/// and the reserved words that run the command after them too; the builtins make the
/// script unknown.
#[test]
fn a_script_behind_a_redirection_or_a_reserved_word_is_hashed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.js", "process.exit(0);\n");
    let hashed = [
        ("redirect-fd", "2>/dev/null node x.js"),
        ("redirect", ">/dev/null node x.js"),
        ("redirect-in", "FOO=1 <x.js node x.js"),
        ("exec-redirect", "exec 2>&1 node x.js"),
        ("after", "node x.js 2> err.txt"),
        ("bang", "! node x.js"),
        ("brace", "{ node x.js; }"),
        ("if", "if node x.js; then :; fi"),
        ("bang-assign", "! FOO=1 node x.js"),
        ("brace-assign", "{ FOO=$(true) node x.js; }"),
        ("while-assign", "while FOO=1 node x.js; do :; done"),
    ];
    let unknown = [
        ("eval", "eval node x.js"),
        ("builtin", "builtin exec node x.js"),
        ("coproc", "coproc node x.js"),
        ("source", ". ./x.js"),
        ("case", "case a in a) node x.js;; esac"),
        ("for", "for i in 1; do node x.js; done"),
    ];
    let (doc, by_id) =
        list_workspace_handlers(&sb, command_handlers(hashed.iter().chain(&unknown)));
    assert_scripts_are(&doc, &by_id, &hashed, "ws/x.js");
    assert_scripts_unknown(&doc, &by_id, &unknown);
    let out = trust_all_stdout(&sb);
    assert!(
        out.contains("its command runs `eval`, which runs another program"),
        "{out}"
    );
    sb.write("ws/x.js", "process.exit(1);\n");
    let doc = one_json_document(&in_prof_output(&sb, &["list", "--format", "json"]));
    for h in doc["handlers"].as_array().unwrap() {
        assert_ne!(h["status"], "trusted", "{doc:#}");
    }
}

/// A command whose first simple command runs no script but a later one does (`cd sub &&
/// node x.js`, `true; node x.js`, `if true; then node x.js; fi`) was trusted on its text
/// alone: the hash covers the first simple command's script, here none, so an edit of
/// `x.js` after trust still ran as trusted. Its script is unknown; a command of programs
/// alone (`echo '{}' | cat`) still runs none.
#[test]
fn a_script_a_later_simple_command_runs_is_never_trusted_unhashed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.js", "process.exit(0);\n");
    sb.write("ws/sub/x.js", "process.exit(0);\n");
    let unknown = [
        ("cd", "cd sub && node x.js"),
        ("semicolon", "true; node x.js"),
        ("pipe", "cat | node x.js"),
        ("line", "echo hi\nnode x.js"),
        ("then", "if true; then node x.js; fi"),
        ("or", "false || sh x.js"),
        ("subst", "true $(sh x.js)"),
        ("subst-assign", "FOO=$(sh x.js) true"),
        ("subshell", "(cd sub; node x.js)"),
        ("backquote", "echo `sh x.js`"),
        ("backquote-quoted", "echo \"`node x.js`\""),
    ];
    let none = [
        ("programs", "echo '{}' | cat"),
        ("plain", "exit 0"),
        ("single-quoted", "echo '`sh x.js`'"),
    ];
    let (doc, by_id) = list_workspace_handlers(&sb, command_handlers(unknown.iter().chain(&none)));
    assert_scripts_unknown(&doc, &by_id, &unknown);
    for (id, _) in none {
        assert_eq!(by_id[id]["script"]["kind"], "none", "{id}: {doc:#}");
    }
    let out = trust_all_stdout(&sb);
    assert!(
        out.contains(
            "its first command runs no script, and another of its commands, `node x.js`, runs one"
        ),
        "{out}"
    );
}

/// An assignment whose value holds a command substitution or parentheses (`FOO=$(date)
/// node x.js`, `N=$((1+1)) …`, bash's `A=(a b) …`), or that bash reads as one though it is
/// no plain `NAME=` (`a[0]=1 …`, `FOO+=1 …`), made the program word `date`, `a[0]=1`…: a
/// bare name, taken to run no script, so an edit of `x.js`, which the shell runs, after
/// trust still ran as trusted.
#[test]
fn a_script_behind_an_assignment_with_a_substitution_is_hashed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.js", "process.exit(0);\n");
    let commands = [
        ("subst", "FOO=$(true) node x.js"),
        ("subst-words", "FOO=$(echo a b) BAR=1 node x.js"),
        ("nested", "FOO=$(echo $(true)) node x.js"),
        ("arith", "N=$((1+1)) node x.js"),
        ("array", "A=(a b) node x.js"),
        ("subscript", "a[0]=1 node x.js"),
        ("append", "FOO+=1 node x.js"),
        ("env", "env FOO=$(true) node x.js"),
    ];
    let (doc, by_id) = list_workspace_handlers(&sb, command_handlers(commands.iter()));
    assert_scripts_are(&doc, &by_id, &commands, "ws/x.js");
}

/// An interpreter given no script reads it from stdin, so `sh < x.sh` runs `x.sh`: that
/// file is the one hashed (with redirections passed over, none was), and an edit of it
/// after trust is `modified`. A here-string or inline code is no such file.
#[test]
fn a_script_given_to_an_interpreter_on_stdin_is_hashed() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "exit 0\n");
    let hashed = [
        ("plain", "sh < x.sh"),
        ("fd0", "0<x.sh bash"),
        ("dash-s", "bash -s < x.sh"),
        ("both", "sh <x.sh 2>/dev/null"),
        ("dash", "sh - < x.sh"),
        // `<>` opens the file for reading (and writing) on stdin, 0 by default; the last
        // redirection of stdin is the one the shell keeps.
        ("readwrite", "sh <> x.sh"),
        ("readwrite-fd0", "bash 0<>x.sh"),
        ("readwrite-last", "sh < y.sh <> x.sh"),
    ];
    let none = [
        ("inline", "sh -c 'exit 0' < x.sh"),
        ("herestring", "sh <<< x.sh"),
        ("other-fd", "sh 3< x.sh"),
        ("other-fd-readwrite", "sh 3<> x.sh"),
        ("payload", "python3 -"),
    ];
    let (doc, by_id) = list_workspace_handlers(&sb, command_handlers(hashed.iter().chain(&none)));
    assert_scripts_are(&doc, &by_id, &hashed, "ws/x.sh");
    for (id, _) in none {
        assert_eq!(by_id[id]["script"]["kind"], "none", "{id}: {doc:#}");
    }
}

/// An interpreter given no script whose stdin is a copy of another descriptor (`sh 3<x.sh
/// <&3`) runs the file open there, which hookpack does not follow: its script is unknown,
/// never trusted. It was taken for no script, so an edit of `x.sh` after trust still ran as
/// trusted.
#[test]
fn a_script_given_on_a_copied_stdin_is_unknown() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.sh", "exit 0\n");
    let unknown = [
        ("copy", "sh 3<x.sh <&3"),
        ("copy-fd0", "bash 3<x.sh 0<&3"),
        ("copy-out", "bash 3<x.sh 0>&3"),
    ];
    let handlers: Vec<Value> = (unknown.iter())
        .map(|(id, cmd)| json!({"type": "command", "command": cmd, "id": id}))
        .collect();
    let (doc, by_id) = list_workspace_handlers(&sb, Value::Array(handlers));
    assert_scripts_unknown(&doc, &by_id, &unknown);
    let out = trust_all_stdout(&sb);
    assert!(
        out.contains("its stdin is a copy of another file descriptor"),
        "{out}"
    );
}

/// Launchers of an environment that run the command after them (`poetry run python x.py`,
/// `bundle exec ruby x.rb`, `conda run -n e python x.py`, `dotenv -- node x.js`) were taken
/// for programs running no script, as `uv run` was: only the command was hashed, so an edit
/// of `x.py` after trust still ran as trusted. Their flags are not read: the script is
/// unknown. Their other subcommands run no script.
#[test]
fn a_script_an_environment_launcher_runs_is_unknown() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write("ws/x.py", "print(1)\n");
    let unknown = [
        ("poetry", "poetry run python x.py"),
        ("pipenv", "pipenv run python x.py"),
        ("pdm", "pdm run python x.py"),
        ("hatch", "hatch run python x.py"),
        ("rye", "rye run python x.py"),
        ("pixi", "pixi run python x.py"),
        ("conda", "conda run -n e python x.py"),
        ("mamba", "micromamba run -n e python x.py"),
        ("bundle", "bundle exec ruby x.rb"),
        ("mise", "mise exec -- node x.js"),
        ("volta", "volta run node x.js"),
        ("dotenv", "dotenv -- node x.js"),
    ];
    let none = [
        ("poetry-check", "poetry check"),
        ("bundle-check", "bundle check"),
    ];
    let handlers: Vec<Value> = (unknown.iter().chain(&none))
        .map(|(id, cmd)| json!({"type": "command", "command": cmd, "id": id}))
        .collect();
    let (doc, by_id) = list_workspace_handlers(&sb, Value::Array(handlers));
    assert_scripts_unknown(&doc, &by_id, &unknown);
    for (id, _) in none {
        assert_eq!(by_id[id]["script"]["kind"], "none", "{id}: {doc:#}");
    }
    let out = trust_all_stdout(&sb);
    assert!(
        out.contains("its command runs `poetry`, which runs another program"),
        "{out}"
    );
}

/// A launcher that runs a script (`uv run x.py`, `npx tsx x.ts`, `go run x.go`) was taken
/// for a program running no script, so only its command was hashed and an edit of the
/// script after trust still ran as trusted. The script it runs is hashed; a launcher flag
/// hookpack does not read (it may change the folder or take a value) or a package.json
/// script (`npm run NAME`, which can change after trust) makes the script unknown.
#[test]
fn a_script_a_launcher_runs_is_hashed() {
    let sb = with_workspace();
    sb.write("ws/x.py", "print(1)\n");
    sb.write("ws/x.ts", "process.exit(0);\n");
    sb.write("ws/x.go", "package main\nfunc main() {}\n");
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "c", "type": "command", "command": "uv run x.py"}]}),
    );
    in_prof(&sb, &["trust", "--all"]);
    assert_eq!(scripts(&sb), [("file".to_string(), "ws/x.py".to_string())]);
    sb.write("ws/x.py", "print(2)\n");
    let l = list_json(&sb);
    assert_eq!(l["handlers"][0]["status"], "modified", "{l:#}");

    let py = [
        ("uv", "uv run x.py"),
        ("uv-python", "uv run python x.py"),
        ("uv-dashdash", "uv run -- x.py"),
        ("uv-flags", "uv run --frozen --locked --no-sync -q x.py"),
        ("uv-python3", "uv run --quiet python3 x.py"),
    ];
    let ts = [
        ("npx-tsx", "npx tsx x.ts"),
        ("npx-ts-node", "npx ts-node x.ts"),
        ("npx-dashdash", "npx -- tsx x.ts"),
        ("bunx", "bunx tsx x.ts"),
        ("bun-x", "bun x tsx x.ts"),
        ("pnpm-exec", "pnpm exec tsx x.ts"),
        ("npm-exec", "npm exec -- tsx x.ts"),
        ("npm-exec-plain", "npm exec tsx x.ts"),
    ];
    let go = [("go", "go run x.go")];
    let unknown = [
        ("uv-with", "uv run --with rich x.py"),
        ("uv-project", "uv run --project sub x.py"),
        ("uv-directory", "uv run --directory sub x.py"),
        ("uv-python-flag", "uv run --python 3.12 x.py"),
        ("uv-global-flag", "uv --directory sub run x.py"),
        ("npx-yes", "npx -y tsx x.ts"),
        ("npx-package", "npx --package tsx tsx x.ts"),
        ("bunx-flag", "bunx --bun tsx x.ts"),
        ("bun-x-flag", "bun x --bun tsx x.ts"),
        ("pnpm-filter", "pnpm exec --filter a tsx x.ts"),
        ("pnpm-dir", "pnpm -C sub exec tsx x.ts"),
        ("npm-exec-ws", "npm exec tsx -w sub x.ts"),
        ("npm-run", "npm run hook"),
        ("npm-test", "npm test"),
        ("pnpm-run", "pnpm run hook"),
        ("yarn", "yarn hook"),
        ("go-flag", "go run -exec sudo x.go"),
        ("go-files", "go run x.go y.go"),
        ("go-package", "go run ."),
    ];
    let none = [
        ("npx-pkg", "npx prettier --check ."),
        ("uv-tool", "uv run ruff check"),
    ];
    let (doc, by_id) = list_workspace_handlers(
        &sb,
        command_handlers(py.iter().chain(&ts).chain(&go).chain(&unknown).chain(&none)),
    );
    assert_scripts_are(&doc, &by_id, &py, "ws/x.py");
    assert_scripts_are(&doc, &by_id, &ts, "ws/x.ts");
    assert_scripts_are(&doc, &by_id, &go, "ws/x.go");
    assert_scripts_unknown(&doc, &by_id, &unknown);
    for (id, _) in none {
        assert_eq!(by_id[id]["script"]["kind"], "none", "{id}: {doc:#}");
    }
    let out = trust_all_stdout(&sb);
    for said in [
        "its command runs `uv`, a launcher whose flags",
        "its command runs `go`, a launcher whose flags",
        "its command runs `npm`, which runs a command package.json names",
    ] {
        assert!(out.contains(said), "{said}: {out}");
    }
}

/// Started by a parent that ignores SIGCHLD (a disposition children inherit), `run` lost
/// every handler's exit status (the kernel reaps such children itself), so each counted as
/// "killed by a signal": a gate's deny was dropped as a failure, no decision. The CLI
/// takes SIGCHLD back to its default first.
#[cfg(target_os = "linux")]
#[test]
fn run_reads_exit_codes_when_started_with_sigchld_ignored() {
    use std::os::unix::process::CommandExt;
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "gate", "type": "command", "command":
            "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no\"}}'"}]}),
    );
    sb.write("payload.json", json!({"tool_name": "exec"}).to_string());
    let mut cmd = sb.std_cmd();
    cmd.args([
        "run",
        "PreToolUse",
        "--payload",
        "payload.json",
        "--profile",
        "prof",
        "--workspace",
        "ws",
        "--include-untrusted",
        "--format",
        "json",
    ]);
    // SAFETY: signal(2) in the child before exec; no memory is touched.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    ok(&o);
    let d = one_json_document(&o);
    assert_eq!(d["handlers"][0]["exit"], 0, "{d:#}");
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
}

/// A handler without an id could be trusted only with `--all`, which trusts every other
/// handler of the profile and workspace as well (and `run` advised just that). `trust --key
/// KEY` takes the one handler with that trust key; a key no handler has is refused, naming
/// it, and the trust file is left as it was.
#[test]
fn trust_by_key_takes_that_handler_alone() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "sh a.sh"},
            {"type": "command", "command": "sh b.sh"}
        ]}]}})
        .to_string(),
    );
    sb.write("ws/a.sh", "echo a > a.txt\n");
    sb.write("ws/b.sh", "echo b > b.txt\n");
    let key = |command: &str| {
        format!(
            "{}#Stop#command:{}",
            sb.join("ws/.finclaw/hooks.json").display(),
            hookpack::sha256::Sha256::of(command.as_bytes())
        )
    };
    let o = in_prof_output(&sb, &["trust", "--key", &key("sh a.sh")]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("trusted "), "{out}");
    ok(&in_prof_output(&sb, &["run", "Stop"]));
    assert!(sb.join("ws/a.txt").exists());
    assert!(
        !sb.join("ws/b.txt").exists(),
        "the other handler was trusted too"
    );
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let before = std::fs::read(&trust).unwrap();
    let o = in_prof_output(&sb, &["trust", "--key", "nope", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        one_json_document(&o)["error"]["kind"],
        "handler-key-not-found"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no handler with trust key `nope`"),
        "{o:?}"
    );
    assert_eq!(std::fs::read(&trust).unwrap(), before);

    // Found by a hostile sweep: a key spelt with `..` (or relative) named no handler,
    // though trust keys are folded so; it is folded as the listing's keys are.
    let b = key("sh b.sh");
    for spelt in [
        b.replace("/ws/.finclaw/", "/ws/../ws/.finclaw/"),
        b.replace(&format!("{}/", sb.path().display()), ""),
    ] {
        let o = in_prof_output(&sb, &["trust", "--key", &spelt]);
        ok(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.starts_with("trusted ") || out.starts_with("unchanged "),
            "{spelt}: {out}"
        );
    }
    ok(&in_prof_output(&sb, &["run", "Stop"]));
    assert!(sb.join("ws/b.txt").exists());
}

/// `run --workspace ws` advised "trust it with `hookpack trust ID`" for a workspace
/// handler it skipped: typed in another folder, that command read that folder's
/// `.finclaw/hooks.json`, not ws's, and refused (or, with `--all`, trusted that folder's
/// handlers). Advice now carries the `--workspace` (and `--profile`) it was given; run as
/// printed from elsewhere it trusts the handler `run` skipped, which then runs.
#[test]
fn run_s_trust_advice_names_the_workspace_it_was_given() {
    let sb = Sandbox::new();
    sb.write("ws/mark.sh", "echo ran > ran.txt\n");
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"id": "ws-mark", "type": "command", "command": "sh mark.sh"}
        ]}]}})
        .to_string(),
    );
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    let run = || in_prof_with_stdin(&sb, &["run", "PreToolUse", "--payload", "-"], "{}");
    let o = run();
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let command = format!(
        "hookpack trust ws-mark --profile {} --workspace {}",
        sb.join("prof").display(),
        sb.join("ws").display()
    );
    assert!(
        out.contains(&format!("(trust it with `{command}`")),
        "{out}"
    );
    assert!(!sb.join("ws/ran.txt").exists());
    run_as_printed(&sb, &command);
    ok(&run());
    assert!(
        sb.join("ws/ran.txt").exists(),
        "the trusted handler did not run"
    );
}

/// What a workspace's hooks.json wrote, quoted in a message, took the advice's options as
/// if it were advice: in a workspace folder named `` `hookpack list x` `` with a handler
/// whose script path holds `` `hookpack list y` ``, `trust`'s line showed the trust key
/// `…/`hookpack list x --profile … --workspace …`/.finclaw/hooks.json#…`, and `doctor`,
/// `run` and `trust` (text and JSON) a script path and a command's path that are in no
/// file. A backquote opens advice only at the start of a message or after a blank or `(`,
/// as all of hookpack's does; paths and commands are shown as written, and the advice
/// beside them still carries the options. `trust`'s line completes only its refusal's
/// reason: a handler id, even an invalid one holding a `hookpack …`, stays as written.
#[test]
fn a_hookpack_command_quoted_in_a_workspace_s_paths_is_shown_as_written() {
    let sb = Sandbox::new();
    let ws_rel = "ws/`hookpack list x`";
    let ws = sb.join(ws_rel);
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    sb.write(&format!("{ws_rel}/s/a.js"), "process.exit(0);\n");
    sb.write(
        &format!("{ws_rel}/.finclaw/hooks.json"),
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"id": "plain", "type": "command", "command": "node s/a.js"},
            {"id": "gone", "type": "command", "command": "node 's/`hookpack list y`.js'"},
            {"id": "shexp", "type": "command", "command": "node \"s/`hookpack doctor z`.js\""},
            {"id": "`hookpack list v`", "type": "command", "command": "true"}
        ]}]}})
        .to_string(),
    );
    let p = profile_flag(&sb, "prof");
    let w = format!(" --workspace '{}'", ws.display());
    let key = format!("{}/.finclaw/hooks.json#PreToolUse#id:gone", ws.display());
    let missing = format!(
        "the command runs {}/s/`hookpack list y`.js, which",
        ws.display()
    );
    let unknown = "its command names its script with `s/`hookpack doctor z`.js`, which";
    let hookpack = |args: &[&str]| {
        sb.cmd()
            .args(args)
            .args(["--profile", "prof", "--workspace", ws_rel])
            .output()
            .unwrap()
    };
    let said = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let o = hookpack(&["trust", "gone", "shexp"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = said(&o);
    assert!(
        out.contains(&format!("({key}): its script is missing")) && out.contains(unknown),
        "{out}"
    );
    let o = hookpack(&["trust", "shexp", "--format", "json"]);
    let report = one_json_document(&o);
    assert!(
        report[0]["result"].as_str().unwrap().contains(unknown),
        "{report:#}"
    );
    let o = hookpack(&["doctor"]);
    let out = said(&o);
    assert!(
        out.contains(&missing)
            && out.contains(unknown)
            // The handler is the workspace's: `trust --all` would trust it unread.
            && out.contains(&format!(
                "`hookpack trust --key KEY{p}{w}` one you have read; 1 is in the \
                 workspace's .finclaw/hooks.json, so not `trust --all`"
            )),
        "{out}"
    );
    let o = hookpack(&["doctor", "--format", "json"]);
    let messages = one_json_document(&o)["problems"].to_string();
    assert!(
        messages.contains(&missing) && messages.contains(unknown),
        "{messages}"
    );
    let o = hookpack(&["run", "PreToolUse"]);
    ok(&o);
    let out = said(&o);
    assert!(
        out.contains(&missing) && out.contains(&format!("`hookpack trust plain{p}{w}`")),
        "{out}"
    );
    let o = hookpack(&["run", "PreToolUse", "--format", "json"]);
    let states = one_json_document(&o)["handlers"].to_string();
    assert!(states.contains(&missing), "{states}");
    // trust's line shows a handler's id, however invalid, as written.
    let o = hookpack(&["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = said(&o);
    assert!(
        out.contains("refused    PreToolUse `hookpack list v` ")
            && out.contains("#PreToolUse#id:`hookpack list v`): invalid"),
        "{out}"
    );
}

/// `trust ID` took every handler with that id, a cloned repository's too: following run's
/// advice for the profile's `gate-mutating` (`hookpack trust gate-mutating`) from a
/// workspace whose `.finclaw/hooks.json` has a handler of that id trusted the repository's
/// handler as well. An id takes the profile's handlers when the profile has one; the
/// workspace's is refused, naming `--all`, which takes it.
#[test]
fn trusting_a_profile_handler_s_id_leaves_a_workspace_handler_of_that_id_untrusted() {
    let sb = with_tool_gate();
    let p = profile_flag(&sb, "prof");
    let w = workspace_flag(&sb, "ws");
    sb.write("ws/evil.sh", "echo ran > ran-evil.txt\n");
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"id": "gate-mutating", "type": "command", "command": "sh evil.sh"}
        ]}]}})
        .to_string(),
    );
    let key = format!(
        "{}#PreToolUse#id:gate-mutating",
        sb.join("ws/.finclaw/hooks.json").display()
    );
    let o = in_prof_output(&sb, &["trust", "gate-mutating"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("trusted    PreToolUse gate-mutating "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("refused    PreToolUse gate-mutating "),
        "{out}"
    );
    assert!(
        lines[1].contains(&format!(".finclaw/hooks.json#PreToolUse#id:gate-mutating): the profile has a handler with id `gate-mutating` too, and a handler id takes the profile's; trust this workspace handler with `hookpack trust --key '{key}'{p}{w}`, or give it an id of its own")),
        "{out}"
    );
    let (doc, _) = list_workspace_handlers(
        &sb,
        json!([{"id": "gate-mutating", "type": "command", "command": "sh evil.sh"}]),
    );
    let ws = (doc["handlers"].as_array().unwrap().iter())
        .find(|h| h["source"] == "workspace")
        .unwrap();
    assert_eq!(ws["status"], "untrusted", "{doc:#}");
    let o = in_prof_with_stdin(
        &sb,
        &["run", "PreToolUse", "--payload", "-"],
        r#"{"tool_name": "exec", "tool_input": {"command": "ls"}}"#,
    );
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!sb.join("ws/ran-evil.txt").exists(), "{out}");
    assert!(
        out.contains(&format!("[skipped: untrusted (trust it with `hookpack trust --key '{key}'{p}{w}`, or pass --include-untrusted)]")),
        "{out}"
    );
    // Revoking by id takes both: it only ever takes trust away.
    ok(&in_prof_output(&sb, &["trust", "--all"]));
    let o = in_prof_output(&sb, &["revoke", "gate-mutating"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("revoked").count(), 2, "{out}");
}

/// An interpreter off the list (`dash`, `zsh`, `ksh`, a versioned `python3.11`, `nodejs`,
/// `tsx`, `php`) was taken for a program on PATH running no script, so the hash covered
/// the command alone and an edit of its script after trust still ran as trusted. Those are
/// read as interpreters; one whose flags hookpack does not read (`lua`, `pypy3`) makes the
/// script unknown, never trusted.
#[test]
fn the_trust_hash_covers_the_script_of_more_interpreters() {
    let sb = Sandbox::new();
    for file in [
        "x.sh", "x.py", "x.js", "x.ts", "x.php", "x.rb", "x.pl", "x.lua",
    ] {
        sb.write(&format!("ws/{file}"), "\n");
    }
    let cases = [
        ("dash x.sh", "file", "ws/x.sh"),
        ("zsh -o pipefail x.sh", "file", "ws/x.sh"),
        ("ksh x.sh", "file", "ws/x.sh"),
        ("mksh x.sh", "file", "ws/x.sh"),
        ("dash -c 'sh x.sh'", "none", ""),
        ("python3.11 -W ignore x.py", "file", "ws/x.py"),
        ("python3.12 x.py", "file", "ws/x.py"),
        ("python2.7 x.py", "file", "ws/x.py"),
        ("nodejs x.js", "file", "ws/x.js"),
        ("node20 x.js", "file", "ws/x.js"),
        ("tsx x.ts", "file", "ws/x.ts"),
        ("tsx --tsconfig tsconfig.json x.ts", "file", "ws/x.ts"),
        ("ts-node -P tsconfig.json x.ts", "file", "ws/x.ts"),
        ("php x.php", "file", "ws/x.php"),
        ("php -f x.php", "file", "ws/x.php"),
        ("php -r 'echo 1;'", "none", ""),
        ("ruby3.2 x.rb", "file", "ws/x.rb"),
        ("perl5.36 x.pl", "file", "ws/x.pl"),
        ("deno run -A x.ts", "file", "ws/x.ts"),
        ("bun run x.ts", "file", "ws/x.ts"),
        ("lua x.lua", "unresolved", "lua x.lua"),
        ("pypy3 x.py", "unresolved", "pypy3 x.py"),
        ("FOO=1 tclsh8.6 x.lua", "unresolved", "tclsh8.6 x.lua"),
        ("echo hi", "none", ""),
    ];
    let handlers: Vec<Value> = (cases.iter().enumerate())
        .map(|(i, (command, _, _))| json!({"id": format!("h{i}"), "type": "command", "command": command}))
        .collect();
    profile_with(&sb, json!({ "PreToolUse": handlers }));
    let want: Vec<(String, String)> = (cases.iter())
        .map(|(_, kind, path)| (kind.to_string(), path.to_string()))
        .collect();
    assert_eq!(scripts(&sb), want);
    // The repro: `dash x.sh` trusted, then x.sh changed, is `modified` and does not run.
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "d", "type": "command", "command": "dash x.sh"},
                              {"id": "l", "type": "command", "command": "lua x.lua"}]}),
    );
    let out = trust_all_stdout(&sb);
    assert!(out.contains("trusted    PreToolUse d "), "{out}");
    assert!(
        out.contains("#PreToolUse#id:l): its command runs `lua`, an interpreter whose flags hookpack does not read, so the script it runs cannot be known or hashed"),
        "{out}"
    );
    sb.write("ws/x.sh", "echo changed\n");
    let (doc, _) = list_workspace_handlers(&sb, json!([]));
    let d = (doc["handlers"].as_array().unwrap().iter())
        .find(|h| h["id"] == "d")
        .unwrap();
    assert_eq!(d["status"], "modified", "{doc:#}");
}

/// `python3 -m NAME` runs the module NAME, which python finds from the working folder first
/// (the workspace's `NAME.py`): no script was hashed, so the handler was trusted on its
/// command alone and ran whatever `NAME.py` became. Its script is unknown: never trusted.
#[test]
fn a_module_run_by_name_is_never_trusted() {
    let sb = Sandbox::new();
    sb.write("ws/gate.py", "\n");
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "m", "type": "command", "command": "python3 -m gate"}]}),
    );
    assert_eq!(
        scripts(&sb),
        [("unresolved".to_string(), "python3 -m gate".to_string())]
    );
    let out = trust_all_stdout(&sb);
    assert!(
        out.contains("its command runs the module `gate` (`-m`)"),
        "{out}"
    );
    assert!(out.contains("run the module's file as a script"), "{out}");
}

/// Validate keeps the recipe interpreters to the nine names: a recipe's `dash x.sh` is
/// still a program looked up on PATH.
#[test]
fn a_recipe_runs_its_script_with_one_of_the_nine_interpreters() {
    let sb = Sandbox::new();
    sb.write("r/scripts/x.sh", "\n");
    sb.write(
        "r/recipe.json",
        json!({"schema": "hooks.recipe.v1", "id": "r", "version": "0.1.0", "summary": "s",
               "hooks": {"Stop": [{"hooks": [{"id": "a", "type": "command", "command": "dash scripts/x.sh"}]}]}})
        .to_string(),
    );
    let o = sb.cmd().args(["validate", "r"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("`dash` would be looked up on the host's PATH"),
        "{out}"
    );
}

/// After `--profile`, hookpack's own advice names it in text and JSON alike, while what a
/// handler wrote (its command, reason, tool input, stderr) is shown as written, even where
/// it quotes a `hookpack …` command (found by review: `list` and `run` added the flag to
/// handlers' commands and output, and JSON advice under `state` and `result` named none).
#[test]
fn advice_names_the_profile_and_handlers_text_stays_as_written() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    let w = workspace_flag(&sb, "ws");
    let answer = r#"{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"see `hookpack list`","updatedInput":{"message":"run `hookpack doctor` later"}}}"#;
    let command = format!("echo '{answer}'; echo 'try `hookpack remove x`' >&2");
    profile_with(
        &sb,
        json!({"PreToolUse": [{"id": "speaks", "type": "command", "command": command}]}),
    );
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"PreToolUse": [{"hooks": [{"id": "speaks", "type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let text = |args: &[&str]| String::from_utf8(in_prof_output(&sb, args).stdout).unwrap();
    let listed = text(&["list"]);
    assert!(listed.contains(&command), "{listed}");
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    assert_eq!(d["outcome"]["reason"], "see `hookpack list`");
    assert_eq!(
        d["outcome"]["updated_input"]["message"],
        "run `hookpack doctor` later"
    );
    assert_eq!(d["handlers"][0]["command"], command.as_str());
    let ran = text(&[
        "run",
        "PreToolUse",
        "--payload",
        "payload.json",
        "--include-untrusted",
    ]);
    for written in [
        "allow (see `hookpack list`)",
        r#"updatedInput: {"message":"run `hookpack doctor` later"}"#,
        "stderr: try `hookpack remove x`",
    ] {
        assert!(ran.contains(written), "{written} in {ran}");
    }
    // Skipped untrusted, the trace says what trusts it, on this profile and workspace.
    let d = run(&sb, "PreToolUse", json!({"tool_name": "exec"}), &[]);
    assert_eq!(
        d["handlers"][0]["state"],
        format!("skipped: untrusted (trust it with `hookpack trust speaks{p}{w}`, or pass --include-untrusted)")
    );
    // The workspace's `speaks` is shadowed by the profile's: the refusal's way on names it.
    let o = in_prof_output(&sb, &["trust", "speaks", "--format", "json"]);
    let changes: Value = serde_json::from_slice(&o.stdout).unwrap();
    let refusal = changes[1]["result"].as_str().unwrap();
    assert!(
        refusal.contains(&format!(
            "`hookpack trust --key '{}#PreToolUse#id:speaks'{p}{w}`",
            sb.join("ws/.finclaw/hooks.json").display()
        )),
        "{refusal}"
    );
}

/// A backquote in the profile's path does not hide the advice after it from `--profile`
/// (found by review: the path's backquote paired with the advice's opening one, and
/// `hookpack install ID` was printed naming no profile).
#[test]
fn advice_after_a_path_with_a_backquote_names_the_profile() {
    let sb = Sandbox::new();
    let gone = sb.join("p`x");
    let o = sb
        .cmd()
        .args(["doctor", "--profile", "p`x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    let advice = format!("`hookpack install ID --profile '{}'`", gone.display());
    assert!(out.contains(&advice), "{advice} in {out}");
}

/// Found by review: `trust` wrote a trust file larger than the 16 MiB that reading takes,
/// after which every verb that reads it failed, for every profile sharing `FINCLAW_HOME`.
/// It refuses before writing anything, as `install` refuses a `hooks.json` it could not
/// read back. (One entry's unknown field fills the file here: many profiles' entries would.)
#[test]
fn trust_refuses_to_write_a_trust_file_that_could_not_be_read_back() {
    const READ_LIMIT: usize = 16 * 1024 * 1024;
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "s", "type": "command", "command": "true"}]}),
    );
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let root = sb.path().canonicalize().unwrap();
    let other = format!("{}#Stop#id:other", root.join("other/hooks.json").display());
    let mine = format!("{}#Stop#id:s", root.join("prof/hooks.json").display());
    let entry = |note_len: usize| json!({"hash": "0".repeat(64), "trusted_at": "2026-01-01T00:00:00Z", "note": "x".repeat(note_len)});
    // As hookpack writes it: indented by two spaces, a newline at the end.
    let as_written = |handlers: Value| {
        let doc = json!({"schema": "hookpack.trust.v1", "handlers": handlers});
        let mut bytes = serde_json::to_vec_pretty(&doc).unwrap();
        bytes.push(b'\n');
        bytes
    };
    let room = READ_LIMIT - as_written(json!({ &other: entry(0) })).len();
    // 40 bytes short of the limit: read as any other, with no room for one more entry.
    let full = as_written(json!({ &other: entry(room - 40) }));
    std::fs::create_dir_all(trust.parent().unwrap()).unwrap();
    std::fs::write(&trust, &full).unwrap();
    ok(&in_prof_output(&sb, &["list"]));
    let would_be = as_written(json!({
        &other: entry(room - 40),
        &mine: {"hash": "0".repeat(64), "trusted_at": "2026-01-01T00:00:00Z"}
    }))
    .len();
    let o = in_prof_output(&sb, &["trust", "s"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for needle in [
        trust.display().to_string(),
        format!("would be {would_be} bytes, over the 16777216 bytes hookpack reads"),
        "so every later command would refuse it".to_string(),
        "nothing was written".to_string(),
    ] {
        assert!(err.contains(&needle), "no {needle:?} in {err}");
    }
    assert_eq!(std::fs::read(&trust).unwrap(), full);
    assert_eq!(list_json(&sb)["handlers"][0]["status"], "untrusted");
    // With room for the entry, it is trusted, and the file stays within what is read.
    std::fs::write(&trust, as_written(json!({ &other: entry(room - 4096) }))).unwrap();
    in_prof(&sb, &["trust", "s"]);
    assert!(std::fs::metadata(&trust).unwrap().len() <= READ_LIMIT as u64);
    assert_eq!(list_json(&sb)["handlers"][0]["status"], "trusted");
}

/// Found by review: `doctor --fix` removed the trust entries of a profile whose
/// `hooks.json` was a symbolic link to nothing (on a disk not mounted), as if its handlers
/// were gone; once the disk was back, every one was untrusted. As for a `hooks.json` that
/// cannot be read, which entries still name a handler cannot be told, so they are kept.
#[cfg(unix)]
#[test]
fn doctor_keeps_the_trust_of_a_hooks_json_that_is_a_link_to_nothing() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [{"id": "e", "type": "command", "command": "true"}]}),
    );
    in_prof(&sb, &["trust", "e"]);
    let trust = sb.join("finclaw-home/hooks-trust.json");
    let kept = std::fs::read(&trust).unwrap();
    std::fs::rename(sb.join("prof/hooks.json"), sb.join("elsewhere.json")).unwrap();
    std::os::unix::fs::symlink(
        sb.join("not-mounted/hooks.json"),
        sb.join("prof/hooks.json"),
    )
    .unwrap();
    for fix in [&[][..], &["--fix"]] {
        let o = in_prof_output(&sb, &[&["doctor"][..], fix].concat());
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!said.contains("removed the trust entry"), "{fix:?}: {said}");
        assert!(!said.contains("trust-dangling"), "{fix:?}: {said}");
        assert_eq!(std::fs::read(&trust).unwrap(), kept, "{fix:?}: {said}");
    }
    // The file back, its handler is trusted as it was.
    std::fs::remove_file(sb.join("prof/hooks.json")).unwrap();
    std::fs::rename(sb.join("elsewhere.json"), sb.join("prof/hooks.json")).unwrap();
    assert_eq!(list_json(&sb)["handlers"][0]["status"], "trusted");
}

/// Sets the mode of `path` (a file or folder).
#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Found by the review of the diff: only the folder named in the command and the final
/// file's folder were looked at, so a script reached through a link in a folder everyone
/// can write to (`x.sh -> evil/hop -> mine/real.sh`), through a folder link there, or
/// below such a folder (`evil/mine2/a.sh`) was trusted: whoever can write `evil` can swap
/// the link or rename the folder between the hash and the start. Every folder on the way,
/// links followed, is looked at now, as ssh looks at an `authorized_keys`'s.
#[cfg(unix)]
#[test]
fn a_script_reached_through_a_folder_others_can_write_is_never_trusted() {
    let sb = Sandbox::new();
    sb.write("ws/mine/real.sh", "true\n");
    sb.write("ws/evil/mine2/a.sh", "true\n");
    chmod(&sb.join("ws/evil"), 0o777);
    std::os::unix::fs::symlink("../mine/real.sh", sb.join("ws/evil/hop")).unwrap();
    std::os::unix::fs::symlink("evil/hop", sb.join("ws/x.sh")).unwrap();
    std::os::unix::fs::symlink("../mine", sb.join("ws/evil/dlink")).unwrap();
    std::os::unix::fs::symlink("evil/dlink", sb.join("ws/d")).unwrap();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "two-hops", "type": "command", "command": "sh x.sh"},
            {"id": "folder-link", "type": "command", "command": "sh d/real.sh"},
            {"id": "below", "type": "command", "command": "sh evil/mine2/a.sh"},
            {"id": "direct", "type": "command", "command": "sh mine/real.sh"}
        ]}),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    for id in ["two-hops", "folder-link", "below"] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("PreToolUse {id} ")))
            .unwrap_or_else(|| panic!("no line for {id}: {out}"));
        assert!(line.starts_with("refused"), "{id}: {line}");
        assert!(
            line.contains("ws/evil, a folder others can write to"),
            "{id}: {line}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("trusted") && l.contains("PreToolUse direct ")),
        "{out}"
    );
    // A link another user owns, even in a sticky folder (where its owner may replace it),
    // can be pointed elsewhere (found by the second review). Needs root to give it away.
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the link of another user: needs root");
        return;
    }
    std::fs::create_dir_all(sb.join("ws/sticky")).unwrap();
    chmod(&sb.join("ws/sticky"), 0o1777);
    std::os::unix::fs::symlink("../mine", sb.join("ws/sticky/tools")).unwrap();
    std::os::unix::fs::lchown(sb.join("ws/sticky/tools"), Some(1234), None).unwrap();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "theirs", "type": "command", "command": "sh sticky/tools/real.sh"}
        ]}),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("a symbolic link owned by user 1234, who can point it elsewhere"),
        "{out}"
    );
}

/// A handler's script another user can change (0666, or in a folder of mode 0777) was
/// trusted without a word, and `doctor` said nothing: `run` hashes the script just before
/// it starts, but the shell opens it later, so whoever can write it can have their own
/// code run in that window. `trust` refuses it, naming why and the fix, and `doctor`
/// reports it; a script only its group can write (umask 002 with a group of one's own) is
/// trusted, with a warning, and a folder others can write to with the sticky bit (`/tmp`)
/// is no obstacle.
#[cfg(unix)]
#[test]
fn a_script_others_can_change_is_never_trusted() {
    const WHY: &str =
        "another user can change it, and a handler runs whatever the file holds when it starts";
    let sb = Sandbox::new();
    sb.write("ws/open/x.sh", "true\n");
    sb.write("ws/shared/y.sh", "true\n");
    sb.write("ws/sticky/z.sh", "true\n");
    sb.write("ws/group/g.sh", "true\n");
    sb.write("ws/private/p.sh", "true\n");
    chmod(&sb.join("ws/open/x.sh"), 0o666);
    chmod(&sb.join("ws/shared"), 0o777);
    chmod(&sb.join("ws/sticky"), 0o1777);
    chmod(&sb.join("ws/group/g.sh"), 0o664);
    chmod(&sb.join("ws/private/p.sh"), 0o664);
    // A group shared with others (warned of) needs root to give the file to; the file of
    // this user's private group (root's own `root`, as umask 002 systems give each user
    // one) is not warned of.
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root, to give a file to another group");
        return;
    }
    std::os::unix::fs::chown(sb.join("ws/group/g.sh"), None, Some(1234)).unwrap();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "open", "type": "command", "command": "sh open/x.sh"},
            {"id": "shared", "type": "command", "command": "sh shared/y.sh"},
            {"id": "sticky", "type": "command", "command": "sh sticky/z.sh"},
            {"id": "group", "type": "command", "command": "sh group/g.sh"},
            {"id": "private", "type": "command", "command": "sh private/p.sh"}
        ]}),
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let line = |id: &str| {
        out.lines()
            .find(|l| l.contains(&format!("PreToolUse {id} ")))
            .unwrap_or_else(|| panic!("no line for {id}: {out}"))
            .to_string()
    };
    let open = line("open");
    assert!(open.starts_with("refused"), "{open}");
    assert!(open.contains("open/x.sh") && open.contains(WHY), "{open}");
    assert!(open.contains("chmod go-w"), "{open}");
    let shared = line("shared");
    assert!(shared.starts_with("refused"), "{shared}");
    assert!(shared.contains(WHY), "{shared}");
    assert!(
        shared.contains("chmod o-w") && shared.contains("ws/shared"),
        "{shared}"
    );
    assert!(line("sticky").starts_with("trusted"), "{out}");
    assert!(line("group").starts_with("trusted"), "{out}");
    assert!(line("private").starts_with("trusted"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning") && err.contains("group/g.sh") && err.contains("chmod g-w"),
        "{err}"
    );
    // Where root's group is root's alone (no other user's primary group, no member).
    let root_group_alone = std::fs::read_to_string("/etc/passwd").is_ok_and(|p| {
        p.lines()
            .filter(|l| l.split(':').nth(3) == Some("0"))
            .count()
            == 1
    }) && std::fs::read_to_string("/etc/group").is_ok_and(|g| {
        g.lines().any(|l| {
            l.starts_with("root:")
                && l.split(':')
                    .nth(3)
                    .is_none_or(|m| m.is_empty() || m == "root")
        })
    });
    if root_group_alone {
        assert!(!err.contains("private/p.sh"), "{err}");
    }
    let statuses: Vec<(String, String)> = (list_json(&sb)["handlers"].as_array().unwrap())
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap().into(),
                h["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected = [
        ("open", "script-writable-by-others"),
        ("shared", "script-writable-by-others"),
        ("sticky", "trusted"),
        ("group", "trusted"),
        ("private", "trusted"),
    ];
    assert_eq!(
        statuses,
        expected.map(|(i, s)| (i.to_string(), s.to_string())),
    );
    let d = in_prof_output(&sb, &["doctor", "--format", "json"]);
    assert_eq!(d.status.code(), Some(1), "{d:?}");
    let report: Value = serde_json::from_slice(&d.stdout).unwrap();
    let found = |code: &str| -> Vec<String> {
        (report["problems"].as_array().unwrap().iter())
            .filter(|p| p["code"] == code)
            .map(|p| p["message"].as_str().unwrap().to_string())
            .collect()
    };
    let others = found("script-writable-by-others");
    assert_eq!(others.len(), 2, "{report:#}");
    assert!(
        others[0].contains("chmod go-w") && others[0].contains(WHY),
        "{others:?}"
    );
    assert!(others[1].contains("chmod o-w"), "{others:?}");
    let group = found("script-writable-by-group");
    assert_eq!(group.len(), 1, "{report:#}");
    assert!(group[0].contains("chmod g-w"), "{group:?}");
    assert!(
        (report["problems"].as_array().unwrap().iter())
            .any(|p| p["code"] == "script-writable-by-group" && p["severity"] == "warning"),
        "{report:#}"
    );
}

/// A script owned by another user (neither this one nor root) is theirs to change, whatever
/// its mode: refused. Needs root to give the file away.
#[cfg(unix)]
#[test]
fn a_script_owned_by_another_user_is_never_trusted() {
    let sb = Sandbox::new();
    let script = sb.write("ws/x.sh", "true\n");
    if std::os::unix::fs::chown(&script, Some(65534), Some(65534)).is_err() {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    profile_with(
        &sb,
        json!({"Stop": [{"id": "x", "type": "command", "command": "sh x.sh"}]}),
    );
    let o = in_prof_output(&sb, &["trust", "x"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("refused") && out.contains("owned by user 65534") && out.contains("x.sh"),
        "{out}"
    );
    let d = in_prof_output(&sb, &["doctor"]);
    assert_eq!(d.status.code(), Some(1), "{d:?}");
    assert!(
        String::from_utf8_lossy(&d.stdout).contains("script-writable-by-others"),
        "{d:?}"
    );
}

/// A trusted script made world-writable afterwards still ran: its bytes had not changed,
/// so its hash matched. `run` skips it as it skips one not trusted, saying why, and once
/// the mode is put right it runs again, no new trust needed (the hash still covers its
/// bytes).
#[cfg(unix)]
#[test]
fn a_script_made_writable_by_others_after_trust_does_not_run() {
    let sb = Sandbox::new();
    let script = sb.write("ws/x.sh", "echo ran > ran.txt\n");
    profile_with(
        &sb,
        json!({"Stop": [{"id": "x", "type": "command", "command": "sh x.sh"}]}),
    );
    in_prof(&sb, &["trust", "x"]);
    chmod(&script, 0o646);
    let d = run(&sb, "Stop", json!({}), &[]);
    let state = d["handlers"][0]["state"].as_str().unwrap();
    assert!(
        state.starts_with("skipped: script writable by others") && state.contains("chmod go-w"),
        "{d:#}"
    );
    assert!(!sb.join("ws/ran.txt").exists(), "the script ran: {d:#}");
    let o = run_output(&sb, "Stop", &[]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("[skipped: script writable by others"),
        "{text}"
    );
    chmod(&script, 0o644);
    let d = run(&sb, "Stop", json!({}), &[]);
    assert_eq!(d["handlers"][0]["state"], "ran", "{d:#}");
    assert!(sb.join("ws/ran.txt").exists(), "{d:#}");
}

/// `revoke` printed the hash of the script as it is now, not the one trusted, which is
/// what it forgets: after an edit, the line named a hash the trust file never held.
#[test]
fn revoke_prints_the_hash_it_forgets() {
    let sb = Sandbox::new();
    let script = sb.write("ws/x.sh", "true\n");
    profile_with(
        &sb,
        json!({"Stop": [{"id": "x", "type": "command", "command": "sh x.sh"}]}),
    );
    in_prof(&sb, &["trust", "x"]);
    let trust = read_json(&sb.join("finclaw-home/hooks-trust.json"));
    let (_, entry) = trust["handlers"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let trusted = entry["hash"].as_str().unwrap().to_string();
    std::fs::write(&script, "false\n").unwrap();
    let now = list_json(&sb)["handlers"][0]["hash"].clone();
    assert_ne!(now, trusted.as_str(), "the edit changed nothing");
    let o = in_prof_output(&sb, &["revoke", "x", "--format", "json"]);
    ok(&o);
    let changes: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(changes[0]["result"], "revoked", "{changes:#}");
    assert_eq!(changes[0]["hash"], trusted.as_str(), "{changes:#}");
    in_prof(&sb, &["trust", "x"]);
    std::fs::write(&script, "exit 3\n").unwrap();
    let trust = read_json(&sb.join("finclaw-home/hooks-trust.json"));
    let (_, entry) = trust["handlers"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let trusted = entry["hash"].as_str().unwrap().to_string();
    let o = in_prof_output(&sb, &["revoke", "x"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("revoked") && text.contains(&trusted),
        "{text}"
    );
}

/// A handler killed by a signal showed `exit killed … failure: killed by a signal`, and
/// JSON `"exit": null` with nothing naming the signal. The signal is named in both.
#[cfg(unix)]
#[test]
fn a_handler_killed_by_a_signal_names_it() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"Stop": [
            {"id": "segv", "type": "command", "command": "ulimit -c 0; kill -SEGV $$"},
            {"id": "ok", "type": "command", "command": "exit 0"}
        ]}),
    );
    let d = run(&sb, "Stop", json!({}), &["--include-untrusted"]);
    let h = &d["handlers"][0];
    assert_eq!(h["exit"], Value::Null, "{d:#}");
    assert_eq!(h["signal"], "SIGSEGV", "{d:#}");
    assert_eq!(h["decision"]["failure"], "killed by SIGSEGV", "{d:#}");
    assert_eq!(d["handlers"][1]["signal"], Value::Null, "{d:#}");
    assert_eq!(d["handlers"][1]["exit"], 0, "{d:#}");
    let o = run_output(&sb, "Stop", &["--include-untrusted"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().find(|l| l.contains(" segv ")).unwrap();
    assert!(
        line.contains("killed by SIGSEGV in ") && line.contains("failure: killed by SIGSEGV"),
        "{text}"
    );
}

/// `test`'s JSON named a killed handler's signal only inside its failure text, and the
/// exit mismatch said "got killed". Its handlers now carry `signal` as `run`'s do, and the
/// mismatch names it.
///
/// bash runs a lone command in place of itself, so the signal reaches hookpack; dash (the
/// `/bin/sh` run when `SHELL` is unset, as on CI) waits for it and exits 139 instead, which
/// is what a host using dash sees too. The test pins bash for that reason.
#[cfg(unix)]
#[test]
fn a_test_case_whose_handler_is_killed_names_the_signal() {
    let sb = Sandbox::new();
    write_recipe(&sb, "segv", &manifest("segv"));
    sb.write(
        "segv/scripts/main.js",
        "process.kill(process.pid, 'SIGSEGV');\n",
    );
    sb.write(
        "segv/tests/crash.json",
        r#"{"name": "crash", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "expect": {"exit": 0, "decision": "none"}}"#,
    );
    let o = sb
        .cmd()
        .args(["test", "segv", "--format", "json"])
        .env("SHELL", "/bin/bash")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let case = &d["cases"][0];
    let h = &case["handlers"][0];
    assert_eq!(h["exit"], Value::Null, "{d:#}");
    assert_eq!(h["signal"], "SIGSEGV", "{d:#}");
    let mismatches = case["mismatches"].to_string();
    assert!(
        mismatches.contains("exit: expected 0, got killed by SIGSEGV"),
        "{d:#}"
    );
}

/// The outcome's `failure` was the first handler's that failed while its `reason` came
/// from the handler whose verdict won: a gate failing under `failurePolicy: deny` after
/// another failure showed the reason of one and the failure of the other. The failure is
/// now that of the handler whose verdict decided the outcome, when it failed.
#[test]
fn the_outcome_s_failure_and_reason_name_the_same_handler() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({"PreToolUse": [
            {"id": "first", "type": "command", "command": "exit 1"},
            {"id": "gate", "type": "command", "command": "exit 3", "failurePolicy": "deny"},
            {"id": "last", "type": "command", "command": "exit 4"}
        ]}),
    );
    let d = run(
        &sb,
        "PreToolUse",
        json!({"tool_name": "exec"}),
        &["--include-untrusted"],
    );
    let o = &d["outcome"];
    assert_eq!(o["verdict"], "deny", "{d:#}");
    assert_eq!(o["reason"], "handler failed: exit 3", "{d:#}");
    assert_eq!(o["failure"], "exit 3", "{d:#}");
}

/// A handler's script was hashed whatever its size: a sparse file of 20 GB made every
/// `list`, `run` and `doctor` read it all (53 s). One over 16 MiB is that handler's
/// problem, never read: not trusted, not run, reported, with its size and the limit.
#[test]
fn a_script_over_16_mib_is_never_hashed() {
    let sb = Sandbox::new();
    sb.write("ws/ok.sh", "true\n");
    let big = std::fs::File::create(sb.join("ws/big.sh")).unwrap();
    big.set_len(16 * 1024 * 1024 + 1).unwrap();
    profile_with(
        &sb,
        json!({"Stop": [
            {"id": "big", "type": "command", "command": "sh big.sh"},
            {"id": "ok", "type": "command", "command": "sh ok.sh"}
        ]}),
    );
    let list = list_json(&sb);
    let h = &list["handlers"][0];
    assert_eq!(h["status"], "invalid", "{list:#}");
    let why = h["problems"][0].as_str().unwrap();
    assert!(
        why.contains("big.sh")
            && why.contains("16777217 bytes")
            && why.contains("16777216")
            && !why.contains("  "),
        "{why}"
    );
    let o = in_prof_output(&sb, &["trust", "--all"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("refused    Stop big") && out.contains("16777216"),
        "{out}"
    );
    assert!(out.contains("trusted    Stop ok"), "{out}");
    let d = run(&sb, "Stop", json!({}), &[]);
    let state = d["handlers"][0]["state"].as_str().unwrap();
    assert!(
        state.starts_with("skipped: invalid") && state.contains("16777216"),
        "{d:#}"
    );
    assert_eq!(d["handlers"][1]["state"], "ran", "{d:#}");
    let doctor = in_prof_output(&sb, &["doctor"]);
    assert_eq!(doctor.status.code(), Some(1), "{doctor:?}");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains("handler-invalid") && text.contains("16777216"),
        "{text}"
    );
}

/// seeds/004: "Need CLI 0.13.1+ for permissionDecision: \"ask\", updatedModel, and Stop
/// reject. Older 0.13.0 builds still spawn the events but ignore those three honours."
/// `run` read every answer as the newest host does, so a hand-written gate meant for a
/// 0.13.0 host showed an ask that host would never make. `--cli-version` (or
/// `HOOKPACK_CLI_VERSION`) reads them as that host does, and says what was passed over.
#[test]
fn an_older_host_passes_over_ask_model_routes_and_stop_rejects() {
    let sb = with_workspace();
    profile_with(
        &sb,
        json!({
            "PreToolUse": [{"id": "asker", "type": "command", "command":
                r#"echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"sure?"}}'"#}],
            "UserPromptSubmit": [{"id": "router", "type": "command", "command":
                r#"echo '{"hookSpecificOutput":{"updatedModel":"small"}}'"#}],
            "Stop": [{"id": "reviewer", "type": "command", "command":
                r#"echo '{"hookSpecificOutput":{"decision":"reject","reason":"no tests ran"}}'"#}]
        }),
    );
    let tool = json!({"tool_name": "exec", "tool_input": {"command": "ls"}});
    let old = ["--include-untrusted", "--cli-version", "0.13.0"];
    let d = run(&sb, "PreToolUse", tool.clone(), &old);
    assert_eq!(d["outcome"].get("verdict"), None, "{d:#}");
    assert_eq!(d["handlers"][0]["decision"].get("reason"), None, "{d:#}");
    assert_eq!(d["cli_version"], "0.13.0", "{d:#}");
    let warning = d["handlers"][0]["decision"]["warning"].as_str().unwrap();
    assert!(
        warning.contains("a 0.13.0 host passes over an ask")
            && warning.contains("the tool runs without asking"),
        "{d:#}"
    );
    let d = run(&sb, "UserPromptSubmit", json!({"prompt": "hi"}), &old);
    assert_eq!(d["outcome"].get("updated_model"), None, "{d:#}");
    let warning = d["handlers"][0]["decision"]["warning"].as_str().unwrap();
    assert!(warning.contains("passes over updatedModel"), "{d:#}");
    let d = run(&sb, "Stop", json!({}), &old);
    assert_eq!(d["outcome"].get("verdict"), None, "{d:#}");
    let warning = d["handlers"][0]["decision"]["warning"].as_str().unwrap();
    assert!(warning.contains("passes over a Stop reject"), "{d:#}");

    // 0.13.1 honours all three, as does a host of unknown version.
    for extra in [&["--cli-version", "0.13.1"][..], &[]] {
        let args = [&["--include-untrusted"][..], extra].concat();
        let d = run(&sb, "PreToolUse", tool.clone(), &args);
        assert_eq!(d["outcome"]["verdict"], "ask", "{d:#}");
        let d = run(&sb, "UserPromptSubmit", json!({"prompt": "hi"}), &args);
        assert_eq!(d["outcome"]["updated_model"], "small", "{d:#}");
        let d = run(&sb, "Stop", json!({}), &args);
        assert_eq!(d["outcome"]["verdict"], "reject", "{d:#}");
    }

    // HOOKPACK_CLI_VERSION, as install reads it; the text says what was passed over.
    sb.write("payload.json", tool.to_string());
    let o = run_cmd(&sb, "PreToolUse", &["--include-untrusted"])
        .env("HOOKPACK_CLI_VERSION", "0.13.0")
        .output()
        .unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("a 0.13.0 host passes over an ask"), "{text}");

    let o = run_output(&sb, "PreToolUse", &["--cli-version", "thirteen"]);
    fails_saying(&o, 2, "--cli-version");
}

/// Review: an older host's passing over was applied after the answer had been read as the
/// newest host reads it. An ask on PermissionRequest said "the tool runs without asking"
/// (that host asks the user, as with no answer); an ask whose `updatedInput` is no object
/// kept "the decision stands" under `failurePolicy: deny` (nothing stands, so it fails and
/// denies); and a malformed `updatedModel` or an empty Stop reject reason failed, though
/// that host never reads them.
#[test]
fn an_older_host_reads_the_answer_without_what_it_passes_over() {
    let sb = with_workspace();
    let echo = |json: &str| format!("echo '{json}'");
    profile_with(
        &sb,
        json!({
            "PermissionRequest": [{"id": "asker", "type": "command", "command":
                echo(r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#)}],
            "PreToolUse": [{"id": "bad-input", "type": "command", "failurePolicy": "deny", "command":
                echo(r#"{"hookSpecificOutput":{"permissionDecision":"ask","updatedInput":"ls"}}"#)}],
            "UserPromptSubmit": [{"id": "router", "type": "command", "command":
                echo(r#"{"hookSpecificOutput":{"updatedModel":42,"updatedPrompt":"hi there"}}"#)}],
            "Stop": [{"id": "reviewer", "type": "command", "command":
                echo(r#"{"hookSpecificOutput":{"decision":"reject","reason":""}}"#)}]
        }),
    );
    let old = ["--include-untrusted", "--cli-version", "0.13.0"];
    let tool = json!({"tool_name": "exec", "tool_input": {"command": "ls"}});

    let d = run(&sb, "PermissionRequest", tool.clone(), &old);
    let h = &d["handlers"][0]["decision"];
    assert_eq!(h.get("verdict"), None, "{d:#}");
    let warning = h["warning"].as_str().unwrap();
    assert!(
        warning.contains("passes over an ask")
            && warning.contains("the host asks the user")
            && !warning.contains("without asking"),
        "{d:#}"
    );

    let d = run(&sb, "PreToolUse", tool, &old);
    assert_eq!(d["outcome"]["verdict"], "deny", "{d:#}");
    let failure = d["handlers"][0]["decision"]["failure"].as_str().unwrap();
    assert!(failure.contains("updatedInput must be an object"), "{d:#}");

    let d = run(&sb, "UserPromptSubmit", json!({"prompt": "hi"}), &old);
    let h = &d["handlers"][0]["decision"];
    assert_eq!(h.get("failure"), None, "{d:#}");
    assert_eq!(h["updated_prompt"], "hi there", "{d:#}");
    assert!(
        h["warning"]
            .as_str()
            .unwrap()
            .contains("passes over updatedModel"),
        "{d:#}"
    );

    let d = run(&sb, "Stop", json!({}), &old);
    let h = &d["handlers"][0]["decision"];
    assert_eq!(h.get("failure"), None, "{d:#}");
    assert!(
        h["warning"]
            .as_str()
            .unwrap()
            .contains("passes over a Stop reject"),
        "{d:#}"
    );

    // The newest host reads each as before: an empty reject reason is a failure.
    let d = run(&sb, "Stop", json!({}), &["--include-untrusted"]);
    assert!(d["handlers"][0]["decision"]["failure"].is_string(), "{d:#}");
}
