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
        Command::from_std(self.std_cmd())
    }

    /// The same as [`Sandbox::cmd`], as a `std` command (to spawn several at once).
    pub fn std_cmd(&self) -> std::process::Command {
        self.in_sandbox(assert_cmd::cargo::cargo_bin("hookpack"))
    }

    /// `shell -c command` (advice as a user would paste it), in the sandbox's environment
    /// with the hookpack under test first on PATH.
    pub fn shell(&self, shell: &str, command: &str) -> std::process::Command {
        let bin = assert_cmd::cargo::cargo_bin("hookpack");
        let path = format!(
            "{}:{}",
            bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = self.in_sandbox(shell);
        c.args(["-c", command]).env("PATH", path);
        c
    }

    /// `program`, run inside the sandbox with a clean hookpack environment.
    fn in_sandbox(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut c = std::process::Command::new(program);
        c.current_dir(self.path())
            .env("FINCLAW_HOME", self.join("finclaw-home"))
            .env_remove("FINCLAW_PROFILE")
            .env_remove("HOOKPACK_INDEX_URL")
            .env_remove("HOOKPACK_CLI_VERSION")
            .env_remove("SOURCE_DATE_EPOCH")
            .env("NO_COLOR", "1");
        c
    }
}

/// Packs the recipes under `src/` into the catalog folder `cat/`; the test fails if that
/// fails.
pub fn pack_src_into_cat(sb: &Sandbox) {
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .output()
        .unwrap());
}

/// Packs into `cat/` a recipe `shrec` whose handler runs a shell script, not node, and
/// returns the index's path (for profiles node cannot load a script from).
pub fn sh_recipe_catalog(sb: &Sandbox) -> PathBuf {
    let mut m = manifest("shrec");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = "sh scripts/main.sh".into();
    sb.write(
        "src/shrec/recipe.json",
        serde_json::to_vec_pretty(&m).unwrap(),
    );
    sb.write("src/shrec/README.md", "# shrec\n");
    sb.write("src/shrec/scripts/main.sh", "exit 0\n");
    pack_src_into_cat(sb);
    sb.join("cat/hooks-index.json")
}

/// Asserts that a run succeeded, showing its output when it did not.
pub fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Asserts that a run exited with `code` and said `text` on stderr, showing its stderr when
/// it did not.
pub fn fails_saying(o: &std::process::Output, code: i32, text: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.contains(text), "wanted {text:?} in stderr:\n{err}");
}

/// Stdout of a run as its one JSON document: the test fails, showing the output, if it is
/// anything else (part of a document, or a document followed by more).
pub fn one_json_document(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}), exit {:?}:\n{}\nstderr:\n{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Reads a JSON file.
pub fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
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

/// The first diagnostic of `report` about a file whose path ends with `suffix`.
pub fn diagnostic_in<'a>(report: &'a Value, suffix: &str) -> Option<&'a Value> {
    report["diagnostics"]
        .as_array()?
        .iter()
        .find(|d| d["file"].as_str().is_some_and(|f| f.ends_with(suffix)))
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

