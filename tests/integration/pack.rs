//! `hookpack pack`: byte-for-byte reproducible archives, refusals that leave OUT untouched,
//! immutable versions, `--only`, `--check`, and the reference packer's own test cases.

use crate::common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `dir` with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return out;
    }
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() {
            out.insert(
                e.path().strip_prefix(dir).unwrap().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
    out
}

/// What a pack of `alpha` alone writes.
pub const PACKED_ALPHA: [&str; 3] = ["SHA256SUMS", "hooks-alpha-0.1.0.tar.gz", "hooks-index.json"];

/// The files of `dir` by name, for a comparison that reads.
pub fn names_in(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

fn pack(sb: &Sandbox, recipes: &str, out: &str, extra: &[&str]) -> std::process::Output {
    sb.cmd()
        .args([
            "pack",
            "--recipes-dir",
            recipes,
            "--out-dir",
            out,
            "--updated-at",
            "2026-11-29T00:00:00Z",
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that `o` printed `text` on stderr, showing all it printed if not.
fn stderr_says(o: &std::process::Output, text: &str) {
    assert!(stderr(o).contains(text), "{}", stderr(o));
}

/// Two assembled recipes with a nested folder and an executable file.
pub fn two_recipes(sb: &Sandbox, root: &str) {
    for id in ["alpha", "beta"] {
        write_recipe(sb, &format!("{root}/{id}"), &manifest(id));
        sb.write(
            &format!("{root}/{id}/data/rules.json"),
            format!("{{\"id\": \"{id}\"}}\n"),
        );
        let tool = sb.write(
            &format!("{root}/{id}/scripts/tool.sh"),
            "#!/bin/sh\necho hi\n",
        );
        set_mode(&tool, 0o755);
    }
}

fn set_mode(p: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[test]
fn same_tree_same_bytes_after_touch_chmod_copy_and_umask() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out1", &[]).status.success());
    let first = snapshot(&sb.join("out1"));
    assert_eq!(first.len(), 4, "{:?}", first.keys());

    // touch, chmod g+w, copy elsewhere (new inodes, new walk order), another umask.
    let status = std::process::Command::new("sh")
        .current_dir(sb.path())
        .args(["-c", "cp -r src copy && find copy -exec touch -d '2001-02-03 04:05' {} + && chmod -R g+w copy"])
        .status()
        .unwrap();
    assert!(status.success());
    let o = sb
        .cmd()
        .args([
            "pack",
            "--recipes-dir",
            "copy",
            "--out-dir",
            "out2",
            "--updated-at",
            "2026-11-29T00:00:00Z",
            "--jobs",
            "1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(first, snapshot(&sb.join("out2")));

    // Under umask 077 the output is still readable by others.
    let o = std::process::Command::new("sh")
        .current_dir(sb.path())
        .arg("-c")
        .arg(format!("umask 077 && {} pack --recipes-dir src --out-dir out3 --updated-at 2026-11-29T00:00:00Z", assert_cmd::cargo::cargo_bin("hookpack").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(first, snapshot(&sb.join("out3")));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |file: &str| {
            std::fs::metadata(sb.join("out3").join(file))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        for file in ["hooks-alpha-0.1.0.tar.gz", "hooks-index.json", "SHA256SUMS"] {
            assert_eq!(mode(file), 0o644, "{file}");
        }
        // An index and SHA256SUMS the maintainer made private stay so when pack rewrites
        // them.
        for file in ["hooks-index.json", "SHA256SUMS"] {
            let p = sb.join("out3").join(file);
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        write_recipe(&sb, "src/gamma", &manifest("gamma"));
        ok(&pack(&sb, "src", "out3", &[]));
        for file in ["hooks-index.json", "SHA256SUMS"] {
            assert_eq!(mode(file), 0o600, "{file}");
        }
        assert_eq!(mode("hooks-gamma-0.1.0.tar.gz"), 0o644);
    }
}

#[test]
fn archive_layout_is_normalised() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let bytes = std::fs::read(sb.join("out/hooks-alpha-0.1.0.tar.gz")).unwrap();
    // gzip header: no mtime (bytes 4..8), no name flag, OS 255.
    assert_eq!(&bytes[..4], &[0x1f, 0x8b, 8, 0]);
    assert_eq!(&bytes[4..8], &[0, 0, 0, 0]);
    assert_eq!(bytes[9], 255);
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    let mut names = Vec::new();
    for e in ar.entries().unwrap() {
        let e = e.unwrap();
        let h = e.header();
        names.push((e.path().unwrap().display().to_string(), h.mode().unwrap()));
        assert_eq!(
            (h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()),
            (0, 0, 0)
        );
        assert_eq!(h.username().unwrap(), Some(""));
        assert_eq!(h.groupname().unwrap(), Some(""));
    }
    let expected = [
        ("alpha-0.1.0/", 0o755),
        ("alpha-0.1.0/README.md", 0o644),
        ("alpha-0.1.0/data/", 0o755),
        ("alpha-0.1.0/data/rules.json", 0o644),
        ("alpha-0.1.0/recipe.json", 0o644),
        ("alpha-0.1.0/scripts/", 0o755),
        ("alpha-0.1.0/scripts/main.js", 0o644),
        ("alpha-0.1.0/scripts/tool.sh", 0o755),
    ];
    let got: Vec<(&str, u32)> = names.iter().map(|(n, m)| (n.as_str(), *m)).collect();
    assert_eq!(got, expected);
}

/// Packs `src` into `out` with `SOURCE_DATE_EPOCH` set to `value`.
fn pack_at_epoch(sb: &Sandbox, value: &str) -> std::process::Output {
    sb.cmd()
        .env("SOURCE_DATE_EPOCH", value)
        .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
        .output()
        .unwrap()
}

#[test]
fn source_date_epoch_sets_the_mtime() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let o = pack_at_epoch(&sb, "1700000000");
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(sb.join("out/hooks-alpha-0.1.0.tar.gz")).unwrap();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    for e in ar.entries().unwrap() {
        assert_eq!(e.unwrap().header().mtime().unwrap(), 1_700_000_000);
    }
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("out/hooks-index.json")).unwrap()).unwrap();
    assert_eq!(index["updated_at"], "2023-11-14T22:13:20Z");
}

#[test]
fn a_source_date_epoch_that_is_no_time_is_a_usage_error_named_as_such() {
    // Found by the maintainer-side sweep: `SOURCE_DATE_EPOCH=abc` was called "not an RFC
    // 3339 time" (it takes seconds), and one past year 9999 failed as an invalid
    // `hooks-index.json` at line:col, exit 1, as if OUT's index were damaged.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    for value in ["abc", "-5", "1.5", "253402300800", "99999999999999999999"] {
        let o = pack_at_epoch(&sb, value);
        assert_eq!(o.status.code(), Some(2), "{value}: {}", stderr(&o));
        stderr_says(&o, &format!("SOURCE_DATE_EPOCH `{value}` is invalid"));
        stderr_says(&o, "seconds since 1970-01-01T00:00:00Z");
        assert!(!stderr(&o).contains("RFC 3339"), "{}", stderr(&o));
        assert!(!sb.join("out").exists());
    }
    // The last second of year 9999 is still a time an index can hold.
    let o = pack_at_epoch(&sb, "253402300799");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read_json(&sb.join("out/hooks-index.json"))["updated_at"],
        "9999-12-31T23:59:59Z"
    );
}

/// Runs `pack` or `assemble` (`verb`) from `recipes` into `out`.
fn build(sb: &Sandbox, verb: &str, recipes: &str, out: &str) -> std::process::Output {
    sb.cmd()
        .args([verb, "--recipes-dir", recipes, "--out-dir", out])
        .output()
        .unwrap()
}

#[test]
fn a_recipe_folder_given_as_recipes_dir_is_named_as_such() {
    // Found by the maintainer-side sweep: `pack --recipes-dir src/alpha` (one recipe, not a
    // folder of them) said its `data/` and `scripts/` folders had no recipe.json and should
    // be moved out of the recipe; assemble said the same of `src/` and `tests/`.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    for verb in ["pack", "assemble"] {
        let o = build(&sb, verb, "src/alpha", "out");
        assert_eq!(o.status.code(), Some(2), "{verb}: {}", stderr(&o));
        stderr_says(&o, "src/alpha is a recipe folder");
        stderr_says(&o, "--recipes-dir src --only alpha");
        assert!(
            !stderr(&o).contains("recipe-manifest-missing"),
            "{}",
            stderr(&o)
        );
        assert!(!sb.join("out").exists(), "{verb}");
    }
}

#[test]
fn the_flags_a_recipe_folder_given_as_recipes_dir_is_told_to_use_work_beside_other_folders() {
    // `--recipes-dir PARENT --only ID`, the way the refusal names, failed where PARENT also
    // holds folders that are not recipes (a lone recipe made with `hookpack new` in a
    // project folder): each was an error, though `--only` names the one to work on.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    sb.write("src/notes/todo.txt", "x\n");
    for verb in ["pack", "assemble"] {
        let o = build(&sb, verb, "src/alpha", "out");
        stderr_says(&o, "--recipes-dir src --only alpha");
        let o = sb
            .cmd()
            .args([verb, "--recipes-dir", "src", "--only", "alpha"])
            .args(["--out-dir", &format!("out-{verb}")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{verb}: {}", stderr(&o));
        // Without --only, a folder that is not a recipe is still an error.
        let o = build(&sb, verb, "src", "out");
        assert_eq!(o.status.code(), Some(1), "{verb}: {}", stderr(&o));
        stderr_says(&o, "folder `notes` has no recipe.json");
    }
    assert!(sb.join("out-assemble/alpha/recipe.json").is_file());
    assert!(!sb.join("out-assemble/beta").exists());
}

#[test]
fn a_finclaw_hooks_folder_given_as_recipes_dir_is_told_its_recipes_folder() {
    // `validate hooks` and `test hooks` take a FinClaw hooks folder (`hooks/recipes/<id>/`),
    // but `pack --recipes-dir hooks` said "folder `recipes` has no recipe.json; add one …
    // or move the folder out of hooks" (found by review). It names the flag to give.
    let sb = Sandbox::new();
    two_recipes(&sb, "hooks/recipes");
    sb.write("hooks/lib/util.js", "export const x = 1;\n");
    for verb in ["pack", "assemble"] {
        let out = format!("out-{verb}");
        let o = build(&sb, verb, "hooks", &out);
        assert_eq!(o.status.code(), Some(2), "{verb}: {}", stderr(&o));
        stderr_says(
            &o,
            "hooks is a FinClaw hooks folder (its recipes are in hooks/recipes): give `--recipes-dir hooks/recipes`",
        );
        assert!(!stderr(&o).contains("has no recipe.json"), "{}", stderr(&o));
        assert!(!sb.join(&out).exists(), "{verb}");
        ok(&build(&sb, verb, "hooks/recipes", &out));
    }
}

/// A recipe whose archive spans several deflate pieces (`hookpack::gzip::CHUNK`): text,
/// then pseudo-random bytes, then text again.
fn pinned_tree(sb: &Sandbox) {
    let m = manifest("pinned");
    sb.write(
        "src/pinned/recipe.json",
        serde_json::to_vec_pretty(&m).unwrap(),
    );
    sb.write("src/pinned/README.md", "# pinned\n".repeat(200));
    let mut text = String::new();
    for i in 0..5000u32 {
        text.push_str(&format!(
            "export const v{i} = {};\n",
            i.wrapping_mul(2_654_435_761) % 1000
        ));
    }
    sb.write("src/pinned/scripts/main.js", &text);
    let mut blob = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while blob.len() < 3 * hookpack::gzip::CHUNK / 2 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        blob.extend_from_slice(&x.to_le_bytes());
    }
    blob.extend(text.bytes().cycle().take(hookpack::gzip::CHUNK));
    sb.write("src/pinned/data/blob.bin", &blob);
    // Text that compresses to more than one output buffer per piece: zlib-rs's bytes
    // depend on how much output room each call gets, so this pins that too.
    let words = [
        "hook", "event", "payload", "matcher", "handler", "command", "timeout", "policy", "deny",
        "ask", "allow", "session", "turn", "review", "route", "secret",
    ];
    let mut prose = String::new();
    while prose.len() < hookpack::gzip::CHUNK + 300_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        prose.push_str(words[(x % 16) as usize]);
        prose.push(if x.is_multiple_of(11) { '\n' } else { ' ' });
    }
    sb.write("src/pinned/data/words.txt", &prose);
}

fn pinned_digest(sb: &Sandbox, out: &str, extra: &[&str]) -> String {
    let o = pack(sb, "src", out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    pinned_archive_digest(sb, out, extra)
}

/// The digest of the pinned recipe's archive in `out`, packed with the options `extra`.
fn pinned_archive_digest(sb: &Sandbox, out: &str, extra: &[&str]) -> String {
    let ext = if extra.contains(&"zstd") { "zst" } else { "gz" };
    let bytes = std::fs::read(sb.join(&format!("{out}/hooks-pinned-0.1.0.tar.{ext}"))).unwrap();
    hookpack::sha256::Sha256::of(&bytes).to_string()
}

/// Archive bytes are pinned: deflate backend, level, piece size, output buffer size and tar
/// layout. A change to any of them (or a backend whose output varied by machine) fails
/// here. Packing on one thread or several gives the same bytes.
#[test]
fn archive_bytes_are_pinned_across_machines() {
    let sb = Sandbox::new();
    pinned_tree(&sb);
    let digest = pinned_digest(&sb, "out", &[]);
    assert_eq!(
        digest, GOLDEN_GZIP,
        "archive bytes changed: a different deflate backend, level, piece size or tar layout"
    );
    assert_eq!(pinned_digest(&sb, "out1", &["--jobs", "1"]), GOLDEN_GZIP);
    assert_eq!(pinned_digest(&sb, "out3", &["--jobs", "3"]), GOLDEN_GZIP);
    // zstd: level, parameters (sized to the archive, hash table capped) and library.
    for jobs in ["1", "3"] {
        let out = format!("zst{jobs}");
        let digest = pinned_digest(&sb, &out, &["--compression", "zstd", "--jobs", jobs]);
        assert_eq!(
            digest, GOLDEN_ZSTD,
            "archive bytes changed: a different zstd version, level or parameters"
        );
    }
}

const GOLDEN_GZIP: &str = "f863e234e45aac64b787355558e62838a38700c21351b0fb32e3a9700d013db2";
const GOLDEN_ZSTD_SMALL: &str = "4b0b1bb23d5769604fe61f6c942aaabfadd106d7143bf1729c4762599ee1b8d4";
const GOLDEN_ZSTD: &str = "145925dbac4e40ecf6ee21387a9cc60a9e346b5ec8f5d57bb158c7c800d3177e";

/// The same binary on CPUs with and without the vector extensions a deflate backend might
/// dispatch on (SSE4.2, AVX2, BMI2, PCLMULQDQ), emulated by QEMU's user mode, writes the
/// same bytes as on this machine's CPU.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn archive_bytes_do_not_depend_on_the_cpu() {
    let qemu = ["/usr/bin/qemu-x86_64", "/usr/local/bin/qemu-x86_64"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`qemu-x86_64` is not installed, and this test runs hookpack on emulated CPUs: \
                 install it with `apt-get install -y qemu-user` (.ci/run does this on CI)"
            )
        });
    let sb = Sandbox::new();
    pinned_tree(&sb);
    let native = pinned_digest(&sb, "native", &[]);
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    let native_zstd = pinned_digest(&sb, "native-zst", &["--compression", "zstd"]);
    // qemu64: SSE2/SSE3 only. max: everything QEMU emulates, AVX2 and BMI2 included.
    for cpu in ["qemu64", "max"] {
        for (extra, native) in [
            (&[][..], &native),
            (&["--compression", "zstd"], &native_zstd),
        ] {
            let out = format!("out-{cpu}-{}", extra.len());
            let o = std::process::Command::new(&qemu)
                .args(["-cpu", cpu])
                .arg(&bin)
                .args(["pack", "--recipes-dir", "src", "--out-dir", &out])
                .args(extra)
                .current_dir(sb.path())
                .env_remove("SOURCE_DATE_EPOCH")
                .output()
                .expect("run qemu-x86_64");
            assert!(o.status.success(), "{cpu}: {}", stderr(&o));
            assert_eq!(
                &pinned_archive_digest(&sb, &out, extra),
                native,
                "packing on an emulated `{cpu}` CPU gave other bytes than on this CPU ({extra:?})"
            );
        }
    }
}

/// Hidden files and folders (`.DS_Store`, `.git/`) and folders with no file to pack are
/// never packed, as assemble never ships them, so a working tree with them gives the bytes
/// a git checkout without them gives (they were packed, and `pack --check` of a fresh
/// checkout then failed).
#[test]
fn hidden_entries_and_empty_folders_are_not_packed() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "clean", &[]));
    sb.write("src/beta/.DS_Store", "finder");
    sb.write("src/beta/.git/HEAD", "ref: refs/heads/main\n");
    sb.write("src/beta/data/.hidden.json", "{}\n");
    std::fs::create_dir_all(sb.join("src/beta/empty/inner")).unwrap();
    // Nothing in a hidden folder is packed, so a link there is not in the way either.
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/passwd", sb.join("src/beta/.git/link")).unwrap();
    sb.write("src/beta/._main.js", "appledouble");
    let o = pack(&sb, "src", "worktree", &[]);
    ok(&o);
    assert_eq!(snapshot(&sb.join("clean")), snapshot(&sb.join("worktree")));
    // A hidden data file a handler may read is named in a warning; what version control,
    // file managers and editors leave is not.
    stderr_says(
        &o,
        "src/beta/data/.hidden.json: warning[hidden-not-packed]: hidden files and folders \
         are never packed, so this one is left out; if a handler reads it, rename it without \
         the leading dot",
    );
    assert_eq!(
        stderr(&o).matches("hidden-not-packed").count(),
        1,
        "{}",
        stderr(&o)
    );
    let (code, report) = validate_json(&sb, &["src/beta"]);
    assert_eq!(code, 0, "{report:#}");
    assert_finding(&report, "", "hidden-not-packed");
    std::fs::remove_file(sb.join("src/beta/data/.hidden.json")).unwrap();

    // A handler whose script is hidden would be packed without it: refused, naming it.
    let mut m = manifest("beta");
    m["version"] = json!("0.2.0");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("node .bin/main.js");
    sb.write("src/beta/.bin/main.js", "process.exit(0);\n");
    sb.write("src/beta/recipe.json", serde_json::to_vec(&m).unwrap());
    let o = pack(&sb, "src", "worktree", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        "src/beta/recipe.json: error[script-hidden]: script `.bin/main.js` (handler `gate`, \
         PreToolUse) is in a hidden file or folder, which is never packed; rename it",
    );
    assert_eq!(snapshot(&sb.join("clean")), snapshot(&sb.join("worktree")));
    // `validate` says the same.
    let (code, report) = validate_json(&sb, &["src/beta"]);
    assert_eq!(code, 1, "{report:#}");
    assert_finding(&report, "", "script-hidden");
}

