//! Our five recipes: their fixture cases pass against the assembled output with the real
//! `node`, and `hookpack test` reports failures with a diff.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;

#[test]
fn built_in_recipes_pass_their_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sb = Sandbox::new();
    let o = sb
        .cmd()
        .args(["test", "--format", "json"])
        .arg(root.join("recipes"))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(o.status.success(), "{report:#}");
    let cases = report["cases"].as_array().unwrap();
    for id in [
        "tool-gate",
        "turn-router",
        "turn-review",
        "secret-guard",
        "audit-log",
    ] {
        let n = cases.iter().filter(|c| c["recipe"] == id).count();
        assert!(n >= 4, "{id} has only {n} fixture cases");
    }
    assert_eq!(report["failed"], 0);
}

/// Puts `code` at the top of the scaffolded demo's `src/main.ts`; its path.
fn prepend_to_demo_main(sb: &Sandbox, code: &str) -> std::path::PathBuf {
    let main = sb.join("recipes/demo/src/main.ts");
    let source = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, format!("{code}{source}")).unwrap();
    main
}

/// `hookpack new demo --dir recipes`, which must succeed: a recipe to write cases for.
fn scaffold_demo(sb: &Sandbox) {
    sb.cmd()
        .args(["new", "demo", "--dir", "recipes"])
        .assert()
        .success();
}

/// The examples in each recipe's README run as written in the assembled recipe folder and
/// print what the README shows under them, so the documentation cannot drift from the code.
#[test]
fn recipe_readme_examples_print_what_they_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let sb = Sandbox::new();
    ok(&sb
        .cmd()
        .arg("assemble")
        .arg("--recipes-dir")
        .arg(&root)
        .args(["--out-dir", "out"])
        .output()
        .unwrap());
    let mut checked = 0;
    for id in [
        "tool-gate",
        "turn-router",
        "turn-review",
        "secret-guard",
        "audit-log",
    ] {
        let readme = std::fs::read_to_string(root.join(id).join("README.md")).unwrap();
        for (command, shown) in readme_examples(&readme) {
            let o = std::process::Command::new("sh")
                .args(["-c", &command])
                .current_dir(sb.join("out").join(id))
                .output()
                .unwrap();
            let printed = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "recipes/{id}/README.md: `{command}` failed: {o:?}"
            );
            let got: serde_json::Value = serde_json::from_str(&printed).unwrap_or_else(|e| {
                panic!("recipes/{id}/README.md: `{command}` printed {printed:?}: {e}")
            });
            let want: serde_json::Value = serde_json::from_str(&shown)
                .unwrap_or_else(|e| panic!("recipes/{id}/README.md: the output shown under `{command}` is not JSON: {e}\n{shown}"));
            assert_eq!(
                got, want,
                "recipes/{id}/README.md: `{command}` prints something else than the README shows"
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 5,
        "only {checked} README examples had an output to check"
    );
}

/// The examples of a README: in each ```sh block, a command (its lines up to the first
/// `# ` comment line) and the output the comment lines under it show, joined. Commands
/// with no comment lines under them (those whose output varies) are left out.
fn readme_examples(markdown: &str) -> Vec<(String, String)> {
    let mut examples = Vec::new();
    let (mut in_block, mut command, mut shown) = (false, String::new(), String::new());
    for line in markdown.lines() {
        let comment = line.strip_prefix('#').filter(|_| in_block);
        if !in_block || line.trim().is_empty() || line.starts_with("```") || comment.is_none() {
            if !shown.is_empty() {
                examples.push((std::mem::take(&mut command), std::mem::take(&mut shown)));
            }
            if line.starts_with("```") || line.trim().is_empty() {
                in_block = if line.starts_with("```") {
                    line == "```sh"
                } else {
                    in_block
                };
                command.clear();
            } else if in_block {
                command.push_str(line);
                command.push('\n');
            }
        } else if let Some(text) = comment {
            shown.push_str(text.trim());
        }
    }
    examples
}

