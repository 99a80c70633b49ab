//! `install`, `remove`, `update`, `list`: from the built-in catalog, a folder and a real
//! HTTP server; user entries never lost; version choice; crash consistency; concurrency.

use crate::common::*;
use crate::pack::snapshot;
#[cfg(target_os = "linux")]
use crate::pack::under_strace;
use serde_json::{json, Value};

/// strace options that trace removals, and fail the first with EIO.
#[cfg(target_os = "linux")]
const UNLINK: &str = "trace=?unlink,?unlinkat";
#[cfg(target_os = "linux")]
const UNLINK_FAILS: &str = "inject=?unlink,?unlinkat:error=EIO:when=1";

/// Runs hookpack with `args` on the profile `prof`.
fn in_prof(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    in_profile(sb, "prof", args)
}

/// Runs hookpack with `args` on the profile folder `prof`, stopped by the crash hook at
/// step `point` of its commit, and checks that the hook fired.
fn crashed_at(sb: &Sandbox, point: &str, args: &[&str]) -> std::process::Output {
    let o = sb
        .cmd()
        .env("HOOKPACK_TEST_CRASH_AT", point)
        .args(args)
        .args(["--profile", "prof"])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "{args:?} at {point}: the crash hook did not fire"
    );
    o
}

/// Runs hookpack with `args` on the profile folder `profile`, whatever it exits.
fn in_profile(sb: &Sandbox, profile: &str, args: &[&str]) -> std::process::Output {
    sb.cmd()
        .args(args)
        .args(["--profile", profile])
        .output()
        .unwrap()
}

/// `id` 0.1.0 packed into the catalog folder `cat` and installed from it into `prof`.
fn installed_from_cat(sb: &Sandbox, id: &str) {
    catalog_with_versions(sb, id, &[("0.1.0", "0.13.0")]);
    ok(&in_prof(sb, &["install", id, "--index", "cat"]));
}

/// Packs `demo` at each (version, min_cli) into `cat`, so the index lists them all.
fn catalog_with_versions(sb: &Sandbox, id: &str, versions: &[(&str, &str)]) {
    for (v, min) in versions {
        let mut m = manifest(id);
        m["version"] = json!(v);
        m["min_cli"] = json!(min);
        write_recipe(sb, &format!("src/{id}"), &m);
        sb.write(
            &format!("src/{id}/scripts/main.js"),
            format!("// {v}\nprocess.exit(0);\n"),
        );
        let o = sb
            .cmd()
            .args([
                "pack",
                "--recipes-dir",
                "src",
                "--out-dir",
                "cat",
                "--updated-at",
                "2026-11-29T00:00:00Z",
                "--only",
                id,
            ])
            .output()
            .unwrap();
        ok(&o);
    }
}

/// `cat` with `demo` 0.1.0 and 0.2.0, and `old`, that catalog when 0.1.0 was the newest:
/// `install demo --index old` installs 0.1.0 with no pin, which `update --index cat`
/// updates (`install demo@0.1.0` would pin it, and `update` would leave it).
fn old_and_new_catalogs(sb: &Sandbox) {
    catalog_with_versions(sb, "demo", &[("0.1.0", "0.13.0")]);
    copy_files(&sb.join("cat"), &sb.join("old"));
    catalog_with_versions(sb, "demo", &[("0.2.0", "0.13.0")]);
}

/// Leaves `demo` in profile `prof` as a crash at step `point` left its `change` (`install`
/// of 0.1.0, `update` from 0.1.0 to 0.2.0, or `remove` of 0.1.0), its handlers trusted
/// before when `trusted` (and there was an install before).
fn interrupted_demo(sb: &Sandbox, change: &str, point: &str, trusted: bool) {
    old_and_new_catalogs(sb);
    if change != "install" {
        ok(&in_prof(sb, &["install", "demo", "--index", "old"]));
        if trusted {
            ok(&in_prof(sb, &["trust", "--all"]));
        }
    }
    let args: &[&str] = match change {
        "update" => &["update", "--index", "cat"],
        "remove" => &["remove", "demo"],
        _ => &["install", "demo", "--index", "old"],
    };
    crashed_at(sb, point, args);
}

#[test]
fn built_in_catalog_installs_offline_and_the_handler_runs() {
    let sb = Sandbox::new();
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "./demo"])
        .output()
        .unwrap();
    ok(&o);
    let doc = read_json(&sb.join("demo/hooks.json"));
    let h = &doc["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(h["recipe"], "tool-gate");
    assert_eq!(
        h["command"],
        "node \"${FINCLAW_PROFILE_ROOT}/hooks/tool-gate/scripts/main.js\""
    );
    assert!(sb.join("demo/hooks/tool-gate/scripts/main.js").is_file());
    assert!(sb.join("demo/hooks/.receipts/tool-gate.json").is_file());
    // The installed handler runs the way a host runs it.
    let payload = r#"{"hook_event_name":"PreToolUse","tool_name":"exec","tool_input":{"command":"rm -rf /"},"cwd":"/tmp"}"#;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "printf '%s' '{payload}' | {}",
            h["command"].as_str().unwrap()
        ))
        .env("FINCLAW_PROFILE_ROOT", sb.join("demo"))
        .output()
        .unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    // Absolute paths for hosts that do not set FINCLAW_PROFILE_ROOT.
    ok(&sb
        .cmd()
        .args([
            "install",
            "tool-gate",
            "--profile",
            "abs",
            "--absolute-paths",
        ])
        .output()
        .unwrap());
    let doc = read_json(&sb.join("abs/hooks.json"));
    let cmd = doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        cmd.starts_with("node ")
            && cmd.contains(
                &sb.join("abs/hooks/tool-gate/scripts/main.js")
                    .display()
                    .to_string()
            ),
        "{cmd}"
    );
}

/// A misspelt recipe id gets the near id the index or the profile has, as a misspelt event
/// does (found by review: install and remove only said the id was not there).
#[test]
fn a_misspelt_recipe_id_is_answered_with_the_near_one() {
    let sb = Sandbox::new();
    let o = in_prof(&sb, &["install", "tool-gat"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the index builtin:hooks-index.json has no recipe `tool-gat`; did you mean `tool-gate`?"),
        "{err}"
    );
    assert!(!sb.join("prof").exists());
    // An id nothing is near keeps the advice to list the index.
    let o = in_prof(&sb, &["install", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("has no recipe `nope`; `hookpack catalog list builtin:hooks-index.json` shows what it has"),
        "{err}"
    );
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    for verb in ["remove", "update"] {
        let o = in_prof(&sb, &[verb, "tool-gat"]);
        assert_eq!(o.status.code(), Some(1), "{verb}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("`tool-gat` is not installed in ")
                && err.contains("; did you mean `tool-gate`?"),
            "{verb}: {err}"
        );
    }
    let o = in_prof(&sb, &["remove", "nope"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`nope` is not installed in ") && !err.contains("did you mean"),
        "{err}"
    );
}
const USER_DOC: &str = r#"{
    "description": "hand-written",
    "x-editor": {"tabSize": 4},
    "hooks": {
        "PreToolUse": [
            {"matcher": "exec", "comment": "mine", "hooks": [
                {"type": "command", "command": "node /home/me/guard.js", "timeout": 5, "x-extra": [1, 2, 3]}
            ]}
        ],
        "SessionEnd": [
            {"hooks": [{"type": "command", "command": "notify", "recipe": "someone-else"}]}
        ]
    },
    "zzz-last": true
}"#;

#[test]
fn user_entries_survive_install_reinstall_update_and_remove() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "alpha", &[("0.1.0", "0.13.0")]);
    write_recipe(&sb, "src/beta", &manifest("beta"));
    ok(&sb
        .cmd()
        .args([
            "pack",
            "--recipes-dir",
            "src",
            "--out-dir",
            "cat",
            "--only",
            "beta",
        ])
        .output()
        .unwrap());
    sb.write("prof/hooks.json", USER_DOC);
    let original: Value = serde_json::from_str(USER_DOC).unwrap();
    let run = |args: &[&str]| {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "prof"])
            .output()
            .unwrap();
        ok(&o);
    };
    // Which recipe each PreToolUse group belongs to, in order ("" for the user's).
    let order = || -> Vec<String> {
        read_json(&sb.join("prof/hooks.json"))["hooks"]["PreToolUse"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["hooks"][0]["recipe"].as_str().unwrap_or("").to_string())
            .collect()
    };
    run(&["install", "alpha", "beta", "--index", "cat"]);
    assert_eq!(order(), ["", "alpha", "beta"]);
    // Found by a walk-through: a re-install or upgrade moved the recipe's groups to the end
    // of their event, after recipes installed later, which changes which rewrite wins.
    sb.write("prof/hooks/alpha/scripts/main.js", "// edited\n");
    run(&["install", "alpha", "--index", "cat"]);
    assert_eq!(order(), ["", "alpha", "beta"]);
    let doc = read_json(&sb.join("prof/hooks.json"));
    let stamped = |d: &Value, id: &str| {
        d["hooks"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|g| g.as_array().unwrap())
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter(|h| h["recipe"] == id)
            .count()
    };
    assert_eq!(stamped(&doc, "alpha"), 1, "re-install duplicated entries");
    assert_eq!(stamped(&doc, "beta"), 1);
    assert_eq!(
        doc["hooks"]["PreToolUse"][0],
        original["hooks"]["PreToolUse"][0]
    );
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["description", "x-editor", "hooks", "zzz-last"]);
    assert!(sb.join("prof/hooks.json.bak").is_file());

    // Upgrade replaces; without --index, each recipe is updated from the index it came from.
    catalog_with_versions(&sb, "alpha", &[("0.2.0", "0.13.0")]);
    run(&["update"]);
    assert_eq!(order(), ["", "alpha", "beta"]);
    let doc = read_json(&sb.join("prof/hooks.json"));
    assert_eq!(stamped(&doc, "alpha"), 1);
    assert_eq!(
        read_json(&sb.join("prof/hooks/.receipts/alpha.json"))["version"],
        "0.2.0"
    );
    assert!(
        std::fs::read_to_string(sb.join("prof/hooks/alpha/scripts/main.js"))
            .unwrap()
            .contains("0.2.0")
    );

    run(&["remove", "alpha", "beta"]);
    let doc = read_json(&sb.join("prof/hooks.json"));
    assert_eq!(
        doc, original,
        "removing everything must give back exactly the user's document"
    );
    assert!(!sb.join("prof/hooks/alpha").exists() && !sb.join("prof/hooks/beta").exists());
    assert!(!sb.join("prof/hooks/.receipts/alpha.json").exists());
}

#[test]
fn version_choice_follows_min_cli_pins_and_ranges() {
    let sb = Sandbox::new();
    catalog_with_versions(
        &sb,
        "demo",
        &[
            ("0.1.0", "0.13.0"),
            ("0.2.0", "0.13.1"),
            ("0.3.0", "0.14.0"),
        ],
    );
    let installed = |profile: &str| {
        read_json(&sb.join(&format!("{profile}/hooks/.receipts/demo.json")))["version"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let install = |profile: &str, extra: &[&str], env: Option<&str>| {
        let mut c = sb.cmd();
        c.args(["install", "--index", "cat", "--profile", profile])
            .args(extra);
        if let Some(v) = env {
            c.env("HOOKPACK_CLI_VERSION", v);
        }
        c.output().unwrap()
    };
    // With the host's version unknown, the newest is taken whatever it needs; found by the
    // publisher walk-through: silently, so a user of an older host got a recipe it cannot
    // run. A warning now names what it needs and how to take what the host runs.
    let o = install("p1", &["demo"], None);
    ok(&o);
    assert_eq!(installed("p1"), "0.3.0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "warning: demo 0.3.0 needs CLI 0.14.0 or newer; the host's CLI version was not \
             given, so it was taken as new enough"
        ) && err.contains("--cli-version X.Y.Z (or HOOKPACK_CLI_VERSION)")
            && err.contains("demo 0.2.0 needs 0.13.1, demo 0.1.0 needs 0.13.0"),
        "{err}"
    );
    let o = install("p2", &["demo", "--cli-version", "0.13.0"], None);
    ok(&o);
    assert_eq!(installed("p2"), "0.1.0");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    // `update` with the host's version unknown warns alike (found by the diff review: it
    // installs an exact version, for which no older one was looked at).
    ok(&install("p9", &["demo", "--cli-version", "0.13.0"], None));
    let o = sb
        .cmd()
        .args(["update", "--index", "cat", "--profile", "p9"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(installed("p9"), "0.3.0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("demo 0.3.0 needs CLI 0.14.0 or newer; the host's CLI version was not given"),
        "{err}"
    );
    ok(&install("p3", &["demo"], Some("0.13.5")));
    assert_eq!(installed("p3"), "0.2.0");
    // The oldest version needs no more than any other: nothing to warn of.
    let o = install("p4", &["demo@0.1.0"], None);
    ok(&o);
    assert_eq!(installed("p4"), "0.1.0");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    ok(&install("p5", &["demo@^0.2"], None));
    assert_eq!(installed("p5"), "0.2.0");
    let o = install("p6", &["demo@0.3.0", "--cli-version", "0.13.0"], None);
    assert_eq!(o.status.code(), Some(1));
    // The fix names the version the host can run (found by review: it said "pin an older
    // version" even when none would run).
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("needs CLI 0.14.0 or newer, and the host is 0.13.0; upgrade the CLI, or pin `demo@0.1.0`, the newest version it can run"),
        "{err}"
    );
    assert!(!sb.join("p6/hooks.json").exists());
    let o = install("p6", &["demo", "--cli-version", "0.12.9"], None);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    // The least CLI any version needs, said of them all (found by the hostile-network
    // sweep: "`demo` 0.3.0 needs CLI 0.13.0", where 0.3.0 needs 0.14.0).
    assert!(
        err.contains(
            "`demo` up to 0.3.0 needs CLI 0.13.0 or newer, and the host is 0.12.9; upgrade \
             the CLI: no published version runs on it"
        ),
        "{err}"
    );
    let o = install("p7", &["demo@9.9.9"], None);
    assert_eq!(o.status.code(), Some(1));
    let o = install("p8", &["nope"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no recipe `nope`"));

    // update: outdated view, then the newest the host can run.
    let o = sb
        .cmd()
        .args([
            "update",
            "--dry-run",
            "--index",
            "cat",
            "--profile",
            "p2",
            "--cli-version",
            "0.13.1",
        ])
        .output()
        .unwrap();
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("outdated     demo installed 0.1.0 available 0.2.0"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(installed("p2"), "0.1.0");
    ok(&sb
        .cmd()
        .args([
            "update",
            "--index",
            "cat",
            "--profile",
            "p2",
            "--cli-version",
            "0.13.1",
        ])
        .output()
        .unwrap());
    assert_eq!(installed("p2"), "0.2.0");
}

/// An index fetched over plain HTTP from another machine can be changed by anyone on the
/// way, digests included: install and update said nothing of it.
#[test]
fn an_index_over_plain_http_from_another_machine_is_warned_of() {
    let sb = Sandbox::new();
    // A documentation address (TEST-NET-1): nothing answers, so each run fails (exit 3)
    // after the warning, at once or after the short timeout.
    let index = "http://192.0.2.1:9/hooks-index.json";
    let warning = format!(
        "warning: the index {index} is fetched over plain HTTP: anyone on the way can change \
         it, and the sha256s it gives are what every archive is checked against; use its \
         https:// URL"
    );
    for args in [
        &["install", "demo", "--profile", "p", "--index", index][..],
        &["update", "--profile", "p", "--index", index],
    ] {
        if args[0] == "update" {
            // Something installed to compare.
            catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
            ok(&in_profile(
                &sb,
                "p",
                &["install", "demo", "--index", "cat"],
            ));
        }
        let o = sb
            .cmd()
            .env("HOOKPACK_HTTP_TIMEOUT", "0.2")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.matches(&warning).count(), 1, "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
    }
}

#[test]
fn install_update_remove_over_http() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("hooks-index.json");
    let o = sb
        .cmd()
        .args(["install", "demo", "--profile", "p", "--index", &index])
        .output()
        .unwrap();
    ok(&o);
    // Plain HTTP to this machine: no one is on the way.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("plain HTTP"), "{err}");
    let receipt = read_json(&sb.join("p/hooks/.receipts/demo.json"));
    assert_eq!(
        receipt["archive_url"],
        server.url("hooks-demo-0.1.0.tar.gz")
    );
    assert_eq!(receipt["index_url"], index);
    catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
    ok(&sb
        .cmd()
        .env("HOOKPACK_INDEX_URL", &index)
        .args(["update", "demo", "--profile", "p"])
        .output()
        .unwrap());
    assert_eq!(
        read_json(&sb.join("p/hooks/.receipts/demo.json"))["version"],
        "0.2.0"
    );
    ok(&in_profile(&sb, "p", &["remove", "demo"]));
    assert_eq!(read_json(&sb.join("p/hooks.json")), json!({"hooks": {}}));

    // A server that answers 404, for the index or for an archive it lists, has said the
    // URL names nothing: the input is wrong (exit 1), as for a path with no file. Only a
    // server that cannot be reached is the environment (exit 3).
    let install_from = |index: &str| {
        sb.cmd()
            .args(["install", "demo", "--profile", "p404", "--index", index])
            .output()
            .unwrap()
    };
    let o = install_from(&server.url("nowhere/hooks-index.json"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("answered HTTP 404"), "{err}");
    std::fs::remove_file(sb.join("cat/hooks-demo-0.2.0.tar.gz")).unwrap();
    let o = install_from(&index);
    fails_saying(&o, 1, "hooks-demo-0.2.0.tar.gz answered HTTP 404");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/hooks-index.json", closed.local_addr().unwrap());
    drop(closed);
    assert_eq!(install_from(&dead).status.code(), Some(3));
    assert!(!sb.join("p404/hooks.json").exists());
}

#[test]
fn arguments_of_the_wrong_form_are_usage_errors() {
    // Found by review: these exited 1, like a refused input, while `--cli-version 0.13`
    // and `run NotAnEvent` exited 2.
    let sb = Sandbox::new();
    let p = ["--profile", "p"];
    for args in [
        [&["install", "Tool-Gate"][..], &p].concat(),
        [&["install", "tool-gate@>=x"][..], &p].concat(),
        [&["install", "tool-gate", "--index", "ftp://x/y"][..], &p].concat(),
        [&["update", "--index", "ftp://x/y"][..], &p].concat(),
        [&["remove", "Bad_Id"][..], &p].concat(),
        [&["trust", "--recipe", "Bad_Id"][..], &p].concat(),
        vec!["catalog", "list", "ftp://x/hooks-index.json"],
        vec![
            "assemble",
            "--recipes-dir",
            "r",
            "--out-dir",
            "o",
            "--only",
            "Bad_Id",
        ],
    ] {
        let o = sb.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        // Ours, not clap's "unexpected argument".
        assert!(
            err.contains("invalid recipe id")
                || err.contains("is not ID, ID@VERSION or ID@RANGE")
                || err.contains("is not a usable location"),
            "{args:?}: {err}"
        );
    }
    // A setting in the environment that cannot be used is refused, not ignored (found by
    // review: `abc` fell back to the default without a word).
    for (name, value) in [
        ("HOOKPACK_LOCK_TIMEOUT", "abc"),
        ("HOOKPACK_LOCK_TIMEOUT", "-1"),
        ("HOOKPACK_HTTP_TIMEOUT", "abc"),
        ("HOOKPACK_HTTP_TIMEOUT", "0"),
        ("HOOKPACK_HTTP_DEADLINE", "inf"),
        // Found by review: finite but beyond what a Duration holds, this panicked.
        ("HOOKPACK_HTTP_DEADLINE", "1e300"),
        ("HOOKPACK_HTTP_TIMEOUT", "1e20"),
        // … and this one, accepted then, overflowed the HTTP client's clock (second review).
        ("HOOKPACK_HTTP_TIMEOUT", "1e19"),
        ("HOOKPACK_LOCK_TIMEOUT", "1000000001"),
        // … and one that rounds to no wait at all (third review).
        ("HOOKPACK_HTTP_DEADLINE", "1e-10"),
        ("HOOKPACK_LOCK_TIMEOUT", "1e300"),
    ] {
        let o = sb
            .cmd()
            .env(name, value)
            .args(["list", "--profile", "p"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}={value}: {err}");
        assert!(
            err.contains(&format!(
                "error: {name} `{value}` is invalid: give a number of seconds"
            )),
            "{err}"
        );
    }
    let o = sb
        .cmd()
        .env("HOOKPACK_LOCK_TIMEOUT", "0")
        .args(["list", "--profile", "p"])
        .output()
        .unwrap();
    ok(&o);
    let o = sb
        .cmd()
        .args([
            "pack",
            "--recipes-dir",
            "r",
            "--out-dir",
            "o",
            "--jobs",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(sb.path()).unwrap().count(), 0);
}

#[test]
fn update_says_why_it_leaves_a_recipe_as_it_is() {
    // Found by review: a real update said "everything is up to date" where --dry-run
    // said "not in index".
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    catalog_with_versions(&sb, "other", &[("0.1.0", "0.13.0")]);
    ok(&sb
        .cmd()
        .args([
            "install",
            "--archive",
            "cat/hooks-other-0.1.0.tar.gz",
            "--profile",
            "p",
        ])
        .output()
        .unwrap());
    ok(&in_profile(
        &sb,
        "p",
        &["install", "demo", "--index", "cat"],
    ));
    let update = |extra: &[&str]| {
        let o = sb
            .cmd()
            .args(["update", "--profile", "p", "--cli-version", "0.12.0"])
            .args(extra)
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let said = update(&[]);
    assert!(said.contains("demo 0.1.0: no version in "), "{said}");
    assert!(said.contains("runs on this CLI; left as it is"), "{said}");
    assert!(
        said.contains("other 0.1.0: not in builtin:hooks-index.json; left as it is"),
        "{said}"
    );
    assert!(!said.contains("up to date"), "{said}");
    let said = update(&["--dry-run"]);
    assert!(
        said.contains("cli too old  demo installed 0.1.0 available -"),
        "{said}"
    );
    assert!(
        said.contains("not in index other installed 0.1.0 available -"),
        "{said}"
    );
    // Scripts get the same reasons, as data (found by review: the JSON left them out).
    let json = |extra: &[&str]| -> Value {
        let o = sb
            .cmd()
            .args(["update", "--profile", "p", "--cli-version", "0.12.0"])
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let states = |v: &Value, key: &str| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["id"].as_str().unwrap().into(),
                    o[key].as_str().unwrap().into(),
                )
            })
            .collect();
        found.sort();
        found
    };
    let planned = json(&["--dry-run"]);
    assert_eq!(
        states(&planned, "state"),
        [
            ("demo".into(), "cli-too-old".into()),
            ("other".into(), "not-in-index".into())
        ],
        "{planned:#}"
    );
    let done = json(&[]);
    assert_eq!(
        states(&done, "reason"),
        [
            ("demo".into(), "cli-too-old".into()),
            ("other".into(), "not-in-index".into())
        ],
        "{done:#}"
    );
    for o in done.as_array().unwrap() {
        assert_eq!(o["action"], "left", "{done:#}");
        assert_eq!(o["from"], "0.1.0", "{done:#}");
        assert_eq!(o["to"], "0.1.0", "{done:#}");
    }
}

#[test]
fn update_keeps_the_path_style_each_recipe_was_installed_with() {
    // Found by review: `update` wrote ${FINCLAW_PROFILE_ROOT}/… over the absolute paths of
    // `install --absolute-paths`, breaking the hosts that flag is for.
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    catalog_with_versions(&sb, "other", &[("0.1.0", "0.13.0")]);
    let run = |args: &[&str]| {
        ok(&sb
            .cmd()
            .args(args)
            .args(["--profile", "p", "--index", "cat"])
            .output()
            .unwrap())
    };
    run(&["install", "demo", "--absolute-paths"]);
    run(&["install", "other"]);
    catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
    catalog_with_versions(&sb, "other", &[("0.2.0", "0.13.0")]);
    run(&["update"]);
    let commands = |id: &str| -> Vec<String> {
        let receipt = read_json(&sb.join(&format!("p/hooks/.receipts/{id}.json")));
        assert_eq!(receipt["version"], "0.2.0");
        (receipt["handlers"].as_array().unwrap().iter())
            .map(|h| h["command"].as_str().unwrap().to_string())
            .collect()
    };
    let root = sb.join("p").display().to_string();
    let demo = commands("demo");
    assert!(!demo.is_empty());
    for c in &demo {
        assert!(c.contains(&format!("{root}/hooks/demo/")), "{c}");
    }
    for c in commands("other") {
        assert!(c.contains("${FINCLAW_PROFILE_ROOT}/hooks/other/"), "{c}");
    }
    // The receipt's commands are the ones in hooks.json.
    let doc = std::fs::read_to_string(sb.join("p/hooks.json")).unwrap();
    assert!(
        demo.iter().all(|c| doc.contains(&c.replace('"', "\\\""))),
        "{doc}"
    );
}

/// `update --absolute-paths` writes absolute paths into the recipes it moves; one already
/// current is left as it is, which the help did not say ("Write absolute script paths
/// instead of ${FINCLAW_PROFILE_ROOT}/…", and then "everything is up to date", nothing
/// written): the help says so.
#[test]
fn update_absolute_paths_is_for_the_recipes_it_updates_as_its_help_says() {
    let sb = Sandbox::new();
    let o = sb.cmd().args(["update", "--help"]).output().unwrap();
    ok(&o);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("into the recipes it")
            && help.contains("updates (one already current keeps its paths)"),
        "{help}"
    );
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    ok(&in_profile(
        &sb,
        "p",
        &["install", "demo", "--index", "cat"],
    ));
    let before = std::fs::read(sb.join("p/hooks.json")).unwrap();
    ok(&in_profile(
        &sb,
        "p",
        &["update", "--absolute-paths", "--index", "cat"],
    ));
    assert_eq!(std::fs::read(sb.join("p/hooks.json")).unwrap(), before);
}

#[test]
fn profile_and_index_resolution() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let home = sb.join("finclaw-home");
    // active-profile names the profile; config.yaml names the index.
    sb.write("finclaw-home/active-profile", "work\n");
    sb.write(
        "finclaw-home/profiles/work/config.yaml",
        format!(
            "model: x\nextra:\n  hooks:\n    index_url: \"{}\"\n",
            sb.join("cat/hooks-index.json").display()
        ),
    );
    ok(&sb.cmd().args(["install", "demo"]).output().unwrap());
    assert!(home.join("profiles/work/hooks/demo").is_dir());
    // FINCLAW_PROFILE wins over active-profile; HOOKPACK_INDEX_URL over config.yaml.
    ok(&sb
        .cmd()
        .env("FINCLAW_PROFILE", "other")
        .env("HOOKPACK_INDEX_URL", sb.join("cat").display().to_string())
        .args(["install", "demo"])
        .output()
        .unwrap());
    assert!(home.join("profiles/other/hooks/demo").is_dir());
    // Without any of them: the built-in catalog, which has no `demo`.
    let o = sb
        .cmd()
        .env("FINCLAW_PROFILE", "third")
        .args(["install", "demo"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("builtin:hooks-index.json"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A broken config.yaml is reported, not ignored.
    sb.write(
        "finclaw-home/profiles/work/config.yaml",
        "extra: [unclosed\n",
    );
    let o = sb.cmd().args(["install", "demo"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("config.yaml"));
}

#[test]
fn list_shows_recipes_and_hand_written_handlers() {
    let sb = Sandbox::new();
    sb.write("prof/hooks.json", USER_DOC);
    sb.write(
        "ws/.finclaw/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}"#,
    );
    ok(&in_prof(&sb, &["install", "secret-guard"]));
    let l = list_json(&sb);
    assert_eq!(l["recipes"][0]["id"], "secret-guard");
    let hs = l["handlers"].as_array().unwrap();
    let sources: Vec<&str> = hs.iter().map(|h| h["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["profile", "profile", "profile", "workspace"]);
    assert_eq!(hs[1]["recipe"], "secret-guard");
    assert!(hs[3]["problems"][0]
        .as_str()
        .unwrap()
        .contains("at least 1 second"));
}

#[test]
fn bad_hooks_json_and_dry_runs_write_nothing() {
    let sb = Sandbox::new();
    sb.write("prof/hooks.json", "{\"hooks\": {\"Stop\": [}\n");
    let before = snapshot(&sb.join("prof"));
    let o = in_prof(&sb, &["install", "tool-gate"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not valid JSON (1:21"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let after = snapshot(&sb.join("prof"));
    assert_eq!(before.get("hooks.json"), after.get("hooks.json"));
    assert!(!sb.join("prof/hooks/tool-gate").exists());

    sb.write("p2/hooks.json", USER_DOC);
    let before = snapshot(&sb.join("p2"));
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "p2", "--dry-run"])
        .output()
        .unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("would install tool-gate 0.4.7")
            && text.contains("+            \"recipe\": \"tool-gate\""),
        "{text}"
    );
    assert_eq!(snapshot(&sb.join("p2")), before);
    ok(&in_profile(&sb, "p2", &["install", "tool-gate"]));
    let before = snapshot(&sb.join("p2"));
    let o = sb
        .cmd()
        .args(["remove", "tool-gate", "--profile", "p2", "--dry-run"])
        .output()
        .unwrap();
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("would remove  tool-gate"));
    assert_eq!(snapshot(&sb.join("p2")), before);
}

#[test]
fn a_held_lock_times_out_and_changes_nothing() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(sb.join("prof/.hookpack.lock"))
        .unwrap();
    lock.lock().unwrap();
    let o = sb
        .cmd()
        .env("HOOKPACK_LOCK_TIMEOUT", "0.3")
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds"));
    assert!(!sb.join("prof/hooks.json").exists() && !sb.join("prof/hooks/tool-gate").exists());
    lock.unlock().unwrap();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
}

#[test]
fn concurrent_installs_all_land() {
    let sb = Sandbox::new();
    let ids: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
    for id in &ids {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    pack_src_into_cat(&sb);
    sb.write("prof/hooks.json", USER_DOC);
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            sb.std_cmd()
                .args(["install", id, "--profile", "prof", "--index", "cat"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        ok(&o);
    }
    let doc = read_json(&sb.join("prof/hooks.json"));
    let groups = doc["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 11);
    for id in &ids {
        let n = groups
            .iter()
            .filter(|g| g["hooks"][0]["recipe"] == id.as_str())
            .count();
        assert_eq!(n, 1, "{id}");
        assert!(sb.join(&format!("prof/hooks/{id}/recipe.json")).is_file());
    }
    let original: Value = serde_json::from_str(USER_DOC).unwrap();
    assert_eq!(groups[0], original["hooks"]["PreToolUse"][0]);
    assert_eq!(doc["hooks"]["SessionEnd"], original["hooks"]["SessionEnd"]);
}

/// Found by the host-side sweep: a crash past the commit point (hooks.json written), then
/// an edit of hooks.json by the user (a handler of their own added), made recovery take
/// the change as not committed and undo it, but for hooks.json, which kept the recipe's
/// new handlers: the recipe's folder and receipt went, its handlers stayed. Recovery now
/// reads the recipe's own handlers: those the change made, it was committed and is
/// finished; those it had before, it is undone. The user's handler stays either way. A
/// file only reformatted (its keys reordered, as `jq -S` does) is read alike (found by the
/// review of the diff: the order of a handler's keys decided).
#[test]
fn a_hooks_json_edited_after_a_crash_is_recovered_by_the_recipes_handlers() {
    // Every object's keys in reverse order: other bytes, the same handlers.
    fn reordered(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                keys.reverse();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), reordered(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(reordered).collect()),
            other => other.clone(),
        }
    }
    let cases = [
        ("install", "6", true),
        ("install", "4", false),
        ("remove", "6", true),
        ("remove", "4", false),
        // Both versions have the same handlers: the edited file cannot tell, and the old
        // version is put back, whose handlers hooks.json holds.
        ("upgrade", "6", false),
        ("upgrade", "4", false),
    ];
    let with_reformat = cases.iter().flat_map(|c| [(c, false), (c, true)]);
    for (&(op, point, finished), reformat) in with_reformat {
        let sb = Sandbox::new();
        catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
        sb.write(
            "prof/hooks.json",
            r#"{"hooks": {"PreToolUse": [{"matcher": "exec", "hooks": [{"type": "command", "command": "echo {}", "id": "theirs"}]}]}}"#,
        );
        if op != "install" {
            ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
        }
        if op == "upgrade" {
            catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
        }
        let args: Vec<&str> = match op {
            "remove" => vec!["remove", "demo"],
            _ => vec!["install", "demo", "--index", "cat"],
        };
        crashed_at(&sb, point, &args);
        // The user adds a handler of their own with an editor, or reformats the file.
        let mut doc = read_json(&sb.join("prof/hooks.json"));
        doc["hooks"]["SessionStart"] =
            json!([{"hooks": [{"type": "command", "id": "mine", "command": "echo {}"}]}]);
        if reformat {
            doc = reordered(&doc);
        }
        sb.write("prof/hooks.json", serde_json::to_vec_pretty(&doc).unwrap());
        let o = in_prof(&sb, &["doctor", "--fix"]);
        let said =
            String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        let want = if finished {
            "completed the interrupted change of `demo`"
        } else {
            "rolled back the interrupted change of `demo`"
        };
        assert!(said.contains(want), "{op} {point} {reformat}: {said}");
        // Consistent: doctor finds nothing, and the user's handler is there.
        let o = in_prof(&sb, &["doctor"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{op} {point} {reformat}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let doc = read_json(&sb.join("prof/hooks.json"));
        assert_eq!(
            doc["hooks"]["SessionStart"][0]["hooks"][0]["id"], "mine",
            "{op} {point} {reformat}"
        );
        let installed = sb.join("prof/hooks/demo/recipe.json").is_file();
        let stamped = doc.to_string().contains("\"recipe\":\"demo\"");
        assert_eq!(installed, stamped, "{op} {point} {reformat}: {doc:#}");
        let expect_installed = match op {
            "install" => finished,
            "remove" => !finished,
            _ => true,
        };
        assert_eq!(installed, expect_installed, "{op} {point} {reformat}");
        if op == "upgrade" && installed {
            let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
            let want = if finished { "0.2.0" } else { "0.1.0" };
            assert_eq!(receipt["version"], want, "{op} {point} {reformat}");
        }
    }
}

/// Stops install and remove at every step of their commit (an abort, like kill -9) and
/// checks that the profile is the old state or the new, and that the next command recovers.
#[test]
fn a_crash_at_any_commit_step_leaves_old_or_new() {
    for op in ["install", "upgrade", "remove"] {
        for point in 1..=7 {
            let sb = Sandbox::new();
            catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
            sb.write("prof/hooks.json", USER_DOC);
            if op != "install" {
                ok(&sb
                    .cmd()
                    .args([
                        "install",
                        "demo@0.1.0",
                        "--profile",
                        "prof",
                        "--index",
                        "cat",
                    ])
                    .output()
                    .unwrap());
            }
            if op == "upgrade" {
                catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
            }
            let before = snapshot(&sb.join("prof"));
            let args: Vec<&str> = match op {
                "remove" => vec!["remove", "demo"],
                _ => vec!["install", "demo", "--index", "cat"],
            };
            let o = sb
                .cmd()
                .env("HOOKPACK_TEST_CRASH_AT", point.to_string())
                .args(&args)
                .args(["--profile", "prof"])
                .output()
                .unwrap();
            assert!(
                !o.status.success(),
                "{op} {point}: the crash hook did not fire"
            );
            // hooks.json parses and is the old or the new document.
            let doc = read_json(&sb.join("prof/hooks.json"));
            let old: Value = serde_json::from_slice(&before["hooks.json"]).unwrap();
            let committed = doc != old;
            if committed {
                assert!(
                    point >= 6,
                    "{op} {point}: hooks.json changed before the commit point"
                );
            }
            // The next command recovers; then the state is consistent.
            ok(&in_prof(&sb, &["list"]));
            let o = in_prof(&sb, &["install", "tool-gate"]);
            ok(&o);
            ok(&in_prof(&sb, &["remove", "tool-gate"]));
            let after = snapshot(&sb.join("prof"));
            let leftovers: Vec<&String> = after
                .keys()
                .filter(|k| {
                    k.starts_with(".hookpack-staging/") || k.starts_with(".hookpack-journal")
                })
                .collect();
            assert!(
                leftovers.is_empty(),
                "{op} {point}: leftovers {leftovers:?}"
            );
            // Not even an empty staging folder stays behind.
            assert!(
                !sb.join("prof/.hookpack-staging").exists(),
                "{op} {point}: an empty staging folder is left"
            );
            let receipt = sb.join("prof/hooks/.receipts/demo.json");
            let tree = sb.join("prof/hooks/demo/recipe.json");
            let doc = read_json(&sb.join("prof/hooks.json"));
            let has_entry = doc["hooks"]["PreToolUse"]
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g["hooks"][0]["recipe"] == "demo"));
            assert_eq!(
                has_entry,
                receipt.exists(),
                "{op} {point}: receipt and hooks.json disagree"
            );
            assert_eq!(
                has_entry,
                tree.exists(),
                "{op} {point}: folder and hooks.json disagree"
            );
            if has_entry {
                let version = read_json(&receipt)["version"].as_str().unwrap().to_string();
                let manifest_version = read_json(&tree)["version"].as_str().unwrap().to_string();
                assert_eq!(
                    version, manifest_version,
                    "{op} {point}: receipt and folder disagree"
                );
            }
            // The user's own entries are intact whatever happened.
            let original: Value = serde_json::from_str(USER_DOC).unwrap();
            assert_eq!(
                doc["hooks"]["PreToolUse"][0], original["hooks"]["PreToolUse"][0],
                "{op} {point}"
            );
            assert_eq!(doc["description"], original["description"]);
        }
    }
}

/// Found by the hostile-publisher sweep: a recipe was staged as `<staging>/<id>`, beside the
/// download (`archive`), the installed folder moved aside (`old`), the backup (`bak`) and
/// the trash (`trash`), so a recipe of one of those ids collided with them: `archive` could
/// not be installed (exit 3, "File exists"), and `old` wedged the profile once repaired or
/// upgraded (the commit could not move the installed folder onto the staged one, and every
/// later command failed recovering the journal it left); a crash in a commit of `bak` was
/// undone by moving the staged folder onto `hooks.json.bak`.
#[test]
fn recipes_named_like_the_parts_of_a_staging_folder_install_repair_upgrade_and_remove() {
    for id in ["archive", "old", "bak", "trash", "new"] {
        let sb = Sandbox::new();
        catalog_with_versions(&sb, id, &[("0.1.0", "0.13.0")]);
        let mine = json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "echo mine", "id": "mine"}
        ]}]}});
        sb.write("prof/hooks.json", serde_json::to_vec_pretty(&mine).unwrap());
        ok(&in_prof(&sb, &["install", id, "--index", "cat"]));
        let pinned = format!("{id}@0.2.0");
        catalog_with_versions(&sb, id, &[("0.2.0", "0.13.0")]);
        ok(&in_prof(&sb, &["install", id, "--index", "cat"]));
        // A repair, killed at each step of its commit, is rolled forward or back by the
        // next command, which then repairs.
        for point in 1..=7 {
            sb.write(&format!("prof/hooks/{id}/README.md"), "edited\n");
            let o = sb
                .cmd()
                .env("HOOKPACK_TEST_CRASH_AT", point.to_string())
                .args(["install", &pinned, "--index", "cat", "--profile", "prof"])
                .output()
                .unwrap();
            assert!(
                !o.status.success(),
                "{id} {point}: the crash hook did not fire"
            );
            let o = in_prof(&sb, &["install", &pinned, "--index", "cat"]);
            assert!(o.status.success(), "{id} {point}: {o:?}");
            let o = in_prof(&sb, &["doctor"]);
            assert!(o.status.success(), "{id} {point}: {o:?}");
        }
        let tree = read_json(&sb.join(&format!("prof/hooks/{id}/recipe.json")));
        assert_eq!(tree["version"], "0.2.0", "{id}");
        ok(&in_prof(&sb, &["remove", id]));
        assert!(!sb.join(&format!("prof/hooks/{id}")).exists(), "{id}");
        assert!(!sb.join("prof/.hookpack-staging").exists(), "{id}");
        assert!(!sb.join("prof/.hookpack-journal.json").exists(), "{id}");
        assert_eq!(read_json(&sb.join("prof/hooks.json")), mine, "{id}");
    }
}

/// A journal of an earlier release, which staged the new folder as `<staging>/<id>`, is
/// still undone: an upgrade killed before it moved anything keeps the installed version.
#[test]
fn a_journal_staging_the_new_folder_as_earlier_releases_did_is_undone() {
    let sb = Sandbox::new();
    old_and_new_catalogs(&sb);
    ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
    crashed_at(&sb, "1", &["install", "demo", "--index", "cat"]);
    let journal_path = sb.join("prof/.hookpack-journal.json");
    let mut journal = read_json(&journal_path);
    assert_eq!(journal["new_tree_in_new"], true, "{journal:#}");
    journal.as_object_mut().unwrap().remove("new_tree_in_new");
    sb.write(
        "prof/.hookpack-journal.json",
        serde_json::to_vec(&journal).unwrap(),
    );
    let staging = sb
        .join("prof/.hookpack-staging")
        .join(journal["staging"].as_str().unwrap());
    std::fs::rename(staging.join("new/demo"), staging.join("demo")).unwrap();
    let o = in_prof(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("rolled back the interrupted change of `demo`"),
        "{out}"
    );
    ok(&in_prof(&sb, &["doctor"]));
    let tree = read_json(&sb.join("prof/hooks/demo/recipe.json"));
    assert_eq!(tree["version"], "0.1.0");
}

/// A remove that dies once `hooks.json` no longer holds the recipe (crash point 6, before
/// the journal is gone, and 7, after) still drops its handlers' trust, as a remove that
/// finishes does: a later install of the recipe starts untrusted.
#[test]
fn a_remove_that_dies_after_its_commit_still_drops_the_trust() {
    for point in ["6", "7"] {
        let sb = Sandbox::new();
        installed_from_cat(&sb, "demo");
        ok(&in_prof(&sb, &["trust", "--all"]));
        crashed_at(&sb, point, &["remove", "demo"]);
        ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
        let listed = list_json(&sb);
        let handlers = listed["handlers"].as_array().unwrap();
        assert!(!handlers.is_empty(), "{listed:#}");
        for h in handlers {
            assert_eq!(h["status"], "untrusted", "crash at {point}: {listed:#}");
        }
    }
}

/// A sandbox whose profile `prof` has `demo` 0.1.0 from `old` and an update to 0.2.0 from
/// `cat` killed before its commit point (step 4: the new folder and receipt are in,
/// `hooks.json` is not).
fn an_update_killed_before_its_commit() -> Sandbox {
    let sb = Sandbox::new();
    old_and_new_catalogs(&sb);
    ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
    crashed_at(&sb, "4", &["update", "--index", "cat"]);
    sb
}

/// An update killed before its commit point (step 4: the new folder and receipt are in,
/// `hooks.json` is not) is undone by the next `update`, which then updates: it took the
/// receipt of the interrupted change for the installed version, said "everything is up to
/// date" and left the journal, so the next install or remove went back to 0.1.0.
#[test]
fn an_update_after_an_interrupted_update_undoes_it_and_updates() {
    let sb = an_update_killed_before_its_commit();
    let o = in_prof(&sb, &["update", "--index", "cat"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("up to date"), "{err}");
    assert!(!sb.join("prof/.hookpack-journal.json").exists(), "{err}");
    assert!(!sb.join("prof/.hookpack-staging").exists(), "{err}");
    // What the next command finds is the update, done.
    ok(&in_prof(&sb, &["doctor", "--fix"]));
    let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
    assert_eq!(receipt["version"], "0.2.0");
    let tree = read_json(&sb.join("prof/hooks/demo/recipe.json"));
    assert_eq!(tree["version"], "0.2.0");
}

/// `list` and `update --dry-run`, which write nothing, show a change a crash interrupted as
/// the next command that writes the profile will leave it, and say which it will do: an
/// update or a remove killed before its commit point (step 4: the new receipt is in,
/// `hooks.json` is not) undone, an install killed past it (step 6) finished. They showed the
/// receipt the interrupted change wrote: the update's 0.2.0, which recovery takes back to
/// 0.1.0, and no recipe for the remove, which recovery puts back.
#[test]
fn list_and_update_dry_run_show_an_interrupted_change_as_recovery_leaves_it() {
    for (change, point, will, recovery) in [
        ("update", "4", "undo it", "rolled back"),
        ("remove", "4", "undo it", "rolled back"),
        ("install", "6", "finish it", "completed"),
    ] {
        let sb = Sandbox::new();
        let p = profile_flag(&sb, "prof");
        interrupted_demo(&sb, change, point, false);
        // They take no lock: none is made.
        let lock = sb.join("prof/.hookpack.lock");
        std::fs::remove_file(&lock).unwrap();
        let before = sandbox_state(&sb.join("prof"));
        let note = format!(
            "note: a change of `demo` was interrupted; the next command that writes the \
             profile, or `hookpack doctor --fix{p}`, will {will}"
        );
        let said = |o: &std::process::Output| {
            ok(o);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(err.matches(&note).count(), 1, "{change}: {err}");
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        // As recovery leaves it: demo 0.1.0, its folder there, unchanged.
        let out = said(&in_prof(&sb, &["list"]));
        assert!(out.contains("recipe  demo 0.1.0\n"), "{change}: {out}");
        assert!(!out.contains("folder missing"), "{change}: {out}");
        let o = in_prof(&sb, &["list", "--format", "json"]);
        said(&o);
        let listed = one_json_document(&o);
        assert_eq!(
            listed["recipes"][0]["version"], "0.1.0",
            "{change}: {listed:#}"
        );
        let what = will.trim_end_matches(" it");
        assert_eq!(
            listed["interrupted"],
            json!({"id": "demo", "recovery": what}),
            "{change}"
        );
        assert_eq!(listed["recipes"][0]["folder_present"], true, "{change}");
        let dry_run = ["update", "--dry-run", "--index", "cat"];
        let out = said(&in_prof(&sb, &dry_run));
        assert_eq!(
            out, "outdated     demo installed 0.1.0 available 0.2.0\n",
            "{change}"
        );
        let o = in_prof(&sb, &[&dry_run[..], &["--format", "json"]].concat());
        said(&o);
        let report = one_json_document(&o);
        assert_eq!(report[0]["installed"], "0.1.0", "{change}: {report:#}");
        assert_eq!(report[0]["state"], "outdated", "{change}: {report:#}");
        assert!(
            report[0].get("local_changes").is_none(),
            "{change}: {report:#}"
        );
        // `install --dry-run` and `remove --dry-run` plan from there too: as they will
        // once recovery is done.
        let plans = [
            &["install", "demo", "--index", "cat", "--dry-run"][..],
            &["install", "demo@0.1.0", "--index", "old", "--dry-run"],
            &["remove", "demo", "--dry-run"],
        ];
        let planned: Vec<_> = plans
            .iter()
            .map(|args| {
                let o = in_prof(&sb, args);
                let err = String::from_utf8_lossy(&o.stderr);
                assert_eq!(err.matches(&note).count(), 1, "{change} {args:?}: {err}");
                (
                    o.status.code(),
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                )
            })
            .collect();
        assert_eq!(sandbox_state(&sb.join("prof")), before, "{change}");
        assert!(!lock.exists(), "{change}");
        // Recovery does what the note said, and leaves what they showed.
        let o = in_prof(&sb, &["doctor", "--fix"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(&format!("{recovery} the interrupted change of `demo`")),
            "{change}: {out}"
        );
        let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
        assert_eq!(receipt["version"], "0.1.0", "{change}");
        let tree = read_json(&sb.join("prof/hooks/demo/recipe.json"));
        assert_eq!(tree["version"], "0.1.0", "{change}");
        for (args, planned) in plans.iter().zip(planned) {
            let o = in_prof(&sb, args);
            let now = (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            );
            assert_eq!(planned, now, "{change} {args:?}");
        }
    }
}

/// `doctor` on a profile a crash left in the middle of a change named only an interrupted
/// install or remove, and checked the rest as the crash left it: the change's own staging
/// folder (holding the installed version's folder, which the undo moves back) was called a
/// leftover that `doctor --fix` removes, and the recipe's folder half moved, its receipt
/// or handlers not yet written got `recipe-folder-missing`, `entries-missing` and
/// `tree-modified`, advising an `install ID@VERSION` that fights the recovery. It now names
/// the change, says whether recovery finishes or undoes it, and checks that recipe after.
#[test]
fn doctor_names_an_interrupted_change_and_checks_its_recipe_after_recovery() {
    for change in ["install", "update", "remove"] {
        for point in 1..=7 {
            let sb = Sandbox::new();
            let p = profile_flag(&sb, "prof");
            // Trusted: a remove's entries dangle past its commit; recovery drops them.
            interrupted_demo(&sb, change, &point.to_string(), true);
            let journal = sb.join("prof/.hookpack-journal.json").exists();
            let o = in_prof(&sb, &["doctor", "--format", "json"]);
            let report = one_json_document(&o);
            let problems = report["problems"].as_array().unwrap();
            let codes: Vec<&str> = problems
                .iter()
                .map(|d| d["code"].as_str().unwrap())
                .collect();
            let what = format!("{change} killed at {point}");
            let will = if journal {
                assert_eq!(codes, ["interrupted-commit"], "{what}: {report:#}");
                let message = problems[0]["message"].as_str().unwrap();
                let will = ["undo", "finish"]
                    .into_iter()
                    .find(|w| message.contains(&format!("will {w} it")))
                    .unwrap_or_else(|| panic!("{what}: {message}"));
                assert!(
                    message.starts_with(&format!(
                        "a change of `demo` was interrupted; `hookpack doctor --fix{p}` (or the \
                         next install, update or remove) will {will} it"
                    )),
                    "{what}: {message}"
                );
                Some(will)
            } else {
                // Past the journal's removal, what is left is a staging folder only,
                // which breaks nothing: a warning (exit 0).
                assert!(!codes.is_empty(), "{what}: {report:#}");
                assert!(
                    codes.iter().all(|c| *c == "staging-leftover"),
                    "{what}: {report:#}"
                );
                None
            };
            let want = if will.is_some() { 1 } else { 0 };
            assert_eq!(o.status.code(), Some(want), "{what}");
            let o = in_prof(&sb, &["doctor", "--fix"]);
            let out = String::from_utf8_lossy(&o.stdout);
            match will {
                Some("undo") => assert!(
                    out.contains("rolled back the interrupted change of `demo`"),
                    "{what}: {out}"
                ),
                Some(_) => assert!(
                    out.contains("completed the interrupted change of `demo`"),
                    "{what}: {out}"
                ),
                None => assert!(out.contains("removed staging leftovers"), "{what}: {out}"),
            }
            ok(&in_prof(&sb, &["doctor"]));
        }
    }
}

/// In a profile a crash left mid-change, `trust` hashed the recipe's files as they were
/// half way (the new version's, which an undo replaces; or none, `script is missing`,
/// while a remove had the folder aside), so a trusted gate came out of recovery changed
/// since trusted and skipped by hosts. It refuses that recipe's handlers until `doctor
/// --fix`; `doctor` counts none of them as awaiting trust, and `run` says its handlers are
/// as their files are, half way.
#[test]
fn trust_refuses_the_handlers_of_an_interrupted_change_until_recovery() {
    for (change, point) in [("update", "4"), ("remove", "3"), ("install", "6")] {
        let sb = Sandbox::new();
        let p = profile_flag(&sb, "prof");
        let mine = json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "echo mine", "id": "mine"}
        ]}]}});
        sb.write("prof/hooks.json", serde_json::to_vec_pretty(&mine).unwrap());
        interrupted_demo(&sb, change, point, true);
        let trust_file = sb.join("finclaw-home/hooks-trust.json");
        let before = std::fs::read(&trust_file).ok();
        let o = in_prof(&sb, &["trust", "--all"]);
        assert_eq!(o.status.code(), Some(1), "{change}: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout);
        let refusal = format!(
            "): a change of `demo` was interrupted, and its files are not yet those \
             recovery leaves; run `hookpack doctor --fix{p}` (it finishes or undoes the \
             change), then trust it"
        );
        assert!(out.contains(&refusal), "{change}: {out}");
        // The user's own handler is trusted all the same; demo's entry is as it was.
        assert!(
            (out.lines()).any(|l| l.contains(" Stop mine ") && !l.starts_with("refused")),
            "{change}: {out}"
        );
        let after: Value = read_json(&trust_file);
        let demo_entries = |doc: Option<&Value>| -> Vec<(String, Value)> {
            doc.and_then(|d| d["handlers"].as_object())
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.contains("#PreToolUse#"))
                .map(|(k, v)| (k.clone(), v["hash"].clone()))
                .collect()
        };
        let before: Option<Value> = before.map(|b| serde_json::from_slice(&b).unwrap());
        assert_eq!(
            demo_entries(before.as_ref()),
            demo_entries(Some(&after)),
            "{change}"
        );
        let o = in_prof(&sb, &["doctor", "--format", "json"]);
        let report = one_json_document(&o);
        assert_eq!(report["awaiting_trust"], json!([]), "{change}: {report:#}");
        sb.write(
            "payload.json",
            r#"{"tool_name": "exec", "tool_input": {"command": "ls"}}"#,
        );
        let o = in_prof(&sb, &["run", "PreToolUse", "--payload", "payload.json"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("note: a change of `demo` was interrupted, so its handlers here are as their files are now"),
            "{change}: {err}"
        );
        // A skipped demo handler is not sent to `trust`, which refuses it until recovery.
        let out = String::from_utf8_lossy(&o.stdout);
        let skipped: Vec<&str> = (out.lines())
            .filter(|l| l.contains("skipped") && !l.contains(" mine "))
            .collect();
        assert!(!skipped.is_empty(), "{change}: {out}");
        for line in skipped {
            assert!(
                line.contains(&format!(
                    "a change of its recipe `demo` was interrupted: run `hookpack doctor \
                     --fix{p}` first, then trust it with `hookpack trust gate{p}`, or pass \
                     --include-untrusted)"
                )),
                "{change}: {line}"
            );
        }
        ok(&in_prof(&sb, &["doctor", "--fix"]));
        let nothing_awaits_trust = || {
            let o = in_prof(&sb, &["doctor", "--format", "json"]);
            ok(&o);
            let report = one_json_document(&o);
            assert_eq!(report["awaiting_trust"], json!([]), "{change}");
        };
        // Trusted before the crash, trusted after recovery.
        if change != "install" {
            nothing_awaits_trust();
        }
        ok(&in_prof(&sb, &["trust", "--all"]));
        nothing_awaits_trust();
    }
}

