//! An error that ends a verb: with `--format json`, one JSON error object on stdout, the
//! same `error:` / `caused by:` lines on stderr as without it, and the same exit code.

use crate::common::*;
use serde_json::Value;

/// Runs `args`, returning (exit code, stdout, stderr).
fn run(sb: &Sandbox, args: &[&str]) -> (i32, Vec<u8>, String) {
    run_env(sb, args, &[])
}

/// Runs `args` with the variables `env` set, returning (exit code, stdout, stderr).
fn run_env(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<u8>, String) {
    let o = sb
        .cmd()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        o.status.code().expect("exit code"),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The `error:` line's text and the `caused by:` lines' texts on `stderr`.
fn error_lines(stderr: &str) -> (String, Vec<String>) {
    let mut lines = stderr.lines().skip_while(|l| !l.starts_with("error: "));
    let message = lines
        .next()
        .unwrap_or_else(|| panic!("no `error:` line on stderr: {stderr}"))
        .strip_prefix("error: ")
        .unwrap()
        .to_string();
    let causes = lines
        .map_while(|l| l.strip_prefix("  caused by: "))
        .map(String::from)
        .collect();
    (message, causes)
}

/// Runs `args` without and then with `--format json`; both must exit `code` with the same
/// stderr, whose `error:` line holds `needle`. Without it stdout is empty; with it stdout
/// is exactly one JSON object, `{"error": {…}}`, which is returned.
fn json_error(sb: &Sandbox, args: &[&str], code: i32, needle: &str) -> Value {
    json_error_env(sb, args, &[], code, needle)
}

/// [`json_error`] with the variables `env` set.
fn json_error_env(
    sb: &Sandbox,
    args: &[&str],
    env: &[(&str, &str)],
    code: i32,
    needle: &str,
) -> Value {
    let (text_code, text_out, text_err) = run_env(sb, args, env);
    assert_eq!(text_code, code, "{args:?}: {text_err}");
    assert!(
        text_out.is_empty(),
        "{args:?} printed on stdout without --format json: {}",
        String::from_utf8_lossy(&text_out)
    );
    let (message, causes) = error_lines(&text_err);
    assert!(message.contains(needle), "{args:?}: {text_err}");

    let mut with_json = args.to_vec();
    with_json.extend(["--format", "json"]);
    let (json_code, json_out, json_err) = run_env(sb, &with_json, env);
    assert_eq!(json_code, code, "{with_json:?}: {json_err}");
    assert_eq!(
        json_err, text_err,
        "{with_json:?}: stderr changed with --format json"
    );
    // `from_slice` refuses anything after the one value but white space.
    let doc: Value = serde_json::from_slice(&json_out).unwrap_or_else(|e| {
        panic!(
            "{with_json:?}: stdout is not one JSON document ({e}): {:?}",
            String::from_utf8_lossy(&json_out)
        )
    });
    let obj = doc.as_object().expect("a JSON object");
    assert_eq!(
        obj.keys().collect::<Vec<_>>(),
        ["error"],
        "{with_json:?}: {doc}"
    );
    let e = &doc["error"];
    assert_eq!(e["message"], message.as_str(), "{with_json:?}: {doc}");
    assert_eq!(
        e["causes"],
        serde_json::json!(causes),
        "{with_json:?}: {doc}"
    );
    assert_eq!(e["exit_code"], code, "{with_json:?}: {doc}");
    let kind = e["kind"].as_str().expect("kind is a string");
    assert!(
        !kind.is_empty()
            && kind
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{with_json:?}: kind {kind:?}"
    );
    assert!(e["diagnostics"].is_array(), "{with_json:?}: {doc}");
    doc
}

#[test]
fn catalog_list_from_an_unreachable_server_prints_a_json_error_exit_3() {
    let sb = Sandbox::new();
    let url = format!("http://127.0.0.1:{}/hooks-index.json", unused_port());
    let doc = json_error(&sb, &["catalog", "list", &url], 3, "");
    assert_eq!(doc["error"]["kind"], "fetch", "{doc}");
}

/// A port nothing listens on: a connection to it is refused at once.
fn unused_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn pack_with_a_missing_recipes_dir_prints_a_json_error() {
    let sb = Sandbox::new();
    json_error(
        &sb,
        &["pack", "--recipes-dir", "missing", "--out-dir", "cat"],
        1,
        "missing",
    );
    assert!(!sb.join("cat").exists());
}

/// Found by the maintainer-side hostile-input sweep: a file given where a folder of
/// recipes is expected (the recipe's own recipe.json, or a case file for `test`) failed
/// with "cannot list …: Not a directory (os error 20)", which says neither that a folder
/// was expected nor which to give; `--hooks-dir FILE` named `FILE/recipes`.
#[test]
fn a_file_given_for_a_folder_of_recipes_says_which_folder_to_give() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    sb.write("src/demo/tests/case.json", "{}\n");
    for (args, code, needle) in [
        (
            &["pack", "--recipes-dir", "src/demo/recipe.json", "--out-dir", "cat"][..],
            1,
            "src/demo/recipe.json is not a folder; give the folder holding the recipe folders",
        ),
        (
            &["assemble", "--recipes-dir", "src/demo/recipe.json", "--out-dir", "cat"][..],
            1,
            "src/demo/recipe.json is not a folder; give the folder holding the recipe folders",
        ),
        (
            &["test", "src/demo/tests/case.json"][..],
            1,
            "src/demo/tests/case.json is not a recipe folder: it is inside the recipe folder src/demo; `hookpack test src/demo` runs its cases",
        ),
        (
            &["assemble", "--hooks-dir", "src/demo/recipe.json", "--out-dir", "cat"][..],
            2,
            "--hooks-dir `src/demo/recipe.json` is invalid: it has no `recipes/` folder",
        ),
    ] {
        json_error(&sb, args, code, needle);
        assert!(!sb.join("cat").exists(), "{args:?}");
    }
}