#[test]
fn a_failing_case_is_reported_with_a_diff() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.cmd().args(["test", "recipes/demo"]).assert().success();
    // A FinClaw hooks folder (`hooks/recipes/…`) and a folder of recipes are tested whole
    // (found by review: the hooks folder's `recipes/` was taken for a recipe without a
    // recipe.json).
    for dir in [".", "recipes"] {
        let o = sb.cmd().args(["test", dir]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("2 passed"));
    }
    // ... but a recipe whose id is `recipes` is a recipe (third review).
    sb.cmd()
        .args(["new", "recipes", "--dir", "rs"])
        .assert()
        .success();
    let o = sb.cmd().args(["test", "rs"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = sb.cmd().args(["validate", "rs"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    sb.write(
        "recipes/demo/tests/wrong.json",
        r#"{"name": "expects the wrong thing", "event": "PreToolUse", "payload": {"tool_name": "exec", "tool_input": {"command": "ls"}}, "expect": {"exit": 0, "decision": "deny"}}"#,
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains("FAIL demo/wrong.json: expects the wrong thing"),
        "{text}"
    );
    assert!(text.contains("decision: expected deny, got none"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
}

/// A handler whose shell the system would not start (a case's `env` of 3 MB: "Argument list
/// too long") was reported as "exit: expected 0, got killed". It never ran, and says so.
#[test]
fn a_handler_that_never_started_is_not_called_killed() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let big = "x".repeat(3_000_000);
    sb.write(
        "recipes/demo/tests/huge-env.json",
        format!(
            r#"{{"name": "too much env", "event": "PreToolUse", "env": {{"BIG": "{big}"}}, "payload": {{"tool_name": "exec", "tool_input": {{"command": "ls"}}}}, "expect": {{"exit": 0, "decision": "none"}}}}"#
        ),
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains("exit: expected 0, got no exit: the shell never started"),
        "{text}"
    );
    assert!(!text.contains("got killed"), "{text}");
    assert!(text.contains("Argument list too long"), "{text}");
}

/// A failing handler's first stderr line reaches `test`'s mismatch lines ("got failure
/// (exit 1: …)", the reason) as well as its stderr line: none of them may carry its
/// control characters to the terminal, where they could clear the screen, retitle it or
/// hide text from the maintainer reading the report.
#[test]
fn a_failing_handlers_control_characters_are_escaped_in_the_report() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    prepend_to_demo_main(
        &sb,
        "process.stderr.write(\"\\u001b]0;pwned\\u0007\\u001b[2Jboom\\n\");\nprocess.exit(1);\n",
    );
    let text = failing_test_run(&sb);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(
        // The scaffold's gate denies when it fails (failurePolicy: deny).
        text.contains("decision: expected none, got deny (exit 1: "),
        "{text}"
    );
    assert!(text.contains(r"\u{1b}]0;pwned\u{7}\u{1b}[2Jboom"), "{text}");
}

/// Found by the recipe-author sweep: an error thrown by a handler was reported at a line of
/// the assembled JavaScript, in a temporary folder removed once `test` ended. The modules
/// `test` assembles end in source maps and node runs with `--enable-source-maps` (added
/// to a NODE_OPTIONS of the case's own), so the error is named at its TypeScript line;
/// `assemble` output carries no map.
#[test]
fn a_handler_error_in_test_is_named_at_its_typescript_line() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    // Line 3 of the source, after two lines only TypeScript has.
    let main = prepend_to_demo_main(
        &sb,
        "interface Unused { n: number }\ntype Alias = Unused;\nconst none: Alias | undefined = undefined; none!.n.toFixed();\n",
    );
    let text = failing_test_run(&sb);
    let at = format!("{}:3:", main.display());
    assert!(text.contains(&at), "{text}");
    assert!(!text.contains("hookpack-assembled-"), "{text}");
    // A NODE_OPTIONS of the case's own keeps its flags.
    sb.write(
        "recipes/demo/tests/opts.json",
        r#"{"name": "opts", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "env": {"NODE_OPTIONS": "--max-old-space-size=64"}, "expect": {"decision": "none"}}"#,
    );
    let text = failing_test_run(&sb);
    assert!(text.contains(&at), "{text}");
    ok(&sb
        .cmd()
        .args(["assemble", "--recipes-dir", "recipes", "--out-dir", "out"])
        .output()
        .unwrap());
    let js = std::fs::read_to_string(sb.join("out/demo/scripts/main.js")).unwrap();
    assert!(!js.contains("sourceMappingURL"), "{js}");
}

/// A handler that writes a UTF-8 byte order mark before its JSON answer gives no decision,
/// as hosts read it; a case that expects a decision fails saying why, not only "expected
/// deny, got none", and the JSON report carries it as the handler decision's `warning`.
#[test]
fn a_case_whose_answer_follows_a_byte_order_mark_fails_saying_so() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let main = sb.join("recipes/demo/src/main.ts");
    let source = std::fs::read_to_string(&main).unwrap();
    assert_eq!(
        source.matches("process.stdout.write(").count(),
        1,
        "{source}"
    );
    std::fs::write(
        &main,
        source.replace(
            "process.stdout.write(",
            "process.stdout.write(\"\\uFEFF\" + ",
        ),
    )
    .unwrap();
    let text = failing_test_run(&sb);
    assert!(
        text.contains(
            "decision: expected deny, got none (demo: stdout starts with a UTF-8 byte \
             order mark, so it is not read as JSON and gave no decision"
        ),
        "{text}"
    );
    assert!(text.trim_end().ends_with("1 passed, 1 failed"), "{text}");

    let doc = failing_test_doc(&sb);
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == "denies-rm-rf.json")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(case["passed"], false, "{doc:#}");
    let warning = case["handlers"][0]["decision"]["warning"].as_str();
    assert!(
        warning.is_some_and(|w| w.contains("byte order mark")),
        "{doc:#}"
    );
}