/// Found by the user-side hostile-input sweep: `doctor` said "no problems" (exit 0) of a
/// profile `hooks.json` that install, update and remove refuse to rewrite: a link to
/// nothing, a file with a second name, a number that cannot be written back as it is. Each
/// is `hooks-json-refused`; `list` reads a link to nothing as no file, as a host does.
#[test]
fn doctor_reports_a_hooks_json_that_install_refuses_to_rewrite() {
    for (kind, code, says) in [
        (
            "dangling",
            "hooks-json-refused",
            "install, update and remove refuse to rewrite it: it is a symbolic link to nothing \
             (",
        ),
        (
            "hard link",
            "hooks-json-refused",
            "install, update and remove refuse to rewrite it: it has 2 names (hard links",
        ),
        (
            "big number",
            "hooks-json-refused",
            "install, update and remove refuse to rewrite it: the number \
             `12345678901234567890123` at 1:20 (/n) would be written back as",
        ),
    ] {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.join("prof")).unwrap();
        let hooks = sb.join("prof/hooks.json");
        match kind {
            "dangling" => std::os::unix::fs::symlink(sb.join("nothing.json"), &hooks).unwrap(),
            "hard link" => {
                sb.write("prof/hooks.json", "{\"hooks\": {}}\n");
                std::fs::hard_link(&hooks, sb.join("other-name.json")).unwrap();
            }
            _ => {
                sb.write(
                    "prof/hooks.json",
                    "{\"hooks\": {}, \"n\": 12345678901234567890123}\n",
                );
            }
        }
        let o = in_prof(&sb, &["doctor", "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{kind}: {o:?}");
        let report = one_json_document(&o);
        let found = (report["problems"].as_array().unwrap().iter())
            .find(|d| d["code"] == code)
            .unwrap_or_else(|| panic!("{kind}: {report:#}"));
        let message = found["message"].as_str().unwrap();
        assert!(message.contains(says), "{kind}: {message}");
        // As install says.
        let o = in_prof(&sb, &["install", "tool-gate"]);
        assert_eq!(o.status.code(), Some(1), "{kind}: {o:?}");
        ok(&in_prof(&sb, &["list"]));
    }
}

/// Found by the user-side hostile-input sweep: a first install replaced handlers stamped
/// `"recipe": ID` that no receipt recorded (copied from another profile, or left by a lost
/// receipt) without a word, on events the recipe does not use too. They are taken as
/// hookpack's, as before, but the install (and its dry run) names them in full: in one
/// command installing two recipes, the second's commit replaces `hooks.json.bak` too.
#[test]
fn a_first_install_names_the_stamped_handlers_no_receipt_recorded() {
    let sb = Sandbox::new();
    let mine = r#"{"type": "command", "command": "sh my-start.sh", "id": "my-start", "recipe": "audit-log"}"#;
    sb.write(
        "prof/hooks.json",
        format!(
            r#"{{"hooks": {{"SessionStart": [{{"matcher": "startup", "hooks": [{mine}]}}]}}}}"#
        ),
    );
    let said = |replaced: &str| {
        format!(
            "hooks.json held 1 handler stamped `\"recipe\": \"audit-log\"` that no receipt of \
             this profile records, copied from another profile or left by a lost receipt; \
             taken as hookpack's, it {replaced} by audit-log's own handlers. To keep one as \
             yours, add its group back under its event without the `recipe` field: \
             SessionStart: {{\"matcher\":\"startup\",\"hooks\":[{{\"type\":\"command\",\
             \"command\":\"sh my-start.sh\",\"id\":\"my-start\",\"recipe\":\"audit-log\"}}]}}"
        )
    };
    for (args, replaced) in [
        (
            &["install", "audit-log", "--dry-run"][..],
            "would be replaced",
        ),
        (&["install", "audit-log", "tool-gate"], "is replaced"),
    ] {
        let o = in_prof(&sb, args);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&said(replaced)), "{args:?}: {err}");
    }
    // Installed now: a reinstall names nothing.
    let o = in_prof(&sb, &["install", "audit-log"]);
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("no receipt"),
        "{o:?}"
    );
}

/// Found by the user-side sweep: a trust key names a handler by its event and id, so a
/// handler of the user's sharing its id with one of a recipe's (which install warns of) has
/// the recipe's key; `remove` dropped that key with the recipe's handler, and the user's
/// trusted gate was skipped as untrusted from then on, without a word. A key a handler
/// that stays still has is kept.
#[test]
fn remove_keeps_the_trust_of_a_handler_that_stays_under_the_same_key() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "sh \"${FINCLAW_PROFILE_ROOT}/my-gate.sh\"", "id": "gate-mutating"}]}]}}"#,
    );
    sb.write("prof/my-gate.sh", "exit 0\n");
    ok(&in_prof(&sb, &["trust", "gate-mutating"]));
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    ok(&in_prof(&sb, &["remove", "tool-gate"]));
    let listed = list_json(&sb);
    let handlers = listed["handlers"].as_array().unwrap();
    assert_eq!(handlers.len(), 1, "{listed:#}");
    assert_eq!(handlers[0]["status"], "trusted", "{listed:#}");
}

/// Found by the user-side sweep: `remove ID` with no receipt of ID removed the handlers
/// stamped `"recipe": ID` (a user's copied from another profile), and the event only they
/// held, without a word, where the first install over them names each in full. The remove
/// (and its dry run) now names them the same way.
#[test]
fn a_remove_names_the_stamped_handlers_no_receipt_recorded() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh my-stop.sh", "id": "my-stop", "recipe": "tool-gate"}]}]}}"#,
    );
    let said = |removed: &str| {
        format!(
            "hooks.json held 1 handler stamped `\"recipe\": \"tool-gate\"` that no receipt of \
             this profile records, copied from another profile or left by a lost receipt; \
             taken as hookpack's, it {removed}, with the events only such handlers held. To \
             keep one as yours, add its group back under its event without the `recipe` \
             field: Stop: {{\"hooks\":[{{\"type\":\"command\",\"command\":\"sh my-stop.sh\",\
             \"id\":\"my-stop\",\"recipe\":\"tool-gate\"}}]}}"
        )
    };
    for (args, removed) in [
        (
            &["remove", "tool-gate", "--dry-run"][..],
            "would be removed",
        ),
        (&["remove", "tool-gate"], "is removed"),
    ] {
        let o = in_prof(&sb, &[args, &["--format", "json"]].concat());
        ok(&o);
        let doc = one_json_document(&o);
        assert_eq!(doc[0]["warnings"][0], said(removed), "{args:?}: {doc:#}");
    }
}