/// `lib/` is the shared helpers' folder, so a `recipe.json` there is refused, as `hookpack
/// new lib` is: it was packed as recipe `lib` while its files were also copied into every
/// other recipe as their helpers.
#[test]
fn a_recipe_in_the_helpers_folder_is_refused() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    write_recipe(&sb, "src/lib", &manifest("lib"));
    let said = "src/lib: error[recipe-in-helpers]: `lib` is the folder of the shared \
                helpers, so it cannot be a recipe (it holds a recipe.json); move the recipe \
                to a folder of another name, with that name as its id";
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, said);
    assert!(!sb.join("out").exists());
    let (code, report) = validate_json(&sb, &["src"]);
    assert_eq!(code, 1, "{report:#}");
    assert_finding(&report, "", "recipe-in-helpers");
}

#[cfg(unix)]
#[test]
fn planted_faults_are_refused_and_out_is_untouched() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let before = snapshot(&sb.join("out"));
    let beta = sb.join("src/beta");
    type Step<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Step, Step)> = vec![
        (
            "symlink",
            Box::new(|| std::os::unix::fs::symlink("/etc/passwd", beta.join("link")).unwrap()),
            Box::new(|| std::fs::remove_file(beta.join("link")).unwrap()),
        ),
        (
            "fifo",
            Box::new(|| {
                assert!(std::process::Command::new("mkfifo")
                    .arg(beta.join("fifo"))
                    .status()
                    .unwrap()
                    .success())
            }),
            Box::new(|| std::fs::remove_file(beta.join("fifo")).unwrap()),
        ),
        (
            "node_modules",
            Box::new(|| {
                std::fs::create_dir_all(beta.join("scripts/node_modules/x")).unwrap();
                std::fs::write(beta.join("scripts/node_modules/x/i.js"), "x").unwrap();
            }),
            Box::new(|| std::fs::remove_dir_all(beta.join("scripts/node_modules")).unwrap()),
        ),
        // On a case-insensitive disk (macOS, Windows) node finds modules in it.
        (
            "Node_Modules",
            Box::new(|| {
                std::fs::create_dir_all(beta.join("scripts/Node_Modules/x")).unwrap();
                std::fs::write(beta.join("scripts/Node_Modules/x/i.js"), "x").unwrap();
            }),
            Box::new(|| std::fs::remove_dir_all(beta.join("scripts/Node_Modules")).unwrap()),
        ),
        (
            "hard link",
            Box::new(|| {
                std::fs::hard_link(beta.join("README.md"), beta.join("README2.md")).unwrap()
            }),
            Box::new(|| std::fs::remove_file(beta.join("README2.md")).unwrap()),
        ),
    ];
    for (what, plant, clean) in cases {
        plant();
        // Bump the version so the pack would otherwise write something new.
        let mut m = manifest("beta");
        m["version"] = json!("0.2.0");
        std::fs::write(beta.join("recipe.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        let o = pack(&sb, "src", "out", &[]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("src/beta"),
            "{what}: error must name the path: {err}"
        );
        assert_eq!(snapshot(&sb.join("out")), before, "{what}: OUT changed");
        clean();
        std::fs::write(
            beta.join("recipe.json"),
            serde_json::to_vec(&manifest("beta")).unwrap(),
        )
        .unwrap();
    }
    // Nothing was left beside OUT either.
    let leftovers: Vec<_> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".hookpack"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The run failed (exit 1) because `what` ("id version") is already published.
fn refused_as_published(o: &std::process::Output, what: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert!(
        stderr(o).contains(&format!("{what} is already published")),
        "{}",
        stderr(o)
    );
    // The message names the recipe.json to bump.
    let id = what.split(' ').next().unwrap_or_default();
    assert!(
        stderr(o).contains(&format!("{id}/recipe.json")),
        "{}",
        stderr(o)
    );
}

/// A version published by another hookpack (here: another compression; in general another
/// deflate backend, level or piece size) holds the same tar stream: re-packing keeps that
/// archive instead of refusing. Other contents under the same version are still refused.
#[test]
fn archives_compressed_otherwise_are_kept_when_their_contents_are_the_same() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let o = pack(&sb, "src", "out", &["--compression", "zstd"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = snapshot(&sb.join("out"));

    // Same sources, now gzip: both versions stay as published, nothing changes on disk.
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("unchanged alpha 0.1.0 hooks-alpha-0.1.0.tar.zst"),
        "{stdout}"
    );
    assert_eq!(snapshot(&sb.join("out")), before);
    let o = pack(&sb, "src", "out", &["--check"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // An archive in OUT that no longer has the indexed digest is not trusted, even with
    // the same contents (here: recompressed at another zstd level behind the index's back).
    let alpha = sb.join("out/hooks-alpha-0.1.0.tar.zst");
    let original = std::fs::read(&alpha).unwrap();
    let tar = zstd::stream::decode_all(original.as_slice()).unwrap();
    let recompressed = zstd::stream::encode_all(tar.as_slice(), 3).unwrap();
    assert_ne!(recompressed, original);
    std::fs::write(&alpha, recompressed).unwrap();
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "hooks-alpha-0.1.0.tar.zst has sha256 ");
    stderr_says(&o, ", not the one the index lists (");
    std::fs::write(&alpha, original).unwrap();
    assert_eq!(snapshot(&sb.join("out")), before);

    // Other contents under the same version: refused, as ever.
    sb.write("src/beta/data/rules.json", "{\"id\": \"changed\"}\n");
    refused_as_published(&pack(&sb, "src", "out", &[]), "beta 0.1.0");
    assert_eq!(snapshot(&sb.join("out")), before);
}

/// Found by a walkthrough: with a shared helper changed under every recipe, pack named
/// only the first recipe refused as published, so a maintainer learnt of the next one
/// pack after pack. Every one is named in one run now, `--check` and JSON alike.
#[test]
fn every_recipe_refused_as_published_is_named_in_one_run() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let before = snapshot(&sb.join("out"));
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    sb.write("src/beta/scripts/main.js", "process.exit(2);\n");
    for extra in [&[][..], &["--check"][..]] {
        let o = pack(&sb, "src", "out", extra);
        refused_as_published(&o, "alpha 0.1.0");
        let err = stderr(&o);
        let beta = err
            .lines()
            .find(|l| l.contains("beta 0.1.0 is already published"))
            .unwrap_or_else(|| panic!("{err}"));
        // At the `version`'s line and column (found by the publisher walk-through: the
        // file alone, and JSON `line` and `column` null).
        let (line, column) = version_place(&sb, "src/beta/recipe.json");
        assert!(
            beta.starts_with(&format!(
                "src/beta/recipe.json:{line}:{column}: error[republish]"
            )) && beta.contains("bump `version` in src/beta/recipe.json"),
            "{err}"
        );
        stderr_says(&o, "(and 1 more recipe is refused, listed above)");
        assert_eq!(snapshot(&sb.join("out")), before);
    }
    let o = pack(&sb, "src", "out", &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let e = &doc["error"];
    assert_eq!(e["kind"], "republish", "{doc:#}");
    assert_eq!(
        e["diagnostics"].as_array().map(Vec::len),
        Some(1),
        "{doc:#}"
    );
    assert_eq!(e["diagnostics"][0]["code"], "republish", "{doc:#}");
    assert_eq!(e["diagnostics"][0]["pointer"], "/version", "{doc:#}");
    let (line, column) = version_place(&sb, "src/beta/recipe.json");
    assert_eq!(
        (&e["diagnostics"][0]["line"], &e["diagnostics"][0]["column"]),
        (&json!(line), &json!(column)),
        "{doc:#}"
    );

    // Refusals of other kinds are gathered too: beta's published archive is gone from OUT
    // and its changed sources cannot give it back.
    std::fs::remove_file(sb.join("out/hooks-beta-0.1.0.tar.gz")).unwrap();
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &[]);
    refused_as_published(&o, "alpha 0.1.0");
    let err = stderr(&o);
    assert!(
        err.lines().any(|l| l.starts_with("src/beta/recipe.json:")
            && l.contains(": error[published-archive-lost]: beta 0.1.0: ")),
        "{err}"
    );
    stderr_says(&o, "(and 1 more recipe is refused, listed above)");
    assert_eq!(snapshot(&sb.join("out")), before);
}

#[test]
fn published_versions_are_immutable_and_kept() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let before = snapshot(&sb.join("out"));
    // Same version, other bytes: refused, nothing written.
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    refused_as_published(&pack(&sb, "src", "out", &[]), "alpha 0.1.0");
    assert_eq!(snapshot(&sb.join("out")), before);
    // A new version is added; the old one stays listed and on disk.
    let mut m = manifest("alpha");
    m["version"] = json!("0.2.0");
    m["min_cli"] = json!("0.13.1");
    sb.write("src/alpha/recipe.json", serde_json::to_vec(&m).unwrap());
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("out/hooks-index.json")).unwrap()).unwrap();
    let alpha = &index["recipes"][0];
    assert_eq!(alpha["latest"], "0.2.0");
    assert_eq!(alpha["min_cli"], "0.13.1");
    let versions: Vec<&str> = alpha["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["0.2.0", "0.1.0"]);
    assert!(sb.join("out/hooks-alpha-0.1.0.tar.gz").is_file());
    let sums = std::fs::read_to_string(sb.join("out/SHA256SUMS")).unwrap();
    assert!(
        sums.contains("  hooks-alpha-0.1.0.tar.gz\n")
            && sums.contains("  hooks-alpha-0.2.0.tar.gz\n")
            && sums.contains("  hooks-index.json\n")
    );
    sb.cmd()
        .args(["catalog", "verify", "out"])
        .assert()
        .success();
}

