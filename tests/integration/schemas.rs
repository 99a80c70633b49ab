//! The published JSON Schemas agree with the Rust validator on everything a schema can
//! express; the rules only the validator knows are listed beside each fixture.

use hookpack::diagnostic::Severity;
use serde_json::{json, Value};
use std::path::Path;

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(name);
    let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(
        jsonschema::meta::is_valid(&doc),
        "{name} is not a valid JSON Schema"
    );
    assert!(doc["$id"].as_str().unwrap().ends_with(name));
    jsonschema::validator_for(&doc).unwrap()
}

fn rust_ok(kind: &str, doc: &Value) -> bool {
    let bytes = serde_json::to_vec(doc).unwrap();
    let file = Path::new("doc.json");
    let diags = match kind {
        "hooks" => hookpack::hooks_json::validate_bytes(file, &bytes),
        "recipe" => hookpack::recipe::validate_manifest_bytes(file, &bytes, None),
        "catalog" => hookpack::catalog::validate_bytes(file, &bytes),
        _ => unreachable!(),
    };
    !diags.iter().any(|d| d.severity == Severity::Error)
}

/// Applies `edit` to a copy of `base`.
fn with(base: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = base.clone();
    edit(&mut v);
    v
}

fn check(kind: &str, schema_file: &str, cases: Vec<(&str, Value, bool)>) {
    let v = schema(schema_file);
    let mut compared = 0;
    for (name, doc, expressible) in cases {
        let by_schema = v.is_valid(&doc);
        let by_rust = rust_ok(kind, &doc);
        if expressible {
            assert_eq!(
                by_schema, by_rust,
                "{kind}/{name}: schema says {by_schema}, validator says {by_rust}"
            );
            compared += 1;
        } else {
            // Only the validator can see these faults; the schema must not reject more.
            assert!(
                by_schema && !by_rust,
                "{kind}/{name}: expected schema-valid but validator-invalid"
            );
        }
    }
    assert!(compared >= 10, "too few comparable fixtures for {kind}");
}

fn hooks_base() -> Value {
    json!({"description": "d", "hooks": {
        "PreToolUse": [{"matcher": "exec", "hooks": [{"type": "command", "command": "node a.js", "timeout": 5, "failurePolicy": "deny", "id": "a"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "x", "async": true, "recipe": "audit-log"}]}]
    }})
}

#[test]
fn hooks_schema_agrees() {
    let b = hooks_base();
    let h = |event: &str, handler: Value| json!({"hooks": {event: [{"hooks": [handler]}]}});
    let cmd = |extra: Value| {
        let mut o = json!({"type": "command", "command": "x"});
        for (k, v) in extra.as_object().unwrap() {
            o[k] = v.clone();
        }
        o
    };
    check(
        "hooks",
        "hooks.schema.json",
        vec![
            ("base", b.clone(), true),
            ("empty hooks", json!({"hooks": {}}), true),
            ("no hooks", json!({"description": "x"}), true),
            (
                "event outside hooks",
                json!({"hooks": {}, "Stop": [{"hooks": []}]}),
                true,
            ),
            ("not object", json!([1]), true),
            ("unknown event", json!({"hooks": {"OnBoot": []}}), true),
            ("groups not array", json!({"hooks": {"Stop": {}}}), true),
            (
                "group without hooks",
                json!({"hooks": {"Stop": [{"matcher": "x"}]}}),
                true,
            ),
            (
                "matcher number",
                json!({"hooks": {"PreToolUse": [{"matcher": 1, "hooks": []}]}}),
                true,
            ),
            (
                "type shell",
                h("Stop", json!({"type": "shell", "command": "x"})),
                true,
            ),
            ("no command", h("Stop", json!({"type": "command"})), true),
            (
                "blank command",
                h("Stop", cmd(json!({"command": "  "}))),
                true,
            ),
            (
                "NUL in command",
                h("Stop", cmd(json!({"command": "true\u{0} x"}))),
                true,
            ),
            (
                "command too long",
                h("Stop", cmd(json!({"command": "x".repeat(131072)}))),
                true,
            ),
            (
                "longest command",
                h("Stop", cmd(json!({"command": "x".repeat(131071)}))),
                true,
            ),
            (
                "command too long in bytes only",
                h("Stop", cmd(json!({"command": "é".repeat(70000)}))),
                false,
            ),
            ("timeout 0", h("Stop", cmd(json!({"timeout": 0}))), true),
            ("timeout -3", h("Stop", cmd(json!({"timeout": -3}))), true),
            (
                "timeout string",
                h("Stop", cmd(json!({"timeout": "5"}))),
                true,
            ),
            (
                "async on PreToolUse",
                h("PreToolUse", cmd(json!({"async": true}))),
                true,
            ),
            (
                "async on SessionStart",
                h("SessionStart", cmd(json!({"async": true}))),
                true,
            ),
            (
                "async false on PreToolUse",
                h("PreToolUse", cmd(json!({"async": false}))),
                true,
            ),
            (
                "async on Stop",
                h("Stop", cmd(json!({"async": true}))),
                true,
            ),
            (
                "async string",
                h("Stop", cmd(json!({"async": "yes"}))),
                true,
            ),
            (
                "failurePolicy on Stop",
                h("Stop", cmd(json!({"failurePolicy": "deny"}))),
                true,
            ),
            (
                "failurePolicy allow",
                h("PreToolUse", cmd(json!({"failurePolicy": "allow"}))),
                true,
            ),
            ("bad id", h("Stop", cmd(json!({"id": "Bad"}))), true),
            (
                "long id",
                h("Stop", cmd(json!({"id": "x".repeat(65)}))),
                true,
            ),
            (
                "bad recipe stamp",
                h("Stop", cmd(json!({"recipe": "a--b"}))),
                true,
            ),
            (
                "statusMessage number",
                h("Stop", cmd(json!({"statusMessage": 1}))),
                true,
            ),
            (
                "unknown handler field",
                h("Stop", cmd(json!({"zzz": 1}))),
                true,
            ),
            (
                "description number",
                json!({"description": 1, "hooks": {}}),
                true,
            ),
            // Only the validator knows these.
            (
                "matcher does not compile",
                json!({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}),
                false,
            ),
            (
                "duplicate ids in an event",
                json!({"hooks": {"Stop": [{"hooks": [cmd(json!({"id": "a"})), cmd(json!({"id": "a"}))]}]}}),
                false,
            ),
        ],
    );
}

