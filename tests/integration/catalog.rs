//! `hookpack catalog list` and `verify`, from disk and from a real HTTP server on loopback.

use crate::common::*;
use serde_json::{json, Value};

fn packed(sb: &Sandbox) {
    for id in ["alpha", "beta"] {
        write_recipe(sb, &format!("src/{id}"), &manifest(id));
    }
    packed_again(sb);
}

fn packed_again(sb: &Sandbox) {
    ok(&pack_src_with(sb, &[]));
}

/// `packed`, then alpha 0.2.0 packed beside its 0.1.0.
fn packed_with_alpha_0_2_0(sb: &Sandbox) {
    packed(sb);
    let mut m = manifest("alpha");
    m["version"] = json!("0.2.0");
    write_recipe(sb, "src/alpha", &m);
    packed_again(sb);
}

/// `pack` of `src/` into `cat/` at a fixed time, with `extra` arguments.
fn pack_src_with(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    sb.cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .args(["--updated-at", "2026-11-29T00:00:00Z"])
        .args(extra)
        .output()
        .unwrap()
}

fn verify_json(sb: &Sandbox, index: &str) -> (i32, Value) {
    verify_json_with(sb, index, &[])
}

/// [`verify_json`] with `extra` arguments.
fn verify_json_with(sb: &Sandbox, index: &str, extra: &[&str]) -> (i32, Value) {
    let o = sb
        .cmd()
        .args(["catalog", "verify", "--format", "json", index])
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        serde_json::from_slice(&o.stdout).unwrap(),
    )
}

fn codes(r: &Value) -> Vec<String> {
    r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn list_shows_every_recipe() {
    let sb = Sandbox::new();
    packed(&sb);
    let o = sb
        .cmd()
        .args(["catalog", "list", "cat/hooks-index.json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("alpha\t0.1.0\tmin_cli 0.13.0\tA test recipe."),
        "{text}"
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", "--format", "json", "cat"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["recipes"][1]["id"], "beta");
}

#[test]
fn verify_passes_on_a_packed_catalog_from_disk_and_http() {
    let sb = Sandbox::new();
    packed(&sb);
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["archives"].as_array().unwrap().len(), 2);
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 0, "{r:#}");
    assert!(r["archives"][0]["location"]
        .as_str()
        .unwrap()
        .starts_with("http://127.0.0.1:"));
}

#[test]
fn verify_reports_every_tampering() {
    let sb = Sandbox::new();
    packed(&sb);
    // Wrong bytes for alpha, trailing garbage for beta, a lying SHA256SUMS, latest not newest.
    let alpha = sb.join("cat/hooks-alpha-0.1.0.tar.gz");
    let mut bytes = std::fs::read(&alpha).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    std::fs::write(&alpha, bytes).unwrap();
    let beta = sb.join("cat/hooks-beta-0.1.0.tar.gz");
    let mut bytes = std::fs::read(&beta).unwrap();
    bytes.extend_from_slice(b"junk");
    std::fs::write(&beta, &bytes).unwrap();
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    // Claim beta's archive holds 0.2.0 too: its manifest will not match.
    let mut v2 = index["recipes"][1]["versions"][0].clone();
    v2["version"] = json!("0.2.0");
    v2["size"] = json!(bytes.len());
    v2["sha256"] = json!(hookpack::sha256::Sha256::of(&bytes).to_string());
    index["recipes"][1]["versions"]
        .as_array_mut()
        .unwrap()
        .insert(0, v2);
    std::fs::write(
        sb.join("cat/hooks-index.json"),
        serde_json::to_vec_pretty(&index).unwrap(),
    )
    .unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1);
    let c = codes(&r);
    for want in [
        "sha256-mismatch",
        "size-mismatch",
        "archive-invalid",
        "latest-not-newest",
        "sums-mismatch",
    ] {
        assert!(c.contains(&want.to_string()), "missing {want}: {c:?}");
    }
    // Each archive has its verdict.
    let oks: Vec<bool> = r["archives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["ok"].as_bool().unwrap())
        .collect();
    assert_eq!(oks, [false, false, false]);
}

#[test]
fn verify_catches_a_manifest_that_disagrees_with_the_index() {
    let sb = Sandbox::new();
    packed(&sb);
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    index["recipes"][0]["min_cli"] = json!("0.14.0");
    index["recipes"][0]["versions"][0]["min_cli"] = json!("0.14.0");
    std::fs::write(
        sb.join("cat/hooks-index.json"),
        serde_json::to_vec_pretty(&index).unwrap(),
    )
    .unwrap();
    std::fs::remove_file(sb.join("cat/SHA256SUMS")).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1);
    let c = codes(&r);
    assert!(c.contains(&"manifest-mismatch".to_string()), "{c:?}");
    assert!(c.contains(&"sums-missing".to_string()), "{c:?}");
}

/// An archive whose recipe.json names another id and version than its own top folder
/// (which is the index's, so the index was not edited) is the archive's fault. verify said
/// "if the index was edited, set its id back to beta (a new id needs a new version)",
/// advice that would break the index; it says the archive disagrees with its top folder.
#[test]
fn a_manifest_disagreeing_with_its_own_top_folder_is_the_archives_fault() {
    use std::io::{Read, Write};
    let sb = Sandbox::new();
    packed(&sb);
    let path = sb.join("cat/hooks-alpha-0.1.0.tar.gz");
    let packed_bytes = std::fs::read(&path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&packed_bytes[..]));
    let mut rebuilt = tar::Builder::new(Vec::new());
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut header = entry.header().clone();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        if entry.path().unwrap().ends_with("recipe.json") {
            let mut m: Value = serde_json::from_slice(&data).unwrap();
            m["id"] = json!("beta");
            m["version"] = json!("0.2.0");
            data = serde_json::to_vec_pretty(&m).unwrap();
            header.set_size(data.len() as u64);
            header.set_cksum();
        }
        rebuilt.append(&header, &data[..]).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&rebuilt.into_inner().unwrap()).unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let sha = hookpack::sha256::Sha256::of(&bytes).to_string();
    edit_index(&sb, |index| {
        index["recipes"][0]["versions"][0]["sha256"] = json!(sha);
        index["recipes"][0]["versions"][0]["size"] = json!(bytes.len());
    });
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    let said: Vec<&str> = (r["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["code"] == "manifest-mismatch")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(said.len(), 2, "{r:#}");
    for m in said {
        assert!(!m.contains("if the index was edited"), "{m}");
        assert!(m.contains("its own top folder `alpha-0.1.0/`"), "{m}");
        assert!(
            m.contains("upload again the archive `hookpack pack` wrote for alpha 0.1.0"),
            "{m}"
        );
    }
}

#[test]
fn verify_over_http_reports_server_faults() {
    let sb = Sandbox::new();
    packed(&sb);
    let beta_len = std::fs::metadata(sb.join("cat/hooks-beta-0.1.0.tar.gz"))
        .unwrap()
        .len();
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |path| {
            match path {
            "/hooks-alpha-0.1.0.tar.gz" => Some(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()),
            // The right length announced, the body cut short.
            "/hooks-beta-0.1.0.tar.gz" => Some(format!("HTTP/1.1 200 OK\r\nContent-Length: {beta_len}\r\nConnection: close\r\n\r\nshort").into_bytes()),
            _ => None,
        }
        }),
    );
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 3, "{r:#}");
    let msgs: Vec<&str> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(msgs.iter().any(|m| m.contains("HTTP 500")), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("hooks-beta-0.1.0.tar.gz failed midway")),
        "{msgs:?}"
    );
}

/// Found by review: a store that keeps files gzip-compressed and sends them with
/// `Content-Encoding: gzip` (S3 metadata can) got "invalid UTF-8 byte" for its index, which
/// sent the user looking for a broken file. Such bodies are decoded, index and archives
/// alike (an archive's sha256 is still checked on what is decoded); an encoding hookpack
/// cannot decode is refused naming the header, and so is the install from it.
#[test]
fn a_body_sent_gzip_encoded_is_decoded_and_another_encoding_named() {
    use std::io::Write;
    let sb = Sandbox::new();
    packed(&sb);
    let root = sb.join("cat");
    let server = HttpServer::serve(
        root.clone(),
        Box::new(move |path| {
            let file = std::fs::read(root.join(path.trim_start_matches('/'))).ok()?;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&file).unwrap();
            let body = gz.finish().unwrap();
            let mut answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            answer.extend(body);
            Some(answer)
        }),
    );
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 0, "{r:#}");
    let o = sb
        .cmd()
        .args(["install", "alpha", "--profile", "prof", "--index"])
        .arg(server.url("hooks-index.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(sb.join("prof/hooks/alpha/recipe.json").is_file());

    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(|_| {
            Some(b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_vec())
        }),
    );
    let o = sb
        .cmd()
        .args(["install", "beta", "--profile", "prof", "--index"])
        .arg(server.url("hooks-index.json"))
        .output()
        .unwrap();
    fails_saying(
        &o,
        1,
        "the server sent it with `Content-Encoding: br`, which hookpack does not decode",
    );
    assert!(!sb.join("prof/hooks/beta").exists());
}