#[test]
fn only_leaves_other_entries_byte_identical() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let index_before = std::fs::read_to_string(sb.join("out/hooks-index.json")).unwrap();
    let beta_before =
        serde_json::from_str::<Value>(&index_before).unwrap()["recipes"][1].to_string();
    let mut m = manifest("alpha");
    m["version"] = json!("0.3.0");
    sb.write("src/alpha/recipe.json", serde_json::to_vec(&m).unwrap());
    // beta changed too, but --only alpha must not touch it.
    sb.write("src/beta/scripts/main.js", "changed();\n");
    let o = pack(&sb, "src", "out", &["--only", "alpha"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index_after = std::fs::read_to_string(sb.join("out/hooks-index.json")).unwrap();
    let after: Value = serde_json::from_str(&index_after).unwrap();
    assert_eq!(after["recipes"][1].to_string(), beta_before);
    // The beta block of the file is textually identical too.
    let block = |s: &str| s[s.find("\"id\": \"beta\"").unwrap()..].to_string();
    assert_eq!(block(&index_before), block(&index_after));
    assert_eq!(after["recipes"][0]["latest"], "0.3.0");
    let o = pack(&sb, "src", "out", &["--only", "gamma"]);
    assert_eq!(o.status.code(), Some(1));
    stderr_says(&o, "no recipe `gamma` in src; it holds alpha, beta");
    let o = pack(&sb, "src", "out", &["--only", "alpah"]);
    assert_eq!(o.status.code(), Some(1));
    stderr_says(&o, "no recipe `alpah` in src; did you mean `alpha`?");
}

#[test]
fn a_repack_under_another_source_date_epoch_says_it_may_be_the_cause() {
    // Found by review: the refusal said only "bump `version`", where the files had not
    // changed and SOURCE_DATE_EPOCH, which CI systems set, had (now or when published).
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let pack_with = |epoch: Option<&str>, out: &str| {
        let mut c = sb.cmd();
        c.env_remove("SOURCE_DATE_EPOCH");
        if let Some(e) = epoch {
            c.env("SOURCE_DATE_EPOCH", e);
        }
        c.args(["pack", "--recipes-dir", "src", "--out-dir", out])
            .output()
            .unwrap()
    };
    assert!(pack_with(None, "out").status.success());
    assert!(pack_with(Some("1800000000"), "out2").status.success());
    let before = (snapshot(&sb.join("out")), snapshot(&sb.join("out2")));
    for (epoch, out, says) in [
        (
            Some("1800000000"),
            "out",
            "only with mtime 0 where SOURCE_DATE_EPOCH=1800000000 gives them now: if the \
             recipe did not change, unset SOURCE_DATE_EPOCH instead",
        ),
        (
            None,
            "out2",
            "only with mtime 1800000000 where with SOURCE_DATE_EPOCH unset they get 0: if the \
             recipe did not change, pack with SOURCE_DATE_EPOCH=1800000000 instead",
        ),
    ] {
        let o = pack_with(epoch, out);
        refused_as_published(&o, "alpha 0.1.0");
        stderr_says(&o, "But the published archive holds these very files");
        stderr_says(&o, says);
    }
    // Files that did change get no such note, whatever the mtime; beta, unchanged but for
    // the mtime, is named in the same run with its note.
    sb.write("src/alpha/data/rules.json", "{\"changed\": true}\n");
    for (epoch, out) in [(Some("1800000000"), "out"), (None, "out")] {
        let o = pack_with(epoch, out);
        refused_as_published(&o, "alpha 0.1.0");
        let err = stderr(&o);
        let line = |what: &str| err.lines().find(|l| l.contains(what)).unwrap_or_default();
        assert!(!line("alpha 0.1.0 is").contains("very files"), "{err}");
        // Unset, as OUT was packed, beta gives its published bytes: not named at all.
        let beta = line("beta 0.1.0 is");
        match epoch {
            Some(_) => assert!(beta.contains("very files"), "{err}"),
            None => assert!(beta.is_empty(), "{err}"),
        }
    }
    assert_eq!(
        (snapshot(&sb.join("out")), snapshot(&sb.join("out2"))),
        before
    );
}

#[test]
fn check_reports_differences_and_writes_nothing() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let o = pack(&sb, "src", "out", &["--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(sb.join("out/hooks-beta-0.1.0.tar.gz")).unwrap();
    std::fs::write(sb.join("out/SHA256SUMS"), "tampered\n").unwrap();
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("missing   hooks-beta-0.1.0.tar.gz: expected sha256 ")
            && text.contains("not in OUT"),
        "{text}"
    );
    assert!(text.contains("differs   SHA256SUMS"), "{text}");
    assert_eq!(snapshot(&sb.join("out")), before);
}

#[test]
fn a_damaged_archive_in_out_is_repaired_from_the_sources() {
    // Found by review: pack said `unchanged` and kept damaged bytes, while `--check` said
    // they differ, so the two never agreed.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let good = snapshot(&sb.join("out"));
    let beta = sb.join("out/hooks-beta-0.1.0.tar.gz");
    let published = std::fs::read(&beta).unwrap();
    let said = |o: &std::process::Output, words: [&str; 3]| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.split_whitespace().take(3).eq(words))
    };
    for damage in [b"not gzip".to_vec(), [published.as_slice(), b"x"].concat()] {
        std::fs::write(&beta, &damage).unwrap();
        let o = pack(&sb, "src", "out", &["--check"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        // --check writes nothing, so it says what differs, not that it repaired it (found by
        // the maintainer-side sweep).
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("repaired"), "{text}");
        assert!(text.contains("differs   hooks-beta-0.1.0.tar.gz"), "{text}");
        let o = pack(&sb, "src", "out", &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(said(&o, ["repaired", "beta", "0.1.0"]), "{o:?}");
        assert!(said(&o, ["unchanged", "alpha", "0.1.0"]), "{o:?}");
        assert_eq!(snapshot(&sb.join("out")), good);
        let o = pack(&sb, "src", "out", &["--check"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // A missing one is put back the same way.
    std::fs::remove_file(&beta).unwrap();
    let o = pack(&sb, "src", "out", &[]);
    assert!(said(&o, ["repaired", "beta", "0.1.0"]), "{o:?}");
    assert_eq!(snapshot(&sb.join("out")), good);
    // One these settings cannot give back is not a reason to bump the version (found by
    // the second review): it says so, and nothing changes.
    std::fs::remove_file(&beta).unwrap();
    let lost = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &["--compression", "zstd"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        "beta 0.1.0: out/hooks-beta-0.1.0.tar.gz is missing, and packing the sources now \
         gives other bytes than the sha256 the index lists",
    );
    // Without the archive, a changed recipe and changed settings look alike: both fixes
    // are given (found by the third review).
    stderr_says(
        &o,
        "If the recipe changed since it was published, bump `version` in",
    );
    stderr_says(&o, "copy the published archive back");
    assert_eq!(snapshot(&sb.join("out")), lost);
    // Bumping alone leaves the index listing an archive OUT lacks: pack says so (fourth
    // review: it said nothing, and `catalog verify` failed).
    let manifest = std::fs::read_to_string(sb.join("src/beta/recipe.json")).unwrap();
    sb.write("src/beta/recipe.json", manifest.replace("0.1.0", "0.2.0"));
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr_says(
        &o,
        "warning[archive-missing]: the index lists `hooks-beta-0.1.0.tar.gz`",
    );
}

/// Writes `index` as pack writes an index (pretty, with a final newline) to `path`.
fn write_index(path: &Path, index: &Value) {
    let mut bytes = serde_json::to_vec_pretty(index).unwrap();
    bytes.push(b'\n');
    std::fs::write(path, bytes).unwrap();
}

/// An index `size` that is wrong for an archive OUT holds intact (its sha256 is the index's)
/// is set to the archive's size by pack, which warns, naming the index, the version and both
/// sizes, and reports the version `repaired`; the rest of the index (`updated_at` too), the
/// archive and SHA256SUMS stay as published, and `--check` reports the index as differing,
/// writing nothing. So does a kept version's; one whose bytes differ too is still refused.
/// (Pack said `unchanged` and kept the wrong size, so `catalog verify` failed for good.)
#[test]
fn a_wrong_size_in_the_index_is_set_from_the_intact_archive() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let good = snapshot(&sb.join("out"));
    let index_path = sb.join("out/hooks-index.json");
    let alpha = sb.join("out/hooks-alpha-0.1.0.tar.gz");
    let size = std::fs::metadata(&alpha).unwrap().len();
    let inode = std::fs::metadata(&alpha).unwrap().ino();
    let said = |o: &std::process::Output, words: [&str; 3]| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.split_whitespace().take(3).eq(words))
    };
    for wrong in [size + 7, size - 1, 0] {
        let mut index = read_json(&index_path);
        // Set apart from the time pack is given, to see that it stays.
        index["updated_at"] = json!("2026-01-01T00:00:00Z");
        index["recipes"][0]["versions"][0]["size"] = json!(wrong);
        write_index(&index_path, &index);
        let damaged = snapshot(&sb.join("out"));
        let o = pack(&sb, "src", "out", &["--check"]);
        assert_eq!(o.status.code(), Some(1), "{wrong}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("differs   hooks-index.json") && !text.contains("repaired"),
            "{wrong}: {text}"
        );
        assert_eq!(snapshot(&sb.join("out")), damaged, "{wrong}");
        let o = pack(&sb, "src", "out", &[]);
        assert!(o.status.success(), "{wrong}: {}", stderr(&o));
        assert!(said(&o, ["repaired", "alpha", "0.1.0"]), "{wrong}: {o:?}");
        assert!(said(&o, ["unchanged", "beta", "0.1.0"]), "{wrong}: {o:?}");
        stderr_says(
            &o,
            &format!(
                "out/hooks-index.json:16:19: warning[size-repaired]: alpha 0.1.0 was listed with size \
                 {wrong}, but its archive hooks-alpha-0.1.0.tar.gz has {size} bytes"
            ),
        );
        index["recipes"][0]["versions"][0]["size"] = json!(size);
        let mut expected = serde_json::to_vec_pretty(&index).unwrap();
        expected.push(b'\n');
        assert_eq!(
            String::from_utf8(std::fs::read(&index_path).unwrap()).unwrap(),
            String::from_utf8(expected).unwrap(),
            "{wrong}"
        );
        let now = snapshot(&sb.join("out"));
        for file in ["hooks-alpha-0.1.0.tar.gz", "hooks-beta-0.1.0.tar.gz"] {
            assert_eq!(now[file], good[file], "{wrong}: {file}");
        }
        assert_eq!(std::fs::metadata(&alpha).unwrap().ino(), inode, "{wrong}");
        ok(&pack(&sb, "src", "out", &["--check"]));
        ok(&sb
            .cmd()
            .args(["catalog", "verify", "out"])
            .output()
            .unwrap());
    }

    // A kept version (the recipe moved on to 0.2.0) is put right the same way.
    let manifest = std::fs::read_to_string(sb.join("src/beta/recipe.json")).unwrap();
    sb.write("src/beta/recipe.json", manifest.replace("0.1.0", "0.2.0"));
    ok(&pack(&sb, "src", "out", &[]));
    let good = snapshot(&sb.join("out"));
    let kept = sb.join("out/hooks-beta-0.1.0.tar.gz");
    let size = std::fs::metadata(&kept).unwrap().len();
    let mut index = read_json(&index_path);
    assert_eq!(index["recipes"][1]["versions"][1]["version"], "0.1.0");
    index["recipes"][1]["versions"][1]["size"] = json!(size + 1);
    write_index(&index_path, &index);
    beta_size_is_repaired(&sb, size + 1, size, &good);

    // With other bytes as well, the sha256 does not vouch for it: refused as before.
    write_index(&index_path, &index);
    std::fs::write(&kept, b"garbage\n").unwrap();
    let before = snapshot(&sb.join("out"));
    for extra in [&[][..], &["--check"][..]] {
        let o = pack(&sb, "src", "out", extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        stderr_says(&o, "out/hooks-beta-0.1.0.tar.gz");
        stderr_says(&o, "copy it back from where the catalog is served");
        assert_eq!(snapshot(&sb.join("out")), before, "{extra:?}");
    }
}

/// With OUT's index listing beta 0.1.0 at `listed` bytes while its intact archive has
/// `size`: `pack --check` reports a difference, `pack` sets the size saying so and leaves
/// OUT as `good`, and `catalog verify` then passes.
fn beta_size_is_repaired(sb: &Sandbox, listed: u64, size: u64, good: &BTreeMap<String, Vec<u8>>) {
    let o = pack(sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = pack(sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr_says(
        &o,
        &format!(
            "warning[size-repaired]: beta 0.1.0 was listed with size {listed}, but its \
             archive hooks-beta-0.1.0.tar.gz has {size} bytes"
        ),
    );
    assert_eq!(&snapshot(&sb.join("out")), good);
    ok(&sb
        .cmd()
        .args(["catalog", "verify", "out"])
        .output()
        .unwrap());
}

/// A wrong index `size` of a recipe whose sources are gone (retired, or packed from another
/// folder) is put right too, as `catalog verify`'s fix says: pack into the folder holding
/// the archive (only the recipes packed now were looked at, so verify failed for good).
#[test]
fn a_wrong_size_of_a_recipe_not_packed_now_is_set_from_its_archive() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    std::fs::remove_dir_all(sb.join("src/beta")).unwrap();
    let good = snapshot(&sb.join("out"));
    let index_path = sb.join("out/hooks-index.json");
    let size = std::fs::metadata(sb.join("out/hooks-beta-0.1.0.tar.gz"))
        .unwrap()
        .len();
    let mut index = read_json(&index_path);
    assert_eq!(index["recipes"][1]["id"], "beta");
    index["recipes"][1]["versions"][0]["size"] = json!(size + 3);
    write_index(&index_path, &index);
    let o = sb
        .cmd()
        .args(["catalog", "verify", "out"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        said.contains("`hookpack pack` into the catalog folder"),
        "{said}"
    );
    beta_size_is_repaired(&sb, size + 3, size, &good);
}

/// A kept archive with the size the index lists but other bytes is refused like one of
/// another size, naming the file and both digests: SHA256SUMS listed the index's digest for
/// it, and uploading the folder would have replaced the published bytes (found by a
/// maintainer-side sweep: pack said nothing).
#[test]
fn a_kept_archive_whose_bytes_differ_from_the_index_is_refused() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let manifest = std::fs::read_to_string(sb.join("src/beta/recipe.json")).unwrap();
    sb.write("src/beta/recipe.json", manifest.replace("0.1.0", "0.2.0"));
    let kept = sb.join("out/hooks-beta-0.1.0.tar.gz");
    let good = std::fs::read(&kept).unwrap();
    let expected = hookpack::sha256::Sha256::of(&good).to_string();
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    for damage in [bad, b"garbage\n".to_vec()] {
        std::fs::write(&kept, &damage).unwrap();
        let actual = hookpack::sha256::Sha256::of(&damage).to_string();
        let before = snapshot(&sb.join("out"));
        for extra in [&[][..], &["--check"][..]] {
            let o = pack(&sb, "src", "out", extra);
            assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
            stderr_says(&o, "out/hooks-beta-0.1.0.tar.gz");
            stderr_says(&o, &format!("the index lists sha256 {expected}"));
            stderr_says(&o, &format!("it has {actual}"));
            stderr_says(&o, "copy it back from where the catalog is served");
            assert_eq!(snapshot(&sb.join("out")), before, "{extra:?}");
        }
    }
    // Without it, the pack goes on and says the index lists an archive OUT lacks.
    std::fs::remove_file(&kept).unwrap();
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr_says(
        &o,
        "warning[archive-missing]: the index lists `hooks-beta-0.1.0.tar.gz`",
    );
    // Put back, it is listed in SHA256SUMS again.
    std::fs::write(&kept, &good).unwrap();
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sums = std::fs::read_to_string(sb.join("out/SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&format!("{expected}  hooks-beta-0.1.0.tar.gz\n")),
        "{sums}"
    );
}

/// A symbolic link in OUT where pack writes or vouches for a file (the index, SHA256SUMS,
/// an archive it builds or keeps) is refused, naming it, with the link and its target as
/// they were (found by a maintainer-side sweep: the index was read through the link, then
/// the link replaced with a file, leaving the catalog it pointed into behind).
#[cfg(unix)]
#[test]
fn a_link_in_out_is_refused_naming_it() {
    for (file, bump) in [
        ("hooks-index.json", false),
        ("SHA256SUMS", false),
        ("hooks-beta-0.1.0.tar.gz", false),
        ("hooks-beta-0.1.0.tar.gz", true),
    ] {
        let sb = Sandbox::new();
        two_recipes(&sb, "src");
        assert!(pack(&sb, "src", "out", &[]).status.success());
        if bump {
            let manifest = std::fs::read_to_string(sb.join("src/beta/recipe.json")).unwrap();
            sb.write("src/beta/recipe.json", manifest.replace("0.1.0", "0.2.0"));
        }
        std::fs::create_dir(sb.join("elsewhere")).unwrap();
        std::fs::rename(sb.join("out").join(file), sb.join("elsewhere").join(file)).unwrap();
        let link = sb.join("out").join(file);
        std::os::unix::fs::symlink(format!("../elsewhere/{file}"), &link).unwrap();
        let before = (snapshot(&sb.join("out")), snapshot(&sb.join("elsewhere")));
        for extra in [&[][..], &["--check"][..]] {
            let o = pack(&sb, "src", "out", extra);
            assert_eq!(o.status.code(), Some(1), "{file} {extra:?}: {}", stderr(&o));
            stderr_says(&o, &format!("refused out/{file}: is a symbolic link"));
            let after = (snapshot(&sb.join("out")), snapshot(&sb.join("elsewhere")));
            assert!(after == before, "{file} {extra:?}");
            let meta = std::fs::symlink_metadata(&link).unwrap();
            assert!(meta.file_type().is_symlink(), "{file} {extra:?}");
        }
    }
}

#[test]
fn updated_at_moves_only_when_the_entries_change_even_when_given() {
    // Found by review: `--updated-at` rewrote the index of unchanged sources (and said
    // "index unchanged"), and `--check --updated-at` failed on a current OUT.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let pack_at = |ts: &str, extra: &[&str]| {
        let o = sb
            .cmd()
            .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
            .args(["--updated-at", ts])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    pack_at("2026-01-01T00:00:00Z", &[]);
    let before = snapshot(&sb.join("out"));
    let o = pack_at("2026-03-03T00:00:00Z", &[]);
    stderr_says(&o, "(index unchanged)");
    assert_eq!(snapshot(&sb.join("out")), before);
    pack_at("2027-01-01T00:00:00Z", &["--check"]);
    // A new version takes the time given.
    write_recipe(&sb, "src/gamma", &manifest("gamma"));
    pack_at("2026-04-04T00:00:00Z", &[]);
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("out/hooks-index.json")).unwrap()).unwrap();
    assert_eq!(index["updated_at"], "2026-04-04T00:00:00Z");
}

/// Found by the maintainer-side sweep: `--updated-at` was written as typed, so one instant
/// given with an offset, in lower case or with a zero fraction made other index and
/// `SHA256SUMS` bytes. It is written in its UTC form; a time that leaves the years
/// 0000–9999 once in UTC is refused (exit 2), OUT untouched.
#[test]
fn updated_at_is_written_in_utc_whatever_form_it_is_given_in() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let pack_at = |out: &str, ts: &str| {
        sb.cmd()
            .args(["pack", "--recipes-dir", "src", "--out-dir", out])
            .args(["--updated-at", ts])
            .output()
            .unwrap()
    };
    ok(&pack_at("z", "2026-11-29T00:00:00Z"));
    let written = snapshot(&sb.join("z"));
    for (n, ts) in [
        "2026-11-29T01:00:00+01:00",
        "2026-11-28T19:00:00-05:00",
        "2026-11-29t00:00:00z",
        "2026-11-29T00:00:00.000Z",
    ]
    .into_iter()
    .enumerate()
    {
        let out = format!("o{n}");
        ok(&pack_at(&out, ts));
        assert_eq!(snapshot(&sb.join(&out)), written, "{ts}");
    }
    let o = pack_at("z", "0000-01-01T00:00:00+01:00");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    stderr_says(&o, "years 0000 to 9999");
    assert_eq!(snapshot(&sb.join("z")), written);
}

#[test]
fn zstd_archives_are_reproducible_and_verify() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "a", &["--compression", "zstd"])
        .status
        .success());
    assert!(
        pack(&sb, "src", "b", &["--compression", "zstd", "--jobs", "1"])
            .status
            .success()
    );
    assert_eq!(snapshot(&sb.join("a")), snapshot(&sb.join("b")));
    let bytes = std::fs::read(sb.join("a/hooks-alpha-0.1.0.tar.zst")).unwrap();
    assert_eq!(&bytes[..4], &[0x28, 0xb5, 0x2f, 0xfd]);
    // The encoder's tables are sized to the archive: a recipe of a few KB asks its
    // decoder for a small window, where level 10 alone would ask for 4 MiB.
    assert!(zstd_window(&bytes) <= 64 * 1024, "{}", zstd_window(&bytes));
    // Pinned like the bigger archive of `archive_bytes_are_pinned_across_machines`, which
    // takes the other path (level 10's general parameters, hash table capped).
    assert_eq!(
        hookpack::sha256::Sha256::of(&bytes).to_string(),
        GOLDEN_ZSTD_SMALL,
        "archive bytes changed: a different zstd version, level or parameters"
    );
    sb.cmd().args(["catalog", "verify", "a"]).assert().success();
}

