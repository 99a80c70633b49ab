//! End to end against a real web server: a catalog packed by `hookpack pack`, served by
//! **nginx** (started by the test as a child process, one plain-HTTP and one TLS server
//! block on free loopback ports) with a certificate from a throwaway CA made here with the
//! `openssl` CLI. `install`, `update` and `remove` over http://, and over https:// with
//! `--ca-cert` or `SSL_CERT_FILE`; https without the CA fails with exit 3 and changes
//! nothing; `catalog verify` passes over https.
//!
//! nginx and openssl are required: when either is missing these tests fail and say how to
//! install them (`.ci/run` does). Nothing here is `#[ignore]`d.

use crate::common::*;
use crate::pack::snapshot;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `name` on PATH or in the sbin folders (nginx lives in /usr/sbin, which a non-root PATH
/// often lacks); a missing tool fails the test with how to install it.
fn require(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from));
    for d in dirs {
        let p = d.join(name);
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "`{name}` is not installed, and the nginx end-to-end tests need it: \
         install it with `apt-get install -y nginx openssl` (.ci/run does this on CI)"
    );
}

fn run_ok(cmd: &mut Command) {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?} failed ({:?}):\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A throwaway CA and a server certificate it signed, for 127.0.0.1 and localhost.
struct Pki {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn make_pki(dir: &Path) -> Pki {
    let openssl = require("openssl");
    std::fs::create_dir_all(dir).unwrap();
    let f = |name: &str| dir.join(name).display().to_string();
    // P-256 keys: generated in a millisecond, and accepted by rustls/webpki.
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    std::fs::write(
        dir.join("ca.cnf"),
        "[req]\ndistinguished_name = dn\nx509_extensions = v3_ca\nprompt = no\n\
         [dn]\nCN = hookpack test CA\n\
         [v3_ca]\nbasicConstraints = critical, CA:TRUE\n\
         keyUsage = critical, keyCertSign, cRLSign\n\
         subjectKeyIdentifier = hash\n",
    )
    .unwrap();
    run_ok(
        Command::new(&openssl)
            .args(["req", "-x509"])
            .args(ec)
            .args(["-days", "2", "-config", &f("ca.cnf")])
            .args(["-keyout", &f("ca.key"), "-out", &f("ca.pem")]),
    );
    run_ok(
        Command::new(&openssl)
            .args(["req", "-new"])
            .args(ec)
            .args(["-subj", "/CN=localhost"])
            .args(["-keyout", &f("server.key"), "-out", &f("server.csr")]),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName = IP:127.0.0.1, DNS:localhost\n\
         basicConstraints = CA:FALSE\n\
         keyUsage = critical, digitalSignature\n\
         extendedKeyUsage = serverAuth\n\
         authorityKeyIdentifier = keyid\n",
    )
    .unwrap();
    run_ok(
        Command::new(&openssl)
            .args(["x509", "-req", "-days", "2", "-set_serial", "2"])
            .args(["-in", &f("server.csr"), "-CA", &f("ca.pem")])
            .args(["-CAkey", &f("ca.key"), "-extfile", &f("server.ext")])
            .args(["-out", &f("server.pem")]),
    );
    Pki {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running nginx serving `root`; killed (and reaped) on drop.
struct Nginx {
    child: Child,
    dir: PathBuf,
    http: u16,
    https: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    /// Starts nginx in the foreground with a generated config in `dir`, serving `root` on
    /// a plain and a TLS port, and waits (at most 5 s) until both accept connections.
    /// Another process may take a free port before nginx binds it: then it tries new ports.
    fn start(dir: &Path, root: &Path, pki: &Pki) -> Nginx {
        let nginx = require("nginx");
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let mut last_log = String::new();
        for _ in 0..5 {
            let (http, https) = (free_port(), free_port());
            if http == https {
                continue;
            }
            let d = dir.display();
            let conf = format!(
                "# Generated by tests/integration/nginx.rs.\n\
                 # One process, in the foreground, everything inside the test's folder.\n\
                 master_process off;\n\
                 worker_processes 1;\n\
                 pid {d}/nginx.pid;\n\
                 error_log {d}/error.log info;\n\
                 events {{ worker_connections 64; }}\n\
                 http {{\n\
                 \x20   access_log {d}/access.log;\n\
                 \x20   client_body_temp_path {d}/tmp/body;\n\
                 \x20   proxy_temp_path {d}/tmp/proxy;\n\
                 \x20   fastcgi_temp_path {d}/tmp/fastcgi;\n\
                 \x20   uwsgi_temp_path {d}/tmp/uwsgi;\n\
                 \x20   scgi_temp_path {d}/tmp/scgi;\n\
                 \x20   types {{ application/json json; application/gzip gz; text/plain txt; }}\n\
                 \x20   default_type application/octet-stream;\n\
                 \x20   server {{\n\
                 \x20       listen 127.0.0.1:{http};\n\
                 \x20       root {root};\n\
                 \x20   }}\n\
                 \x20   server {{\n\
                 \x20       listen 127.0.0.1:{https} ssl;\n\
                 \x20       server_name localhost;\n\
                 \x20       ssl_certificate {cert};\n\
                 \x20       ssl_certificate_key {key};\n\
                 \x20       root {root};\n\
                 \x20       location = /down/hooks-index.json {{\n\
                 \x20           return 302 http://127.0.0.1:{http}/hooks-index.json;\n\
                 \x20       }}\n\
                 \x20   }}\n\
                 }}\n",
                root = root.display(),
                cert = pki.cert.display(),
                key = pki.key.display(),
            );
            std::fs::write(dir.join("nginx.conf"), conf).unwrap();
            let stderr = std::fs::File::create(dir.join("stderr.log")).unwrap();
            let child = Command::new(&nginx)
                .arg("-p")
                .arg(dir)
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .arg("-e")
                .arg(dir.join("error.log"))
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", nginx.display()));
            let mut server = Nginx {
                child,
                dir: dir.to_path_buf(),
                http,
                https,
            };
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let up = |port: u16| {
                    std::net::TcpStream::connect_timeout(
                        &([127, 0, 0, 1], port).into(),
                        Duration::from_millis(200),
                    )
                    .is_ok()
                };
                if up(http) && up(https) {
                    return server;
                }
                if let Some(status) = server.child.try_wait().unwrap() {
                    last_log = server.logs();
                    assert!(
                        last_log.contains("Address already in use"),
                        "nginx exited ({status}) at startup:\n{last_log}"
                    );
                    break; // a port was taken meanwhile: new ports
                }
                assert!(
                    Instant::now() < deadline,
                    "nginx did not accept connections on 127.0.0.1:{http} and :{https} within 5 s:\n{}",
                    server.logs()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("nginx could not bind two free ports in 5 tries:\n{last_log}");
    }

    fn logs(&self) -> String {
        let read = |n: &str| std::fs::read_to_string(self.dir.join(n)).unwrap_or_default();
        format!("{}{}", read("stderr.log"), read("error.log"))
    }

    fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }

    fn url(&self, tls: bool, path: &str) -> String {
        if tls {
            format!("https://127.0.0.1:{}/{path}", self.https)
        } else {
            format!("http://127.0.0.1:{}/{path}", self.http)
        }
    }
}

/// A sandbox with a catalog folder `cat` served by nginx, and the CA that signed its cert.
struct Served {
    sb: Sandbox,
    pki: Pki,
    nginx: Nginx,
}

const USER_DOC: &str = r#"{
  "description": "hand-written",
  "hooks": {
    "PreToolUse": [
      { "matcher": "write_file", "x-note": "mine",
        "hooks": [ { "type": "command", "command": "echo mine", "custom": 1 } ] }
    ]
  },
  "zeta": [1, 2]
}"#;

impl Served {
    /// Packs `demo` 0.1.0 into `cat`, starts nginx on it, and writes a profile `p` whose
    /// `hooks.json` holds a hand-written handler.
    fn new() -> Served {
        let sb = Sandbox::new();
        let pki = make_pki(&sb.join("pki"));
        pack_version(&sb, "0.1.0");
        let nginx = Nginx::start(&sb.join("nginx"), &sb.join("cat"), &pki);
        sb.write("p/hooks.json", USER_DOC);
        Served { sb, pki, nginx }
    }

    /// hookpack with no CA settings inherited from the environment.
    fn hookpack(&self) -> assert_cmd::Command {
        let mut c = self.sb.cmd();
        c.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
        c
    }

    fn index(&self, tls: bool) -> String {
        self.nginx.url(tls, "hooks-index.json")
    }
}

/// Packs `demo` at `version` into the served folder `cat` (earlier versions stay listed).
fn pack_version(sb: &Sandbox, version: &str) {
    let mut m = manifest("demo");
    m["version"] = json!(version);
    write_recipe(sb, "src/demo", &m);
    sb.write(
        "src/demo/scripts/main.js",
        format!("// demo {version}\nprocess.exit(0);\n"),
    );
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .args(["--updated-at", "2026-11-29T00:00:00Z", "--only", "demo"])
        .output()
        .unwrap();
    ok(&o);
}

/// How a run trusts the test CA.
#[derive(Clone, Copy)]
enum Trust {
    /// Plain http: nothing to trust.
    Http,
    /// `--ca-cert ca.pem`.
    Flag,
    /// `SSL_CERT_FILE=ca.pem`.
    Env,
}

/// install → update (a new version packed into the served folder) → remove, through nginx.
fn install_update_remove(trust: Trust) {
    let s = Served::new();
    let tls = !matches!(trust, Trust::Http);
    let index = s.index(tls);
    let run = |args: &[&str]| {
        let mut c = s.hookpack();
        c.args(args).args(["--profile", "p", "--index", &index]);
        match trust {
            Trust::Http => {}
            Trust::Flag => {
                c.arg("--ca-cert").arg(&s.pki.ca);
            }
            Trust::Env => {
                c.env("SSL_CERT_FILE", &s.pki.ca);
            }
        }
        c.output().unwrap()
    };

    ok(&run(&["install", "demo"]));
    let receipt = read_json(&s.sb.join("p/hooks/.receipts/demo.json"));
    assert_eq!(receipt["version"], "0.1.0");
    assert_eq!(receipt["index_url"], index);
    assert_eq!(
        receipt["archive_url"],
        s.nginx.url(tls, "hooks-demo-0.1.0.tar.gz")
    );
    assert_eq!(
        std::fs::read_to_string(s.sb.join("p/hooks/demo/scripts/main.js")).unwrap(),
        "// demo 0.1.0\nprocess.exit(0);\n"
    );
    let doc = read_json(&s.sb.join("p/hooks.json"));
    let user: Value = serde_json::from_str(USER_DOC).unwrap();
    assert_eq!(
        doc["hooks"]["PreToolUse"][0],
        user["hooks"]["PreToolUse"][0]
    );
    assert_eq!(doc["hooks"]["PreToolUse"][1]["hooks"][0]["recipe"], "demo");
    assert_eq!(doc["zeta"], json!([1, 2]));

    pack_version(&s.sb, "0.2.0");
    ok(&run(&["update", "demo"]));
    let receipt = read_json(&s.sb.join("p/hooks/.receipts/demo.json"));
    assert_eq!(receipt["version"], "0.2.0");
    assert_eq!(
        receipt["archive_url"],
        s.nginx.url(tls, "hooks-demo-0.2.0.tar.gz")
    );
    assert_eq!(
        std::fs::read_to_string(s.sb.join("p/hooks/demo/scripts/main.js")).unwrap(),
        "// demo 0.2.0\nprocess.exit(0);\n"
    );
    let doc = read_json(&s.sb.join("p/hooks.json"));
    assert_eq!(
        doc["hooks"]["PreToolUse"].as_array().unwrap().len(),
        2,
        "update replaces, never duplicates: {doc:#}"
    );

    // Every byte came through nginx.
    let log = s.nginx.access_log();
    for path in [
        "/hooks-index.json",
        "/hooks-demo-0.1.0.tar.gz",
        "/hooks-demo-0.2.0.tar.gz",
    ] {
        assert!(
            log.contains(&format!("\"GET {path} HTTP/1.1\" 200 ")),
            "{path} not served by nginx:\n{log}"
        );
    }

    // `remove` fetches nothing: it takes no index or CA.
    ok(&s
        .hookpack()
        .args(["remove", "demo", "--profile", "p"])
        .output()
        .unwrap());
    assert_eq!(
        read_json(&s.sb.join("p/hooks.json")),
        serde_json::from_str::<Value>(USER_DOC).unwrap()
    );
    assert!(!s.sb.join("p/hooks/demo").exists());
    assert!(!s.sb.join("p/hooks/.receipts/demo.json").exists());
}

#[test]
fn install_update_remove_over_http() {
    install_update_remove(Trust::Http);
}

#[test]
fn install_update_remove_over_https_with_ca_cert_flag() {
    install_update_remove(Trust::Flag);
}

#[test]
fn install_update_remove_over_https_with_ssl_cert_file() {
    install_update_remove(Trust::Env);
}

#[test]
fn https_without_the_ca_fails_with_exit_3_and_changes_nothing() {
    let s = Served::new();
    let expect_cert_error = |o: &std::process::Output, what: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{what}: stderr:\n{err}");
        assert!(
            err.to_lowercase().contains("certificate"),
            "{what}: stderr does not name the certificate problem:\n{err}"
        );
        // And the fix (found by the hostile-network sweep: it gave the TLS library's
        // "UnknownIssuer" alone).
        assert!(
            err.contains("--ca-cert FILE"),
            "{what}: no fix named:\n{err}"
        );
    };

    // A fresh install: nothing of demo appears, the user's file is as it was.
    let before = snapshot(&s.sb.join("p"));
    let o = s
        .hookpack()
        .args([
            "install",
            "demo",
            "--profile",
            "p",
            "--index",
            &s.index(true),
        ])
        .output()
        .unwrap();
    expect_cert_error(&o, "install");
    assert_eq!(snapshot(&s.sb.join("p")), before);

    // An update of a recipe installed over http: the installed version stays.
    ok(&s
        .hookpack()
        .args([
            "install",
            "demo",
            "--profile",
            "p",
            "--index",
            &s.index(false),
        ])
        .output()
        .unwrap());
    pack_version(&s.sb, "0.2.0");
    let before = snapshot(&s.sb.join("p"));
    let o = s
        .hookpack()
        .args([
            "update",
            "demo",
            "--profile",
            "p",
            "--index",
            &s.index(true),
        ])
        .output()
        .unwrap();
    expect_cert_error(&o, "update");
    assert_eq!(snapshot(&s.sb.join("p")), before);
    assert_eq!(
        read_json(&s.sb.join("p/hooks/.receipts/demo.json"))["version"],
        "0.1.0"
    );

    // A CA that did not sign the server's certificate does not help either.
    let other = make_pki(&s.sb.join("other-pki"));
    let o = s
        .hookpack()
        .args([
            "update",
            "demo",
            "--profile",
            "p",
            "--index",
            &s.index(true),
        ])
        .arg("--ca-cert")
        .arg(&other.ca)
        .output()
        .unwrap();
    expect_cert_error(&o, "update with another CA");
    assert_eq!(snapshot(&s.sb.join("p")), before);
}

#[test]
fn catalog_verify_over_https_with_the_ca() {
    let s = Served::new();
    pack_version(&s.sb, "0.2.0");
    let o = s
        .hookpack()
        .args(["catalog", "verify", "--format", "json", &s.index(true)])
        .arg("--ca-cert")
        .arg(&s.pki.ca)
        .output()
        .unwrap();
    ok(&o);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let archives = report["archives"].as_array().unwrap();
    assert_eq!(archives.len(), 2, "{report:#}");
    for a in archives {
        assert!(
            a["location"]
                .as_str()
                .unwrap()
                .starts_with(&s.nginx.url(true, "hooks-demo-")),
            "{report:#}"
        );
    }

    // The same index with SSL_CERT_FILE, and without any CA (exit 3).
    ok(&s
        .hookpack()
        .env("SSL_CERT_FILE", &s.pki.ca)
        .args(["catalog", "verify", &s.index(true)])
        .output()
        .unwrap());
    let o = s
        .hookpack()
        .args(["catalog", "verify", &s.index(true)])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Found by the network sweep: an https:// index whose server redirected to http:// was
/// fetched over plain HTTP, where anyone on the way could change it, and with it the sha256
/// every archive is checked against. Refused (exit 1), naming both URLs; nothing written.
#[test]
fn an_https_index_redirected_to_plain_http_is_refused() {
    let s = Served::new();
    let before = snapshot(&s.sb.join("p"));
    let url = s.nginx.url(true, "down/hooks-index.json");
    let to = s.nginx.url(false, "hooks-index.json");
    let install = ["install", "demo", "--profile", "p", "--index", &url];
    let list = ["catalog", "list", &url];
    let verify = ["catalog", "verify", &url];
    for args in [&install[..], &list[..], &verify[..]] {
        let o = s
            .hookpack()
            .args(args)
            .arg("--ca-cert")
            .arg(&s.pki.ca)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains(&format!("{url} redirected to {to}, plain HTTP")),
            "{args:?}: {text}"
        );
    }
    assert_eq!(snapshot(&s.sb.join("p")), before);
}
