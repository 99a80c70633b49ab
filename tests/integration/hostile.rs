//! Hostile input for `install`: archives, indexes, HTTP servers and `hooks.json` files built
//! in each test to break it. Every case must be refused with exit 1 (3 for network faults)
//! and an error naming the problem, and must leave the whole sandbox (the profile, the
//! catalog, the folders around them) exactly as it was, apart from the profile lock and an
//! empty staging folder. Paths that would land outside the sandbox are checked one by one.
//!
//! The archives are written by hand (raw 512-byte headers with their checksum; deflate and
//! zstd frames for the bombs), because the `tar` crate refuses to write most of them. A
//! positive control checks that the same builders produce archives hookpack accepts, so a
//! refusal is never just a broken fixture.

use crate::common::*;
use crate::pack::snapshot;
use assert_cmd::Command;
use serde_json::{json, Value};
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROFILE: &str = "prof";
const INDEX: &str = "cat/hooks-index.json";
const TOP: &str = "demo-0.1.0";
const MIB: u64 = 1024 * 1024;
const USER_HOOKS: &str = r#"{
  "description": "the user's own",
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "echo mine", "id": "mine" } ] }
    ]
  }
}
"#;

// ---------------------------------------------------------------------------------------
// Tar, by hand.

/// Writes `v` as zero-padded octal with a final NUL, filling `field`; as a GNU base-256
/// number when it does not fit.
fn octal(field: &mut [u8], v: u64) {
    let s = format!("{:0w$o}", v, w = field.len() - 1);
    if s.len() > field.len() - 1 {
        field.fill(0);
        let n = field.len();
        field[n - 8..].copy_from_slice(&v.to_be_bytes());
        field[0] = 0x80;
        return;
    }
    field[..s.len()].copy_from_slice(s.as_bytes());
    field[s.len()] = 0;
}

/// Computes and stores the header checksum.
fn seal(h: &mut [u8; 512]) {
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

/// A ustar header with raw name and link bytes (at most 100 each), sealed.
fn header(name: &[u8], kind: u8, mode: u32, size: u64, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name);
    octal(&mut h[100..108], u64::from(mode));
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], 1_700_000_000);
    h[156] = kind;
    h[157..157 + link.len()].copy_from_slice(link);
    if kind == b'S' {
        h[257..265].copy_from_slice(b"ustar  \0"); // GNU, with an empty sparse map
        octal(&mut h[483..495], size);
    } else {
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
    }
    seal(&mut h);
    h
}

fn padded(data: &[u8]) -> Vec<u8> {
    let mut v = data.to_vec();
    v.resize(data.len().div_ceil(512) * 512, 0);
    v
}

/// A tar stream under construction.
#[derive(Clone, Default)]
struct Tar(Vec<u8>);

impl Tar {
    /// Any entry: raw name bytes (a GNU long-name entry first when longer than 100), type
    /// flag, mode, data and link target.
    fn entry(mut self, name: &[u8], kind: u8, mode: u32, data: &[u8], link: &[u8]) -> Tar {
        if name.len() > 100 {
            let mut long = name.to_vec();
            long.push(0);
            self = self.entry(b"././@LongLink", b'L', 0o644, &long, b"");
        }
        let short = &name[..name.len().min(100)];
        self.0
            .extend(header(short, kind, mode, data.len() as u64, link));
        self.0.extend(padded(data));
        self
    }
    fn file(self, name: &str, data: &[u8]) -> Tar {
        self.entry(name.as_bytes(), b'0', 0o644, data, b"")
    }
    fn dir(self, name: &str) -> Tar {
        self.entry(name.as_bytes(), b'5', 0o755, b"", b"")
    }
    fn link(self, name: &str, kind: u8, target: &str) -> Tar {
        self.entry(name.as_bytes(), kind, 0o777, b"", target.as_bytes())
    }
    /// A pax extended header for the next entry.
    fn pax(self, records: &[(&str, &[u8])]) -> Tar {
        let mut data = Vec::new();
        for (k, v) in records {
            let base = k.len() + v.len() + 3;
            let mut len = base + 1;
            while len != base + len.to_string().len() {
                len = base + len.to_string().len();
            }
            data.extend(format!("{len} {k}=").as_bytes());
            data.extend(*v);
            data.push(b'\n');
        }
        self.entry(b"PaxHeaders/next", b'x', 0o644, &data, b"")
    }
    /// Raw bytes, as they are.
    fn raw(mut self, bytes: &[u8]) -> Tar {
        self.0.extend(bytes);
        self
    }
    /// A complete recipe tree under `top`.
    fn recipe(self, top: &str, manifest: &Value) -> Tar {
        self.dir(&format!("{top}/"))
            .file(&format!("{top}/README.md"), b"# test\n")
            .file(&format!("{top}/recipe.json"), &json_bytes(manifest))
            .dir(&format!("{top}/scripts/"))
            .file(&format!("{top}/scripts/main.js"), b"process.exit(0);\n")
    }
    /// The demo recipe, as packed.
    fn demo() -> Tar {
        Tar::default().recipe(TOP, &manifest("demo"))
    }
    /// With the end-of-archive marker.
    fn end(mut self) -> Vec<u8> {
        self.0.extend([0u8; 1024]);
        self.0
    }
    /// Without it.
    fn open(self) -> Vec<u8> {
        self.0
    }
}

fn json_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap()
}

fn gz(tar: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(tar).unwrap();
    e.finish().unwrap()
}

fn zst(tar: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(tar, 3).unwrap()
}

// ---------------------------------------------------------------------------------------
// Bombs: deflate and zstd frames written by hand, so hundreds of MiB of zeros cost a few
// milliseconds to build and a few MiB (gzip) or KiB (zstd) on disk.

/// A piece of an uncompressed stream.
#[derive(Clone)]
enum Seg {
    Bytes(Vec<u8>),
    Zeros(u64),
}