/// The window a zstd frame asks its decoder for (RFC 8878, 3.1.1.1.2).
fn zstd_window(frame: &[u8]) -> u64 {
    let descriptor = frame[4];
    assert_eq!(
        descriptor & 0x20,
        0,
        "a single-segment frame has no window size"
    );
    let window = frame[5];
    let base = 1u64 << (10 + (window >> 3));
    base + base / 8 * u64::from(window & 7)
}

#[test]
fn asset_base_url_makes_absolute_urls() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(
        &sb,
        "src",
        "out",
        &["--asset-base-url", "https://example.test/catalog/"]
    )
    .status
    .success());
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("out/hooks-index.json")).unwrap()).unwrap();
    assert_eq!(
        index["recipes"][0]["versions"][0]["url"],
        "https://example.test/catalog/hooks-alpha-0.1.0.tar.gz"
    );
    for bad in [
        "ftp://x",
        "https://",
        "https://h/c?x=1",
        "https://h/c#f",
        "https://u:p@h/c",
        "//host/c",
        "https://[::1",
        // A URL parser reads the host `x` in these, but they are written into the index as
        // given, where other readers see no host (found by a maintainer-side sweep).
        "https:///x",
        "https:x",
        "https:/x",
        "https:\\\\x",
    ] {
        let o = pack(&sb, "src", "out2", &["--asset-base-url", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(!sb.join("out2").exists(), "{bad}");
    }
    // Published entries keep their URL, and the user is told so.
    let o = pack(
        &sb,
        "src",
        "out",
        &["--asset-base-url", "https://mirror.test/c"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    stderr_says(&o, "alpha 0.1.0 keeps its published URL `https://example.test/catalog/hooks-alpha-0.1.0.tar.gz`");
    // The way out of a mistyped base URL (found by the publisher walk-through: the README
    // forbids editing the index, and nothing else changes a published URL).
    stderr_says(
        &o,
        "if that URL never served the archive (a mistyped base URL), correct it in this \
         index by hand and pack again",
    );
    assert_eq!(
        std::fs::read(sb.join("out/hooks-index.json")).unwrap(),
        serde_json::to_vec_pretty(&index)
            .unwrap()
            .into_iter()
            .chain(*b"\n")
            .collect::<Vec<u8>>()
    );
}

/// An `--asset-base-url` with another scheme is told what the flag takes: `ftp://` was
/// told "only https, http and file URLs … are fetched", and `file://` then refused as well.
#[test]
fn an_asset_base_url_with_another_scheme_is_told_what_the_flag_takes() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    for (bad, scheme) in [
        ("ftp://x/y", "ftp"),
        ("file:///srv/catalog", "file"),
        ("FILE:///srv/catalog", "FILE"),
        ("ftp:x", "ftp"),
    ] {
        let o = pack(&sb, "src", "out", &["--asset-base-url", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        stderr_says(
            &o,
            &format!(
                "error: URL `{bad}` uses the `{scheme}:` scheme; --asset-base-url takes the \
                 https:// (or http://) URL of the folder the archives will be served from"
            ),
        );
        assert!(!stderr(&o).contains("file URLs"), "{bad}: {}", stderr(&o));
        assert!(!sb.join("out").exists(), "{bad}");
    }
}

/// An `--asset-base-url` holding characters URL text may not hold as they are (a quote, a
/// space, `<`, `{`, a control character, a `%` without two hex digits) is refused (exit 2),
/// naming the character, its place and its percent-encoding, with OUT untouched; `%20` is a
/// valid escape and stays (they went into the index's `url` fields, which broke downloads).
#[test]
fn an_asset_base_url_that_is_not_url_text_is_refused() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    for (bad, named, at, encoded) in [
        ("https://h/a\"b", "a double quote", 12, "%22"),
        ("https://h/my catalog", "a space", 13, "%20"),
        ("https://h/<c>", "`<`", 11, "%3C"),
        ("https://h/c>", "`>`", 12, "%3E"),
        ("https://h/c^", "`^`", 12, "%5E"),
        ("https://h/c`d", "a backtick", 12, "%60"),
        ("https://h/{c}", "`{`", 11, "%7B"),
        ("https://h/c|d", "`|`", 12, "%7C"),
        ("https://h/c}", "`}`", 12, "%7D"),
        (
            "https://h/c\u{7f}",
            "the control character U+007F",
            12,
            "%7F",
        ),
        ("https://h/c\td", "the control character U+0009", 12, "%09"),
        (
            "https://h/100%",
            "a `%` not followed by two hex digits",
            14,
            "%25",
        ),
        (
            "https://h/a%2x",
            "a `%` not followed by two hex digits",
            12,
            "%25",
        ),
        ("https://h/a\\b", "a backslash", 12, "%5C"),
    ] {
        let o = pack(&sb, "src", "out", &["--asset-base-url", bad]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains(&format!("{named} at character {at}"))
                && err.contains(&format!("percent-encode it (as `{encoded}`)")),
            "{bad}: {err}"
        );
        assert!(!sb.join("out").exists(), "{bad}");
    }
    ok(&pack(
        &sb,
        "src",
        "out",
        &["--asset-base-url", "https://example.test/my%20catalog%2f"],
    ));
    let index = read_json(&sb.join("out/hooks-index.json"));
    assert_eq!(
        index["recipes"][0]["versions"][0]["url"],
        "https://example.test/my%20catalog%2f/hooks-alpha-0.1.0.tar.gz"
    );
}

/// A recipe in a hidden folder (`.beta/recipe.json`; the reference refuses an id starting
/// with `.`): validate, assemble and pack took no notice of it, exit 0 without a word, so a
/// recipe named so was lost in silence. It is left out still (a folder renamed `.x` sets a
/// recipe aside), with a `hidden-not-packed` warning naming it; a hidden folder holding no
/// recipe.json (`.git`) gets none, and nor does `--only` another recipe.
#[test]
fn a_recipe_in_a_hidden_folder_is_left_out_with_a_warning() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    write_recipe(&sb, "src/.beta", &manifest("beta"));
    sb.write("src/.git/HEAD", "ref: refs/heads/main\n");
    let want = "src/.beta: warning[hidden-not-packed]: hidden folders are never taken as \
                recipes (an id may not start with `.`), so this one is left out though it holds \
                a recipe.json; to pack it, rename it to its id";
    let runs: [&[&str]; 3] = [
        &["validate", "src"],
        &["assemble", "--recipes-dir", "src", "--out-dir", "asm"],
        &["pack", "--recipes-dir", "src", "--out-dir", "out"],
    ];
    for args in runs {
        let o = sb.cmd().args(args).output().unwrap();
        // validate prints its findings on stdout, the others on stderr.
        let said = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {said}");
        assert_eq!(said.matches(want).count(), 1, "{args:?}: {said}");
        assert!(!said.contains(".git"), "{args:?}: {said}");
        if args[0] != "validate" {
            let o = sb
                .cmd()
                .args(args)
                .args(["--only", "alpha"])
                .output()
                .unwrap();
            ok(&o);
            assert!(!stderr(&o).contains("hidden-not-packed"), "{}", stderr(&o));
        }
    }
    assert_eq!(
        names_in(&sb.join("asm")),
        [
            ".assembled-by-hookpack",
            "alpha/README.md",
            "alpha/recipe.json",
            "alpha/scripts/main.js"
        ]
    );
    assert_eq!(names_in(&sb.join("out")), PACKED_ALPHA);
    // With no other recipe, there are none: an error still, the warning besides.
    std::fs::remove_dir_all(sb.join("src/alpha")).unwrap();
    let o = sb.cmd().args(["validate", "src"]).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains("src: error[no-recipes]") && said.contains(want),
        "{said}"
    );
}

/// A `--merge` index that is not there: pack said "cannot open nothere.json: No such file
/// or directory", not which flag named it. It names the flag and what to give (exit 1,
/// nothing written), as a path or a `file://` URL.
#[test]
fn a_merge_index_that_is_not_there_is_named_with_its_flag() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    let url = format!("file://{}", sb.join("gone.json").display());
    for (given, said) in [
        ("nothere.json", "nothere.json".to_string()),
        (url.as_str(), sb.join("gone.json").display().to_string()),
    ] {
        let o = pack(&sb, "src", "out", &["--merge", given]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stderr_says(
            &o,
            &format!("error: --merge {said} does not exist; give the published index, downloaded (a hooks-index.json file)"),
        );
        assert!(!sb.join("out").exists());
    }
}

/// The reference packer's own cases, against the CLI.
#[test]
fn reference_cases() {
    let bad = |edit: fn(&mut Value), fix_folder: Option<&str>, expect: &str| {
        let sb = Sandbox::new();
        let mut m = manifest("good-one");
        edit(&mut m);
        write_recipe(
            &sb,
            &format!("src/{}", fix_folder.unwrap_or("good-one")),
            &m,
        );
        let o = pack(&sb, "src", "out", &[]);
        assert_eq!(o.status.code(), Some(1), "{expect}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(expect),
            "expected {expect:?} in {}",
            stderr(&o)
        );
        assert!(!sb.join("out").exists(), "{expect}: OUT was created");
    };
    bad(
        |m| m["id"] = json!("Bad_Id"),
        Some("Bad_Id"),
        "recipe-id-invalid",
    );
    bad(
        |m| m["id"] = json!(".hidden"),
        Some("x"),
        "recipe-id-invalid",
    );
    bad(|m| m["version"] = json!("0.13.0-rc1"), None, "prerelease");
    bad(|m| m["min_cli"] = json!("0.13.0-rc1"), None, "prerelease");
    bad(
        |m| {
            drop(
                m["hooks"]["PreToolUse"][0]["hooks"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("id"),
            )
        },
        None,
        "handler-missing-id",
    );
    bad(
        |m| m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("node /usr/lib/x.js"),
        None,
        "is absolute",
    );
    bad(
        |m| m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!("node scripts/missing.js"),
        None,
        "does not exist",
    );
    bad(
        |_| {},
        Some("other-folder"),
        "does not match its folder name",
    );

    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("empty")).unwrap();
    let o = pack(&sb, "empty", "out", &[]);
    assert_eq!(o.status.code(), Some(1));
    stderr_says(&o, "no recipes in");
    // Found by a walkthrough: a recipe set aside under a hidden name, alone in its folder,
    // got "no recipes" from pack, assemble and test, where validate warns of it by name.
    sb.write("empty/.set-aside/recipe.json", "{}\n");
    let runs = [
        vec!["pack", "--recipes-dir", "empty", "--out-dir", "out"],
        vec!["assemble", "--recipes-dir", "empty", "--out-dir", "out"],
        vec!["test", "empty"],
    ];
    for args in runs {
        let o = sb.cmd().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        stderr_says(
            &o,
            "no recipes in empty: expected folders each holding a recipe.json; `.set-aside` \
             holds one but is hidden (its name starts with `.`), so it is left out: rename \
             it to its id",
        );
        assert!(!sb.join("out").exists(), "{args:?}");
    }

    // Found by review: a folder that is not a recipe was skipped in silence, where
    // `validate` reports it. `lib/` (shared helpers) and hidden folders are no recipes.
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let before = snapshot(&sb.join("out"));
    std::fs::create_dir_all(sb.join("src/lib")).unwrap();
    std::fs::create_dir_all(sb.join("src/.git")).unwrap();
    std::fs::create_dir_all(sb.join("src/node_modules/typescript")).unwrap();
    sb.write("src/README.md", "# recipes\n");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    // Found by the second review: pack's own OUT among the recipes was refused by the
    // next pack as a folder without recipe.json.
    for _ in 0..2 {
        let o = pack(&sb, "src", "src/dist", &[]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // A catalog folder among the recipes is no recipe to the other commands either; but a
    // link to one is refused, and `lib/` stays the helpers folder whatever it holds (fourth
    // review).
    let o = sb.cmd().args(["validate", "src"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    std::os::unix::fs::symlink(sb.join("src/dist"), sb.join("src/catlink")).unwrap();
    std::fs::copy(
        sb.join("src/dist/hooks-index.json"),
        sb.join("src/lib/hooks-index.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", sb.join("src/lib/pw.ts")).unwrap();
    let o = sb.cmd().args(["validate", "src"]).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("src/catlink: error[symlink]"), "{said}");
    assert!(said.contains("src/lib/pw.ts: error[symlink]"), "{said}");
    for p in ["src/catlink", "src/lib/pw.ts", "src/lib/hooks-index.json"] {
        std::fs::remove_file(sb.join(p)).unwrap();
    }
    std::fs::remove_dir(sb.join("src/lib")).unwrap();
    // An OUT at `lib/` would become the helpers folder: refused, even before it exists.
    let o = pack(&sb, "src", "src/lib", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "overlaps");
    assert!(!sb.join("src/lib").exists());
    std::fs::remove_dir_all(sb.join("src/dist")).unwrap();
    // A recipe folder as OUT stays refused (found by the third review: the OUT skip let
    // pack write the catalog into the recipe's sources).
    let o = pack(&sb, "src", "src/alpha", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "overlaps");
    assert!(!sb.join("src/alpha/hooks-index.json").exists());
    std::fs::create_dir_all(sb.join("src/gamma")).unwrap();
    for args in [&["pack"][..], &["assemble"], &["validate"]] {
        let mut c = sb.cmd();
        c.args(args);
        if args[0] == "validate" {
            c.arg("src");
        } else {
            c.args(["--recipes-dir", "src", "--out-dir", "out"]);
        }
        let o = c.output().unwrap();
        let said = stderr(&o) + &String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains(
                "src/gamma: error[recipe-manifest-missing]: folder `gamma` has no recipe.json"
            ),
            "{args:?}: {said}"
        );
        assert_eq!(snapshot(&sb.join("out")), before, "{args:?}");
    }
}

#[test]
fn the_committed_catalog_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sb = Sandbox::new();
    let o = sb
        .cmd()
        .env_remove("SOURCE_DATE_EPOCH")
        .args(["pack", "--check", "--recipes-dir"])
        .arg(root.join("recipes"))
        .arg("--out-dir")
        .arg(root.join("catalog"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "catalog/ is stale; run `hookpack pack --recipes-dir recipes --out-dir catalog`:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    sb.cmd()
        .arg("catalog")
        .arg("verify")
        .arg(root.join("catalog"))
        .assert()
        .success();
}

/// Pack must not hold archives open, or a big catalog runs out of file descriptors: 120
/// recipes under a limit of 48 open files. `strace` makes every sync take 20 ms, as on a
/// slow disk (on kernels before 5.8 that is one `fsync` per archive).
#[cfg(target_os = "linux")]
#[test]
fn a_small_open_file_limit_does_not_stop_a_big_catalog() {
    let strace = strace();
    let sb = Sandbox::new();
    for i in 0..120 {
        let id = format!("r{i:03}");
        write_recipe(&sb, &format!("src/{id}"), &manifest(&id));
    }
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "ulimit -n 48 && exec \"$0\" -f -qq -o /dev/null -e trace=fsync,syncfs \
             -e inject=fsync,syncfs:delay_enter=20000 \"$1\" pack --recipes-dir src --out-dir out --jobs 2",
        )
        .arg(strace)
        .arg(&bin)
        .current_dir(sb.path())
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let archives = std::fs::read_dir(sb.join("out"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tar.gz")
        })
        .count();
    assert_eq!(archives, 120);
}

/// A sandbox with three assembled recipes, `src/a`, `src/b` and `src/c`.
fn recipes_abc() -> Sandbox {
    let sb = Sandbox::new();
    for id in ["a", "b", "c"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    sb
}

/// The archives are durable before the first of them is renamed into OUT: one `syncfs` of
/// the staging folder's file system comes before every rename (seen with strace). `--check`
/// writes nothing that needs it, and a failed sync fails the pack with OUT untouched.
#[cfg(target_os = "linux")]
#[test]
fn archives_are_made_durable_before_the_commit() {
    let strace = strace();
    let sb = recipes_abc();
    let bin = assert_cmd::cargo::cargo_bin("hookpack");
    let trace = |args: &[&str]| -> Vec<String> {
        let o = std::process::Command::new(strace)
            .args(["-f", "-qq", "-o", "trace.txt", "-e"])
            .arg("trace=syncfs,fsync,rename,renameat,renameat2")
            .arg(&bin)
            .args(args)
            .current_dir(sb.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(sb.join("trace.txt"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let lines = trace(&["pack", "--recipes-dir", "src", "--out-dir", "out"]);
    let first = |needle: &str| lines.iter().position(|l| l.contains(needle));
    let sync = first("syncfs(").unwrap_or_else(|| panic!("no syncfs: {lines:#?}"));
    let rename = first(".tar.gz").unwrap_or_else(|| panic!("no rename: {lines:#?}"));
    assert!(sync < rename, "syncfs after a rename: {lines:#?}");
    assert!(
        lines[sync].contains("= 0"),
        "syncfs failed: {}",
        lines[sync]
    );
    // The index and SHA256SUMS, made durable by that one syncfs, move in after the
    // archives, with OUT's folder synced in between: an index never names an archive a
    // crash lost.
    assert_eq!(
        lines.iter().filter(|l| l.contains("syncfs(")).count(),
        1,
        "{lines:#?}"
    );
    let last_archive = lines.iter().rposition(|l| l.contains(".tar.gz")).unwrap();
    let index = first("hooks-index.json").unwrap_or_else(|| panic!("{lines:#?}"));
    let sums = first("SHA256SUMS").unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(
        last_archive < index
            && index < sums
            && lines[last_archive..index]
                .iter()
                .any(|l| l.contains("fsync(")),
        "{lines:#?}"
    );
    // `--check` builds in a temporary folder and syncs nothing.
    let lines = trace(&[
        "pack",
        "--recipes-dir",
        "src",
        "--out-dir",
        "out",
        "--check",
    ]);
    assert!(!lines.iter().any(|l| l.contains("syncfs(")), "{lines:#?}");
    // Nothing to publish, nothing to sync: a repack of the same sources.
    let lines = trace(&["pack", "--recipes-dir", "src", "--out-dir", "out"]);
    assert!(!lines.iter().any(|l| l.contains("syncfs(")), "{lines:#?}");
    // A restored archive is synced before it is renamed back, and so is OUT's folder
    // after, though the index does not change.
    std::fs::remove_file(sb.join("out/hooks-b-0.1.0.tar.gz")).unwrap();
    let lines = trace(&["pack", "--recipes-dir", "src", "--out-dir", "out"]);
    let first = |needle: &str| lines.iter().position(|l| l.contains(needle));
    let sync = first("syncfs(").unwrap_or_else(|| panic!("no syncfs: {lines:#?}"));
    let rename = first("hooks-b-0.1.0.tar.gz").unwrap_or_else(|| panic!("{lines:#?}"));
    let folder = lines
        .iter()
        .rposition(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains("fsync("))
        .unwrap_or_else(|| panic!("no fsync of OUT: {lines:#?}"));
    assert!(sync < rename && rename < folder, "{lines:#?}");
    // A failed sync (a disk error) fails the pack and leaves OUT as it was, with no
    // staging folder behind.
    let before = std::fs::read(sb.join("out/hooks-index.json")).unwrap();
    write_recipe(&sb, "src/d", &manifest("d"));
    let failing_sync = |out: &str| {
        std::process::Command::new(strace)
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=syncfs"])
            .args(["-e", "inject=syncfs:error=EIO"])
            .arg(&bin)
            .args(["pack", "--recipes-dir", "src", "--out-dir", out])
            .current_dir(sb.path())
            .output()
            .unwrap()
    };
    let o = failing_sync("out");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    stderr_says(&o, "write to disk (syncfs) the file system holding out");
    assert_eq!(
        std::fs::read(sb.join("out/hooks-index.json")).unwrap(),
        before
    );
    assert!(!sb.join("out/hooks-d-0.1.0.tar.gz").exists());
    // The same into an OUT that does not exist yet: it still does not.
    let o = failing_sync("new/out");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!sb.join("new").exists(), "OUT or its parent was created");
    let leftovers: Vec<_> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hookpack"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Where `syncfs` reports no write-back errors (Linux before 5.8, faked here with
/// `setarch --uname-2.6`), each archive gets its own `fsync` before the first rename.
#[cfg(target_os = "linux")]
#[test]
fn old_kernels_sync_each_archive() {
    let strace = strace();
    let sb = recipes_abc();
    let o = std::process::Command::new("setarch")
        .args([std::env::consts::ARCH, "--uname-2.6", strace])
        .args(["-f", "-qq", "-y", "-o", "trace.txt", "-e"])
        .arg("trace=syncfs,fsync,rename,renameat,renameat2")
        .arg(assert_cmd::cargo::cargo_bin("hookpack"))
        .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
        .current_dir(sb.path())
        .output()
        .expect("setarch (util-linux) is installed");
    assert!(o.status.success(), "{}", stderr(&o));
    let trace = std::fs::read_to_string(sb.join("trace.txt")).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    assert!(!trace.contains("syncfs("), "{trace}");
    let first_rename = lines
        .iter()
        .position(|l| l.contains("rename") && l.contains(".tar.gz"))
        .unwrap_or_else(|| panic!("{trace}"));
    let names = ["a", "b", "c"].map(|id| format!("hooks-{id}-0.1.0.tar.gz"));
    for name in names
        .iter()
        .map(String::as_str)
        .chain(["hooks-index.json", "SHA256SUMS"])
    {
        let synced = lines
            .iter()
            .position(|l| l.contains("fsync(") && l.contains(name))
            .unwrap_or_else(|| panic!("{name} not fsynced: {trace}"));
        assert!(synced < first_rename, "{trace}");
    }
}

/// strace, which the tests below use to slow chosen system calls down.
#[cfg(target_os = "linux")]
pub fn strace() -> &'static str {
    ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or_else(|| {
            panic!(
                "`strace` is not installed, and this test slows system calls down with it: \
                 install it with `apt-get install -y strace` (.ci/run does this on CI)"
            )
        })
}

/// `hookpack` run under strace in the sandbox, quiet and its trace thrown away: `options`
/// are strace's own before the program (`-e trace=…`, `-e inject=…`, `-P PATH`).
#[cfg(target_os = "linux")]
pub fn under_strace(sb: &Sandbox, options: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(strace());
    cmd.args(["-f", "-qq", "-o", "/dev/null"])
        .args(options)
        .arg(assert_cmd::cargo::cargo_bin("hookpack"))
        .current_dir(sb.path());
    cmd
}

/// A folder swapped for a link after the recipe was checked must not lead the archive out
/// of the recipe. strace holds each file open of the build (openat2) for half a second; the
/// test swaps the folder while the first one is held.
#[cfg(target_os = "linux")]
#[test]
fn a_folder_swapped_for_a_link_while_packing_is_refused() {
    // An assembled recipe is read when its archive is built; a TypeScript source tree is
    // copied earlier, when pack assembles it into a temporary folder (TMPDIR, here the
    // sandbox): the swap comes once the staging folder, or the assembled recipe's folder,
    // exists.
    for (source_tree, started) in [(false, ".hookpack-pack-"), (true, "hookpack-assembled-")] {
        let sb = Sandbox::new();
        if source_tree {
            sb.write(
                "src/r1/recipe.json",
                serde_json::to_vec(&manifest("r1")).unwrap(),
            );
            sb.write("src/r1/README.md", "# r1\n");
            sb.write("src/r1/src/main.ts", "console.log(1);\n");
        } else {
            write_recipe(&sb, "src/r1", &manifest("r1"));
        }
        std::fs::create_dir_all(sb.join("src/r1/zdata")).unwrap();
        std::fs::write(sb.join("src/r1/zdata/notes.txt"), "inside").unwrap();
        std::fs::create_dir_all(sb.join("elsewhere")).unwrap();
        std::fs::write(
            sb.join("elsewhere/notes.txt"),
            "a secret outside the recipe",
        )
        .unwrap();
        let child = std::process::Command::new(strace())
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=openat2"])
            .args(["-e", "inject=openat2:delay_enter=500000"])
            .arg(assert_cmd::cargo::cargo_bin("hookpack"))
            .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
            .current_dir(sb.path())
            .env("TMPDIR", sb.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let begun = || {
            std::fs::read_dir(sb.path()).unwrap().any(|e| {
                let e = e.unwrap();
                e.file_name().to_string_lossy().starts_with(started)
                    && (!source_tree || e.path().join("r1").is_dir())
            })
        };
        let start = std::time::Instant::now();
        while !begun() {
            assert!(
                start.elapsed().as_secs() < 60,
                "pack never got to {started}"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        std::fs::remove_dir_all(sb.join("src/r1/zdata")).unwrap();
        std::os::unix::fs::symlink(sb.join("elsewhere"), sb.join("src/r1/zdata")).unwrap();
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "source tree {source_tree}: {err}");
        assert!(
            err.contains("zdata/notes.txt") && err.contains("symbolic link"),
            "source tree {source_tree}: {err}"
        );
        assert!(!sb.join("out").exists(), "OUT was created");
    }
}

/// Re-packing unchanged sources leaves every file in OUT as it was: same bytes, same inode,
/// same modification time (static hosts and rsync see no change).
#[cfg(unix)]
#[test]
fn repacking_unchanged_sources_rewrites_nothing() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let stamps = || -> BTreeMap<String, (u64, i64, i64)> {
        std::fs::read_dir(sb.join("cat"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let m = e.metadata().unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, (m.ino(), m.mtime(), m.mtime_nsec()))
            })
            .collect()
    };
    let o = pack(&sb, "src", "cat", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = stamps();
    assert_eq!(first.len(), 4, "{first:?}");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = pack(&sb, "src", "cat", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stamps(), first);
}

/// `--merge INDEX` adds another catalog's versions to OUT's own; it never drops OUT's
/// entries nor lets a published archive in OUT be replaced.
#[test]
fn merge_keeps_outs_own_index_and_refuses_conflicts() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    write_recipe(&sb, "s2/gamma", &manifest("gamma"));
    assert!(pack(&sb, "s2", "o2", &[]).status.success());
    let before = snapshot(&sb.join("out"));

    // A changed alpha 0.1.0 stays refused, whatever index is merged in.
    sb.write("src/alpha/data/rules.json", "{\"changed\": true}\n");
    let o = pack(
        &sb,
        "src",
        "out",
        &["--merge", "o2/hooks-index.json", "--only", "alpha"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    refused_as_published(&o, "alpha 0.1.0");
    assert_eq!(snapshot(&sb.join("out")), before);

    // Unchanged sources: OUT lists its own recipes and the merged one.
    sb.write("src/alpha/data/rules.json", "{\"id\": \"alpha\"}\n");
    let o = pack(&sb, "src", "out", &["--merge", "o2/hooks-index.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("index unchanged"), "{}", stderr(&o));
    assert_eq!(index_ids(&sb, "out"), ["alpha", "beta", "gamma"]);

    // Two catalogs that disagree on a published version cannot be merged.
    sb.write("s3/alpha/data/rules.json", "{\"other\": 1}\n");
    write_recipe(&sb, "s3/alpha", &manifest("alpha"));
    assert!(pack(&sb, "s3", "o3", &[]).status.success());
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &["--merge", "o3/hooks-index.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "cannot be merged");
    // At the digest that disagrees, by line, column and pointer (it named only the file).
    let merged = std::fs::read_to_string(sb.join("o3/hooks-index.json")).unwrap();
    let (row, text) = (merged.lines().enumerate())
        .find(|(_, l)| l.contains("\"sha256\""))
        .unwrap();
    let (line, column) = (row + 1, text.find(": \"").unwrap() + 3);
    stderr_says(
        &o,
        &format!("o3/hooks-index.json:{line}:{column}: error[index-conflict]: "),
    );
    stderr_says(&o, "(at /recipes/0/versions/0/sha256)");
    assert_eq!(snapshot(&sb.join("out")), before);

    // Found by review: an index to merge that is not there was taken for an empty one, and
    // the versions it lists silently dropped. It is an error, and a URL is refused as usage.
    for (merge, code, says) in [
        ("o2/typo-index.json", 1, "o2/typo-index.json"),
        ("o4", 1, "o4"),
        ("https://example.com/hooks-index.json", 2, "--merge"),
        ("http://127.0.0.1:9/hooks-index.json", 2, "download"),
    ] {
        let o = pack(&sb, "src", "out", &["--merge", merge]);
        assert_eq!(o.status.code(), Some(code), "{merge}: {}", stderr(&o));
        stderr_says(&o, says);
        assert_eq!(snapshot(&sb.join("out")), before, "{merge}");
    }
}

/// The ids the `hooks-index.json` in the catalog folder `out` lists, in its order.
fn index_ids(sb: &Sandbox, out: &str) -> Vec<String> {
    let index = read_json(&sb.join(out).join("hooks-index.json"));
    (index["recipes"].as_array().unwrap().iter())
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// `--merge DIR`, a catalog folder, merges its `hooks-index.json` as `catalog verify DIR`
/// reads it; it was refused with "cannot read o2: is a folder, expected a file". A folder
/// without an index is named with its flag, as a missing file is.
#[test]
fn merge_takes_a_catalog_folder_as_verify_does() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    write_recipe(&sb, "s2/gamma", &manifest("gamma"));
    assert!(pack(&sb, "s2", "o2", &[]).status.success());
    let url = format!("file://{}", sb.join("o2").display());
    for merge in ["o2", url.as_str()] {
        let o = pack(&sb, "src", "out", &["--merge", merge]);
        assert!(o.status.success(), "{merge}: {}", stderr(&o));
        assert_eq!(index_ids(&sb, "out"), ["alpha", "gamma"], "{merge}");
    }
    std::fs::create_dir(sb.join("empty")).unwrap();
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &["--merge", "empty"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        "error: --merge empty/hooks-index.json does not exist; give the published index",
    );
    assert_eq!(snapshot(&sb.join("out")), before);
}

/// Found by the maintainer-side hostile-input sweep: a merged entry whose relative URL
/// names an archive in a folder beside the index (`old/hooks-alpha-0.1.0.tar.gz`) was
/// looked for as `OUT/hooks-alpha-0.1.0.tar.gz`, by the last part of its URL alone: pack
/// warned that OUT lacked it though it was there, left it out of `SHA256SUMS`, and
/// `catalog verify` then failed on `SHA256SUMS` (advising to pack again, which could not
/// help). With a file of that name at the top of OUT, the line went to that file.
#[test]
fn a_merged_archive_in_a_folder_beside_the_index_is_listed_by_its_path() {
    let sb = Sandbox::new();
    write_recipe(&sb, "v1/alpha", &manifest("alpha"));
    assert!(pack(&sb, "v1", "o1", &[]).status.success());
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("o1/hooks-index.json")).unwrap()).unwrap();
    let sha = index["recipes"][0]["versions"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    index["recipes"][0]["versions"][0]["url"] = json!("old/hooks-alpha-0.1.0.tar.gz");
    sb.write("m.json", serde_json::to_vec_pretty(&index).unwrap());
    std::fs::create_dir_all(sb.join("out/old")).unwrap();
    std::fs::copy(
        sb.join("o1/hooks-alpha-0.1.0.tar.gz"),
        sb.join("out/old/hooks-alpha-0.1.0.tar.gz"),
    )
    .unwrap();
    let mut newer = manifest("alpha");
    newer["version"] = json!("0.2.0");
    write_recipe(&sb, "v2/alpha", &newer);

    let o = pack(&sb, "v2", "out", &["--merge", "m.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("archive-missing"), "{}", stderr(&o));
    let sums = std::fs::read_to_string(sb.join("out/SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&format!("{sha}  old/hooks-alpha-0.1.0.tar.gz\n")),
        "{sums}"
    );
    let o = sb
        .cmd()
        .args(["catalog", "verify", "out"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A merged archive in a folder beside the index is read from that folder in OUT, so a
/// link there is refused like a link at the archive itself: pack vouches in SHA256SUMS
/// only for files OUT holds itself.
#[cfg(unix)]
#[test]
fn a_merged_archive_behind_a_folder_link_is_refused() {
    let sb = Sandbox::new();
    write_recipe(&sb, "v1/alpha", &manifest("alpha"));
    assert!(pack(&sb, "v1", "elsewhere", &[]).status.success());
    let mut index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("elsewhere/hooks-index.json")).unwrap())
            .unwrap();
    index["recipes"][0]["versions"][0]["url"] = json!("old/hooks-alpha-0.1.0.tar.gz");
    sb.write("m.json", serde_json::to_vec_pretty(&index).unwrap());
    std::fs::create_dir_all(sb.join("out")).unwrap();
    std::os::unix::fs::symlink(sb.join("elsewhere"), sb.join("out/old")).unwrap();
    let mut newer = manifest("alpha");
    newer["version"] = json!("0.2.0");
    write_recipe(&sb, "v2/alpha", &newer);
    let before = snapshot(&sb.join("out"));

    let o = pack(&sb, "v2", "out", &["--merge", "m.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "refused out/old: is a symbolic link");
    assert_eq!(snapshot(&sb.join("out")), before);
}

/// Found by the maintainer-side hostile-input sweep: `--merge` took a `file://` URL for a
/// relative path named `file:`, so an index that was there was reported missing ("cannot
/// open file:///…: No such file or directory", exit 1), and an `HTTPS://` URL was not
/// refused as a URL (exit 1 for a missing file, not exit 2 with the advice to download it).
#[test]
fn merge_reads_a_file_url_and_refuses_a_web_url_in_any_case() {
    let sb = Sandbox::new();
    write_recipe(&sb, "s2/gamma", &manifest("gamma"));
    assert!(pack(&sb, "s2", "o2", &[]).status.success());
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    let url = format!("file://{}", sb.join("o2/hooks-index.json").display());
    let o = pack(&sb, "src", "out", &["--merge", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index: Value =
        serde_json::from_slice(&std::fs::read(sb.join("out/hooks-index.json")).unwrap()).unwrap();
    assert_eq!(index["recipes"][1]["id"], "gamma", "{index:#}");

    let before = snapshot(&sb.join("out"));
    for merge in [
        "HTTPS://example.com/hooks-index.json",
        "ftp://example.com/i.json",
    ] {
        let o = pack(&sb, "src", "out", &["--merge", merge]);
        assert_eq!(o.status.code(), Some(2), "{merge}: {}", stderr(&o));
        stderr_says(&o, "--merge");
        assert_eq!(snapshot(&sb.join("out")), before, "{merge}");
    }
}

/// A fifo where an index or archive should be fails at once instead of waiting for a
/// writer that never comes.
#[cfg(unix)]
#[test]
fn a_fifo_instead_of_an_index_fails_without_hanging() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    std::fs::create_dir(sb.join("out")).unwrap();
    let fifo = sb.join("out/hooks-index.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let run = |args: &[&str]| {
        sb.cmd()
            .args(args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap()
    };
    let o = run(&["pack", "--recipes-dir", "src", "--out-dir", "out"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "fifo");
    for verb in ["list", "verify"] {
        let o = run(&["catalog", verb, "out/hooks-index.json"]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {}", stderr(&o));
        // The reason is said once, not once more for each error in its source chain.
        let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert_eq!(said.matches("is a fifo").count(), 1, "{verb}: {said}");
    }
    // An archive that is a fifo: `catalog verify` names it, once, and goes on.
    std::fs::remove_file(&fifo).unwrap();
    let o = run(&["pack", "--recipes-dir", "src", "--out-dir", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let archive = sb.join("out/hooks-beta-0.1.0.tar.gz");
    std::fs::remove_file(&archive).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&archive)
        .status()
        .unwrap();
    assert!(made.success());
    let o = run(&["catalog", "verify", "out"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(said.contains("hooks-beta-0.1.0.tar.gz"), "{said}");
    assert_eq!(said.matches("is a fifo").count(), 1, "{said}");
}

/// A fifo where pack reads an archive it built before, or `--check` reads SHA256SUMS, is
/// refused at once, naming it, instead of waiting for a writer that never comes (found by
/// a maintainer-side sweep: pack hung).
#[cfg(unix)]
#[test]
fn a_fifo_instead_of_an_archive_or_the_sums_fails_without_hanging() {
    for (file, check) in [
        ("hooks-beta-0.1.0.tar.gz", false),
        ("hooks-beta-0.1.0.tar.gz", true),
        ("SHA256SUMS", true),
    ] {
        let sb = Sandbox::new();
        two_recipes(&sb, "src");
        assert!(pack(&sb, "src", "out", &[]).status.success());
        let fifo = sb.join("out").join(file);
        std::fs::remove_file(&fifo).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let before = snapshot(&sb.join("out"));
        let o = sb
            .cmd()
            .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
            .args(if check { &["--check"][..] } else { &[] })
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{file} {check}: {}", stderr(&o));
        stderr_says(&o, &format!("out/{file}"));
        stderr_says(&o, "is a fifo");
        assert_eq!(snapshot(&sb.join("out")), before, "{file} {check}");
        use std::os::unix::fs::FileTypeExt;
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{file} {check}");
    }
}

/// A folder where the index, SHA256SUMS or an archive must go stops the pack before any
/// file in OUT changes.
#[test]
fn a_folder_in_the_way_stops_the_pack_before_anything_moves() {
    for blocker in ["SHA256SUMS", "hooks-index.json", "hooks-beta-0.1.0.tar.gz"] {
        let sb = Sandbox::new();
        two_recipes(&sb, "src");
        sb.write(&format!("out/{blocker}/x"), "in the way");
        let before = snapshot(&sb.join("out"));
        let o = pack(&sb, "src", "out", &[]);
        assert_eq!(o.status.code(), Some(1), "{blocker}: {}", stderr(&o));
        stderr_says(&o, blocker);
        assert_eq!(snapshot(&sb.join("out")), before, "{blocker}");
    }
}

/// Two packs into one OUT take turns: while another holds OUT's lock (here `flock(1)` on
/// OUT's parent folder), a pack waits, then gives up with exit 3 and OUT untouched.
#[cfg(target_os = "linux")]
#[test]
fn a_pack_waits_for_another_one_into_the_same_out() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    std::fs::create_dir_all(sb.join("pub")).unwrap();
    // -o: the lock stays with flock itself, so killing it frees the lock.
    let mut holder = std::process::Command::new("flock")
        .arg("-o")
        .arg(sb.join("pub"))
        .args(["sleep", "30"])
        .spawn()
        .expect("flock(1) from util-linux");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = sb
        .cmd()
        .env("HOOKPACK_LOCK_TIMEOUT", "0.5")
        .args(["pack", "--recipes-dir", "src", "--out-dir", "pub/cat"])
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!sb.join("pub/cat").exists());
    // Once the lock is free, the same pack goes through.
    let o = pack(&sb, "src", "pub/cat", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// OUT on its own file system (a tmpfs mounted there) is packed into like any folder: the
/// staging folder goes inside it, so the commit is still a rename. Needs root to mount.
#[cfg(target_os = "linux")]
#[test]
fn out_on_another_file_system_is_packed_into() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    std::fs::create_dir_all(sb.join("mnt")).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
        .arg(sb.join("mnt"))
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and must be able to mount a tmpfs"
        );
        eprintln!("skipped: cannot mount a tmpfs (not root)");
        return;
    }
    let o = pack(&sb, "src", "mnt", &[]);
    let listed: Vec<String> = std::fs::read_dir(sb.join("mnt"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let _ = std::process::Command::new("umount")
        .arg(sb.join("mnt"))
        .status();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed.len(), 4, "{listed:?}");
}

/// pack refuses what `install` would refuse in the archive (a backslash or newline in a
/// name, names that differ only by case, a path over 512 bytes), naming the file, and
/// writes nothing; `catalog verify` therefore never meets such an archive from pack.
#[test]
fn what_install_would_refuse_is_never_packed() {
    let long = format!(
        "data/{}/{}/{}/x.json",
        "a".repeat(200),
        "b".repeat(200),
        "c".repeat(100)
    );
    for (file, want) in [
        ("data/back\\slash.json", "backslash"),
        ("data/new\nline.json", "control character"),
        ("data/Rules.json", "differ only by case"),
        (long.as_str(), "path length"),
    ] {
        let sb = Sandbox::new();
        two_recipes(&sb, "src");
        sb.write(&format!("src/beta/{file}"), "{}\n");
        let o = pack(&sb, "src", "out", &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{file:?}: {err}");
        assert!(
            err.contains(want) && err.contains("src/beta/"),
            "{file:?}: {err}"
        );
        assert!(!sb.join("out").exists(), "{file:?}");
    }
}

#[test]
fn the_help_of_merge_says_both_indexes_stay_listed() {
    // It said "instead of OUT/hooks-index.json", while pack keeps every version of both.
    let sb = Sandbox::new();
    let o = sb.cmd().args(["pack", "--help"]).output().unwrap();
    ok(&o);
    let help = String::from_utf8_lossy(&o.stdout);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("--merge"))
        .unwrap();
    assert!(!line.contains("instead of"), "{line}");
    assert!(line.contains("as well as OUT/hooks-index.json"), "{line}");
}

/// Packs `alpha` 0.2.0 from `src` into `out`, and returns its manifest with the version
/// lowered to 0.1.5 (a slip of the bump), not yet written.
fn alpha_published_then_lowered(sb: &Sandbox) -> Value {
    let mut m = manifest("alpha");
    m["version"] = json!("0.2.0");
    write_recipe(sb, "src/alpha", &m);
    ok(&pack(sb, "src", "out", &[]));
    m["version"] = json!("0.1.5");
    m
}

/// A version packed below the newest one the index lists (a slip of the bump, `0.1.5`
/// after `0.2.0`) is published, but `install ID` and `update` go on taking the newest:
/// pack says so, naming the recipe.json to bump, and still succeeds (a backport for those
/// pinned to `0.1.x` is how such a version is meant).
#[test]
fn a_version_packed_below_the_newest_is_published_with_a_warning() {
    let sb = Sandbox::new();
    let mut m = alpha_published_then_lowered(&sb);
    write_recipe(&sb, "src/alpha", &m);
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "warning[version-below-latest]");
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    stderr_says(
        &o,
        "src/alpha/recipe.json:4:14: warning[version-below-latest]: alpha 0.1.5 is older than \
         0.2.0, the newest version out/hooks-index.json lists, so `install alpha` and \
         `update` still take 0.2.0 (0.1.5 serves pins such as `alpha@0.1.5`); to publish \
         these sources as the newest, bump `version` here above 0.2.0 (at /version)",
    );
    let index = read_json(&sb.join("out/hooks-index.json"));
    assert_eq!(index["recipes"][0]["latest"], "0.2.0");
    // The newest version packed says nothing.
    m["version"] = json!("0.3.0");
    write_recipe(&sb, "src/alpha", &m);
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    assert!(
        !stderr(&o).contains("version-below-latest"),
        "{}",
        stderr(&o)
    );
}

/// A `min_cli` edited by hand in the index (raised on a published version, at both levels
/// so the index still validates) is not what the published archive's recipe.json says, so
/// `catalog verify` fails on it; pack used to keep it and vouch for the edited index in
/// SHA256SUMS, and `--check` found only SHA256SUMS differing. The archive (its sha256 is the
/// index's) is the proof: pack puts the index right, with a warning, as for a `size`.
#[test]
fn a_min_cli_edited_in_the_index_is_put_back_as_the_published_archive_says() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let index_path = sb.join("out/hooks-index.json");
    let good = std::fs::read(&index_path).unwrap();
    let mut index = read_json(&index_path);
    index["updated_at"] = json!("2026-01-01T00:00:00Z");
    index["recipes"][0]["min_cli"] = json!("0.14.0");
    index["recipes"][0]["versions"][0]["min_cli"] = json!("0.14.0");
    write_index(&index_path, &index);
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("differs   hooks-index.json"), "{text}");
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    stderr_says(
        &o,
        "out/hooks-index.json:17:22: warning[min-cli-repaired]: alpha 0.1.0 was listed with min_cli \
         0.14.0, but its archive hooks-alpha-0.1.0.tar.gz (the published one: its sha256 is \
         the index's) says 0.13.0, so the index now lists 0.13.0; a new min_cli needs a new \
         version",
    );
    let mut expected: Value = serde_json::from_slice(&good).unwrap();
    expected["updated_at"] = json!("2026-01-01T00:00:00Z");
    assert_eq!(read_json(&index_path), expected);
    let o = sb
        .cmd()
        .args(["catalog", "verify", "out"])
        .output()
        .unwrap();
    ok(&o);
}

/// `pack --check` writes nothing, but its `size-repaired` and `min-cli-repaired` warnings
/// said "so the index now lists 7929" of an index it left as it was (found by a new-user
/// walk-through of the README): under `--check` they say what `hookpack pack` would list.
#[test]
fn check_says_what_pack_would_put_right_not_that_the_index_now_lists_it() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let index_path = sb.join("out/hooks-index.json");
    let size = std::fs::metadata(sb.join("out/hooks-alpha-0.1.0.tar.gz"))
        .unwrap()
        .len();
    let mut index = read_json(&index_path);
    index["recipes"][0]["min_cli"] = json!("0.14.0");
    index["recipes"][0]["versions"][0]["min_cli"] = json!("0.14.0");
    index["recipes"][0]["versions"][0]["size"] = json!(size + 1);
    write_index(&index_path, &index);
    let edited = std::fs::read(&index_path).unwrap();
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read(&index_path).unwrap(), edited);
    stderr_says(
        &o,
        &format!(
            "warning[size-repaired]: alpha 0.1.0 is listed with size {}, but its archive \
             hooks-alpha-0.1.0.tar.gz has {size} bytes; its sha256 is the index's, so the \
             archive is the published one and `hookpack pack` would list {size}",
            size + 1
        ),
    );
    stderr_says(
        &o,
        "warning[min-cli-repaired]: alpha 0.1.0 is listed with min_cli 0.14.0, but its \
         archive hooks-alpha-0.1.0.tar.gz (the published one: its sha256 is the index's) says \
         0.13.0, so `hookpack pack` would list 0.13.0",
    );
    assert!(!stderr(&o).contains("now lists"), "{}", stderr(&o));
}

/// alpha 0.1.0, then 0.2.0, packed into `out/`: the index's path and the index.
fn alpha_packed_at_0_1_and_0_2(sb: &Sandbox) -> (std::path::PathBuf, Value) {
    let mut m = manifest("alpha");
    write_recipe(sb, "src/alpha", &m);
    ok(&pack(sb, "src", "out", &[]));
    m["version"] = json!("0.2.0");
    write_recipe(sb, "src/alpha", &m);
    ok(&pack(sb, "src", "out", &[]));
    let index_path = sb.join("out/hooks-index.json");
    let index = read_json(&index_path);
    (index_path, index)
}

/// Found by the publisher walk-through: after a hand edit of a version's `sha256` in the
/// index, pack said the archive "is missing or lacks the sha256 the index lists" and
/// advised a version bump, though the archive in OUT was exactly what the sources give.
/// It now says so, with both digests, and that the index is what to put back.
#[test]
fn an_index_whose_sha256_was_edited_is_told_apart_from_a_lost_archive() {
    let sb = Sandbox::new();
    let (index_path, mut index) = alpha_packed_at_0_1_and_0_2(&sb);
    let real = index["recipes"][0]["versions"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let edited = format!(
        "{}{}",
        if real.starts_with('0') { "1" } else { "0" },
        &real[1..]
    );
    index["recipes"][0]["versions"][0]["sha256"] = json!(edited);
    write_index(&index_path, &index);
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        &format!(
            "alpha 0.2.0: out/hooks-alpha-0.2.0.tar.gz holds what the sources produce now \
             (sha256 {real}), but the index lists {edited} for it: if the index was edited by \
             hand, put it back from your last pack; if the archive was replaced after it was \
             published, copy the published one back from where the catalog is served"
        ),
    );
    assert!(!stderr(&o).contains("bump `version`"), "{}", stderr(&o));
    assert_eq!(snapshot(&sb.join("out")), before);
}

/// A `latest` set below the newest listed version (by hand, to hold it back or by mistake)
/// is kept by pack, which keeps a published recipe's entry; `catalog verify` fails on it.
/// pack said nothing, and `--check` called the catalog current: both now warn, naming the
/// index, the spot and the fix. Found by the publisher walk-through: `--check` then still
/// exited 0, so CI running it went green on a catalog `catalog verify` fails; it now fails.
#[test]
fn a_latest_below_the_newest_version_is_kept_with_a_warning() {
    let sb = Sandbox::new();
    let (index_path, mut index) = alpha_packed_at_0_1_and_0_2(&sb);
    index["recipes"][0]["latest"] = json!("0.1.0");
    write_index(&index_path, &index);
    let want =
        "out/hooks-index.json:9:17: warning[latest-not-newest]: alpha's `latest` is 0.1.0 but \
                0.2.0 is listed too, so `install alpha` takes 0.1.0, and `catalog verify` and \
                `pack --check` fail; pack keeps a published recipe's entry as it is, so set \
                `latest` to 0.2.0 here (at /recipes/0/latest)";
    for extra in [&["--check"][..], &[]] {
        let o = pack(&sb, "src", "out", extra);
        // SHA256SUMS vouches for the index as it was before the edit.
        assert_eq!(o.status.code(), Some(extra.len() as i32), "{}", stderr(&o));
        stderr_says(&o, want);
    }
    assert_eq!(read_json(&index_path)["recipes"][0]["latest"], "0.1.0");
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, want);
    stderr_says(
        &o,
        "out holds what the sources produce, but its index fails `catalog verify` (see the \
         warnings above: latest-not-newest); fix the index, then run `hookpack pack` without \
         --check",
    );
    // JSON says why (found by the diff review: exit 1 with no difference listed).
    let o = pack(&sb, "src", "out", &["--check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["differences"], json!([]), "{report:#}");
    assert_eq!(
        report["fails_verify"],
        json!(["latest-not-newest"]),
        "{report:#}"
    );
    // Put right, it is current.
    index["recipes"][0]["latest"] = json!("0.2.0");
    write_index(&index_path, &index);
    ok(&pack(&sb, "src", "out", &[]));
    ok(&pack(&sb, "src", "out", &["--check"]));
}

/// A published version taken out of the index by hand: pack keeps the index as it finds it,
/// so it dropped the version from SHA256SUMS too, in silence, and `catalog verify` (whose
/// advice is to pack again) then passed. The SHA256SUMS in OUT records what was published:
/// pack and `--check` warn of each archive it listed that the index no longer does.
#[test]
fn a_version_taken_out_of_the_index_by_hand_is_warned_of() {
    let sb = Sandbox::new();
    let (index_path, mut index) = alpha_packed_at_0_1_and_0_2(&sb);
    index["recipes"][0]["versions"]
        .as_array_mut()
        .unwrap()
        .retain(|v| v["version"] != "0.1.0");
    write_index(&index_path, &index);
    let want = "out/hooks-index.json: warning[version-unlisted]: out/SHA256SUMS lists \
                hooks-alpha-0.1.0.tar.gz, a published archive, which the index no longer \
                lists, so it leaves SHA256SUMS too and nobody can install or pin that version; \
                every published version stays listed, so put the index back from your last \
                pack (or the published one, with --merge), unless it is withdrawn on purpose";
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, want);
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    stderr_says(&o, want);
    // Said once: SHA256SUMS now agrees with the index.
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    assert!(!stderr(&o).contains("version-unlisted"), "{}", stderr(&o));

    // Found by a hostile sweep: SHA256SUMS was read by byte offsets, so behind a byte order
    // mark every name came out shifted (`7  hooks-alpha-…`), and each listed archive was
    // warned of as taken out of the index. It is read as `catalog verify` reads it.
    let sums = sb.join("out/SHA256SUMS");
    let text = std::fs::read_to_string(&sums).unwrap();
    std::fs::write(&sums, format!("\u{feff}{text}")).unwrap();
    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("version-unlisted"), "{}", stderr(&o));
}

/// Found by a hostile sweep: with a recipe's entry taken out of the index by hand, pack
/// put it back as new and replaced its archive in OUT with the same bytes (a new inode and
/// modification time), where files whose bytes would not change are never rewritten.
#[test]
fn an_archive_out_holds_byte_for_byte_is_not_rewritten() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let archive = sb.join("out/hooks-alpha-0.1.0.tar.gz");
    let before = std::fs::metadata(&archive).unwrap();
    let index_path = sb.join("out/hooks-index.json");
    let mut index = read_json(&index_path);
    index["recipes"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["id"] != "alpha");
    write_index(&index_path, &index);
    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    let after = std::fs::metadata(&archive).unwrap();
    assert_eq!(
        (after.ino(), after.mtime(), after.mtime_nsec()),
        (before.ino(), before.mtime(), before.mtime_nsec())
    );
    assert_eq!(
        read_json(&index_path)["recipes"][0]["id"],
        "alpha",
        "the entry is back"
    );
}

/// Found by the maintainer-side sweep: with `--out-dir .` (or `x/..`), pack took OUT for
/// its own parent and staged inside it, so a pack that wrote nothing, or failed, changed
/// OUT's modification time; the same folder named as `$PWD` was left untouched. Its parent
/// is where the folder really is.
#[test]
fn out_dir_dot_stages_beside_out_as_any_other_name() {
    use std::os::unix::fs::MetadataExt;
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    std::fs::create_dir_all(sb.join("out/sub")).unwrap();
    let stamp = |p: &str| {
        let m = std::fs::metadata(sb.join(p)).unwrap();
        (m.ino(), m.mtime(), m.mtime_nsec())
    };
    let before = stamp("out");
    let src = sb.join("src").display().to_string();
    for (cwd, out) in [("out", "."), ("out/sub", "..")] {
        let o = sb
            .cmd()
            .current_dir(sb.join(cwd))
            .args(["pack", "--recipes-dir", &src, "--out-dir", out])
            .args(["--updated-at", "2026-11-29T00:00:00Z"])
            .output()
            .unwrap();
        ok(&o);
        assert_eq!(stamp("out"), before, "{out}");
    }
}

/// Found by a hostile sweep: a fifo or a folder where a kept version's archive belongs was
/// warned of as a missing archive ("copy it back", which would put the file inside the
/// folder), and the pack went on, exit 0. It is refused, naming it and what it is.
#[test]
fn a_fifo_or_folder_in_a_kept_archive_s_place_is_refused() {
    let sb = Sandbox::new();
    alpha_packed_at_0_1_and_0_2(&sb);
    let old = sb.join("out/hooks-alpha-0.1.0.tar.gz");
    std::fs::remove_file(&old).unwrap();
    for (kind, make) in [("a folder", "mkdir"), ("a fifo (named pipe)", "mkfifo")] {
        let made = std::process::Command::new(make).arg(&old).status().unwrap();
        assert!(made.success());
        let before = snapshot(&sb.join("out"));
        for extra in [&[][..], &["--check"]] {
            let o = pack(&sb, "src", "out", extra);
            assert_eq!(o.status.code(), Some(1), "{kind} {extra:?}: {}", stderr(&o));
            stderr_says(
                &o,
                &format!(
                    "out/hooks-alpha-0.1.0.tar.gz: it is {kind}, where the index lists the \
                     published archive of alpha 0.1.0; move it away"
                ),
            );
            assert_eq!(snapshot(&sb.join("out")), before, "{kind} {extra:?}");
        }
        let _ = std::fs::remove_dir(&old);
        let _ = std::fs::remove_file(&old);
    }
}

/// A published version taken out of the index by hand, then packed again from changed
/// sources: pack took it for a new version and replaced its archive in OUT with other bytes,
/// in silence (re-publishing an id+version). Pack refuses to replace an archive OUT holds
/// with other bytes, or to give a version other bytes than the SHA256SUMS there records,
/// naming the file, both digests and the fixes; OUT stays as it was, and `--check` says
/// the same. The same bytes are fine (the entry comes back).
#[test]
fn a_version_dropped_from_the_index_is_not_packed_again_with_other_bytes() {
    let sb = Sandbox::new();
    let (index_path, mut index) = alpha_packed_at_0_1_and_0_2(&sb);
    let published = sb.join("out/hooks-alpha-0.1.0.tar.gz");
    let published_sha = hookpack::sha256::Sha256::of(&std::fs::read(&published).unwrap());
    index["recipes"][0]["versions"]
        .as_array_mut()
        .unwrap()
        .retain(|v| v["version"] != "0.1.0");
    write_index(&index_path, &index);
    // The sources go back to 0.1.0 with other contents (a backport, a slip of the bump).
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    let before = snapshot(&sb.join("out"));
    let want = format!(
        "alpha 0.1.0: out/hooks-alpha-0.1.0.tar.gz is already in out with sha256 \
         {published_sha}, though the index does not list it"
    );
    for extra in [&["--check"][..], &[]] {
        let o = pack(&sb, "src", "out", extra);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stderr_says(&o, &want);
        stderr_says(&o, "bump `version` in src/alpha/recipe.json");
        stderr_says(
            &o,
            "if it never was, move that archive out of the catalog folder and pack again",
        );
        assert_eq!(snapshot(&sb.join("out")), before);
    }
    // The archive gone too, SHA256SUMS still records what was published.
    std::fs::remove_file(&published).unwrap();
    let before = snapshot(&sb.join("out"));
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        &format!("alpha 0.1.0: out/SHA256SUMS lists hooks-alpha-0.1.0.tar.gz with sha256 {published_sha}"),
    );
    stderr_says(
        &o,
        "if it never was, remove that line from SHA256SUMS and pack again",
    );
    assert_eq!(snapshot(&sb.join("out")), before);
    // The published bytes again: packed, and listed again.
    sb.write("src/alpha/scripts/main.js", "process.exit(0);\n");
    ok(&pack(&sb, "src", "out", &[]));
    assert_eq!(
        hookpack::sha256::Sha256::of(&std::fs::read(&published).unwrap()),
        published_sha
    );
}

/// A TMPDIR that is not there (or not writable): pack of a source tree (assembled into a
/// temporary folder first) and `test` said "cannot create a temporary folder in
/// /nonexistent: No such file or directory (os error 2) at path \"…/hookpack-assembled-…\""
/// and exited 1, as if the recipes were at fault. It is the machine's failure (exit 3),
/// named with the fix, TMPDIR, and nothing is written.
#[test]
fn a_missing_tmpdir_is_the_machines_failure_and_names_tmpdir() {
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "alpha");
    let missing = sb.join("no-such-tmp");
    for args in [
        &["pack", "--recipes-dir", "src", "--out-dir", "out"][..],
        &["test", "src"],
    ] {
        let o = sb
            .cmd()
            .args(args)
            .env("TMPDIR", &missing)
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "error: cannot create a temporary folder in {}: No such file or directory (os \
                 error 2); set TMPDIR to a folder this user may write",
                missing.display()
            )),
            "{args:?}: {err}"
        );
        assert!(!err.contains("at path"), "{args:?}: {err}");
        assert!(!sb.join("out").exists());
    }
}

/// Re-packing a published version with other contents is refused; the refusal said only the
/// two digests and to bump the version, so a maintainer who thought nothing had changed
/// could not tell what had. It names the files that differ from the published archive
/// (changed, new, gone, executable bit), as the archive holds them.
#[test]
fn a_refused_republish_names_the_files_that_changed() {
    let sb = Sandbox::new();
    let m = manifest("alpha");
    write_recipe(&sb, "src/alpha", &m);
    sb.write("src/alpha/data/old.json", "{}\n");
    sb.write("src/alpha/run.sh", "exit 0\n");
    ok(&pack(&sb, "src", "out", &[]));
    let published = snapshot(&sb.join("out"));
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    sb.write("src/alpha/data/new.json", "{}\n");
    std::fs::remove_file(sb.join("src/alpha/data/old.json")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let run = sb.join("src/alpha/run.sh");
        std::fs::set_permissions(run, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(&o, "alpha 0.1.0 is already published");
    stderr_says(
        &o,
        "; against the published archive: changed scripts/main.js; new data/new.json; gone \
         data/old.json; executable bit changed run.sh",
    );
    assert_eq!(snapshot(&sb.join("out")), published);
}

/// Found by review: sources checked out on a file system that marks every file executable
/// (or with git's `core.fileMode=false`) differ from the published archive in modes only,
/// and the refusal's one fix was to bump the version. It now says to `chmod` them back.
#[cfg(unix)]
#[test]
fn a_republish_refused_for_modes_alone_says_to_chmod_them_back() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let published = snapshot(&sb.join("out"));
    let all_exec = |rel: &str| {
        std::fs::set_permissions(sb.join(rel), std::fs::Permissions::from_mode(0o777)).unwrap()
    };
    all_exec("src/alpha/recipe.json");
    all_exec("src/alpha/README.md");
    let o = pack(&sb, "src", "out", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    stderr_says(
        &o,
        "against the published archive: executable bit changed README.md, recipe.json; only \
         modes differ, so if these files are executable now by accident (a checkout on a file \
         system that marks every file executable, or git's `core.fileMode=false`), `chmod -x` \
         them in the sources and pack again instead",
    );
    assert_eq!(snapshot(&sb.join("out")), published);
    // Taken back, the sources pack as published.
    for rel in ["src/alpha/recipe.json", "src/alpha/README.md"] {
        std::fs::set_permissions(sb.join(rel), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    ok(&pack(&sb, "src", "out", &[]));
    assert_eq!(snapshot(&sb.join("out")), published);
}

/// A pack that rewrites only SHA256SUMS (edited or damaged by hand) or the index's text says
/// so; it said "(index unchanged)" alone, as for a pack that wrote nothing.
#[test]
fn a_pack_that_rewrites_only_the_lists_says_which() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    assert!(pack(&sb, "src", "out", &[]).status.success());
    let o = pack(&sb, "src", "out", &[]);
    stderr_says(&o, "(index unchanged)");
    sb.write("out/SHA256SUMS", "");
    let o = pack(&sb, "src", "out", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    stderr_says(
        &o,
        "(no index entry changed; rewrote SHA256SUMS, whose bytes differed)",
    );
    let index = std::fs::read_to_string(sb.join("out/hooks-index.json")).unwrap();
    sb.write("out/hooks-index.json", index.replace("\n", "\n  "));
    let o = pack(&sb, "src", "out", &["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["index_changed"], false);
    // SHA256SUMS lists the digest of the index pack writes, which is what it was.
    assert_eq!(r["rewritten"], json!(["hooks-index.json"]));
    let o = pack(&sb, "src", "out", &[]);
    stderr_says(&o, "(index unchanged)");
}

/// `--only lib` in a folder of recipe sources is told that lib/ holds the shared helpers
/// (copied into the recipes that import them), not a recipe; it listed the recipes alone.
#[test]
fn only_lib_says_lib_holds_the_shared_helpers() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    sb.write("src/lib/text.ts", "export const x = 1;\n");
    for verb in ["pack", "assemble"] {
        let o = sb
            .cmd()
            .args([
                verb,
                "--recipes-dir",
                "src",
                "--out-dir",
                "out",
                "--only",
                "lib",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stderr_says(&o, "holds the shared helpers");
        stderr_says(&o, "alpha, beta");
    }
}

/// `--out-dir .`: OUT is its own parent as the path reads (`.`), and locking both locked
/// one folder twice, so the pack waited for itself and gave up (exit 3).
#[test]
fn pack_into_the_current_folder_does_not_wait_for_itself() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    std::fs::create_dir_all(sb.join("cat")).unwrap();
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "../src", "--out-dir", "."])
        .current_dir(sb.join("cat"))
        .env("HOOKPACK_LOCK_TIMEOUT", "2")
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(names_in(&sb.join("cat")), PACKED_ALPHA);
}

/// The same, packed again with the other compression: `--compression zstd` wrote
/// hooks-alpha-0.1.0.tar.zst beside the published .tar.gz and listed 0.1.0 with the changed
/// contents (only a version-unlisted warning for the .tar.gz), a re-publish the refusal
/// missed because the file name differs. Refused as for the same name; the published
/// contents compressed otherwise are fine.
#[test]
fn a_version_dropped_from_the_index_is_not_packed_again_with_the_other_compression() {
    let sb = Sandbox::new();
    let (index_path, mut index) = alpha_packed_at_0_1_and_0_2(&sb);
    let published = sb.join("out/hooks-alpha-0.1.0.tar.gz");
    let published_sha = hookpack::sha256::Sha256::of(&std::fs::read(&published).unwrap());
    index["recipes"][0]["versions"]
        .as_array_mut()
        .unwrap()
        .retain(|v| v["version"] != "0.1.0");
    write_index(&index_path, &index);
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    let before = snapshot(&sb.join("out"));
    for extra in [
        &["--compression", "zstd", "--check"][..],
        &["--compression", "zstd"],
    ] {
        let o = pack(&sb, "src", "out", extra);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stderr_says(
            &o,
            &format!(
                "alpha 0.1.0: out/hooks-alpha-0.1.0.tar.gz is already in out with sha256 \
                 {published_sha} and other contents, though the index does not list it"
            ),
        );
        stderr_says(&o, "bump `version` in src/alpha/recipe.json");
        assert_eq!(snapshot(&sb.join("out")), before);
    }
    // The published contents, compressed with zstd: packed.
    sb.write("src/alpha/scripts/main.js", "process.exit(0);\n");
    ok(&pack(&sb, "src", "out", &["--compression", "zstd"]));
    assert!(sb.join("out/hooks-alpha-0.1.0.tar.zst").exists());
}

/// The `file:line:col` `validate` names for its finding `code` in `file`, run from the
/// sandbox, and the pointer it gives.
/// The line and column (1-based) of the `version` value in the JSON file `file`.
fn version_place(sb: &Sandbox, file: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(sb.join(file)).unwrap();
    let (n, l) = (text.lines().enumerate())
        .find(|(_, l)| l.contains("\"version\":"))
        .unwrap();
    let key = l.find("\"version\":").unwrap() + "\"version\":".len();
    let value = key + l[key..].find('"').unwrap();
    (n + 1, value + 1)
}

fn validate_place(sb: &Sandbox, file: &str, code: &str) -> (String, String) {
    let (_, v) = validate_json(sb, &[file]);
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("validate found no {code}: {v:#}"));
    let place = format!("{file}:{}:{}", d["line"], d["column"]);
    (place, d["pointer"].as_str().unwrap().to_string())
}

/// pack's warnings about a spot in a recipe.json said only its pointer (`(at /version)`),
/// where `validate` names the spot as `file:line:col`: the line and column of the value in
/// the recipe.json as written, under `--check` too.
#[test]
fn a_warning_at_a_spot_in_a_recipe_json_names_its_line_and_column() {
    let sb = Sandbox::new();
    let m = alpha_published_then_lowered(&sb);
    let text = serde_json::to_string_pretty(&m)
        .unwrap()
        .replace("  \"version\": ", "     \"version\":   ");
    sb.write("src/alpha/recipe.json", &text);
    let line = text
        .lines()
        .position(|l| l.contains("\"version\""))
        .unwrap()
        + 1;
    let want =
        format!("src/alpha/recipe.json:{line}:19: warning[version-below-latest]: alpha 0.1.5");
    for extra in [&["--check"][..], &[]] {
        let o = pack(&sb, "src", "out", extra);
        assert_eq!(o.status.code(), Some(extra.len() as i32), "{}", stderr(&o));
        stderr_says(&o, &want);
    }
}

/// pack's warnings about a spot in the index (a `latest` below the newest version, a
/// `size` put right) said only a pointer into the index pack would write; they name the
/// spot as `file:line:col`, as `validate` does: in the index pack wrote, and under
/// `--check` in the index as OUT holds it, where the entry may sit elsewhere (here a new
/// recipe sorts before it, and a new version before the one whose size is wrong) and the
/// pointer is the one there.
#[test]
fn a_warning_at_a_spot_in_the_index_names_its_line_and_column() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    ok(&pack(&sb, "src", "out", &[]));
    let mut m = manifest("alpha");
    m["version"] = json!("0.2.0");
    write_recipe(&sb, "src/alpha", &m);
    ok(&pack(&sb, "src", "out", &[]));
    let index_path = sb.join("out/hooks-index.json");
    let size = std::fs::metadata(sb.join("out/hooks-beta-0.1.0.tar.gz"))
        .unwrap()
        .len();
    let wrong = size + 1234;
    let mut index = read_json(&index_path);
    assert_eq!(index["recipes"][0]["id"], "alpha");
    index["recipes"][0]["latest"] = json!("0.1.0");
    index["recipes"][1]["versions"][0]["size"] = json!(wrong);
    write_index(&index_path, &index);
    write_recipe(&sb, "src/aaa", &manifest("aaa"));
    let mut m = manifest("beta");
    m["version"] = json!("0.2.0");
    write_recipe(&sb, "src/beta", &m);

    let o = pack(&sb, "src", "out", &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (place, pointer) = validate_place(&sb, "out/hooks-index.json", "latest-not-newest");
    assert_eq!(pointer, "/recipes/0/latest");
    stderr_says(&o, &format!("{place}: warning[latest-not-newest]: alpha's"));
    stderr_says(&o, "(at /recipes/0/latest)");
    // The wrong size is written once, on its own line.
    let text = std::fs::read_to_string(&index_path).unwrap();
    let (n, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(&format!("\"size\": {wrong}")))
        .unwrap();
    let col = l.find(&wrong.to_string()).unwrap() + 1;
    stderr_says(
        &o,
        &format!(
            "out/hooks-index.json:{}:{col}: warning[size-repaired]: beta 0.1.0 is listed",
            n + 1
        ),
    );
    stderr_says(&o, "(at /recipes/1/versions/0/size)");

    let o = pack(&sb, "src", "out", &[]);
    ok(&o);
    let (place, pointer) = validate_place(&sb, "out/hooks-index.json", "latest-not-newest");
    assert_eq!(pointer, "/recipes/1/latest");
    stderr_says(&o, &format!("{place}: warning[latest-not-newest]: alpha's"));
    stderr_says(&o, "(at /recipes/1/latest)");
    let text = std::fs::read_to_string(&index_path).unwrap();
    let index = read_json(&index_path);
    assert_eq!(index["recipes"][2]["versions"][1]["size"], json!(size));
    let said = stderr(&o);
    let spot = said
        .lines()
        .find(|l| l.contains("warning[size-repaired]"))
        .and_then(|l| l.strip_prefix("out/hooks-index.json:"))
        .and_then(|l| l.split_once(": warning"))
        .unwrap_or_else(|| panic!("{said}"))
        .0;
    let (n, col) = spot.split_once(':').unwrap();
    let (n, col): (usize, usize) = (n.parse().unwrap(), col.parse().unwrap());
    let line = text.lines().nth(n - 1).unwrap();
    assert!(
        line[col - 1..].starts_with(&format!("{size}")),
        "{spot}: {line}"
    );
    assert!(line.trim_start().starts_with("\"size\""), "{spot}: {line}");
    stderr_says(&o, "(at /recipes/2/versions/1/size)");
}

/// The folders a pack stages its archives in (`.hookpack-pack-…`) that are in `dir`.
#[cfg(unix)]
fn staging_folders(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".hookpack-pack-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Found by review: a Ctrl-C during a pack ended it at once, leaving its staging folder
/// (`.hookpack-pack-…`, as big as the archives built so far) beside OUT until the next
/// pack. The signal now stops the pack at its next read: the staging folder goes, OUT is
/// as it was, the error says so, and the process ends by the signal.
#[cfg(unix)]
#[test]
fn a_ctrl_c_while_packing_leaves_out_as_it_was_and_no_staging_folder() {
    use std::os::unix::process::ExitStatusExt as _;
    let sb = Sandbox::new();
    two_recipes(&sb, "recipes");
    assert!(pack(&sb, "recipes", "cat", &[]).status.success());
    let before = snapshot(&sb.join("cat"));
    // A new version with 8 MiB of text to deflate: seconds of work in a test build, so
    // the signal comes while the archive is being written.
    let mut m = manifest("alpha");
    m["version"] = json!("0.2.0");
    write_recipe(&sb, "recipes/alpha", &m);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let text: Vec<u8> = (0..8 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b"abcdefghijklmnop \n"[(x % 18) as usize]
        })
        .collect();
    sb.write("recipes/alpha/data/big.txt", text);
    let child = with_default_signals(&mut sb.std_cmd())
        .args(["pack", "--recipes-dir", "recipes", "--out-dir", "cat"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the staging folder is there, the archives are being built.
    let start = std::time::Instant::now();
    while staging_folders(&sb.join(".")).is_empty() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "no staging folder appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: kill(2) on the child, which is not reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGINT), "{err}");
    assert!(
        err.contains("interrupted by SIGINT; nothing was written: cat is as it was"),
        "{err}"
    );
    assert!(staging_folders(&sb.join(".")).is_empty());
    assert!(staging_folders(&sb.join("cat")).is_empty());
    assert_eq!(snapshot(&sb.join("cat")), before);
    // The next pack writes the new version.
    let o = pack(&sb, "recipes", "cat", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(sb.join("cat/hooks-alpha-0.2.0.tar.gz").is_file());
}

/// Found by review: `pack --format github` was accepted but printed no annotation: the
/// recipes' problems went to stderr as text, where a GitHub Actions log shows them on no
/// file. They are now workflow commands on stdout, each on its file, line and column, with
/// the error that ended the command last.
#[test]
fn pack_format_github_annotates_the_problems() {
    let sb = Sandbox::new();
    two_recipes(&sb, "src");
    let mut m = manifest("alpha");
    m["version"] = json!("0.1");
    sb.write(
        "src/alpha/recipe.json",
        serde_json::to_vec_pretty(&m).unwrap(),
    );
    let o = pack(&sb, "src", "out", &["--format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with(
            "::error file=src/alpha/recipe.json,line=4,col=14,title=hookpack version-invalid::"
        ),
        "{out}"
    );
    assert_eq!(
        lines[1],
        "::error title=hookpack recipes-invalid::1 problem(s) in the recipes; nothing was written"
    );
    // The error still says itself on stderr.
    stderr_says(
        &o,
        "error: 1 problem(s) in the recipes; nothing was written",
    );
    assert!(!sb.join("out").exists());
}