/// An archive the index lists but the catalog lacks is the catalog's problem, read from disk
/// or served: exit 1, and the other archives are still checked. A 403 is as definite as a
/// 404; only a server that cannot be reached at all is the environment's (exit 3).
#[test]
fn a_missing_archive_exits_1_from_disk_and_over_http() {
    let sb = Sandbox::new();
    packed(&sb);
    std::fs::remove_file(sb.join("cat/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let oks = |r: &Value| -> Vec<bool> {
        r["archives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["ok"].as_bool().unwrap())
            .collect()
    };
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(oks(&r), [false, true], "{r:#}");
    assert_eq!(codes(&r), ["fetch-failed"], "{r:#}");

    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(oks(&r), [false, true], "{r:#}");
    assert_eq!(codes(&r), ["fetch-failed"], "{r:#}");
    assert!(
        r["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("hooks-alpha-0.1.0.tar.gz answered HTTP 404"),
        "{r:#}"
    );

    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(|path| {
            (path == "/hooks-beta-0.1.0.tar.gz").then(|| {
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
            })
        }),
    );
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(oks(&r), [false, false], "{r:#}");
    assert_eq!(codes(&r), ["fetch-failed", "fetch-failed"], "{r:#}");

    // beta served from a port nobody listens on: that is the environment's failure.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!(
        "http://{}/hooks-beta-0.1.0.tar.gz",
        closed.local_addr().unwrap()
    );
    drop(closed);
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["recipes"][1]["versions"][0]["url"] = json!(dead);
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(oks(&r), [false, false], "{r:#}");

    // The index itself: a 404 is the input's fault (exit 1), as a missing file on disk is.
    let (code, r) = verify_json(&sb, &server.url("nowhere/hooks-index.json"));
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["fetch-failed"], "{r:#}");
    let (code, _) = verify_json(&sb, "nowhere/hooks-index.json");
    assert_eq!(code, 1);
    let o = sb
        .cmd()
        .args(["catalog", "list", &server.url("nowhere/hooks-index.json")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
}

/// Rewrites the catalog's index with `edit` and SHA256SUMS to match, so that a test sees
/// only the problem it made.
fn edit_index(sb: &Sandbox, edit: impl FnOnce(&mut Value)) {
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut index);
    let bytes = serde_json::to_vec_pretty(&index).unwrap();
    let sha = hookpack::sha256::Sha256::of(&bytes).to_string();
    std::fs::write(&path, &bytes).unwrap();
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let sums: String = sums
        .lines()
        .map(|l| match l.strip_suffix("  hooks-index.json") {
            Some(_) => format!("{sha}  hooks-index.json\n"),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(sb.join("cat/SHA256SUMS"), sums).unwrap();
}

/// `latest` held below a newer published version: `catalog verify` says so once, as an
/// error; `validate` (the index is valid by the format's rules) warns, in the same words.
#[test]
fn latest_below_the_newest_version_is_reported_once() {
    let sb = Sandbox::new();
    packed_with_alpha_0_2_0(&sb);
    edit_index(&sb, |index| index["recipes"][0]["latest"] = json!("0.1.0"));

    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["latest-not-newest"], "{r:#}");
    let d = &r["diagnostics"][0];
    assert_eq!(d["severity"], "error", "{r:#}");
    assert_eq!(d["pointer"], "/recipes/0/latest", "{r:#}");

    let (code, v) = validate_json(&sb, &["cat/hooks-index.json"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        findings(&v),
        [("/recipes/0/latest".into(), "latest-not-newest".into())]
    );
    assert_eq!(v["diagnostics"][0]["severity"], "warning", "{v:#}");
    assert_eq!(v["diagnostics"][0]["message"], d["message"], "{v:#}");
    let msg = d["message"].as_str().unwrap();
    assert!(msg.contains("`latest` is 0.1.0 but 0.2.0"), "{msg}");
}

/// A catalog without SHA256SUMS fails verification, from disk and over HTTP (a 404), with
/// the fix; the fix works.
#[test]
fn a_missing_sha256sums_is_an_error() {
    let sb = Sandbox::new();
    packed(&sb);
    let sums = std::fs::read(sb.join("cat/SHA256SUMS")).unwrap();
    std::fs::remove_file(sb.join("cat/SHA256SUMS")).unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    for index in ["cat".to_string(), server.url("hooks-index.json")] {
        let (code, r) = verify_json(&sb, &index);
        assert_eq!(code, 1, "{index}: {r:#}");
        assert_eq!(codes(&r), ["sums-missing"], "{index}: {r:#}");
        let d = &r["diagnostics"][0];
        assert_eq!(d["severity"], "error", "{index}: {r:#}");
        assert!(
            d["file"].as_str().unwrap().ends_with("SHA256SUMS"),
            "{index}: {r:#}"
        );
        assert!(
            d["message"].as_str().unwrap().contains("`hookpack pack"),
            "{index}: {r:#}"
        );
    }
    // Packing the unchanged sources again writes it back, the same bytes, and leaves the
    // index as it was.
    let index = std::fs::read(sb.join("cat/hooks-index.json")).unwrap();
    packed_again(&sb);
    assert_eq!(std::fs::read(sb.join("cat/SHA256SUMS")).unwrap(), sums);
    assert_eq!(
        std::fs::read(sb.join("cat/hooks-index.json")).unwrap(),
        index
    );
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn a_file_sha256sums_lists_twice_with_other_digests_is_an_error() {
    // Found by the maintainer-side sweep: with a wrong line for a file before the right
    // one, verify took the last and passed, while `sha256sum -c SHA256SUMS` (what users
    // run on a download) fails on the wrong one.
    let sb = Sandbox::new();
    packed(&sb);
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let zero = "0".repeat(64);
    for name in ["hooks-index.json", "hooks-beta-0.1.0.tar.gz"] {
        std::fs::write(sb.join("cat/SHA256SUMS"), format!("{zero}  {name}\n{sums}")).unwrap();
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{name}: {r:#}");
        assert_eq!(codes(&r), ["sums-conflict"], "{name}: {r:#}");
        let message = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("lists {name} twice")),
            "{message}"
        );
        assert!(message.contains("lines 1 and "), "{message}");
    }
    // The same line twice is harmless: `sha256sum -c` checks it twice.
    let line = sums.lines().next().unwrap();
    std::fs::write(sb.join("cat/SHA256SUMS"), format!("{sums}{line}\n")).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
}

#[test]
fn sha256sums_is_read_as_sha256sum_reads_it() {
    // Found by the maintainer-side sweep: upper-case digests and `./name` were malformed
    // lines to verify, while `sha256sum -c` reads both; a line for another file passed
    // unmentioned, while `sha256sum -c` fails where that file is absent.
    let sb = Sandbox::new();
    packed(&sb);
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let upper: String = sums
        .lines()
        .map(|l| {
            let (sha, name) = l.split_once("  ").unwrap();
            format!("{}  ./{name}\n", sha.to_ascii_uppercase())
        })
        .collect();
    std::fs::write(sb.join("cat/SHA256SUMS"), &upper).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
    // `sha256sum --tag` lines too (found by review).
    let tagged: String = sums
        .lines()
        .map(|l| {
            let (sha, name) = l.split_once("  ").unwrap();
            format!("SHA256 ({name}) = {sha}\n")
        })
        .collect();
    std::fs::write(sb.join("cat/SHA256SUMS"), &tagged).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
    let zero = "0".repeat(64);
    std::fs::write(
        sb.join("cat/SHA256SUMS"),
        format!("{sums}{zero}  notthere.tar.gz\n"),
    )
    .unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), ["sums-unlisted"], "{r:#}");
    let message = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("notthere.tar.gz") && message.contains("sha256sum -c"),
        "{message}"
    );
    let o = sb
        .cmd()
        .args(["catalog", "verify", "cat"])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("warning[sums-unlisted]"), "{said}");
}

/// A `#` comment line in SHA256SUMS, which `sha256sum -c` passes over, was a
/// `sums-malformed` error. A line starting with a byte order mark, which `sha256sum -c`
/// takes for no checksum line (leaving its file unchecked), was "line 1 is not
/// `<sha256>  <file>`", and its file "not listed" besides. The comment now passes; the mark
/// is one error naming the file it leaves unchecked.
/// Found by a hostile sweep: a server answering with HTML where SHA256SUMS should be got one
/// `sums-malformed` per line of the page; it is one error saying what it is.
#[test]
fn a_sha256sums_that_is_html_is_one_error() {
    let sb = Sandbox::new();
    packed(&sb);
    let page = "<!DOCTYPE html>\n<html>\n<body>\n<a href=\"x\">x</a>\n</body>\n</html>\n";
    std::fs::write(sb.join("cat/SHA256SUMS"), page).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["sums-malformed"], "{r:#}");
    let message = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.starts_with("this is HTML, not SHA256SUMS"), "{r:#}");
}

#[test]
fn sha256sums_comments_pass_and_a_byte_order_mark_is_named() {
    let sb = Sandbox::new();
    packed(&sb);
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let commented = format!("# published by hand\n{sums}# end\n");
    std::fs::write(sb.join("cat/SHA256SUMS"), &commented).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");

    std::fs::write(sb.join("cat/SHA256SUMS"), format!("\u{FEFF}{sums}")).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["sums-malformed"], "{r:#}");
    let first = sums.lines().next().unwrap().split_once("  ").unwrap().1;
    let message = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("line 1 starts with a byte order mark")
            && message.contains(&format!("leaves {first} unchecked")),
        "{message}"
    );
    // A `--tag` line behind the mark is named by its file too; text that is no checksum
    // line behind it is one error, not two (found by review).
    let (sha, name) = sums.lines().next().unwrap().split_once("  ").unwrap();
    let rest: String = sums.lines().skip(1).map(|l| format!("{l}\n")).collect();
    for (line, said) in [
        (
            format!("SHA256 ({name}) = {sha}"),
            format!("leaves {name} unchecked"),
        ),
        (
            "no checksum here".to_string(),
            "is not `<sha256>  <file>` behind it either".to_string(),
        ),
    ] {
        std::fs::write(sb.join("cat/SHA256SUMS"), format!("\u{FEFF}{line}\n{rest}")).unwrap();
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{r:#}");
        let codes = codes(&r);
        assert_eq!(codes[0], "sums-malformed", "{r:#}");
        assert_eq!(
            codes.iter().filter(|c| *c == "sums-malformed").count(),
            1,
            "{r:#}"
        );
        let message = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(message.contains(&said), "{message}");
    }
}

