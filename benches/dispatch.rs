//! `run` overhead: dispatching a handler through hookpack's host logic against spawning the
//! same command with `sh -c` directly, and a leak check over 100 dispatches in a row.
//!
//! `cargo bench --bench dispatch` (release build). Prints medians in milliseconds and the
//! open file descriptors and child processes before and after.

use std::path::Path;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn children() -> usize {
    let me = std::process::id().to_string();
    let mut n = 0;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) {
            let after = stat.rsplit(')').next().unwrap_or("");
            let fields: Vec<&str> = after.split_whitespace().collect();
            if fields.get(1) == Some(&me.as_str()) {
                n += 1;
            }
        }
    }
    n
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let profile_root = dir.path().join("prof");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&profile_root).unwrap();
    // The same trivial handler both ways; SHELL=/bin/sh so both use the same shell.
    std::env::set_var("SHELL", "/bin/sh");
    std::env::set_var("FINCLAW_HOME", dir.path().join("home"));
    let command =
        "cat >/dev/null; echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'";
    let doc = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "exec", "hooks": [{"id": "h", "type": "command", "command": command}]}]}});
    std::fs::write(
        profile_root.join("hooks.json"),
        serde_json::to_vec(&doc).unwrap(),
    )
    .unwrap();
    let profile = hookpack::profile::Profile::resolve(Some(&profile_root)).unwrap();
    let mut payload = serde_json::Map::new();
    payload.insert("tool_name".into(), "exec".into());
    let opts = hookpack::run::DispatchOptions {
        include_untrusted: true,
        ..Default::default()
    };

    let n = 100;
    let stdin = serde_json::to_vec(&payload).unwrap();
    let direct = |cwd: &Path, flag: &str| {
        let t = Instant::now();
        let mut c = std::process::Command::new("/bin/sh")
            .arg(flag)
            .arg(command)
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        c.stdin.take().unwrap().write_all(&stdin).unwrap();
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        t.elapsed()
    };
    // Warm up both paths (page cache, dynamic loader).
    for _ in 0..5 {
        direct(&workspace, "-c");
        direct(&workspace, "-lc");
        hookpack::run::dispatch(
            &profile,
            &workspace,
            hookpack::event::Event::PreToolUse,
            &payload,
            &opts,
        )
        .unwrap();
    }
    let fds_before = open_fds();
    let kids_before = children();
    let mut d_direct = Vec::new();
    let mut d_login = Vec::new();
    let mut d_hook = Vec::new();
    for _ in 0..n {
        d_direct.push(direct(&workspace, "-c"));
        d_login.push(direct(&workspace, "-lc"));
        let t = Instant::now();
        let d = hookpack::run::dispatch(
            &profile,
            &workspace,
            hookpack::event::Event::PreToolUse,
            &payload,
            &opts,
        )
        .unwrap();
        d_hook.push(t.elapsed());
        assert_eq!(d.outcome.verdict, Some(hookpack::run::Verdict::Allow));
    }
    let fds_after = open_fds();
    let kids_after = children();
    let (a, l, b) = (median(d_direct), median(d_login), median(d_hook));
    println!("dispatches: {n} of each, interleaved, in sequence");
    println!("sh -c directly:          median {a:.2} ms");
    println!("sh -lc directly:         median {l:.2} ms  (hosts run handlers with $SHELL -lc)");
    println!("hookpack run::dispatch:  median {b:.2} ms  (SHELL=/bin/sh, so /bin/sh -lc)");
    println!(
        "hookpack's own share:    {:.2} ms per dispatch against sh -lc (target < 5 ms)",
        b - l
    );
    println!(
        "against plain sh -c:     {:.2} ms (adds the login shell's profile)",
        b - a
    );
    println!("open fds before/after: {fds_before}/{fds_after}; child processes before/after: {kids_before}/{kids_after}");
    assert_eq!(fds_before, fds_after, "file descriptors leaked");
    assert_eq!(kids_before, kids_after, "processes leaked");
}