#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, len: u32) {
        self.acc |= value << self.n;
        self.n += len;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// A Huffman code, most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        self.put(u64::from(code.reverse_bits() >> (32 - len)), len);
    }
    fn literal(&mut self, b: u8) {
        if b < 144 {
            self.code(0x30 + u32::from(b), 8);
        } else {
            self.code(0x190 + u32::from(b) - 144, 9);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// One fixed-Huffman deflate block: bytes as literals, zero runs as length-258 matches at
/// distance 1 (13 bits per 258 bytes).
fn deflate_fixed(segs: &[Seg]) -> Vec<u8> {
    let mut w = Bits::default();
    w.put(1, 1); // BFINAL
    w.put(1, 2); // BTYPE 01: fixed codes
    let run = u64::from(0xC5u32.reverse_bits() >> 24); // symbol 285 (258), then distance code 0
    for seg in segs {
        match seg {
            Seg::Bytes(b) => b.iter().for_each(|&x| w.literal(x)),
            Seg::Zeros(0) => {}
            Seg::Zeros(n) => {
                w.literal(0);
                let rest = n - 1;
                for _ in 0..rest / 258 {
                    w.put(run, 13);
                }
                for _ in 0..rest % 258 {
                    w.literal(0);
                }
            }
        }
    }
    w.code(0, 7); // end of block
    w.finish()
}

fn crc32_bytes(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn gf2_times(mat: &[u32; 32], mut vec: u32) -> u32 {
    let mut sum = 0;
    let mut i = 0;
    while vec != 0 {
        if vec & 1 != 0 {
            sum ^= mat[i];
        }
        vec >>= 1;
        i += 1;
    }
    sum
}

fn gf2_square(mat: &[u32; 32]) -> [u32; 32] {
    let mut sq = [0u32; 32];
    for (n, row) in sq.iter_mut().enumerate() {
        *row = gf2_times(mat, mat[n]);
    }
    sq
}

/// The CRC-32 of the data so far followed by `n` zero bytes, in O(log n).
fn crc32_zeros(crc: u32, mut n: u64) -> u32 {
    let mut op = [0u32; 32];
    op[0] = 0xEDB8_8320;
    for (i, row) in op.iter_mut().enumerate().skip(1) {
        *row = 1 << (i - 1);
    }
    for _ in 0..3 {
        op = gf2_square(&op); // one zero bit → two → four → one zero byte
    }
    let mut reg = !crc;
    while n != 0 {
        if n & 1 != 0 {
            reg = gf2_times(&op, reg);
        }
        op = gf2_square(&op);
        n >>= 1;
    }
    !reg
}

/// A gzip member with a correct CRC and length, built from `segs`.
fn gzip_segs(segs: &[Seg]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(deflate_fixed(segs));
    let (mut crc, mut len) = (0u32, 0u64);
    for seg in segs {
        match seg {
            Seg::Bytes(b) => {
                crc = crc32_bytes(crc, b);
                len += b.len() as u64;
            }
            Seg::Zeros(n) => {
                crc = crc32_zeros(crc, *n);
                len += n;
            }
        }
    }
    out.extend(crc.to_le_bytes());
    out.extend((len as u32).to_le_bytes());
    out
}

/// A zstd frame of raw blocks (bytes) and RLE blocks (zeros), 128 KiB window, no checksum.
fn zstd_segs(segs: &[Seg]) -> Vec<u8> {
    const MAX: u64 = 128 * 1024;
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3];
    let mut last = None;
    let mut block = |out: &mut Vec<u8>, kind: u32, size: u64, body: &[u8]| {
        last = Some(out.len());
        let h = (kind << 1) | ((size as u32) << 3);
        out.extend(&h.to_le_bytes()[..3]);
        out.extend(body);
    };
    for seg in segs {
        match seg {
            Seg::Bytes(b) => {
                for chunk in b.chunks(MAX as usize) {
                    block(&mut out, 0, chunk.len() as u64, chunk);
                }
            }
            Seg::Zeros(n) => {
                let mut left = *n;
                while left > 0 {
                    let size = left.min(MAX);
                    block(&mut out, 1, size, &[0]);
                    left -= size;
                }
            }
        }
    }
    match last {
        Some(at) => out[at] |= 1,
        None => out.extend([1, 0, 0]),
    }
    out
}

/// The demo recipe plus `data.bin`, whose header claims `claimed` bytes and which is
/// followed by `zeros` zero bytes of data; `pax_size` adds a pax `size` record.
fn bomb(claimed: u64, pax_size: Option<u64>, zeros: u64) -> Vec<Seg> {
    let mut t = Tar::demo();
    if let Some(s) = pax_size {
        t = t.pax(&[("size", s.to_string().as_bytes())]);
    }
    let mut head = t.open();
    head.extend(header(
        format!("{TOP}/data.bin").as_bytes(),
        b'0',
        0o644,
        claimed,
        b"",
    ));
    vec![Seg::Bytes(head), Seg::Zeros(zeros), Seg::Zeros(1024)]
}

// ---------------------------------------------------------------------------------------
// The world each test starts from, and the refusal check.

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A name no other case or run uses, for paths outside the sandbox.
fn unique(tag: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "hookpack-hostile-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Every path under `root` with its kind, mode and link target, and every file's bytes;
/// the profile lock and an empty staging folder are left out.
#[derive(Debug, PartialEq)]
struct State {
    files: BTreeMap<String, Vec<u8>>,
    shape: BTreeMap<String, String>,
}

fn state(root: &Path) -> State {
    let lock = format!("{PROFILE}/.hookpack.lock");
    let staging = format!("{PROFILE}/.hookpack-staging");
    let mut files = snapshot(root);
    files.remove(&lock);
    let mut shape = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap().display().to_string();
        let meta = e.path().symlink_metadata().unwrap();
        let ft = meta.file_type();
        if rel == lock
            || (rel == staging
                && ft.is_dir()
                && std::fs::read_dir(e.path()).unwrap().next().is_none())
        {
            continue;
        }
        let mode = {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                meta.permissions().mode() & 0o7777
            }
            #[cfg(not(unix))]
            {
                0
            }
        };
        let kind = if ft.is_symlink() {
            format!(
                "link -> {}",
                std::fs::read_link(e.path()).unwrap().display()
            )
        } else if ft.is_dir() {
            format!("dir {mode:o}")
        } else if ft.is_file() {
            format!("file {mode:o} {} bytes", meta.len())
        } else {
            "special".into()
        };
        shape.insert(rel, kind);
    }
    State { files, shape }
}

fn changes(before: &State, after: &State) -> Vec<String> {
    let mut out = Vec::new();
    for (p, k) in &after.shape {
        match before.shape.get(p) {
            None => out.push(format!("added {p} ({k})")),
            Some(old) if old != k => out.push(format!("changed {p} ({old} -> {k})")),
            _ => {}
        }
    }
    for p in before.shape.keys() {
        if !after.shape.contains_key(p) {
            out.push(format!("removed {p}"));
        }
    }
    for (p, b) in &after.files {
        if before.files.get(p).is_some_and(|old| old != b) {
            out.push(format!("rewrote {p}"));
        }
    }
    out
}

struct World {
    sb: Sandbox,
    index: Value,
}

impl World {
    /// A packed demo recipe in `cat/`, installed into a profile that already held a
    /// handler of the user's own.
    fn new() -> World {
        let sb = Sandbox::new();
        write_recipe(&sb, "src/demo", &manifest("demo"));
        let out = sb
            .cmd()
            .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
            .args(["--updated-at", "2026-11-29T00:00:00Z"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        sb.write(&format!("{PROFILE}/hooks.json"), USER_HOOKS);
        let w = World {
            index: serde_json::from_slice(&std::fs::read(sb.join(INDEX)).unwrap()).unwrap(),
            sb,
        };
        let out = w.install().output().unwrap();
        assert!(out.status.success(), "baseline install: {out:?}");
        let hooks = std::fs::read_to_string(w.sb.join("prof/hooks.json")).unwrap();
        assert!(hooks.contains("\"recipe\": \"demo\"") && hooks.contains("echo mine"));
        assert!(w.sb.join("prof/hooks/demo/scripts/main.js").is_file());
        w
    }

    fn install(&self) -> Command {
        let mut c = self.sb.cmd();
        c.args(["install", "demo", "--profile", PROFILE, "--index", INDEX]);
        c
    }

    fn install_archive(&self, file: &str) -> Command {
        let mut c = self.sb.cmd();
        c.args(["install", "--profile", PROFILE, "--archive", file]);
        c
    }

    /// Puts `bytes` in the catalog as demo 0.1.0, with an index that tells the truth about
    /// them (the case is about the archive, not about the index).
    fn publish(&self, name: &str, bytes: &[u8]) {
        self.sb.write(&format!("cat/{name}"), bytes);
        let mut index = self.index.clone();
        let v = &mut index["recipes"][0]["versions"][0];
        v["url"] = json!(name);
        v["sha256"] = json!(sha256_hex(bytes));
        v["size"] = json!(bytes.len());
        self.sb.write(INDEX, json_bytes(&index));
    }

    /// Runs `cmd`; Ok when it exited with `code`, said `needle` on stderr after `error:`,
    /// did not panic, and changed nothing in the sandbox nor created any of `outside`.
    fn refused(
        &self,
        mut cmd: Command,
        code: i32,
        needle: &str,
        outside: &[PathBuf],
    ) -> Result<(), String> {
        for p in outside {
            assert!(p.symlink_metadata().is_err(), "{} exists", p.display());
        }
        let before = state(self.sb.path());
        let out = cmd.output().unwrap();
        let after = state(self.sb.path());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let mut problems = Vec::new();
        if out.status.code() != Some(code) {
            problems.push(format!("exit {:?}, expected {code}", out.status.code()));
        }
        if !stderr.contains("error: ") {
            problems.push("no `error:` line".into());
        }
        if !stderr.contains(needle) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
        if stderr.contains("panicked") {
            problems.push("panicked".into());
        }
        let changed = changes(&before, &after);
        if !changed.is_empty() {
            problems.push(format!("wrote {changed:?}"));
        }
        for p in outside {
            if p.symlink_metadata().is_ok() {
                problems.push(format!("created {}", p.display()));
                let _ = std::fs::remove_file(p).or_else(|_| std::fs::remove_dir_all(p));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{}\n    stderr: {}\n    stdout: {}",
                problems.join("; "),
                stderr.trim_end().replace('\n', "\n            "),
                String::from_utf8_lossy(&out.stdout).trim_end()
            ))
        }
    }

    /// Installs a hostile payload through the index (with truthful sha256 and size) and
    /// with `--archive`; returns every failure.
    fn try_case(&self, case: &Case) -> Vec<String> {
        let mut variants: Vec<(&str, Vec<u8>)> = Vec::new();
        match &case.payload {
            Payload::Tar(t) => {
                variants.push(("gzip", gz(t)));
                variants.push(("zstd", zst(t)));
            }
            Payload::Segs(s) => {
                variants.push(("gzip", gzip_segs(s)));
                variants.push(("zstd", zstd_segs(s)));
            }
            Payload::Raw(b) => variants.push(("raw", b.clone())),
        }
        let mut failures = Vec::new();
        for (label, bytes) in variants {
            let file = format!("hooks-demo-0.1.0.{label}");
            self.publish(&file, &bytes);
            if let Err(e) = self.refused(self.install(), 1, case.needle, &case.outside) {
                failures.push(format!("{} [{label}, --index]: {e}", case.name));
            }
            if case.index_only {
                continue;
            }
            let local = format!("in/{file}");
            self.sb.write(&local, &bytes);
            let needle = case.archive_needle.unwrap_or(case.needle);
            if let Err(e) = self.refused(self.install_archive(&local), 1, needle, &case.outside) {
                failures.push(format!("{} [{label}, --archive]: {e}", case.name));
            }
        }
        failures
    }
}

enum Payload {
    /// A tar stream, tried gzip- and zstd-compressed.
    Tar(Vec<u8>),
    /// An uncompressed stream with long zero runs, tried as hand-made gzip and zstd.
    Segs(Vec<Seg>),
    /// Bytes used as they are.
    Raw(Vec<u8>),
}

struct Case {
    name: &'static str,
    payload: Payload,
    needle: &'static str,
    /// When `--archive` says it differently.
    archive_needle: Option<&'static str>,
    /// The problem only exists relative to an index.
    index_only: bool,
    /// Paths that must not exist afterwards.
    outside: Vec<PathBuf>,
}

fn case(name: &'static str, payload: Payload, needle: &'static str) -> Case {
    Case {
        name,
        payload,
        needle,
        archive_needle: None,
        index_only: false,
        outside: Vec::new(),
    }
}

fn tar(t: Tar) -> Payload {
    Payload::Tar(t.end())
}

fn run_table(cases: Vec<Case>) {
    let w = World::new();
    let total = cases.len();
    let failures: Vec<String> = cases.iter().flat_map(|c| w.try_case(c)).collect();
    assert!(
        failures.is_empty(),
        "{} failure(s) in {total} case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Positive controls: the builders make archives hookpack accepts.

#[test]
fn hand_built_archives_install() {
    let w = World::new();
    let mut with_data = bomb(64 * 1024, None, 64 * 1024);
    with_data.insert(0, Seg::Zeros(0)); // an empty run must encode to nothing
    let payloads = [
        ("tar.gz", gz(&Tar::demo().end())),
        ("tar.zst", zst(&Tar::demo().end())),
        ("segs.gz", gzip_segs(&with_data)),
        ("segs.zst", zstd_segs(&with_data)),
    ];
    for (name, bytes) in payloads {
        // Each is other bytes for demo 0.1.0, which install refuses from the index the
        // installed one came from: a fresh profile each.
        let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
        w.publish(name, &bytes);
        let out = w.install().output().unwrap();
        assert!(out.status.success(), "{name} via index: {out:?}");
        w.sb.write(&format!("in/{name}"), &bytes);
        let out = w.install_archive(&format!("in/{name}")).output().unwrap();
        assert!(out.status.success(), "{name} via --archive: {out:?}");
    }
    let data = std::fs::read(w.sb.join("prof/hooks/demo/data.bin")).unwrap();
    assert_eq!(data.len(), 64 * 1024);
    assert!(data.iter().all(|&b| b == 0));
}

#[test]
fn bomb_builders_round_trip() {
    let segs = vec![
        Seg::Bytes(b"head".to_vec()),
        Seg::Zeros(100_003),
        Seg::Bytes(vec![200, 1, 255]),
        Seg::Zeros(1),
    ];
    let mut want = b"head".to_vec();
    want.resize(4 + 100_003, 0);
    want.extend([200, 1, 255, 0]);
    let mut got = Vec::new();
    flate2::read::GzDecoder::new(gzip_segs(&segs).as_slice())
        .read_to_end(&mut got)
        .unwrap();
    assert!(got == want, "gzip");
    let got = zstd::stream::decode_all(zstd_segs(&segs).as_slice()).unwrap();
    assert!(got == want, "zstd");
    // 300 MiB of zeros stays small.
    let big = bomb(300 * MIB, None, 300 * MIB);
    assert!(gzip_segs(&big).len() < 3 * MIB as usize);
    assert!(zstd_segs(&big).len() < 64 * 1024);
}

// ---------------------------------------------------------------------------------------
// Archive entries.

#[test]
fn entry_types_other_than_file_and_folder_are_refused() {
    let t = |name, kind, link| tar(Tar::demo().link(&format!("{TOP}/{name}"), kind, link));
    // From prof/.hookpack-staging/<tmp>/demo/, five levels up is the system temp folder.
    let through = unique("through-link");
    run_table(vec![
        case(
            "symlink to /etc/passwd",
            t("scripts/evil.js", b'2', "/etc/passwd"),
            "is a symbolic link",
        ),
        Case {
            outside: vec![std::env::temp_dir().join(&through)],
            ..case(
                "symlink folder, then a file through it",
                tar(Tar::demo()
                    .link(&format!("{TOP}/up"), b'2', "../../../../..")
                    .file(&format!("{TOP}/up/{through}"), b"x")),
                "is a symbolic link",
            )
        },
        case(
            "hard link to /etc/passwd",
            t("passwd", b'1', "/etc/passwd"),
            "is a hard link",
        ),
        case(
            "hard link inside the recipe",
            t("copy.json", b'1', &format!("{TOP}/recipe.json")),
            "is a hard link",
        ),
        case(
            "character device",
            t("tty", b'3', ""),
            "is a character device",
        ),
        case("block device", t("sda", b'4', ""), "is a block device"),
        case("fifo", t("pipe", b'6', ""), "is a fifo"),
        case(
            "pax global header",
            tar(Tar::demo().entry(b"pax_global_header", b'g', 0o644, b"6 a=b\n", b"")),
            "global pax header",
        ),
        case("GNU sparse file", t("sparse", b'S', ""), "is a sparse file"),
        case(
            "volume label",
            t("label", b'V', ""),
            "only regular files and folders are allowed",
        ),
    ]);
}

#[test]
fn paths_that_could_land_outside_are_refused() {
    let w = World::new();
    let abs = std::env::temp_dir().join(unique("abs"));
    let above = w.sb.path().parent().unwrap().join(unique("dotdot"));
    // Extraction happens in prof/.hookpack-staging/<tmp>/demo/: the first `..` cancels the
    // top folder, the next four reach the sandbox, the fifth leaves it.
    let deep = format!(
        "{TOP}/../../../../../../{}",
        above.file_name().unwrap().to_str().unwrap()
    );
    let file = |name: &[u8]| tar(Tar::demo().entry(name, b'0', 0o644, b"x", b""));
    let outside = |c: Case, p: &[&PathBuf]| Case {
        outside: p.iter().map(|p| (*p).clone()).collect(),
        ..c
    };
    let cases = vec![
        outside(
            case(
                "absolute path",
                file(abs.to_str().unwrap().as_bytes()),
                "it is absolute",
            ),
            &[&abs],
        ),
        case(
            "absolute path under the top folder",
            file(format!("/{TOP}/x").as_bytes()),
            "it is absolute",
        ),
        case(
            "`..` two levels up",
            file(format!("{TOP}/../../escape").as_bytes()),
            "it has a `..` component",
        ),
        outside(
            case(
                "`..` out of the sandbox",
                file(deep.as_bytes()),
                "it has a `..` component",
            ),
            &[&above],
        ),
        case(
            "`..` onto the installed script",
            file(format!("{TOP}/../../../../hooks/demo/scripts/main.js").as_bytes()),
            "it has a `..` component",
        ),
        case(
            "`..` as a folder entry",
            tar(Tar::demo().dir(&format!("{TOP}/scripts/../../x/"))),
            "it has a `..` component",
        ),
        case(
            "`..` hidden in a pax path",
            tar(Tar::demo()
                .pax(&[("path", format!("{TOP}/../../escape").as_bytes())])
                .file(&format!("{TOP}/innocent"), b"x")),
            "it has a `..` component",
        ),
        case(
            "`..` hidden in a GNU long name",
            file(format!("{TOP}/{}/../../../escape", "a".repeat(120)).as_bytes()),
            "`..` component",
        ),
        case(
            "`.` component",
            file(format!("{TOP}/./x").as_bytes()),
            "it has a `.` component",
        ),
        case(
            "empty component",
            file(format!("{TOP}//x").as_bytes()),
            "it has an empty path component",
        ),
        case(
            "backslash",
            file(format!("{TOP}/..\\..\\escape").as_bytes()),
            "it contains a backslash",
        ),
        case(
            "drive letter",
            file(b"C:/x"),
            "it starts with a drive letter",
        ),
        case(
            "drive-relative path",
            file(b"C:x"),
            "it starts with a drive letter",
        ),
        case(
            "newline in a name",
            file(format!("{TOP}/bad\nname").as_bytes()),
            "control character",
        ),
        case(
            "NUL in a pax path",
            tar(Tar::demo()
                .pax(&[("path", format!("{TOP}/a\0/../../../escape").as_bytes())])
                .file(&format!("{TOP}/innocent"), b"x")),
            "control character",
        ),
        case(
            "name that is not UTF-8",
            file(
                &[
                    format!("{TOP}/").as_bytes(),
                    &[0xff, 0xfe, b'.', b'j', b's'],
                ]
                .concat(),
            ),
            "its name is not UTF-8",
        ),
        case(
            "path longer than 512 bytes",
            file(format!("{TOP}/{}", "a".repeat(600)).as_bytes()),
            "the limit on path length",
        ),
        case(
            "path deeper than 24 folders",
            file(format!("{TOP}/{}x", "d/".repeat(30)).as_bytes()),
            "the limit on path depth",
        ),
    ];
    let total = cases.len();
    let failures: Vec<String> = cases.iter().flat_map(|c| w.try_case(c)).collect();
    assert!(
        failures.is_empty(),
        "{} failure(s) in {total} case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// pax records the tar crate reads otherwise than GNU tar and Python's tarfile (which hosts
/// and users extract with) are refused, so what hookpack checks is what they would unpack:
/// a record that does not parse (the tar crate skipped it), a key given twice (it took the
/// first, they take the last), a `size` that is no number (it fell back to the header's
/// size, which moves where the next entry starts), a GNU sparse file (they rebuild it under
/// the name its records give), a path given twice over (it took the GNU long name) and a
/// record length with a leading `+` (it read the record, they skip it).
#[test]
fn pax_records_other_tools_read_otherwise_are_refused() {
    let innocent = format!("{TOP}/innocent");
    let pax = |records: &[(&str, &[u8])]| tar(Tar::demo().pax(records).file(&innocent, b"x"));
    let raw_pax = |data: &[u8]| {
        tar(Tar::demo()
            .entry(b"PaxHeaders/next", b'x', 0o644, data, b"")
            .file(&innocent, b"x"))
    };
    let elsewhere = format!("{TOP}/elsewhere");
    let long = format!("{TOP}/{}", "a".repeat(120));
    run_table(vec![
        case(
            "pax record with a wrong length",
            raw_pax(format!("99 path={TOP}/a\n").as_bytes()),
            "a pax record is malformed",
        ),
        case(
            "pax record with no `=`",
            raw_pax(b"8 pathx\n"),
            "a pax record is malformed",
        ),
        // GNU tar and Python skip the record (Python all after it too); the tar crate read
        // the length as 30 and took the path.
        case(
            "pax record whose length has a leading +",
            raw_pax(format!("+30 path={elsewhere}\n").as_bytes()),
            "a pax record's length `+30` is not decimal digits",
        ),
        case(
            "pax path given twice",
            pax(&[
                ("path", innocent.as_bytes()),
                ("path", elsewhere.as_bytes()),
            ]),
            "the pax key `path` is given twice",
        ),
        case(
            "pax size that is no number",
            pax(&[("size", b"1x")]),
            "the pax `size` `1x` is not a decimal number",
        ),
        case(
            "GNU sparse file in pax records",
            pax(&[
                ("GNU.sparse.name", elsewhere.as_bytes()),
                ("GNU.sparse.major", b"1"),
            ]),
            "GNU sparse file",
        ),
        case(
            "pax path beside a GNU long name",
            tar(Tar::demo()
                .pax(&[("path", elsewhere.as_bytes())])
                .file(&long, b"x")),
            "a pax path and a GNU long name",
        ),
    ]);
}

/// Headers the tar crate reads otherwise than GNU tar and Python's tarfile (which hosts and
/// users extract with) are refused, so what hookpack checks is what they would unpack. Each
/// case was unpacked by GNU tar 1.34 and Python 3.11 to see where they part: a file whose
/// name ends in `/` (a folder to GNU tar, and to Python for type NUL, by its header's own
/// name even under a long name or pax path); a folder with data
/// (they read its data as the entries that follow, where the tar crate skips it); bytes in
/// the ustar prefix field of a header without ustar magic and version (Python puts them
/// before the name, GNU tar too when the magic is ustar's; the tar crate ignores them); a
/// number field, in the entry's header or in a GNU long name's or pax header before it,
/// that is not octal digits between spaces (Python stops unpacking at the header, without
/// an error; GNU tar reads a leading `+` as base-64, the tar crate as octal) or a base-256
/// size whose first bytes the tar crate skips; bytes after a GNU long name's or pax
/// header's data in its last block (both read a long name on to a NUL there, Python pax
/// records too).
#[test]
fn headers_other_tools_read_otherwise_are_refused() {
    let x = format!("{TOP}/x");
    let file =
        |kind: u8, name: &str| tar(Tar::demo().entry(name.as_bytes(), kind, 0o644, b"hello", b""));
    // `x` with `prefix` in the ustar prefix field and `magic` (with its version).
    let prefixed = |magic: &[u8; 8]| {
        let mut h = header(x.as_bytes(), b'0', 0o644, 5, b"");
        h[257..265].copy_from_slice(magic);
        h[345..345 + TOP.len()].copy_from_slice(TOP.as_bytes());
        seal(&mut h);
        tar(Tar::demo().raw(&h).raw(&padded(b"hello")))
    };
    // `x`, then `after`, with `bytes` at `at` in x's header (or in the GNU long-name or pax
    // header before it).
    let after = |t: Tar| t.file(&format!("{TOP}/after"), b"after");
    let field = |at: usize, bytes: &[u8]| {
        let mut h = header(x.as_bytes(), b'0', 0o644, 5, b"");
        h[at..at + bytes.len()].copy_from_slice(bytes);
        seal(&mut h);
        tar(after(Tar::demo().raw(&h).raw(&padded(b"hello"))))
    };
    let extension = |kind: u8, data: &[u8], at: usize, bytes: &[u8]| {
        let mut h = header(b"././@LongLink", kind, 0o644, data.len() as u64, b"");
        h[at..at + bytes.len()].copy_from_slice(bytes);
        seal(&mut h);
        let t = Tar::demo().raw(&h).raw(&padded(data));
        tar(after(
            t.raw(&header(b"short", b'0', 0o644, 5, b""))
                .raw(&padded(b"hello")),
        ))
    };
    let long = format!("{x}\0");
    let pax_path = format!("{} path={x}\n", x.len() + 9);
    // `x` named by a long name or pax path, over a type NUL header named `short/`.
    let over_slash = |t: Tar| {
        let t = t
            .raw(&header(b"short/", 0, 0o644, 5, b""))
            .raw(&padded(b"hello"));
        tar(after(t))
    };
    // An extension header of `kind` with `data`, then `rest` in its last block.
    let trailing = |kind: u8, data: &[u8], rest: &[u8]| {
        let h = header(b"././@LongLink", kind, 0o644, data.len() as u64, b"");
        Tar::demo().raw(&h).raw(&padded(&[data, rest].concat()))
    };
    let mtime = b"11 mtime=1\n";
    // An entry hidden as a folder's data.
    let hidden = Tar::default().file(&format!("{TOP}/hidden"), b"boo").open();
    let folder = |size: usize| {
        header(
            format!("{TOP}/d/").as_bytes(),
            b'5',
            0o755,
            size as u64,
            b"",
        )
    };
    run_table(vec![
        case(
            "a file (type 0) whose name ends in /",
            file(b'0', &format!("{x}/")),
            "its name ends in `/`",
        ),
        case(
            "an old-style file (type NUL) whose name ends in /",
            file(0, &format!("{x}/")),
            "its name ends in `/`",
        ),
        case(
            "a contiguous file (type 7) whose name ends in /",
            file(b'7', &format!("{x}/")),
            "its name ends in `/`",
        ),
        case(
            "a long name over a type NUL header whose name ends in /",
            over_slash(Tar::demo().entry(b"././@LongLink", b'L', 0o644, long.as_bytes(), b"")),
            "its header's own name ends in `/`",
        ),
        case(
            "a pax path over a type NUL header whose name ends in /",
            over_slash(Tar::demo().pax(&[("path", x.as_bytes())])),
            "its header's own name ends in `/`",
        ),
        case(
            "a long name without a NUL, and more of it after its size",
            tar(after(
                trailing(b'L', x.as_bytes(), b"y")
                    .raw(&header(b"short", b'0', 0o644, 5, b""))
                    .raw(&padded(b"hello")),
            )),
            "bytes after its data in its last block",
        ),
        case(
            "a pax size record after the pax header's size",
            tar(after(
                trailing(b'x', mtime, b"10 size=0\n")
                    .raw(&header(x.as_bytes(), b'0', 0o644, 5, b""))
                    .raw(&padded(b"hello")),
            )),
            "bytes after its data in its last block",
        ),
        case(
            "GNU magic, and bytes where ustar's prefix is",
            prefixed(b"ustar  \0"),
            "bytes in the ustar prefix field",
        ),
        case(
            "no magic (old tar), and bytes where ustar's prefix is",
            prefixed(&[0; 8]),
            "bytes in the ustar prefix field",
        ),
        case(
            "ustar magic with version NUL NUL, and a prefix",
            prefixed(b"ustar\0\0\0"),
            "bytes in the ustar prefix field",
        ),
        case(
            "a size with a leading + (base-64 to GNU tar)",
            field(124, b"+5\0\0\0\0\0\0\0\0\0\0"),
            "the `size` field of its header is `+5",
        ),
        case(
            "a base-256 size with a byte the tar crate skips",
            field(124, b"\x80\x01\0\0\0\0\0\0\0\0\0\x05"),
            "the `size` field of its header is `\\x80\\x01",
        ),
        case(
            "a mode with a leading +",
            field(100, b"+755\0\0\0\0"),
            "the `mode` field of its header is `+755",
        ),
        case(
            "an mtime that is no number (Python stops there)",
            field(136, b"zzzzzzzzzzz\0"),
            "the `mtime` field of its header is `zzzzzzzzzzz\\x00`",
        ),
        case(
            "a uid with digits after a space",
            field(108, b"0000 17\0"),
            "the `uid` field of its header is `0000 17",
        ),
        case(
            "a gid in hexadecimal",
            field(116, b"00000ff\0"),
            "the `gid` field of its header",
        ),
        case(
            "a devmajor that is no number (Python stops there)",
            field(329, b"zzzzzzz\0"),
            "the `devmajor` field of its header",
        ),
        case(
            "a GNU long name whose mtime is no number (Python stops there)",
            extension(b'L', long.as_bytes(), 136, b"zzzzzzzzzzz\0"),
            "the `mtime` field of the GNU long name or pax header before it",
        ),
        case(
            "a pax header whose uid is no number (Python stops there)",
            extension(b'x', pax_path.as_bytes(), 108, b"zzzzzzz\0"),
            "the `uid` field of the GNU long name or pax header before it",
        ),
        case(
            "a folder whose data is an entry",
            tar(Tar::demo().raw(&folder(hidden.len())).raw(&hidden)),
            "it is a folder with data",
        ),
        case(
            "a folder given data by a pax size",
            tar(Tar::demo()
                .pax(&[("size", hidden.len().to_string().as_bytes())])
                .raw(&folder(0))
                .raw(&hidden)),
            "it is a folder with data",
        ),
    ]);
}

/// The control for the table above: headers all three read alike install, with the file
/// as written. Each was unpacked alike by GNU tar 1.34 and Python 3.11.
#[test]
fn headers_all_tools_read_alike_install() {
    let w = World::new();
    let x = format!("{TOP}/x");
    // x, with `bytes` at `at` in its header.
    let edited = |edits: &[(usize, &[u8])]| {
        let mut h = header(x.as_bytes(), b'0', 0o644, 5, b"");
        for (at, bytes) in edits {
            h[*at..at + bytes.len()].copy_from_slice(bytes);
        }
        seal(&mut h);
        Tar::demo().raw(&h).raw(&padded(b"hello")).end()
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("GNU magic", edited(&[(257, b"ustar  \0")])),
        ("no magic (old tar)", edited(&[(257, &[0; 8])])),
        ("type NUL", edited(&[(156, b"\0")])),
        ("type 7 (contiguous)", edited(&[(156, b"7")])),
        (
            "ustar prefix",
            edited(&[(0, &[0; 100]), (0, b"x"), (345, TOP.as_bytes())]),
        ),
        ("size between spaces", edited(&[(124, b"     5 \0    ")])),
        ("size after a tab", edited(&[(124, b"\t00000000005")])),
        (
            "mode with a space and a NUL",
            edited(&[(100, b"000644 \0")]),
        ),
        (
            "empty uid, gid, mtime, devmajor and devminor",
            edited(&[(108, &[0; 16]), (136, &[0; 12]), (329, &[0; 16])]),
        ),
        (
            "base-256 uid and negative mtime, as GNU tar writes them",
            edited(&[(108, b"\x80\0\0\0\x7f\xff\xff\xff"), (136, &[0xff; 12])]),
        ),
        (
            "base-256 size",
            edited(&[(124, b"\x80\0\0\0\0\0\0\0\0\0\0\x05")]),
        ),
        ("blank devmajor and devminor", edited(&[(329, &[b' '; 16])])),
        (
            "garbage after a field's NUL",
            edited(&[(136, b"1\0zzzzzzzzzz")]),
        ),
    ];
    for (name, bytes) in cases {
        let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
        w.sb.write(&format!("in/{name}.tar.gz"), gz(&bytes));
        let out = w
            .install_archive(&format!("in/{name}.tar.gz"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        let got = std::fs::read(w.sb.join("prof/hooks/demo/x")).unwrap();
        assert_eq!(got, b"hello", "{name}");
    }
}

/// An archive as `git archive --prefix=demo-0.1.0/ HEAD` (git 2.47, and so GitHub's release
/// tarballs) writes it installs: a global pax header with one `comment` record (the commit),
/// which GNU tar 1.34 and Python 3.11 both skip. A global header with any other record
/// (which they would apply to the entries after it, where the tar crate ignores it), or
/// with bytes after its records in its block (which Python reads as more records), or a
/// second one, is still refused.
#[test]
fn a_global_pax_comment_as_git_archive_writes_it_installs() {
    let comment = b"52 comment=34da55acf6efdbc779ff8eccc9031ed0a687f074\n";
    let global = |data: &[u8]| Tar::default().entry(b"pax_global_header", b'g', 0o666, data, b"");
    let w = World::new();
    let t = global(comment).recipe(TOP, &manifest("demo"));
    w.sb.write("in/git.tar.gz", gz(&t.end()));
    let out = w.install_archive("in/git.tar.gz").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read(w.sb.join("prof/hooks/demo/scripts/main.js")).unwrap(),
        b"process.exit(0);\n"
    );

    // The comment, then a `path` record past its size, in its block.
    let mut header = global(comment).open();
    let at = 512 + comment.len();
    header[at..at + 13].copy_from_slice(b"13 path=evil\n");
    run_table(vec![
        case(
            "a global pax header with a path",
            tar(global(b"13 path=evil\n").recipe(TOP, &manifest("demo"))),
            "global pax header",
        ),
        case(
            "a global pax comment with a path after its size",
            tar(Tar(header).recipe(TOP, &manifest("demo"))),
            "global pax header",
        ),
        case(
            "two global pax comments",
            tar(global(comment)
                .raw(&global(comment).open())
                .recipe(TOP, &manifest("demo"))),
            "a second global pax header",
        ),
    ]);
}

/// An archive as `tar -czf demo.tar.gz ./demo-0.1.0` (GNU tar 1.34) writes it installs: each
/// name starts with `./`, which GNU tar and Python 3.11 both unpack to `demo-0.1.0/`; so does
/// one that starts with the folder `./` too. What `tar -C demo-0.1.0 -czf demo.tar.gz .`
/// writes (`./`, then the files beside it) is still refused: it has no top folder.
#[test]
fn a_leading_dot_slash_as_gnu_tar_writes_it_installs() {
    let w = World::new();
    let tar = Tar::default().recipe(&format!("./{TOP}"), &manifest("demo"));
    w.sb.write("in/dot.tar.gz", gz(&tar.end()));
    let out = w.install_archive("in/dot.tar.gz").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read(w.sb.join("prof/hooks/demo/scripts/main.js")).unwrap(),
        b"process.exit(0);\n"
    );

    // `tar -C dir -czf x.tar.gz .` and Python's `shutil.make_archive(x, "gztar", dir)`
    // start with the folder `./`, which both unpack as the folder they unpack into.
    let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
    let tar = Tar::default()
        .dir("./")
        .recipe(&format!("./{TOP}"), &manifest("demo"));
    w.sb.write("in/root.tar.gz", gz(&tar.end()));
    let out = w.install_archive("in/root.tar.gz").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(w.sb.join("prof/hooks/demo/recipe.json").is_file());

    let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
    let tar = Tar::default()
        .dir("./")
        .file("./recipe.json", &json_bytes(&manifest("demo")));
    w.sb.write("in/flat.tar.gz", gz(&tar.end()));
    let out = w.install_archive("in/flat.tar.gz").output().unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(!w.sb.join(PROFILE).join("hooks/demo").exists());
}

/// An archive as `bsdtar --format v7` (libarchive 3.6) writes it installs: no magic, every
/// entry of type NUL, a folder told only by its name's final `/` (and no data). GNU tar
/// 1.34 and Python 3.11 both unpack it to the tree it was made from.
#[test]
fn v7_folders_as_bsdtar_writes_them_install() {
    let w = World::new();
    let entry = |name: &str, mode: u32, data: &[u8]| {
        let mut h = header(name.as_bytes(), 0, mode, data.len() as u64, b"");
        h[257..265].fill(0);
        seal(&mut h);
        let mut bytes = h.to_vec();
        bytes.extend(padded(data));
        bytes
    };
    let mut t = Tar::default();
    for (name, mode, data) in [
        (format!("{TOP}/"), 0o755, &b""[..]),
        (format!("{TOP}/README.md"), 0o644, b"# test\n"),
        (format!("{TOP}/empty/"), 0o755, b""),
        (format!("{TOP}/scripts/"), 0o755, b""),
        (
            format!("{TOP}/recipe.json"),
            0o644,
            &json_bytes(&manifest("demo")),
        ),
        (
            format!("{TOP}/scripts/main.js"),
            0o755,
            b"process.exit(0);\n",
        ),
    ] {
        t = t.raw(&entry(&name, mode, data));
    }
    w.sb.write("in/v7.tar.gz", gz(&t.end()));
    let out = w.install_archive("in/v7.tar.gz").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let installed = w.sb.join("prof/hooks/demo");
    assert!(installed.join("empty").is_dir());
    assert_eq!(
        std::fs::read(installed.join("scripts/main.js")).unwrap(),
        b"process.exit(0);\n"
    );
}

#[test]
fn colliding_entries_are_refused() {
    let evil = manifest("evil");
    run_table(vec![
        case(
            "recipe.json twice, the second one different",
            tar(Tar::demo().file(&format!("{TOP}/recipe.json"), &json_bytes(&evil))),
            "collide (same path)",
        ),
        case(
            "a file and a folder with the same path",
            tar(Tar::demo().dir(&format!("{TOP}/README.md/"))),
            "collide (same path)",
        ),
        case(
            "a folder, then a file with its path",
            tar(Tar::demo().file(&format!("{TOP}/scripts"), b"1")),
            "collide (same path)",
        ),
        case(
            "names that differ only by case",
            tar(Tar::demo()
                .file(&format!("{TOP}/scripts/A.js"), b"1")
                .file(&format!("{TOP}/scripts/a.js"), b"2")),
            "differ only by case",
        ),
        case(
            "recipe.json and RECIPE.JSON",
            tar(Tar::demo().file(&format!("{TOP}/RECIPE.JSON"), &json_bytes(&evil))),
            "differ only by case",
        ),
        case(
            "NFC and NFD spellings of é",
            tar(Tar::demo()
                .file(&format!("{TOP}/caf\u{e9}.txt"), b"1")
                .file(&format!("{TOP}/cafe\u{301}.txt"), b"2")),
            "same after Unicode normalisation",
        ),
        // Found by review: a folder and a file that differ by case were said to be the
        // same after Unicode normalisation (the folder's name carries a `/`).
        case(
            "a folder and a file that differ only by case",
            tar(Tar::demo().file(&format!("{TOP}/SCRIPTS"), b"1")),
            "differ only by case",
        ),
        case(
            "Å and the Angstrom sign, which NFC makes one letter",
            tar(Tar::demo()
                .file(&format!("{TOP}/\u{c5}.txt"), b"1")
                .file(&format!("{TOP}/\u{212b}.txt"), b"2")),
            "same after Unicode normalisation",
        ),
        case(
            "å and the Angstrom sign, which differ in case once normalised",
            tar(Tar::demo()
                .file(&format!("{TOP}/\u{e5}.md"), b"1")
                .file(&format!("{TOP}/\u{212b}.md"), b"2")),
            "differ by case and Unicode normalisation",
        ),
        case(
            "É and é, both in NFD",
            tar(Tar::demo()
                .file(&format!("{TOP}/E\u{301}.md"), b"1")
                .file(&format!("{TOP}/e\u{301}.md"), b"2")),
            "differ only by case",
        ),
        // Found by the hostile-publisher sweep: folders no entry names were compared with
        // nothing, so two spellings of one folder on a case- or normalisation-insensitive
        // file system (macOS, Windows) passed, where the same folders named were refused.
        case(
            "folders that differ only by case, named by the files in them",
            tar(Tar::demo()
                .file(&format!("{TOP}/Lib/a.js"), b"1")
                .file(&format!("{TOP}/lib/b.js"), b"2")),
            "entries `demo-0.1.0/Lib/` and `demo-0.1.0/lib/b.js` collide (differ only by case)",
        ),
        case(
            "a folder named, then another spelling of it named by a file in it",
            tar(Tar::demo()
                .dir(&format!("{TOP}/Lib/"))
                .file(&format!("{TOP}/lib/b.js"), b"2")),
            "differ only by case",
        ),
        case(
            "a folder named by a file in it, then another spelling of it named",
            tar(Tar::demo()
                .file(&format!("{TOP}/Lib/a.js"), b"1")
                .dir(&format!("{TOP}/lib/"))),
            "differ only by case",
        ),
        case(
            "NFC and NFD spellings of a folder, named by the files in them",
            tar(Tar::demo()
                .file(&format!("{TOP}/caf\u{e9}/a"), b"1")
                .file(&format!("{TOP}/cafe\u{301}/b"), b"2")),
            "same after Unicode normalisation",
        ),
        case(
            "NFC and NFD spellings of É and é",
            tar(Tar::demo()
                .file(&format!("{TOP}/caf\u{c9}.txt"), b"1")
                .file(&format!("{TOP}/cafe\u{301}.txt"), b"2")),
            "differ by case and Unicode normalisation",
        ),
    ]);
}

#[test]
fn layouts_other_than_one_top_folder_are_refused() {
    let bare = Tar::default()
        .file("recipe.json", &json_bytes(&manifest("demo")))
        .file("README.md", b"# test\n")
        .dir("scripts/")
        .file("scripts/main.js", b"process.exit(0);\n");
    run_table(vec![
        case(
            "two top folders",
            tar(Tar::demo().file("other-0.1.0/x", b"1")),
            "an archive holds exactly one top folder",
        ),
        case(
            "the wrong top folder",
            tar(Tar::default().recipe("other-0.1.0", &manifest("demo"))),
            "top folder",
        ),
        case("files at the top level, no folder", tar(bare), "top folder"),
        case(
            "a file where the top folder should be",
            tar(Tar::default()
                .file(TOP, b"{}")
                .file(&format!("{TOP}/x"), b"1")),
            "where the top folder should be",
        ),
        case(
            "an empty archive",
            Payload::Tar(vec![0; 1024]),
            "the archive is empty",
        ),
    ]);
}

/// Found by a hostile sweep: an archive given by file whose top folder is not its own
/// recipe.json's `<id>-<version>` was refused as "entry `other-0.1.0` is not under the
/// top folder `demo-0.1.0/`", blaming the folder for what the recipe.json says. (From an
/// index, the index names the top folder, and that message stands.)
#[test]
fn an_archive_at_odds_with_its_own_recipe_json_says_so() {
    let w = World::new();
    let file = w.sb.write(
        "odd.tar.gz",
        gz(&Tar::default()
            .recipe("other-0.1.0", &manifest("demo"))
            .end()),
    );
    w.refused(
        w.install_archive(&file.display().to_string()),
        1,
        "its top folder `other-0.1.0/` is not `demo-0.1.0/`, the id and version its \
         recipe.json gives (at /id and /version)",
        &[],
    )
    .unwrap();
}

#[test]
fn damaged_streams_are_refused() {
    let good_tar = Tar::demo().end();
    let good_gz = gz(&good_tar);
    let good_zst = zst(&good_tar);
    let cat = |a: &[u8], b: &[u8]| [a, b].concat();
    let mut bad_sum = good_tar.clone();
    bad_sum[512 + 136] ^= 0x01; // the README header's mtime, without resealing
    let hidden = header(format!("{TOP}/hidden.js").as_bytes(), b'0', 0o644, 1, b"");
    let mut flipped = good_gz.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0xff;
    let mut bad_crc = good_gz.clone();
    let crc_at = bad_crc.len() - 8;
    bad_crc[crc_at] ^= 0x01;
    let mut zst_flipped = good_zst.clone();
    let zmid = zst_flipped.len() / 2;
    zst_flipped[zmid] ^= 0xff;
    let raw = |b: Vec<u8>| Payload::Raw(b);
    run_table(vec![
        case(
            "garbage after the gzip stream",
            raw(cat(&good_gz, b"garbage")),
            "data after the end of the archive (after the compressed stream)",
        ),
        case(
            "a second gzip member",
            raw(cat(
                &good_gz,
                &gz(&Tar::default().file(&format!("{TOP}/x"), b"1").end()),
            )),
            "after the compressed stream",
        ),
        case(
            "garbage after the zstd frame",
            raw(cat(&good_zst, b"garbage")),
            "after the compressed stream",
        ),
        case(
            "a second zstd frame",
            raw(cat(&good_zst, &zst(b"more"))),
            "after the compressed stream",
        ),
        case(
            "a zstd skippable frame after the frame",
            raw(cat(
                &good_zst,
                &[0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4],
            )),
            "after the compressed stream",
        ),
        case(
            "non-zero bytes after the end-of-archive marker",
            tar(Tar::demo().raw(&[0u8; 1024]).raw(&padded(b"junk"))),
            "after the end-of-archive marker",
        ),
        case(
            "a whole entry after the end-of-archive marker",
            tar(Tar::demo()
                .raw(&[0u8; 1024])
                .raw(&hidden)
                .raw(&padded(b"x"))),
            "after the end-of-archive marker",
        ),
        case(
            "truncated gzip stream",
            raw(good_gz[..good_gz.len() / 2].to_vec()),
            "damaged or truncated",
        ),
        case(
            "gzip stream without its trailer",
            raw(good_gz[..good_gz.len() - 8].to_vec()),
            "damaged or truncated",
        ),
        case("gzip CRC mismatch", raw(bad_crc), "damaged or truncated"),
        case(
            "a flipped byte in the deflate data",
            raw(flipped),
            "damaged or truncated",
        ),
        case(
            "truncated zstd frame",
            raw(good_zst[..good_zst.len() / 2].to_vec()),
            "damaged or truncated",
        ),
        case(
            "a flipped byte in the zstd frame",
            raw(zst_flipped),
            "damaged or truncated",
        ),
        case(
            "tar data cut inside an entry",
            Payload::Tar(good_tar[..512 * 3 + 100].to_vec()),
            "damaged or truncated",
        ),
        case(
            "corrupted tar header checksum",
            Payload::Tar(bad_sum),
            "header checksum mismatch",
        ),
        // Found by a hostile sweep: the tar crate's message quoted the header's bytes and
        // name as found, binary noise here; it is said in words now.
        case(
            "gzip of bytes that are no tar",
            Payload::Tar(
                (0..4096u32)
                    .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                    .collect(),
            ),
            "damaged or truncated: a header's `cksum` field holds no number, so it is no tar \
             header: the archive's data is damaged, or it is no tar archive",
        ),
        case(
            "an uncompressed tar",
            raw(good_tar.clone()),
            "not a gzip or zstd archive",
        ),
        case(
            "bzip2 magic",
            raw(cat(b"BZh91AY&SY", &good_tar)),
            "not a gzip or zstd archive",
        ),
        case(
            "an empty file",
            raw(Vec::new()),
            "not a gzip or zstd archive",
        ),
    ]);
}

#[test]
fn archives_over_the_limits_are_refused() {
    let start = Instant::now();
    let mut many = Tar::demo().dir(&format!("{TOP}/many/"));
    for i in 0..10_001 {
        many = many.file(&format!("{TOP}/many/{i}"), b"");
    }
    let huge_manifest = {
        let mut head = Tar::default()
            .dir(&format!("{TOP}/"))
            .file(&format!("{TOP}/README.md"), b"# test\n")
            .dir(&format!("{TOP}/scripts/"))
            .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n")
            .open();
        let size = 4 * MIB + 1;
        head.extend(header(
            format!("{TOP}/recipe.json").as_bytes(),
            b'0',
            0o644,
            size,
            b"",
        ));
        // Zeros: refused on size before anyone parses it.
        vec![
            Seg::Bytes(head),
            Seg::Zeros(size.div_ceil(512) * 512),
            Seg::Zeros(1024),
        ]
    };
    // Found by the hostile-publisher sweep: 440 files, each 22 folders deep in folders no
    // entry names, made 9,680 folders (10,000 such files, from a 683 KB archive, made
    // 220,000 folders taking 859 MB of disk, in 50 s).
    let mut implied = Tar::demo();
    for i in 0..440 {
        let folders: Vec<String> = (0..22).map(|j| format!("f{i}d{j}")).collect();
        implied = implied.file(&format!("{TOP}/{}/x", folders.join("/")), b"");
    }
    // Found by the hostile-publisher sweep: a folder's data counted for nothing, so a folder
    // entry claiming 300 GiB, followed by as many zeros (a gzip of 300 MB, a zstd of 10 MB),
    // had each pass inflate all of them to skip it. A folder with data is refused from its
    // header now.
    let folder_bomb = {
        let mut head = Tar::demo().open();
        head.extend(header(
            format!("{TOP}/big/").as_bytes(),
            b'5',
            0o755,
            300 * MIB,
            b"",
        ));
        vec![Seg::Bytes(head), Seg::Zeros(300 * MIB), Seg::Zeros(1024)]
    };
    // `n` files each in a folder no entry names, after the demo's and `extra` more files.
    let one_deep = |extra: usize, n: usize| {
        let t = (0..extra).fold(Tar::demo(), |t, i| t.file(&format!("{TOP}/e{i}"), b""));
        (0..n).fold(t, |t, i| t.file(&format!("{TOP}/d{i}/x"), b""))
    };
    run_table(vec![
        case(
            "a folder entry with 300 MiB of data",
            Payload::Segs(folder_bomb),
            "it is a folder with data",
        ),
        case(
            "10,001 entries",
            Payload::Tar(many.end()),
            "the limit on entries (10000)",
        ),
        case(
            "440 files implying 9,680 folders",
            Payload::Tar(implied.end()),
            "the limit on files and folders, those its paths imply included (10000)",
        ),
        // About 5,000 entries, each file in a folder no entry names: the limit is crossed
        // at a file (with one file more before them, at a folder), which was said to be
        // over "the limit on entries", of which the archive holds half.
        case(
            "5,000 files each in a folder no entry names",
            Payload::Tar(one_deep(0, 5000).end()),
            "the limit on files and folders, those its paths imply included (10000)",
        ),
        case(
            "one file, then 5,000 each in a folder no entry names",
            Payload::Tar(one_deep(1, 5000).end()),
            "the limit on files and folders, those its paths imply included (10000)",
        ),
        case(
            "one entry of 300 MiB of zeros (a gzip/zstd bomb)",
            Payload::Segs(bomb(300 * MIB, None, 300 * MIB)),
            "the limit on unpacked size in bytes",
        ),
        case(
            "a header that claims 1 TiB (base-256 size)",
            Payload::Segs(bomb(1 << 40, None, 4096)),
            "the limit on unpacked size in bytes",
        ),
        case(
            "recipe.json over 4 MiB",
            Payload::Segs(huge_manifest),
            "recipe.json is larger than 4 MiB",
        ),
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn manifests_that_disagree_or_fail_validation_are_refused() {
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut m = manifest("demo");
        edit(&mut m);
        m
    };
    let t = |m: &Value| tar(Tar::default().recipe(TOP, m));
    let mut cases = vec![
        Case {
            archive_needle: Some("top folder"),
            ..case(
                "recipe.json id differs from the index",
                t(&manifest("evil")),
                "has id `evil` but the index promised `demo`",
            )
        },
        Case {
            archive_needle: Some("top folder"),
            ..case(
                "recipe.json version differs from the index",
                t(&with(&|m| m["version"] = json!("0.2.0"))),
                "has version `0.2.0` but the index promised `0.1.0`",
            )
        },
        Case {
            index_only: true,
            ..case(
                "recipe.json min_cli differs from the index",
                t(&with(&|m| m["min_cli"] = json!("0.14.0"))),
                "has min_cli `0.14.0` but the index promised `0.13.0`",
            )
        },
        case(
            "no recipe.json",
            tar(Tar::default()
                .dir(&format!("{TOP}/"))
                .file(&format!("{TOP}/README.md"), b"# test\n")
                .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n")),
            "there is no",
        ),
        case(
            "recipe.json is a folder",
            tar(Tar::default()
                .dir(&format!("{TOP}/"))
                .dir(&format!("{TOP}/recipe.json/"))
                .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n")),
            "there is no",
        ),
        case(
            "recipe.json only in a subfolder",
            tar(Tar::default()
                .dir(&format!("{TOP}/"))
                .file(
                    &format!("{TOP}/sub/recipe.json"),
                    &json_bytes(&manifest("demo")),
                )
                .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n")),
            "there is no",
        ),
        Case {
            // With --archive: see recipe_json_that_is_not_json_is_named_with_archive.
            index_only: true,
            ..case(
                "recipe.json is not JSON",
                not_json_recipe(),
                "recipe.json is not JSON",
            )
        },
        case(
            "a handler without id",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("id");
            })),
            "/hooks/PreToolUse/0/hooks/0",
        ),
        case(
            "a command that climbs out of the recipe",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
                    json!("node ../../../../evil.js")
            })),
            "/hooks/PreToolUse/0/hooks/0/command",
        ),
        case(
            "an absolute command path",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("/bin/sh /tmp/x.sh")
            })),
            "/hooks/PreToolUse/0/hooks/0/command",
        ),
        case(
            "a `recipe` field already stamped",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]["recipe"] = json!("other")
            })),
            "/hooks/PreToolUse/0/hooks/0/recipe",
        ),
        case(
            "async on PreToolUse",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]["async"] = json!(true)
            })),
            "/hooks/PreToolUse/0/hooks/0/async",
        ),
        case(
            "a handler type other than command",
            t(&with(&|m| {
                m["hooks"]["PreToolUse"][0]["hooks"][0]["type"] = json!("http")
            })),
            "/hooks/PreToolUse/0/hooks/0/type",
        ),
        case(
            "the wrong schema",
            t(&with(&|m| m["schema"] = json!("hooks.recipe.v9"))),
            "/schema",
        ),
        case(
            "the script the command runs is missing",
            tar(Tar::default().dir(&format!("{TOP}/")).file(
                &format!("{TOP}/recipe.json"),
                &json_bytes(&manifest("demo")),
            )),
            "scripts/main.js",
        ),
    ];
    // Duplicate keys: a last-wins reader and a first-wins reader see different recipes.
    for (name, first, second, needle, archive_needle) in [
        (
            "recipe.json with `id` twice, the last one foreign",
            "demo",
            "evil",
            "has id `evil` but the index promised `demo`",
            Some("its top folder `demo-0.1.0/` is not `evil-0.1.0/`"),
        ),
        (
            "recipe.json with `id` twice, the first one foreign",
            "evil",
            "demo",
            "key `id` appears twice",
            None,
        ),
    ] {
        let dup = format!(
            "{{\"schema\":\"hooks.recipe.v1\",\"id\":\"{first}\",\"id\":\"{second}\",\"version\":\"0.1.0\",\"min_cli\":\"0.13.0\",\"summary\":\"s\",\"hooks\":{}}}",
            serde_json::to_string(&manifest("demo")["hooks"]).unwrap()
        );
        cases.push(Case {
            archive_needle,
            ..case(
                name,
                tar(Tar::default()
                    .dir(&format!("{TOP}/"))
                    .file(&format!("{TOP}/recipe.json"), dup.as_bytes())
                    .file(&format!("{TOP}/README.md"), b"# test\n")
                    .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n")),
                needle,
            )
        });
    }
    run_table(cases);
}