/// A journal hookpack cannot use (damaged, or naming what hookpack never writes) was
/// reported as a change that `doctor --fix` "finishes or undoes", which it does not: it
/// deletes the journal and undoes nothing. `doctor` says that, and why the journal is
/// not used; `--fix` says it ignored it.
#[test]
fn doctor_says_a_journal_it_cannot_use_is_removed_undoing_nothing() {
    for (journal, why) in [
        (
            "{\"id\": \"demo\", \"stag",
            "it cannot be read: EOF while parsing",
        ),
        (
            "{\"id\": \"../x\", \"staging\": \"/tmp/1-x\", \"hooks_before\": null, \
             \"hooks_after\": \"0000000000000000000000000000000000000000000000000000000000000000\", \
             \"old_receipt\": null, \"new_receipt\": null}",
            "it names `../x` and the staging folder /tmp/1-x, which hookpack never writes",
        ),
    ] {
        let sb = Sandbox::new();
        let p = profile_flag(&sb, "prof");
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        sb.write("prof/.hookpack-journal.json", journal);
        let o = in_prof(&sb, &["doctor", "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let report = one_json_document(&o);
        let problem = &report["problems"][0];
        assert_eq!(problem["code"], "interrupted-commit", "{report:#}");
        let message = problem["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "hookpack cannot use this journal of an interrupted change ({why}"
            )),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(
                "; `hookpack doctor --fix{p}` (or the next install, update or remove) deletes \
                 it, finishing or undoing nothing; run `hookpack doctor{p}` after that to see \
                 what the change left"
            )),
            "{message}"
        );
        let o = in_prof(&sb, &["doctor", "--fix"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("fixed: ignored the journal ") && out.contains(why),
            "{out}"
        );
        ok(&in_prof(&sb, &["doctor"]));
    }
}

/// Found by a hostile sweep: a journal whose id was not its receipts' (edited, or
/// damaged) had `doctor --fix` "roll back" a recipe the change never touched, deleting its
/// folder with a file the user kept there; and a journal whose staging folder was gone had
/// it take out part of the change (the receipt) and report it rolled back. Neither
/// journal is one hookpack writes: both are ignored, undoing nothing, and `doctor` says why.
#[test]
fn a_journal_at_odds_with_itself_or_its_staging_folder_undoes_nothing() {
    for damage in ["id", "staging"] {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        crashed_at(&sb, "4", &["install", "audit-log"]);
        let journal = sb.join("prof/.hookpack-journal.json");
        let why = if damage == "id" {
            let mut j: Value = serde_json::from_slice(&std::fs::read(&journal).unwrap()).unwrap();
            j["id"] = json!("tool-gate");
            std::fs::write(&journal, serde_json::to_vec(&j).unwrap()).unwrap();
            "it names `tool-gate` but holds a receipt of `audit-log`, which hookpack never writes"
                .to_string()
        } else {
            let staging = std::fs::read_dir(sb.join("prof/.hookpack-staging"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .next()
                .unwrap();
            std::fs::remove_dir_all(&staging).unwrap();
            format!(
                "its change of `audit-log` did not reach its commit point (hooks.json), and \
                 the staging folder {} it would be undone from is gone, so it cannot be undone",
                staging.display()
            )
        };
        sb.write("prof/hooks/tool-gate/my-notes.txt", "MY OWN WORK\n");
        let before = snapshot(&sb.join("prof/hooks"));
        let o = in_prof(&sb, &["doctor"]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let said =
            String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        assert!(
            said.contains(&format!(
                "hookpack cannot use this journal of an interrupted change ({why}"
            )),
            "{damage}: {said}"
        );
        let o = in_prof(&sb, &["doctor", "--fix"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("fixed: ignored the journal ") && out.contains(&why),
            "{out}"
        );
        assert!(!out.contains("rolled back"), "{out}");
        assert!(!journal.exists());
        // Nothing of either recipe moved or went: tool-gate's folder with the user's file,
        // and what the interrupted install of audit-log had put in place, receipt included.
        assert_eq!(snapshot(&sb.join("prof/hooks")), before, "{damage}");
    }

    // Found by review: an ignored journal's staging folder went with the dead process's
    // leftovers, and with it the recipe's earlier folder an interrupted update had moved
    // aside (`old`). It is kept, and said so.
    let sb = Sandbox::new();
    interrupted_demo(&sb, "update", "3", false);
    let journal = sb.join("prof/.hookpack-journal.json");
    let mut j: Value = serde_json::from_slice(&std::fs::read(&journal).unwrap()).unwrap();
    j["new_receipt"]["id"] = json!("other");
    std::fs::write(&journal, serde_json::to_vec(&j).unwrap()).unwrap();
    let staging = std::fs::read_dir(sb.join("prof/.hookpack-staging"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let old = snapshot(&staging.join("old"));
    assert!(!old.is_empty());
    let o = in_prof(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let name = staging.file_name().unwrap().to_string_lossy();
    let kept = sb.join(&format!("prof/.hookpack-staging/kept-{name}"));
    assert!(
        out.contains("fixed: ignored the journal ")
            && out.contains(&format!("kept {}: ", kept.display()))
            && !out.contains("removed staging leftovers"),
        "{out}"
    );
    assert_eq!(snapshot(&kept.join("old")), old);
    // Kept for good: the next command leaves it alone (doctor still reports the new
    // folder in place under the old receipt, for the user to settle).
    let o = in_prof(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("error[tree-modified]"), "{out}");
    assert_eq!(snapshot(&kept.join("old")), old);
}

/// Found by review: a panic in a commit unwound through the staging folder's guard, which
/// deleted it, the recipe's earlier folder (`old`) in it, and left the journal: the change
/// could no longer be undone. The folder stays while the journal does, and the next command
/// rolls the change back, the earlier version whole.
#[test]
fn a_panic_in_a_commit_leaves_what_recovery_needs() {
    let sb = Sandbox::new();
    interrupted_demo(&sb, "update", "3:panic", false);
    let o = in_prof(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("fixed: rolled back the interrupted change of `demo`"),
        "{out}"
    );
    ok(&in_prof(&sb, &["doctor"]));
    let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
    assert_eq!(receipt["version"], "0.1.0", "{receipt:#}");
}

/// `install`, `update` and `remove` finished or undid a change a crash interrupted without
/// a word (only `doctor --fix` said so), so an `install` of one recipe could take another's
/// upgrade back unseen. They say what recovery did, on stderr, before their own outcome.
#[test]
fn the_next_change_says_what_recovery_of_an_interrupted_one_did() {
    for (change, point, next, did) in [
        (
            "update",
            "4",
            &["install", "demo", "--index", "cat"][..],
            "rolled back",
        ),
        ("install", "6", &["remove", "demo"][..], "completed"),
        (
            "remove",
            "3",
            &["update", "--index", "cat"][..],
            "rolled back",
        ),
    ] {
        let sb = Sandbox::new();
        interrupted_demo(&sb, change, point, false);
        // A usage error or an index that cannot be read changes nothing, recovery included.
        for refused in [
            &["install", "Bad!!"][..],
            &["install", "demo", "--index", "gone"],
        ] {
            let o = in_prof(&sb, refused);
            assert!(!o.status.success(), "{change} then {refused:?}");
            assert!(
                !String::from_utf8_lossy(&o.stderr).contains("note:"),
                "{o:?}"
            );
            assert!(
                sb.join("prof/.hookpack-journal.json").exists(),
                "{change} {refused:?}"
            );
        }
        let o = in_prof(&sb, next);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        let note = format!("note: {did} the interrupted change of `demo`\n");
        assert_eq!(
            err.matches(&note).count(),
            1,
            "{change} then {next:?}: {err}"
        );
        ok(&in_prof(&sb, &["doctor"]));
    }
}

/// A repair a crash interrupted (of `demo`, whose folder the user had deleted) is undone by
/// recovery, which leaves the receipt and no folder: `install --dry-run` checked the
/// repair's half-made folder for drift instead, and said "nothing to do" where the real
/// run, recovering first, repairs.
#[test]
fn install_dry_run_plans_a_repair_when_recovery_leaves_no_folder() {
    for point in ["3", "4", "5", "6"] {
        let sb = Sandbox::new();
        old_and_new_catalogs(&sb);
        ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
        std::fs::remove_dir_all(sb.join("prof/hooks/demo")).unwrap();
        crashed_at(&sb, point, &["install", "demo", "--index", "old"]);
        let plan = || {
            let o = in_prof(
                &sb,
                &[
                    "install",
                    "demo",
                    "--index",
                    "old",
                    "--dry-run",
                    "--format",
                    "json",
                ],
            );
            ok(&o);
            one_json_document(&o)[0].clone()
        };
        let planned = plan();
        assert_eq!(planned["action"], "repair", "{point}: {planned:#}");
        assert_eq!(planned["reason"], "files-differ", "{point}: {planned:#}");
        // What recovery leaves (doctor still reports the missing folder), and what the plan
        // then is.
        let _ = std::fs::remove_file(sb.join("prof/.hookpack.lock"));
        let o = in_prof(&sb, &["doctor", "--fix"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("rolled back the interrupted change of `demo`"),
            "{point}: {out}"
        );
        assert!(!sb.join("prof/hooks/demo").exists(), "{point}");
        assert_eq!(plan(), planned, "{point}");
    }
}

/// `remove --dry-run` after a first install a crash interrupted before its commit point
/// (recovery undoes it: `demo` is not installed) suggested the very name it was given:
/// "`demo` is not installed …; did you mean `demo`?", from the interrupted change's
/// receipt, which recovery deletes.
#[test]
fn remove_dry_run_after_an_interrupted_first_install_suggests_no_name() {
    for point in ["4", "5"] {
        let sb = Sandbox::new();
        old_and_new_catalogs(&sb);
        crashed_at(&sb, point, &["install", "demo", "--index", "old"]);
        let o = in_prof(&sb, &["remove", "demo", "--dry-run"]);
        fails_saying(&o, 1, "`demo` is not installed in");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("did you mean"), "{point}: {err}");
    }
}

/// A change whose process still runs (it holds the profile's lock) is not shown as
/// interrupted (recovery waits for it): `list` shows the receipts as they are, with no
/// note. One whose staging folder names a live process that holds no lock (its pid taken
/// by another process after a reboot) is interrupted: it was passed over as running, and
/// `list` showed the half-made change's receipt with no note.
#[test]
fn list_tells_a_change_under_way_by_the_lock_not_the_pid() {
    let sb = an_update_killed_before_its_commit();
    let mut running = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let journal_path = sb.join("prof/.hookpack-journal.json");
    let mut journal = read_json(&journal_path);
    let staging = sb.join("prof/.hookpack-staging");
    let name = format!("{}-x", running.id());
    let was = staging.join(journal["staging"].as_str().unwrap());
    std::fs::rename(was, staging.join(&name)).unwrap();
    journal["staging"] = name.into();
    std::fs::write(&journal_path, journal.to_string()).unwrap();
    let reused = in_prof(&sb, &["list"]);
    let held = std::fs::File::open(sb.join("prof/.hookpack.lock")).unwrap();
    held.lock().unwrap();
    let under_way = in_prof(&sb, &["list"]);
    drop(held);
    running.kill().unwrap();
    running.wait().unwrap();
    for (o, version, note) in [(reused, "0.1.0", true), (under_way, "0.2.0", false)] {
        ok(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(&format!("recipe  demo {version}\n")), "{out}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.contains("interrupted"), note, "{err}");
    }
}

/// A journal recovery ignores (one that does not parse) changes nothing `list` shows: the
/// receipts as they are, and no note of an interrupted change.
#[test]
fn list_passes_over_a_journal_recovery_ignores() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    sb.write("prof/.hookpack-journal.json", "{not json");
    let o = in_prof(&sb, &["list"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("recipe  demo 0.1.0\n"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("interrupted"), "{err}");
}

/// The temporary files of the journal, receipt, backup and `hooks.json`, left in the
/// profile by an install killed while writing each: `doctor` names them, and `doctor --fix`
/// (or the next install) removes them. They stayed for good, unreported.
#[cfg(target_os = "linux")]
#[test]
fn temporary_files_of_a_killed_install_are_reported_and_removed() {
    let temporaries = |sb: &Sandbox| -> Vec<String> {
        walkdir::WalkDir::new(sb.join("prof"))
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.path().display().to_string())
            .filter(|p| p.contains(".hookpack-tmp-"))
            .collect()
    };
    let mut left = 0;
    for (n, next) in (1..=4).flat_map(|n| [(n, "doctor"), (n, "install")]) {
        let sb = Sandbox::new();
        catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
        sb.write("prof/hooks.json", USER_DOC);
        // The n-th rename through a temporary file (tempfile's persist), killed as it starts.
        let kill = format!("inject=?renameat,?renameat2:signal=KILL:when={n}");
        let o = under_strace(&sb, &["-e", "trace=?renameat,?renameat2", "-e", &kill])
            .args(["install", "demo", "--index", "cat", "--profile", "prof"])
            .env("FINCLAW_HOME", sb.join("finclaw-home"))
            .output()
            .unwrap();
        assert!(!o.status.success(), "{n}: not killed");
        let found = temporaries(&sb);
        if found.is_empty() {
            continue;
        }
        left += 1;
        if next == "doctor" {
            let o = in_prof(&sb, &["doctor"]);
            let out = String::from_utf8_lossy(&o.stdout);
            for t in &found {
                assert!(out.contains(t.as_str()), "{n}: {t} not named: {out}");
            }
            // (USER_DOC's own problems keep its exit code 1.)
            let o = in_prof(&sb, &["doctor", "--fix"]);
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.contains("removed the temporary file"), "{n}: {out}");
        } else {
            ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
        }
        assert_eq!(temporaries(&sb), Vec::<String>::new(), "{n} then {next}");
    }
    assert!(left >= 4, "only {left} kills left a temporary file");
}

/// A first `trust` (no trust file yet) that read `hooks.json` before a `remove` committed
/// and writes after it: the remove drops what that trust recorded, so a reinstall starts
/// untrusted. The remove found no trust file and dropped nothing, and the trust then wrote
/// the removed handlers' entries. strace holds the trust file's rename for 1.5 s.
#[cfg(target_os = "linux")]
#[test]
fn a_remove_racing_the_first_trust_still_drops_the_trust() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    let delay = "inject=?renameat,?renameat2:delay_enter=1500000";
    let trust = under_strace(&sb, &["-e", "trace=?renameat,?renameat2", "-e", delay])
        .args(["trust", "--all", "--profile", "prof"])
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Past its read of hooks.json once its temporary trust file is there, waiting at the
    // rename (the lock file alone comes before the read).
    let writing = || {
        std::fs::read_dir(sb.join("finclaw-home")).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".hookpack-tmp-")
            })
        })
    };
    let start = std::time::Instant::now();
    while !writing() {
        assert!(start.elapsed().as_secs() < 30, "trust never wrote its file");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!sb.join("finclaw-home/hooks-trust.json").exists());
    ok(&in_prof(&sb, &["remove", "demo"]));
    assert!(trust.wait_with_output().unwrap().status.success());
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
    let listed = list_json(&sb);
    for h in listed["handlers"].as_array().unwrap() {
        assert_eq!(h["status"], "untrusted", "{listed:#}");
    }
}

/// `trust`, `revoke` and `doctor --fix` read the profile's handlers and write the trust
/// file: they take the profile's lock (shared), so they wait out an install's swap of a
/// recipe's files. They took only the trust file's, and a `trust --all` in the middle of an
/// upgrade hashed the new script beside the old entry. Here the test holds the profile's
/// lock itself: each gives up after HOOKPACK_LOCK_TIMEOUT (exit 3), writing nothing.
#[test]
fn trust_and_doctor_fix_wait_for_the_profile_lock() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    ok(&in_prof(&sb, &["trust", "--all"]));
    let trust_file = sb.join("finclaw-home/hooks-trust.json");
    let before = std::fs::read(&trust_file).unwrap();
    let held = std::fs::File::open(sb.join("prof/.hookpack.lock")).unwrap();
    held.lock().unwrap();
    for args in [
        &["trust", "--all"][..],
        &["revoke", "--all"],
        &["doctor", "--fix"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "prof"])
            .env("HOOKPACK_LOCK_TIMEOUT", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("another hookpack process holds"), "{err}");
        assert!(err.contains("prof/.hookpack.lock"), "{err}");
        assert_eq!(std::fs::read(&trust_file).unwrap(), before, "{args:?}");
    }
    drop(held);
    ok(&in_prof(&sb, &["revoke", "--all"]));
    assert_ne!(std::fs::read(&trust_file).unwrap(), before);
    // A folder there stops every change, so none can be under way: not waited for (it
    // was called a fifo, and stopped doctor --fix before its report).
    std::fs::remove_file(sb.join("prof/.hookpack.lock")).unwrap();
    std::fs::create_dir(sb.join("prof/.hookpack.lock")).unwrap();
    ok(&in_prof(&sb, &["trust", "--all"]));
    for h in list_json(&sb)["handlers"].as_array().unwrap() {
        assert_eq!(h["status"], "trusted", "{h:#}");
    }
    let o = in_prof(&sb, &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("lock-unusable"), "{out}");
}

/// Another command removes the profile's empty staging folder (its recovery, or its own
/// staging's cleanup) between an install's making it and making its own folder in it: the
/// install makes it again. It failed, exit 1, "cannot create a staging folder in …: No such
/// file or directory" (50 rounds of three commands at once). strace holds the install's
/// second mkdir (its own folder) for 1.5 s while `doctor --fix` runs.
#[cfg(target_os = "linux")]
#[test]
fn an_install_whose_staging_root_another_command_removes_makes_it_again() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("prof/hooks.json", "{}");
    let delay = "inject=?mkdir,?mkdirat:delay_enter=1500000:when=2";
    let install = under_strace(&sb, &["-e", "trace=?mkdir,?mkdirat", "-e", delay])
        .args(["install", "demo", "--index", "cat", "--profile", "prof"])
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let root = sb.join("prof/.hookpack-staging");
    let start = std::time::Instant::now();
    while !root.exists() && start.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    ok(&in_prof(&sb, &["doctor", "--fix"]));
    ok(&install.wait_with_output().unwrap());
    assert!(sb.join("prof/hooks/demo/recipe.json").is_file());
}

/// A recovery that dies after putting the old folder back (an upgrade stopped at step 3,
/// then its undo stopped before its journal went: here made by hand, as the undo does it),
/// or after removing its staging folder too, is finished by the next command, which keeps
/// the old folder. It took that folder for the new one and moved it to the trash the first
/// undo had made (or into the staging folder that was gone), failing with "Directory not
/// empty" or "No such file or directory", so every command stopped on it.
#[test]
fn a_recovery_that_died_after_putting_the_old_folder_back_is_finished() {
    for staging_gone in [false, true] {
        let sb = Sandbox::new();
        old_and_new_catalogs(&sb);
        ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
        let receipt = std::fs::read(sb.join("prof/hooks/.receipts/demo.json")).unwrap();
        crashed_at(&sb, "3", &["install", "demo", "--index", "cat"]);
        let staging = std::fs::read_dir(sb.join("prof/.hookpack-staging"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        // The undo's moves: the new folder to the trash, the old one back; then its receipt,
        // and the staging folder removed.
        std::fs::rename(sb.join("prof/hooks/demo"), staging.join("trash")).unwrap();
        std::fs::rename(staging.join("old"), sb.join("prof/hooks/demo")).unwrap();
        if staging_gone {
            sb.write("prof/hooks/.receipts/demo.json", &receipt);
            std::fs::remove_dir_all(&staging).unwrap();
        }
        ok(&in_prof(&sb, &["doctor", "--fix"]));
        ok(&in_prof(&sb, &["doctor"]));
        let tree = read_json(&sb.join("prof/hooks/demo/recipe.json"));
        assert_eq!(tree["version"], "0.1.0", "{staging_gone}");
        let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
        assert_eq!(receipt["version"], "0.1.0", "{staging_gone}");
        assert!(!sb.join("prof/.hookpack-journal.json").exists());
    }
}

/// An install whose read of `hooks.json` for the backup fails (EIO on each open of the file
/// in turn) fails, or succeeds with the backup written: it succeeded with no
/// `hooks.json.bak` at all, in silence.
#[cfg(target_os = "linux")]
#[test]
fn an_install_that_cannot_read_hooks_json_for_the_backup_does_not_skip_it() {
    for n in 1..=8 {
        let sb = Sandbox::new();
        catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
        sb.write("prof/hooks.json", USER_DOC);
        let before = sandbox_state(&sb.join("prof"));
        let hooks = sb.join("prof/hooks.json").display().to_string();
        let fail = format!("inject=?open,?openat:error=EIO:when={n}");
        let o = under_strace(
            &sb,
            &["-P", &hooks, "-e", "trace=?open,?openat", "-e", &fail],
        )
        .args(["install", "demo", "--index", "cat", "--profile", "prof"])
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .output()
        .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.success() {
            let bak = std::fs::read_to_string(sb.join("prof/hooks.json.bak"));
            assert_eq!(bak.ok().as_deref(), Some(USER_DOC), "{n}: {err}");
        } else {
            assert_eq!(o.status.code(), Some(3), "{n}: {err}");
            assert_eq!(sandbox_state(&sb.join("prof")), before, "{n}: {err}");
        }
    }
}

/// A commit whose journal cannot be removed once `hooks.json` is written (EIO on its first
/// unlink) is finished by the recovery it runs: install and remove succeed, with a warning,
/// and leave nothing behind. They said "error: cannot remove …/.hookpack-journal.json" and
/// exited 3 though the recipe was installed or removed.
#[cfg(target_os = "linux")]
#[test]
fn a_commit_whose_cleanup_fails_after_the_commit_point_succeeds() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("prof/hooks.json", USER_DOC);
    for verb in ["install", "remove"] {
        let journal = sb.join("prof/.hookpack-journal.json").display().to_string();
        let o = under_strace(&sb, &["-P", &journal, "-e", UNLINK, "-e", UNLINK_FAILS])
            .args([verb, "demo", "--profile", "prof"])
            .args(if verb == "install" {
                &["--index", "cat"][..]
            } else {
                &[][..]
            })
            .env("FINCLAW_HOME", sb.join("finclaw-home"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{verb}: {err}");
        assert!(err.contains("warning:"), "{verb}: {err}");
        assert!(err.contains(".hookpack-journal.json"), "{verb}: {err}");
        assert_eq!(
            sb.join("prof/hooks/demo").exists(),
            verb == "install",
            "{verb}: {err}"
        );
        assert!(!sb.join("prof/.hookpack-journal.json").exists(), "{verb}");
        assert!(!sb.join("prof/.hookpack-staging").exists(), "{verb}");
    }
}

/// A remove from a profile without `hooks.json` whose receipt cannot be deleted (EIO) puts
/// the recipe's folder back: the profile is as it was. The folder was deleted with the
/// staging folder while the receipt stayed.
#[cfg(target_os = "linux")]
#[test]
fn a_remove_without_hooks_json_whose_receipt_stays_keeps_the_folder() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    std::fs::remove_file(sb.join("prof/hooks.json")).unwrap();
    let before = sandbox_state(&sb.join("prof"));
    let receipt = sb
        .join("prof/hooks/.receipts/demo.json")
        .display()
        .to_string();
    let o = under_strace(&sb, &["-P", &receipt, "-e", UNLINK, "-e", UNLINK_FAILS])
        .args(["remove", "demo", "--profile", "prof"])
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(sandbox_state(&sb.join("prof")), before, "{err}");
}

/// An empty staging folder found in the profile (left by a command that ran at the same
/// time, whose own cleanup found this one's folder in it) is gone once an install or remove
/// is done, one that changes nothing too. It stayed (in 30 of 80 rounds of three commands
/// at once; then in 4 of 60, after installs that changed nothing).
#[test]
fn an_empty_staging_folder_goes_with_the_next_commit() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let install = &["install", "demo", "--index", "cat"][..];
    for args in [install, install, &["remove", "demo"]] {
        std::fs::create_dir_all(sb.join("prof/.hookpack-staging")).unwrap();
        ok(&in_prof(&sb, args));
        assert!(!sb.join("prof/.hookpack-staging").exists(), "{args:?}");
    }
}

/// The temporary file of a trust file write killed before its rename (beside the trust
/// file, in `FINCLAW_HOME`) is named by `doctor` and removed by `doctor --fix`.
#[cfg(target_os = "linux")]
#[test]
fn the_temporary_file_of_a_killed_trust_is_reported_and_removed() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    let kill = "inject=?renameat,?renameat2:signal=KILL:when=1";
    let o = under_strace(&sb, &["-e", "trace=?renameat,?renameat2", "-e", kill])
        .args(["trust", "--all", "--profile", "prof"])
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .output()
        .unwrap();
    assert!(!o.status.success(), "not killed");
    let left = || -> Vec<String> {
        (std::fs::read_dir(sb.join("finclaw-home")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".hookpack-tmp-"))
            .collect()
    };
    let found = left();
    assert_eq!(found.len(), 1, "{found:?}");
    let o = in_prof(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&found[0]), "{out}");
    ok(&in_prof(&sb, &["doctor", "--fix"]));
    assert_eq!(left(), Vec::<String>::new());
}

#[test]
fn a_reference_packer_catalog_installs() {
    // What hooks_pack.py does: tarfile (PAX) of the folder, then zstd, index with the digest.
    let sb = Sandbox::new();
    write_recipe(&sb, "ref/demo-0.1.0", &manifest("demo"));
    std::fs::rename(sb.join("ref/demo-0.1.0"), sb.join("ref/tmp")).unwrap();
    std::fs::create_dir_all(sb.join("ref/demo-0.1.0")).unwrap();
    std::fs::rename(sb.join("ref/tmp"), sb.join("ref/demo-0.1.0")).ok();
    let script = r#"
import hashlib, json, subprocess, tarfile, os
os.chdir("ref")
with tarfile.open("hooks-demo-0.1.0.tar", "w") as t:
    t.add("demo-0.1.0")
subprocess.run(["zstd", "-q", "-19", "--rm", "hooks-demo-0.1.0.tar", "-o", "hooks-demo-0.1.0.tar.zst"], check=True)
data = open("hooks-demo-0.1.0.tar.zst", "rb").read()
index = {"schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z", "recipes": [
  {"id": "demo", "name": "Demo", "summary": "s", "latest": "0.1.0", "min_cli": "0.13.0",
   "versions": [{"version": "0.1.0", "url": "hooks-demo-0.1.0.tar.zst", "sha256": hashlib.sha256(data).hexdigest(), "min_cli": "0.13.0"}]}]}
json.dump(index, open("hooks-index.json", "w"))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .current_dir(sb.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ok(&sb
        .cmd()
        .args([
            "install",
            "demo",
            "--profile",
            "p",
            "--index",
            "ref/hooks-index.json",
        ])
        .output()
        .unwrap());
    assert!(sb.join("p/hooks/demo/scripts/main.js").is_file());
    // And with no index at all.
    let sha = hookpack::sha256::Sha256::of(
        &std::fs::read(sb.join("ref/hooks-demo-0.1.0.tar.zst")).unwrap(),
    )
    .to_string();
    ok(&sb
        .cmd()
        .args([
            "install",
            "--archive",
            "ref/hooks-demo-0.1.0.tar.zst",
            "--sha256",
            &sha,
            "--profile",
            "q",
        ])
        .output()
        .unwrap());
    assert!(sb.join("q/hooks/demo/recipe.json").is_file());
    // The receipt names the archive it came from by absolute path, whatever folder the
    // command ran in.
    assert_eq!(
        read_json(&sb.join("q/hooks/.receipts/demo.json"))["archive_url"],
        sb.path()
            .join("ref/hooks-demo-0.1.0.tar.zst")
            .display()
            .to_string()
    );
    let wrong = "0".repeat(64);
    let o = sb
        .cmd()
        .args([
            "install",
            "--archive",
            "ref/hooks-demo-0.1.0.tar.zst",
            "--sha256",
            &wrong,
            "--profile",
            "r",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("checksum mismatch"));
    assert!(!sb.join("r/hooks.json").exists());
    // --sha256 takes capitals, so a digest in capitals cut short is told to be 64 hex
    // characters as given, not "lowercase" with its text lowered (found by review).
    let short = sha[1..].to_ascii_uppercase();
    let o = sb
        .cmd()
        .args(["install", "--archive", "ref/hooks-demo-0.1.0.tar.zst"])
        .args(["--sha256", &short, "--profile", "r"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "error: --sha256 `{short}` is invalid: it is not a sha256: write its 64 hex characters (either case), as the archive's publisher gives them"
        )),
        "{err}"
    );
    assert!(!sb.join("r").exists());
}

/// Two recipes share an event (and the `hooks` key) the user's document lacked. Whichever
/// is removed first, removing both gives back the user's document: the one that created the
/// structure hands its record to the one still using it.
#[test]
fn shared_structure_goes_with_the_last_recipe_using_it() {
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    pack_src_into_cat(&sb);
    let original = json!({"description": "mine", "x-editor": {"tab": 2}});
    for (first, second) in [("alpha", "beta"), ("beta", "alpha")] {
        let prof = format!("prof-{first}");
        sb.write(
            &format!("{prof}/hooks.json"),
            serde_json::to_vec_pretty(&original).unwrap(),
        );
        let run = |args: &[&str]| {
            ok(&sb
                .cmd()
                .args(args)
                .args(["--profile", &prof])
                .output()
                .unwrap());
        };
        // alpha creates the structure, beta joins it; remove in both orders.
        run(&["install", "alpha", "--index", "cat"]);
        run(&["install", "beta", "--index", "cat"]);
        run(&["remove", first]);
        let doc = read_json(&sb.join(&format!("{prof}/hooks.json")));
        assert!(
            doc["hooks"].as_object().is_some_and(|m| !m.is_empty()),
            "{first} removed: {second}'s handlers must remain: {doc}"
        );
        run(&["remove", second]);
        assert_eq!(
            read_json(&sb.join(&format!("{prof}/hooks.json"))),
            original,
            "removing {first} then {second} must give back the user's document"
        );
    }
}

/// `update` compares each recipe with the index it came from; an index that is gone stops
/// only its own recipes (exit 1, with a note), the others are still updated.
#[test]
fn update_goes_on_past_an_index_that_is_gone() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "alpha", &[("0.1.0", "0.13.0")]);
    catalog_with_versions(&sb, "beta", &[("0.1.0", "0.13.0")]);
    std::fs::rename(sb.join("cat"), sb.join("cat-a")).unwrap();
    std::fs::create_dir_all(sb.join("cat-b")).unwrap();
    let copy = |name: &str| {
        std::fs::copy(sb.join("cat-a").join(name), sb.join("cat-b").join(name)).unwrap();
    };
    copy("hooks-index.json");
    copy("hooks-beta-0.1.0.tar.gz");
    let install = |id: &str, index: &str| {
        ok(&sb
            .cmd()
            .args(["install", id, "--index", index, "--profile", "prof"])
            .output()
            .unwrap());
    };
    install("alpha", "cat-a");
    install("beta", "cat-b");
    std::fs::rename(sb.join("cat-a"), sb.join("cat")).unwrap();
    catalog_with_versions(&sb, "alpha", &[("0.2.0", "0.13.0")]);
    std::fs::rename(sb.join("cat"), sb.join("cat-a")).unwrap();
    std::fs::remove_dir_all(sb.join("cat-b")).unwrap();
    let o = in_prof(&sb, &["update"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("beta came from the index"), "{err}");
    assert_eq!(
        read_json(&sb.join("prof/hooks/.receipts/alpha.json"))["version"],
        "0.2.0",
        "{err}"
    );
}

/// Install rewrites the script word, not the value of a flag before it: `node --title gate
/// scripts/main.js` keeps `gate` and points `scripts/main.js` at the installed tree.
#[test]
fn install_rewrites_the_script_not_a_flag_value() {
    let sb = Sandbox::new();
    let mut m = manifest("alpha");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
        json!("node --title scripts/main.js scripts/main.js --fast");
    write_recipe(&sb, "src/alpha", &m);
    pack_src_into_cat(&sb);
    ok(&in_prof(&sb, &["install", "alpha", "--index", "cat"]));
    let doc = read_json(&sb.join("prof/hooks.json"));
    assert_eq!(
        doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "node --title scripts/main.js \"${FINCLAW_PROFILE_ROOT}/hooks/alpha/scripts/main.js\" --fast"
    );
}

/// A number with more digits than a 64-bit value holds would be written back rounded
/// (`12345678901234567890123` as `1.2345678901234568e22`): a user's value changed in
/// silence. Install and remove refuse such a file, naming the number and its place; numbers
/// that come back with the same value (`1E2` as `100.0`) are fine.
#[test]
fn numbers_that_would_lose_digits_are_not_rewritten() {
    let sb = Sandbox::new();
    let exact = "{\"n\": [1E2, 0.1, -0, 1.5e-7, 18446744073709551615, -9223372036854775808, 0e999999999999999999999], \"hooks\": {}}\n";
    sb.write("ok/hooks.json", exact);
    ok(&in_profile(&sb, "ok", &["install", "tool-gate"]));
    let text = std::fs::read_to_string(sb.join("ok/hooks.json")).unwrap();
    for kept in [
        "100.0",
        "0.1",
        "-0.0",
        "1.5e-7",
        "18446744073709551615",
        "-9223372036854775808",
    ] {
        assert!(text.contains(kept), "{kept} is gone from {text}");
    }

    for (body, number, place) in [
        ("{\"x_big\": 12345678901234567890123, \"hooks\": {}}", "12345678901234567890123", "1:11 (/x_big)"),
        ("{\"hooks\": {}, \"x\": [0.1000000000000000000001]}", "0.1000000000000000000001", "1:21 (/x/0)"),
        ("{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\", \"n\": 18446744073709551616}]}]}}", "18446744073709551616", "(/hooks/Stop/0/hooks/0/n)"),
    ] {
        sb.write("p/hooks.json", body);
        for args in [["install", "tool-gate"], ["remove", "tool-gate"]] {
            let mut before = snapshot(&sb.join("p"));
            before.remove(".hookpack.lock");
            let o = sb.cmd().args(args).args(["--profile", "p"]).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?} {body}: {err}");
            assert!(
                err.contains(&format!("the number `{number}` at")) && err.contains(place),
                "{args:?} {body}: {err}"
            );
            let mut after = snapshot(&sb.join("p"));
            after.remove(".hookpack.lock");
            assert_eq!(after, before, "{args:?} {body}");
        }
        // Reading is fine: hosts read the file the same way.
        ok(&in_profile(&sb, "p", &["list"]));
    }
    // Found by review: the advice ("at most 17 significant digits") did not help a number
    // that has 17 already; it now names the value that would be written.
    sb.write(
        "p/hooks.json",
        "{\"t\": 0.30000000000000001, \"hooks\": {}}",
    );
    let o = in_profile(&sb, "p", &["install", "tool-gate"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("or as 0.3 if that is the value you mean"),
        "{err}"
    );
}

/// `--archive` without `--sha256` warns that nothing vouches for the bytes, but only for an
/// archive it can read: a folder is refused without the warning before it (found by a
/// new-user walk-through).
#[test]
fn the_unverified_archive_warning_comes_only_for_an_archive() {
    let sb = Sandbox::new();
    let archive = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("catalog/hooks-tool-gate-0.2.0.tar.gz");
    let o = sb
        .cmd()
        .args([
            "install",
            "--archive",
            archive.to_str().unwrap(),
            "--profile",
            "p",
        ])
        .output()
        .unwrap();
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("without --sha256"));
    let o = in_profile(&sb, "q", &["install", "--archive", "."]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("it is a folder") && !err.contains("without --sha256"),
        "{err}"
    );
    // Nor of a file that is not there (a later sweep).
    let o = in_profile(&sb, "q", &["install", "--archive", "missing.tar.gz"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("missing.tar.gz") && !err.contains("without --sha256"),
        "{err}"
    );
}

/// Found by the user-flow sweep: into a profile whose path holds a backslash, install
/// succeeded and every handler then failed in node (ERR_INVALID_MODULE_SPECIFIER), so
/// tool-gate, under `failurePolicy: deny`, denied every call. It is refused, writing nothing.
#[test]
fn a_profile_path_node_cannot_load_from_is_refused() {
    let sb = Sandbox::new();
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "a\\b/prof"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the path holds a backslash") && err.contains("ERR_INVALID_MODULE_SPECIFIER"),
        "{err}"
    );
    assert!(!sb.join("a\\b").exists(), "{err}");

    // Node reads a path that is not UTF-8 as text, U+FFFD for the bad byte, and looks for
    // another file: the same (found by the fifteenth session's weak list; it installed).
    use std::os::unix::ffi::OsStrExt as _;
    let profile = std::ffi::OsStr::from_bytes(b"prof\xff");
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--profile"])
        .arg(profile)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the path is not UTF-8, and node cannot load a script from such a path"),
        "{err}"
    );
    assert!(!sb.path().join(profile).exists(), "{err}");
    // A recipe whose handlers run no node installs there.
    let index = sh_recipe_catalog(&sb);
    ok(&sb
        .cmd()
        .args(["install", "shrec", "--index"])
        .arg(&index)
        .arg("--profile")
        .arg(profile)
        .output()
        .unwrap());
    assert!(sb
        .path()
        .join(profile)
        .join("hooks/shrec/scripts/main.sh")
        .is_file());
}