#[test]
fn pack_of_invalid_recipes_lists_the_diagnostics_in_the_json_error() {
    let sb = Sandbox::new();
    let mut m = manifest("demo");
    m["version"] = serde_json::json!("not-a-version");
    write_recipe(&sb, "src/demo", &m);
    let doc = json_error(
        &sb,
        &["pack", "--recipes-dir", "src", "--out-dir", "cat"],
        1,
        "problem(s) in the recipes",
    );
    assert_eq!(doc["error"]["kind"], "recipes-invalid", "{doc}");
    let diagnostics = doc["error"]["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty(), "{doc}");
    assert!(diagnostics[0]["code"].is_string(), "{doc}");
}

/// `catalog list` of a missing file is an error; `catalog verify` reports it as a finding,
/// in its report, as before.
#[test]
fn catalog_list_of_a_missing_file_prints_a_json_error_verify_reports_it() {
    let sb = Sandbox::new();
    json_error(&sb, &["catalog", "list", "missing.json"], 1, "missing");
    let (code, out, _) = run(
        &sb,
        &["catalog", "verify", "missing.json", "--format", "json"],
    );
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert!(doc.get("error").is_none() && doc["ok"] == false, "{doc}");
    assert_eq!(doc["diagnostics"][0]["code"], "fetch-failed", "{doc}");
}

#[test]
fn trust_revoke_run_on_a_missing_profile_print_a_json_error() {
    let sb = Sandbox::new();
    for args in [
        &["trust", "--all", "--profile", "missing"][..],
        &["revoke", "--all", "--profile", "missing"],
        &["run", "Stop", "--profile", "missing"],
    ] {
        let doc = json_error(&sb, args, 1, "does not exist");
        assert_eq!(doc["error"]["kind"], "profile-missing", "{args:?}: {doc}");
    }
}

#[test]
fn a_lock_held_by_another_process_prints_a_json_error_exit_3() {
    let sb = Sandbox::new();
    let lock = sb.write("prof/.hookpack.lock", "");
    let held = std::fs::File::options().write(true).open(&lock).unwrap();
    held.lock().unwrap();
    let doc = json_error_env(
        &sb,
        &["install", "tool-gate", "--profile", "prof"],
        &[("HOOKPACK_LOCK_TIMEOUT", "0")],
        3,
        "another hookpack process holds",
    );
    assert_eq!(doc["error"]["kind"], "lock-timeout", "{doc}");
    drop(held);
}

#[test]
fn other_verbs_print_a_json_error_too() {
    let sb = Sandbox::new();
    sb.write("a-file", "x");
    // A profile that is a file: list, doctor, update.
    for verb in ["list", "doctor", "update"] {
        let doc = json_error(&sb, &[verb, "--profile", "a-file"], 1, "not a folder");
        assert_eq!(doc["error"]["kind"], "config-invalid", "{verb}: {doc}");
    }
    json_error(&sb, &["new", "demo", "--dir", "a-file"], 1, "not a folder");
    json_error(
        &sb,
        &["assemble", "--recipes-dir", "missing", "--out-dir", "out"],
        1,
        "missing",
    );
    json_error(&sb, &["test", "missing"], 1, "missing");
    std::fs::create_dir(sb.join("prof")).unwrap();
    json_error(
        &sb,
        &[
            "run",
            "Stop",
            "--profile",
            "prof",
            "--payload",
            "missing.json",
        ],
        1,
        "missing.json",
    );
    // Usage-like errors found after parsing keep their exit code 2.
    let doc = json_error(
        &sb,
        &["update", "--profile", "prof", "--cli-version", "x"],
        2,
        "--cli-version",
    );
    assert_eq!(doc["error"]["kind"], "arg-invalid", "{doc}");
}

#[test]
fn an_environment_setting_refused_before_the_verb_prints_a_json_error() {
    let sb = Sandbox::new();
    let args = ["list", "--profile", "prof"];
    let text = sb
        .cmd()
        .args(args)
        .env("HOOKPACK_LOCK_TIMEOUT", "abc")
        .output()
        .unwrap();
    assert_eq!(text.status.code(), Some(2));
    assert!(text.stdout.is_empty());
    let json = sb
        .cmd()
        .args(args)
        .args(["--format", "json"])
        .env("HOOKPACK_LOCK_TIMEOUT", "abc")
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(2));
    assert_eq!(json.stderr, text.stderr);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["error"]["exit_code"], 2, "{doc}");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("HOOKPACK_LOCK_TIMEOUT"),
        "{doc}"
    );
}