#[cfg(unix)]
fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// An archive whose entries carry setuid, setgid, sticky, world-writable and no-access modes.
fn unsafe_modes() -> Vec<u8> {
    let entry = |t: Tar, name: &str, kind, mode, data: &[u8]| {
        t.entry(format!("{TOP}/{name}").as_bytes(), kind, mode, data, b"")
    };
    let t = entry(Tar::default(), "", b'5', 0o7777, b"");
    let t = entry(t, "README.md", b'0', 0o4666, b"# test\n");
    let t = entry(
        t,
        "recipe.json",
        b'0',
        0o666,
        &json_bytes(&manifest("demo")),
    );
    let t = entry(t, "scripts/", b'5', 0o777, b"");
    let t = entry(t, "scripts/main.js", b'0', 0o6777, b"process.exit(0);\n");
    let t = entry(t, "data/", b'5', 0o1777, b"");
    let t = entry(t, "data/sticky.json", b'0', 0o1622, b"{}");
    let t = entry(t, "data/none.json", b'0', 0o000, b"{}");
    let t = entry(t, "data/exec-only", b'0', 0o111, b"x");
    let t = entry(t, "implicit/deep/file.json", b'0', 0o2777, b"{}");
    t.end()
}

/// Runs `hookpack ARGS…` under `umask`, with the sandbox's clean environment.
#[cfg(unix)]
fn with_umask(sb: &Sandbox, umask: &str, args: &[&str]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(bin)
        .args(args)
        .current_dir(sb.path())
        .env("FINCLAW_HOME", sb.join("finclaw-home"))
        .env_remove("FINCLAW_PROFILE")
        .env_remove("HOOKPACK_INDEX_URL")
        .env_remove("HOOKPACK_CLI_VERSION")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[cfg(unix)]
fn assert_reduced_modes(sb: &Sandbox, how: &str) {
    let root = sb.join("prof/hooks/demo");
    let want = [
        ("", 0o755),
        ("README.md", 0o644),
        ("recipe.json", 0o644),
        ("scripts", 0o755),
        ("scripts/main.js", 0o755),
        ("data", 0o755),
        ("data/sticky.json", 0o644),
        ("data/none.json", 0o644),
        ("data/exec-only", 0o755),
        ("implicit", 0o755),
        ("implicit/deep", 0o755),
        ("implicit/deep/file.json", 0o755),
    ];
    let got: Vec<(&str, u32)> = want
        .iter()
        .map(|(p, _)| (*p, mode_of(&root.join(p))))
        .collect();
    let bad: Vec<String> = want
        .iter()
        .zip(&got)
        .filter(|(w, g)| w.1 != g.1)
        .map(|(w, g)| format!("{}: {:o}, want {:o}", w.0, g.1, w.1))
        .collect();
    assert!(bad.is_empty(), "{how}: {bad:?}");
}

/// Setuid, setgid, sticky and world-writable modes are not refused, but installed reduced
/// to 0644 / 0755 (executable bit kept), with the usual umask.
#[cfg(unix)]
#[test]
fn unsafe_modes_are_installed_reduced() {
    let w = World::new();
    let t = unsafe_modes();
    for (label, bytes) in [("gzip", gz(&t)), ("zstd", zst(&t))] {
        // Other bytes for demo 0.1.0 from the same index are refused: a fresh profile each.
        let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
        w.publish(&format!("modes.{label}"), &bytes);
        let out = with_umask(
            &w.sb,
            "022",
            &["install", "demo", "--profile", PROFILE, "--index", INDEX],
        );
        assert!(out.status.success(), "{label} via index: {out:?}");
        assert_reduced_modes(&w.sb, &format!("{label} via index"));
        w.sb.write(&format!("in/modes.{label}"), &bytes);
        let file = format!("in/modes.{label}");
        let out = with_umask(
            &w.sb,
            "022",
            &["install", "--profile", PROFILE, "--archive", &file],
        );
        assert!(out.status.success(), "{label} via --archive: {out:?}");
        assert_reduced_modes(&w.sb, &format!("{label} via --archive"));
    }
}

/// The same under `umask 000`: files and folders alike end up 0644 / 0755, never
/// group- or world-writable.
#[cfg(unix)]
#[test]
fn unsafe_modes_are_reduced_under_a_permissive_umask() {
    let w = World::new();
    // Other bytes for the demo 0.1.0 installed from this index are refused: a fresh profile.
    let _ = std::fs::remove_dir_all(w.sb.join(PROFILE));
    w.publish("modes.gzip", &gz(&unsafe_modes()));
    let out = with_umask(
        &w.sb,
        "000",
        &["install", "demo", "--profile", PROFILE, "--index", INDEX],
    );
    assert!(out.status.success(), "{out:?}");
    assert_reduced_modes(&w.sb, "umask 000");
}

// ---------------------------------------------------------------------------------------
// Indexes that lie.

#[test]
fn index_lies_are_refused() {
    let w = World::new();
    let archive = std::fs::read(w.sb.join("cat/hooks-demo-0.1.0.tar.gz")).unwrap();
    let size = archive.len() as u64;
    let version = |edit: &dyn Fn(&mut Value)| {
        let mut i = w.index.clone();
        edit(&mut i["recipes"][0]["versions"][0]);
        json_bytes(&i)
    };
    let whole = |edit: &dyn Fn(&mut Value)| {
        let mut i = w.index.clone();
        edit(&mut i);
        json_bytes(&i)
    };
    let honest = String::from_utf8(json_bytes(&w.index)).unwrap();
    let sha = w.index["recipes"][0]["versions"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let bigger = format!(
        "size mismatch for demo: the index says {} bytes, the download is {size}",
        size + 100
    );
    let cases: Vec<(&str, &str, Vec<u8>, &str)> = vec![
        (
            "wrong sha256",
            "demo",
            version(&|v| v["sha256"] = json!("0".repeat(64))),
            "checksum mismatch for demo: the index says sha256 0000",
        ),
        (
            "size bigger than the archive",
            "demo",
            version(&|v| v["size"] = json!(size + 100)),
            &bigger,
        ),
        (
            "size smaller than the archive",
            "demo",
            version(&|v| v["size"] = json!(size - 100)),
            "size mismatch for demo",
        ),
        (
            "size zero",
            "demo",
            version(&|v| v["size"] = json!(0)),
            "size mismatch for demo",
        ),
        (
            "a version the archive is not",
            "demo",
            whole(&|i| {
                i["recipes"][0]["latest"] = json!("0.2.0");
                i["recipes"][0]["versions"][0]["version"] = json!("0.2.0");
            }),
            "not under the top folder `demo-0.2.0/`",
        ),
        (
            "an id the archive is not",
            "other",
            whole(&|i| i["recipes"][0]["id"] = json!("other")),
            "not under the top folder `other-0.1.0/`",
        ),
        (
            "the sha256 of another archive",
            "demo",
            version(&|v| v["sha256"] = json!(sha256_hex(b"another archive"))),
            "checksum mismatch for demo",
        ),
        (
            "not JSON",
            "demo",
            b"{\"schema\": \"hooks.catalog.v1\",".to_vec(),
            "cat/hooks-index.json:1:31: error[json-syntax]",
        ),
        (
            "an empty file",
            "demo",
            Vec::new(),
            "cat/hooks-index.json:1:1: error[json-syntax]",
        ),
        (
            "a JSON array",
            "demo",
            b"[]".to_vec(),
            "error[document-not-object]",
        ),
        (
            "the wrong schema",
            "demo",
            whole(&|i| i["schema"] = json!("hooks.catalog.v9")),
            "error[schema-mismatch]",
        ),
        (
            "duplicate recipe ids",
            "demo",
            whole(&|i| {
                let r = i["recipes"][0].clone();
                i["recipes"].as_array_mut().unwrap().push(r);
            }),
            "recipe id `demo` is listed twice",
        ),
        (
            "a duplicate sha256 key, the last one lying",
            "demo",
            honest
                .replacen(
                    &format!("\"sha256\": \"{sha}\""),
                    &format!("\"sha256\": \"{sha}\", \"sha256\": \"{}\"", "1".repeat(64)),
                    1,
                )
                .into_bytes(),
            "key `sha256` appears twice",
        ),
        (
            "a duplicate sha256 key, the first one lying",
            "demo",
            honest
                .replacen(
                    &format!("\"sha256\": \"{sha}\""),
                    &format!("\"sha256\": \"{}\", \"sha256\": \"{sha}\"", "1".repeat(64)),
                    1,
                )
                .into_bytes(),
            "key `sha256` appears twice",
        ),
        (
            "an archive url with a scheme hookpack does not fetch",
            "demo",
            version(&|v| v["url"] = json!("ftp://example.com/x.tar.gz")),
            "error[url-invalid]",
        ),
    ];
    let mut failures = Vec::new();
    for (name, id, index, needle) in &cases {
        w.sb.write(INDEX, index);
        let mut cmd = w.sb.cmd();
        cmd.args(["install", id, "--profile", PROFILE, "--index", INDEX]);
        if let Err(e) = w.refused(cmd, 1, needle, &[]) {
            failures.push(format!("{name}: {e}"));
        }
    }
    // --archive with a --sha256 that is not the archive's, or not a sha256 at all.
    w.sb.write(INDEX, json_bytes(&w.index));
    let mut cmd = w.sb.cmd();
    cmd.args(["install", "--profile", PROFILE])
        .args(["--archive", "cat/hooks-demo-0.1.0.tar.gz"])
        .args(["--sha256", &"ab".repeat(32)]);
    if let Err(e) = w.refused(cmd, 1, "checksum mismatch", &[]) {
        failures.push(format!("--archive --sha256 wrong: {e}"));
    }
    let mut cmd = w.sb.cmd();
    cmd.args(["install", "--profile", PROFILE]).args([
        "--archive",
        "cat/hooks-demo-0.1.0.tar.gz",
        "--sha256",
        "xyz",
    ]);
    // A malformed flag value is a usage error.
    if let Err(e) = w.refused(cmd, 2, "xyz", &[]) {
        failures.push(format!("--archive --sha256 not hex: {e}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------
// HTTP faults, from a real server on 127.0.0.1.

const ARCHIVE_PATH: &str = "/hooks-demo-0.1.0.tar.gz";

/// Serves `cat/` with `respond` for faults; returns the server and the index URL.
fn serve(w: &World, respond: Box<Responder>) -> (HttpServer, String) {
    let server = HttpServer::serve(w.sb.join("cat"), respond);
    let url = server.url("hooks-index.json");
    (server, url)
}

/// Serves `index` as the catalog's `hooks-index.json` (the archives from the catalog).
fn serve_index(w: &World, index: &Value) -> (HttpServer, String) {
    let body = json_bytes(index);
    serve(
        w,
        Box::new(move |p| {
            (p == "/hooks-index.json").then(|| {
                http_response(
                    "200 OK",
                    &format!("Content-Length: {}\r\n", body.len()),
                    &body,
                )
            })
        }),
    )
}

fn install_from(w: &World, index: &str) -> Command {
    let mut c = w.sb.cmd();
    c.args(["install", "demo", "--profile", PROFILE, "--index", index]);
    c
}

fn http_response(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 {status}\r\n{headers}Connection: close\r\n\r\n").into_bytes();
    r.extend(body);
    r
}

#[test]
fn http_faults_are_refused() {
    let w = World::new();
    let archive = std::fs::read(w.sb.join("cat/hooks-demo-0.1.0.tar.gz")).unwrap();
    let len = archive.len();
    let mut flipped = archive.clone();
    flipped[len / 2] ^= 0xff;
    type Fault = (&'static str, &'static str, Vec<u8>, i32, &'static str);
    let faults: Vec<Fault> = vec![
        (
            "archive 404",
            ARCHIVE_PATH,
            http_response("404 Not Found", "Content-Length: 0\r\n", b""),
            1,
            "answered HTTP 404",
        ),
        (
            "index 404",
            "/hooks-index.json",
            http_response("404 Not Found", "Content-Length: 0\r\n", b""),
            1,
            "answered HTTP 404",
        ),
        (
            "body shorter than Content-Length",
            ARCHIVE_PATH,
            http_response(
                "200 OK",
                &format!("Content-Length: {len}\r\n"),
                &archive[..len / 2],
            ),
            3,
            "failed midway",
        ),
        (
            "Content-Length larger than the index's size",
            ARCHIVE_PATH,
            http_response(
                "200 OK",
                &format!("Content-Length: {}\r\n", len + 1000),
                &archive,
            ),
            1,
            "size mismatch for demo",
        ),
        (
            "body that is not the index's sha256",
            ARCHIVE_PATH,
            http_response("200 OK", &format!("Content-Length: {len}\r\n"), &flipped),
            1,
            "checksum mismatch for demo",
        ),
        (
            "an HTML page instead of the archive",
            ARCHIVE_PATH,
            http_response("200 OK", "Content-Length: 15\r\n", b"<html>hi</html>"),
            1,
            "mismatch for demo",
        ),
        (
            "body longer than the index's size, no Content-Length",
            ARCHIVE_PATH,
            http_response("200 OK", "", &[archive.as_slice(), &[0u8; 4096]].concat()),
            1,
            "size mismatch for demo",
        ),
        (
            "Content-Length of a terabyte",
            ARCHIVE_PATH,
            http_response("200 OK", "Content-Length: 1099511627776\r\n", &archive),
            1,
            "size mismatch for demo",
        ),
        (
            "redirect loop",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                &format!("Location: {ARCHIVE_PATH}\r\nContent-Length: 0\r\n"),
                b"",
            ),
            3,
            "redirect",
        ),
        (
            "redirect to a file:// URL",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: file:///etc/passwd\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "redirected to file:///etc/passwd, which hookpack does not follow",
        ),
        (
            "redirect to a data: URL",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: data:text/plain,hi\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "redirected to data:text/plain,hi, which hookpack does not follow",
        ),
        (
            "redirect to text that is no URL",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: http://[::1\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "redirected to `http://[::1`, which is not a URL",
        ),
        (
            "redirect to a file the server lacks",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: /nowhere.tar.gz\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "/nowhere.tar.gz (where http://127.0.0.1:",
        ),
        (
            "redirect to a file the server lacks, the URL asked for named too",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: /nowhere.tar.gz\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "/hooks-demo-0.1.0.tar.gz redirected) answered HTTP 404",
        ),
        (
            "redirect to an ftp:// URL",
            ARCHIVE_PATH,
            http_response(
                "302 Found",
                "Location: ftp://127.0.0.1/x.tar.gz\r\nContent-Length: 0\r\n",
                b"",
            ),
            1,
            "redirected to ftp://127.0.0.1/x.tar.gz, which hookpack does not follow",
        ),
        (
            "an index with a Content-Length over 64 MiB",
            "/hooks-index.json",
            http_response("200 OK", "Content-Length: 100000000\r\n", b"{}"),
            1,
            "is announced as 100000000 bytes (its Content-Length), more than the 67108864-byte limit",
        ),
        (
            "not HTTP at all",
            ARCHIVE_PATH,
            b"SSH-2.0-OpenSSH_9.6\r\n".to_vec(),
            3,
            "cannot fetch",
        ),
    ];
    let mut failures = Vec::new();
    for (name, path, response, code, needle) in faults {
        let (server, url) = serve(&w, Box::new(move |p| (p == path).then(|| response.clone())));
        if let Err(e) = w.refused(install_from(&w, &url), code, needle, &[]) {
            failures.push(format!("{name}: {e}"));
        }
        drop(server);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn http_500_is_retried_then_refused() {
    let w = World::new();
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    let (_server, url) = serve(
        &w,
        Box::new(move |p| {
            (p == ARCHIVE_PATH).then(|| {
                seen.fetch_add(1, Ordering::SeqCst);
                http_response("500 Internal Server Error", "Content-Length: 0\r\n", b"")
            })
        }),
    );
    w.refused(
        install_from(&w, &url),
        3,
        "answered HTTP 500 (tried 3 times)",
        &[],
    )
    .unwrap();
    let hits = hits.load(Ordering::SeqCst);
    assert!(
        (2..=5).contains(&hits),
        "{hits} attempts: retried, but a bounded number of times"
    );
}

/// Found by the network sweep: a served index naming an archive by a `file://` URL was
/// refused as a usage error (exit 2, "URL … points at a local file") without naming the
/// index; it is the index's fault (exit 1), as every other lie in it is. The file named is
/// the real archive, so following the URL would have installed it.
#[test]
fn a_served_index_naming_a_local_archive_is_refused_as_invalid() {
    let w = World::new();
    let file_url = format!(
        "file://{}",
        w.sb.join("cat/hooks-demo-0.1.0.tar.gz").display()
    );
    let mut index = w.index.clone();
    index["recipes"][0]["versions"][0]["url"] = json!(file_url);
    let (_server, url) = serve_index(&w, &index);
    let needle =
        format!("the index {url} names the archive of demo 0.1.0 by `{file_url}`, a local file");
    w.refused(install_from(&w, &url), 1, &needle, &[]).unwrap();
}

/// Found by the network sweep: a redirect sent the URL it came from to the next server as
/// a `Referer` header, so a token in a private index's query (`?token=…`) reached whatever
/// host the index's server redirected to. No `Referer` is sent.
#[test]
fn a_redirect_does_not_send_the_url_it_came_from() {
    let w = World::new();
    // The redirect's target: records each request, answers 404.
    let target = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let to = format!("http://{}/hooks-index.json", target.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in target.incoming().take(1) {
            let mut stream = stream.unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            record.lock().unwrap().extend(&buf[..n]);
            let _ = stream.write_all(&http_response(
                "404 Not Found",
                "Content-Length: 0\r\n",
                b"",
            ));
        }
    });
    let (server, _) = serve(
        &w,
        Box::new(move |p| {
            p.starts_with("/hooks-index.json?").then(|| {
                http_response(
                    "302 Found",
                    &format!("Location: {to}\r\nContent-Length: 0\r\n"),
                    b"",
                )
            })
        }),
    );
    let url = server.url("hooks-index.json?token=s3cret");
    w.refused(install_from(&w, &url), 1, "answered HTTP 404", &[])
        .unwrap();
    let request = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert!(request.starts_with("GET /hooks-index.json "), "{request}");
    assert!(
        !request.contains("s3cret") && !request.to_ascii_lowercase().contains("referer"),
        "{request}"
    );
}

/// A server that answers every request with `head`, then sends `body` one byte every
/// `drip`, then holds the connection open, silent, until dropped.
struct Staller {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Staller {
    fn new(head: Vec<u8>) -> Staller {
        Staller::dripping(head, Vec::new(), Duration::ZERO)
    }

    fn dripping(head: Vec<u8>, body: Vec<u8>, drip: Duration) -> Staller {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let head = head.clone();
                let body = body.clone();
                let flag = flag.clone();
                std::thread::spawn(move || {
                    stream.set_nonblocking(false).unwrap();
                    stream
                        .set_read_timeout(Some(Duration::from_millis(500)))
                        .unwrap();
                    let mut buf = [0u8; 4096];
                    let _ = stream.read(&mut buf);
                    let _ = stream.write_all(&head);
                    let _ = stream.flush();
                    for b in &body {
                        if flag.load(Ordering::Relaxed) || stream.write_all(&[*b]).is_err() {
                            return;
                        }
                        let _ = stream.flush();
                        std::thread::sleep(drip);
                    }
                    let until = Instant::now() + Duration::from_secs(30);
                    while !flag.load(Ordering::Relaxed) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                });
            }
        });
        Staller {
            addr,
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Staller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The index on disk points at a server that stalls; `HOOKPACK_HTTP_TIMEOUT` bounds the
/// wait.
fn stalled_install(head: impl FnOnce(usize) -> Vec<u8>, needle: &str) {
    let w = World::new();
    let len = std::fs::read(w.sb.join("cat/hooks-demo-0.1.0.tar.gz"))
        .unwrap()
        .len();
    slow_install(
        &w,
        Staller::new(head(len)),
        &[("HOOKPACK_HTTP_TIMEOUT", "0.5")],
        needle,
    );
}

/// Installs demo from `server`; the install must fail with exit 3 and `needle`, quickly.
fn slow_install(w: &World, server: Staller, env: &[(&str, &str)], needle: &str) {
    let url = format!("http://{}/hooks-demo-0.1.0.tar.gz", server.addr);
    let mut index = w.index.clone();
    index["recipes"][0]["versions"][0]["url"] = json!(url);
    w.sb.write(INDEX, json_bytes(&index));
    let mut cmd = w.install();
    cmd.envs(env.iter().copied());
    let start = Instant::now();
    w.refused(cmd, 3, needle, &[]).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn http_body_that_stalls_times_out() {
    let head = |len| {
        let mut h = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").into_bytes();
        h.extend([0x1f, 0x8b, 8, 0]);
        h
    };
    stalled_install(head, "failed midway");
}

#[test]
fn http_server_that_never_answers_times_out() {
    // With the setting that waits longer (found by the hostile-network sweep: none was
    // named, where the stall and trickle errors name it).
    stalled_install(
        |_| Vec::new(),
        "the server did not answer in time (HOOKPACK_HTTP_TIMEOUT=SECONDS waits longer)",
    );
}

/// A server that sends the archive a byte every 50 ms never leaves the connection silent
/// for the read timeout; the speed floor (1 KiB per read-timeout window) stops it.
#[test]
fn http_body_that_trickles_is_cut_off_by_the_speed_floor() {
    let w = World::new();
    let body = std::fs::read(w.sb.join("cat/hooks-demo-0.1.0.tar.gz")).unwrap();
    assert!(body.len() > 100, "the archive must outlast a few windows");
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
    let server = Staller::dripping(head.into_bytes(), body, Duration::from_millis(50));
    slow_install(
        &w,
        server,
        &[("HOOKPACK_HTTP_TIMEOUT", "0.5")],
        "under the floor of 1024 bytes per 0.5 s",
    );
}

/// With a generous read timeout, so the floor is checked only after 5 s, the overall
/// deadline stops the same trickle after 1 s.
#[test]
fn http_body_that_trickles_is_cut_off_by_the_deadline() {
    let w = World::new();
    let body = std::fs::read(w.sb.join("cat/hooks-demo-0.1.0.tar.gz")).unwrap();
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
    let server = Staller::dripping(head.into_bytes(), body, Duration::from_millis(50));
    slow_install(
        &w,
        server,
        &[
            ("HOOKPACK_HTTP_TIMEOUT", "5"),
            ("HOOKPACK_HTTP_DEADLINE", "1"),
        ],
        "took longer than 1 s",
    );
}

// ---------------------------------------------------------------------------------------
// hooks.json that hookpack must not rewrite.

#[test]
fn hooks_json_faults_are_refused_for_install_and_remove() {
    let w = World::new();
    let cases: Vec<(&str, &[u8], &str)> = vec![
        ("malformed JSON", b"{\"hooks\": {", "it is not valid JSON"),
        (
            "trailing garbage",
            b"{\"hooks\": {}} {\"hooks\": {}}",
            "it is not valid JSON",
        ),
        (
            "duplicate keys",
            b"{\"hooks\": {\"Stop\": []}, \"hooks\": {}}",
            "key `hooks` appears twice",
        ),
        (
            "duplicate event keys",
            b"{\"hooks\": {\"Stop\": [], \"Stop\": []}}",
            "key `Stop` appears twice",
        ),
        (
            "`hooks` not an object",
            b"{\"hooks\": []}",
            "`hooks` is not an object",
        ),
        (
            "an event not an array",
            b"{\"hooks\": {\"PreToolUse\": {}}}",
            "the event is not an array of groups",
        ),
        (
            "a group without a hooks array",
            b"{\"hooks\": {\"Stop\": [{\"matcher\": \"*\"}]}}",
            "the group has no `hooks` array",
        ),
        (
            "a group that is a string",
            b"{\"hooks\": {\"Stop\": [\"x\"]}}",
            "the group is not an object",
        ),
        (
            "the document is an array",
            b"[]",
            "the document is not an object",
        ),
        (
            "not UTF-8",
            b"{\"hooks\": {}, \"x\": \"\xff\"}",
            "not valid JSON",
        ),
    ];
    let mut failures = Vec::new();
    for (name, body, needle) in &cases {
        w.sb.write("prof/hooks.json", body);
        if let Err(e) = w.refused(w.install(), 1, needle, &[]) {
            failures.push(format!("{name} [install]: {e}"));
        }
        let mut remove = w.sb.cmd();
        remove.args(["remove", "demo", "--profile", PROFILE]);
        if let Err(e) = w.refused(remove, 1, needle, &[]) {
            failures.push(format!("{name} [remove]: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Found by the hostile-input sweep: a `hooks.json` that is no object (`null`, `[]`) was
/// refused with "hooks.json has an unexpected shape at : the document is not an object",
/// an empty JSON pointer read as a place with no name.
#[test]
fn a_hooks_json_that_is_no_object_is_refused_without_an_empty_spot() {
    let w = World::new();
    for body in ["null", "[]", "\"hooks\""] {
        w.sb.write("prof/hooks.json", body);
        let o = w.install().output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{body}: {err}");
        assert!(
            err.contains("hooks.json has an unexpected shape: the document is not an object"),
            "{body}: {err}"
        );
    }
}

/// Found by a README walk-through: a shape install refuses was said "at /PreToolUse" alone,
/// where `list` gives the line and column. The refusal names the spot as `file:line:col`.
#[test]
fn a_hooks_json_shape_refused_is_located_by_line_and_column() {
    let w = World::new();
    w.sb.write("prof/hooks.json", "{\n  \"PreToolUse\": []}\n");
    let o = w.install().output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("prof/hooks.json:2:17\n")
            && err.contains("hooks.json has an unexpected shape at /PreToolUse: an event"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn hooks_json_that_is_a_symlink_or_a_folder_is_refused() {
    let w = World::new();
    let real = std::fs::read(w.sb.join("prof/hooks.json")).unwrap();
    w.sb.write("elsewhere/hooks.json", &real);
    std::fs::remove_file(w.sb.join("prof/hooks.json")).unwrap();
    std::os::unix::fs::symlink("../elsewhere/hooks.json", w.sb.join("prof/hooks.json")).unwrap();
    let mut remove = w.sb.cmd();
    remove.args(["remove", "demo", "--profile", PROFILE]);
    for cmd in [w.install(), remove] {
        w.refused(cmd, 1, "it is a symbolic link", &[]).unwrap();
    }
    assert_eq!(
        std::fs::read(w.sb.join("elsewhere/hooks.json")).unwrap(),
        real
    );

    std::fs::remove_file(w.sb.join("prof/hooks.json")).unwrap();
    std::fs::create_dir(w.sb.join("prof/hooks.json")).unwrap();
    w.sb.write("prof/hooks.json/keep", "x");
    w.refused(
        w.install(),
        1,
        "it is a folder, where hosts and hookpack read a file; move it away",
        &[],
    )
    .unwrap();

    // Found by a hostile sweep: a fifo was "not a regular file" (what, and what to do?),
    // and a link to itself was to be "replaced with the file itself", which is no file.
    std::fs::remove_dir_all(w.sb.join("prof/hooks.json")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(w.sb.join("prof/hooks.json"))
        .status()
        .unwrap();
    assert!(fifo.success());
    w.refused(
        w.install(),
        1,
        "it is a fifo (named pipe), where hosts",
        &[],
    )
    .unwrap();
    std::fs::remove_file(w.sb.join("prof/hooks.json")).unwrap();
    std::os::unix::fs::symlink("hooks.json", w.sb.join("prof/hooks.json")).unwrap();
    w.refused(
        w.install(),
        1,
        "it is a symbolic link into a loop of links (to hooks.json), so there is no file to \
         read; remove the link",
        &[],
    )
    .unwrap();
}

// ---------------------------------------------------------------------------------------
// Single cases kept apart, most of them bugs found by this module.

fn not_json_recipe() -> Payload {
    tar(Tar::default()
        .dir(&format!("{TOP}/"))
        .file(&format!("{TOP}/recipe.json"), b"{\"id\": \"demo\",")
        .file(&format!("{TOP}/README.md"), b"# test\n")
        .file(&format!("{TOP}/scripts/main.js"), b"process.exit(0);\n"))
}

#[test]
fn recipe_json_that_is_not_json_is_named_with_archive() {
    let w = World::new();
    let c = Case {
        archive_needle: Some("recipe.json is not JSON"),
        ..case(
            "recipe.json is not JSON",
            not_json_recipe(),
            "recipe.json is not JSON",
        )
    };
    let failures = w.try_case(&c);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_entry_under_a_file_is_refused_as_invalid() {
    run_table(vec![case(
        "a file, then an entry under it",
        tar(Tar::demo().file(&format!("{TOP}/README.md/x"), b"1")),
        "README.md",
    )]);
}

/// Bytes below 0x20 other than newline in `s`, as escapes.
fn raw_controls(s: &[u8]) -> Vec<String> {
    s.iter()
        .filter(|&&b| (b < 0x20 && b != b'\n') || b == 0x7f)
        .map(|b| format!("\\x{b:02x}"))
        .collect()
}

#[test]
fn control_characters_are_not_echoed_raw() {
    let w = World::new();
    // An OSC title change and a screen clear hidden in an entry name and in recipe.json's id.
    let name = format!("{TOP}/\u{1b}]0;pwned\u{7}\u{1b}[2Jx.js");
    let payloads = [
        gz(&Tar::demo().file(&name, b"1").end()),
        gz(&Tar::default().recipe(TOP, &manifest("demo\u{1b}[2J")).end()),
    ];
    let mut failures = Vec::new();
    for (i, bytes) in payloads.iter().enumerate() {
        w.publish("ctl.tar.gz", bytes);
        let before = state(w.sb.path());
        let out = w.install().output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(changes(&before, &state(w.sb.path())), Vec::<String>::new());
        let bad = raw_controls(&out.stderr);
        if !bad.is_empty() {
            failures.push(format!(
                "payload {i}: raw {bad:?} in stderr: {:?}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A pax `size` record overrides the header's size field (the tar crate honours it), so
/// the limit must be checked against the size the data actually has.
#[test]
fn a_pax_size_record_cannot_bypass_the_size_limit() {
    run_table(vec![case(
        "header says 0 bytes, pax says 300 MiB",
        Payload::Segs(bomb(0, Some(300 * MIB), 300 * MIB)),
        "the limit on unpacked size in bytes",
    )]);
}

/// Found by the network sweep: the tar crate reads a GNU long name or a pax header into
/// memory whole before it hands hookpack the entry it describes, so a 70 KB archive whose
/// long name claims 2 GiB of zeros took 5 GB of memory (18 s) before its path was refused.
/// What may come between two entries (their headers, long names, pax records) is capped at
/// 1 MiB, and the archive is refused before more is read.
#[test]
fn an_extension_header_of_300_mib_is_refused_before_it_is_read() {
    let start = Instant::now();
    let huge = |kind: u8| {
        let mut head = Tar::demo().open();
        head.extend(header(b"././@LongLink", kind, 0o644, 300 * MIB, b""));
        let tail = Tar::default().file(&format!("{TOP}/x"), b"").end();
        Payload::Segs(vec![
            Seg::Bytes(head),
            Seg::Zeros(300 * MIB),
            Seg::Bytes(tail),
        ])
    };
    run_table(vec![
        case(
            "a GNU long name of 300 MiB",
            huge(b'L'),
            "the limit on bytes of headers, long names and pax records before one entry (1048576)",
        ),
        case(
            "a GNU long link name of 300 MiB",
            huge(b'K'),
            "the limit on bytes of headers, long names and pax records before one entry (1048576)",
        ),
        case(
            "a pax header of 300 MiB",
            huge(b'x'),
            "the limit on bytes of headers, long names and pax records before one entry (1048576)",
        ),
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// Found by the network sweep: a zstd archive whose frame asks for a window larger than the
/// 128 MiB hookpack decodes with (`zstd --long=30`) was refused as "damaged or truncated:
/// Frame requires too much memory for decoding"; it is neither, and the message says what
/// the window is, the limit, and how to compress it.
#[test]
fn a_zstd_window_over_the_limit_is_said_to_be_one() {
    let mut big_window = zstd_segs(&[Seg::Bytes(Tar::demo().end())]);
    // Window descriptor: exponent 20, mantissa 0: 2^(10 + 20) bytes, 1 GiB.
    big_window[5] = 20 << 3;
    run_table(vec![case(
        "a 1 GiB zstd window",
        Payload::Raw(big_window),
        "its zstd window is 1073741824 bytes, more than the 134217728 hookpack decodes with; \
         compress it with a window of 128 MiB at most (`zstd --long=27`, or `hookpack pack`)",
    )]);
}

/// Zero blocks after the end-of-archive marker are unpacked bytes too: 300 MiB of them must
/// not be inflated without bound (a real archive has at most a record of padding).
#[test]
fn zero_padding_after_the_end_marker_is_bounded() {
    let start = Instant::now();
    run_table(vec![case(
        "300 MiB of zeros after the end marker",
        Payload::Segs(vec![Seg::Bytes(Tar::demo().end()), Seg::Zeros(300 * MIB)]),
        "padding",
    )]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// An archive is checked whole, hidden folders included: `node_modules` in `.x/` was
/// installed once pack stopped looking at hidden entries (cba6c14), though an archive
/// holding `node_modules` anywhere is refused.
#[test]
fn node_modules_in_a_hidden_folder_of_an_archive_is_refused() {
    let w = World::new();
    let before = sandbox_state(&w.sb.join(PROFILE));
    let bytes = gz(&Tar::demo()
        .dir(&format!("{TOP}/.x/"))
        .dir(&format!("{TOP}/.x/node_modules/"))
        .file(&format!("{TOP}/.x/node_modules/y.js"), b"x\n")
        .end());
    w.sb.write("in/hidden-node-modules.tar.gz", &bytes);
    let out = w
        .install_archive("in/hidden-node-modules.tar.gz")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(".x/node_modules: error[node-modules]"),
        "{err}"
    );
    assert_eq!(sandbox_state(&w.sb.join(PROFILE)), before);
}

/// An index whose strings run to megabytes (a version, a sha256, `updated_at` of 1 MB each)
/// had each quoted whole in its error, so a hostile index printed megabytes per line and
/// buried the fix at the end (found by the hostile-server sweep). A message over 4,096
/// characters keeps its start and end, with the count of what is left out between.
#[test]
fn an_index_with_huge_strings_gets_short_messages() {
    let w = World::new();
    let huge = "9".repeat(1 << 20);
    let spots = [
        "/recipes/0/versions/0/version",
        "/recipes/0/versions/0/sha256",
        "/updated_at",
    ];
    let mut failures = Vec::new();
    for name in spots {
        let mut index = w.index.clone();
        *index.pointer_mut(name).unwrap() = json!(huge);
        w.sb.write(INDEX, json_bytes(&index));
        let install = || {
            let mut cmd = w.sb.cmd();
            cmd.args(["install", "demo", "--profile", PROFILE, "--index", INDEX]);
            cmd
        };
        if let Err(e) = w.refused(install(), 1, "characters left out", &[]) {
            failures.push(format!("{name}: {e}"));
        }
        let stderr = install().output().unwrap().stderr;
        if stderr.len() > 16 * 1024 {
            failures.push(format!("{name}: {} bytes on stderr", stderr.len()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An index naming an archive by a URL longer than an HTTP request can carry (over 64 KiB)
/// was reported as a network failure (exit 3, "builder error", "Parsed Url is not a valid
/// Uri") with the whole URL on one line (found by the hostile-server sweep). It is the
/// index's fault: exit 1, saying why, with the URL shortened.
#[test]
fn an_archive_url_too_long_to_request_is_the_index_fault() {
    let w = World::new();
    let mut index = w.index.clone();
    index["recipes"][0]["versions"][0]["url"] = json!(format!("{}.tar.gz", "a".repeat(70_000)));
    let (_server, url) = serve_index(&w, &index);
    w.refused(install_from(&w, &url), 1, "too long", &[])
        .unwrap();
    let stderr = install_from(&w, &url).output().unwrap().stderr;
    assert!(stderr.len() < 16 * 1024, "{} bytes on stderr", stderr.len());
}

/// Found by the hostile-publisher sweep: `catalog verify` said `ok` of an archive whose
/// tree `install` refuses (the script a handler runs missing, a `node_modules` folder),
/// since it validated the archive's `recipe.json` but never the files beside it, so a
/// catalog that passed verification still failed every install of that version. Each is
/// reported as install reports it, named inside the archive, and fails the archive; and
/// neither verify nor install names the temporary folder it was checked in.
#[test]
fn catalog_verify_refuses_the_trees_install_refuses() {
    let w = World::new();
    let no_script = Tar::default()
        .dir(&format!("{TOP}/"))
        .file(&format!("{TOP}/README.md"), b"# test\n")
        .file(
            &format!("{TOP}/recipe.json"),
            &json_bytes(&manifest("demo")),
        );
    let node_modules = Tar::demo()
        .dir(&format!("{TOP}/node_modules/"))
        .file(&format!("{TOP}/node_modules/y.js"), b"x\n");
    for (tree, code, file) in [
        (no_script, "script-missing", "recipe.json"),
        (node_modules, "node-modules", "node_modules"),
    ] {
        let name = format!("{code}.tar.gz");
        w.publish(&name, &gz(&tree.end()));
        let o =
            w.sb.cmd()
                .args(["catalog", "verify", "--format", "json", INDEX])
                .output()
                .unwrap();
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(1), "{report:#}");
        assert_eq!(report["archives"][0]["ok"], false, "{report:#}");
        let found = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == code)
            .unwrap_or_else(|| panic!("no {code}: {report:#}"));
        assert_eq!(found["severity"], "error", "{found:#}");
        assert!(
            found["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("cat/{name}!{TOP}/{file}")),
            "{found:#}"
        );
        let tmp = std::env::temp_dir().display().to_string();
        assert!(
            !found["message"].as_str().unwrap().contains(&tmp),
            "{found:#}"
        );
        // install says the same, without naming its staging folder.
        let o = w.install().output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("error[{code}]")), "{err}");
        assert!(!err.contains(".hookpack-staging"), "{err}");
    }
}

/// Found by the hostile-publisher sweep: an index giving an archive 300 MiB, past the
/// 256 MiB hookpack downloads, had install read 256 MiB of it and then say "the index says
/// 268435456 bytes, the download is larger" and that the archive "holds other bytes than
/// the index says", and verify that the archive "is larger than the index's size of
/// 314572800 bytes", though archive and index agreed: neither is what is wrong. Both now
/// say the index's size is past the limit, before anything is fetched.
#[test]
fn an_archive_past_the_download_limit_is_said_to_be_so() {
    let w = World::new();
    let size = 300 * MIB;
    // No such file: were it fetched at all, the error would be that it is missing. (This
    // test timed the run instead, which failed on a loaded machine.)
    let mut index = w.index.clone();
    let v = &mut index["recipes"][0]["versions"][0];
    v["url"] = json!("big.tar.gz");
    v["size"] = json!(size);
    w.sb.write(INDEX, json_bytes(&index));
    w.refused(
        w.install(),
        1,
        "the index gives it as 314572800 bytes, more than the 268435456 bytes (256 MiB) hookpack downloads",
        &[],
    )
    .unwrap();
    let o =
        w.sb.cmd()
            .args(["catalog", "verify", "--format", "json", INDEX])
            .output()
            .unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(1), "{report:#}");
    let found = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "archive-too-large")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(found["pointer"], "/recipes/0/versions/0/size", "{found:#}");
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .starts_with("the index says 314572800 bytes, more than the 268435456 bytes (256 MiB)"),
        "{found:#}"
    );
    // The missing file was never looked for: its size is the only problem found with it.
    let about_it = (report["diagnostics"].as_array().unwrap().iter())
        .filter(|d| {
            d["pointer"]
                .as_str()
                .is_some_and(|p| p.starts_with("/recipes/0/versions/0"))
        })
        .count();
    assert_eq!(about_it, 1, "{report:#}");
}
