//! Helpers shared by the integration tests.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A temporary folder that also serves as `FINCLAW_HOME` and the working directory.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `body` at `rel`, creating folders.
    pub fn write(&self, rel: &str, body: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        p
    }

    /// The binary, run inside the sandbox with a clean hookpack environment.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("hookpack").expect("binary");
        c.current_dir(self.path())
            .env("FINCLAW_HOME", self.join("finclaw-home"))
            .env_remove("FINCLAW_PROFILE")
            .env_remove("HOOKPACK_INDEX_URL")
            .env_remove("HOOKPACK_CLI_VERSION")
            .env("NO_COLOR", "1");
        c
    }
}

/// Runs `hookpack validate --format json ARGS…` and returns (exit code, report).
pub fn validate_json(sb: &Sandbox, args: &[&str]) -> (i32, Value) {
    let out = sb
        .cmd()
        .arg("validate")
        .arg("--format")
        .arg("json")
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().expect("exit code");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, report)
}

/// (pointer, code) of every diagnostic in a JSON report.
pub fn findings(report: &Value) -> Vec<(String, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["pointer"].as_str().unwrap().to_string(),
                d["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Asserts that `report` holds a diagnostic with `code` at `pointer`.
pub fn assert_finding(report: &Value, pointer: &str, code: &str) {
    let all = findings(report);
    assert!(
        all.iter().any(|(p, c)| p == pointer && c == code),
        "expected {code} at {pointer}, got {all:#?}"
    );
}

/// A minimal valid recipe manifest for `id`.
pub fn manifest(id: &str) -> Value {
    serde_json::json!({
        "schema": "hooks.recipe.v1",
        "id": id,
        "version": "0.1.0",
        "min_cli": "0.13.0",
        "name": "Test",
        "summary": "A test recipe.",
        "hooks": {
            "PreToolUse": [{
                "matcher": "exec",
                "hooks": [{ "id": "gate", "type": "command", "command": "node scripts/main.js", "timeout": 10 }]
            }]
        }
    })
}

/// Writes an assembled-style recipe folder `rel` with `manifest`, a README and its script.
pub fn write_recipe(sb: &Sandbox, rel: &str, manifest: &Value) -> PathBuf {
    sb.write(
        &format!("{rel}/recipe.json"),
        serde_json::to_vec_pretty(manifest).unwrap(),
    );
    sb.write(&format!("{rel}/README.md"), "# test\n");
    sb.write(&format!("{rel}/scripts/main.js"), "process.exit(0);\n");
    sb.join(rel)
}