/// Reports that exit 1 for what they found keep their JSON as it was: no error object.
#[test]
fn reports_of_findings_keep_their_json() {
    let sb = Sandbox::new();
    let mut m = manifest("demo");
    m["version"] = serde_json::json!("not-a-version");
    write_recipe(&sb, "src/demo", &m);
    let (code, report) = validate_json(&sb, &["src"]);
    assert_eq!(code, 1);
    assert!(
        report.get("error").is_none() && report["ok"] == false,
        "{report}"
    );
    // doctor reports a profile that does not exist; it is no error.
    let (code, out, _) = run(&sb, &["doctor", "--profile", "missing", "--format", "json"]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert!(doc.get("error").is_none(), "{doc}");
}

/// `--format github` prints an error as one workflow command on stdout (where the Actions
/// runner reads them), with its kind as the title, and as text on stderr; no JSON.
#[test]
fn github_format_prints_the_error_as_a_workflow_command() {
    let sb = Sandbox::new();
    sb.write("a-file", "x");
    let (code, out, err) = run(
        &sb,
        &["doctor", "--profile", "a-file", "--format", "github"],
    );
    assert_eq!(code, 1, "{err}");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("::error title=hookpack config-invalid::")
            && out.contains("the profile is not a folder"),
        "{out}"
    );
    assert!(err.contains("error: "), "{err}");
}

/// Found by a README walk-through: `install` and `remove`, which report each recipe's
/// error on its own, printed no workflow command under `--format github`.
#[test]
fn github_format_annotates_the_error_of_each_recipe_installed_or_removed() {
    let sb = Sandbox::new();
    for (args, title) in [
        (
            &["install", "nosuch", "--profile", "p", "--format", "github"][..],
            "::error title=hookpack recipe-not-in-index::",
        ),
        (
            &["remove", "nosuch", "--profile", "p", "--format", "github"][..],
            "::error title=hookpack not-installed::",
        ),
    ] {
        let (code, out, err) = run(&sb, args);
        assert_eq!(code, 1, "{args:?}: {err}");
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.lines()
                .any(|l| l.starts_with(title) && l.contains("nosuch")),
            "{args:?}: {out}"
        );
        assert!(err.contains("error: "), "{args:?}: {err}");
    }
}