/// A `--dry-run` of several recipes showed each one's `hooks.json` diff against the file as
/// it is, so the second of two installs into a new profile "created" the file again, and
/// the last of two removes kept the first one's entries: no diff showed what the command
/// would write (found by a README walk-through). Each diff is now against the file as the
/// recipes before it leave it, as the real run writes them in turn.
#[test]
fn a_dry_run_of_several_recipes_diffs_each_against_the_ones_before() {
    let sb = Sandbox::new();
    let diffs = |args: &[&str]| -> Vec<Vec<String>> {
        let o = in_profile(
            &sb,
            "p",
            &[args, &["--dry-run", "--format", "json"]].concat(),
        );
        ok(&o);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        (doc.as_array().unwrap().iter())
            .map(|o| serde_json::from_value(o["hooks_json_diff"].clone()).unwrap())
            .collect()
    };
    let installs = diffs(&["install", "tool-gate", "audit-log"]);
    assert_eq!(installs[0][0], "+{", "{installs:?}");
    assert!(!installs[1].contains(&"+{".to_string()), "{installs:?}");
    assert!(
        (installs[1].iter()).any(|l| l.starts_with('+') && l.contains("audit-log")),
        "{installs:?}"
    );
    assert!(
        !(installs[1].iter()).any(|l| l.starts_with('+') && l.contains("tool-gate")),
        "{installs:?}"
    );
    assert!(!sb.join("p").exists());
    // A recipe refused in the dry run leaves nothing for the next to start from (found by
    // review): here a folder of audit-log's files without its receipt.
    sb.write("q/hooks/audit-log/scripts/main.js", "// mine\n");
    let o = in_profile(
        &sb,
        "q",
        &[
            "install",
            "audit-log",
            "secret-guard",
            "--dry-run",
            "--format",
            "json",
        ],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let planned: Vec<&Value> = (doc.as_array().unwrap().iter())
        .filter(|o| o["id"] == "secret-guard")
        .collect();
    assert_eq!(planned.len(), 1, "{doc:#}");
    assert_eq!(planned[0]["hooks_json_diff"][0], "+{", "{doc:#}");

    // Installed for real, then removed: the dry run's last diff ends in `{"hooks": {}}`,
    // which the real run writes.
    let removed_both = |ids: [&str; 2]| -> Vec<String> {
        ok(&in_profile(&sb, "p", &[&["install"][..], &ids].concat()));
        let removes = diffs(&[&["remove"][..], &ids].concat());
        assert!(
            removes[1].contains(&"+  \"hooks\": {}".to_string()),
            "{ids:?}: {removes:?}"
        );
        ok(&in_profile(&sb, "p", &[&["remove"][..], &ids].concat()));
        let written: Value =
            serde_json::from_slice(&std::fs::read(sb.join("p/hooks.json")).unwrap()).unwrap();
        assert_eq!(written, json!({"hooks": {}}), "{ids:?}");
        removes[1].clone()
    };
    removed_both(["tool-gate", "audit-log"]);
    // An event the first recipe created, which the second also uses, is handed over to the
    // second's receipt by the real run, so its removal removes the event; the dry run plans
    // the second from its receipt as the first leaves it (found by review: it kept
    // `"PreToolUse": []`).
    let last = removed_both(["secret-guard", "tool-gate"]);
    assert!(!last.iter().any(|l| l.contains("[]")), "{last:?}");
}

/// `install x x --dry-run` planned `x` twice, the second time as a new install warning of
/// handlers stamped `x` that no receipt records (the first's own), where the real run
/// installed it once and said "already installed"; `remove x x` removed it, then failed on
/// the second, which its dry run planned as a second removal; `install x@0.1.0 x` installed
/// one version, then updated it to the other. A recipe named twice the same way is now done
/// once, in real runs and dry runs alike; named two ways, it is refused before anything is
/// fetched or written.
#[test]
fn a_recipe_named_twice_is_done_once_or_refused() {
    let sb = Sandbox::new();
    let outcomes = |args: &[&str]| -> Vec<(String, usize)> {
        let o = in_profile(&sb, "p", &[args, &["--format", "json"]].concat());
        ok(&o);
        (one_json_document(&o).as_array().unwrap().iter())
            .map(|o| {
                let warnings = o["warnings"].as_array().map_or(0, Vec::len);
                (format!("{} {}", o["action"], o["id"]), warnings)
            })
            .collect()
    };
    let once = |action: &str| vec![(format!("\"{action}\" \"tool-gate\""), 0)];
    for flags in [&["--dry-run"][..], &[]] {
        let installs = outcomes(&[&["install", "tool-gate", "tool-gate"][..], flags].concat());
        assert_eq!(installs, once("install"), "{flags:?}");
    }
    ok(&in_profile(&sb, "p", &["install", "audit-log"]));
    let updates = outcomes(&["update", "tool-gate", "tool-gate", "audit-log"]);
    assert!(updates.is_empty(), "{updates:?}");
    for flags in [&["--dry-run"][..], &[]] {
        let removes = outcomes(&[&["remove", "tool-gate", "tool-gate"][..], flags].concat());
        assert_eq!(removes, once("remove"), "{flags:?}");
    }
    let before = snapshot(&sb.join("p"));
    let o = in_profile(
        &sb,
        "p",
        &["install", "tool-gate@0.1.0", "tool-gate", "--dry-run"],
    );
    fails_saying(
        &o,
        2,
        "`tool-gate` is named twice, as `tool-gate@0.1.0` and as `tool-gate`",
    );
    let o = in_profile(&sb, "p", &["install", "tool-gate@0.1.0", "tool-gate"]);
    fails_saying(&o, 2, "name it once, as the version you want");
    assert_eq!(snapshot(&sb.join("p")), before);
}

/// A receipt that does not parse (cut short, or garbage) stopped install, remove, list and
/// doctor alike with "not a readable receipt" and no way out; doctor could not report it.
/// The error now says what to do, doctor reports it and checks the rest, and the advice
/// works.
#[test]
fn an_unreadable_receipt_is_reported_with_a_way_out() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "p");
    sb.write("p/hooks.json", USER_DOC);
    ok(&in_profile(
        &sb,
        "p",
        &["install", "tool-gate", "audit-log"],
    ));
    let receipt = sb.write(
        "p/hooks/.receipts/audit-log.json",
        "{\"schema\": \"hookpack.receipt.v1\", \"id\": \"audit-log\"",
    );
    let before = snapshot(&sb.join("p"));
    let o = in_profile(&sb, "p", &["install", "audit-log"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("audit-log.json: not a readable receipt")
            && err.contains(&format!("delete it, then `hookpack install audit-log{p}`")),
        "{err}"
    );
    assert_eq!(snapshot(&sb.join("p")), before);

    let o = in_profile(&sb, "p", &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("audit-log.json: error[receipt-unreadable]: not a readable receipt"),
        "{out}"
    );
    assert!(
        !out.contains("recipe `audit-log`, which has no install receipt"),
        "{out}"
    );
    // The rest is still checked: a drifted file of the other recipe is reported.
    std::fs::write(sb.join("p/hooks/tool-gate/README.md"), "changed\n").unwrap();
    let o = in_profile(&sb, "p", &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("error[tree-modified]"), "{out}");

    // One that names another recipe, or a file outside the recipe's folder, is no better:
    // doctor read files outside the profile through it.
    let good = std::fs::read(sb.join("p/hooks/.receipts/tool-gate.json")).unwrap();
    let mut other: Value = serde_json::from_slice(&good).unwrap();
    other["id"] = json!("../../victim");
    let mut outside: Value = serde_json::from_slice(&good).unwrap();
    outside["id"] = json!("audit-log");
    outside["files"][0]["path"] = json!("../../../etc/hostname");
    // A version that is none: list showed it and update took it as the one installed.
    let mut banana: Value = serde_json::from_slice(&good).unwrap();
    banana["id"] = json!("audit-log");
    banana["version"] = json!("banana");
    // Found by a hostile sweep: another schema was read as ours, without a word.
    let mut v9: Value = serde_json::from_slice(&good).unwrap();
    v9["id"] = json!("audit-log");
    v9["schema"] = json!("v9");
    for (bad, needle) in [
        (other, "it names the recipe `../../victim`"),
        (outside, "it lists the file `../../../etc/hostname`"),
        (banana, "its version `banana` is not a version (X.Y.Z)"),
        (
            v9,
            "its schema is `v9`, and hookpack reads only hookpack.receipt.v1 receipts",
        ),
    ] {
        sb.write("p/hooks/.receipts/audit-log.json", bad.to_string());
        let o = in_profile(&sb, "p", &["doctor"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(&format!(
                "audit-log.json: error[receipt-unreadable]: not a readable receipt: {needle}"
            )),
            "{out}"
        );
        assert!(!out.contains("victim/"), "{out}");
        assert!(!out.contains("/etc/hostname: error"), "{out}");
    }

    std::fs::remove_file(&receipt).unwrap();
    ok(&in_profile(&sb, "p", &["install", "audit-log"]));
    let doc = std::fs::read_to_string(sb.join("p/hooks.json")).unwrap();
    assert_eq!(
        doc.matches("\"recipe\": \"audit-log\"").count(),
        read_json(&receipt)["handlers"].as_array().unwrap().len(),
        "{doc}"
    );
}

/// The journal's recipe id and staging folder were used as written: a journal naming
/// `../../victim` made the next install, remove or `doctor --fix` move a folder outside the
/// profile into staging and delete it. hookpack never writes such a journal, so one is
/// ignored; the staging folder is looked for in the profile's own staging folder.
#[test]
fn a_journal_cannot_reach_outside_the_profile() {
    let sb = Sandbox::new();
    sb.write("victim/data.txt", "precious\n");
    sb.write("elsewhere/1-x/old/keep.txt", "keep\n");
    ok(&in_profile(&sb, "p", &["install", "tool-gate"]));
    let receipt = read_json(&sb.join("p/hooks/.receipts/tool-gate.json"));
    let journal = |id: &str, staging: &std::path::Path| {
        std::fs::create_dir_all(sb.join("p/.hookpack-staging/1-x")).unwrap();
        sb.write(
            "p/.hookpack-journal.json",
            serde_json::to_vec(&json!({
                "id": id,
                "staging": staging,
                "hooks_before": null,
                "hooks_after": "0".repeat(64),
                "old_receipt": null,
                "new_receipt": receipt,
            }))
            .unwrap(),
        );
    };
    journal("../../victim", &sb.join("p/.hookpack-staging/1-x"));
    let o = in_profile(&sb, "p", &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ignored the journal"), "{out}");
    assert_eq!(
        std::fs::read_to_string(sb.join("victim/data.txt")).unwrap(),
        "precious\n"
    );
    assert!(!sb.join("p/.hookpack-journal.json").exists());

    // A staging folder outside the profile: only its name is used, inside the profile.
    journal("tool-gate", &sb.join("elsewhere/1-x"));
    let o = in_profile(&sb, "p", &["doctor", "--fix"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("rolled back the interrupted change of `tool-gate`"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.join("elsewhere/1-x/old/keep.txt")).unwrap(),
        "keep\n"
    );
}

/// Staging leftovers were found by listing `<profile>/.hookpack-staging` through a link
/// and taking every entry not named after a live process for one: with the folder a link
/// to another, the next install deleted every folder in that one, and a stray file there
/// made every install fail ("cannot remove …: Not a directory"). The link is now refused
/// before anything is written, and only `<pid>-…` folders are taken for leftovers.
#[cfg(unix)]
#[test]
fn the_staging_folder_is_not_followed_and_strangers_in_it_are_kept() {
    let sb = Sandbox::new();
    sb.write("important/docs/a.txt", "keep\n");
    sb.write("p/hooks.json", USER_DOC);
    std::os::unix::fs::symlink("../important", sb.join("p/.hookpack-staging")).unwrap();
    let before = snapshot(&sb.join("important"));
    for args in [
        &["install", "tool-gate"][..],
        &["doctor", "--fix"],
        &["remove", "tool-gate"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "p"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{args:?} {out} {err}");
        assert!(
            format!("{out}{err}").contains(".hookpack-staging: it is a symbolic link"),
            "{args:?} {out} {err}"
        );
        assert_eq!(snapshot(&sb.join("important")), before, "{args:?}");
    }
    assert!(!sb.join("p/hooks/tool-gate").exists());

    std::fs::remove_file(sb.join("p/.hookpack-staging")).unwrap();
    sb.write("p/.hookpack-staging/notes.txt", "mine\n");
    sb.write("p/.hookpack-staging/mine/a.txt", "mine\n");
    sb.write("p/.hookpack-staging/999999999-dead/x", "leftover\n");
    ok(&in_profile(&sb, "p", &["install", "tool-gate"]));
    assert!(sb.join("p/.hookpack-staging/notes.txt").exists());
    assert!(sb.join("p/.hookpack-staging/mine/a.txt").exists());
    assert!(!sb.join("p/.hookpack-staging/999999999-dead").exists());
}

/// `--profile demo/hooks.json` (the file, not its folder): list, trust and run said there
/// were no handlers and exited 0, install, remove and doctor failed on paths under the file
/// ("…/hooks.json/.hookpack-staging: Not a directory", exit 1 or 3). Every verb now says the
/// profile is not a folder and names the one to give.
#[test]
fn a_profile_that_is_a_file_is_named_as_the_problem() {
    let sb = Sandbox::new();
    sb.write("demo/hooks.json", USER_DOC);
    sb.write("payload.json", "{}");
    for args in [
        &["install", "tool-gate"][..],
        &["remove", "tool-gate"],
        &["update"],
        &["list"],
        &["trust", "--all"],
        &["run", "Stop", "--payload", "payload.json"],
        &["doctor"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "demo/hooks.json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} {err}");
        assert!(
            err.contains("demo/hooks.json: the profile is not a folder")
                && err.contains(&format!("--profile {}", sb.join("demo").display())),
            "{args:?} {err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(sb.join("demo/hooks.json")).unwrap(),
        USER_DOC
    );
}

/// An error inside a commit (here `hooks.json.bak` cannot be replaced; a full disk while
/// writing the receipt or `hooks.json` is the same) returned at once: the staging folder,
/// holding the previous recipe folder the journal restores from, was deleted with it. The
/// profile was left with the new folder and receipt but the old `hooks.json`, and every
/// later install, remove or `doctor --fix` failed trying to roll back ("cannot rename …
/// trash: No such file or directory"). The change is now rolled back before the error is
/// reported.
#[test]
fn an_error_inside_a_commit_leaves_the_old_state() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("p/hooks.json", USER_DOC);
    let install = |spec: &str| {
        sb.cmd()
            .args(["install", spec, "--index", "cat", "--profile", "p"])
            .output()
            .unwrap()
    };
    ok(&install("demo@0.1.0"));
    catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
    std::fs::remove_file(sb.join("p/hooks.json.bak")).unwrap();
    sb.write("p/hooks.json.bak/x", "a folder where the backup goes\n");
    let before = snapshot(&sb.join("p"));
    let o = install("demo@0.2.0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("hooks.json.bak"), "{err}");
    assert_eq!(snapshot(&sb.join("p")), before, "{err}");
    assert!(!sb.join("p/.hookpack-journal.json").exists());

    std::fs::remove_dir_all(sb.join("p/hooks.json.bak")).unwrap();
    ok(&install("demo@0.2.0"));
    assert_eq!(
        read_json(&sb.join("p/hooks/.receipts/demo.json"))["version"],
        "0.2.0"
    );
}

/// A recipe handler whose id a handler of the user already has in that event is skipped by
/// hosts and refused by `trust`: installing tool-gate so was silent, and the gate stayed off.
#[test]
fn install_warns_of_a_handler_id_the_profile_already_uses() {
    let sb = Sandbox::new();
    let mine = |event: &str| {
        json!({"hooks": {event: [{"hooks": [
            {"type": "command", "command": "echo mine", "id": "gate-mutating"}
        ]}]}})
        .to_string()
    };
    let install_into = |profile: &str| {
        let o = sb
            .cmd()
            .args(["install", "tool-gate", "--profile", profile])
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    sb.write("prof/hooks.json", mine("PreToolUse"));
    let err = install_into("prof");
    assert!(
        err.contains("warning: PreToolUse handler `gate-mutating` of tool-gate will not run")
            && err.contains("already used at /hooks/PreToolUse/0/hooks/0"),
        "{err}"
    );
    // The user's own handler is kept as it was.
    let doc = read_json(&sb.join("prof/hooks.json"));
    assert_eq!(
        doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "echo mine"
    );
    // The same id in another event is no clash.
    sb.write("other/hooks.json", mine("Stop"));
    let err = install_into("other");
    assert!(!err.contains("warning"), "{err}");
}

/// turn-router's README says to edit the model ids in `routes.json`: `update` replaced the
/// edited file without a word. A version change over files the user changed is refused,
/// naming them; nothing is written. (Added files do not count: handlers write some there.)
/// Edits the model ids in prof's turn-router `routes.json`, as its README says to, and adds
/// `notes.txt` beside it; returns the file and what it now holds.
fn change_turn_router(sb: &Sandbox) -> (std::path::PathBuf, String) {
    let routes = sb.join("prof/hooks/turn-router/routes.json");
    let mine = std::fs::read_to_string(&routes)
        .unwrap()
        .replace("deepseek-v4-flash", "my-model");
    std::fs::write(&routes, &mine).unwrap();
    sb.write("prof/hooks/turn-router/notes.txt", "mine\n");
    (routes, mine)
}

#[test]
fn an_update_over_files_the_user_changed_is_refused() {
    let sb = Sandbox::new();
    let run = |args: &[&str]| in_prof(&sb, args);
    // Installed when 0.1.0 was the newest (`turn-router@0.1.0` would pin it).
    install_older_unpinned(&sb, "prof", "turn-router", "0.1.0");
    let (routes, mine) = change_turn_router(&sb);
    let before = snapshot(&sb.join("prof"));
    for args in [
        &["update"][..],
        &["install", "turn-router"],
        &["install", "turn-router", "--dry-run"],
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("has files you changed or added (notes.txt, routes.json)")
                && err.contains("move them out")
                && err.contains("`hookpack install turn-router@0.1.0 --index "),
            "{args:?}: {err}"
        );
        assert_eq!(snapshot(&sb.join("prof")), before, "{args:?} wrote");
    }
    // The plan says so too, and ends as the real run does (found by a hostile sweep: it
    // exited 0, so `update --dry-run && update` went on to fail).
    let o = run(&["update", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("outdated     turn-router installed 0.1.0 available 0.3.2 (blocked by files you changed or added: notes.txt, routes.json; move them out first)"),
        "{out}"
    );
    let o = run(&["update", "--dry-run", "--format", "json"]);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        report[0]["local_changes"],
        json!(["notes.txt", "routes.json"])
    );
    // A real run lists it as left, with why and the files (found by review: JSON said `[]`).
    let o = run(&["update", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report[0]["action"], "left", "{report:#}");
    assert_eq!(report[0]["reason"], "local-changes", "{report:#}");
    assert_eq!(report[0]["files"], json!(["notes.txt", "routes.json"]));
    assert_eq!(snapshot(&sb.join("prof")), before);
    // Moved out (a missing file loses nothing), the update goes ahead.
    std::fs::remove_file(&routes).unwrap();
    std::fs::remove_file(sb.join("prof/hooks/turn-router/notes.txt")).unwrap();
    ok(&run(&["update"]));
    assert_eq!(
        read_json(&sb.join("prof/hooks/.receipts/turn-router.json"))["version"],
        "0.3.2"
    );
    // The same version again is the repair `doctor` advises: it restores the files.
    std::fs::write(&routes, &mine).unwrap();
    ok(&run(&["install", "turn-router"]));
    assert_ne!(std::fs::read_to_string(&routes).unwrap(), mine);
}

/// The refusal's advice, `hookpack install turn-router@0.1.0`, pins the recipe to 0.1.0, so
/// "then run the command again" (`update`) left it there ("pinned to 0.1.0 …; left as it
/// is", exit 0) with no word of the pin in the advice (found by a new-user walk-through of
/// the README). The advice says what the pin does and how to lift it, as doctor's does, and
/// following it reaches the newest version.
#[test]
fn the_advice_over_changed_files_says_it_pins_and_how_to_get_on() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    install_older_unpinned(&sb, "prof", "turn-router", "0.1.0");
    change_turn_router(&sb);
    let o = in_prof(&sb, &["update"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // It came from `older-index`, not the default index: the advice names it.
    let index = sb.join("older-index/hooks-index.json");
    assert!(
        err.contains(&format!(
            "move them out of the folder to keep them, then run the command again; or drop \
             them with `hookpack install turn-router@0.1.0 --index {0}{p}`, which puts the folder \
             back as 0.1.0 installed it (that pins `turn-router` to 0.1.0, where `update` then \
             leaves it; a later `hookpack install turn-router --index {0}{p}` lifts the pin)",
            index.display()
        )),
        "{err}"
    );
    ok(&in_prof(
        &sb,
        &[
            "install",
            "turn-router@0.1.0",
            "--index",
            index.to_str().unwrap(),
        ],
    ));
    ok(&in_prof(
        &sb,
        &["install", "turn-router", "--index", index.to_str().unwrap()],
    ));
    let receipt = read_json(&sb.join("prof/hooks/.receipts/turn-router.json"));
    assert_eq!(receipt["version"], "0.3.2");
    assert_eq!(receipt.get("pin"), None);
}

/// `update` in a profile with nothing installed (a misspelt `--profile`, say) said
/// "everything is up to date", and `update --dry-run` said nothing at all.
#[test]
fn update_of_a_profile_with_nothing_installed_says_so() {
    let sb = Sandbox::new();
    for dry in [false, true] {
        let mut c = sb.cmd();
        c.args(["update", "--profile", "prof"]);
        if dry {
            c.arg("--dry-run");
        }
        let o = c.output().unwrap();
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("no recipes are installed in") && !err.contains("up to date"),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

/// A `hooks.json` (or trust file) the user keeps private (0600) came back 0644, readable by
/// every user of the machine, after each rewrite, and so did its `.bak`.
#[test]
fn rewrites_keep_the_mode_of_hooks_json_and_the_trust_file() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let mode = |rel: &str| {
        std::fs::metadata(sb.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    let private = |rel: &str| {
        std::fs::set_permissions(sb.join(rel), std::fs::Permissions::from_mode(0o600)).unwrap()
    };
    sb.write("prof/hooks.json", r#"{"hooks": {}}"#);
    private("prof/hooks.json");
    let run = |args: &[&str]| {
        ok(&sb
            .cmd()
            .args(args)
            .args(["--profile", "prof"])
            .output()
            .unwrap())
    };
    run(&["install", "audit-log"]);
    assert_eq!(mode("prof/hooks.json"), 0o600);
    assert_eq!(mode("prof/hooks.json.bak"), 0o600);
    run(&["trust", "--all"]);
    private("finclaw-home/hooks-trust.json");
    run(&["install", "tool-gate"]);
    run(&["trust", "--all"]);
    assert_eq!(mode("finclaw-home/hooks-trust.json"), 0o600);
    run(&["remove", "audit-log", "tool-gate"]);
    assert_eq!(mode("prof/hooks.json"), 0o600);
    assert_eq!(mode("finclaw-home/hooks-trust.json"), 0o600);
    // A file hookpack creates is 0644, as before.
    ok(&in_profile(&sb, "fresh", &["install", "audit-log"]));
    assert_eq!(mode("fresh/hooks.json"), 0o644);
}

/// A relative `index_url` in `<profile>/config.yaml` was taken from the folder hookpack ran
/// in, so the same profile used another index (or none) from another folder. It is taken
/// from the profile folder, beside the file that names it.
#[test]
fn a_relative_index_path_in_config_yaml_is_taken_from_the_profile() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write(
        "prof/config.yaml",
        "extra:\n  hooks:\n    index_url: ../cat\n",
    );
    std::fs::create_dir_all(sb.join("a/b")).unwrap();
    let o = sb
        .cmd()
        .current_dir(sb.join("a/b"))
        .args(["install", "demo", "--profile"])
        .arg(sb.join("prof"))
        .output()
        .unwrap();
    ok(&o);
    assert!(sb.join("prof/hooks/demo").is_dir());
}

/// `FINCLAW_PROFILE=../../evil` (or an `active-profile` file holding such a name) resolved
/// to a folder outside `$FINCLAW_HOME/profiles`, and `install` wrote there. A profile name
/// is one folder name: anything else is refused (exit 1), naming where it came from and
/// `--profile DIR`, which stays free-form.
#[test]
fn a_profile_name_that_is_not_one_folder_name_is_refused() {
    let sb = Sandbox::new();
    let bad = ["../../evil", "..", ".", "a/b", "a\\b", "/abs", "x\0y"];
    let verbs: [&[&str]; 3] = [&["install", "tool-gate"], &["list"], &["doctor"]];
    for name in bad {
        for args in verbs {
            if !name.contains('\0') {
                let o = sb
                    .cmd()
                    .args(args)
                    .env("FINCLAW_PROFILE", name)
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert_eq!(o.status.code(), Some(1), "{name:?} {args:?}: {err}");
                assert!(
                    err.contains("$FINCLAW_PROFILE")
                        && err.contains("is not a profile name")
                        && err.contains("--profile DIR"),
                    "{name:?} {args:?}: {err}"
                );
            }
            let file = sb.write("finclaw-home/active-profile", format!("{name}\n"));
            let o = sb.cmd().args(args).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name:?} {args:?}: {err}");
            assert!(
                err.contains(&file.display().to_string())
                    && err.contains("is not a profile name")
                    && err.contains("--profile DIR"),
                "{name:?} {args:?}: {err}"
            );
            std::fs::remove_file(&file).unwrap();
        }
    }
    assert!(!sb.join("evil").exists());
    assert!(!sb.join("finclaw-home/hooks").exists());
    assert!(!sb.join("finclaw-home/profiles").exists());
    // A name is still a name, and --profile still takes any folder.
    ok(&sb
        .cmd()
        .args(["install", "tool-gate"])
        .env("FINCLAW_PROFILE", "work")
        .output()
        .unwrap());
    assert!(sb.join("finclaw-home/profiles/work/hooks.json").is_file());
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "../elsewhere"])
        .current_dir(sb.join("finclaw-home"))
        .output()
        .unwrap());
    assert!(sb.join("elsewhere/hooks.json").is_file());
}

/// Asserts that `update` on `prof` is refused over `file` alone (exit 1, nothing written),
/// which `update --dry-run` lists.
fn update_is_refused_over(sb: &Sandbox, file: &str) {
    let before = snapshot(&sb.join("prof"));
    let o = in_prof(sb, &["update"]);
    fails_saying(&o, 1, &format!("has files you changed or added ({file})"));
    assert_eq!(snapshot(&sb.join("prof")), before);
    let o = in_prof(sb, &["update", "--dry-run", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report[0]["local_changes"], json!([file]));
}

/// A file of the recipe that the user replaced by a folder of their own was taken for a
/// missing file (it cannot be read as a file), so `update` deleted the folder and what it
/// held. Only a file that is really gone loses nothing.
#[test]
fn an_update_over_a_file_the_user_replaced_by_a_folder_is_refused() {
    let sb = Sandbox::new();
    // Installed when 0.1.0 was the newest (`turn-router@0.1.0` would pin it).
    install_older_unpinned(&sb, "prof", "turn-router", "0.1.0");
    let routes = sb.join("prof/hooks/turn-router/routes.json");
    std::fs::remove_file(&routes).unwrap();
    sb.write("prof/hooks/turn-router/routes.json/mine.json", "{}\n");
    update_is_refused_over(&sb, "routes.json");
}

/// With its receipt gone (deleted, or deleted as `doctor` advises for an unreadable one),
/// an install replaced `hooks/<id>/` whole, the user's edits included, without a word.
/// Files there that differ from what the install puts there are refused, naming them; a
/// folder as the archive has it is installed over as before.
#[test]
fn an_install_over_a_folder_without_a_receipt_keeps_files_the_user_changed() {
    let sb = Sandbox::new();
    let run = |args: &[&str]| in_prof(&sb, args);
    ok(&run(&["install", "turn-router@0.1.0"]));
    let receipt = sb.join("prof/hooks/.receipts/turn-router.json");
    std::fs::remove_file(&receipt).unwrap();
    let (routes, _) = change_turn_router(&sb);
    let before = snapshot(&sb.join("prof"));
    for (args, needle) in [
        (
            &["install", "turn-router@0.1.0"][..],
            "(notes.txt, routes.json)",
        ),
        (
            &["install", "turn-router@0.1.0", "--dry-run"],
            "move them out",
        ),
        // Against another version, the files it changes differ too: the folder's version
        // is named instead.
        (
            &["install", "turn-router"],
            "install `turn-router@0.1.0` first",
        ),
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("no install receipt") && err.contains(needle),
            "{args:?}: {err}"
        );
        assert_eq!(snapshot(&sb.join("prof")), before, "{args:?} wrote");
    }
    // Moved out, the install of the same version puts the receipt back.
    std::fs::remove_file(&routes).unwrap();
    std::fs::remove_file(sb.join("prof/hooks/turn-router/notes.txt")).unwrap();
    ok(&run(&["install", "turn-router@0.1.0"]));
    assert_eq!(read_json(&receipt)["version"], "0.1.0");
}

/// A file the user added to `hooks/<id>/` (their own routes, notes) was removed by `update`
/// without a word, as the folder is replaced whole. It is refused like a changed file;
/// Python's bytecode cache (`__pycache__`), which handlers write there themselves, is not.
#[test]
fn an_update_over_files_the_user_added_is_refused() {
    let sb = Sandbox::new();
    let run = |args: &[&str]| in_prof(&sb, args);
    // Installed when 0.1.0 was the newest (`turn-router@0.1.0` would pin it).
    install_older_unpinned(&sb, "prof", "turn-router", "0.1.0");
    sb.write("prof/hooks/turn-router/my-routes.json", "{}\n");
    sb.write("prof/hooks/turn-router/scripts/__pycache__/x.pyc", "cache");
    update_is_refused_over(&sb, "my-routes.json");
    std::fs::remove_file(sb.join("prof/hooks/turn-router/my-routes.json")).unwrap();
    ok(&run(&["update"]));
}

/// Found by the user-side sweep: a real `update --format json` in a profile with nothing
/// installed printed nothing at all (exit 0), where `--dry-run` printed `[]`.
#[test]
fn update_with_nothing_installed_prints_json() {
    let sb = Sandbox::new();
    for dry in [false, true] {
        let mut args = vec!["update", "--format", "json"];
        if dry {
            args.push("--dry-run");
        }
        let o = in_prof(&sb, &args);
        ok(&o);
        let out: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("dry run {dry}: not JSON ({e}): {o:?}"));
        assert_eq!(out, json!([]));
    }
}

/// Found by the user-side sweep: for a hand-written `recipe` stamp that is no recipe id
/// (`../x`, `Demo`), `doctor` advised `hookpack install ../x` and `hookpack remove ../x`,
/// which are refused as usage errors, and named a folder outside the profile. Such a
/// handler is reported once, as one hosts skip.
#[test]
fn doctor_gives_no_command_for_a_stamp_that_is_no_recipe_id() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        serde_json::to_vec_pretty(&json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "true", "id": "a", "recipe": "../x"},
            {"type": "command", "command": "true", "id": "b", "recipe": "Demo"}
        ]}]}}))
        .unwrap(),
    );
    let o = in_prof(&sb, &["doctor", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<(&str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["pointer"].as_str().unwrap(), p["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        codes,
        [
            ("/hooks/Stop/0/hooks/0", "handler-invalid"),
            ("/hooks/Stop/0/hooks/1", "handler-invalid")
        ],
        "{report:#}"
    );
    let o = in_prof(&sb, &["doctor"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("hosts skip this handler: `recipe` names no recipe")
            && !text.contains("hookpack install"),
        "{text}"
    );
}

/// Found by the user-side sweep: versions are plain X.Y.Z, so `demo@0.1.0-rc1` was read
/// as the range `^0.1.0-rc1` and installed 0.1.0, a version the user did not name.
#[test]
fn a_version_with_a_prerelease_or_build_is_a_usage_error() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    for (spec, needle) in [
        ("demo@0.1.0-rc1", "`demo@0.1.0`"),
        ("demo@0.1.0+build.5", "`demo@0.1.0`"),
        ("demo@latest", "give the id alone (`demo`)"),
    ] {
        let o = in_prof(&sb, &["install", spec, "--index", "cat"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        assert!(
            err.contains("is not ID, ID@VERSION or ID@RANGE") && err.contains(needle),
            "{spec}: {err}"
        );
        assert!(!sb.join("prof").exists(), "{spec}");
    }
    // A range may still name a prerelease bound.
    ok(&in_prof(
        &sb,
        &["install", "demo@>=0.1.0-rc1", "--index", "cat"],
    ));
}

/// Found by the user-side sweep: with an index whose `latest` is older than a listed
/// version (which `install ID` holds back), a recipe installed at the newer version was
/// called `outdated` and `update` downgraded it to `latest`. (Installed as `demo@0.2.0`
/// its pin keeps it too; here it was installed when 0.2.0 was `latest`, with no pin, and
/// the index then held 0.2.0 back.)
#[test]
fn update_never_downgrades_a_version_the_host_can_run() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
    assert_eq!(
        read_json(&sb.join("prof/hooks/.receipts/demo.json"))["version"],
        "0.2.0"
    );
    let index = sb.join("cat/hooks-index.json");
    let mut doc = read_json(&index);
    doc["recipes"][0]["latest"] = json!("0.1.0");
    doc["recipes"][0]["min_cli"] = json!("0.13.0");
    std::fs::write(&index, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report[0]["state"], "current", "{report:#}");
    let before = snapshot(&sb.join("prof"));
    let o = in_prof(&sb, &["update"]);
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("downgrade"),
        "{o:?}"
    );
    assert_eq!(snapshot(&sb.join("prof")), before);
    let o = in_prof(&sb, &["update", "--dry-run"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(
            "current      demo installed 0.2.0 available 0.1.0 (newer than the index offers; kept)"
        ),
        "{o:?}"
    );
    // An installed version the host cannot run is still replaced by one it can.
    let o = in_prof(&sb, &["update", "--cli-version", "0.12.0", "--dry-run"]);
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("cli too old"),
        "{o:?}"
    );
}

/// Found by the user-side sweep: an index reached through a redirect had its relative
/// archive URLs resolved against the URL asked for, not the one that answered, so a
/// catalog moved behind a redirect (`/old/hooks-index.json` -> `/v2/hooks-index.json`)
/// failed with HTTP 404 on every archive. A reference is relative to where the document
/// was found (RFC 3986, 5.1.3), as curl and browsers take it.
#[test]
fn relative_archive_urls_resolve_against_the_index_a_redirect_led_to() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    std::fs::create_dir(sb.join("www")).unwrap();
    std::fs::rename(sb.join("cat"), sb.join("www/v2")).unwrap();
    let server = HttpServer::serve(
        sb.join("www"),
        Box::new(|path| {
            (path == "/old/hooks-index.json").then(|| {
                b"HTTP/1.1 302 Found\r\nLocation: /v2/hooks-index.json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec()
            })
        }),
    );
    let index = server.url("old/hooks-index.json");
    let o = sb
        .cmd()
        .args(["install", "demo", "--profile", "p", "--index", &index])
        .output()
        .unwrap();
    ok(&o);
    let receipt = read_json(&sb.join("p/hooks/.receipts/demo.json"));
    assert_eq!(
        receipt["archive_url"],
        server.url("v2/hooks-demo-0.1.0.tar.gz")
    );
    // `update` asks the URL the user gave again, so it follows the redirect of the day.
    assert_eq!(receipt["index_url"], index);
    let o = sb
        .cmd()
        .args(["catalog", "verify", &index])
        .output()
        .unwrap();
    ok(&o);
}

/// Found by the user-side sweep: a `config.yaml` or an `active-profile` that is a fifo
/// hung every command for good (they were read with a plain read, which waits for a
/// writer); one that is a folder made `active-profile` count as unset, so the `default`
/// profile was used without a word. Each is refused, naming the file and (a later sweep
/// found the fix missing) what to do about it.
#[test]
fn a_profile_file_that_is_a_fifo_or_folder_is_refused_not_waited_for() {
    let fifo = |p: &std::path::Path| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(made.success());
    };
    let run = |sb: &Sandbox, args: &[&str]| {
        sb.cmd()
            .args(args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .expect("hookpack ends")
    };
    let sb = Sandbox::new();
    fifo(&sb.join("prof/config.yaml"));
    let o = run(
        &sb,
        &["install", "tool-gate", "--profile", "prof", "--dry-run"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("prof/config.yaml") && err.contains("fifo") && err.contains("move it aside"),
        "{err}"
    );

    for make in ["fifo", "folder"] {
        let sb = Sandbox::new();
        let file = sb.join("finclaw-home/active-profile");
        if make == "fifo" {
            fifo(&file);
        } else {
            std::fs::create_dir_all(&file).unwrap();
        }
        let o = run(&sb, &["install", "tool-gate"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{make}: {err}");
        assert!(err.contains("finclaw-home/active-profile"), "{make}: {err}");
        assert!(
            err.contains("remove it (the profile `default` is then used)")
                && err.contains("$FINCLAW_PROFILE or --profile"),
            "{make}: {err}"
        );
        assert!(!sb.join("finclaw-home/profiles").exists(), "{make}");
    }
}

/// Found by the user-side sweep: with the host's version known (`--cli-version` or
/// `$HOOKPACK_CLI_VERSION`), a range no published version matches was reported as "needs
/// CLI 0.13.0 or newer, and the host is 1.0.0; upgrade the CLI", though the host was new
/// enough; and a range whose versions all need a newer CLI named the oldest `min_cli` of
/// every version instead of theirs.
#[test]
fn a_range_nothing_matches_is_not_called_a_cli_too_old() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("2.0.0", "0.20.0")]);
    let o = in_prof(
        &sb,
        &[
            "install",
            "demo@^5",
            "--index",
            "cat",
            "--cli-version",
            "1.0.0",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no version of `demo` matches ^5; available: 2.0.0, 0.1.0")
            && !err.contains("upgrade the CLI"),
        "{err}"
    );
    let o = in_prof(
        &sb,
        &[
            "install",
            "demo@^2",
            "--index",
            "cat",
            "--cli-version",
            "0.15.0",
        ],
    );
    fails_saying(
        &o,
        1,
        "`demo` ^2 needs CLI 0.20.0 or newer, and the host is 0.15.0",
    );
    assert!(!sb.join("prof").exists());
}

/// Found by the user-side sweep: `list`, `trust` and `doctor` took a `--workspace` that is
/// not a folder (misspelt, or a file) without a word, so `trust --all --workspace wrk`
/// trusted only the profile's handlers and said nothing of the workspace's. They say so
/// (`run` refuses such a workspace, since every handler would fail to start in it).
#[test]
fn a_workspace_that_is_not_a_folder_is_named() {
    let sb = Sandbox::new();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    sb.write("afile", "x");
    for ws in ["missing", "afile"] {
        for verb in [&["list"][..], &["trust", "--all"], &["doctor"]] {
            let o = in_prof(&sb, &[verb, &["--workspace", ws]].concat());
            ok(&o);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&format!(
                    "warning: the workspace {} is not a folder",
                    sb.join(ws).display()
                )),
                "{verb:?} {ws}: {err}"
            );
        }
    }
    // The folder hookpack runs in, the default, is one.
    let o = in_prof(&sb, &["list"]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{o:?}"
    );
}