#[test]
fn recipe_schema_agrees() {
    let b = json!({
        "schema": "hooks.recipe.v1", "id": "tool-gate", "version": "0.1.0", "min_cli": "0.13.0",
        "name": "Tool gate", "summary": "s",
        "hooks": {"PreToolUse": [{"matcher": "exec", "hooks": [{"id": "g", "type": "command", "command": "node scripts/main.js"}]}]}
    });
    let handler =
        |edit: fn(&mut Value)| with(&b, |v| edit(&mut v["hooks"]["PreToolUse"][0]["hooks"][0]));
    check(
        "recipe",
        "recipe.schema.json",
        vec![
            ("base", b.clone(), true),
            (
                "schema v2",
                with(&b, |v| v["schema"] = json!("hooks.recipe.v2")),
                true,
            ),
            (
                "no schema",
                with(&b, |v| drop(v.as_object_mut().unwrap().remove("schema"))),
                true,
            ),
            ("bad id", with(&b, |v| v["id"] = json!("Tool_Gate")), true),
            ("id with dot", with(&b, |v| v["id"] = json!(".x")), true),
            (
                "prerelease",
                with(&b, |v| v["version"] = json!("0.1.0-rc1")),
                true,
            ),
            (
                "build meta",
                with(&b, |v| v["min_cli"] = json!("0.13.0+b")),
                true,
            ),
            (
                "two numbers",
                with(&b, |v| v["version"] = json!("1.2")),
                true,
            ),
            (
                "leading zero",
                with(&b, |v| v["version"] = json!("01.2.3")),
                true,
            ),
            (
                "empty summary",
                with(&b, |v| v["summary"] = json!(" ")),
                true,
            ),
            (
                "no summary",
                with(&b, |v| drop(v.as_object_mut().unwrap().remove("summary"))),
                true,
            ),
            ("name number", with(&b, |v| v["name"] = json!(3)), true),
            (
                "no hooks",
                with(&b, |v| drop(v.as_object_mut().unwrap().remove("hooks"))),
                true,
            ),
            ("empty hooks", with(&b, |v| v["hooks"] = json!({})), true),
            (
                "handler without id",
                handler(|h| drop(h.as_object_mut().unwrap().remove("id"))),
                true,
            ),
            (
                "handler with recipe",
                handler(|h| h["recipe"] = json!("tool-gate")),
                true,
            ),
            (
                "async on PreToolUse",
                handler(|h| h["async"] = json!(true)),
                true,
            ),
            ("timeout 0", handler(|h| h["timeout"] = json!(0)), true),
            (
                "unknown field",
                with(&b, |v| v["colour"] = json!("blue")),
                true,
            ),
            // Only the validator knows these.
            (
                "duplicate handler ids",
                with(&b, |v| {
                    let h = v["hooks"]["PreToolUse"][0]["hooks"][0].clone();
                    v["hooks"]["Stop"] = json!([{"hooks": [h]}]);
                }),
                false,
            ),
            (
                "absolute script",
                handler(|h| h["command"] = json!("node /abs/main.js")),
                false,
            ),
            (
                "parent script",
                handler(|h| h["command"] = json!("node ../x.js")),
                false,
            ),
            (
                "PATH command",
                handler(|h| h["command"] = json!("echo hi")),
                false,
            ),
            (
                "NUL in command",
                handler(|h| h["command"] = json!("node scripts/main.js\u{0}")),
                true,
            ),
            (
                "command too long",
                handler(|h| {
                    h["command"] = json!(format!("node scripts/main.js {}", "x".repeat(131071)))
                }),
                true,
            ),
            (
                "only empty events",
                with(&b, |v| v["hooks"] = json!({"Stop": []})),
                false,
            ),
        ],
    );
}

