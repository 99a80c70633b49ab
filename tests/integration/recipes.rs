//! Our five recipes: their fixture cases pass against the assembled output with the real
//! `node`, and `hookpack test` reports failures with a diff.

use crate::common::*;
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

#[test]
fn a_failing_case_is_reported_with_a_diff() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["new", "demo", "--dir", "recipes"])
        .assert()
        .success();
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
    let o = sb.cmd().args(["test", "recipes/demo"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("FAIL demo/wrong.json: expects the wrong thing"),
        "{text}"
    );
    assert!(text.contains("decision: expected deny, got none"), "{text}");
    assert!(text.trim_end().ends_with("2 passed, 1 failed"), "{text}");
}