/// Found by the user-side sweep: `doctor` stopped on a trust file it cannot read (`error:
/// …`, no report, nothing on stdout with `--format json`) instead of reporting it as it
/// reports an unreadable `hooks.json`, so the profile's other problems went unsaid.
#[test]
fn doctor_reports_an_unreadable_trust_file_and_goes_on() {
    let sb = Sandbox::new();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    std::fs::remove_file(sb.join("prof/hooks/tool-gate/scripts/main.js")).unwrap();
    let trust = sb.write("finclaw-home/hooks-trust.json", "{not json\n");
    for fix in [false, true] {
        let mut args = vec!["doctor", "--format", "json"];
        if fix {
            args.push("--fix");
        }
        let o = in_prof(&sb, &args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let report: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("--fix {fix}: not JSON ({e}): {o:?}"));
        let codes: Vec<&str> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["code"].as_str().unwrap())
            .collect();
        assert!(
            codes.contains(&"trust-file-unreadable") && codes.contains(&"script-missing"),
            "--fix {fix}: {report:#}"
        );
        assert_eq!(std::fs::read(&trust).unwrap(), b"{not json\n");
    }
}

/// Found by the user-side sweep: a file of the user's at `hooks/<id>` (a hand-written hook
/// script named like a recipe) was deleted without a word by `install <id>`, which moved
/// it aside as the old recipe folder, and by `remove <id>`, though nothing was installed.
/// Both refuse, naming it, and leave the profile as it was.
#[test]
fn a_file_of_the_user_where_the_recipe_folder_goes_is_kept() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let mine = sb.write("prof/hooks/demo", "#!/bin/sh\necho my own hook\n");
    // The profile lock is made by the first command to take it, as always.
    let snap = || {
        let mut s = snapshot(&sb.join("prof"));
        s.remove(".hookpack.lock");
        s
    };
    let before = snap();
    for args in [
        &["install", "demo", "--index", "cat", "--dry-run"][..],
        &["install", "demo", "--index", "cat"],
        &["remove", "demo"],
        &["remove", "demo", "--dry-run"],
    ] {
        let o = in_prof(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&mine.display().to_string()), "{args:?}: {err}");
        assert_eq!(snap(), before, "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&mine).unwrap(),
        b"#!/bin/sh\necho my own hook\n"
    );
    // Moved out of the way, the recipe installs.
    std::fs::remove_file(&mine).unwrap();
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
}

/// Found by the user-side sweep: a `hooks.json` with a second name (a hard link, as some
/// dotfiles tools make) was rewritten as a new file renamed into place, so the link was
/// broken without a word and the other name kept the old contents. It is refused like a
/// symbolic link; `list` still reads it.
#[test]
fn a_hard_linked_hooks_json_is_not_rewritten() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let shared = sb.write("dotfiles/hooks.json", "{\"hooks\": {}}\n");
    std::fs::create_dir_all(sb.join("prof")).unwrap();
    std::fs::hard_link(&shared, sb.join("prof/hooks.json")).unwrap();
    let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("prof/hooks.json") && err.contains("hard link"),
        "{err}"
    );
    let meta = std::fs::metadata(sb.join("prof/hooks.json")).unwrap();
    assert_eq!(meta.nlink(), 2);
    assert_eq!(meta.ino(), std::fs::metadata(&shared).unwrap().ino());
    assert!(!sb.join("prof/hooks").exists());
    ok(&in_prof(&sb, &["list"]));
}

/// Found by the user-side sweep: an update whose new version gives a trusted handler
/// another id (`gate` → `gate-v2`) turned that gate off (the new handler is not trusted)
/// without a word, where one whose handler only changed gets a note. It gets one too,
/// naming the handler gone.
#[test]
fn an_update_that_drops_a_trusted_handler_says_so() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let mut m = manifest("demo");
    m["version"] = json!("0.2.0");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["id"] = json!("gate-v2");
    write_recipe(&sb, "src/demo", &m);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    ok(&in_prof(&sb, &["trust", "--all"]));
    ok(&sb
        .cmd()
        .args([
            "pack",
            "--recipes-dir",
            "src",
            "--out-dir",
            "cat",
            "--only",
            "demo",
        ])
        .output()
        .unwrap());
    let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "note: 1 handler(s) of demo that you trusted are gone with this version \
             (PreToolUse `gate`), and its handlers in their place will not run until trusted"
        ) && err.contains("then run `hookpack trust --recipe demo"),
        "{err}"
    );
    // Back, the other way; a handler gone that was not trusted is not named.
    ok(&in_prof(&sb, &["trust", "--all"]));
    let o = in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]);
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("(PreToolUse `gate-v2`)"),
        "{o:?}"
    );
    ok(&in_prof(&sb, &["revoke", "--all"]));
    let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("are gone"),
        "{o:?}"
    );
}

/// Found by the user-side sweep: a dry run's `hooks.json` diff showed a character kept
/// from the terminal (U+2028, a bidirectional override, DEL) as Rust writes it,
/// `"a\u{2028}b"`, which is not JSON. Such characters stand only inside JSON strings, so
/// the diff escapes them as JSON does (`\u2028`): each line reads as the file means it.
#[test]
fn a_dry_run_diff_escapes_as_json_does() {
    let sb = Sandbox::new();
    sb.write(
        "prof/hooks.json",
        "{\"hooks\": {}, \"note\": \"a\u{2028}b\u{202e}c\u{7f}\"}\n",
    );
    let o = in_prof(&sb, &["install", "tool-gate", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("       \"note\": \"a\\u2028b\\u202ec\\u007f\"\n"),
        "{out}"
    );
    assert!(!out.contains("\\u{"), "{out}");
}

/// Found by review: a `hooks.json` laid out otherwise than hookpack writes it (indented by
/// four spaces) showed in a dry run as every line removed and the whole file added again,
/// the change lost among them. The diff is against the file as hookpack would write it
/// unchanged, after a line saying the file is laid out anew; a file in that layout already
/// gets no such line.
#[test]
fn a_dry_run_diff_of_a_file_laid_out_otherwise_shows_only_the_change() {
    let sb = Sandbox::new();
    let mine = "{\n    \"hooks\": {\n        \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"echo mine\" } ] } ]\n    }\n}\n";
    sb.write("prof/hooks.json", mine);
    let o = in_prof(&sb, &["install", "tool-gate", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(the whole file is rewritten as hookpack writes JSON"),
        "{out}"
    );
    let changed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("    -") || l.starts_with("    +"))
        .collect();
    assert!(!changed.is_empty(), "{out}");
    assert!(
        changed
            .iter()
            .all(|l| !l.contains("echo mine") && !l.contains("\"Stop\"")),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.join("prof/hooks.json")).unwrap(),
        mine
    );
    // In JSON the diff is diff lines alone, the relayout a field of its own (found by the
    // publisher walk-through: the sentence was the diff's first "line").
    let o = in_prof(
        &sb,
        &["install", "tool-gate", "--dry-run", "--format", "json"],
    );
    ok(&o);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let planned = &doc[0];
    assert_eq!(planned["hooks_json_relaid"], true, "{doc:#}");
    let lines = planned["hooks_json_diff"].as_array().unwrap();
    assert!(
        !lines.is_empty()
            && lines.iter().all(|l| {
                let l = l.as_str().unwrap();
                // `…` stands for unchanged lines left out.
                l.starts_with(['+', '-', ' ']) || l == "…"
            }),
        "{doc:#}"
    );

    // Installed and then laid out otherwise again, a dry run of the same install changes
    // nothing, and shows no diff (found by review: it said the whole file is rewritten).
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.join("prof/hooks.json")).unwrap()).unwrap();
    let mut four = Vec::new();
    let indent = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    serde::Serialize::serialize(
        &doc,
        &mut serde_json::Serializer::with_formatter(&mut four, indent),
    )
    .unwrap();
    std::fs::write(sb.join("prof/hooks.json"), &four).unwrap();
    let o = in_prof(&sb, &["install", "tool-gate", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("hooks.json:"), "{out}");
    assert_eq!(std::fs::read(sb.join("prof/hooks.json")).unwrap(), four);
    ok(&in_prof(&sb, &["remove", "tool-gate"]));

    // Installed, the file is in hookpack's layout: the next dry run needs no such line.
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    let o = in_prof(&sb, &["remove", "tool-gate", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("the whole file is rewritten"), "{out}");
    assert!(out.contains("    -"), "{out}");
}

/// Found by the user-side sweep: a write-protected `hooks.json` (`chmod 444`) was rewritten
/// all the same (a new file renamed into place, given the old mode back), so nothing showed
/// it had changed. Install and remove refuse it, naming the fix; `list` still reads it, and
/// once writable the install goes through.
#[cfg(unix)]
#[test]
fn a_write_protected_hooks_json_is_not_rewritten() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let hooks = sb.write("prof/hooks.json", "{\"hooks\": {}}\n");
    // No write bit at all; and (found by review) the owner's alone taken away, which
    // `Permissions::readonly` does not see.
    for mode in [0o444, 0o464] {
        std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(mode)).unwrap();
        let before = sandbox_state(&sb.join("prof"));
        for args in [
            &["install", "tool-gate"][..],
            &["install", "tool-gate", "--dry-run"],
        ] {
            let o = in_prof(&sb, args);
            fails_saying(&o, 1, "prof/hooks.json");
            fails_saying(&o, 1, "it is write-protected");
            fails_saying(&o, 1, "chmod u+w");
            assert_eq!(sandbox_state(&sb.join("prof")), before, "{mode:o} {args:?}");
        }
    }
    ok(&in_prof(&sb, &["list"]));
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
}

/// Found by the user-side sweep: for a recipe whose folder the user deleted, `doctor` gave
/// two fixes for one problem: `hookpack install demo@0.1.0` (from the receipt) and, for its
/// stamped entries, `hookpack install demo`, which installs the newest version instead of
/// restoring the one installed. Both name the installed version.
#[test]
fn doctor_names_one_way_to_restore_a_deleted_recipe_folder() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    std::fs::remove_dir_all(sb.join("prof/hooks/demo")).unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let said = String::from_utf8_lossy(&o.stdout);
    let restore = format!(
        "`hookpack install demo@0.1.0 --index {}{p}` restores it",
        sb.join("cat/hooks-index.json").display()
    );
    assert!(
        said.matches(&restore).count() == 2 && !said.contains("`hookpack install demo "),
        "{said}"
    );
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    ok(&in_prof(&sb, &["doctor"]));
}

/// `remove` deleted files the user changed or added in `hooks/<id>/` without a word (the
/// turn-router README tells users to edit its installed routes.json), and a folder
/// hookpack never installed (no receipt, no stamped handler) as well (found by a user-side
/// sweep). Both are refused, naming what would be lost, and nothing changes.
#[test]
fn remove_keeps_what_the_user_changed_or_made() {
    let sb = Sandbox::new();
    let run = |args: &[&str]| in_prof(&sb, args);
    ok(&run(&["install", "turn-router@0.1.0"]));
    change_turn_router(&sb);
    let before = snapshot(&sb.join("prof"));
    for dry in [false, true] {
        let args: &[&str] = if dry {
            &["remove", "turn-router", "--dry-run"]
        } else {
            &["remove", "turn-router"]
        };
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("has files you changed or added (notes.txt, routes.json)")
                && err.contains("move them out of the folder to keep them")
                && err.contains("hookpack install turn-router@0.1.0"),
            "{err}"
        );
        assert_eq!(snapshot(&sb.join("prof")), before);
    }
    // Following the advice, remove goes through.
    std::fs::remove_file(sb.join("prof/hooks/turn-router/notes.txt")).unwrap();
    ok(&run(&["install", "turn-router@0.1.0"]));
    ok(&run(&["remove", "turn-router"]));
    assert!(!sb.join("prof/hooks/turn-router").exists());
    // A folder of the user's that only shares a recipe's name is not hookpack's to delete.
    sb.write("prof/hooks/mine/hook.sh", "echo mine\n");
    let before = snapshot(&sb.join("prof"));
    let o = run(&["remove", "mine"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("was not installed by hookpack"), "{err}");
    assert_eq!(snapshot(&sb.join("prof")), before);
}

/// A private index reached with `user:password@` in its URL: the password never reaches
/// the terminal (or a CI log) in what install prints, on success or failure (found by a
/// user-side sweep), while the receipt keeps the URL given so that `update` can fetch.
#[test]
fn a_password_in_the_index_url_is_never_printed() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let with_password = |path: &str| server.url(path).replace("http://", "http://me:s3cret@");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!(
            "http://me:s3cret@{}/hooks-index.json",
            l.local_addr().unwrap()
        )
    };
    // A token given as the user name alone is hidden the same way.
    let token = closed.replace("me:s3cret@", "s3cret@");
    for (index, code) in [
        (with_password("hooks-index.json"), 0),
        (with_password("missing/hooks-index.json"), 1),
        (closed, 3),
        (token, 3),
    ] {
        let o = sb
            .cmd()
            .args(["install", "demo", "--profile", "prof", "--index", &index])
            .output()
            .unwrap();
        let all =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{index}: {all}");
        assert!(!all.contains("s3cret"), "{index}: {all}");
    }
    // The receipt keeps the index URL as given, for `update`; the archive's URL (relative
    // in the index) was fetched with the credentials, as a private host needs, and is
    // recorded with the password hidden.
    let path = sb.join("prof/hooks/.receipts/demo.json");
    let receipt = read_json(&path);
    assert_eq!(receipt["index_url"], with_password("hooks-index.json"));
    // Readable by its owner alone, since it holds the password.
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    assert_eq!(
        receipt["archive_url"],
        with_password("hooks-demo-0.1.0.tar.gz").replace("s3cret", "***")
    );
}

/// An index whose server announces more bytes than hookpack reads was refused as too
/// large with the URL printed whole, the password of a private index included (the other
/// fetch errors hide it as `***`).
#[test]
fn a_password_is_hidden_when_an_index_is_refused_as_too_large() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(|path| {
            (path == "/hooks-index.json").then(|| {
                b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\nConnection: close\r\n\r\nx"
                    .to_vec()
            })
        }),
    );
    let index = server
        .url("hooks-index.json")
        .replace("http://", "http://me:s3cret@");
    let o = in_prof(&sb, &["install", "demo", "--index", &index]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is announced as 100000000000 bytes (its Content-Length), more than the"),
        "{err}"
    );
    assert!(err.contains("me:***@"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    assert!(!sb.join("prof/hooks/demo").exists());
}

/// A server announcing an archive longer than the index's `size` was reported as "the
/// download is larger", though not one byte had been downloaded: the error now gives the
/// announced length, and says nothing was downloaded.
#[test]
fn an_archive_announced_longer_than_the_index_says_is_named_so() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    let size = index["recipes"][0]["versions"][0]["size"].as_u64().unwrap();
    let announced = size + 1000;
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |path| {
            (path == "/hooks-demo-0.1.0.tar.gz").then(|| {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {announced}\r\nConnection: close\r\n\r\nx"
                )
                .into_bytes()
            })
        }),
    );
    let o = in_prof(
        &sb,
        &[
            "install",
            "demo",
            "--index",
            &server.url("hooks-index.json"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the index says {size} bytes, the server announces {announced} bytes (its Content-Length), so nothing was downloaded"
        )),
        "{err}"
    );
    assert!(!err.contains("the download is larger"), "{err}");
    assert!(!sb.join("prof/hooks/demo").exists());

    // `catalog verify` reads up to 256 MiB to tell a wrong `size` from a wrong archive; a
    // length announced past that is named too.
    let past = 300u64 << 20;
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |path| {
            (path == "/hooks-demo-0.1.0.tar.gz").then(|| {
                format!("HTTP/1.1 200 OK\r\nContent-Length: {past}\r\nConnection: close\r\n\r\nx")
                    .into_bytes()
            })
        }),
    );
    let o = sb
        .cmd()
        .args([
            "catalog",
            "verify",
            "--format",
            "json",
            &server.url("hooks-index.json"),
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{report:#}");
    let said = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "size-mismatch")
        .and_then(|d| d["message"].as_str())
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        said.starts_with(&format!(
            "the archive is announced as {past} bytes (its Content-Length, so nothing was read), more than the index's size of {size} bytes"
        )),
        "{said}"
    );
}

/// A token in the index URL's query (`?token=…`, a signed URL's `X-Amz-Signature=…`) was
/// printed whole in errors, where CI logs keep it (found by a hostile-network sweep). The
/// values of query parameters named like secrets are shown as `***`; the others stay.
#[test]
fn a_token_in_the_query_is_hidden_when_an_index_fails() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("missing.json?v=2&token=s3cret&X-Amz-Signature=f00d&api_key=k3y");
    let o = in_prof(&sb, &["install", "demo", "--index", &index]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("missing.json?v=2&token=***&X-Amz-Signature=***&api_key=***"),
        "{err}"
    );
    for secret in ["s3cret", "f00d", "k3y"] {
        assert!(!err.contains(secret), "{err}");
    }
}

/// A receipt keeps the index URL as given, for `update`: one whose query holds a token
/// (`?token=…`, which hookpack hides as `***` when it prints the URL) is readable by its
/// owner alone, as one with `user:password@` is; it was written 0644.
#[test]
fn a_receipt_keeping_a_query_token_is_private() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    // The test server serves files by the path asked, query included.
    std::fs::copy(
        sb.join("cat/hooks-index.json"),
        sb.join("cat/hooks-index.json?token=s3cret"),
    )
    .unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("hooks-index.json?token=s3cret");
    let o = in_prof(&sb, &["install", "demo", "--index", &index]);
    let all = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
    let path = sb.join("prof/hooks/.receipts/demo.json");
    assert_eq!(read_json(&path)["index_url"], index);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o077, 0, "{mode:o}");
}

/// The journal holds the receipts an install writes, the index URL as given among them: one
/// with a password or a token in it is readable by its owner alone, as the receipt is. It
/// was written 0644, and a crash leaves it there until the next command.
#[test]
fn a_journal_keeping_index_credentials_is_private() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    std::fs::copy(
        sb.join("cat/hooks-index.json"),
        sb.join("cat/hooks-index.json?token=s3cret"),
    )
    .unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    for (profile, index) in ["p1", "p2"].into_iter().zip([
        server.url("hooks-index.json?token=s3cret"),
        server
            .url("hooks-index.json")
            .replace("http://", "http://me:s3cret@"),
    ]) {
        let o = sb
            .cmd()
            .args(["install", "demo", "--profile", profile, "--index", &index])
            .env("HOOKPACK_TEST_CRASH_AT", "1")
            .output()
            .unwrap();
        assert!(!o.status.success(), "{index}: {o:?}");
        let journal = sb.join(profile).join(".hookpack-journal.json");
        assert!(
            std::fs::read_to_string(&journal)
                .unwrap()
                .contains("s3cret"),
            "{index}"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&journal).unwrap().permissions(),
        );
        assert_eq!(mode & 0o077, 0, "{index}: {mode:o}");
        // The next install rolls the crashed one back, then goes through.
        ok(&in_profile(
            &sb,
            profile,
            &["install", "demo", "--index", &index],
        ));
        assert!(!journal.exists(), "{index}");
    }
}

/// A redirect status with no `Location` was reported as a bare "answered HTTP 302", which
/// reads like an answer to act on (found by the hostile-network sweep); it says the
/// redirect leads nowhere.
#[test]
fn a_redirect_without_a_location_is_said_to_lead_nowhere() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("cat")).unwrap();
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(|_| Some(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n".to_vec())),
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", &server.url("hooks-index.json")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "answered HTTP 302, a redirect with no Location to follow; the server's redirect \
             is broken"
        ),
        "{err}"
    );
}

/// Found by a README walk-through: an index path that is not there said only "cannot open
/// /nonexistent: No such file or directory", not that it is the index given; `install`,
/// `update` and `catalog list` say so, with what to give instead (exit 1).
#[test]
fn an_index_path_that_is_not_there_is_named_as_the_index() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    for args in [
        &["install", "demo", "--index", "nowhere", "--profile", "prof"][..],
        &["update", "--index", "nowhere", "--profile", "prof"],
        &["catalog", "list", "nowhere"],
    ] {
        let o = sb.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("the index nowhere")
                && err.contains("does not exist; give a catalog folder"),
            "{args:?}: {err}"
        );
    }
}

/// Found by the hostile-network sweep: `update` against an index that does not validate
/// (an HTML login page) said only "the catalog index does not validate", where `install`
/// prints the index's problems, each at its file with the fix.
#[test]
fn update_prints_the_problems_of_an_index_that_does_not_validate() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    sb.write("html/hooks-index.json", "<html>login</html>\n");
    for extra in [&[][..], &["--dry-run"]] {
        let o = sb
            .cmd()
            .args([
                "update",
                "--index",
                "html/hooks-index.json",
                "--profile",
                "prof",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(
            err.contains("html/hooks-index.json: error[index-is-html]: this is HTML"),
            "{extra:?}: {err}"
        );
        // Already named as the index, the fix is not to name it (found by the publisher
        // walk-through).
        assert!(
            !err.contains("name the index file itself")
                && err.contains("check that this URL serves the index itself"),
            "{extra:?}: {err}"
        );
    }
    sb.write("html/index.html", "<html>listing</html>\n");
    let o = in_prof(&sb, &["update", "--index", "html/index.html"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("name the index file itself"), "{err}");
}

/// Found by the hostile-network sweep: a connection the server closed before answering
/// (a restarting proxy, a load balancer dropping an idle connection) failed at once,
/// "tried 1 time(s)", where a refused connection is tried 3 times as the README says. A
/// GET is safe to send again: it is retried alike.
#[test]
fn a_connection_closed_before_the_answer_is_tried_again() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("cat")).unwrap();
    sb.write(
        "cat/hooks-index.json",
        r#"{"schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z", "recipes": []}"#,
    );
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let server = HttpServer::serve(
        sb.join("cat"),
        // The first connection is closed with no answer; the next ones are served.
        Box::new(move |_| {
            (seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0).then(Vec::new)
        }),
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", &server.url("hooks-index.json")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2, "{err}");
    // An answer that is no HTTP will not change on retry: asked once (found by the review
    // of the diff, which saw it tried 3 times).
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |_| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some(b"this is no HTTP\r\n\r\n".to_vec())
        }),
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", &server.url("hooks-index.json")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("(tried 1 time(s))"), "{err}");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "{err}");
}

/// A redirect to a host that cannot be reached said "cannot fetch URL" of the URL given,
/// whose server had answered (found by the hostile-network sweep): the error names where
/// the redirect led, as an error status after a redirect does.
#[test]
fn a_redirect_to_a_host_that_cannot_be_reached_names_where_it_led() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.join("cat")).unwrap();
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("http://127.0.0.1:{closed}/moved/hooks-index.json");
    let answer = format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n");
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |_| Some(answer.clone().into_bytes())),
    );
    let asked = server.url("hooks-index.json");
    let o = sb.cmd().args(["catalog", "list", &asked]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("cannot fetch {to} (where {asked} redirected)")),
        "{err}"
    );
}

/// An index URL that cannot be used (a bad port, a space in the host) was echoed whole in
/// the error, password included, from `--index` and from `$HOOKPACK_INDEX_URL` (where CI
/// keeps a secret) alike.
#[test]
fn a_password_is_hidden_when_the_index_url_is_unusable() {
    let sb = Sandbox::new();
    for bad in [
        "http://me:s3cret@127.0.0.1:99999/hooks-index.json",
        "https://me:s3cret@exa mple.com/hooks-index.json",
    ] {
        let runs = [
            in_prof(&sb, &["install", "demo", "--dry-run", "--index", bad]),
            sb.cmd()
                .args(["install", "demo", "--dry-run", "--profile", "prof"])
                .env("HOOKPACK_INDEX_URL", bad)
                .output()
                .unwrap(),
            sb.cmd().args(["catalog", "verify", bad]).output().unwrap(),
        ];
        for o in runs {
            let all = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            assert_ne!(o.status.code(), Some(0), "{bad}: {all}");
            assert!(all.contains("is not a usable location"), "{bad}: {all}");
            assert!(all.contains("me:***@"), "{bad}: {all}");
            assert!(!all.contains("s3cret"), "{bad}: {all}");
        }
    }
}

/// An index location of the wrong form from `$HOOKPACK_INDEX_URL` or `config.yaml` said
/// only "`ftp://x/y.json` is not a usable location", exit 1, naming neither (found by a
/// README walk-through), while `--index` says `--index:` and exits 2. The variable is now
/// named, exit 2 as for the other HOOKPACK_* settings; the config file is named with its
/// key, exit 1 as for its other errors. And `update`, which compares each recipe with the
/// index it came from, is not stopped by a default index it does not use.
#[test]
fn an_unusable_index_location_names_where_it_was_set() {
    let sb = Sandbox::new();
    let bad = "ftp://x/y.json";
    let o = sb
        .cmd()
        .args(["install", "demo", "--profile", "p"])
        .env("HOOKPACK_INDEX_URL", bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: HOOKPACK_INDEX_URL: `ftp://x/y.json` is not a usable location"),
        "{err}"
    );
    sb.write(
        "c/config.yaml",
        format!("extra:\n  hooks:\n    index_url: \"{bad}\"\n"),
    );
    let o = in_profile(&sb, "c", &["install", "demo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}", sb.join("c/config.yaml").display()))
            && err.contains("extra.hooks.index_url: `ftp://x/y.json` is not a usable location"),
        "{err}"
    );
    // A recipe installed from an index that is fine updates, though the default is not.
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    ok(&in_profile(
        &sb,
        "u",
        &["install", "demo", "--index", "cat"],
    ));
    catalog_with_versions(&sb, "demo", &[("0.2.0", "0.13.0")]);
    let o = sb
        .cmd()
        .args(["update", "--profile", "u"])
        .env("HOOKPACK_INDEX_URL", bad)
        .output()
        .unwrap();
    ok(&o);
    assert!(std::fs::read_to_string(sb.join("u/hooks/demo/recipe.json"))
        .unwrap()
        .contains("0.2.0"));
}