#[test]
fn catalog_schema_agrees() {
    let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    let b = json!({"schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z", "recipes": [
        {"id": "a", "name": "A", "summary": "s", "latest": "0.2.0", "min_cli": "0.13.0", "versions": [
            {"version": "0.2.0", "url": "hooks-a-0.2.0.tar.gz", "sha256": sha, "size": 10, "min_cli": "0.13.0"},
            {"version": "0.1.0", "url": "https://x.test/hooks-a-0.1.0.tar.gz", "sha256": sha, "min_cli": "0.12.0"}]}
    ]});
    let ver = |edit: fn(&mut Value)| with(&b, |v| edit(&mut v["recipes"][0]["versions"][0]));
    check(
        "catalog",
        "catalog.schema.json",
        vec![
            ("base", b.clone(), true),
            (
                "unknown fields ignored",
                with(&b, |v| v["mirror"] = json!("x")),
                true,
            ),
            (
                "schema wrong",
                with(&b, |v| v["schema"] = json!("hooks.catalog.v2")),
                true,
            ),
            (
                "bad timestamp",
                with(&b, |v| v["updated_at"] = json!("2026-11-29")),
                true,
            ),
            (
                "offset timestamp",
                with(&b, |v| {
                    v["updated_at"] = json!("2026-11-29T10:00:00.5+02:00")
                }),
                true,
            ),
            (
                "recipes object",
                with(&b, |v| v["recipes"] = json!({})),
                true,
            ),
            (
                "bad id",
                with(&b, |v| v["recipes"][0]["id"] = json!("A")),
                true,
            ),
            (
                "no versions",
                with(&b, |v| v["recipes"][0]["versions"] = json!([])),
                true,
            ),
            (
                "uppercase sha",
                ver(|x| x["sha256"] = json!(x["sha256"].as_str().unwrap().to_uppercase())),
                true,
            ),
            ("short sha", ver(|x| x["sha256"] = json!("abc")), true),
            ("ftp url", ver(|x| x["url"] = json!("ftp://x/a.tgz")), true),
            ("space in url", ver(|x| x["url"] = json!("a b.tgz")), true),
            (
                "file url",
                ver(|x| x["url"] = json!("file:///srv/a.tgz")),
                true,
            ),
            ("negative size", ver(|x| x["size"] = json!(-1)), true),
            (
                "prerelease",
                ver(|x| x["version"] = json!("0.2.0-rc1")),
                true,
            ),
            (
                "no sha",
                ver(|x| drop(x.as_object_mut().unwrap().remove("sha256"))),
                true,
            ),
            // Only the validator knows these.
            (
                "latest not listed",
                with(&b, |v| v["recipes"][0]["latest"] = json!("9.9.9")),
                false,
            ),
            (
                "min_cli mismatch",
                with(&b, |v| v["recipes"][0]["min_cli"] = json!("0.1.0")),
                false,
            ),
            (
                "duplicate ids",
                with(&b, |v| {
                    let r = v["recipes"][0].clone();
                    v["recipes"].as_array_mut().unwrap().push(r);
                }),
                false,
            ),
            (
                "duplicate versions",
                with(&b, |v| {
                    let x = v["recipes"][0]["versions"][0].clone();
                    v["recipes"][0]["versions"].as_array_mut().unwrap().push(x);
                }),
                false,
            ),
        ],
    );
}