/// An index whose relative `url` carries a `?query` (`hooks-alpha-0.1.0.tar.gz?v=1`, a
/// cache buster added by hand) is read beside the index as the file without it, but
/// `verify` looked its line up in SHA256SUMS with the query: "SHA256SUMS does not list
/// hooks-alpha-0.1.0.tar.gz?v=1", and the file's own line was "not an archive the index
/// lists". `pack` warned the archive was missing from the folder. The file is now the one
/// without the query everywhere: `pack` keeps it and lists it, `verify` passes.
#[test]
fn a_relative_url_with_a_query_names_the_file_without_it() {
    let sb = Sandbox::new();
    packed(&sb);
    let url = |index: &Value| index["recipes"][0]["versions"][0]["url"].clone();
    edit_index(&sb, |index| {
        let with_query = format!("{}?v=1", url(index).as_str().unwrap());
        index["recipes"][0]["versions"][0]["url"] = json!(with_query);
    });
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
    let o = pack_src_with(&sb, &["--format", "json"]);
    let report = one_json_document(&o);
    assert_eq!(o.status.code(), Some(0), "{report:#}");
    assert!(
        !report.to_string().contains("archive-missing"),
        "{report:#}"
    );
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    assert!(
        url(&index).as_str().unwrap().ends_with(".tar.gz?v=1"),
        "{index:#}"
    );
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
}

/// The diagnostics of a catalog whose files disagree say how to make them agree.
#[test]
fn mismatches_say_how_to_fix_them() {
    let sb = Sandbox::new();
    packed(&sb);
    // beta's archive replaced by shorter bytes; alpha's min_cli edited in the index (which
    // SHA256SUMS no longer matches).
    let beta = sb.join("cat/hooks-beta-0.1.0.tar.gz");
    let bytes = std::fs::read(&beta).unwrap();
    std::fs::write(&beta, &bytes[..bytes.len() - 4]).unwrap();
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["recipes"][0]["min_cli"] = json!("0.14.0");
    index["recipes"][0]["versions"][0]["min_cli"] = json!("0.14.0");
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    let message = |code: &str| -> String {
        let found: Vec<&str> = r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == code)
            .map(|d| d["message"].as_str().unwrap())
            .collect();
        assert_eq!(found.len(), 1, "{code}: {r:#}");
        found[0].to_string()
    };
    let m = message("size-mismatch");
    assert!(
        m.contains("upload again the archive `hookpack pack` wrote for beta 0.1.0"),
        "{m}"
    );
    let m = message("sha256-mismatch");
    assert!(
        m.contains("upload again the archive `hookpack pack` wrote for beta 0.1.0"),
        "{m}"
    );
    let m = message("manifest-mismatch");
    assert!(
        m.contains("recipe.json has min_cli 0.13.0, the index says 0.14.0; "),
        "{m}"
    );
    assert!(
        m.contains("if the index was edited, set its min_cli back to 0.13.0"),
        "{m}"
    );
    let m = message("sums-mismatch");
    assert!(m.contains("`hookpack pack`"), "{m}");

    // The index's `size` alone is wrong: the archive is the right one, so the fix is there.
    std::fs::write(&beta, &bytes).unwrap();
    let size = bytes.len();
    edit_index(&sb, |index| {
        index["recipes"][0]["min_cli"] = json!("0.13.0");
        index["recipes"][0]["versions"][0]["min_cli"] = json!("0.13.0");
        index["recipes"][1]["versions"][0]["size"] = json!(size + 1);
    });
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["size-mismatch"], "{r:#}");
    let m = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(m.contains(&format!("set `size` to {size}")), "{m}");
}