/// A real `update --format json` listed only the recipes that updated: one whose update
/// failed (here its archive is damaged) was missing, while stderr and the exit code said
/// it failed (found by a user-side sweep). It is listed as left, `failed`, with the error.
#[test]
fn update_lists_a_recipe_whose_update_failed_in_json() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "alpha", &[("0.1.0", "0.13.0")]);
    catalog_with_versions(&sb, "beta", &[("0.1.0", "0.13.0")]);
    let run = |args: &[&str]| in_prof(&sb, &[args, &["--index", "cat"]].concat());
    ok(&run(&["install", "alpha", "beta"]));
    catalog_with_versions(&sb, "alpha", &[("0.2.0", "0.13.0")]);
    catalog_with_versions(&sb, "beta", &[("0.2.0", "0.13.0")]);
    sb.write("cat/hooks-beta-0.2.0.tar.gz", "garbage\n");
    let o = run(&["update", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entry = |id: &str| {
        report
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} missing: {report:#}"))
    };
    assert_eq!(entry("alpha")["action"], "update", "{report:#}");
    let beta = entry("beta");
    assert_eq!(beta["action"], "left", "{report:#}");
    assert_eq!(beta["reason"], "failed", "{report:#}");
    // Garbage is shorter than the archive: its size is what is found wrong first.
    assert!(
        beta["error"]
            .as_str()
            .unwrap()
            .contains("size mismatch for beta"),
        "{report:#}"
    );
}

/// Found by the user-side sweep: a `hooks/<id>` that is a symbolic link to a folder
/// elsewhere (a maintainer's working copy) was replaced by a real folder when the target
/// was empty, and otherwise refused as files the user changed, never saying it is a link.
/// `install`, `update` and `remove` (and their dry runs) refuse it, naming the link, and
/// touch neither the link nor its target; so for `hooks/` and `hooks/.receipts` as links.
#[test]
fn a_recipe_folder_that_is_a_symbolic_link_is_left_alone() {
    let sb = Sandbox::new();
    old_and_new_catalogs(&sb);
    let refused = |args: &[&str], link: &str| {
        let before = sandbox_state(sb.path());
        let o = in_prof(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&sb.join(link).display().to_string())
                && err.contains("symbolic link")
                && err.contains("remove the link"),
            "{args:?}: {err}"
        );
        assert_eq!(sandbox_state(sb.path()), before, "{args:?}: {err}");
    };
    let all: [&[&str]; 5] = [
        &["install", "demo@0.1.0", "--index", "cat", "--dry-run"],
        &["install", "demo@0.1.0", "--index", "cat"],
        &["update", "--index", "cat"],
        &["remove", "demo", "--dry-run"],
        &["remove", "demo"],
    ];
    // Not installed: an empty working copy, then one with files.
    std::fs::create_dir_all(sb.join("prof/hooks")).unwrap();
    std::fs::create_dir_all(sb.join("wc")).unwrap();
    std::os::unix::fs::symlink(sb.join("wc"), sb.join("prof/hooks/demo")).unwrap();
    for args in &all[..2] {
        refused(args, "prof/hooks/demo");
    }
    refused(&["remove", "demo"], "prof/hooks/demo");
    sb.write("wc/recipe.json", "{}\n");
    for args in &all[..2] {
        refused(args, "prof/hooks/demo");
    }
    // Installed, then linked to a working copy of the same files.
    std::fs::remove_file(sb.join("prof/hooks/demo")).unwrap();
    ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
    std::fs::remove_dir_all(sb.join("wc")).unwrap();
    std::fs::rename(sb.join("prof/hooks/demo"), sb.join("wc")).unwrap();
    std::os::unix::fs::symlink(sb.join("wc"), sb.join("prof/hooks/demo")).unwrap();
    for args in all {
        refused(args, "prof/hooks/demo");
    }
    // Removing the link, as said, lets the commands through again.
    std::fs::remove_file(sb.join("prof/hooks/demo")).unwrap();
    ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
    // `hooks/` and `hooks/.receipts` as links.
    std::fs::rename(sb.join("prof/hooks/.receipts"), sb.join("receipts")).unwrap();
    std::os::unix::fs::symlink(sb.join("receipts"), sb.join("prof/hooks/.receipts")).unwrap();
    for args in all {
        refused(args, "prof/hooks/.receipts");
    }
    std::fs::remove_file(sb.join("prof/hooks/.receipts")).unwrap();
    std::fs::rename(sb.join("receipts"), sb.join("prof/hooks/.receipts")).unwrap();
    std::fs::rename(sb.join("prof/hooks"), sb.join("hooks")).unwrap();
    std::os::unix::fs::symlink(sb.join("hooks"), sb.join("prof/hooks")).unwrap();
    for args in all {
        refused(args, "prof/hooks");
    }
}

/// Found by the user-side sweep: a first install whose commit failed (here on a folder
/// where the `hooks.json` backup goes) was rolled back, but left an empty `hooks/` in a
/// profile that had none. Nothing is left; a `hooks/` the user had stays.
#[test]
fn a_failed_first_install_leaves_no_folder_behind() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("prof/hooks.json", "{\"hooks\": {}}\n");
    sb.write("prof/hooks.json.bak/mine.txt", "mine\n");
    for had_hooks in [false, true] {
        if had_hooks {
            std::fs::create_dir_all(sb.join("prof/hooks")).unwrap();
        }
        let before = sandbox_state(sb.path());
        let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{err}");
        assert!(err.contains("prof/hooks.json.bak"), "{err}");
        assert_eq!(sandbox_state(sb.path()), before, "{err}");
    }
    // A crash in the commit, rolled back by the next command, leaves none either.
    std::fs::remove_dir_all(sb.join("prof/hooks")).unwrap();
    std::fs::remove_dir_all(sb.join("prof/hooks.json.bak")).unwrap();
    let before = sandbox_state(&sb.join("prof"));
    for step in ["2", "3", "4"] {
        let o = sb
            .cmd()
            .args(["install", "demo", "--index", "cat", "--profile", "prof"])
            .env("HOOKPACK_TEST_CRASH_AT", step)
            .output()
            .unwrap();
        assert!(!o.status.success(), "step {step}: {o:?}");
        let o = in_prof(&sb, &["remove", "demo"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is not installed"), "step {step}: {err}");
        assert_eq!(
            sandbox_state(&sb.join("prof")),
            before,
            "step {step}: {err}"
        );
    }
}

/// Found by the user-side sweep: a `.DS_Store` that Finder left in `hooks/<id>/` (or
/// Windows' `Thumbs.db`, `desktop.ini`) was taken for a file of the user's, so `remove`
/// and `update` refused and `doctor` reported it. Such files are the system's: they go
/// with the folder, and `doctor` passes over them; a file of the user's still counts.
#[test]
fn files_the_system_makes_in_a_recipe_folder_are_not_changes() {
    let sb = Sandbox::new();
    old_and_new_catalogs(&sb);
    let litter = || {
        sb.write(
            "prof/hooks/demo/.DS_Store",
            [0u8, 0, 0, 1, b'B', b'u', b'd', b'1'],
        );
        sb.write("prof/hooks/demo/scripts/Thumbs.db", [0xd0u8, 0xcf, 0x11]);
        sb.write("prof/hooks/demo/desktop.ini", "[.ShellClassInfo]\r\n");
    };
    ok(&in_prof(&sb, &["install", "demo", "--index", "old"]));
    litter();
    ok(&in_prof(&sb, &["doctor"]));
    let o = in_prof(
        &sb,
        &["update", "--index", "cat", "--dry-run", "--format", "json"],
    );
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("local"),
        "{o:?}"
    );
    ok(&in_prof(&sb, &["update", "--index", "cat"]));
    assert!(!sb.join("prof/hooks/demo/.DS_Store").exists());
    assert_eq!(
        read_json(&sb.join("prof/hooks/demo/recipe.json"))["version"],
        "0.2.0"
    );
    litter();
    ok(&in_prof(&sb, &["remove", "demo"]));
    assert!(!sb.join("prof/hooks/demo").exists());
    // Without a receipt, an install over such a folder goes through too.
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    std::fs::remove_file(sb.join("prof/hooks/.receipts/demo.json")).unwrap();
    litter();
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    // A file of the user's beside them is still refused, and named alone.
    litter();
    sb.write("prof/hooks/demo/notes.txt", "mine\n");
    let before = sandbox_state(&sb.join("prof"));
    let o = in_prof(&sb, &["remove", "demo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("(notes.txt)"), "{err}");
    assert_eq!(sandbox_state(&sb.join("prof")), before);
}

/// Found by the user-side sweep: `doctor` said "no problems" of a `hooks/<id>` that is a
/// symbolic link, which `install`, `update` and `remove` refuse. It warns, naming the link
/// and its target, and still changes nothing with `--fix`.
#[test]
fn doctor_warns_of_a_recipe_folder_that_is_a_link() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    std::fs::rename(sb.join("prof/hooks/demo"), sb.join("wc")).unwrap();
    std::os::unix::fs::symlink(sb.join("wc"), sb.join("prof/hooks/demo")).unwrap();
    let before = sandbox_state(sb.path());
    for args in [&["doctor"][..], &["doctor", "--fix"]] {
        let o = in_prof(&sb, args);
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(
            said.contains("prof/hooks/demo: warning[recipe-folder-link]")
                && said.contains(&sb.join("wc").display().to_string())
                && said.contains("remove the link"),
            "{args:?}: {o:?}"
        );
        assert_eq!(sandbox_state(sb.path()), before, "{args:?}");
    }
}

/// Found by the user-side sweep: a change rolled back (a crash, or an error, before
/// `hooks.json` was replaced) had already replaced `hooks.json.bak` with a copy of the
/// current file, so the backup of the change before was lost, and a first one was left
/// behind. The rollback puts the backup back as it was.
#[test]
fn a_rolled_back_change_keeps_the_old_backup() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("prof/hooks.json", "{\"hooks\": {}}\n");
    for with_backup in [true, false] {
        if with_backup {
            sb.write("prof/hooks.json.bak", "{\"hooks\": {\"Stop\": []}}\n");
        } else {
            std::fs::remove_file(sb.join("prof/hooks.json.bak")).unwrap();
        }
        let before = sandbox_state(&sb.join("prof"));
        let o = sb
            .cmd()
            .args(["install", "demo", "--index", "cat", "--profile", "prof"])
            .env("HOOKPACK_TEST_CRASH_AT", "5")
            .output()
            .unwrap();
        assert!(!o.status.success(), "{o:?}");
        // Any later command rolls the change back.
        let o = in_prof(&sb, &["doctor", "--fix"]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("rolled back"),
            "{o:?}"
        );
        assert_eq!(
            sandbox_state(&sb.join("prof")),
            before,
            "backup: {with_backup}"
        );
    }
}

/// A `hooks.json.bak` that is a folder (the user's, or left by another tool) made the
/// commit fail with "cannot replace …: Is a directory" (exit 3) and no way out. It is
/// refused before anything is written, naming it and the fix; the folder is left as it is.
#[test]
fn a_backup_path_that_is_a_folder_is_refused_first() {
    let sb = Sandbox::new();
    sb.write("p/hooks.json", USER_DOC);
    ok(&in_profile(&sb, "p", &["install", "audit-log"]));
    std::fs::remove_file(sb.join("p/hooks.json.bak")).unwrap();
    sb.write("p/hooks.json.bak/notes.txt", "mine\n");
    for args in [&["install", "tool-gate"][..], &["remove", "audit-log"][..]] {
        let before = snapshot(&sb.join("p"));
        let o = in_profile(&sb, "p", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("hooks.json.bak") && err.contains("is not a file"),
            "{args:?}: {err}"
        );
        assert!(err.contains("move it elsewhere"), "{args:?}: {err}");
        assert_eq!(snapshot(&sb.join("p")), before, "{args:?}");
    }
}

/// A `hooks.json.bak` that is a symbolic link (to backups kept elsewhere) was replaced by a
/// regular file, `hooks.json` as it was before the change, and a change rolled back after
/// that (a crash, or an error, before `hooks.json` was replaced) left that file there: the
/// link was lost. The link is now set aside with the change, as a backup that is a file is,
/// and a rollback puts the link itself back; its target is never written. A change that
/// goes through replaces the link with the new backup, as before.
#[test]
fn a_rolled_back_change_puts_back_a_backup_that_is_a_link() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write("prof/hooks.json", USER_DOC);
    let kept = "{\"hooks\": {\"Stop\": []}}\n";
    let target = sb.write("elsewhere/hooks.json.bak", kept);
    std::os::unix::fs::symlink(&target, sb.join("prof/hooks.json.bak")).unwrap();
    let state = || {
        (
            sandbox_state(&sb.join("prof")),
            sandbox_state(&sb.join("elsewhere")),
        )
    };
    let before = state();
    for crash in ["1", "2", "3", "4", "5"] {
        let o = sb
            .cmd()
            .args(["install", "demo", "--index", "cat", "--profile", "prof"])
            .env("HOOKPACK_TEST_CRASH_AT", crash)
            .output()
            .unwrap();
        assert!(!o.status.success(), "crash at {crash}: {o:?}");
        // Any later command rolls the change back.
        let o = in_prof(&sb, &["doctor", "--fix"]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("rolled back"),
            "crash at {crash}: {o:?}"
        );
        assert_eq!(state(), before, "crash at {crash}");
    }

    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
    let backup = sb.join("prof/hooks.json.bak");
    assert!(backup.symlink_metadata().unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), USER_DOC);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), kept);
}

/// Remembered pins: `demo` at 0.1.0, 0.1.1 and 0.2.0 in `cat`, and the receipt of prof.
fn pinned_catalog(sb: &Sandbox) -> std::path::PathBuf {
    catalog_with_versions(
        sb,
        "demo",
        &[
            ("0.1.0", "0.13.0"),
            ("0.1.1", "0.13.0"),
            ("0.2.0", "0.13.0"),
        ],
    );
    sb.join("prof/hooks/.receipts/demo.json")
}

/// A user pins because a newer version broke something: `update` took a recipe installed
/// as `ID@X.Y.Z` to the newest version, undoing the pin without a word. It stays, every
/// byte of the profile as it was, and update says how to lift the pin.
#[test]
fn an_exact_pin_stays_on_update() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    let receipt = pinned_catalog(&sb);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    assert_eq!(read_json(&receipt)["version"], "0.1.0");
    assert_eq!(read_json(&receipt)["pin"], "0.1.0");
    let before = snapshot(&sb.join("prof"));
    // From `cat`, not the default index: the commands name it.
    let index = sb.join("cat/hooks-index.json");
    for args in [&["update"][..], &["update", "demo"]] {
        let o = in_prof(&sb, args);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("demo 0.1.0: pinned to 0.1.0 (installed as `demo@0.1.0`), newest 0.2.0; left as it is")
                && err.contains(&format!("`hookpack install demo --index {}{p}` takes the newest", index.display()))
                && err.contains(&format!("`hookpack install demo@REQ --index {}{p}` pins another", index.display())),
            "{args:?}: {err}"
        );
        assert!(!err.contains("up to date"), "{err}");
        assert_eq!(snapshot(&sb.join("prof")), before, "{args:?} wrote");
    }
    let o = in_prof(&sb, &["update", "--format", "json"]);
    ok(&o);
    let done: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(done[0]["action"], "left", "{done:#}");
    assert_eq!(done[0]["reason"], "pinned", "{done:#}");
    assert_eq!(done[0]["to"], "0.1.0", "{done:#}");
    assert_eq!(done[0]["pin"], "0.1.0", "{done:#}");
    assert_eq!(snapshot(&sb.join("prof")), before);
    // The plan says so too.
    let o = in_prof(&sb, &["update", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "pinned       demo installed 0.1.0 available 0.1.0 (pinned 0.1.0; newest 0.2.0)"
        ),
        "{out}"
    );
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    ok(&o);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan[0]["state"], "pinned", "{plan:#}");
    assert_eq!(plan[0]["pin"], "0.1.0", "{plan:#}");
    assert_eq!(plan[0]["newest"], "0.2.0", "{plan:#}");
    assert_eq!(snapshot(&sb.join("prof")), before);
    // list shows it.
    let o = in_prof(&sb, &["list"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("recipe  demo 0.1.0  pinned 0.1.0"), "{out}");
    let listing = list_json(&sb);
    assert_eq!(listing["recipes"][0]["pin"], "0.1.0", "{listing:#}");
}

/// A range pin still gets the updates inside it, and only those.
#[test]
fn a_range_pin_updates_within_the_range_only() {
    let sb = Sandbox::new();
    let receipt = sb.join("prof/hooks/.receipts/demo.json");
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    ok(&in_prof(&sb, &["install", "demo@^0.1", "--index", "cat"]));
    assert_eq!(read_json(&receipt)["pin"], "^0.1");
    catalog_with_versions(&sb, "demo", &[("0.1.1", "0.13.0"), ("0.2.0", "0.13.0")]);
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan[0]["state"], "outdated", "{plan:#}");
    assert_eq!(plan[0]["available"], "0.1.1", "{plan:#}");
    let o = in_prof(&sb, &["update"]);
    ok(&o);
    let r = read_json(&receipt);
    assert_eq!(
        (&r["version"], &r["pin"]),
        (&json!("0.1.1"), &json!("^0.1"))
    );
    let before = snapshot(&sb.join("prof"));
    let o = in_prof(&sb, &["update"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("demo 0.1.1: pinned to ^0.1 (installed as `demo@^0.1`), newest 0.2.0"),
        "{err}"
    );
    assert_eq!(snapshot(&sb.join("prof")), before);
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan[0]["state"], "pinned", "{plan:#}");
    assert_eq!(plan[0]["pin"], "^0.1", "{plan:#}");
    assert_eq!(plan[0]["newest"], "0.2.0", "{plan:#}");
}

/// `install ID` is how a pin is lifted; `install ID@REQ` of the version installed records
/// one without touching the files; a repair keeps what its command says.
#[test]
fn install_id_lifts_the_pin_and_install_id_at_req_sets_it() {
    let sb = Sandbox::new();
    let receipt = pinned_catalog(&sb);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
    let r = read_json(&receipt);
    assert_eq!(r["version"], "0.2.0");
    assert!(r.get("pin").is_none(), "{r:#}");
    // Pinned where it is: only the receipt changes.
    let tree = snapshot(&sb.join("prof/hooks/demo"));
    let hooks = std::fs::read(sb.join("prof/hooks.json")).unwrap();
    let o = in_prof(&sb, &["install", "demo@^0.2", "--index", "cat"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ok      demo 0.2.0 (already installed; pinned ^0.2)"),
        "{out}"
    );
    assert_eq!(read_json(&receipt)["pin"], "^0.2");
    assert_eq!(snapshot(&sb.join("prof/hooks/demo")), tree);
    assert_eq!(std::fs::read(sb.join("prof/hooks.json")).unwrap(), hooks);
    let listing = list_json(&sb);
    assert_eq!(listing["recipes"][0]["pin"], "^0.2", "{listing:#}");
    // A repair with the pin keeps it; one without lifts it.
    std::fs::write(sb.join("prof/hooks/demo/README.md"), "changed\n").unwrap();
    ok(&in_prof(&sb, &["install", "demo@^0.2", "--index", "cat"]));
    assert_eq!(read_json(&receipt)["pin"], "^0.2");
    std::fs::write(sb.join("prof/hooks/demo/README.md"), "changed\n").unwrap();
    let o = in_prof(
        &sb,
        &["install", "demo", "--index", "cat", "--format", "json"],
    );
    ok(&o);
    let done: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(done[0]["action"], "repair", "{done:#}");
    assert!(read_json(&receipt).get("pin").is_none());
    // Lifting a pin on the version installed says so.
    ok(&in_prof(&sb, &["install", "demo@0.2.0", "--index", "cat"]));
    let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ok      demo 0.2.0 (already installed; pin lifted)"),
        "{out}"
    );
    assert!(read_json(&receipt).get("pin").is_none());
    let listing = list_json(&sb);
    assert!(listing["recipes"][0].get("pin").is_none(), "{listing:#}");
}

/// Receipts of earlier releases have no `pin`: `update` moves them as it always did.
#[test]
fn a_receipt_without_a_pin_updates_as_before() {
    let sb = Sandbox::new();
    let receipt = pinned_catalog(&sb);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    let mut r = read_json(&receipt);
    r.as_object_mut().unwrap().remove("pin");
    std::fs::write(&receipt, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan[0]["state"], "outdated", "{plan:#}");
    assert!(plan[0].get("pin").is_none(), "{plan:#}");
    ok(&in_prof(&sb, &["update"]));
    let r = read_json(&receipt);
    assert_eq!(r["version"], "0.2.0");
    assert!(r.get("pin").is_none(), "{r:#}");
}

/// A pin that is no version requirement cannot be honoured or shown: the receipt is
/// unreadable, with the way out, and nothing is written.
#[test]
fn an_unparsable_pin_in_a_receipt_is_reported_with_a_way_out() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    let receipt = pinned_catalog(&sb);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    let mut r = read_json(&receipt);
    r["pin"] = json!("banana");
    std::fs::write(&receipt, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let before = snapshot(&sb.join("prof"));
    for args in [&["update"][..], &["update", "--dry-run"], &["list"]] {
        let o = in_prof(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("demo.json: not a readable receipt: its pin `banana` is not")
                && err.contains(&format!("delete it, then `hookpack install demo{p}`")),
            "{args:?}: {err}"
        );
        assert_eq!(snapshot(&sb.join("prof")), before, "{args:?} wrote");
    }
    let o = in_prof(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "demo.json: error[receipt-unreadable]: not a readable receipt: its pin `banana`"
        ),
        "{out}"
    );
}

/// A profile folder whose name is not UTF-8 is shown in JSON as `Path::display` shows it,
/// U+FFFD for its undecodable bytes: `install` and `list` print one whole JSON document and
/// exit 0.
#[test]
fn json_outcomes_show_a_profile_path_that_is_not_utf8_lossily() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    let profile = std::ffi::OsStr::from_bytes(b"prof\xff");
    let shown = format!("{}/prof\u{fffd}", sb.path().display());
    let index = sh_recipe_catalog(&sb);
    let run = |verb: &str| {
        let mut c = sb.cmd();
        c.arg(verb);
        if verb == "install" {
            c.arg("shrec").arg("--index").arg(&index);
        }
        c.arg("--profile")
            .arg(profile)
            .args(["--format", "json"])
            .output()
            .unwrap()
    };

    let o = run("install");
    let doc = one_json_document(&o);
    assert_eq!(o.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc[0]["action"], "install", "{doc:#}");
    assert_eq!(
        doc[0]["path"],
        format!("{shown}/hooks/shrec").as_str(),
        "{doc:#}"
    );
    assert!(sb.path().join(profile).join("hooks/shrec").is_dir());

    let o = run("list");
    let doc = one_json_document(&o);
    assert_eq!(o.status.code(), Some(0), "{doc:#}");
    assert_eq!(doc["profile"], shown.as_str(), "{doc:#}");
    let handler = &doc["handlers"][0];
    assert_eq!(
        handler["file"],
        format!("{shown}/hooks.json").as_str(),
        "{doc:#}"
    );
    assert!(
        handler["script"]["path"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{shown}/hooks/shrec/")),
        "{doc:#}"
    );
}

/// A profile name from `$FINCLAW_PROFILE` or `active-profile` holding a control character
/// (C0, DEL or C1) inside it is refused, naming where it came from, and nothing is made;
/// the line break that ends `active-profile` and names without controls still work.
#[test]
fn a_profile_name_with_a_control_character_is_refused() {
    let sb = Sandbox::new();
    let profiles = sb.join("finclaw-home/profiles");
    let refused = |o: &std::process::Output, from: &str, shown: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "error: `{shown}` (from {from}) is not a profile name"
            )),
            "{err}"
        );
        assert!(err.contains("control character"), "{err}");
        assert!(err.contains("--profile DIR"), "{err}");
        assert!(!profiles.exists(), "{err}");
    };
    for (name, shown) in [
        ("dev\x1b[2J", r"dev\u{1b}[2J"),
        ("dev\nprod", r"dev\nprod"),
        ("de\tv", r"de\tv"),
        ("dev\x7f", r"dev\u{7f}"),
        ("dev\u{9b}31m", r"dev\u{9b}31m"),
        ("dev\u{202e}ved", r"dev\u{202e}ved"),
        ("dev\u{2028}x", r"dev\u{2028}x"),
    ] {
        for verb in ["list", "install"] {
            let mut c = sb.cmd();
            c.arg(verb);
            if verb == "install" {
                c.arg("tool-gate");
            }
            let o = c.env("FINCLAW_PROFILE", name).output().unwrap();
            refused(&o, "$FINCLAW_PROFILE", shown);
        }
    }
    let active = sb.write("finclaw-home/active-profile", "dev\x1bx\n");
    let o = sb.cmd().arg("list").output().unwrap();
    refused(&o, &active.display().to_string(), r"dev\u{1b}x");
    std::fs::remove_dir_all(sb.join("finclaw-home")).unwrap();

    // Accepted as before: the line break ending the file, and names without controls.
    sb.write("finclaw-home/active-profile", "dév team\n");
    ok(&sb.cmd().args(["install", "tool-gate"]).output().unwrap());
    assert!(profiles.join("dév team/hooks/tool-gate").is_dir());
    let o = sb
        .cmd()
        .args(["list", "--format", "json"])
        .env("FINCLAW_PROFILE", " dev\n")
        .output()
        .unwrap();
    ok(&o);
    let doc = one_json_document(&o);
    assert_eq!(
        doc["profile"],
        profiles.join("dev").display().to_string().as_str(),
        "{doc:#}"
    );
}

#[test]
fn a_crash_in_a_profile_whose_path_is_not_utf8_is_recovered() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    let profile = std::ffi::OsStr::from_bytes(b"prof\xff");
    let root = sb.path().join(profile);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("hooks.json"), USER_DOC).unwrap();
    let index = sh_recipe_catalog(&sb);
    let install = |crash: Option<&str>| {
        let mut c = sb.cmd();
        if let Some(point) = crash {
            c.env("HOOKPACK_TEST_CRASH_AT", point);
        }
        c.args(["install", "shrec", "--index"])
            .arg(&index)
            .arg("--profile")
            .arg(profile)
            .output()
            .unwrap()
    };
    // Killed once the journal is written and the recipe folder moved in, before the commit.
    let o = install(Some("3"));
    assert!(!o.status.success(), "the crash hook did not fire");
    let journal = std::fs::read(root.join(".hookpack-journal.json")).unwrap();
    assert!(
        serde_json::from_slice::<Value>(&journal).is_ok(),
        "the journal is not JSON: {:?}",
        String::from_utf8_lossy(&journal)
    );
    // The next command rolls the change back: the profile is as it was.
    let o = sb
        .cmd()
        .args(["doctor", "--fix", "--profile"])
        .arg(profile)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("rolled back the interrupted change of `shrec`"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("hooks.json")).unwrap(),
        USER_DOC
    );
    assert!(!root.join("hooks/shrec").exists());
    assert!(!root.join(".hookpack-journal.json").exists());
    assert!(!root.join(".hookpack-staging").exists());
    // And an install after it works.
    ok(&install(None));
    assert!(root.join("hooks/shrec/recipe.json").is_file());
}

/// A profile reached by a path that is not UTF-8: `list` called an installed recipe's script
/// `script missing`, since the `${FINCLAW_PROFILE_ROOT}` of its command was expanded as
/// text (U+FFFD for the bad byte) and that other path checked; so `doctor` reported it
/// missing and `trust` refused it. `run` set `FINCLAW_PROFILE_ROOT` to that text too, so a
/// handler's shell looked for its script there. The root is now put in as the bytes it is
/// (the path shown in a report stays lossy, as every path there). (Node itself cannot load a
/// script from such a path, and `install` refuses a recipe that runs node there, so the
/// recipe's handler is a shell script; a shell script of the user's is run.)
#[test]
fn scripts_in_a_profile_whose_path_is_not_utf8_are_found() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    let profile = std::ffi::OsStr::from_bytes(b"prof\xff");
    let root = sb.path().join(profile);
    let shown = format!("{}/prof\u{fffd}", sb.path().display());
    let index = sh_recipe_catalog(&sb);
    let hookpack = |args: &[&str]| {
        sb.cmd()
            .args(args)
            .arg("--profile")
            .arg(profile)
            .output()
            .unwrap()
    };
    ok(&hookpack(&[
        "install",
        "shrec",
        "--index",
        index.to_str().unwrap(),
    ]));
    assert!(root.join("hooks/shrec/scripts/main.sh").is_file());
    let mut doc = read_json(&root.join("hooks.json"));
    doc["hooks"]["Stop"] = json!([{"hooks": [{"id": "mine", "type": "command",
        "command": "sh \"${FINCLAW_PROFILE_ROOT}/mine.sh\""}]}]);
    std::fs::write(root.join("hooks.json"), doc.to_string()).unwrap();
    std::fs::write(
        root.join("mine.sh"),
        "echo ran > \"$FINCLAW_PROFILE_ROOT/ran.txt\"\n",
    )
    .unwrap();

    let o = hookpack(&["list", "--format", "json"]);
    let doc = one_json_document(&o);
    ok(&o);
    for (h, script) in [
        (&doc["handlers"][0], "hooks/shrec/scripts/main.sh"),
        (&doc["handlers"][1], "mine.sh"),
    ] {
        assert_eq!(h["status"], "untrusted", "{doc:#}");
        assert_eq!(h["script"]["kind"], "file", "{doc:#}");
        assert_eq!(
            h["script"]["path"],
            format!("{shown}/{script}").as_str(),
            "{doc:#}"
        );
    }
    let o = hookpack(&["list"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("[untrusted]").count(), 2, "{out}");
    assert!(!out.contains("missing"), "{out}");

    let o = hookpack(&["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("script-missing"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{out}");

    ok(&hookpack(&["trust", "--all"]));
    let o = hookpack(&["list", "--format", "json"]);
    let doc = one_json_document(&o);
    assert_eq!(doc["handlers"][0]["status"], "trusted", "{doc:#}");
    assert_eq!(doc["handlers"][1]["status"], "trusted", "{doc:#}");

    let o = hookpack(&["run", "Stop", "--format", "json"]);
    let doc = one_json_document(&o);
    ok(&o);
    assert_eq!(doc["handlers"][0]["exit"], 0, "{doc:#}");
    assert_eq!(
        std::fs::read_to_string(root.join("ran.txt")).unwrap(),
        "ran\n"
    );
}

/// Without its receipt, `remove` cannot tell the recipe's files from ones the user put in its
/// folder, and deletes the folder whole: it says so, and `--dry-run` lists every file that
/// would go, so a user can look first (it listed none, and said nothing).
#[test]
fn remove_without_a_receipt_says_the_whole_folder_goes_and_lists_it() {
    let sb = Sandbox::new();
    ok(&in_profile(&sb, "p", &["install", "turn-router"]));
    std::fs::remove_file(sb.join("p/hooks/.receipts/turn-router.json")).unwrap();
    sb.write("p/hooks/turn-router/mine.json", "{\"x\": 1}\n");
    let o = in_profile(&sb, "p", &["remove", "turn-router", "--dry-run"]);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    for f in ["mine.json", "recipe.json", "scripts/main.js"] {
        assert!(out.contains(&format!("\n  file {f}\n")), "{f}: {out}");
    }
    // No version is known: none is shown (it was an empty one, `turn-router   (`).
    let folder = sb.join("p/hooks/turn-router");
    assert!(
        out.starts_with(&format!(
            "would remove  turn-router  ({})\n",
            folder.display()
        )),
        "{out}"
    );
    assert!(
        err.contains(
            "warning: `turn-router` has no install receipt, so hookpack cannot tell the \
             recipe's files from ones you put in its folder: the whole folder would go"
        ),
        "{err}"
    );
    assert!(sb.join("p/hooks/turn-router/mine.json").exists());
    let o = in_profile(&sb, "p", &["remove", "turn-router", "--format", "json"]);
    ok(&o);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = report[0]["files"].as_array().unwrap();
    assert!(files.contains(&json!("mine.json")), "{report:#}");
    let warnings = report[0]["warnings"].as_array().unwrap();
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("the whole folder went"),
        "{report:#}"
    );
    assert!(!sb.join("p/hooks/turn-router").exists());
}

/// Makes a fifo at `p` (and the folders above it).
fn mkfifo(p: &std::path::Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Runs hookpack with `args` on the profile `prof`, killed after 30 s: for files that could
/// make it wait for good.
fn in_prof_bounded(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.cmd()
        .args(args)
        .args(["--profile", "prof"])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap()
}

/// Found by the hostile-input sweep: a fifo in `hooks/.receipts` (in the place of a
/// recipe's receipt, or beside them) made `list`, `doctor`, `install`, `remove` and
/// `update` wait for a writer for good, since receipts were opened as whatever they were.
#[test]
fn a_receipt_that_is_a_fifo_is_refused_not_waited_for() {
    for name in ["tool-gate", "zzz"] {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        let receipt = sb.join(&format!("prof/hooks/.receipts/{name}.json"));
        let _ = std::fs::remove_file(&receipt);
        mkfifo(&receipt);
        // `install` and `remove` read the receipt of the recipe they are given alone.
        let reads_it: &[&[&str]] = if name == "tool-gate" {
            &[
                &["list"],
                &["doctor"],
                &["install", "tool-gate"],
                &["remove", "tool-gate"],
                &["update"],
            ]
        } else {
            &[&["list"], &["doctor"], &["update"]]
        };
        for args in reads_it {
            let o = in_prof_bounded(&sb, args);
            // `doctor` reports it on stdout, the others stop on it.
            let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
            assert_eq!(o.status.code(), Some(1), "{name}: {args:?}: {said}");
            assert!(
                said.contains(&format!("{name}.json: ")) && said.contains("is a fifo"),
                "{name}: {args:?}: {said}"
            );
        }
        assert!(sb.join("prof/hooks/tool-gate/recipe.json").is_file());
    }
}

/// Found by review: a symbolic link in the place of a receipt was read through, so a file
/// outside the profile said what was installed (`list` showed its version and pin). It is
/// an unreadable receipt now, as a fifo is, and the file it points to is left alone.
#[cfg(unix)]
#[test]
fn a_receipt_that_is_a_link_is_not_read_through() {
    let sb = Sandbox::new();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    let receipt = sb.join("prof/hooks/.receipts/tool-gate.json");
    let outside = sb.join("outside.json");
    std::fs::rename(&receipt, &outside).unwrap();
    let before = std::fs::read(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &receipt).unwrap();
    for args in [
        &["list"][..],
        &["doctor"],
        &["remove", "tool-gate"],
        &["update"],
    ] {
        let o = in_prof_bounded(&sb, args);
        let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains("tool-gate.json: ")
                && said.contains("it is a symbolic link, which hookpack does not read through"),
            "{args:?}: {said}"
        );
    }
    assert_eq!(std::fs::read(&outside).unwrap(), before);
    assert!(sb.join("prof/hooks/tool-gate/recipe.json").is_file());
}