/// A case whose `file_contains` names a fifo hung `test` (the read waits for a writer),
/// and one naming /dev/zero read until memory ran out (both are now refused as outside
/// the case's folder; what is read there is still read as a regular file and bounded); a
/// case whose `env` holds a NUL
/// stopped the whole run with `cannot run a handler` instead of failing that case.
#[cfg(unix)]
#[test]
fn odd_case_files_fail_their_case_and_the_run_goes_on() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let fifo = sb.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let case = |name: &str, extra: serde_json::Value| {
        let mut c = serde_json::json!({"name": name, "event": "PreToolUse",
            "payload": {"tool_name": "exec", "tool_input": {"command": "ls"}},
            "expect": {"decision": "none"}});
        for (k, v) in extra.as_object().unwrap() {
            if k == "file_contains" {
                c["expect"][k] = v.clone();
            } else {
                c[k] = v.clone();
            }
        }
        sb.write(&format!("recipes/demo/tests/{name}.json"), c.to_string());
    };
    case(
        "reads-a-fifo",
        serde_json::json!({"file_contains": {"path": fifo.display().to_string(), "contains": "x"}}),
    );
    case(
        "reads-dev-zero",
        serde_json::json!({"file_contains": {"path": "/dev/zero", "contains": "x"}}),
    );
    case(
        "nul-in-env-name",
        serde_json::json!({"env": {"A\u{0}B": "1"}}),
    );
    case(
        "nul-in-env-value",
        serde_json::json!({"env": {"A": "x\u{0}y"}}),
    );
    let mut child = sb
        .std_cmd()
        .args(["test", "recipes/demo"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`test` still ran after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for name in [
        "reads-a-fifo",
        "reads-dev-zero",
        "nul-in-env-name",
        "nul-in-env-value",
    ] {
        assert!(text.contains(&format!("FAIL demo/{name}.json")), "{text}");
    }
    // Found by a hostile sweep: such paths read outside the case's folder (`/etc/passwd`
    // too); they are refused before anything runs, as the README says they are read in it.
    for path in [fifo.display().to_string(), "/dev/zero".to_string()] {
        assert!(
            text.contains(&format!(
                "`{path}` is outside the case's folder, where the handler ran and the file is \
                 looked for"
            )),
            "{text}"
        );
    }
    assert!(text.contains("NUL"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 4 failed"), "{text}");
}

/// A case file over the 4 MiB limit stopped the whole run with `error: cannot read …`,
/// hiding every other case's result, while a case file that is not JSON fails alone.
#[test]
fn a_case_file_over_the_limit_fails_alone() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let big = serde_json::json!({"name": "big", "event": "PreToolUse",
        "payload": {"tool_name": "exec", "pad": "a".repeat(5 * 1024 * 1024)},
        "expect": {"decision": "none"}});
    sb.write("recipes/demo/tests/big.json", big.to_string());
    let text = failing_test_run(&sb);
    assert!(text.contains("FAIL demo/big.json"), "{text}");
    assert!(text.contains("4194304-byte limit"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
}

/// An assembled recipe whose `PreToolUse` groups match `exec` (handler `gate`: deny when
/// stdin is not JSON, ask otherwise) and `write_file` (handler `other`: always deny).
fn raw_payload_recipe(sb: &Sandbox) {
    let mut m = manifest("rawrec");
    m["hooks"]["PreToolUse"] = serde_json::json!([
        {"matcher": "exec", "hooks": [{"id": "gate", "type": "command", "command": "node scripts/main.js"}]},
        {"matcher": "write_file", "hooks": [{"id": "other", "type": "command", "command": "node scripts/other.js"}]}
    ]);
    write_recipe(sb, "recipes/rawrec", &m);
    sb.write(
        "recipes/rawrec/scripts/main.js",
        r#"let s = "";
process.stdin.on("data", (d) => (s += d)).on("end", () => {
  let decision = "ask";
  try { JSON.parse(s); } catch { decision = "deny"; }
  console.log(JSON.stringify({ hookSpecificOutput: { permissionDecision: decision, permissionDecisionReason: "gate" } }));
});
"#,
    );
    sb.write(
        "recipes/rawrec/scripts/other.js",
        "console.log(JSON.stringify({ hookSpecificOutput: { permissionDecision: \"deny\", permissionDecisionReason: \"other\" } }));\n",
    );
}

/// A `"@raw:"` payload was matched against an empty tool name: a case whose raw bytes say
/// `"tool_name": "exec"` ran none of the `exec` handlers ("no handler of the recipe runs
/// for PreToolUse with tool ``"), and one whose bytes do not parse ran only the groups
/// without a matcher, in silence. The tool name is read from raw bytes that are a JSON
/// object; bytes that are not leave the matchers nothing to match, and the case says to
/// name its handler.
#[test]
fn a_raw_payload_is_matched_by_the_tool_it_names() {
    let sb = Sandbox::new();
    raw_payload_recipe(&sb);
    let case = |file: &str, payload: &str, handler: Option<&str>, decision: &str| {
        let mut c = serde_json::json!({"name": file, "event": "PreToolUse", "payload": payload,
            "expect": {"decision": decision, "reason_contains": "gate"}});
        if let Some(h) = handler {
            c["handler"] = serde_json::json!(h);
        }
        sb.write(&format!("recipes/rawrec/tests/{file}.json"), c.to_string());
    };
    case(
        "raw-exec",
        r#"@raw:{"tool_name": "exec", "tool_input": {"command": "ls"}}"#,
        None,
        "ask",
    );
    case("raw-broken", r#"@raw:{"tool_name": "exec", "#, None, "deny");
    case(
        "raw-broken-named",
        r#"@raw:{"tool_name": "exec", "#,
        Some("gate"),
        "deny",
    );
    let o = sb
        .cmd()
        .args(["test", "--format", "json"])
        .arg(sb.join("recipes/rawrec"))
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{report:#}");
    let result = |file: &str| {
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["file"] == format!("{file}.json"))
            .unwrap()
            .clone()
    };
    let exec = result("raw-exec");
    assert_eq!(exec["passed"], true, "{exec:#}");
    assert_eq!(exec["handlers"][0]["id"], "gate", "{exec:#}");
    assert_eq!(exec["handlers"].as_array().unwrap().len(), 1, "{exec:#}");
    assert_eq!(result("raw-broken-named")["passed"], true, "{report:#}");
    let broken = result("raw-broken");
    assert_eq!(broken["passed"], false, "{broken:#}");
    let why = broken["mismatches"][0].as_str().unwrap();
    assert!(
        why.contains("@raw:") && why.contains("\"handler\""),
        "{broken:#}"
    );
    assert_eq!(broken["handlers"], serde_json::json!([]), "{broken:#}");
}

/// A case that runs no handler said so without a place: "the `@raw:` payload is not a JSON
/// object, so it names no tool…" and "no handler of the recipe runs for PreToolUse with
/// tool `exce`" named neither line nor column. Each now names the file:line:column of what
/// to change (the payload, its `tool_name`, or the `event` the recipe has no handler for)
/// and the fix. `validate` passed such cases; it now reports them, so CI that only
/// validates a recipe folder catches them too.
#[test]
fn a_case_that_runs_no_handler_names_the_spot_to_change() {
    let sb = Sandbox::new();
    raw_payload_recipe(&sb);
    let case = |file: &str, event: &str, payload: &str| {
        // A decision the event can give: a PostToolUse handler blocks, never denies.
        let decision = if event == "PostToolUse" {
            "block"
        } else {
            "deny"
        };
        sb.write(
            &format!("recipes/rawrec/tests/{file}.json"),
            format!(
                "{{\"name\": \"{file}\", \"event\": \"{event}\",\n  \"payload\": {payload},\n  \
                 \"expect\": {{\"decision\": \"{decision}\"}}}}\n"
            ),
        );
    };
    case("raw", "PreToolUse", r#""@raw:not json""#);
    case("typo", "PreToolUse", r#"{"tool_name": "exce"}"#);
    case(
        "untooled",
        "PreToolUse",
        r#"{"tool_input": {"command": "ls"}}"#,
    );
    case("post", "PostToolUse", r#"{"tool_name": "exec"}"#);
    let o = sb.cmd().args(["test", "recipes/rawrec"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    for line in [
        "recipes/rawrec/tests/raw.json:2:14: the `@raw:` payload is not a JSON object, so it \
         names no tool for the recipe's matchers; add \"handler\": \"<id>\" to the case to \
         pick the handler it runs (its handlers for PreToolUse: gate, other)",
        "recipes/rawrec/tests/typo.json:2:28: no handler of the recipe runs for PreToolUse \
         with tool `exce`: its matchers there are `exec`, `write_file`; set the payload's \
         `tool_name` to a tool one of them matches, or pick the handler with \"handler\"",
        "recipes/rawrec/tests/untooled.json:2:14: no handler of the recipe runs for \
         PreToolUse with no `tool_name` in the payload: its matchers there are `exec`, \
         `write_file`;",
        "recipes/rawrec/tests/post.json:1:27: no handler of the recipe runs for PostToolUse: \
         it has none for that event; set `event` to one it has handlers for: PreToolUse",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert!(text.trim_end().ends_with("0 passed, 4 failed"), "{text}");
    // `validate` finds the same four without running anything, at the same spots.
    let (code, r) = validate_json(&sb, &["recipes/rawrec"]);
    assert_eq!(code, 1, "{r:#}");
    let mut found: Vec<(String, u64, u64)> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "case-runs-nothing")
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            let name = file.rsplit('/').next().unwrap().to_string();
            (
                name,
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
            )
        })
        .collect();
    found.sort();
    let at = |name: &str, line, column| (name.to_string(), line, column);
    assert_eq!(
        found,
        [
            at("post.json", 1, 27),
            at("raw.json", 2, 14),
            at("typo.json", 2, 28),
            at("untooled.json", 2, 14),
        ],
        "{r:#}"
    );
}

/// A case that runs no handler is refused by the checks `validate` shares with `test`
/// (`case-runs-nothing`), before `test` ran it; its line then lost its name and read as one
/// that could not be read (`FAIL rawrec/typo.json (0 ms)`), though its name was read. A
/// case that was read keeps its name in the report, in text and JSON alike.
#[test]
fn a_case_that_runs_no_handler_keeps_its_name_in_the_report() {
    let sb = Sandbox::new();
    raw_payload_recipe(&sb);
    sb.write(
        "recipes/rawrec/tests/typo.json",
        r#"{"name": "typo in the tool", "event": "PreToolUse", "payload": {"tool_name": "exce"},
  "expect": {"decision": "deny"}}"#,
    );
    sb.write(
        "recipes/rawrec/tests/unknown.json",
        r#"{"name": "unknown handler", "event": "PreToolUse", "handler": "nope",
  "expect": {"decision": "deny"}}"#,
    );
    let o = sb.cmd().args(["test", "recipes/rawrec"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL rawrec/typo.json: typo in the tool (0 ms)\n"),
        "{text}"
    );
    assert!(
        text.contains("FAIL rawrec/unknown.json: unknown handler (0 ms)\n"),
        "{text}"
    );
    let o = sb
        .cmd()
        .args(["test", "--format", "json", "recipes/rawrec"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["typo in the tool", "unknown handler"], "{report:#}");
}

/// A case whose `tool_name` is no string (or is empty) runs no handler of a recipe with
/// matchers, as a host matches only a string; the report said "with no `tool_name` in the
/// payload" of a payload that has one. It now says what the payload holds there.
#[test]
fn a_case_whose_tool_name_is_no_string_says_what_it_holds() {
    let sb = Sandbox::new();
    raw_payload_recipe(&sb);
    for (file, payload) in [
        ("number", r#"{"tool_name": 5}"#),
        ("rawlist", r#""@raw:{\"tool_name\": [\"exec\"]}""#),
        ("empty", r#"{"tool_name": ""}"#),
        ("nokey", r#"{"tool_input": {}}"#),
    ] {
        sb.write(
            &format!("recipes/rawrec/tests/{file}.json"),
            format!(
                "{{\"name\": \"{file}\", \"event\": \"PreToolUse\", \"payload\": {payload}, \
                 \"expect\": {{\"decision\": \"deny\"}}}}\n"
            ),
        );
    }
    let (code, r) = validate_json(&sb, &["recipes/rawrec"]);
    assert_eq!(code, 1, "{r:#}");
    let finding = |name: &str| -> &serde_json::Value {
        diagnostic_in(&r, &format!("/{name}.json"))
            .unwrap_or_else(|| panic!("no finding for {name}: {r:#}"))
    };
    let message = |name: &str| finding(name)["message"].as_str().unwrap().to_string();
    // The pointer names a spot the file has: the `tool_name`, else the payload (a `@raw:`
    // string has no `/payload/tool_name`, nor has an object without the key).
    for (name, pointer) in [
        ("number", "/payload/tool_name"),
        ("empty", "/payload/tool_name"),
        ("rawlist", "/payload"),
        ("nokey", "/payload"),
    ] {
        assert_eq!(finding(name)["pointer"], pointer, "{name}: {r:#}");
    }
    assert!(
        message("number").contains("with a `tool_name` that is no string (5):"),
        "{r:#}"
    );
    assert!(
        message("rawlist").contains(r#"with a `tool_name` that is no string (["exec"]):"#),
        "{r:#}"
    );
    assert!(
        message("empty").contains("with an empty `tool_name`:"),
        "{r:#}"
    );
}

/// An assembled recipe (scripts/, no src/) named by a relative path: every case failed
/// with node's "Cannot find module '/tmp/hookpack-case-…/recipes/demo/scripts/main.js'",
/// since the script path was made relative to the case's folder, not to where test ran.
#[test]
fn an_assembled_recipe_named_by_a_relative_path_runs_its_cases() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/demo", &manifest("demo"));
    sb.write(
        "recipes/demo/tests/quiet.json",
        r#"{"name": "says nothing", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "expect": {"exit": 0, "decision": "none"}}"#,
    );
    for dir in ["recipes/demo", "recipes"] {
        let o = sb.cmd().args(["test", dir]).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{dir}: {text}");
        assert!(text.contains("1 passed, 0 failed"), "{dir}: {text}");
    }
}

/// A case file is written by hand, so a key given twice is a slip: `test` kept the last
/// value silently (a payload's first `tool_input`, `rm -rf /`, vanished and the case passed
/// on `ls`), and `validate` said nothing. Both now name the file, line and column.
#[test]
fn a_key_given_twice_in_a_case_file_is_an_error_at_its_place() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write(
        "recipes/demo/tests/dup.json",
        "{\n  \"name\": \"dup\",\n  \"event\": \"PreToolUse\",\n  \"payload\": {\n    \
         \"tool_name\": \"exec\",\n    \"tool_input\": {\"command\": \"rm -rf /\"},\n    \
         \"tool_input\": {\"command\": \"ls\"}\n  },\n  \"env\": {\"A\": \"1\", \"A\": \"2\"},\n  \
         \"expect\": {\"decision\": \"none\"}\n}\n",
    );
    let text = failing_test_run(&sb);
    assert!(text.contains("FAIL demo/dup.json"), "{text}");
    assert!(
        text.contains("recipes/demo/tests/dup.json:7:5: key `tool_input` appears twice"),
        "{text}"
    );
    assert!(
        text.contains("recipes/demo/tests/dup.json:9:21: key `A` appears twice"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");

    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let dups: Vec<_> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "duplicate-key")
        .map(|d| {
            (
                d["line"].as_u64(),
                d["column"].as_u64(),
                d["pointer"].clone(),
            )
        })
        .collect();
    assert_eq!(
        dups,
        [
            (Some(7), Some(5), "/payload/tool_input".into()),
            (Some(9), Some(21), "/env/A".into())
        ],
        "{r:#}"
    );

    // A field of the case itself given twice is that one error, not also serde's
    // "duplicate field".
    std::fs::remove_file(sb.join("recipes/demo/tests/dup.json")).unwrap();
    sb.write(
        "recipes/demo/tests/top.json",
        "{\"name\": \"a\", \"name\": \"b\", \"event\": \"PreToolUse\", \
         \"expect\": {\"decision\": \"none\"}}\n",
    );
    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let codes: Vec<_> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].clone())
        .collect();
    assert_eq!(codes, ["duplicate-key"], "{r:#}");
}

/// `test recipes/demo --format json`'s report; the run must fail.
fn failing_test_doc(sb: &Sandbox) -> Value {
    let o = sb
        .cmd()
        .args(["test", "recipes/demo", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    one_json_document(&o)
}

/// The codes `validate` finds in `recipes/demo`, sorted; it must fail.
fn refused_codes(sb: &Sandbox) -> Vec<String> {
    let (code, r) = validate_json(sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let mut codes: Vec<_> = findings(&r).into_iter().map(|(_, c)| c).collect();
    codes.sort();
    codes
}

/// The first mismatch line of the case `file` in `test`'s JSON report `doc`, which must
/// have failed without running a handler.
fn refused_case<'a>(doc: &'a Value, file: &str) -> &'a str {
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == file)
        .unwrap_or_else(|| panic!("{file}: {doc:#}"));
    assert_eq!(case["passed"], false, "{case:#}");
    assert_eq!(case["handlers"], json!([]), "{case:#}");
    case["mismatches"][0].as_str().unwrap_or_default()
}

/// A case expecting a decision that is none (`Deny`) ran its handler and failed with
/// "expected Deny, got deny"; an exit code no process gives (300, -1) ran and failed with
/// "expected 300, got 0", and `validate` passed both and a payload that is an array. Each
/// is now an error at its file:line:column, and `test` fails the case without running it.
#[test]
fn a_case_expecting_what_no_handler_gives_fails_without_running() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let case = |name: &str, expect: &str, payload: &str| {
        sb.write(
            &format!("recipes/demo/tests/{name}.json"),
            format!(
                "{{\n  \"name\": \"{name}\",\n  \"event\": \"PreToolUse\",\n  \"payload\": \
                 {payload},\n  \"expect\": {expect}\n}}\n"
            ),
        );
    };
    let rm = r#"{"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}"#;
    case("cased", r#"{"decision": "Deny"}"#, rm);
    case("exit-300", r#"{"exit": 300, "decision": "deny"}"#, rm);
    case("exit-negative", r#"{"exit": -1, "decision": "deny"}"#, rm);
    case("array", r#"{"decision": "none"}"#, "[1]");
    // Past i32 and past u64: named in the file's terms, not as `1e+20` or "an integer".
    case(
        "exit-huge",
        r#"{"exit": -3000000000, "decision": "deny"}"#,
        rm,
    );
    case(
        "exit-vast",
        r#"{"exit": 100000000000000000000, "decision": "deny"}"#,
        rm,
    );
    // A whole number written as a float is no integer, in range or not.
    case("exit-float", r#"{"exit": 2.0, "decision": "deny"}"#, rm);
    case("exit-4e9", r#"{"exit": 4e9, "decision": "deny"}"#, rm);
    let doc = failing_test_doc(&sb);
    let want = [
        ("cased.json", "5:26: unknown decision `Deny`"),
        ("exit-300.json", "5:22: expected exit code 300"),
        ("exit-negative.json", "5:22: expected exit code -1"),
        ("array.json", "4:14: `payload` must be an object"),
        (
            "exit-huge.json",
            "5:22: expected exit code -3000000000, which no process gives",
        ),
        (
            "exit-vast.json",
            "5:22: expected exit code a whole number past 18446744073709551615, which no",
        ),
        (
            "exit-float.json",
            "5:24: not a fixture case: invalid type: floating point `2.0`, expected an integer",
        ),
        (
            "exit-4e9.json",
            "5:24: not a fixture case: invalid type: floating point `4000000000.0`, expected \
             an integer",
        ),
    ];
    for (file, text) in want {
        let line = format!("recipes/demo/tests/{file}:{text}");
        let said = refused_case(&doc, file);
        assert!(said.starts_with(&line), "{line}: {said}");
    }
    assert_eq!(
        (doc["passed"].as_u64(), doc["failed"].as_u64()),
        (Some(2), Some(8))
    );

    assert_eq!(
        refused_codes(&sb),
        [
            "case-decision-unknown",
            "case-exit-invalid",
            "case-exit-invalid",
            "case-exit-invalid",
            "case-exit-invalid",
            "case-invalid",
            "case-invalid",
            "case-payload-invalid"
        ]
    );
}

/// A case written as an array ran as a case (serde reads a struct from its fields in
/// order), and so did an `expect` or a `file_contains` written so; a string `exit` was
/// reported as "expected i32". A case expecting what its event never gives (`reject` on
/// PreToolUse, an `updated_model` off UserPromptSubmit, a reason from `none`) ran, and
/// failed with "expected reject, got none". Each is now refused at its place before
/// anything runs, by `test` and by `validate`.
#[test]
fn cases_of_the_wrong_shape_or_expecting_the_impossible_fail_without_running() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let payload = r#"{"tool_name": "exec", "tool_input": {"command": "ls"}}"#;
    let cases = [
        (
            "array",
            format!(r#"["array", "PreToolUse", {payload}, {{}}, null, {{"decision": "none"}}]"#),
        ),
        (
            "expect-array",
            format!(
                r#"{{"name": "e", "event": "PreToolUse", "payload": {payload}, "expect": ["none"]}}"#
            ),
        ),
        (
            "file-array",
            format!(
                r#"{{"name": "f", "event": "PreToolUse", "payload": {payload}, "expect": {{"decision": "none", "file_contains": ["a", "b"]}}}}"#
            ),
        ),
        (
            "exit-string",
            format!(
                r#"{{"name": "x", "event": "PreToolUse", "payload": {payload}, "expect": {{"decision": "none", "exit": "0"}}}}"#
            ),
        ),
        (
            "reject",
            format!(
                r#"{{"name": "r", "event": "PreToolUse", "payload": {payload}, "expect": {{"decision": "reject"}}}}"#
            ),
        ),
        (
            "model",
            format!(
                r#"{{"name": "m", "event": "PreToolUse", "payload": {payload}, "expect": {{"decision": "none", "updated_model": "m"}}}}"#
            ),
        ),
        (
            "reason",
            format!(
                r#"{{"name": "n", "event": "PreToolUse", "payload": {payload}, "expect": {{"decision": "none", "reason_contains": "why"}}}}"#
            ),
        ),
    ];
    for (name, text) in &cases {
        sb.write(&format!("recipes/demo/tests/{name}.json"), text);
    }
    let doc = failing_test_doc(&sb);
    let want = [
        ("array.json", "1:1: not a fixture case: a case must be a JSON object, found an array"),
        ("expect-array.json", "`expect` must be a JSON object, found an array"),
        ("file-array.json", "`file_contains` must be a JSON object, found an array"),
        ("exit-string.json", "invalid type: string \"0\", expected an integer"),
        ("reject.json", "PreToolUse never gives `reject`: its outcomes are none, allow, deny, ask, block, failure"),
        ("model.json", "only UserPromptSubmit routes to a model"),
        ("reason.json", "a `none` outcome has no reason"),
    ];
    for (file, text) in want {
        let said = refused_case(&doc, file);
        assert!(
            said.starts_with(&format!("recipes/demo/tests/{file}:")) && said.contains(text),
            "{file}: {said}"
        );
        assert!(!said.contains("struct") && !said.contains("i32"), "{said}");
    }
    assert_eq!(
        (doc["passed"].as_u64(), doc["failed"].as_u64()),
        (Some(2), Some(7))
    );

    assert_eq!(
        refused_codes(&sb),
        [
            // model.json twice: `updated_model` off UserPromptSubmit, and with `none`.
            "case-decision-impossible",
            "case-decision-impossible",
            "case-decision-impossible",
            "case-decision-impossible",
            "case-invalid",
            "case-invalid",
            "case-invalid",
            "case-invalid"
        ]
    );
}

/// A folder named `x.json` in `tests/` and a case file named `x.JSON` were skipped without
/// a word (`2 passed, 0 failed`, as if the cases were not there); each is now a failed
/// case naming the entry and what to do, and a `validate` error. Other files (a README)
/// are still no cases.
#[test]
fn a_case_entry_that_is_not_a_case_file_fails_instead_of_being_skipped() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    std::fs::create_dir_all(sb.join("recipes/demo/tests/folder.json")).unwrap();
    sb.write(
        "recipes/demo/tests/Upper.JSON",
        r#"{"name": "u", "event": "PreToolUse", "payload": {"tool_name": "exec"}, "expect": {"decision": "deny"}}"#,
    );
    sb.write("recipes/demo/tests/README.md", "cases for demo\n");
    let text = failing_test_run(&sb);
    // A case that could not be read has no name: its line ends with the time alone.
    assert!(text.contains("FAIL demo/folder.json (0 ms)\n"), "{text}");
    assert!(
        text.contains("recipes/demo/tests/folder.json: a folder, not a case file"),
        "{text}"
    );
    assert!(text.contains("FAIL demo/Upper.JSON"), "{text}");
    assert!(text.contains("rename it to `Upper.json`"), "{text}");
    assert!(!text.contains("README"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 2 failed"), "{text}");

    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let mut codes: Vec<_> = findings(&r).into_iter().map(|(_, c)| c).collect();
    codes.sort();
    assert_eq!(codes, ["case-file-invalid", "case-file-invalid"], "{r:#}");
}

/// A case file in a subfolder of `tests/` (`tests/deny/rm.json`) was never run and nothing
/// said so: `test` passed without it, and `validate` said nothing. Each `*.json` below
/// `tests/` whose top level is an object with an `event` is now a failed case of its own
/// and a `validate` error, naming the file and where to move it; other files there (data,
/// JSON that is no case, text that is not JSON) are still no cases, and a linked folder is
/// not followed.
#[test]
fn a_case_file_in_a_subfolder_of_tests_fails_instead_of_being_skipped() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let case = r#"{"name": "rm", "event": "PreToolUse", "payload": {"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}, "expect": {"decision": "deny"}}"#;
    sb.write("recipes/demo/tests/deny/rm.json", case);
    sb.write("recipes/demo/tests/deep/a/b/Last.JSON", case);
    sb.write(
        "recipes/demo/tests/data/routes.json",
        r#"{"routes": [{"event": "x"}]}"#,
    );
    sb.write(
        "recipes/demo/tests/data/list.json",
        r#"[{"event": "PreToolUse"}]"#,
    );
    sb.write(
        "recipes/demo/tests/data/broken.json",
        r#"{"event": "PreToolUse", "#,
    );
    sb.write(
        "recipes/demo/tests/data/notes.txt",
        r#"{"event": "PreToolUse"}"#,
    );
    let text = failing_test_run(&sb);
    assert!(text.contains("FAIL demo/deny/rm.json (0 ms)\n"), "{text}");
    assert!(
        text.contains(
            "recipes/demo/tests/deny/rm.json: a fixture case in a subfolder of `tests/`, which \
             `test` never runs: it runs only the case files directly in `tests/`; move it \
             there, e.g. to `tests/deny-rm.json`"
        ),
        "{text}"
    );
    assert!(text.contains("FAIL demo/deep/a/b/Last.JSON"), "{text}");
    assert!(
        text.contains("e.g. to `tests/deep-a-b-Last.json`"),
        "{text}"
    );
    assert!(!text.contains("data/"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 2 failed"), "{text}");

    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let invalid: Vec<_> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["code"].clone(),
                d["file"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(invalid.len(), 2, "{r:#}");
    for (code, file) in &invalid {
        assert_eq!(code, "case-file-invalid", "{r:#}");
        assert!(
            file.ends_with("tests/deep/a/b/Last.JSON") || file.ends_with("tests/deny/rm.json"),
            "{r:#}"
        );
    }

    // A link is refused as a link by the tree checks; what it points to is not searched.
    #[cfg(unix)]
    {
        std::fs::remove_dir_all(sb.join("recipes/demo/tests/deny")).unwrap();
        std::fs::remove_dir_all(sb.join("recipes/demo/tests/deep")).unwrap();
        sb.write("elsewhere/rm.json", case);
        std::os::unix::fs::symlink(sb.join("elsewhere"), sb.join("recipes/demo/tests/linked"))
            .unwrap();
        let (code, r) = validate_json(&sb, &["recipes/demo"]);
        assert_eq!(code, 1, "{r:#}");
        let codes: Vec<_> = findings(&r).into_iter().map(|(_, c)| c).collect();
        assert_eq!(codes, ["symlink"], "{r:#}");
    }
}

/// A relative `file_contains.path` was read from where `hookpack test` ran, not from the
/// case's folder, the handler's working directory: a case passed on a file the handler
/// never wrote. It is now read from the case's folder.
#[test]
fn a_relative_file_contains_path_is_read_in_the_case_folder() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write("needle.txt", "deny\n");
    sb.write(
        "recipes/demo/tests/relative.json",
        r#"{"name": "relative", "event": "PreToolUse", "payload": {"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}, "expect": {"decision": "deny", "file_contains": {"path": "needle.txt", "contains": "deny"}}}"#,
    );
    let text = failing_test_run(&sb);
    assert!(text.contains("FAIL demo/relative.json"), "{text}");
    assert!(text.contains("needle.txt"), "{text}");
    assert!(
        !text.contains(&sb.path().join("needle.txt").display().to_string()),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");

    // Nor is one climbing out of it read (found by a hostile sweep): refused, at its place.
    sb.write(
        "recipes/demo/tests/relative.json",
        r#"{"name": "relative", "event": "PreToolUse", "payload": {"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}, "expect": {"decision": "deny", "file_contains": {"path": "{tmp}/../../needle.txt", "contains": "deny"}}}"#,
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains("`{tmp}/../../needle.txt` is outside the case's folder"),
        "{text}"
    );
}

/// Found by review: a link the handler made in the case's folder led `file_contains` out
/// of it (a link to a file of the machine was read, and the case passed).
#[cfg(unix)]
#[test]
fn a_file_contains_path_through_a_link_out_of_the_case_folder_is_not_read() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write("outside.txt", "secret\n");
    let main = sb.join("recipes/demo/src/main.ts");
    let mut source = std::fs::read_to_string(&main).unwrap();
    source.insert_str(
        0,
        "import { symlinkSync } from \"node:fs\";\n\
         if (process.env.OUTSIDE) symlinkSync(process.env.OUTSIDE, \"leak.txt\");\n",
    );
    std::fs::write(&main, source).unwrap();
    let case = serde_json::json!({"name": "link", "event": "PreToolUse",
        "env": {"OUTSIDE": sb.join("outside.txt").display().to_string()},
        "payload": {"tool_name": "exec", "tool_input": {"command": "ls"}},
        "expect": {"decision": "none", "file_contains": {"path": "leak.txt", "contains": "secret"}}});
    sb.write("recipes/demo/tests/link.json", case.to_string());
    let text = failing_test_run(&sb);
    assert!(text.contains("FAIL demo/link.json"), "{text}");
    assert!(
        text.contains("leads out of the case's folder") && text.contains("outside.txt"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
}

/// An `env` value that is not a string was set as its JSON text: `null` became the
/// variable `A=null` and an object `B={"x":1}`, and the case passed. It is now an error at
/// its file:line:column, in `test` and `validate`.
#[test]
fn an_env_value_that_is_not_a_string_is_an_error_at_its_place() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write(
        "recipes/demo/tests/env.json",
        "{\"name\": \"env\", \"event\": \"PreToolUse\",\n\"env\": {\"A\": null, \"B\": {\"x\": 1}},\n\"payload\": {\"tool_name\": \"exec\", \"tool_input\": {\"command\": \"rm -rf /\"}},\n\"expect\": {\"decision\": \"deny\"}}\n",
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains("recipes/demo/tests/env.json:2:14: `env` value of `A` is null"),
        "{text}"
    );
    assert!(
        text.contains("recipes/demo/tests/env.json:2:25: `env` value of `B` is an object"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/env/A", "case-env-invalid");
    assert_finding(&r, "/env/B", "case-env-invalid");
}

/// Found by review: a case's `env` could give a handler a secret-shaped variable
/// (`OPENAI_API_KEY`) that hosts strip, so a case passed on what no host hands a handler.
/// It is an error at the name, naming the way hosts keep (`FINCLAW_HOOK_…`).
#[test]
fn a_case_env_name_hosts_strip_is_an_error_at_its_place() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write(
        "recipes/demo/tests/env.json",
        "{\"name\": \"env\", \"event\": \"PreToolUse\",\n\"env\": {\"OPENAI_API_KEY\": \"k\", \"FINCLAW_HOOK_JUDGE_TOKEN\": \"t\"},\n\"payload\": {\"tool_name\": \"exec\", \"tool_input\": {\"command\": \"rm -rf /\"}},\n\"expect\": {\"decision\": \"deny\"}}\n",
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains(
            "recipes/demo/tests/env.json:2:9: `env` name \"OPENAI_API_KEY\" is one hosts strip"
        ),
        "{text}"
    );
    assert!(!text.contains("FINCLAW_HOOK_JUDGE_TOKEN\" is"), "{text}");
    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/env/OPENAI_API_KEY", "case-env-invalid");
}

/// An `env` name that is empty or holds `=` or NUL, and a value holding NUL, which no
/// environment can carry, were found by `test` only as it set up the case, one at a time
/// and without a place, and `validate` passed them. Each is now an error at its
/// file:line:column, case-env-invalid (a name at the name, a value at the value), in
/// `test`, which runs nothing for the case, and in `validate`.
#[test]
fn an_env_name_or_value_no_environment_carries_is_an_error_at_its_place() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write(
        "recipes/demo/tests/env-nul.json",
        "{\"name\": \"env\", \"event\": \"PreToolUse\",\n\
         \"env\": {\"A\\u0000B\": \"1\", \"C\": \"x\\u0000y\", \"\": \"1\", \"D=E\": \"1\"},\n\
         \"payload\": {\"tool_name\": \"exec\", \"tool_input\": {\"command\": \"ls\"}},\n\
         \"expect\": {\"decision\": \"none\"}}\n",
    );
    let text = failing_test_run(&sb);
    for line in [
        "recipes/demo/tests/env-nul.json:2:9: `env` name \"A\\0B\" holds NUL",
        "recipes/demo/tests/env-nul.json:2:31: `env` value of \"C\" holds NUL",
        "recipes/demo/tests/env-nul.json:2:43: `env` name is empty",
        "recipes/demo/tests/env-nul.json:2:52: `env` name \"D=E\" holds `=`",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");

    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    let found: Vec<_> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["line"].as_u64(),
                d["column"].as_u64(),
                d["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let at = |line, column, pointer: &str| {
        (
            "case-env-invalid".to_string(),
            Some(line),
            Some(column),
            pointer.to_string(),
        )
    };
    assert_eq!(
        found,
        [
            at(2, 9, "/env/A\u{0}B"),
            at(2, 31, "/env/C"),
            at(2, 43, "/env/"),
            at(2, 52, "/env/D=E"),
        ],
        "{r:#}"
    );
}

/// A case whose `handler` names no handler of the recipe (a typo) failed with "no handler
/// of the recipe runs for PreToolUse with tool `exec`", as if the matcher were at fault; it
/// now names the id it looked for and the handlers the event has, at its file:line:column,
/// without running anything, and `validate` reports it too.
#[test]
fn a_case_naming_a_handler_the_recipe_lacks_says_which() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write(
        "recipes/demo/tests/typo.json",
        r#"{"name": "typo", "event": "PreToolUse", "handler": "check-exce", "payload": {"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}, "expect": {"decision": "deny"}}"#,
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains(
            "recipes/demo/tests/typo.json:1:52: `handler` `check-exce` names no handler of \
             the recipe for PreToolUse; its handlers there: demo"
        ),
        "{text}"
    );
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/handler", "case-handler-unknown");
}

/// A recipe whose `tests` is a file, not a folder of cases, passed `test` ("no fixture
/// cases found", exit 0) and `validate`; it is now an error naming it.
#[test]
fn a_tests_entry_that_is_not_a_folder_is_an_error() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    std::fs::remove_dir_all(sb.join("recipes/demo/tests")).unwrap();
    sb.write("recipes/demo/tests", "{}");
    let text = failing_test_run(&sb);
    assert!(
        text.contains("recipes/demo/tests: a file, not a folder of fixture cases"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("0 passed, 1 failed"), "{text}");
    let (code, r) = validate_json(&sb, &["recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "", "case-file-invalid");
}

/// Runs `hookpack test recipes/demo`, which must fail (exit 1), and returns its stdout.
fn failing_test_run(sb: &Sandbox) -> String {
    let o = sb.cmd().args(["test", "recipes/demo"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{text}");
    text
}

/// A recipe without fixture cases, beside one with them, passed `test` without a word: CI
/// that runs `hookpack test recipes` could not tell it tested nothing there. It is named
/// (a warning; the run's outcome is its cases'), in text and JSON.
#[test]
fn a_recipe_without_cases_is_named_by_test() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    write_recipe(&sb, "recipes/bare", &manifest("bare"));
    let o = sb.cmd().args(["test", "recipes"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "warning: recipe `bare` has no fixture cases (tests/*.json), so nothing of it was \
             tested; add one (see the cases `hookpack new` writes)"
        ),
        "{err}"
    );
    assert!(!err.contains("`demo`"), "{err}");
    let o = sb
        .cmd()
        .args(["test", "recipes", "--format", "json"])
        .output()
        .unwrap();
    let report = one_json_document(&o);
    assert_eq!(report["without_cases"], json!(["bare"]), "{report:#}");
}

/// When no recipe tested has a case, `test` said only "no fixture cases found (tests/*.json
/// in each recipe)", not which recipes those are, while the README promises each such recipe
/// named (found by review). It is a warning, as it is for a recipe without cases beside
/// others that have some (it had no `warning:` prefix: found by the README walkthrough).
#[test]
fn recipes_that_all_lack_cases_are_named_by_test() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/bare", &manifest("bare"));
    write_recipe(&sb, "recipes/empty", &manifest("empty"));
    let o = sb.cmd().args(["test", "recipes"]).output().unwrap();
    fails_saying(
        &o,
        0,
        "warning: no fixture cases found (tests/*.json) in bare, empty, so nothing was tested",
    );
}

/// A handler whose program is not found (node missing, or not on the PATH the handlers'
/// login shell sets) failed every case with "exit 127" and a shell's stderr line each, with
/// nothing saying once what to install (found by the new-user walkthrough). A note names
/// the program.
#[test]
fn a_program_the_handlers_shell_cannot_find_is_named_once() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    let manifest_path = sb.join("recipes/demo/recipe.json");
    let text = std::fs::read_to_string(&manifest_path).unwrap();
    std::fs::write(
        &manifest_path,
        text.replace("node scripts/main.js", "sh scripts/gate.sh"),
    )
    .unwrap();
    sb.write("recipes/demo/src/gate.sh", "nodez scripts/main.js\n");
    let o = sb.cmd().args(["test", "recipes/demo"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "note: handlers exited 127, as a shell does for a command it cannot find: `nodez`; \
             install it, or put it on the PATH that `$SHELL -lc` sets"
        ),
        "{err}"
    );
    assert_eq!(err.matches("exited 127").count(), 1, "{err}");
}

/// A failing handler's stderr (node's stack trace: the source line, a caret under the spot,
/// the error) is shown line by line under the case, indented, as node printed it; it was
/// one line with each line break written `\n`, which put the caret nowhere near the spot.
#[test]
fn a_failing_handlers_stderr_is_shown_line_by_line() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    prepend_to_demo_main(
        &sb,
        "process.stderr.write(\"first line\\n  second\\tline\\n\\nafter a blank\\n\");\nprocess.exit(1);\n",
    );
    let text = failing_test_run(&sb);
    assert!(
        text.contains(
            "       stderr of demo:\n         | first line\n         |   second\\tline\n         |\n         | after a blank\n"
        ),
        "{text}"
    );
    assert!(!text.contains(r"first line\n"), "{text}");
}

/// `test recipes` with one recipe whose TypeScript does not compile stopped there: the
/// other recipes' cases never ran, and a second broken recipe's errors went unsaid (found
/// by the new-user walkthrough). Every broken recipe's errors are now reported, the sound
/// recipes' cases run, and the run fails naming the recipes left untested.
#[test]
fn test_runs_the_sound_recipes_and_names_every_broken_one() {
    let sb = Sandbox::new();
    for id in ["alpha", "beta", "delta", "gamma"] {
        sb.cmd()
            .args(["new", id, "--dir", "recipes"])
            .assert()
            .success();
    }
    // Two sources for one output file: refused when assembling (found by review: this
    // stopped the whole run still).
    sb.write("recipes/delta/src/x.ts", "export const a = 1;\n");
    sb.write("recipes/delta/src/x.js", "export const a = 1;\n");
    for id in ["alpha", "gamma"] {
        let main = sb.join(&format!("recipes/{id}/src/main.ts"));
        let mut text = std::fs::read_to_string(&main).unwrap();
        text.push_str("const broken: = 1;\n");
        std::fs::write(&main, text).unwrap();
    }
    let o = sb.cmd().args(["test", "recipes"]).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("ok   beta/"), "{out}");
    assert!(out.trim_end().ends_with("2 passed, 0 failed"), "{out}");
    for id in ["alpha", "gamma"] {
        assert!(
            err.contains(&format!("recipes/{id}/src/main.ts:"))
                && err.contains("error[typescript]"),
            "{err}"
        );
    }
    assert!(
        err.contains("recipes/delta/src/x.ts: error[path-refused]"),
        "{err}"
    );
    // The line that says why the run failed is an error: `-q` keeps it (found by review).
    let quiet = sb.cmd().args(["test", "recipes", "-q"]).output().unwrap();
    assert_eq!(quiet.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&quiet.stderr).contains("error: the sources of recipes/alpha"),
        "{quiet:?}"
    );
    assert!(
        err.contains(
            "error: the sources of recipes/alpha, recipes/delta, recipes/gamma have errors \
             (above), so none of their cases ran"
        ),
        "{err}"
    );
    let o = sb
        .cmd()
        .args(["test", "recipes", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let doc = one_json_document(&o);
    assert_eq!(
        doc["untested"],
        json!(["recipes/alpha", "recipes/delta", "recipes/gamma"]),
        "{doc:#}"
    );
    assert_eq!(doc["diagnostics"].as_array().unwrap().len(), 3, "{doc:#}");
    assert_eq!(
        (doc["passed"].as_u64(), doc["failed"].as_u64()),
        (Some(2), Some(0))
    );
}

/// `test` on a recipe that does not validate ended with "…; nothing was written", which a
/// command that writes nothing anyway says to no purpose: it says no case was run.
#[test]
fn test_on_an_invalid_recipe_says_no_case_was_run() {
    let sb = Sandbox::new();
    scaffold_demo(&sb);
    sb.write("recipes/demo/node_modules/x/index.js", "\n");
    let o = sb.cmd().args(["test", "recipes"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("[node-modules]"), "{err}");
    assert!(
        err.contains("error: 1 problem(s) in the recipes; no case was run"),
        "{err}"
    );
    let o = sb
        .cmd()
        .args(["test", "recipes", "--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "recipes-invalid", "{doc}");
}