/// Writes the TypeScript source tree of the recipe `id` (the [`manifest`], a README and
/// `src/main.ts`, which exits 0) into `root/id`.
pub fn write_ts_recipe(sb: &Sandbox, root: &str, id: &str) {
    sb.write(
        &format!("{root}/{id}/recipe.json"),
        serde_json::to_vec_pretty(&manifest(id)).unwrap(),
    );
    sb.write(&format!("{root}/{id}/README.md"), format!("# {id}\n"));
    sb.write(&format!("{root}/{id}/src/main.ts"), "process.exit(0);\n");
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

/// A real HTTP/1.1 server on 127.0.0.1, serving files from a folder, for fetch tests.
/// Each connection is answered by `respond`, which gets the request path and may return
/// a custom raw response (for faults); `None` serves the file.
pub struct HttpServer {
    pub addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

pub type Responder = dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync;

/// A [`Responder`] that also gets the request's header lines (`name: value`, one per line,
/// as sent), for a server that answers by them (a private one asking for credentials).
pub type HeadResponder = dyn Fn(&str, &str) -> Option<Vec<u8>> + Send + Sync;

impl HttpServer {
    pub fn serve(root: PathBuf, respond: Box<Responder>) -> HttpServer {
        HttpServer::serve_by_headers(root, Box::new(move |path, _| respond(path)))
    }

    /// [`HttpServer::serve`], answering by the request's headers too.
    pub fn serve_by_headers(root: PathBuf, respond: Box<HeadResponder>) -> HttpServer {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !flag.load(std::sync::atomic::Ordering::Relaxed)
                && std::time::Instant::now() < deadline
            {
                let (stream, _) = match listener.accept() {
                    Ok(s) => s,
                    Err(_) => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        continue;
                    }
                };
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let mut headers = String::new();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                        break;
                    }
                    headers.push_str(h.trim_end_matches(['\r', '\n']));
                    headers.push('\n');
                }
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .to_string();
                let mut stream = stream;
                let response = respond(&path, &headers).unwrap_or_else(|| {
                    let file = root.join(path.trim_start_matches('/'));
                    match std::fs::read(&file) {
                        Ok(body) => {
                            let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).into_bytes();
                            r.extend(body);
                            r
                        }
                        Err(_) => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
                    }
                });
                let _ = stream.write_all(&response);
                let _ = stream.flush();
            }
        });
        HttpServer {
            addr,
            stop,
            handle: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `hookpack list --profile prof --workspace ws --format json`, parsed.
pub fn list_json(sb: &Sandbox) -> Value {
    list_json_of(sb.cmd())
}

/// [`list_json`] run by `cmd` (a [`Sandbox::cmd`] with some environment of its own).
pub fn list_json_of(mut cmd: Command) -> Value {
    let o = cmd
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
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "list printed no JSON ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Every entry under `root` (links not followed): its kind, a link's target and a file's
/// bytes. The profile lock, which the first command to take it makes, is left out.
pub fn sandbox_state(root: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_name() == ".hookpack.lock" {
            continue;
        }
        let rel = e.path().strip_prefix(root).unwrap().display().to_string();
        let ft = e.file_type();
        let kind = if ft.is_symlink() {
            format!(
                "link -> {}",
                std::fs::read_link(e.path()).unwrap().display()
            )
        } else if ft.is_dir() {
            "dir".to_string()
        } else {
            format!(
                "file {}",
                String::from_utf8_lossy(&std::fs::read(e.path()).unwrap())
            )
        };
        out.insert(rel, kind);
    }
    out
}

/// Copies the files of the folder `from` (not its subfolders) into `to`, made if missing:
/// a catalog folder as published at one moment.
pub fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Installs `id` at `version` of the repo's catalog into `profile` as a user did when that
/// version was the newest: with no pin (`install ID`), from a copy of the catalog in
/// `older-index/` whose index lists that version alone. The whole index is then published
/// there, as a next release is, so `update` (which compares with the index the receipt
/// names) finds the newer versions. (`install ID@VERSION` would pin it: `update` leaves it.)
/// Returns what the install printed.
pub fn install_older_unpinned(
    sb: &Sandbox,
    profile: &str,
    id: &str,
    version: &str,
) -> std::process::Output {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog");
    let dir = sb.join("older-index");
    copy_files(&catalog, &dir);
    let index = dir.join("hooks-index.json");
    let full = std::fs::read(&index).unwrap();
    let mut doc: Value = serde_json::from_slice(&full).unwrap();
    let recipe = doc["recipes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not in the catalog"));
    let listed = recipe["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["version"] == version)
        .cloned()
        .unwrap_or_else(|| panic!("{id} {version} is not in the catalog"));
    recipe["latest"] = Value::from(version);
    recipe["min_cli"] = listed["min_cli"].clone();
    recipe["versions"] = Value::Array(vec![listed]);
    std::fs::write(&index, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let o = sb
        .cmd()
        .args([
            "install",
            id,
            "--index",
            "older-index",
            "--profile",
            profile,
        ])
        .output()
        .unwrap();
    ok(&o);
    let receipt = read_json(&sb.join(&format!("{profile}/hooks/.receipts/{id}.json")));
    assert_eq!(receipt["version"], version, "{receipt:#}");
    assert!(receipt.get("pin").is_none(), "{receipt:#}");
    std::fs::write(&index, full).unwrap();
    o
}

/// The ` --profile DIR` that advice carries after a command given `--profile rel` (the
/// sandbox's paths need no quoting).
pub fn profile_flag(sb: &Sandbox, rel: &str) -> String {
    format!(" --profile {}", sb.join(rel).display())
}

/// Runs `command` as advice prints it (`hookpack …`, its words shell-quoted where they need
/// it and none holding a space; the `--profile` of the command that printed it included)
/// from another folder, and checks that it succeeds.
pub fn run_as_printed(sb: &Sandbox, command: &str) {
    std::fs::create_dir_all(sb.join("elsewhere")).unwrap();
    let words: Vec<&str> = (command.split(' ').skip(1))
        .map(|w| w.trim_matches('\''))
        .collect();
    ok(&sb
        .cmd()
        .current_dir(sb.join("elsewhere"))
        .args(&words)
        .output()
        .unwrap());
}

/// The ` --workspace DIR` that advice carries after a command given `--workspace rel`.
pub fn workspace_flag(sb: &Sandbox, rel: &str) -> String {
    format!(" --workspace {}", sb.join(rel).display())
}

/// `cmd` to start with SIGINT, SIGTERM and SIGHUP at their defaults, as from a terminal:
/// tests run as a background job inherit SIGINT ignored, which hookpack keeps ignored.
#[cfg(unix)]
pub fn with_default_signals(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: only signal(2), which is async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}