/// Found by the hostile-input sweep: a fifo in the place of the profile's journal made
/// `install`, `remove` and `doctor --fix`, which finish or undo an interrupted change first,
/// wait for a writer for good. It is no journal hookpack wrote: it is ignored and removed
/// as an unreadable one is.
#[test]
fn a_journal_that_is_a_fifo_is_ignored_not_waited_for() {
    for args in [
        &["install", "tool-gate"][..],
        &["remove", "tool-gate"],
        &["doctor", "--fix"],
    ] {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        let journal = sb.join("prof/.hookpack-journal.json");
        mkfifo(&journal);
        let o = in_prof_bounded(&sb, args);
        let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {said}");
        // `doctor --fix` says what it did; install and remove recover without a word.
        if args[0] == "doctor" {
            assert!(
                said.contains("ignored the journal")
                    && said.contains("it cannot be read: ")
                    && said.contains("is a fifo"),
                "{args:?}: {said}"
            );
        }
        assert!(std::fs::symlink_metadata(&journal).is_err(), "{args:?}");
    }
}

/// Found by the hostile-input sweep: a fifo in the place of the profile's lock file made
/// `install` (and every verb that changes the profile) wait for a reader for good, past
/// `HOOKPACK_LOCK_TIMEOUT`; one in the place of the trust file's lock did the same to
/// `trust`, `revoke` and `remove`. Each is refused, naming the file.
#[test]
fn a_lock_file_that_is_a_fifo_is_refused_not_waited_for() {
    // `remove` drops trust entries after its commit, and warns when it cannot (exit 0).
    let cases: [(&str, &[&str], i32); 4] = [
        ("prof/.hookpack.lock", &["install", "tool-gate"], 1),
        ("prof/.hookpack.lock", &["remove", "tool-gate"], 1),
        ("finclaw-home/.hookpack-trust.lock", &["trust", "--all"], 1),
        (
            "finclaw-home/.hookpack-trust.lock",
            &["remove", "tool-gate"],
            0,
        ),
    ];
    for (lock, args, code) in cases {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        // `remove` takes the trust file's lock to drop the entries of what it removes.
        ok(&in_prof(&sb, &["trust", "--all"]));
        let before = sandbox_state(&sb.join("prof"));
        let _ = std::fs::remove_file(sb.join(lock));
        mkfifo(&sb.join(lock));
        let o = in_prof_bounded(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{lock}: {args:?}: {err}");
        assert!(
            err.contains(lock) && err.contains("is a fifo"),
            "{lock}: {args:?}: {err}"
        );
        if code == 1 {
            assert_eq!(sandbox_state(&sb.join("prof")), before, "{lock}: {args:?}");
        }
    }
}

/// A symbolic link in the place of a lock file was followed, creating an empty file where
/// it pointed (found by the user-side sweep); it is refused as a fifo there is, and
/// nothing is made at its target.
#[cfg(unix)]
#[test]
fn a_lock_file_that_is_a_link_is_refused_not_followed() {
    for (lock, args) in [
        ("prof/.hookpack.lock", &["install", "tool-gate"][..]),
        ("finclaw-home/.hookpack-trust.lock", &["trust", "--all"][..]),
    ] {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        let _ = std::fs::remove_file(sb.join(lock));
        std::fs::create_dir_all(sb.join(lock).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(sb.join("elsewhere.txt"), sb.join(lock)).unwrap();
        let before = sandbox_state(&sb.join("prof"));
        let o = in_prof_bounded(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{lock}: {err}");
        assert!(
            err.contains(lock) && err.contains("is a symbolic link"),
            "{lock}: {err}"
        );
        assert!(!sb.join("elsewhere.txt").exists(), "{lock}: {err}");
        if lock.starts_with("prof/") {
            assert_eq!(sandbox_state(&sb.join("prof")), before, "{lock}");
        }
    }
}

/// A folder in the place of a lock file gave "Is a directory (os error 21)", naming
/// neither the fix nor, for the trust file's lock, which verb it hindered; it is refused
/// as a fifo there is, naming the file and saying to remove it.
#[cfg(unix)]
#[test]
fn a_lock_file_that_is_a_folder_is_refused_naming_the_fix() {
    for (lock, args) in [
        ("prof/.hookpack.lock", &["install", "tool-gate"][..]),
        ("prof/.hookpack.lock", &["doctor", "--fix"][..]),
        ("finclaw-home/.hookpack-trust.lock", &["trust", "--all"][..]),
        // doctor said 'no problems' and advised `trust --all`, which stopped on it.
        ("finclaw-home/.hookpack-trust.lock", &["doctor"][..]),
    ] {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        let _ = std::fs::remove_file(sb.join(lock));
        std::fs::create_dir_all(sb.join(lock)).unwrap();
        let before = sandbox_state(&sb.join("prof"));
        let o = in_prof_bounded(&sb, args);
        // (doctor reports it among its findings, on stdout.)
        let err = String::from_utf8_lossy(&o.stderr) + String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{lock}: {args:?}: {err}");
        assert!(
            err.contains(lock) && err.contains("is a folder") && err.contains("remove it"),
            "{lock}: {args:?}: {err}"
        );
        assert_eq!(sandbox_state(&sb.join("prof")), before, "{lock}: {args:?}");
        assert!(sb.join(lock).is_dir(), "{lock}: {args:?}");
    }
}

/// Found by the hostile-input sweep: a receipt whose `index_url` is no location hookpack
/// fetches from (edited by hand to `ftp://…`) made `update` stop with "`ftp://…` is not a
/// usable location", naming neither the receipt nor a way out, for every recipe, while
/// `doctor` found no problem. It is an unreadable receipt, reported as the others are.
#[test]
fn an_unusable_index_url_in_a_receipt_is_reported_with_a_way_out() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    let receipt = sb.join("prof/hooks/.receipts/tool-gate.json");
    let mut r = read_json(&receipt);
    r["index_url"] = json!("ftp://example.com/hooks-index.json");
    std::fs::write(&receipt, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let before = snapshot(&sb.join("prof"));
    for args in [&["update"][..], &["update", "--dry-run"]] {
        let o = in_prof(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("tool-gate.json: not a readable receipt: its index `ftp://")
                && err.contains(&format!("delete it, then `hookpack install tool-gate{p}`")),
            "{args:?}: {err}"
        );
        assert_eq!(snapshot(&sb.join("prof")), before, "{args:?} wrote");
    }
    let o = in_prof(&sb, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(
            "tool-gate.json: error[receipt-unreadable]: not a readable receipt: its index `ftp://"
        ),
        "{out}"
    );
}

/// Found by the hostile-input sweep: a `config.yaml` of a few hundred bytes whose aliases
/// name aliases of aliases (nine of nine, ten deep: a "billion laughs") made `install`
/// build billions of copies, until the allocator aborted the process or the machine ran
/// out of memory. It is refused, naming the file; an alias of a few values still reads.
#[test]
fn a_config_yaml_whose_aliases_explode_is_refused() {
    let sb = Sandbox::new();
    let mut yaml = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names: Vec<char> = ('a'..='j').collect();
    for pair in names.windows(2) {
        let uses = vec![format!("*{}", pair[0]); 9].join(",");
        yaml.push_str(&format!("{}: &{} [{uses}]\n", pair[1], pair[1]));
    }
    yaml.push_str("extra: {hooks: {index_url: *j}}\n");
    sb.write("prof/config.yaml", &yaml);
    let o = sb
        .cmd()
        .args(["install", "tool-gate", "--dry-run", "--profile", "prof"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("prof/config.yaml") && err.contains("aliases"),
        "{err}"
    );

    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write(
        "prof/config.yaml",
        "where: &cat ../cat\nextra:\n  hooks:\n    index_url: *cat\n",
    );
    ok(&in_prof(&sb, &["install", "demo"]));
    assert!(sb.join("prof/hooks/demo").is_dir());
}

/// Found by the hostile-input sweep: a fifo in the place of an installed file
/// (`hooks/tool-gate/rules.json`) made `doctor`, `install` (of that version, or another)
/// and `remove`, which compare the folder with its receipt, wait for a writer for good.
/// It is a file not as installed, as a folder in its place is.
#[test]
fn an_installed_file_replaced_by_a_fifo_is_a_change_not_waited_for() {
    let cases: [(&[&str], i32); 4] = [
        (&["doctor"], 1),
        (&["install", "tool-gate"], 0),
        (&["install", "tool-gate@0.2.0"], 1),
        (&["remove", "tool-gate"], 1),
    ];
    for (args, code) in cases {
        let sb = Sandbox::new();
        ok(&in_prof(&sb, &["install", "tool-gate"]));
        let file = sb.join("prof/hooks/tool-gate/rules.json");
        std::fs::remove_file(&file).unwrap();
        mkfifo(&file);
        let o = in_prof_bounded(&sb, args);
        let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {said}");
        if code == 0 {
            // A repair puts the file back.
            assert!(file.is_file(), "{args:?}: {said}");
        } else {
            assert!(said.contains("rules.json"), "{args:?}: {said}");
        }
        // doctor calls it a change, not a missing file.
        if args == ["doctor"] {
            assert!(
                said.contains("rules.json: error[tree-modified]: is no longer the file"),
                "{said}"
            );
        }
    }
}

/// Found by the hostile-input sweep: a file of the user's named `hooks` (or
/// `hooks/.receipts`) in the profile made `install` and `remove` stop with "cannot read
/// …/hooks/.receipts/tool-gate.json: Not a directory (os error 20)", naming a file that
/// does not exist and no way on. They name the file in the way, and leave it.
#[test]
fn a_file_where_the_hooks_folders_go_is_named() {
    for (file, shown) in [
        ("prof/hooks", "prof/hooks: "),
        ("prof/hooks/.receipts", "prof/hooks/.receipts: "),
    ] {
        for args in [&["install", "tool-gate"][..], &["remove", "tool-gate"]] {
            let sb = Sandbox::new();
            sb.write(file, "mine\n");
            let before = sandbox_state(&sb.join("prof"));
            let o = in_prof(&sb, args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{file}: {args:?}: {err}");
            assert!(
                err.contains(shown) && err.contains("not a folder") && err.contains("move it"),
                "{file}: {args:?}: {err}"
            );
            assert_eq!(sandbox_state(&sb.join("prof")), before, "{file}: {args:?}");
        }
        // `doctor` reports it too (it found no problem, found by the user-side sweep).
        let sb = Sandbox::new();
        sb.write(file, "mine\n");
        let o = in_prof(&sb, &["doctor"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{file}: {out}");
        assert!(
            out.contains(&format!(
                "{file}: error[hooks-not-folder]: it is not a folder"
            )),
            "{file}: {out}"
        );
    }
}

/// Found by the hostile-input sweep: a folder in the place of the profile's journal made
/// `install` fail only at its commit ("cannot replace …: Is a directory"), leaving its
/// staging folder behind, while `doctor` called it an interrupted change that `doctor
/// --fix` (or any install) finishes, which neither did. Each now names the folder and the
/// fix, and an install stops before it stages anything.
#[test]
fn a_journal_that_is_a_folder_is_named_with_the_fix() {
    let sb = Sandbox::new();
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    std::fs::create_dir(sb.join("prof/.hookpack-journal.json")).unwrap();
    let before = sandbox_state(&sb.join("prof"));
    for args in [
        &["install", "tool-gate@0.2.0"][..],
        &["remove", "tool-gate"],
        &["doctor"],
        &["doctor", "--fix"],
    ] {
        let o = in_prof(&sb, args);
        let said = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains(".hookpack-journal.json: ")
                && said.contains("it is a folder, where hookpack writes the journal")
                && said.contains("move it"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("interrupted"), "{args:?}: {said}");
        assert_eq!(sandbox_state(&sb.join("prof")), before, "{args:?}");
    }
}

/// Found by the publisher walk-through: `install demo@0.1.0` without `--index`, for a
/// recipe installed from another index, said only "the index builtin:… has no recipe
/// `demo`" (while `update` reads the index in the receipt). It now says where the recipe
/// came from and to give that index.
#[test]
fn a_recipe_missing_from_the_default_index_names_the_index_it_came_from() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    ok(&in_profile(
        &sb,
        "p",
        &["install", "demo", "--index", "cat"],
    ));
    let o = in_profile(&sb, "p", &["install", "demo@0.1.0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let index = sb.join("cat/hooks-index.json");
    assert!(
        err.contains("the index builtin:hooks-index.json has no recipe `demo`; `demo` was installed in this profile from ")
            && err.contains(&format!("{}: give `--index {}`", index.display(), index.display())),
        "{err}"
    );
    // Never installed here: the advice stays the catalog listing.
    let o = in_profile(&sb, "q", &["install", "demo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`hookpack catalog list builtin:hooks-index.json` shows what it has"),
        "{err}"
    );
}

/// The refusal of other bytes for the installed version, of a recipe from another index
/// than the default, said to take them with `hookpack install shrec@0.1.0`, which reads the
/// default index (the built-in catalog: "has no recipe `shrec`"). Its commands name the
/// index, and run as printed, from another folder, they take the new bytes.
#[test]
fn the_advice_to_take_other_bytes_names_the_index() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "p");
    let index = sh_recipe_catalog(&sb);
    ok(&in_profile(
        &sb,
        "p",
        &["install", "shrec", "--index", "cat"],
    ));
    sb.write("src/shrec/scripts/main.sh", "echo changed; exit 0\n");
    std::fs::remove_dir_all(sb.join("cat")).unwrap();
    pack_src_into_cat(&sb);
    let o = in_profile(&sb, "p", &["install", "shrec", "--index", "cat"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let remove = format!("hookpack remove shrec{p}");
    let install = format!(
        "hookpack install shrec@0.1.0 --index {}{p}",
        index.display()
    );
    assert!(
        err.contains(&format!("`{remove}`, then `{install}`")),
        "{err}"
    );
    // Run as printed, from another folder, they act on the profile `p`.
    for command in [&remove, &install] {
        run_as_printed(&sb, command);
    }
    assert_eq!(
        std::fs::read_to_string(sb.join("p/hooks/shrec/scripts/main.sh")).unwrap(),
        "echo changed; exit 0\n"
    );
}

/// A published version never changes: the index a recipe was installed from listing other
/// bytes for the installed version was republished or altered, and `install` took them in
/// silence, as `update shrec 0.1.0 -> 0.1.0`. It is refused now, naming both digests and the
/// way to take them anyway; other bytes from elsewhere (`--archive`) are installed with a
/// warning.
#[test]
fn other_bytes_for_the_installed_version_from_its_index_are_refused() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "p");
    let index = sh_recipe_catalog(&sb);
    let install = |extra: &[&str]| {
        sb.cmd()
            .args(["install", "--profile", "p"])
            .args(extra)
            .output()
            .unwrap()
    };
    let index_arg = index.to_str().unwrap();
    ok(&install(&["shrec", "--index", index_arg]));
    let before = sandbox_state(&sb.join("p"));
    // The same version packed again from other sources, into a catalog in the same place.
    sb.write("src/shrec/scripts/main.sh", "echo changed; exit 0\n");
    std::fs::remove_dir_all(sb.join("cat")).unwrap();
    pack_src_into_cat(&sb);
    let o = install(&["shrec", "--index", index_arg]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "the index lists other bytes for `shrec` 0.1.0 than the ones installed from it"
        ),
        "{err}"
    );
    // From `cat`, not the default index: the commands name it.
    assert!(
        err.contains(&format!(
            "`hookpack remove shrec{p}`, then `hookpack install shrec@0.1.0 --index {0}{p}` (that \
             pins `shrec` to 0.1.0, where `update` then leaves it; a later `hookpack install \
             shrec --index {0}{p}` lifts the pin)",
            index.display()
        )),
        "{err}"
    );
    assert_eq!(sandbox_state(&sb.join("p")), before);
    // The same index by another spelling of its path (a link to its folder, a `..`) is
    // that index still.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(sb.join("cat"), sb.join("catlink")).unwrap();
        std::fs::create_dir_all(sb.join("sub")).unwrap();
        for other in ["catlink", "sub/../cat"] {
            let o = install(&["shrec", "--index", other]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{other}: {err}");
            assert!(
                err.contains("the index lists other bytes"),
                "{other}: {err}"
            );
            assert_eq!(sandbox_state(&sb.join("p")), before, "{other}");
        }
    }
    // From elsewhere, other bytes are what the user asked for: installed, with a warning.
    let archive = sb.join("cat/hooks-shrec-0.1.0.tar.gz");
    let o = install(&["--archive", archive.to_str().unwrap()]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: `shrec` 0.1.0 from")
            && err.contains("has other bytes than the 0.1.0 installed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.join("p/hooks/shrec/scripts/main.sh")).unwrap(),
        "echo changed; exit 0\n"
    );
}

/// `--sha256` takes the digest in capitals too, as Windows tools (`certutil`,
/// `Get-FileHash`) print it; it was a usage error (exit 2).
#[test]
fn a_sha256_flag_in_capitals_is_read() {
    let sb = Sandbox::new();
    sh_recipe_catalog(&sb);
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let digest = sums
        .lines()
        .find(|l| l.ends_with("  hooks-shrec-0.1.0.tar.gz"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_ascii_uppercase();
    ok(&sb
        .cmd()
        .args(["install", "--profile", "p", "--archive"])
        .arg(sb.join("cat/hooks-shrec-0.1.0.tar.gz"))
        .args(["--sha256", &digest])
        .output()
        .unwrap());
    assert!(sb.join("p/hooks/shrec/scripts/main.sh").is_file());
}

/// `update` said "everything is up to date" when the index the recipe came from lists other
/// bytes for the installed version (found by review): `install` refuses those bytes, and
/// `update` now warns of them, leaving the installed files as they are.
#[test]
fn update_warns_of_other_bytes_for_the_installed_version() {
    let sb = Sandbox::new();
    let index = sh_recipe_catalog(&sb);
    let index_arg = index.to_str().unwrap();
    ok(&sb
        .cmd()
        .args(["install", "shrec", "--profile", "p", "--index", index_arg])
        .output()
        .unwrap());
    sb.write("src/shrec/scripts/main.sh", "echo changed; exit 0\n");
    std::fs::remove_dir_all(sb.join("cat")).unwrap();
    pack_src_into_cat(&sb);
    let before = sandbox_state(&sb.join("p"));
    for dry_run in [true, false] {
        let mut c = sb.cmd();
        c.args(["update", "--profile", "p"]);
        if dry_run {
            c.arg("--dry-run");
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(
            err.contains(
                "warning: the index lists other bytes for `shrec` 0.1.0 than the ones installed \
                 from it"
            ),
            "dry run {dry_run}: {err}"
        );
        assert_eq!(sandbox_state(&sb.join("p")), before);
    }
    let o = sb
        .cmd()
        .args(["update", "--profile", "p", "--dry-run", "--format", "json"])
        .output()
        .unwrap();
    let report = one_json_document(&o);
    assert_eq!(report[0]["state"], "current", "{report:#}");
    assert!(report[0]["bytes_changed"].is_string(), "{report:#}");
}

#[test]
fn the_help_of_profile_names_every_fallback() {
    // It gave `$FINCLAW_HOME/profiles/<$FINCLAW_PROFILE or active-profile>`, leaving out
    // `~/.finclaw` when FINCLAW_HOME is unset and the profile `default` when neither names
    // one (found by review).
    let sb = Sandbox::new();
    for verb in [
        "install", "remove", "update", "list", "trust", "revoke", "run", "doctor",
    ] {
        let o = sb.cmd().args([verb, "--help"]).output().unwrap();
        ok(&o);
        let help = String::from_utf8_lossy(&o.stdout);
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("--profile"))
            .unwrap();
        assert!(
            line.contains(
                "[default: $FINCLAW_HOME (else ~/.finclaw)/profiles/<$FINCLAW_PROFILE, else the file active-profile, else default>]"
            ),
            "{verb}: {line}"
        );
    }
}

/// `install ./hooks-x-1.0.0.tar.gz` (an archive where an id goes) said only that it is no
/// valid id; it names --archive (found by review).
#[test]
fn an_archive_given_as_an_id_is_told_to_use_archive() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    sb.write("dl/hooks-demo-0.1.0.tar.gz", "not read");
    for spec in [
        "dl/hooks-demo-0.1.0.tar.gz",
        "./hooks-demo-0.1.0.tar.zst",
        "https://example.com/hooks-demo-0.1.0.tar.gz",
    ] {
        let o = in_prof(&sb, &["install", spec]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        assert!(
            err.contains(&format!(
                "error: ID `{spec}` is invalid: it names an archive, not a recipe id; install an archive with `hookpack install --archive {spec} --sha256 HEX{p}`"
            )),
            "{spec}: {err}"
        );
    }
    assert!(!sb.join("prof").exists());
}

/// `remove ID --profile ./dmeo` (a misspelt profile) said only that the recipe is not
/// installed there, as for a profile that exists; `remove`, `update ID` and `update` say
/// that the folder does not exist, as `trust` and `list` do, and create nothing (found by
/// review).
#[test]
fn remove_and_update_on_a_missing_profile_say_the_folder_does_not_exist() {
    let sb = Sandbox::new();
    let says = "that folder does not exist; check --profile, $FINCLAW_PROFILE and $FINCLAW_HOME/active-profile";
    for args in [&["remove", "tool-gate"][..], &["update", "tool-gate"]] {
        let o = in_profile(&sb, "dmeo", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("`tool-gate` is not installed in ") && err.contains(says),
            "{args:?}: {err}"
        );
    }
    let o = in_profile(&sb, "dmeo", &["update"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no recipes are installed in ") && err.contains(says),
        "{err}"
    );
    assert!(!sb.join("dmeo").exists());
    // In a profile that exists, the message stays as it was.
    std::fs::create_dir(sb.join("demo")).unwrap();
    let o = in_profile(&sb, "demo", &["remove", "tool-gate"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("does not exist"), "{err}");
}

/// `ID@v0.2.1` (a version as a git tag spells it) was refused with semver's "unexpected
/// character 'v' while parsing major version number"; it names the spec to write (found by
/// review).
#[test]
fn a_version_written_with_a_v_is_told_to_drop_it() {
    let sb = Sandbox::new();
    let o = in_prof(&sb, &["install", "tool-gate@v0.2.1", "--dry-run"]);
    fails_saying(&o, 2, "`tool-gate@v0.2.1` is not ID, ID@VERSION or ID@RANGE: versions are written without a `v`: `tool-gate@0.2.1`");
}

/// An archive uploaded under the wrong name (0.1.0's bytes as 0.2.0's): install refuses it
/// before extracting anything, and says which version and which URL hold other bytes than
/// the index lists, and how the catalog's maintainer finds them; it named the id alone.
#[test]
fn a_wrong_archive_on_the_server_is_named_by_version_and_url() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    std::fs::copy(
        sb.join("cat/hooks-demo-0.1.0.tar.gz"),
        sb.join("cat/hooks-demo-0.2.0.tar.gz"),
    )
    .unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("hooks-index.json");
    let o = in_profile(&sb, "p", &["install", "demo", "--index", &index]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let url = server.url("hooks-demo-0.2.0.tar.gz");
    // The index's size is that of 0.2.0's archive, which differs by a byte or so: the size
    // or the digest is what is found wrong first, and each names the same.
    assert!(err.contains("mismatch for demo: the index says"), "{err}");
    assert!(
        err.contains(&format!(
            "nothing was extracted ({url}, which the index lists for demo 0.2.0, holds other \
             bytes than the index says; the catalog's maintainer finds such archives with \
             `hookpack catalog verify`)"
        )),
        "{err}"
    );
    assert!(!sb.join("p/hooks.json").exists());
    assert!(!sb.join("p/hooks/demo").exists());
}

/// An archive cut short on the server (an upload that stopped midway) is said to be short:
/// the size is checked before the digest, which any change of bytes fails and which said
/// only "checksum mismatch".
#[test]
fn a_truncated_archive_on_the_server_is_a_size_mismatch() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let archive = sb.join("cat/hooks-demo-0.1.0.tar.gz");
    let bytes = std::fs::read(&archive).unwrap();
    std::fs::write(&archive, &bytes[..bytes.len() / 2]).unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("hooks-index.json");
    let o = in_profile(&sb, "p", &["install", "demo", "--index", &index]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "size mismatch for demo: the index says {} bytes, the download is {}; nothing was \
             extracted",
            bytes.len(),
            bytes.len() / 2
        )),
        "{err}"
    );
    assert!(!sb.join("p/hooks.json").exists());
}

/// An archive the index lists that the server does not have (not uploaded yet, or deleted):
/// install said only "URL answered HTTP 404". It says which version the index lists there,
/// that the catalog lacks it, and the ways on; the exit code and JSON kind stay. The advice
/// carries `--index` (it lacked it, found by a README walk-through: run as printed, it
/// installed from the default catalog).
#[test]
fn an_archive_the_server_lacks_is_said_to_be_missing_from_the_catalog() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "p");
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    std::fs::remove_file(sb.join("cat/hooks-demo-0.2.0.tar.gz")).unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let index = server.url("hooks-index.json");
    let url = server.url("hooks-demo-0.2.0.tar.gz");
    let o = in_profile(&sb, "p", &["install", "demo", "--index", &index]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "error: {url} answered HTTP 404: the index lists it for demo 0.2.0, but the catalog \
             does not hold it; its maintainer finds such archives with `hookpack catalog \
             verify`, and `hookpack install demo@VERSION --index {index}{p}` takes another \
             version"
        )),
        "{err}"
    );
    let o = in_profile(
        &sb,
        "p",
        &["install", "demo", "--index", &index, "--format", "json"],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "fetch", "{doc}");
    assert_eq!(doc["error"]["exit_code"], 1, "{doc}");
    assert!(!sb.join("p/hooks.json").exists());
}

/// A private index (`user:password@` in its URL) packed with `--asset-base-url` names its
/// archives by absolute URL on its own host: they were fetched without the credentials, so
/// such a server answered 401 and nothing installed (found by the user-flow sweep). They
/// go to the index's origin alone: an archive on another host gets none.
#[test]
fn a_private_index_sends_its_credentials_to_absolute_archive_urls_of_its_origin() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    std::fs::create_dir_all(sb.join("other")).unwrap();
    std::fs::copy(
        sb.join("cat/hooks-demo-0.1.0.tar.gz"),
        sb.join("other/hooks-demo-0.1.0.tar.gz"),
    )
    .unwrap();
    let private = |_: &str, headers: &str| {
        let authorized = headers
            .lines()
            .any(|h| h.eq_ignore_ascii_case("authorization: Basic bWU6czNjcmV0"));
        (!authorized).then(|| {
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
        })
    };
    let server = HttpServer::serve_by_headers(sb.join("cat"), Box::new(private));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let record = seen.clone();
    let other = HttpServer::serve_by_headers(
        sb.join("other"),
        Box::new(move |_, headers| {
            record.lock().unwrap().push_str(headers);
            None
        }),
    );
    let index_path = sb.join("cat/hooks-index.json");
    let listed = read_json(&index_path);
    let with_password = server
        .url("hooks-index.json")
        .replace("http://", "http://me:s3cret@");
    for (archive_url, code) in [
        (server.url("hooks-demo-0.1.0.tar.gz"), 0),
        (other.url("hooks-demo-0.1.0.tar.gz"), 0),
    ] {
        let mut index = listed.clone();
        index["recipes"][0]["versions"][0]["url"] = json!(archive_url);
        std::fs::write(&index_path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
        let _ = std::fs::remove_dir_all(sb.join("prof"));
        let o = in_prof(&sb, &["install", "demo", "--index", &with_password]);
        let all =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{archive_url}: {all}");
        assert!(!all.contains("s3cret"), "{all}");
        assert!(sb.join("prof/hooks/demo/recipe.json").is_file(), "{all}");
        let o = sb
            .cmd()
            .args(["catalog", "verify", &with_password])
            .output()
            .unwrap();
        let out =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(!out.contains("answered HTTP 401"), "{archive_url}: {out}");
    }
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty(), "the other host was asked for the archive");
    assert!(
        !seen.to_ascii_lowercase().contains("authorization"),
        "credentials went to another host: {seen}"
    );
    drop(seen);
    // Without the credentials, the 401 says how to give them (found by the hostile-network
    // sweep: it said "answered HTTP 401" alone).
    let _ = std::fs::remove_dir_all(sb.join("prof"));
    let o = in_prof(
        &sb,
        &[
            "install",
            "demo",
            "--index",
            &server.url("hooks-index.json"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("answered HTTP 401, which refuses a request without the right credentials")
            && err.contains("`https://USER:TOKEN@host/…`"),
        "{err}"
    );
}

/// A real `update --format json` left out the recipes whose index could not be read (gone,
/// or its server down): `[]` came out, as for a profile with nothing to update, while
/// stderr and the exit code said they failed (found by the user-flow sweep). Each is listed
/// as left, `failed`, with the error, as a recipe whose own update failed is.
#[test]
fn update_lists_a_recipe_whose_index_cannot_be_read_in_json() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "alpha");
    std::fs::remove_dir_all(sb.join("cat")).unwrap();
    let o = in_prof(&sb, &["update", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = report.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{report:#}");
    let alpha = &entries[0];
    assert_eq!(alpha["id"], "alpha", "{report:#}");
    assert_eq!(alpha["action"], "left", "{report:#}");
    assert_eq!(alpha["reason"], "failed", "{report:#}");
    assert_eq!(alpha["from"], "0.1.0", "{report:#}");
    assert!(
        alpha["error"]
            .as_str()
            .unwrap()
            .contains("hooks-index.json"),
        "{report:#}"
    );
}

/// `update --dry-run --format json` lists a recipe whose index cannot be read with the
/// state `failed` and the error, and the text lines say `failed` too; it printed `[]`, as
/// for a profile with nothing installed, while the exit code said it failed.
#[test]
fn update_dry_run_lists_a_recipe_whose_index_cannot_be_read() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "alpha");
    std::fs::remove_dir_all(sb.join("cat")).unwrap();
    let o = in_prof(&sb, &["update", "--dry-run", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = report.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{report:#}");
    let alpha = &entries[0];
    assert_eq!(alpha["id"], "alpha", "{report:#}");
    assert_eq!(alpha["state"], "failed", "{report:#}");
    assert_eq!(alpha["installed"], "0.1.0", "{report:#}");
    let error = alpha["error"].as_str().unwrap();
    assert!(error.contains("hooks-index.json"), "{report:#}");
    let o = in_prof(&sb, &["update", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("failed       alpha installed 0.1.0 available -"),
        "{out}"
    );
}

/// An `index_url` in `config.yaml` that is not a string was named by the YAML parser's
/// debug dump (`found Array([Integer(1), Integer(2)])`, `found Hash({String("a"): …})`),
/// found by the user-flow sweep: it says what kind of value it found, and to quote it.
#[test]
fn an_index_url_in_config_yaml_that_is_not_a_string_is_named_plainly() {
    let sb = Sandbox::new();
    for (value, kind) in [
        ("[1, 2]", "found a list"),
        ("{a: b}", "found a mapping"),
        ("12", "found the number 12"),
        ("true", "found the boolean true"),
    ] {
        sb.write(
            "prof/config.yaml",
            format!("extra:\n  hooks:\n    index_url: {value}\n"),
        );
        let o = in_prof(&sb, &["install", "tool-gate"]);
        fails_saying(
            &o,
            1,
            "prof/config.yaml: extra.hooks.index_url must be a string",
        );
        fails_saying(&o, 1, kind);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("Integer(") && !err.contains("Array("),
            "{err}"
        );
        assert!(!sb.join("prof/hooks").exists(), "{err}");
    }
}

/// Found by review: a recipe that installs with warnings (a matcher on an event hosts
/// read none on, a field they do not read) installed without a word of them, while a
/// failed install printed the same warnings. They are said, at their place in the archive.
#[test]
fn an_install_says_what_validation_warned_of_in_the_recipe() {
    let sb = Sandbox::new();
    let mut m = manifest("demo");
    m["hooks"] = json!({"Stop": [{"matcher": "exec", "hooks": [
        {"id": "a", "type": "command", "command": "node scripts/main.js"}]}]});
    write_recipe(&sb, "src/demo", &m);
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .output()
        .unwrap();
    ok(&o);
    let o = in_prof(&sb, &["install", "demo", "--index", "cat"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("warning: ") && l.contains("[matcher-ignored]"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("hooks-demo-0.1.0.tar.gz!demo-0.1.0/recipe.json:")
            && line.contains("(at /hooks/Stop/0/matcher)"),
        "{line}"
    );
}

/// Found by a README walk-through: a `config.yaml` that is no YAML (a flow mapping left
/// open) was refused in the parser's words alone, "… at byte 31 line 2 column 1", with no
/// fix, where its other errors name one.
#[test]
fn a_config_yaml_with_a_syntax_error_says_where_and_the_fix() {
    let sb = Sandbox::new();
    sb.write("prof/config.yaml", "extra:\n  hooks: {index_url: \"x\"\n");
    let o = in_prof(&sb, &["install", "demo", "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("config.yaml: line 3, column 1: while parsing a flow mapping")
            && err.contains("fix the syntax there")
            && !err.contains("at byte"),
        "{err}"
    );
}

/// Found by review: a key given twice in `config.yaml` was refused in the YAML loader's
/// words, `String("extra"): duplicated key in mapping at byte 47 line 6 column 1`, in
/// Rust's notation, past the end of a five-line file, with no fix. It names the key and
/// the fix.
#[test]
fn a_key_given_twice_in_config_yaml_is_named_with_the_fix() {
    let sb = Sandbox::new();
    sb.write(
        "prof/config.yaml",
        "extra:\n  hooks:\n    index_url: a\nextra:\n  x: 1\n",
    );
    let o = in_prof(&sb, &["install", "tool-gate", "--dry-run"]);
    fails_saying(
        &o,
        1,
        "prof/config.yaml: the key `extra` is given twice in one mapping (lines 1, 4)",
    );
    fails_saying(&o, 1, "keep one, merging what each holds");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("String(") && !err.contains("line 6"), "{err}");
    // A number for a key is named as written; a list for a key, not in Rust's notation.
    for (text, says) in [
        (
            "extra:\n  1: a\n  1: b\n",
            "the key `1` is given twice in one mapping (lines 2, 3)",
        ),
        (
            "? [x]\n: 1\n? [x]\n: 2\n",
            "a key is given twice in one mapping",
        ),
    ] {
        sb.write("prof/config.yaml", text);
        let o = in_prof(&sb, &["install", "tool-gate", "--dry-run"]);
        fails_saying(&o, 1, says);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("Integer(") && !err.contains("Array("),
            "{err}"
        );
    }
}

/// A `config.yaml` that means to name the index but is shaped so that no
/// `extra.hooks.index_url` is there (the path written as one dotted key, `extra` or
/// `hooks` that is no mapping) made install take the built-in catalog in silence (found by
/// the user-flow sweep): it is refused, naming the key and how to write it.
#[test]
fn a_config_yaml_that_misplaces_the_index_url_is_refused() {
    let sb = Sandbox::new();
    for (text, said) in [
        (
            "extra.hooks.index_url: cat\n",
            "with a dotted key (`extra.hooks.index_url`)",
        ),
        (
            "extra:\n  hooks.index_url: cat\n",
            "with a dotted key (`hooks.index_url` in extra)",
        ),
        ("extra: 5\n", "extra is the number 5, not a mapping"),
        (
            "extra:\n  hooks: [1]\n",
            "extra.hooks is a list, not a mapping",
        ),
        (
            "extra:\n  hooks: cat\n",
            "extra.hooks is a string, not a mapping",
        ),
    ] {
        sb.write("prof/config.yaml", text);
        let o = in_prof(&sb, &["install", "tool-gate"]);
        fails_saying(&o, 1, "prof/config.yaml: ");
        fails_saying(&o, 1, said);
        fails_saying(&o, 1, "nest it: `extra: {hooks: {index_url: URL}}`");
        assert!(!sb.join("prof/hooks").exists(), "{text}");
    }
    // Other settings of the host's beside it are no concern of hookpack's.
    sb.write("prof/config.yaml", "model: x\nextra:\n  theme: dark\n");
    ok(&in_prof(&sb, &["install", "tool-gate"]));
}

/// An `active-profile` saved by an editor that starts files with a byte-order mark named
/// the profile `\u{feff}work`, which reads as `work` everywhere it is shown: install
/// created that second folder beside `work`, and `list` said the profile did not exist
/// while `profiles/work` was there (found by the user-flow sweep). A zero-width character
/// in a profile name is refused as a control character is, naming it. The name is shown
/// with the character escaped (`\u{feff}work`): shown raw, it read as `work` in the
/// refusal too (found by the README walkthrough).
#[test]
fn a_profile_name_with_a_byte_order_mark_or_zero_width_character_is_refused() {
    let sb = Sandbox::new();
    for (name, needle, shown) in [
        ("\u{feff}work", "U+FEFF", "\\u{feff}work"),
        ("wo\u{200b}rk", "U+200B", "wo\\u{200b}rk"),
        ("work\u{2060}", "U+2060", "work\\u{2060}"),
    ] {
        let file = sb.write("finclaw-home/active-profile", format!("{name}\n"));
        let o = sb.cmd().args(["install", "tool-gate"]).output().unwrap();
        fails_saying(&o, 1, "is not a profile name");
        fails_saying(&o, 1, needle);
        fails_saying(&o, 1, shown);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains(name), "shown raw: {err}");
        fails_saying(&o, 1, &file.display().to_string());
        let o = sb
            .cmd()
            .args(["list"])
            .env("FINCLAW_PROFILE", name)
            .output()
            .unwrap();
        fails_saying(&o, 1, "$FINCLAW_PROFILE");
        fails_saying(&o, 1, needle);
    }
    assert!(!sb.join("finclaw-home/profiles").exists());
}

/// A `config.yaml` saved with a byte-order mark (as some Windows editors save it; YAML
/// allows one at the start of a stream) had its `extra.hooks.index_url` ignored in silence:
/// the mark was read as part of the first key, so install took the built-in catalog
/// instead of the index the profile names (found by the user-flow sweep).
#[test]
fn a_config_yaml_with_a_byte_order_mark_still_names_the_index() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    sb.write(
        "prof/config.yaml",
        "\u{feff}extra:\r\n  hooks:\r\n    index_url: ../cat\r\n",
    );
    let o = in_prof(&sb, &["install", "demo"]);
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("(config)"),
        "{o:?}"
    );
    assert!(sb.join("prof/hooks/demo").is_dir());
}

/// `install a b c` fetched the index once per recipe named, and `update` once more for each
/// recipe it updated: a server that does not answer was waited for (three attempts each)
/// as many times, and a catalog republished in between could hand one command two
/// snapshots (found by the user-flow sweep). Each index is fetched once per command.
#[test]
fn an_index_is_fetched_once_per_command() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "alpha", &[("0.1.0", "0.13.0")]);
    catalog_with_versions(&sb, "beta", &[("0.1.0", "0.13.0")]);
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = hits.clone();
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |path| {
            if path == "/hooks-index.json" {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            None
        }),
    );
    let index = server.url("hooks-index.json");
    let fetches = |args: &[&str]| {
        hits.store(0, std::sync::atomic::Ordering::SeqCst);
        ok(&in_prof(&sb, &[args, &["--index", &index]].concat()));
        hits.load(std::sync::atomic::Ordering::SeqCst)
    };
    assert_eq!(fetches(&["install", "alpha", "beta"]), 1);
    catalog_with_versions(&sb, "alpha", &[("0.2.0", "0.13.0")]);
    catalog_with_versions(&sb, "beta", &[("0.2.0", "0.13.0")]);
    assert_eq!(fetches(&["update"]), 1);
    for id in ["alpha", "beta"] {
        let receipt = read_json(&sb.join(&format!("prof/hooks/.receipts/{id}.json")));
        assert_eq!(receipt["version"], "0.2.0", "{id}");
    }
}

/// Found by the hostile-catalog sweep: a symbolic link in the archive's place in a catalog
/// folder was read through, wherever it led (install printed the size of the file it
/// found there). It is refused unread, as a URL leading out of the folder is, unless
/// `--allow-outside` is given; the profile is untouched.
#[cfg(unix)]
#[test]
fn a_symbolic_link_in_the_catalog_folder_is_read_only_when_allowed() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    std::fs::rename(
        sb.join("cat/hooks-demo-0.1.0.tar.gz"),
        sb.join("hooks-demo-0.1.0.tar.gz"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        sb.join("hooks-demo-0.1.0.tar.gz"),
        sb.join("cat/hooks-demo-0.1.0.tar.gz"),
    )
    .unwrap();
    let install = |extra: &[&str]| {
        sb.cmd()
            .args(["install", "demo", "--index", "cat", "--profile", "p"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = install(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "names the archive of demo 0.1.0 by `hooks-demo-0.1.0.tar.gz`, which leads through \
             a symbolic link in the catalog folder"
        ) && err.contains("nothing there was read"),
        "{err}"
    );
    assert!(!sb.join("p/hooks/demo").exists(), "{err}");
    let o = install(&["--allow-outside"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("as --allow-outside asks"), "{err}");
    assert!(sb.join("p/hooks/demo/recipe.json").is_file());
}

/// An index on disk whose archive URL leads out of its folder (`../x`, or a `file://` URL):
/// SPEC 1.5 allows it, but the index may be anyone's and could name any file of this
/// machine, so install refuses it unread (exit 1) unless `--allow-outside` is given. With
/// it, install reads the archive there, with a warning naming where it was read and that
/// the folder alone does not hold it, whether the index is given as a folder, a file or a
/// file:// URL. A file there that is not the archive listed is refused by its size or
/// sha256, and a fifo unread, the profile untouched.
#[test]
fn a_local_index_url_that_leads_out_of_the_catalog_is_read_only_when_allowed() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let outside = sb.join("hooks-demo-0.1.0.tar.gz");
    std::fs::copy(sb.join("cat/hooks-demo-0.1.0.tar.gz"), &outside).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(sb.join("fifo.tar.gz"))
        .status()
        .unwrap();
    assert!(made.success());
    let index_path = sb.join("cat/hooks-index.json");
    let listed = read_json(&index_path);
    let file_url = format!("file://{}", outside.display());
    let index_url = format!("file://{}", index_path.display());
    let fifo = format!("file://{}", sb.join("fifo.tar.gz").display());
    let set_url = |url: &str| {
        let mut index = listed.clone();
        index["recipes"][0]["versions"][0]["url"] = json!(url);
        sb.write(
            "cat/hooks-index.json",
            serde_json::to_vec_pretty(&index).unwrap(),
        );
    };
    let install_with = |given: &str, extra: &[&str]| {
        sb.cmd()
            .args(["install", "demo", "--index", given, "--profile", "p"])
            .args(extra)
            .output()
            .unwrap()
    };
    let install = |given: &str| install_with(given, &["--allow-outside"]);
    for (url, why, read) in [
        (
            "../hooks-demo-0.1.0.tar.gz",
            "leads out of the catalog folder",
            "/../hooks-demo-0.1.0.tar.gz",
        ),
        (
            file_url.as_str(),
            "is a file:// URL",
            &*outside.display().to_string(),
        ),
    ] {
        set_url(url);
        for given in ["cat", "cat/hooks-index.json", index_url.as_str()] {
            let _ = std::fs::remove_dir_all(sb.join("p"));
            let o = install_with(given, &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{given}: {err}");
            assert!(
                err.contains(&format!(
                    "names the archive of demo 0.1.0 by `{url}`, which {why}"
                )) && err.contains("nothing there was read")
                    && err.contains("`--allow-outside` reads it"),
                "{given}: {err}"
            );
            assert!(!sb.join("p/hooks/demo").exists(), "{given}: {err}");
            let o = install(given);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{given}: {err}");
            assert!(
                err.contains(&format!(
                    "names the archive of demo 0.1.0 by `{url}`, which {why}"
                )) && err.contains("it was read from ")
                    && err.contains("as --allow-outside asks")
                    && err.contains(&format!(
                        "{read}, as --allow-outside asks, and its sha256 agrees"
                    ))
                    && err.contains("its sha256 agrees with the index"),
                "{given}: {err}"
            );
            assert!(sb.join("p/hooks/demo/recipe.json").is_file(), "{given}");
        }
    }
    let _ = std::fs::remove_dir_all(sb.join("p"));
    for (url, says) in [
        ("../../../../../../../../../etc/passwd", "size"),
        ("file:///etc/passwd", "size"),
        (fifo.as_str(), "fifo"),
    ] {
        set_url(url);
        let o = install("cat");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{url}: {err}");
        assert!(err.contains(says), "{url}: {err}");
        assert!(!sb.join("p/hooks/demo").exists(), "{url}: {err}");
    }
}

/// A recipe installed from an index other than the one `install` reads by default (a
/// catalog folder given with `--index`): doctor advised `install demo@0.1.0`, which reads the
/// default index, the built-in catalog, which has no `demo`. The advice names the index the
/// recipe came from; for one from the default index it stays as it was.
#[test]
fn doctor_advises_the_index_a_recipe_was_installed_from() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    pack_src_into_cat(&sb);
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat"]));
    ok(&in_prof(&sb, &["install", "tool-gate"]));
    let said = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let main_js = sb.join("prof/hooks/demo/scripts/main.js");
    std::fs::write(&main_js, "// changed\n").unwrap();
    std::fs::write(sb.join("prof/hooks/tool-gate/README.md"), "changed\n").unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let text = said(&o);
    let index = sb.join("cat/hooks-index.json");
    let p = profile_flag(&sb, "prof");
    let command = format!("hookpack install demo@0.1.0 --index {}{p}", index.display());
    assert!(text.contains(&format!("`{command}` restores it")), "{text}");
    let tool_gate = text.find("`hookpack install tool-gate@").expect(&text);
    let advice = &text[tool_gate + 1..];
    let advice = &advice[..advice.find('`').unwrap()];
    assert!(!advice.contains("--index"), "{advice}");
    // Run as advised, from another folder, it restores the recipe.
    run_as_printed(&sb, &command);
    assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
}

/// Advice named no profile: after a command given `--profile DIR`, the printed `hookpack
/// install ID@VERSION` (or `doctor --fix`, `remove ID`), run as printed, acted on the profile
/// hookpack finds by itself (`default` under $FINCLAW_HOME), not on DIR. Every command in
/// advice now carries `--profile DIR`, absolute and quoted for a shell; run by `sh` as
/// printed, from another folder, this one restores DIR's recipe and makes no other
/// profile. The JSON report says the same.
#[test]
fn advice_after_a_profile_flag_names_that_profile_and_runs_from_a_shell() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    pack_src_into_cat(&sb);
    ok(&in_profile(
        &sb,
        "my prof",
        &["install", "demo", "--index", "cat"],
    ));
    let main_js = sb.join("my prof/hooks/demo/scripts/main.js");
    std::fs::write(&main_js, "// changed\n").unwrap();
    let o = in_profile(&sb, "my prof", &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let said = String::from_utf8_lossy(&o.stdout);
    let command = format!(
        "hookpack install demo@0.1.0 --index {} --profile '{}'",
        sb.join("cat/hooks-index.json").display(),
        sb.join("my prof").display()
    );
    assert!(said.contains(&format!("`{command}` restores it")), "{said}");
    let o = in_profile(&sb, "my prof", &["doctor", "--format", "json"]);
    let report = one_json_document(&o);
    let message = report["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains(&format!("`{command}`")), "{report}");
    // Typed into a shell as printed, from another folder.
    std::fs::create_dir_all(sb.join("elsewhere")).unwrap();
    ok(&(sb.shell("sh", &command))
        .current_dir(sb.join("elsewhere"))
        .output()
        .unwrap());
    assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
    ok(&in_profile(&sb, "my prof", &["doctor"]));
    assert!(!sb.join("finclaw-home/profiles").exists());
}

/// A recipe installed from a catalog folder or an archive whose path holds a backquote
/// (`cat`x`): doctor's restore advice quotes that path for a shell, and the advice's
/// `--profile` was put at the path's backquote, as if the advice ended there:
/// `hookpack install demo@0.1.0 --index '/…/cat --profile /…/prof`x/hooks-index.json'`,
/// which names another index and no profile. A backquote inside a quoted word is the
/// path's; the option goes after the command, which run as printed from another folder
/// restores the recipe.
#[test]
fn advice_quoting_a_path_with_a_backquote_gets_its_profile_after_the_path() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat`x"])
        .output()
        .unwrap());
    let archive = sb.join("cat`x/hooks-demo-0.1.0.tar.gz");
    let sha = read_json(&sb.join("cat`x/hooks-index.json"))["recipes"][0]["versions"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&in_prof(&sb, &["install", "demo", "--index", "cat`x"]));
    let archive_text = archive.display().to_string();
    ok(&in_profile(
        &sb,
        "prof2",
        &["install", "--archive", &archive_text, "--sha256", &sha],
    ));
    let index = sb.join("cat`x/hooks-index.json");
    for (prof, restore) in [
        (
            "prof",
            format!(
                "hookpack install demo@0.1.0 --index '{}'{}",
                index.display(),
                profile_flag(&sb, "prof")
            ),
        ),
        (
            "prof2",
            format!(
                "hookpack install --archive '{archive_text}' --sha256 {sha}{}",
                profile_flag(&sb, "prof2")
            ),
        ),
    ] {
        let main_js = sb.join(prof).join("hooks/demo/scripts/main.js");
        std::fs::write(&main_js, "// changed\n").unwrap();
        let o = in_profile(&sb, prof, &["doctor"]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(said.contains(&format!("`{restore}` restores it")), "{said}");
        let o = in_profile(&sb, prof, &["doctor", "--format", "json"]);
        let report = one_json_document(&o);
        let message = report["problems"][0]["message"].as_str().unwrap();
        assert!(message.contains(&format!("`{restore}`")), "{report}");
        run_as_printed(&sb, &restore);
        assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
    }
}

/// The restore advice for a recipe from a non-default index named `--index`, but the note
/// on the pin it records said "a later `hookpack install demo` lifts the pin", which reads
/// the default index (the built-in catalog, which has no `demo`) and failed; with a pin of
/// the user's, "`hookpack install demo@^0.1` then records your pin again" failed alike.
/// Both commands name the index now, and each, run as printed, does what the note says.
#[test]
fn doctor_s_note_on_the_pin_names_the_index_a_recipe_was_installed_from() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    pack_src_into_cat(&sb);
    let index = sb.join("cat/hooks-index.json");
    let main_js = sb.join("prof/hooks/demo/scripts/main.js");
    let receipt = sb.join("prof/hooks/.receipts/demo.json");
    for (installed_as, after) in [("demo", "demo"), ("demo@^0.1", "'demo@^0.1'")] {
        ok(&in_prof(&sb, &["install", installed_as, "--index", "cat"]));
        std::fs::write(&main_js, "// changed\n").unwrap();
        let o = in_prof(&sb, &["doctor"]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        let p = profile_flag(&sb, "prof");
        let restore = format!("hookpack install demo@0.1.0 --index {}{p}", index.display());
        let then = format!("hookpack install {after} --index {}{p}", index.display());
        assert!(
            said.contains(&format!("`{restore}` restores it"))
                && said.contains(&format!("`{then}`")),
            "{installed_as}: {said}"
        );
        run_as_printed(&sb, &restore);
        assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
        assert_eq!(read_json(&receipt)["pin"], "0.1.0", "{installed_as}");
        run_as_printed(&sb, &then);
        let pin = &read_json(&receipt)["pin"];
        match installed_as {
            "demo" => assert!(pin.is_null(), "the pin was not lifted: {pin}"),
            _ => assert_eq!(pin, "^0.1", "the pin was not put back"),
        }
        ok(&in_prof(&sb, &["remove", "demo"]));
    }
}

/// `update` of a recipe pinned from another index than the default said "`hookpack install
/// demo` takes the newest and lifts the pin", which reads the default index (the built-in
/// catalog, which has no `demo`: "has no recipe `demo`"). It names the index it compared
/// with, and the command, run as printed from another folder, lifts the pin.
#[test]
fn update_s_advice_on_a_pin_names_the_index_it_compared_with() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0"), ("0.2.0", "0.13.0")]);
    ok(&in_prof(&sb, &["install", "demo@0.1.0", "--index", "cat"]));
    ok(&in_prof(&sb, &["install", "tool-gate@0.1.0"]));
    let o = in_prof(&sb, &["update"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let index = sb.join("cat/hooks-index.json");
    let command = format!("hookpack install demo --index {}{p}", index.display());
    assert!(
        err.contains(&format!("`{command}` takes the newest and lifts the pin"))
            && err.contains(&format!(
                "`hookpack install demo@REQ --index {}{p}` pins another",
                index.display()
            ))
            && err.contains(&format!("`hookpack install tool-gate{p}` takes the newest")),
        "{err}"
    );
    run_as_printed(&sb, &command);
    let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
    assert_eq!(
        (&receipt["version"], receipt.get("pin")),
        (&json!("0.2.0"), None)
    );
}

/// doctor's advice for a recipe installed with `install --archive FILE` named `install
/// ID@VERSION`, which looks in the index in use, and that need not list it (here the
/// built-in catalog, which has no `demo` at all). The receipt says how it was installed (no
/// index; the archive by absolute path, and its digest): the advice names that archive
/// with its digest, a command that restores the recipe, from any folder; an archive no
/// longer there is said to be gone; a receipt of an earlier release (no `index_url` key,
/// the archive as given, relative) still reads, and the advice says what the path is
/// relative to.
#[test]
fn doctor_advises_the_archive_a_recipe_was_installed_from() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    write_recipe(&sb, "src/demo", &manifest("demo"));
    pack_src_into_cat(&sb);
    let archive = sb.join("cat/hooks-demo-0.1.0.tar.gz");
    let sha = hookpack::sha256::Sha256::of(&std::fs::read(&archive).unwrap()).to_string();
    let rel = "cat/hooks-demo-0.1.0.tar.gz";
    ok(&in_prof(
        &sb,
        &["install", "--archive", rel, "--sha256", &sha],
    ));
    let said = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let command = format!(
        "hookpack install --archive {} --sha256 {sha}{p}",
        archive.display()
    );
    let main_js = sb.join("prof/hooks/demo/scripts/main.js");
    std::fs::write(&main_js, "// changed\n").unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(
        said(&o).contains(&format!("`{command}` restores it")),
        "{}",
        said(&o)
    );
    assert!(!said(&o).contains("demo@"), "{}", said(&o));
    // The folder gone, and the handlers taken out of hooks.json: the same command.
    std::fs::remove_dir_all(sb.join("prof/hooks/demo")).unwrap();
    std::fs::write(sb.join("prof/hooks.json"), "{\"hooks\": {}}\n").unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(said(&o).contains("recipe-folder-missing"), "{}", said(&o));
    assert!(said(&o).contains("entries-missing"), "{}", said(&o));
    assert_eq!(
        said(&o).matches(&format!("`{command}`")).count(),
        2,
        "{}",
        said(&o)
    );
    assert!(!said(&o).contains("demo@"), "{}", said(&o));
    // Run as advised, from another folder, it restores the recipe: doctor is content.
    run_as_printed(&sb, &command);
    assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
    ok(&in_prof(&sb, &["doctor"]));

    // The archive moved away: the advice says it is no longer there.
    std::fs::write(&main_js, "// changed\n").unwrap();
    std::fs::rename(&archive, sb.join("moved.tar.gz")).unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert!(
        said(&o).contains(&format!(
            "`{command}` restores it (the archive it was installed from, no longer there: give \
             --archive a copy of it)"
        )),
        "{}",
        said(&o)
    );
    std::fs::rename(sb.join("moved.tar.gz"), &archive).unwrap();

    // A receipt as an earlier release wrote it still reads.
    let receipt = sb.join("prof/hooks/.receipts/demo.json");
    let mut r = read_json(&receipt);
    r.as_object_mut().unwrap().remove("index_url");
    r["archive_url"] = json!(rel);
    std::fs::write(&receipt, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    let o = in_prof(&sb, &["doctor"]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(
        said(&o).contains(&format!(
            "`hookpack install --archive {rel} --sha256 {sha}{p}` restores it (the archive it was \
             installed from, named as it was given to install: relative to the folder install \
             ran in)"
        )),
        "{}",
        said(&o)
    );
    ok(&in_prof(
        &sb,
        &["install", "--archive", rel, "--sha256", &sha],
    ));
    ok(&in_prof(&sb, &["doctor"]));
}

/// Over files the user changed in a recipe installed with `install --archive`, another
/// version's refusal advised `install ID@VERSION` to drop them: that looks in the index in
/// use, which need not list the recipe (the built-in catalog has no `demo`), and the advice
/// said it would pin it; so did remove's refusal. They name the archive the recipe was
/// installed from, with its digest, as doctor's advice does; followed, it drops the
/// changes, and the new version then installs.
#[test]
fn the_advice_over_changed_files_of_an_archive_install_names_that_archive() {
    let sb = Sandbox::new();
    let p = profile_flag(&sb, "prof");
    let mut m = manifest("demo");
    write_recipe(&sb, "src/demo", &m);
    pack_src_into_cat(&sb);
    m["version"] = json!("0.2.0");
    write_recipe(&sb, "src/demo", &m);
    sb.write("src/demo/scripts/main.js", "// 0.2.0\nprocess.exit(0);\n");
    pack_src_into_cat(&sb);
    let archive = sb.join("cat/hooks-demo-0.1.0.tar.gz");
    let sha = hookpack::sha256::Sha256::of(&std::fs::read(&archive).unwrap()).to_string();
    ok(&in_prof(
        &sb,
        &[
            "install",
            "--archive",
            "cat/hooks-demo-0.1.0.tar.gz",
            "--sha256",
            &sha,
        ],
    ));
    let main_js = sb.join("prof/hooks/demo/scripts/main.js");
    std::fs::write(&main_js, "// mine\n").unwrap();
    let o = in_prof(
        &sb,
        &["install", "--archive", "cat/hooks-demo-0.2.0.tar.gz"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "or drop them with `hookpack install --archive {} --sha256 {sha}{p}`, which puts the \
             folder back as 0.1.0 installed it",
            archive.display()
        )),
        "{err}"
    );
    assert!(!err.contains("demo@") && !err.contains("pins"), "{err}");
    // So does remove's refusal over them.
    let o = in_prof(&sb, &["remove", "demo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "(or drop them with `hookpack install --archive {} --sha256 {sha}{p}`, which puts the \
             folder back as installed)",
            archive.display()
        )),
        "{err}"
    );
    ok(&in_prof(
        &sb,
        &[
            "install",
            "--archive",
            archive.to_str().unwrap(),
            "--sha256",
            &sha,
        ],
    ));
    assert_eq!(std::fs::read(&main_js).unwrap(), b"process.exit(0);\n");
    ok(&in_prof(
        &sb,
        &["install", "--archive", "cat/hooks-demo-0.2.0.tar.gz"],
    ));
    let receipt = read_json(&sb.join("prof/hooks/.receipts/demo.json"));
    assert_eq!(receipt["version"], "0.2.0");
}

/// Found by review: install read `hooks.json` within hookpack's limits (16 MiB, a million
/// values) but wrote it back, indented, without checking them: a compact file near a
/// limit went over it, install said it was done, and from then on every command refused
/// the profile, `remove` included. It is now refused before anything is written, naming
/// the limit; `--dry-run` says so too.
#[test]
fn install_refuses_to_write_a_hooks_json_it_could_not_read_back() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    // 999,990 values: read, but the recipe's entry takes it over a million.
    let many = format!("{{\"hooks\":{{}},\"pad\":[{}0]}}\n", "0,".repeat(999_988));
    // 500,000 strings, 15.5 MB compact: indented, each gets a line, over 16 MiB.
    let big = format!(
        "{{\"hooks\":{{}},\"pad\":[{}\"{}\"]}}\n",
        format!("\"{}\",", "x".repeat(28)).repeat(499_999),
        "x".repeat(28)
    );
    assert!(big.len() < 16 << 20);
    for (file, says) in [
        (many, "the document holds more than 1000000 values"),
        (big, "bytes, over the 16777216 bytes hookpack reads"),
    ] {
        sb.write("prof/hooks.json", &file);
        for dry in [true, false] {
            let mut args = vec!["install", "demo", "--index", "cat"];
            if dry {
                args.push("--dry-run");
            }
            let o = in_prof(&sb, &args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.contains(says), "{err}");
            assert!(
                err.contains("so every later command would refuse it; nothing was written"),
                "{err}"
            );
        }
        assert_eq!(
            std::fs::read(sb.join("prof/hooks.json")).unwrap(),
            file.as_bytes()
        );
        assert!(!sb.join("prof/hooks/demo").exists());
        // The profile is still read.
        ok(&in_prof(&sb, &["list"]));
    }
}

/// Found by review: a `hooks.json` over 16 MiB was refused with "file is N bytes, larger
/// than the 16777216-byte limit", naming no way on. It now says what to do.
#[test]
fn a_hooks_json_over_the_size_limit_is_refused_with_a_fix() {
    let sb = Sandbox::new();
    catalog_with_versions(&sb, "demo", &[("0.1.0", "0.13.0")]);
    let file = format!("{{\"hooks\":{{}},\"x\":\"{}\"}}\n", "a".repeat(17 << 20));
    sb.write("prof/hooks.json", &file);
    for args in [&["list"][..], &["install", "demo", "--index", "cat"]] {
        let o = in_prof(&sb, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("over the 16777216 bytes hookpack reads (no hook configuration needs that much: make sure this is the right file"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(sb.join("prof/hooks.json")).unwrap(),
        file.as_bytes()
    );
}

/// Found by review: a `--profile` whose path runs through a file (`hooks.json/sub`) failed
/// naming `config.yaml` and "Not a directory", with no way on. The file in the way is
/// named, with the fix.
#[test]
fn a_profile_path_through_a_file_names_the_file() {
    let sb = Sandbox::new();
    sb.write("m1/hooks.json", "{\"hooks\": {}}\n");
    for args in [&["install", "tool-gate"][..], &["list"], &["doctor"]] {
        let o = in_profile(&sb, "m1/hooks.json/sub", args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("m1/hooks.json: the profile ")
                && err.contains(
                    "hooks.json/sub cannot be a folder, as its path runs through this file; \
                     give --profile a folder"
                ),
            "{args:?}: {err}"
        );
        assert!(!err.contains("config.yaml"), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read_to_string(sb.join("m1/hooks.json")).unwrap(),
        "{\"hooks\": {}}\n"
    );
}

/// Found by review: root installing into a profile another user owns made hooks.json
/// root's (its mode was kept, not its owner), and the recipe folder and receipt root's too,
/// so that user could not remove the recipe. hooks.json keeps its owner now, and the
/// command warns of the rest before the change. (As root only: only root gives files away.)
#[cfg(unix)]
#[test]
fn root_in_another_users_profile_keeps_hooks_json_theirs_and_warns() {
    use std::os::unix::fs::MetadataExt as _;
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root, to give files to another user");
        return;
    }
    let sb = Sandbox::new();
    sb.write("prof/hooks.json", "{\"hooks\": {}}\n");
    for p in ["prof", "prof/hooks.json"] {
        std::os::unix::fs::chown(sb.join(p), Some(1234), Some(1235)).unwrap();
    }
    let o = in_prof(&sb, &["install", "tool-gate"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("which user 1234 owns: the files made now will be root's"),
        "{err}"
    );
    let m = std::fs::metadata(sb.join("prof/hooks.json")).unwrap();
    assert_eq!((m.uid(), m.gid()), (1234, 1235));
    // In a profile of root's own, nothing is said.
    let o = in_profile(&sb, "own", &["install", "tool-gate"]);
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}

/// `remove` writes hooks.json indented too: a compact file that holds an installed recipe
/// and would go over 16 MiB as written is refused before anything changes, as `install`
/// refuses it (see above).
#[test]
fn remove_refuses_to_write_a_hooks_json_it_could_not_read_back() {
    let sb = Sandbox::new();
    installed_from_cat(&sb, "demo");
    let mut doc = read_json(&sb.join("prof/hooks.json"));
    doc["pad"] = json!(vec!["x".repeat(28); 500_000]);
    let compact = serde_json::to_string(&doc).unwrap();
    assert!(compact.len() < 16 << 20);
    sb.write("prof/hooks.json", &compact);
    let before = snapshot(&sb.join("prof"));
    let o = in_prof(&sb, &["remove", "demo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bytes, over the 16777216 bytes hookpack reads, so every later command would refuse it; nothing was written"),
        "{err}"
    );
    assert_eq!(snapshot(&sb.join("prof")), before);
}