/// A usage error the argument parser finds (unknown flag, missing argument or value, bad
/// value) under `--format json` or `--format=json`: clap's text on stderr and exit 2 as
/// without it, and the JSON error object on stdout, kind `usage`, its message clap's
/// error text without `error: `, the usage line and the `--help` hint.
#[test]
fn a_usage_error_under_format_json_prints_a_json_error_object() {
    let sb = Sandbox::new();
    for (args, needle) in [
        (
            &["install", "x", "--format", "json", "--bogus"][..],
            "unexpected argument '--bogus' found",
        ),
        (
            &["install", "--bogus", "x", "--format=json"],
            "unexpected argument '--bogus' found",
        ),
        (
            &["install", "--format", "json"],
            "the following required arguments were not provided:\n  <ID>...",
        ),
        (
            &["pack", "--compression", "bogus", "--format=json"],
            "invalid value 'bogus' for '--compression <COMPRESSION>'",
        ),
        // clap reads `--format` here as a flag, not as the payload's value: the error is
        // the payload's missing value.
        (
            &["run", "PreToolUse", "--payload", "--format", "json"],
            "a value is required for '--payload <FILE|->' but none was supplied",
        ),
        (
            &[
                "-q", "catalog", "verify", "--format", "json", "cat", "extra",
            ],
            "unexpected argument 'extra' found",
        ),
    ] {
        let (code, out, err) = run(&sb, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        let doc: Value = serde_json::from_slice(&out).unwrap_or_else(|e| {
            panic!(
                "{args:?}: stdout is not one JSON document ({e}): {:?}\nstderr: {err}",
                String::from_utf8_lossy(&out)
            )
        });
        let e = &doc["error"];
        assert_eq!(e["kind"], "usage", "{args:?}: {doc}");
        assert_eq!(e["exit_code"], 2, "{args:?}: {doc}");
        assert_eq!(e["causes"], serde_json::json!([]), "{args:?}: {doc}");
        assert_eq!(e["diagnostics"], serde_json::json!([]), "{args:?}: {doc}");
        let message = e["message"].as_str().expect("a message");
        assert!(message.starts_with(needle), "{args:?}: {message:?}");
        assert!(
            !message.contains("error:")
                && !message.contains("Usage:")
                && !message.contains("--help")
                && !message.contains('\x1b')
                && message.trim() == message,
            "{args:?}: {message:?}"
        );
        // stderr is clap's text, as without --format json.
        let plain: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.starts_with("--format") && *a != "json")
            .collect();
        let (_, _, plain_err) = run(&sb, &plain);
        assert_eq!(
            err.lines().next(),
            plain_err.lines().next(),
            "{args:?} / {plain:?}"
        );
    }
}