/// An index whose `url` holds characters URL text may not hold as they are is reported by
/// `validate` and `catalog verify` (exit 1), naming the index, the JSON pointer, the
/// character and its percent-encoding, as `pack --asset-base-url` refuses them.
#[test]
fn an_index_url_that_is_not_url_text_is_reported() {
    for (url, named, encoded) in [
        (
            "https://example.test/a{b}/hooks-beta-0.1.0.tar.gz",
            "`{` at character 23",
            "%7B",
        ),
        (
            "sub\"dir/hooks-beta-0.1.0.tar.gz",
            "a double quote at character 4",
            "%22",
        ),
        (
            "a%2/hooks-beta-0.1.0.tar.gz",
            "a `%` not followed by two hex digits at character 2",
            "%25",
        ),
    ] {
        let sb = Sandbox::new();
        packed(&sb);
        edit_index(&sb, |index| {
            index["recipes"][1]["versions"][0]["url"] = json!(url)
        });
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{url}: {r:#}");
        // Said once: not again as a location that cannot be fetched.
        assert_eq!(codes(&r), ["url-invalid"], "{url}: {r:#}");
        let (code, v) = validate_json(&sb, &["cat/hooks-index.json"]);
        assert_eq!(code, 1, "{url}: {v:#}");
        for report in [&r, &v] {
            let found: Vec<&Value> = report["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["code"] == "url-invalid")
                .collect();
            assert_eq!(found.len(), 1, "{url}: {report:#}");
            let d = found[0];
            let m = d["message"].as_str().unwrap();
            assert!(
                d["file"]
                    .as_str()
                    .unwrap()
                    .ends_with("cat/hooks-index.json")
                    && d["pointer"] == "/recipes/1/versions/0/url"
                    && m.contains(named)
                    && m.contains(&format!("percent-encode it (as `{encoded}`)")),
                "{url}: {report:#}"
            );
        }
    }
}

/// An index `size` below the archive's, the archive being the one the index names (its
/// sha256 agrees), is said to be the index's fault, as a size above it is (found by a
/// maintainer-side sweep: verify stopped reading at the index's size and said to upload the
/// archive again, which could never help).
#[test]
fn a_size_below_the_archives_is_said_to_be_the_indexs() {
    let sb = Sandbox::new();
    packed(&sb);
    let size = std::fs::metadata(sb.join("cat/hooks-beta-0.1.0.tar.gz"))
        .unwrap()
        .len();
    for wrong in [size - 1, 0] {
        edit_index(&sb, |index| {
            index["recipes"][1]["versions"][0]["size"] = json!(wrong)
        });
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{wrong}: {r:#}");
        assert_eq!(codes(&r), ["size-mismatch"], "{wrong}: {r:#}");
        let m = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            m.contains(&format!(
                "the index says {wrong} bytes, the archive has {size}"
            )),
            "{m}"
        );
        assert!(m.contains(&format!("set `size` to {size}")), "{m}");
        // Not by hand: pack puts it right, the archive being intact.
        assert!(
            m.contains("`hookpack pack` into the catalog folder holding this archive does so"),
            "{m}"
        );
        assert!(!m.contains("upload again"), "{m}");
    }
}

/// `catalog list` of an index that does not validate names the problem, and does not claim
/// to have left anything unchanged: it changes nothing, ever.
#[test]
fn list_of_an_invalid_index_reports_it_as_read_only() {
    let sb = Sandbox::new();
    sb.write(
        "bad.json",
        r#"{"schema": "hooks.catalog.v1", "recipes": []}"#,
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", "bad.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(o.stdout.is_empty(), "{err}");
    assert!(err.contains("`updated_at` is missing"), "{err}");
    assert!(
        err.contains("error: the catalog index does not validate"),
        "{err}"
    );
    assert!(!err.contains("nothing was changed"), "{err}");
    // One fault, one kind, whichever verb meets it (found by the publisher walk-through:
    // `index-invalid-read-only` here, `index-invalid` from install).
    for args in [
        &["catalog", "list", "bad.json"][..],
        &["install", "x", "--index", "bad.json", "--profile", "p"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["error"]["kind"], "index-invalid", "{args:?}: {doc:#}");
    }
}

/// `catalog list … | head` ends quietly with exit 0 in both formats, however long the list.
#[test]
fn a_closed_pipe_ends_the_listing_quietly() {
    let sb = Sandbox::new();
    packed(&sb);
    // Grow the index to some 4,000 entries (hundreds of KiB of output) from alpha's.
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let alpha = index["recipes"][0].clone();
    let recipes: Vec<Value> = (0..4000)
        .map(|i| {
            let mut r = alpha.clone();
            r["id"] = json!(format!("r{i:04}"));
            r["versions"][0]["url"] = json!(format!("hooks-r{i:04}-0.1.0.tar.gz"));
            r
        })
        .collect();
    index["recipes"] = Value::Array(recipes);
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    for format in ["text", "json"] {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg("\"$0\" catalog list --format \"$1\" \"$2\" | head -c 10 >/dev/null; echo \"${PIPESTATUS[0]}\"")
            .arg(&bin)
            .arg(format)
            .arg(&path)
            .output()
            .unwrap();
        let code = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert_eq!(
            code,
            "0",
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Text from an index never reaches the terminal as control characters.
#[test]
fn terminal_escapes_in_an_index_are_printed_escaped() {
    let sb = Sandbox::new();
    packed(&sb);
    let path = sb.join("cat/hooks-index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["recipes"][0]["summary"] = json!(
        "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\rhidden\u{9b}31m\nbeta\t9.9.9\tforged\u{202e}desrever\u{2028}line\u{2029}para\u{200f}rlm"
    );
    std::fs::write(&path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    let o = sb
        .cmd()
        .args(["catalog", "list"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("ok\\u{1b}]0;pwned"), "{out}");
    assert!(
        !out.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202e}' | '\u{2028}' | '\u{2029}' | '\u{200f}')),
        "{out:?}"
    );
    // The summary cannot add a line of its own: alpha and beta, one line each.
    assert_eq!(out.lines().count(), 2, "{out}");
}

#[test]
fn a_ca_cert_that_cannot_be_read_is_named_with_its_flag() {
    // Found by review: the message said "cannot open /nonexistent" without the flag.
    let sb = Sandbox::new();
    let o = sb
        .cmd()
        .args(["catalog", "list", "https://127.0.0.1:9/hooks-index.json"])
        .args(["--ca-cert", "missing.pem"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: cannot use the CA certificate missing.pem (--ca-cert): No such file"),
        "{err}"
    );
    // Also when nothing is fetched over HTTPS: a misspelt file is still the user's mistake,
    // and it was ignored without a word (found by a user-side sweep).
    packed(&sb);
    for args in [
        &["catalog", "list", "cat"][..],
        &["catalog", "verify", "cat"],
        &["install", "alpha", "--index", "cat", "--profile", "p"],
        &["update", "--index", "cat", "--profile", "p"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--ca-cert", "missing.pem"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("missing.pem (--ca-cert)"), "{args:?}: {err}");
    }
    assert!(!sb.join("p").exists());
}

/// With one of two archives missing, the summary said "verified 2 archive(s): 1 error(s)":
/// it counts the archives checked and those that passed apart.
#[test]
fn the_verify_summary_counts_only_passing_archives_as_verified() {
    let sb = Sandbox::new();
    packed(&sb);
    let summary = |sb: &Sandbox| {
        let o = sb
            .cmd()
            .args(["catalog", "verify", "cat"])
            .output()
            .unwrap();
        (
            o.status.code().unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = summary(&sb);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("checked 2 archive(s): 2 verified, 0 failed; 0 error(s)"),
        "{err}"
    );
    std::fs::remove_file(sb.join("cat/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let (code, err) = summary(&sb);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("checked 2 archive(s): 1 verified, 1 failed; 1 error(s)")
            && !err.contains("verified 2"),
        "{err}"
    );
}

#[test]
fn sha256sums_of_a_catalog_packed_with_an_asset_base_url_has_no_unlisted_lines() {
    // The index names its archives by absolute URL, SHA256SUMS by file name: each archive's
    // line was warned of as a file the index does not list, with advice to pack again
    // (which writes the same lines).
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    sb.cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .args(["--asset-base-url", &server.url("/")])
        .assert()
        .success();
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
}

/// Packs `alpha` and `beta` into `cat/` for upload to a URL where nothing listens, so a
/// `catalog verify` that fetched them would fail with exit 3.
fn packed_for_upload(sb: &Sandbox) {
    for id in ["alpha", "beta"] {
        write_recipe(sb, &format!("src/{id}"), &manifest(id));
    }
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .args(["--asset-base-url", "http://127.0.0.1:9/hooks/"])
        .output()
        .unwrap());
}

/// `catalog verify --format json cat` with `extra` arguments: its exit code and report.
fn verify_cat_with(sb: &Sandbox, extra: &[&str]) -> (i32, Value) {
    let o = sb
        .cmd()
        .args(["catalog", "verify", "--format", "json", "cat"])
        .args(extra)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    (o.status.code().unwrap(), r)
}

/// A catalog packed with `--asset-base-url` names its archives by the URL they will be
/// uploaded to, so `catalog verify` could only check it after the upload: a maintainer had
/// no way to verify what they were about to publish. `--assets-dir DIR` reads each archive
/// named by absolute URL from DIR, by its file name, and checks it (and its SHA256SUMS
/// line) as it checks local archives; nothing is fetched.
#[test]
fn verify_reads_archives_named_by_url_from_an_assets_dir_before_the_upload() {
    let sb = Sandbox::new();
    packed_for_upload(&sb);
    let verify = |extra: &[&str]| verify_cat_with(&sb, extra);
    let (code, r) = verify(&[]);
    assert_eq!(code, 3, "{r:#}");
    // Found by review: the failure did not say that the archives were right there, nor
    // which flag reads them from there.
    let message = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.ends_with(
            "; cat/hooks-alpha-0.1.0.tar.gz is beside the index: to check the archives there \
             before they are uploaded, give `--assets-dir cat`"
        ),
        "{r:#}"
    );

    let (code, r) = verify(&["--assets-dir", "cat"]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");
    let archives = r["archives"].as_array().unwrap();
    assert_eq!(archives.len(), 2, "{r:#}");
    for a in archives {
        assert_eq!(a["ok"], true, "{r:#}");
        let at = a["location"].as_str().unwrap();
        assert!(
            at.starts_with("cat/hooks-") && at.ends_with(".tar.gz"),
            "{r:#}"
        );
    }

    // A damaged archive is found, and so is a SHA256SUMS line that disagrees with the index.
    let alpha = sb.join("cat/hooks-alpha-0.1.0.tar.gz");
    let mut bytes = std::fs::read(&alpha).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&alpha, &bytes).unwrap();
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    let beta_line = sums
        .lines()
        .find(|l| l.ends_with("hooks-beta-0.1.0.tar.gz"))
        .unwrap()
        .to_string();
    let forged = format!("{}{}", "0".repeat(64), &beta_line[64..]);
    std::fs::write(sb.join("cat/SHA256SUMS"), sums.replace(&beta_line, &forged)).unwrap();
    let (code, r) = verify(&["--assets-dir", "cat"]);
    assert_eq!(code, 1, "{r:#}");
    let mut found = codes(&r);
    found.sort();
    assert_eq!(
        found,
        ["archive-invalid", "sha256-mismatch", "sums-mismatch"],
        "{r:#}"
    );
    // Not uploaded yet: the fix is to pack again, not to upload again.
    let mismatch = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "sha256-mismatch")
        .unwrap();
    let message = mismatch["message"].as_str().unwrap();
    assert!(
        message.contains("pack into cat again with `hookpack pack`"),
        "{message}"
    );

    // A folder that is not there is refused before anything is read, naming the flag.
    let (code, r) = verify(&["--assets-dir", "nowhere"]);
    assert_eq!(code, 1, "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot inspect the --assets-dir folder nowhere: "),
        "{message}"
    );
    // A file there is the same kind of slip: exit 1 as well (it was 2, a usage error).
    let (code, r) = verify(&["--assets-dir", "cat/SHA256SUMS"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["error"]["kind"], "not-a-folder", "{r:#}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("--assets-dir cat/SHA256SUMS is not a folder; give the folder"),
        "{message}"
    );
}

/// With `--assets-dir`, an archive named `https://…/hooks-alpha-0.1.0.tar.gz?sig=1` is read
/// from `DIR/hooks-alpha-0.1.0.tar.gz`, but its SHA256SUMS line was looked up under the
/// URL's text after its last `/` (`hooks-alpha-0.1.0.tar.gz?sig=1`): a catalog whose
/// SHA256SUMS lists that file failed with "SHA256SUMS does not list …?sig=1" and a warning
/// that the line it has names a file the index does not list. An archive whose URL names no
/// file (`asset-unnamed`) was reported a second time, as "SHA256SUMS does not list ;".
#[test]
fn an_assets_dir_archive_is_looked_up_in_sha256sums_by_the_file_read() {
    let sb = Sandbox::new();
    packed_for_upload(&sb);
    // The index edited, and SHA256SUMS's line for it with it.
    let set_urls = |alpha: &str, beta: &str| {
        let path = sb.join("cat/hooks-index.json");
        let mut index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for r in index["recipes"].as_array_mut().unwrap() {
            let url = if r["id"] == "alpha" { alpha } else { beta };
            r["versions"][0]["url"] = json!(url);
        }
        let bytes = serde_json::to_vec_pretty(&index).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
        let sums: String = sums
            .lines()
            .map(|l| match l.ends_with("  hooks-index.json") {
                true => format!(
                    "{}  hooks-index.json\n",
                    hookpack::sha256::Sha256::of(&bytes)
                ),
                false => format!("{l}\n"),
            })
            .collect();
        std::fs::write(sb.join("cat/SHA256SUMS"), sums).unwrap();
    };
    let verify = || verify_cat_with(&sb, &["--assets-dir", "cat"]);
    set_urls(
        "http://127.0.0.1:9/hooks/hooks-alpha-0.1.0.tar.gz?sig=1",
        "http://127.0.0.1:9/hooks/hooks-beta-0.1.0.tar.gz#top",
    );
    let (code, r) = verify();
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(codes(&r), Vec::<String>::new(), "{r:#}");

    set_urls(
        "http://127.0.0.1:9/hooks/hooks-alpha-0.1.0.tar.gz",
        "http://127.0.0.1:9/hooks/",
    );
    let (code, r) = verify();
    assert_eq!(code, 1, "{r:#}");
    let errors: Vec<&str> = r["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(errors, ["asset-unnamed"], "{r:#}");
}

/// Found by a README walk-through: with a published archive of an older version gone from
/// the catalog folder, `pack --check` printed only "differs SHA256SUMS" and advised
/// `hookpack pack`, which rewrote SHA256SUMS without it; `--check` then said "up to date"
/// while `catalog verify` failed. The archive is a difference of its own (`missing`) as
/// long as it is gone, and the advice says to copy it back: pack cannot rebuild it.
#[test]
fn pack_check_reports_a_published_archive_gone_from_the_folder() {
    let sb = Sandbox::new();
    packed_with_alpha_0_2_0(&sb);
    std::fs::remove_file(sb.join("cat/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let check = || pack_src_with(&sb, &["--check"]);
    for round in ["before a pack", "after a pack"] {
        let o = check();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{round}: {out}{err}");
        assert!(
            out.contains("missing   hooks-alpha-0.1.0.tar.gz: expected sha256 "),
            "{round}: {out}"
        );
        assert!(
            err.contains(
                "copy the published archives it lacks back from where the catalog is served \
                 (pack cannot build them again)"
            ),
            "{round}: {err}"
        );
        let o = pack_src_with(&sb, &[]);
        assert!(o.status.success(), "{round}");
    }
}

/// An archive OUT lost, packed again: pack warns of it (`archive-missing`) and leaves it out
/// of SHA256SUMS. `catalog verify` then reported it twice, the second time as
/// "SHA256SUMS does not list …; pack into the catalog folder again", advice that cannot
/// help while the archive is gone. It is now reported once, as the archive missing.
#[test]
fn an_archive_pack_found_missing_is_reported_once_by_verify() {
    let sb = Sandbox::new();
    packed(&sb);
    std::fs::remove_file(sb.join("cat/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let o = pack_src_with(&sb, &["--only", "beta"]);
    let err = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("archive-missing"), "{err}");
    let sums = std::fs::read_to_string(sb.join("cat/SHA256SUMS")).unwrap();
    assert!(!sums.contains("hooks-alpha-0.1.0.tar.gz"), "{sums}");
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(codes(&r), ["fetch-failed"], "{r:#}");
}

/// Found by the maintainer-side hostile-input sweep: `catalog verify` or `catalog list` of
/// a catalog's SHA256SUMS or one of its archives, given for its index, reported a JSON
/// syntax error at line 1 ("unexpected data after the end of the JSON value", "invalid
/// UTF-8 byte"), as if the file were a broken index; it now says the file is no JSON and
/// which to give (as `validate` does).
#[test]
fn a_file_of_the_catalog_given_for_its_index_is_named_as_no_json() {
    let sb = Sandbox::new();
    packed(&sb);
    for file in ["cat/SHA256SUMS", "cat/hooks-alpha-0.1.0.tar.gz"] {
        let (code, r) = verify_json(&sb, file);
        assert_eq!(code, 1, "{file}: {r:#}");
        assert_eq!(codes(&r), ["index-not-json"], "{file}: {r:#}");
        let m = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(
            m.contains("give the catalog's index, cat/hooks-index.json"),
            "{file}: {m}"
        );
        let o = sb.cmd().args(["catalog", "list", file]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains("error[index-not-json]"), "{file}: {err}");
    }
}

/// Found by the maintainer-side hostile-input sweep: an index listing one archive for two
/// versions (a hand-edited or merged entry) passed `validate` and `pack --merge`, which
/// then wrote SHA256SUMS with one line for that file holding whichever digest came last,
/// so `sha256sum -c` failed on it; only `catalog verify` found the archive not to be the
/// version's. Each version is an archive of its own, so a URL listed twice is an error.
#[test]
fn an_archive_listed_for_two_versions_is_refused() {
    let sb = Sandbox::new();
    packed(&sb);
    edit_index(&sb, |index| {
        let mut other = index["recipes"][1]["versions"][0].clone();
        other["version"] = json!("0.0.9");
        other["sha256"] = json!("0".repeat(64));
        index["recipes"][1]["versions"]
            .as_array_mut()
            .unwrap()
            .push(other);
    });
    let (code, v) = validate_json(&sb, &["cat/hooks-index.json"]);
    assert_eq!(code, 1, "{v:#}");
    assert_finding(&v, "/recipes/1/versions/1/url", "url-duplicate");
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_finding(&r, "/recipes/1/versions/1/url", "url-duplicate");

    // As an index to merge, it is refused before anything is written.
    std::fs::rename(sb.join("cat/hooks-index.json"), sb.join("m.json")).unwrap();
    let before = crate::pack::snapshot(&sb.join("cat"));
    let o = pack_src_with(&sb, &["--merge", "m.json"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("error[url-duplicate]"), "{err}");
    assert_eq!(crate::pack::snapshot(&sb.join("cat")), before);
}

/// `packed`, its index then listing a version 0.0.9 of the first recipe at `url` (the
/// archive of its published version, by digest).
fn packed_with_a_version_at(sb: &Sandbox, url: &str) {
    packed(sb);
    edit_index(sb, |index| {
        let mut other = index["recipes"][0]["versions"][0].clone();
        other["version"] = json!("0.0.9");
        other["url"] = json!(url);
        (index["recipes"][0]["versions"].as_array_mut().unwrap()).push(other);
    });
}

/// Found by the maintainer-side hostile-input sweep: a version whose `url` named the
/// catalog's own index (or `SHA256SUMS`) passed `validate`, `pack` and `pack --check`,
/// which left that entry out of `SHA256SUMS` as the index's own line; only `catalog
/// verify` failed it, on size and digest. No archive has that name: it is an error. So is
/// a URL with no path (`#a`, `?x`), which is the index itself, and one naming a folder
/// (found by the hostile-network sweep: they passed, and install failed on the index's
/// bytes or on "it is a folder", naming no field).
#[test]
fn an_index_naming_its_own_files_as_archives_is_refused() {
    for url in [
        "hooks-index.json",
        "SHA256SUMS",
        "old/../hooks-index.json",
        "#a",
        "?x",
        "old/",
        ".",
        // Percent-encoded as well (found by the review of the diff).
        "%2e",
        "old%2F",
        "hooks-index%2Ejson",
    ] {
        let sb = Sandbox::new();
        packed_with_a_version_at(&sb, url);
        let pointer = "/recipes/0/versions/1/url";
        let (code, v) = validate_json(&sb, &["cat/hooks-index.json"]);
        assert_eq!(code, 1, "{url}: {v:#}");
        assert_finding(&v, pointer, "url-not-archive");
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{url}: {r:#}");
        assert_finding(&r, pointer, "url-not-archive");
        let before = crate::pack::snapshot(&sb.join("cat"));
        for check in [&[][..], &["--check"]] {
            let o = pack_src_with(&sb, check);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert_eq!(o.status.code(), Some(1), "{url} {check:?}: {err}");
            assert!(
                err.contains(&format!(
                    "error[url-not-archive]: url `{url}` names {}, not an archive; give the \
                     URL of the version's archive",
                    match url {
                        "SHA256SUMS" => "the catalog's SHA256SUMS",
                        "old/" | "." | "%2e" | "old%2F" => "a folder",
                        _ => "the catalog's index",
                    }
                )),
                "{url}: {err}"
            );
            assert_eq!(crate::pack::snapshot(&sb.join("cat")), before, "{url}");
        }
    }
}

/// Found by the maintainer-side hostile-input sweep: a kept version whose `url` leaves the
/// catalog folder (`../x`, `/abs`, `file:///…`), from `--merge` or a hand-edited index, was
/// packed with a warning to copy the file "into" OUT, which cannot be done (or, for a
/// `file://` URL, with none). It is warned of as `url-outside`, which verify refuses
/// unread without `--allow-outside`.
#[test]
fn a_kept_url_outside_the_catalog_folder_is_warned_of_as_verify_reports_it() {
    for url in ["../../etc/passwd", "/etc/passwd", "file:///etc/passwd"] {
        let sb = Sandbox::new();
        packed_with_a_version_at(&sb, url);
        for check in [&[][..], &["--check"]] {
            let o = pack_src_with(&sb, check);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            ok(&o);
            assert!(err.contains("warning[url-outside]: url `"), "{url}: {err}");
            assert!(err.contains(&format!("url `{url}` ")), "{url}: {err}");
            assert!(!err.contains("archive-missing"), "{url}: {err}");
        }
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{url}: {r:#}");
        assert_finding(&r, "/recipes/0/versions/1/url", "url-outside");
    }
}

/// Found by the maintainer-side hostile-input sweep: `pack` wrote a catalog folder whose
/// name is not UTF-8, but `catalog list` and `catalog verify` refused that name as a usage
/// error that named no argument, and `--merge` read the folder as the index file itself.
#[cfg(target_os = "linux")]
#[test]
fn a_catalog_folder_whose_name_is_not_utf8_is_listed_verified_and_merged() {
    use std::os::unix::ffi::OsStrExt as _;
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    let name = std::ffi::OsStr::from_bytes(b"cat\xff");
    let pack = |out: &std::ffi::OsStr, extra: &[&std::ffi::OsStr]| {
        sb.cmd()
            .args(["pack", "--recipes-dir", "src", "--out-dir"])
            .arg(out)
            .args(["--updated-at", "2026-11-29T00:00:00Z"])
            .args(extra)
            .output()
            .unwrap()
    };
    ok(&pack(name, &[]));
    for verb in ["list", "verify"] {
        ok(&sb.cmd().args(["catalog", verb]).arg(name).output().unwrap());
    }
    let mut file = name.to_os_string();
    file.push("/hooks-index.json");
    ok(&sb
        .cmd()
        .args(["catalog", "list"])
        .arg(&file)
        .output()
        .unwrap());
    let o = pack("merged".as_ref(), &["--merge".as_ref(), name]);
    ok(&o);
    assert_eq!(
        std::fs::read(sb.join("merged/hooks-index.json")).unwrap(),
        std::fs::read(sb.path().join(name).join("hooks-index.json")).unwrap()
    );
}

/// The index of `packed`, served from a loopback server after `edit`; returns the server
/// (kept alive by the caller) and the index URL.
fn served_index(sb: &Sandbox, edit: impl FnOnce(&mut String)) -> (HttpServer, String) {
    packed(sb);
    let path = sb.join("cat/hooks-index.json");
    let mut text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    edit(&mut text);
    std::fs::write(&path, text).unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let url = server.url("hooks-index.json");
    (server, url)
}

/// `catalog list URL`, killed after `secs` seconds.
fn list_within(sb: &Sandbox, url: &str, secs: u64) -> std::process::Output {
    sb.cmd()
        .args(["catalog", "list", url])
        .timeout(std::time::Duration::from_secs(secs))
        .output()
        .unwrap()
}

/// Found by the network sweep: duplicate keys were looked for by comparing each key with
/// every earlier one, so an index served with an object of some 300,000 keys (4 MB, under
/// the 64 MiB cap) took minutes to read, and the 64 MiB one hours.
#[test]
fn an_index_object_of_many_keys_is_read_in_linear_time() {
    let sb = Sandbox::new();
    let (_server, url) = served_index(&sb, |text| {
        let keys: Vec<String> = (0..300_000).map(|i| format!("\"k{i}\":0")).collect();
        let at = text.find('{').unwrap() + 1;
        text.insert_str(at, &format!("\"x\":{{{}}},", keys.join(",")));
    });
    let o = list_within(&sb, &url, 60);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("alpha"),
        "{err}"
    );
}

/// Found by the network sweep: an index of a few million values (`0,0,0,…`) took some 60
/// times its size in memory once parsed (a 60 MB one, 3.5 GB; with a diagnostic for each,
/// 10 GB). Past a million values it is refused at the spot, with one error.
#[test]
fn an_index_of_more_values_than_hookpack_reads_is_refused_with_one_error() {
    let sb = Sandbox::new();
    let (_server, url) = served_index(&sb, |text| {
        let at = text.find('{').unwrap() + 1;
        let zeros = vec!["0"; 1_500_000].join(",");
        text.insert_str(at, &format!("\"x\":[{zeros}],"));
    });
    let o = list_within(&sb, &url, 60);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", &err[..err.len().min(2000)]);
    assert!(
        err.contains("the document holds more than 1000000 values"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.contains(&url), "{err}");
    assert!(err.lines().count() < 5, "{}", &err[..err.len().min(2000)]);
}

/// Found by the network sweep: each of 200,000 empty recipe entries (600 KB served) made a
/// diagnostic per missing field, 800,000 lines and hundreds of MB held. The first thousand
/// are listed and the rest counted, and the index is still refused.
#[test]
fn an_index_of_many_bad_entries_lists_a_bounded_number_of_problems() {
    let sb = Sandbox::new();
    let (_server, url) = served_index(&sb, |text| {
        let at = text.find("\"recipes\": [").unwrap() + "\"recipes\": [".len();
        let empties = vec!["{}"; 200_000].join(",");
        text.insert_str(at, &format!("{empties},"));
    });
    let o = list_within(&sb, &url, 120);
    let err = String::from_utf8_lossy(&o.stderr);
    let short = &err[..err.len().min(2000)];
    assert_eq!(o.status.code(), Some(1), "{short}");
    let lines = err.lines().count();
    assert!((1000..1010).contains(&lines), "{lines} lines: {short}");
    assert!(
        err.contains(
            "more error(s) and 0 more warning(s) in this file are not listed (at most 1000 are)"
        ),
        "{}",
        &err[err.len().saturating_sub(2000)..]
    );
}

/// Found by the network sweep: `catalog verify` made a diagnostic for each malformed line of
/// a served SHA256SUMS, so one of 16 MiB of `x` lines made 8 million (1.9 GB held, 8 million
/// lines printed). The first thousand problems of a file are listed, the rest counted.
#[test]
fn a_sha256sums_of_many_bad_lines_lists_a_bounded_number_of_problems() {
    let sb = Sandbox::new();
    packed(&sb);
    let sums = sb.join("cat/SHA256SUMS");
    let mut text = std::fs::read_to_string(&sums).unwrap();
    text.push_str(&"x\n".repeat(400_000));
    std::fs::write(&sums, text).unwrap();
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    let (code, r) = verify_json(&sb, &server.url("hooks-index.json"));
    assert_eq!(code, 1);
    let diags = r["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1001, "{:#}", diags[diags.len() - 1]);
    assert_eq!(diags[999]["code"], "sums-malformed", "{:#}", diags[999]);
    assert_eq!(
        diags[1000]["code"], "problems-unlisted",
        "{:#}",
        diags[1000]
    );
    assert!(
        diags[1000]["message"]
            .as_str()
            .unwrap()
            .starts_with("399000 more error(s) and 0 more warning(s) in this file are not listed"),
        "{:#}",
        diags[1000]
    );
    assert_eq!(
        diags[1000]["file"],
        server.url("SHA256SUMS"),
        "{:#}",
        diags[1000]
    );
    assert_eq!(
        r["archives"].as_array().unwrap().len(),
        2,
        "{:#}",
        r["archives"]
    );
}

/// Found by the network sweep: every value's JSON pointer was built whole, and every key
/// given twice kept its object's pointer, so long keys on one path multiplied: a 10 MB index
/// (a 10 MB key over an array of 100,000 zeros) took 49 s to read, and a 240 KB one (a
/// 60 KB key over an object of 30,000 duplicate keys) 1.8 GB. Keys on one path may add up
/// to 16 KiB, as nesting may go 128 deep.
#[test]
fn an_index_with_keys_longer_than_hookpack_reads_on_one_path_is_refused() {
    let sb = Sandbox::new();
    let (_server, url) = served_index(&sb, |text| {
        let at = text.find('{').unwrap() + 1;
        let key = "k".repeat(10_000);
        text.insert_str(at, &format!("\"{key}\":{{\"{key}\":[0]}},"));
    });
    let o = list_within(&sb, &url, 60);
    fails_saying(
        &o,
        1,
        "the keys on one path add up to more than 16384 bytes; no hook document needs that (shorten the keys)",
    );
}

/// A file with more keys given twice than are listed says how many more there are.
#[test]
fn duplicate_keys_past_the_listed_ones_are_counted() {
    let sb = Sandbox::new();
    let dups = vec!["\"a\": 0"; 1501].join(", ");
    sb.write(
        "idx.json",
        format!(
            "{{\"schema\": \"hooks.catalog.v1\", \"updated_at\": \"2026-11-29T00:00:00Z\", \
             \"recipes\": [], \"x\": {{{dups}}}}}"
        ),
    );
    let o = sb
        .cmd()
        .args(["catalog", "list", "idx.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("error[duplicate-key]").count(), 1000, "{err}");
    assert!(
        err.contains("500 more error(s) and 0 more warning(s) in this file are not listed"),
        "{}",
        &err[err.len().saturating_sub(1000)..]
    );
}

/// The README's user flow starts with `catalog list builtin:`, which the help of INDEX did
/// not name (only a path, a URL or a catalog folder).
#[test]
fn the_help_of_index_names_the_built_in_catalog() {
    let sb = Sandbox::new();
    for verb in ["list", "verify"] {
        let o = sb.cmd().args(["catalog", verb, "--help"]).output().unwrap();
        ok(&o);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("or `builtin:` (the catalog built into"),
            "{verb}: {help}"
        );
        ok(&sb
            .cmd()
            .args(["catalog", verb, "builtin:"])
            .output()
            .unwrap());
    }
}

/// Found by a README walk-through: `catalog list` and `verify` needed an INDEX, where
/// `install` finds its index by itself. Without one they read the index `install` would
/// use ($HOOKPACK_INDEX_URL, the profile's config.yaml, else the built-in catalog), and say
/// which on stderr.
#[test]
fn catalog_list_and_verify_default_to_the_index_install_uses() {
    let sb = Sandbox::new();
    packed(&sb);
    for verb in ["list", "verify"] {
        let o = sb.cmd().args(["catalog", verb]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{verb}: {err}");
        assert!(
            err.contains(
                "index: builtin:hooks-index.json (the catalog built into hookpack, as install \
                 reads it; give INDEX to read another)"
            ),
            "{verb}: {err}"
        );
        let o = sb
            .cmd()
            .args(["catalog", verb])
            .env("HOOKPACK_INDEX_URL", "cat")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{verb}: {err}");
        assert!(
            err.contains("(from $HOOKPACK_INDEX_URL, as install"),
            "{verb}: {err}"
        );
        assert!(out.contains("alpha"), "{verb}: {out}");
        // A profile of the user's choosing (found by the publisher walk-through: only the
        // active profile's index could be read; `--profile` was "unexpected").
        sb.write(
            "prof/config.yaml",
            format!(
                "extra:\n  hooks:\n    index_url: {}\n",
                sb.join("cat").display()
            ),
        );
        let catalog = |args: &[&str]| {
            sb.cmd()
                .args(["catalog", verb])
                .args(args)
                .output()
                .unwrap()
        };
        let o = catalog(&["--profile", "prof"]);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{verb}: {err}");
        assert!(
            err.contains(&format!(
                "(from extra.hooks.index_url in {}, as install",
                sb.join("prof/config.yaml").display()
            )),
            "{verb}: {err}"
        );
        assert!(out.contains("alpha"), "{verb}: {out}");
        assert_eq!(
            catalog(&["cat", "--profile", "prof"]).status.code(),
            Some(2),
            "{verb}"
        );
        // A misspelt profile is said to be missing, not read as the built-in catalog's
        // (found by the diff review).
        let o = catalog(&["--profile", "porf"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{verb}: {err}");
        assert!(err.contains("porf"), "{verb}: {err}");
        assert!(o.stdout.is_empty(), "{verb}");
    }
}

#[test]
fn the_help_of_ca_cert_reads_as_install_s() {
    // catalog's said `[env: SSL_CERT_FILE is honoured too]`, which reads as clap's mark of
    // a flag whose value may come from that variable; --ca-cert takes none from it.
    let sb = Sandbox::new();
    for verb in ["list", "verify"] {
        let o = sb.cmd().args(["catalog", verb, "--help"]).output().unwrap();
        ok(&o);
        let help = String::from_utf8_lossy(&o.stdout);
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("--ca-cert"))
            .unwrap();
        assert!(!line.contains("[env:"), "{verb}: {line}");
        assert!(
            line.contains("(SSL_CERT_FILE is honoured too)"),
            "{verb}: {line}"
        );
    }
}

/// A folder of recipe sources given where an index goes (`catalog list src`, `install ID
/// --index src`) was answered "cannot open src/hooks-index.json: No such file or
/// directory"; it is told that the folder holds recipes, not a catalog, and how to make
/// one (found by review).
#[test]
fn a_folder_of_recipes_given_as_an_index_is_told_to_pack_it() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    for (args, folder) in [
        (&["catalog", "list", "src"][..], "src"),
        (&["catalog", "list", "src/demo"], "src"),
        (
            &["install", "demo", "--index", "src", "--profile", "p"],
            "src",
        ),
    ] {
        let o = sb.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "holds recipe sources, not a catalog (no hooks-index.json); make one with `hookpack pack --recipes-dir {folder} --out-dir OUT` and give OUT"
            )),
            "{args:?}: {err}"
        );
    }
    assert!(!sb.join("p").exists());
    // catalog verify reports it as its finding.
    let o = sb
        .cmd()
        .args(["catalog", "verify", "src"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("error[index-is-recipes]: src holds recipe sources, not a catalog"),
        "{out}"
    );
}

/// alpha and beta packed into `cat/`, then alpha's archive replaced by `len` zero bytes
/// that the index lists with their size and sha256: verify reads them whole and finds no
/// archive in them.
fn packed_with_zeros_for_alpha(sb: &Sandbox, len: usize) {
    packed(sb);
    let zeros = vec![0u8; len];
    std::fs::write(sb.join("cat/hooks-alpha-0.1.0.tar.gz"), &zeros).unwrap();
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    let v = &mut index["recipes"][0]["versions"][0];
    v["size"] = json!(len);
    v["sha256"] = json!(hookpack::sha256::Sha256::of(&zeros).to_string());
    std::fs::write(
        sb.join("cat/hooks-index.json"),
        serde_json::to_vec_pretty(&index).unwrap(),
    )
    .unwrap();
}

/// Runs `cmd` with its output in files of the sandbox (`peak.out`, `peak.err`) and returns
/// its exit code and its own peak resident memory in KiB. A launcher (python3) starts it: a
/// child's peak counts that of the process it was started from, here the test binary with
/// every test running in it.
pub fn code_and_peak_kib(sb: &Sandbox, cmd: &std::process::Command) -> (i32, i64) {
    const LAUNCH: &str = "import resource, subprocess, sys\n\
        r = subprocess.run(sys.argv[2:])\n\
        open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
        sys.exit(r.returncode)\n";
    let mut launch = std::process::Command::new("python3");
    launch
        .args(["-c", LAUNCH])
        .arg(sb.join("peak.kib"))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdout(std::fs::File::create(sb.join("peak.out")).unwrap())
        .stderr(std::fs::File::create(sb.join("peak.err")).unwrap());
    if let Some(dir) = cmd.get_current_dir() {
        launch.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => launch.env(k, v),
            None => launch.env_remove(k),
        };
    }
    let status = launch.status().expect("python3 (CI installs it)");
    let kib = std::fs::read_to_string(sb.join("peak.kib")).unwrap();
    (status.code().unwrap(), kib.trim().parse().unwrap())
}

/// catalog verify streams each archive (hashing it as it arrives, into a temporary file
/// when it is large) instead of holding it in memory: it read a 96 MiB archive into a
/// 96 MiB buffer.
#[test]
fn verify_does_not_hold_an_archive_in_memory() {
    let sb = Sandbox::new();
    packed_with_zeros_for_alpha(&sb, 96 << 20);
    for served in [false, true] {
        let server = served.then(|| HttpServer::serve(sb.join("cat"), Box::new(|_| None)));
        let index = match &server {
            Some(s) => s.url("hooks-index.json"),
            None => "cat".into(),
        };
        let mut cmd = sb.std_cmd();
        cmd.args(["catalog", "verify", "--format", "json", &index]);
        let (code, kib) = code_and_peak_kib(&sb, &cmd);
        let out = std::fs::read_to_string(sb.join("peak.out")).unwrap();
        assert_eq!(code, 1, "{out}");
        let r: Value = serde_json::from_str(&out).unwrap();
        let c = codes(&r);
        // The digest and size agree with the index; only the bytes are no archive.
        assert!(c.contains(&"archive-invalid".to_string()), "{c:?}");
        assert!(!c.contains(&"sha256-mismatch".to_string()), "{c:?}");
        assert!(!c.contains(&"size-mismatch".to_string()), "{c:?}");
        assert!(kib < 40 * 1024, "served {served}: peak {kib} KiB");
    }
}

/// An archive above the in-memory limit that cannot be kept in `$TMPDIR` (here a folder
/// that does not exist) fails verify as the machine's fault (exit 3), naming the folder
/// and the fix: the message named the folder, but not that TMPDIR chooses it.
#[test]
fn verify_with_no_room_for_a_big_archive_names_tmpdir() {
    let sb = Sandbox::new();
    packed_with_zeros_for_alpha(&sb, 5 << 20);
    let o = sb
        .cmd()
        .args(["catalog", "verify", "cat"])
        .env("TMPDIR", sb.join("no-such-folder"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("hooks-alpha-0.1.0.tar.gz"), "{out}");
    assert!(out.contains("no-such-folder"), "{out}");
    assert!(out.contains("set TMPDIR to a folder"), "{out}");
}

/// An archive the index lists that is not there (not uploaded, or deleted) was reported as
/// the server's 404 or the file system's "No such file" alone: the message now says what to
/// do, from disk and over HTTP.
#[test]
fn a_missing_archive_is_reported_with_the_fix() {
    let sb = Sandbox::new();
    packed(&sb);
    std::fs::remove_file(sb.join("cat/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let fix = "; the index lists it, so it must be there: upload (or copy back) the archive \
               `hookpack pack` wrote into its --out-dir, or, while the recipe's sources at that \
               version are still there unchanged, pack them into the catalog folder again, \
               which writes it anew (a version merged from another index has none here)";
    let server = HttpServer::serve(sb.join("cat"), Box::new(|_| None));
    for index in ["cat".to_string(), server.url("hooks-index.json")] {
        let (code, r) = verify_json(&sb, &index);
        assert_eq!(code, 1, "{r:#}");
        assert_eq!(codes(&r), ["fetch-failed"], "{r:#}");
        let message = r["diagnostics"][0]["message"].as_str().unwrap();
        assert!(message.ends_with(fix), "{index}: {message}");
    }
    // The index itself missing is not an archive the index lists.
    let (_, r) = verify_json(&sb, "nowhere/hooks-index.json");
    let message = r["diagnostics"][0]["message"].as_str().unwrap();
    assert!(!message.contains("the index lists it"), "{message}");
}

/// An archive kept in a temporary file that cannot be read back (here the seek to its start
/// fails, injected with strace) is this machine's failure (exit 3), not an invalid archive:
/// it was reported as `archive-invalid`, exit 1, telling the maintainer to upload again.
#[cfg(target_os = "linux")]
#[test]
fn verify_that_cannot_read_back_a_kept_archive_fails_as_the_machine() {
    let sb = Sandbox::new();
    packed_with_zeros_for_alpha(&sb, 5 << 20);
    // The first lseek moves the spilled file to where the in-memory bytes ended; the second
    // is verify's seek back to its start.
    let seek = ["-e", "trace=lseek", "-e", "inject=lseek:error=EIO:when=2"];
    let o = crate::pack::under_strace(&sb, &seek)
        .args(["catalog", "verify", "--format", "json", "cat"])
        .env("TMPDIR", sb.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    // (SHA256SUMS still names the archive's real bytes, which the zeros replaced.)
    let c = codes(&r);
    assert!(!c.contains(&"archive-invalid".to_string()), "{c:?}");
    let d = r["diagnostics"].as_array().unwrap();
    let read_back = d.iter().find(|d| d["code"] == "archive-unreadable");
    let message = read_back.expect("an archive-unreadable")["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("temporary file"), "{message}");
    assert!(message.contains("set TMPDIR"), "{message}");
    assert!(!message.contains("upload"), "{message}");
}

/// Found by the hostile-catalog sweep: a symbolic link in the catalog folder, in the
/// archive's place or as a folder on its way, passed the `url-outside` check, which read
/// only the URL's text, so verify reported the size and sha256 of whatever file the link
/// led to (a pull request's catalog, in CI, could name any file of the machine). A link on
/// the way is `url-outside` too: nothing there is read unless `--allow-outside` is given.
#[cfg(unix)]
#[test]
fn a_symbolic_link_in_the_catalog_folder_is_read_only_when_allowed() {
    let sb = Sandbox::new();
    packed(&sb);
    std::fs::create_dir_all(sb.join("away")).unwrap();
    std::fs::rename(
        sb.join("cat/hooks-alpha-0.1.0.tar.gz"),
        sb.join("away/hooks-alpha-0.1.0.tar.gz"),
    )
    .unwrap();
    let link = |target: &str, at: &str| {
        let _ = std::fs::remove_file(sb.join(at));
        std::os::unix::fs::symlink(sb.join(target), sb.join(at)).unwrap();
    };
    let why = "leads through a symbolic link in the catalog folder";
    // The archive's place, then a folder on its way.
    for (url, target, at) in [
        (
            "hooks-alpha-0.1.0.tar.gz",
            "away/hooks-alpha-0.1.0.tar.gz",
            "cat/hooks-alpha-0.1.0.tar.gz",
        ),
        ("old/hooks-alpha-0.1.0.tar.gz", "away", "cat/old"),
    ] {
        link(target, at);
        edit_index(&sb, |i| i["recipes"][0]["versions"][0]["url"] = json!(url));
        let (code, r) = verify_json(&sb, "cat");
        assert_eq!(code, 1, "{url}: {r:#}");
        let errors: Vec<&Value> = (r["diagnostics"].as_array().unwrap().iter())
            .filter(|d| d["severity"] == "error")
            .collect();
        assert_eq!(errors.len(), 1, "{url}: {r:#}");
        assert_eq!(errors[0]["code"], "url-outside", "{url}: {r:#}");
        let message = errors[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("url `{url}` {why}"))
                && message.contains("nothing there was read"),
            "{url}: {message}"
        );
        assert_eq!(r["archives"][0]["sha256"], Value::Null, "{url}: {r:#}");
        // Read when allowed (SHA256SUMS names no `old/` file: that is its own finding).
        let (_, r) = verify_json_with(&sb, "cat", &["--allow-outside"]);
        assert_eq!(r["archives"][0]["ok"], true, "{url}: {r:#}");
        let all = r["diagnostics"].as_array().unwrap().iter();
        assert!(
            all.filter(|d| d["code"] == "url-outside")
                .all(|d| d["severity"] == "warning"),
            "{url}: {r:#}"
        );
        std::fs::remove_file(sb.join(at)).unwrap();
    }
    // A link to a file that is no archive is not read either: its sha256 is not told.
    sb.write("secret.txt", "TOP SECRET\n");
    link("secret.txt", "cat/hooks-alpha-0.1.0.tar.gz");
    edit_index(&sb, |i| {
        i["recipes"][0]["versions"][0]["url"] = json!("hooks-alpha-0.1.0.tar.gz")
    });
    let (code, r) = verify_json(&sb, "cat");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["archives"][0]["sha256"], Value::Null, "{r:#}");
}

/// A local index whose archive URL leads out of the catalog folder: a relative one that
/// climbs out (`../x`, `%2e%2e/x`), a path from `/`, or a `file://` URL. SPEC 1.5 allows
/// them, but an index may be anyone's (a pull request's, in CI), and what verify reads it
/// reports (a file's size and sha256): without `--allow-outside` each is the index's error
/// (`url-outside`) and nothing there is read. With it, verify reads the archive, as install
/// does, and warns at the URL's pointer that the folder alone does not hold it; a file
/// there that is not the archive fails its size or sha256, and a fifo is refused unread
/// (verify does not wait for a writer). Read from a folder or from the file.
#[test]
fn a_local_index_url_that_leads_out_of_the_catalog_is_read_only_when_allowed() {
    let sb = Sandbox::new();
    packed(&sb);
    // A good archive where the URL leads.
    std::fs::copy(
        sb.join("cat/hooks-alpha-0.1.0.tar.gz"),
        sb.join("hooks-alpha-0.1.0.tar.gz"),
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(sb.join("fifo.tar.gz"))
        .status()
        .unwrap();
    assert!(made.success());
    let climbs = "leads out of the catalog folder";
    let file_url = "is a file:// URL";
    let outside = format!("file://{}", sb.join("hooks-alpha-0.1.0.tar.gz").display());
    let inside = format!(
        "FILE://{}",
        sb.join("cat/hooks-alpha-0.1.0.tar.gz").display()
    );
    let absolute = sb.join("hooks-alpha-0.1.0.tar.gz").display().to_string();
    let fifo = format!("file://{}", sb.join("fifo.tar.gz").display());
    // (url, why it is outside, the error reading it gives, if any)
    for (url, why, error) in [
        ("../hooks-alpha-0.1.0.tar.gz", climbs, None),
        ("old/../../hooks-alpha-0.1.0.tar.gz", climbs, None),
        ("%2e%2e/hooks-alpha-0.1.0.tar.gz", climbs, None),
        (absolute.as_str(), climbs, None),
        (outside.as_str(), file_url, None),
        (inside.as_str(), file_url, None),
        (
            "../../../../../../../../etc/passwd",
            climbs,
            Some("size-mismatch"),
        ),
        ("file:///etc/passwd", file_url, Some("size-mismatch")),
        (fifo.as_str(), file_url, Some("fetch-failed")),
    ] {
        edit_index(&sb, |i| i["recipes"][0]["versions"][0]["url"] = json!(url));
        for index in ["cat", "cat/hooks-index.json"] {
            let (code, r) = verify_json(&sb, index);
            assert_eq!(code, 1, "{url}: {r:#}");
            let errors: Vec<&Value> = (r["diagnostics"].as_array().unwrap().iter())
                .filter(|d| d["severity"] == "error")
                .collect();
            assert_eq!(errors.len(), 1, "{url}: {r:#}");
            assert_eq!(errors[0]["code"], "url-outside", "{url}: {r:#}");
            assert_eq!(errors[0]["pointer"], "/recipes/0/versions/0/url");
            let message = errors[0]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("url `{url}` {why}"))
                    && message.contains("nothing there was read")
                    && message.contains("`--allow-outside` reads it"),
                "{url}: {message}"
            );
            assert_eq!(r["archives"][0]["sha256"], Value::Null, "{url}: {r:#}");

            let (code, r) = verify_json_with(&sb, index, &["--allow-outside"]);
            let of = |severity: &str| -> Vec<Value> {
                let all = r["diagnostics"].as_array().unwrap().iter();
                all.filter(|d| d["severity"] == severity).cloned().collect()
            };
            let warnings = of("warning");
            let d = warnings
                .iter()
                .find(|d| d["code"] == "url-outside")
                .unwrap_or_else(|| panic!("{url}: {r:#}"));
            assert_eq!(d["pointer"], "/recipes/0/versions/0/url", "{url}: {r:#}");
            assert!(
                d["file"]
                    .as_str()
                    .unwrap()
                    .ends_with("cat/hooks-index.json"),
                "{url}: {r:#}"
            );
            let message = d["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("url `{url}` {why}"))
                    && message.contains("(read from ")
                    && message.contains("as --allow-outside asks")
                    && message.contains("`hookpack pack` writes archive names only"),
                "{url}: {message}"
            );
            let errors: Vec<String> = of("error")
                .iter()
                .map(|d| d["code"].as_str().unwrap().to_string())
                .collect();
            match error {
                None => {
                    assert_eq!(code, 0, "{url}: {r:#}");
                    assert!(errors.is_empty(), "{url}: {r:#}");
                    assert_eq!(r["archives"][0]["ok"], true, "{url}: {r:#}");
                }
                Some(e) => {
                    assert_eq!(code, 1, "{url}: {r:#}");
                    assert!(errors.contains(&e.to_string()), "{url}: {r:#}");
                    assert_eq!(r["archives"][0]["ok"], false, "{url}: {r:#}");
                }
            }
        }
    }
}

/// Verify checks archives on several threads and reports in index order: the report is the
/// same for any `--jobs`, the per-file limit on listed problems included. Here 1,100 versions
/// that list the archive of another version make more errors about that archive (its top
/// folder is not theirs) than are listed, among archives that pass and one that was
/// tampered with.
#[test]
fn verify_reports_the_same_on_any_number_of_threads() {
    let sb = Sandbox::new();
    packed(&sb);
    let beta = sb.join("cat/hooks-beta-0.1.0.tar.gz");
    let mut bytes = std::fs::read(&beta).unwrap();
    bytes.extend_from_slice(b"junk");
    std::fs::write(&beta, &bytes).unwrap();
    edit_index(&sb, |i| {
        let versions = i["recipes"][0]["versions"].as_array_mut().unwrap();
        let good = versions[0].clone();
        for n in 0..1100 {
            let mut v = good.clone();
            v["version"] = json!(format!("0.0.{n}"));
            versions.push(v);
        }
    });
    let report = |jobs: &str| {
        let o = sb
            .cmd()
            .args([
                "catalog", "verify", "--format", "json", "--jobs", jobs, "cat",
            ])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let one = report("1");
    assert_eq!(report("3"), one);
    let archives = one["archives"].as_array().unwrap();
    assert_eq!(archives.len(), 1102);
    let ok = |k: usize| archives[k]["ok"].as_bool().unwrap();
    assert!(
        ok(0) && !ok(1) && !ok(1101),
        "{:#}",
        archives[..2].to_vec()[0]
    );
    assert_eq!(archives[1101]["id"], "beta");
    let diags = one["diagnostics"].as_array().unwrap();
    let invalid = |d: &&Value| {
        d["code"] == "archive-invalid"
            && (d["file"].as_str()).is_some_and(|f| f.ends_with("hooks-alpha-0.1.0.tar.gz"))
    };
    assert_eq!(
        diags.iter().filter(invalid).count(),
        1000,
        "listed up to the limit, in index order"
    );
    let first = diags.iter().find(invalid).unwrap();
    assert_eq!(first["pointer"], "/recipes/0/versions/1");
    let unlisted = diags.iter().find(|d| d["code"] == "problems-unlisted");
    let message = unlisted.unwrap()["message"].as_str().unwrap();
    assert!(message.starts_with("100 more error(s)"), "{message}");
    assert!(codes(&one).contains(&"sha256-mismatch".to_string()));
}