/// Without `--format json` as clap reads it, a usage error prints its text only: another
/// format, a bad format value, `--format json` as another flag's value or after `--`,
/// `--help` and `--version`.
#[test]
fn a_usage_error_without_format_json_keeps_stdout_empty() {
    let sb = Sandbox::new();
    for args in [
        &["install", "x", "--bogus"][..],
        &["install", "x", "--format", "text", "--bogus"],
        &["install", "x", "--format", "github", "--bogus"],
        &["install", "x", "--format", "jsn"],
        &[
            "install",
            "x",
            "--format",
            "json",
            "--format=text",
            "--bogus",
        ],
        &["run", "PreToolUse", "--payload=--format", "json"],
        &["run", "PreToolUse", "--workspace=--format=json", "--bogus"],
        &["validate", "--bogus", "--", "--format", "json"],
    ] {
        let (code, out, err) = run(&sb, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(
            out.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    for args in [
        &["install", "--format", "json", "--help"][..],
        &["--version", "--format", "json"],
    ] {
        let (code, out, err) = run(&sb, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let out = String::from_utf8_lossy(&out);
        assert!(
            out.contains("Usage: hookpack install") || out.starts_with("hookpack "),
            "{args:?}: {out}"
        );
        assert!(!out.contains("\"error\""), "{args:?}: {out}");
    }
}

/// `install` and `remove` where every recipe named failed: the error object, not an empty
/// list of outcomes (`[]`, which said nothing of the failure).
#[test]
fn install_of_an_unknown_id_prints_a_json_error() {
    let sb = Sandbox::new();
    let doc = json_error(
        &sb,
        &["install", "no-such-recipe", "--profile", "prof"],
        1,
        "no recipe `no-such-recipe`",
    );
    assert_eq!(doc["error"]["kind"], "recipe-not-in-index", "{doc}");
}

#[test]
fn install_from_a_missing_index_prints_a_json_error() {
    let sb = Sandbox::new();
    json_error(
        &sb,
        &[
            "install",
            "tool-gate",
            "--index",
            "missing/hooks-index.json",
            "--profile",
            "prof",
        ],
        1,
        "missing",
    );
}

#[test]
fn install_from_an_unreachable_server_prints_a_json_error_exit_3() {
    let sb = Sandbox::new();
    let url = format!("http://127.0.0.1:{}/hooks-index.json", unused_port());
    let doc = json_error(
        &sb,
        &["install", "tool-gate", "--index", &url, "--profile", "prof"],
        3,
        "",
    );
    assert_eq!(doc["error"]["kind"], "fetch", "{doc}");
}

#[test]
fn remove_of_a_recipe_not_installed_prints_a_json_error() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("prof")).unwrap();
    let doc = json_error(
        &sb,
        &["remove", "tool-gate", "--profile", "prof"],
        1,
        "is not installed",
    );
    assert_eq!(doc["error"]["kind"], "not-installed", "{doc}");
    // Of several errors, the first with the highest exit code.
    let (code, out, err) = run(
        &sb,
        &[
            "remove",
            "tool-gate",
            "audit-log",
            "--profile",
            "prof",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.matches("error: ").count(), 2, "{err}");
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("`tool-gate` is not installed"), "{doc}");
}

/// When some recipes are installed and another fails, JSON lists what was done, as before;
/// the error is on stderr and in the exit code.
#[test]
fn install_of_some_recipes_that_fail_keeps_the_list_of_outcomes() {
    let sb = Sandbox::new();
    let (code, out, err) = run(
        &sb,
        &[
            "install",
            "no-such-recipe",
            "tool-gate",
            "--profile",
            "prof",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error: the index"), "{err}");
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let list = doc.as_array().expect("the list of outcomes");
    assert_eq!(list.len(), 1, "{doc}");
    assert_eq!(list[0]["id"], "tool-gate", "{doc}");
}

/// Control characters in the names an error quotes reach a JSON consumer as they are
/// (JSON's own escaping makes them safe), while stderr shows them escaped; the bytes of
/// stdout carry none of them raw either, C1 controls, bidirectional controls and line
/// separators included (written as `\uXXXX`). A name that is not UTF-8 has U+FFFD for its
/// undecodable bytes in both.
#[test]
fn the_json_error_object_carries_the_real_text_of_names() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    let hostile = ['\x1b', '\x07', '\x7f', '\u{9b}', '\u{202e}', '\u{2028}'];
    let out_has_none = |out: &[u8]| {
        let text = String::from_utf8(out.to_vec()).expect("stdout is UTF-8");
        for c in hostile {
            assert!(!text.contains(c), "{c:?} raw in stdout: {text:?}");
        }
    };

    // A missing folder named with control characters: the message quotes it.
    let dir = "src\x1b]0;owned\x07\x7f\u{9b}2J\u{202e}\u{2028}\nend";
    let o = sb
        .cmd()
        .args([
            "pack",
            "--recipes-dir",
            dir,
            "--out-dir",
            "cat",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(r"src\u{1b}]0;owned\u{7}\u{7f}\u{9b}2J\u{202e}\u{2028}\nend"),
        "{err}"
    );
    assert!(!err.contains('\x1b') && !err.contains('\u{9b}'), "{err:?}");
    out_has_none(&o.stdout);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("--recipes-dir {dir} does not exist; ")),
        "{message:?}"
    );

    // An id with them: a cause quotes it.
    let id = "A\x1b[2J\u{9b}\u{202e}b";
    let o = sb
        .cmd()
        .args(["remove", id, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r"`A\u{1b}[2J\u{9b}\u{202e}b`"), "{err}");
    out_has_none(&o.stdout);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let cause = doc["error"]["causes"][0].as_str().unwrap();
    assert!(
        cause.starts_with(&format!("`{id}` is not a valid id")),
        "{cause:?}"
    );

    // A profile name with them, from $FINCLAW_PROFILE.
    let name = "team/\x1b]2;x\x07";
    let o = sb
        .cmd()
        .args(["list", "--format", "json"])
        .env("FINCLAW_PROFILE", name)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r"`team/\u{1b}]2;x\u{7}`"), "{err}");
    out_has_none(&o.stdout);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "profile-name-invalid", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("`{name}` (from ")),
        "{message:?}"
    );

    // A name that is not UTF-8.
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir"])
        .arg(std::ffi::OsStr::from_bytes(b"src\xff\x1b"))
        .args(["--out-dir", "cat", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--recipes-dir src\u{fffd}\\u{1b} does not exist; "),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("--recipes-dir src\u{fffd}\x1b does not exist; "),
        "{message:?}"
    );
}

#[test]
fn the_help_of_quiet_says_errors_still_print() {
    // It said "Print no messages on stderr", while errors and diagnostics still print
    // there, as they must (found by review).
    let sb = Sandbox::new();
    for args in [&["--help"][..], &["install", "--help"]] {
        let o = sb.cmd().args(args).output().unwrap();
        ok(&o);
        let help = String::from_utf8_lossy(&o.stdout);
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("-q, --quiet"))
            .unwrap();
        assert!(
            line.contains("Print no notes, warnings, progress or summaries on stderr (errors and diagnostics still print; stdout is unaffected)"),
            "{args:?}: {line}"
        );
    }
    // And it does: an error still prints under -q.
    let o = sb
        .cmd()
        .args(["-q", "install", "tool-gat"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: "));
}
