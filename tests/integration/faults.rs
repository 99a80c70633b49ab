//! Environment faults: a full disk and a read-only profile give exit 3 and leave the profile
//! as it was. The profile lives on a tiny tmpfs mounted by the test (CI runs as root).

use crate::common::*;
use crate::pack::{names_in, snapshot, strace, under_strace, PACKED_ALPHA};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted at a folder, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .expect("mount");
        assert!(
            o.status.success(),
            "these tests mount a tmpfs and need root (CI runs as root): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        Mount(at.to_path_buf())
    }

    fn read_only(&self) {
        let o = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// hookpack under strace, its renames given `inject` (`error=EIO:when=3+`,
/// `delay_enter=2000000:when=2`). `?`: a name the architecture lacks (aarch64 has no
/// rename) is no error.
#[cfg(target_os = "linux")]
fn failing_renames(sb: &Sandbox, inject: &str) -> Command {
    const RENAMES: &str = "?rename,?renameat,?renameat2";
    under_strace(
        sb,
        &[
            "-e",
            &format!("trace={RENAMES}"),
            "-e",
            &format!("inject={RENAMES}:{inject}"),
        ],
    )
}

const USER: &str =
    "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}}\n";

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_changes_nothing() {
    let sb = Sandbox::new();
    // A recipe larger than the file system it is installed into.
    write_recipe(&sb, "src/big", &manifest("big"));
    let noise: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    sb.write("src/big/data.bin", noise);
    pack_src_into_cat(&sb);
    let _m = Mount::tmpfs(&sb.join("prof"), "1m");
    sb.write("prof/hooks.json", USER);
    let before = snapshot(&sb.join("prof"));
    let o = sb
        .cmd()
        .args(["install", "big", "--profile", "prof", "--index", "cat"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("No space left"), "{err}");
    // A file of the archive could not be written: the archive is fine (it said "refused
    // the archive").
    assert!(err.contains("cannot write"), "{err}");
    assert!(err.contains("prof/.hookpack-staging/"), "{err}");
    assert!(!err.contains("refused"), "{err}");
    assert_eq!(snapshot(&sb.join("prof")), before);
    let names: Vec<String> = std::fs::read_dir(sb.join("prof"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["hooks.json"], "leftovers in the profile");
}

/// An archive bigger than the room left in the profile: the copy fetched into staging
/// cannot be written, and the error names that copy, not the archive, which was read whole
/// (it said "reading cat/hooks-big-0.1.0.tar.gz failed midway").
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_while_fetching_names_the_copy_not_the_archive() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/big", &manifest("big"));
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..600_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    sb.write("src/big/data.bin", noise);
    pack_src_into_cat(&sb);
    let _m = Mount::tmpfs(&sb.join("prof"), "256k");
    sb.write("prof/hooks.json", USER);
    let before = snapshot(&sb.join("prof"));
    let o = sb
        .cmd()
        .args(["install", "big", "--profile", "prof", "--index", "cat"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("No space left"), "{err}");
    assert!(err.contains("cannot write"), "{err}");
    assert!(err.contains("prof/.hookpack-staging/"), "{err}");
    assert!(!err.contains("reading"), "{err}");
    assert_eq!(snapshot(&sb.join("prof")), before);
}

/// `doctor --fix` on a read-only profile with nothing to recover (a profile mounted
/// read-only into a container, checked in CI) failed (exit 3) opening the profile lock it
/// needs only to finish an interrupted change; it reports, and exits 0 when all is well.
#[cfg(target_os = "linux")]
#[test]
fn doctor_fix_on_a_sound_read_only_profile_needs_no_lock() {
    let sb = Sandbox::new();
    let m = Mount::tmpfs(&sb.join("prof"), "4m");
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap());
    ok(&sb
        .cmd()
        .args(["trust", "--all", "--profile", "prof"])
        .output()
        .unwrap());
    let before = snapshot(&sb.join("prof"));
    m.read_only();
    let o = sb
        .cmd()
        .args(["doctor", "--fix", "--profile", "prof"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(snapshot(&sb.join("prof")), before);
}

/// `trust` takes the profile's lock shared, opening its lock file for reading only, so a
/// profile on a read-only file system (its lock file made by the install) is trusted as
/// before: only the trust file, in FINCLAW_HOME, is written.
#[cfg(target_os = "linux")]
#[test]
fn trust_on_a_read_only_profile_works() {
    let sb = Sandbox::new();
    let m = Mount::tmpfs(&sb.join("prof"), "4m");
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap());
    assert!(sb.join("prof/.hookpack.lock").is_file());
    let before = snapshot(&sb.join("prof"));
    m.read_only();
    let o = sb
        .cmd()
        .args(["trust", "--all", "--profile", "prof", "--format", "json"])
        .output()
        .unwrap();
    ok(&o);
    let changes: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(changes.to_string().contains("\"trusted\""), "{changes:#}");
    assert_eq!(snapshot(&sb.join("prof")), before);
}

#[cfg(target_os = "linux")]
#[test]
fn a_read_only_profile_changes_nothing() {
    let sb = Sandbox::new();
    let m = Mount::tmpfs(&sb.join("prof"), "4m");
    sb.write("prof/hooks.json", USER);
    let before = snapshot(&sb.join("prof"));
    m.read_only();
    for args in [&["install", "tool-gate"][..], &["remove", "tool-gate"][..]] {
        let o = sb
            .cmd()
            .args(args)
            .args(["--profile", "prof"])
            .output()
            .unwrap();
        let code = o.status.code();
        let err = String::from_utf8_lossy(&o.stderr);
        // Both need the profile lock, which cannot be created on a read-only file system.
        assert_eq!(code, Some(3), "{} {err}", args[0]);
        assert!(err.contains("Read-only file system"), "{err}");
        assert_eq!(snapshot(&sb.join("prof")), before);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn pack_onto_a_full_disk_names_the_archive_and_the_users_file() {
    // It named `/tmp/hookpack-assembled-…/big/data.bin`, the assembled copy of a source
    // tree (gone by then, and on another file system than the one that was full).
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "big");
    // Bytes deflate cannot shrink (xorshift), so the archive outgrows the disk.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let noise: Vec<u8> = (0..8_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    sb.write("src/big/data.bin", noise);
    let _m = Mount::tmpfs(&sb.join("disk"), "1m");
    let before = snapshot(&sb.join("disk"));
    let err = pack_out_of_room(&sb);
    assert!(
        err.contains("hooks-big-0.1.0.tar.gz") && err.contains("disk/"),
        "{err}"
    );
    // Written while adding that file: it is named as the user knows it.
    assert!(err.contains("src/big/data.bin (as assembled)"), "{err}");
    assert!(!err.contains("hookpack-assembled-"), "{err}");
    assert_eq!(snapshot(&sb.join("disk")), before);
}

/// Found by review: with `$TMPDIR` full, pack (which assembles source trees there first)
/// said "cannot copy src/big/data.bin: No space left on device", blaming the user's file
/// on a disk that had room. It names the copy it was writing, on the full disk, too.
#[cfg(target_os = "linux")]
#[test]
fn pack_with_a_full_tmpdir_names_the_copy_it_was_writing() {
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "big");
    sb.write("src/big/data.bin", vec![7u8; 4_000_000]);
    let _m = Mount::tmpfs(&sb.join("tmp"), "1m");
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .env("TMPDIR", sb.join("tmp"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let copy = format!(
        "cannot copy src/big/data.bin to {}/",
        sb.join("tmp").display()
    );
    assert!(err.contains(&copy), "{err}");
    assert!(err.contains("/big/data.bin: No space left"), "{err}");
    assert!(!sb.join("cat").exists(), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn an_assemble_whose_swap_fails_puts_back_what_it_had_moved() {
    // Found by review: assemble deleted the folders of recipes whose sources are gone
    // before swapping the others in, so a swap that failed (here: an OUT/<id> that is a
    // mount point, which rename refuses) had already lost them.
    let sb = Sandbox::new();
    for id in ["a", "gone"] {
        write_recipe(&sb, &format!("recipes/{id}"), &manifest(id));
    }
    let assemble = |sb: &Sandbox| {
        sb.cmd()
            .args(["assemble", "--recipes-dir", "recipes", "--out-dir", "out"])
            .output()
            .unwrap()
    };
    assert_eq!(assemble(&sb).status.code(), Some(0));
    std::fs::remove_dir_all(sb.join("recipes/gone")).unwrap();
    let _m = Mount::tmpfs(&sb.join("out/a"), "1m");
    let before = snapshot(&sb.join("out"));
    let o = assemble(&sb);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("out/a"), "{err}");
    assert_eq!(snapshot(&sb.join("out")), before, "{err}");
}

/// Re-packing unchanged sources writes nothing, so a catalog on a read-only file system
/// (OUT inside it, or OUT its mount point) packs as current, exit 0 and OUT as it was; a
/// pack that has something to write there still fails as the environment's fault (exit 3)
/// (found by a maintainer-side sweep: the unchanged pack failed creating its staging folder).
#[cfg(target_os = "linux")]
#[test]
fn an_unchanged_catalog_on_a_read_only_file_system_packs_as_current() {
    for (mount, out) in [("disk", "disk/cat"), ("cat", "cat")] {
        let sb = Sandbox::new();
        write_recipe(&sb, "src/alpha", &manifest("alpha"));
        let m = Mount::tmpfs(&sb.join(mount), "4m");
        let pack = |extra: &[&str]| {
            sb.cmd()
                .args(["pack", "--recipes-dir", "src", "--out-dir", out])
                .args(extra)
                .output()
                .unwrap()
        };
        ok(&pack(&[]));
        m.read_only();
        let before = snapshot(&sb.join(out));
        for extra in [&[][..], &["--check"][..]] {
            let o = pack(extra);
            ok(&o);
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(!text.contains("new"), "{out} {extra:?}: {text}");
            assert_eq!(snapshot(&sb.join(out)), before, "{out} {extra:?}");
        }
        write_recipe(&sb, "src/beta", &manifest("beta"));
        let o = pack(&[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{out}: {err}");
        assert!(err.contains("Read-only file system"), "{out}: {err}");
        assert_eq!(snapshot(&sb.join(out)), before, "{out}");
    }
}

/// A disk that fills up while a change writes the new `hooks.json` (after `hooks.json.bak`
/// was replaced) rolls the change back before the error is reported. A `hooks.json.bak`
/// that was a symbolic link came back as a regular file, the previous `hooks.json`: the
/// link was lost. The link itself is now put back, its target untouched. The error names
/// `hooks.json` (it named the temporary file being written, `.hookpack-XXXXXX`).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_mid_commit_puts_back_a_backup_that_is_a_link() {
    use std::io::Write as _;
    let sb = Sandbox::new();
    write_recipe(&sb, "src/demo", &manifest("demo"));
    pack_src_into_cat(&sb);
    let _m = Mount::tmpfs(&sb.join("prof"), "4m");
    // Big enough that its backup fits in what is left and the new file then does not.
    let doc = serde_json::json!({"description": "x".repeat(500_000), "hooks": {}});
    sb.write("prof/hooks.json", doc.to_string());
    let kept = "{\"hooks\": {\"Stop\": []}}\n";
    let target = sb.write("elsewhere/hooks.json.bak", kept);
    std::os::unix::fs::symlink(&target, sb.join("prof/hooks.json.bak")).unwrap();
    // Fill the disk, then leave about 700 KB free.
    let filler = sb.join("prof/filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    while f.write(&[0u8; 65536]).is_ok_and(|n| n > 0) {}
    let len = f.metadata().unwrap().len();
    f.set_len(len - 700_000).unwrap();
    drop(f);
    let state = || {
        let mut prof = sandbox_state(&sb.join("prof"));
        prof.remove("filler");
        (prof, sandbox_state(&sb.join("elsewhere")))
    };
    let before = state();
    assert_eq!(
        before.0["hooks.json.bak"],
        format!("link -> {}", target.display())
    );
    let o = sb
        .cmd()
        .args(["install", "demo", "--profile", "prof", "--index", "cat"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("No space left"), "{err}");
    // The file the user knows, not the temporary copy that was being written.
    assert!(err.contains("prof/hooks.json"), "{err}");
    assert!(!err.contains(".hookpack-"), "{err}");
    assert_eq!(state(), before, "{err}");
    assert!(!sb.join("prof/.hookpack-journal.json").exists(), "{err}");
}

/// A file system that runs out of room once the archives are written: pack fails (exit 3)
/// with OUT exactly as it was. The index and SHA256SUMS were written only after the
/// archives had moved in, so a failure there left new archives in OUT beside the old index.
#[cfg(target_os = "linux")]
#[test]
fn a_pack_that_cannot_write_its_index_leaves_out_as_it_was() {
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    // Inodes for the root, the staging folder, the two archives and one more: not for all
    // of OUT, the index and SHA256SUMS.
    let _m = Mount::tmpfs(&sb.join("disk"), "1m,nr_inodes=5");
    let err = pack_out_of_room(&sb);
    assert_eq!(
        snapshot(&sb.join("disk")),
        std::collections::BTreeMap::new(),
        "{err}"
    );
    assert!(
        err.contains("disk/cat/hooks-index.json") || err.contains("disk/cat/SHA256SUMS"),
        "{err}"
    );
}

/// `hookpack pack --recipes-dir src --out-dir disk/cat`, expected to fail for want of room
/// on `disk` (exit 3, "No space left"); returns what it printed on stderr.
#[cfg(target_os = "linux")]
fn pack_out_of_room(sb: &Sandbox) -> String {
    let err = pack_src_expecting(sb, "disk/cat", 3);
    assert!(err.contains("No space left"), "{err}");
    err
}

/// `hookpack pack --recipes-dir src --out-dir OUT`, expected to exit with `code`; returns
/// what it printed on stderr.
#[cfg(target_os = "linux")]
fn pack_src_expecting(sb: &Sandbox, out: &str, code: i32) -> String {
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", out])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{err}");
    err
}

/// A file made immutable (`chattr +i`, which root too must undo before it can replace or
/// remove it): a rename over it fails with EPERM. Undone on drop, so the sandbox can go.
#[cfg(target_os = "linux")]
struct Immutable(PathBuf);

#[cfg(target_os = "linux")]
impl Immutable {
    fn set(path: &Path) -> Immutable {
        set_immutable(path, true);
        Immutable(path.to_path_buf())
    }
}

#[cfg(target_os = "linux")]
impl Drop for Immutable {
    fn drop(&mut self) {
        set_immutable(&self.0, false);
    }
}

#[cfg(target_os = "linux")]
fn set_immutable(path: &Path, on: bool) {
    use std::os::fd::AsRawFd;
    const FS_IMMUTABLE_FL: libc::c_long = 0x10;
    let f = std::fs::File::open(path).unwrap();
    let mut flags: libc::c_long = 0;
    // SAFETY: both ioctls take a pointer to a long, which lives across the call.
    let got = unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) };
    assert_eq!(
        got,
        0,
        "FS_IOC_GETFLAGS {}",
        std::io::Error::last_os_error()
    );
    flags = if on {
        flags | FS_IMMUTABLE_FL
    } else {
        flags & !FS_IMMUTABLE_FL
    };
    let set = unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_SETFLAGS, &flags) };
    assert_eq!(
        set,
        0,
        "FS_IOC_SETFLAGS on {} needs root (CI runs as root): {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}

/// An archive that cannot move into OUT after another has (here its rename fails, as it
/// does over a file in its place that cannot be replaced): pack fails with OUT exactly as
/// it was. The archive that had moved in stayed in OUT, listed by no index. (A stray file
/// of other bytes in an archive's place is refused before anything is built now, as one
/// a version dropped from the index left.)
#[cfg(target_os = "linux")]
#[test]
fn a_pack_whose_second_archive_cannot_move_in_takes_the_first_back() {
    let sb = Sandbox::new();
    for id in ["alpha", "zulu"] {
        write_recipe(&sb, &format!("src/{id}"), &manifest(id));
    }
    sb.write("cat/notes.txt", "kept\n");
    let before = snapshot(&sb.join("cat"));
    // The commit's renames: alpha's archive, then zulu's (the second, failing).
    let o = failing_renames(&sb, "error=EPERM:when=2")
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .env("TMPDIR", sb.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("hooks-zulu-0.1.0.tar.gz"), "{err}");
    assert_eq!(snapshot(&sb.join("cat")), before, "{err}");
    assert_no_staging_left(&sb);
}

/// SHA256SUMS that cannot be replaced once the index has been: pack fails with OUT exactly
/// as it was, the old index back in place and the new archive gone again.
#[cfg(target_os = "linux")]
#[test]
fn a_pack_whose_sums_cannot_move_in_puts_the_old_index_back() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    pack_src_into_cat(&sb);
    write_recipe(&sb, "src/beta", &manifest("beta"));
    let _i = Immutable::set(&sb.join("cat/SHA256SUMS"));
    let before = snapshot(&sb.join("cat"));
    let err = pack_src_expecting(&sb, "cat", 3);
    assert!(err.contains("SHA256SUMS"), "{err}");
    assert_eq!(snapshot(&sb.join("cat")), before, "{err}");
    assert_no_staging_left(&sb);
}

/// Nothing of pack's staging (`.hookpack-pack-*`) is left beside or in `cat`.
#[cfg(target_os = "linux")]
fn assert_no_staging_left(sb: &Sandbox) {
    for dir in [sb.join(""), sb.join("cat")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".hookpack-pack-"),
                "{name} left in {dir:?}"
            );
        }
    }
}

/// A catalog folder this user may write in a folder it may not (a web root's `catalog/`
/// owned by the maintainer; here the parent is made immutable, which root too must obey):
/// pack stages inside OUT, and leaves nothing of it behind. It failed with "cannot create
/// staging folder in pub: Permission denied".
#[cfg(target_os = "linux")]
#[test]
fn pack_into_a_writable_folder_of_an_unwritable_one_stages_inside_it() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    std::fs::create_dir_all(sb.join("pub/cat")).unwrap();
    let _i = Immutable::set(&sb.join("pub"));
    pack_src_expecting(&sb, "pub/cat", 0);
    assert_eq!(names_in(&sb.join("pub/cat")), PACKED_ALPHA);
    let left: Vec<_> = std::fs::read_dir(sb.join("pub/cat"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Neither OUT nor its parent writable: the error names the folder and says what to make
/// writable.
#[cfg(target_os = "linux")]
#[test]
fn pack_where_nothing_is_writable_says_what_to_make_writable() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    std::fs::create_dir_all(sb.join("pub/cat")).unwrap();
    let _c = Immutable::set(&sb.join("pub/cat"));
    let _p = Immutable::set(&sb.join("pub"));
    let err = pack_src_expecting(&sb, "pub/cat", 3);
    assert!(err.contains("pub/cat"), "{err}");
    assert!(err.contains("a folder this user may write"), "{err}");
    assert!(snapshot(&sb.join("pub")).is_empty());
}

/// A staging folder a crashed pack left in OUT (or beside it) is removed by the next pack
/// into OUT; one of a process still running is left alone.
#[cfg(target_os = "linux")]
#[test]
fn pack_removes_staging_left_by_a_pack_that_died() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = format!(".hookpack-pack-{}-x1", gone.id());
    let live = format!(".hookpack-pack-{}-x2", std::process::id());
    for dir in ["cat/", ""] {
        sb.write(&format!("{dir}{dead}/hooks-alpha-0.1.0.tar.gz"), "partial");
        sb.write(&format!("{dir}{live}/hooks-alpha-0.1.0.tar.gz"), "partial");
    }
    pack_src_into_cat(&sb);
    for dir in [sb.join("cat"), sb.join("")] {
        assert!(!dir.join(&dead).exists(), "{dead} left in {dir:?}");
        assert!(dir.join(&live).exists(), "{live} removed from {dir:?}");
    }
}

/// A commit whose undo fails too (here every rename from SHA256SUMS's on fails, so the old
/// index cannot be put back) stops undoing there: the new index stays, and so must every
/// archive it names. The undo went on and removed the new archive, leaving an index in OUT
/// that names an archive not there.
#[cfg(target_os = "linux")]
#[test]
fn a_commit_whose_undo_fails_leaves_no_index_naming_a_missing_archive() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    pack_src_into_cat(&sb);
    write_recipe(&sb, "src/beta", &manifest("beta"));
    // The commit's renames: beta's archive, the index, SHA256SUMS (the third, failing), then
    // the undo's putting back of the old index (failing too).
    let o = failing_renames(&sb, "error=EIO:when=3+")
        .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
        .env("TMPDIR", sb.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot replace cat/SHA256SUMS"), "{err}");
    assert!(err.contains("could not be taken back"), "{err}");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sb.join("cat/hooks-index.json")).unwrap()).unwrap();
    let mut named = Vec::new();
    for r in index["recipes"].as_array().unwrap() {
        for v in r["versions"].as_array().unwrap() {
            named.push(v["url"].as_str().unwrap().to_string());
        }
    }
    assert!(named.iter().any(|u| u.contains("beta")), "{named:?}\n{err}");
    for url in &named {
        assert!(sb.join("cat").join(url).is_file(), "{url} gone\n{err}");
    }
    // What stays of this pack is named, so the user knows OUT is not as it was.
    assert!(err.contains("cat/hooks-beta-0.1.0.tar.gz"), "{err}");
}

/// A staging folder whose pid names no process here but that a running pack holds (one in
/// another pid namespace: a container packing into a catalog nested in this OUT, or this
/// OUT nested in its) is left alone; the test holds the folder's lock as such a pack does.
/// Its folder was removed from under it, failing its pack.
#[cfg(target_os = "linux")]
#[test]
fn pack_leaves_staging_a_running_pack_holds_whatever_its_pid() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let held = format!(".hookpack-pack-{}-x3", gone.id());
    sb.write(&format!("{held}/hooks-alpha-0.1.0.tar.gz"), "partial");
    let lock = std::fs::File::open(sb.join(&held)).unwrap();
    lock.try_lock().unwrap();
    pack_src_into_cat(&sb);
    assert!(sb.join(&held).is_dir(), "{held} removed while held");
    drop(lock);
    write_recipe(&sb, "src/beta", &manifest("beta"));
    pack_src_into_cat(&sb);
    assert!(!sb.join(&held).exists(), "{held} left once no pack held it");
}

/// OUT bind-mounted from a folder of the same file system (a container's volume): pack
/// staged beside OUT, as for a plain folder (the device numbers are the same), and failed
/// at the commit with "Invalid cross-device link"; it stages inside OUT, as for any mount.
#[cfg(target_os = "linux")]
#[test]
fn pack_into_a_bind_mount_of_the_same_file_system_stages_inside_it() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    std::fs::create_dir_all(sb.join("real")).unwrap();
    std::fs::create_dir_all(sb.join("site/cat")).unwrap();
    let o = Command::new("mount")
        .args(["--bind"])
        .arg(sb.join("real"))
        .arg(sb.join("site/cat"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "these tests mount and need root (CI runs as root): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _m = Mount(sb.join("site/cat"));
    pack_src_expecting(&sb, "site/cat", 0);
    assert_eq!(names_in(&sb.join("real")), PACKED_ALPHA);
}

/// Makes `pub/cat`, a catalog folder of user nobody's in a folder others may enter but not
/// list (mode 711, as many home folders are), and returns a copy of hookpack nobody can run
/// (the build's may be in a folder nobody cannot enter).
#[cfg(target_os = "linux")]
fn catalog_in_a_711_folder(sb: &Sandbox) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(sb.join("pub/cat")).unwrap();
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    for (path, mode) in [("", 0o755), ("pub", 0o711), ("pub/cat", 0o755)] {
        std::fs::set_permissions(sb.join(path), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let o = Command::new("chown")
        .args(["65534", "pub/cat"])
        .current_dir(sb.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    bin
}

/// `hookpack ARGS` run as user nobody (setpriv, from util-linux; CI runs as root, who may
/// become anyone) in the sandbox, with `bin` a copy of hookpack nobody can run.
#[cfg(target_os = "linux")]
fn hookpack_as_nobody(sb: &Sandbox, bin: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin)
        .args(args)
        .current_dir(sb.path())
        .env("HOME", sb.path())
        .env("TMPDIR", sb.path())
        .env("NO_COLOR", "1");
    cmd
}

/// `hookpack pack --recipes-dir SRC --out-dir pub/cat` run as user nobody.
#[cfg(target_os = "linux")]
fn pack_as_nobody(sb: &Sandbox, bin: &Path, src: &str) -> Command {
    hookpack_as_nobody(
        sb,
        bin,
        &["pack", "--recipes-dir", src, "--out-dir", "pub/cat"],
    )
}

/// A source tree whose `src/` this user may not read: `validate` exited 3 naming the folder,
/// while `assemble` and `pack` exited 1 (the machine's failure taken for the recipes'), and
/// all three also said `src/main.ts` "is not there", which it is. All exit 3 now, naming
/// the folder, and claim nothing of what they could not look at.
#[cfg(target_os = "linux")]
#[test]
fn a_source_folder_that_cannot_be_read_is_the_machines_failure_not_a_missing_script() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let mut m = manifest("alpha");
    m["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = "node scripts/main.js".into();
    sb.write(
        "src/alpha/recipe.json",
        serde_json::to_vec_pretty(&m).unwrap(),
    );
    sb.write("src/alpha/README.md", "# alpha\n");
    sb.write("src/alpha/src/main.ts", "process.exit(0);\n");
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        sb.join("src/alpha/src"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    std::fs::create_dir(sb.join("out")).unwrap();
    std::os::unix::fs::chown(sb.join("out"), Some(65534), Some(65534)).unwrap();
    for args in [
        &["validate", "src"][..],
        &["assemble", "--recipes-dir", "src", "--out-dir", "out"],
        &["pack", "--recipes-dir", "src", "--out-dir", "out"],
    ] {
        let o = hookpack_as_nobody(&sb, &bin, args).output().unwrap();
        // validate prints its findings on stdout, the others on stderr.
        let err = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("src/alpha/src: error[io-error]"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("script-missing"), "{args:?}: {err}");
        assert_eq!(names_in(&sb.join("out")), Vec::<String>::new(), "{args:?}");
    }
}

/// Found by review: pack names every recipe refused against what is published in one run,
/// but a later recipe's failure to read (here: a published archive this user may not read)
/// ended the run with that error alone, and the refusal before it went unsaid.
#[cfg(target_os = "linux")]
#[test]
fn a_failure_after_a_refusal_does_not_hide_it() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    crate::pack::two_recipes(&sb, "src");
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "src", "--out-dir", "out"])
        .output()
        .unwrap());
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(sb.join("out"), Some(65534), Some(65534)).unwrap();
    let beta = sb.join("out/hooks-beta-0.1.0.tar.gz");
    std::fs::set_permissions(&beta, std::fs::Permissions::from_mode(0o600)).unwrap();
    sb.write("src/alpha/scripts/main.js", "process.exit(1);\n");
    sb.write("src/beta/scripts/main.js", "process.exit(2);\n");
    let before = crate::pack::snapshot(&sb.join("out"));
    let o = hookpack_as_nobody(
        &sb,
        &bin,
        &["pack", "--recipes-dir", "src", "--out-dir", "out"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("src/alpha/recipe.json:")
            && err.contains(": error[republish]: alpha 0.1.0 is already published")
            && err.contains("hooks-beta-0.1.0.tar.gz")
            && err.contains("Permission denied")
            && err.contains("(and 1 more recipe is refused"),
        "{err}"
    );
    assert_eq!(crate::pack::snapshot(&sb.join("out")), before);
}

/// Found by a hostile sweep: `new` in a folder this user may not write said "cannot
/// create folder ./.my-gate.new-…: Permission denied", naming a hidden staging folder the
/// user never asked for, with no fix. It names the folder given and the fix.
#[cfg(target_os = "linux")]
#[test]
fn new_in_a_folder_this_user_may_not_write_names_it_and_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("theirs")).unwrap();
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = hookpack_as_nobody(&sb, &bin, &["new", "my-gate", "--dir", "theirs"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "error: cannot write in theirs: Permission denied (os error 13); `new` writes the \
             recipe there: give --dir a folder this user may write"
        ),
        "{err}"
    );
    assert!(!err.contains(".new-"), "{err}");
    assert_eq!(std::fs::read_dir(sb.join("theirs")).unwrap().count(), 0);
}

/// Found by a hostile sweep: `remove` (or `install`) in a profile this user may not write
/// said "cannot create folder …/.hookpack-staging: Permission denied" and no more. It says
/// why the profile must be writable, and the fix; nothing changes.
#[cfg(target_os = "linux")]
#[test]
fn a_change_in_a_profile_this_user_may_not_write_names_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    ok(&sb
        .cmd()
        .args(["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap());
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = crate::pack::snapshot(&sb.join("prof"));
    let remove = ["remove", "tool-gate", "--profile", "prof"];
    let install = ["install", "audit-log", "--profile", "prof"];
    let lock = "/prof/.hookpack.lock: Permission denied (os error 13); the commands that \
                write here take this lock first, and this user may not write it: give this \
                user write permission on the file";
    let staging = "Permission denied (os error 13); every change is staged in the profile \
                   before it is made, and this user may not write in ";
    // install stages before it locks; remove locks first. Then, with a lock file the user
    // may write in a profile it may not, remove meets the staging folder too.
    for (args, said) in [(remove, lock), (install, staging), (remove, staging)] {
        if args == remove && said == staging {
            let lock_file = sb.join("prof/.hookpack.lock");
            std::fs::set_permissions(&lock_file, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
        let o = hookpack_as_nobody(&sb, &bin, &args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert_eq!(crate::pack::snapshot(&sb.join("prof")), before, "{args:?}");
    }
}

/// Found by review: `remove` in a profile of this user's whose `hooks/` it may not write
/// (`chmod a-w`) said "cannot rename …/hooks/tool-gate to …/old: Permission denied (os
/// error 13)" and no more. It names the folder and the fix; nothing changes, and once the
/// folder is writable the remove goes through.
#[cfg(target_os = "linux")]
#[test]
fn a_remove_from_a_write_protected_hooks_folder_names_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let remove = ["remove", "tool-gate", "--profile", "prof"];
    let o = hookpack_as_nobody(&sb, &bin, &["install", "tool-gate", "--profile", "prof"])
        .output()
        .unwrap();
    ok(&o);
    let hooks = sb.join("prof/hooks");
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = crate::pack::snapshot(&sb.join("prof"));
    let o = hookpack_as_nobody(&sb, &bin, &remove).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let said = format!(
        "Permission denied (os error 13); this user may not change {} and ",
        hooks.display()
    );
    assert!(err.contains(&said), "{err}");
    assert!(
        err.contains(": run the command as the owner, or give this user write permission there"),
        "{err}"
    );
    assert_eq!(crate::pack::snapshot(&sb.join("prof")), before);
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o755)).unwrap();
    ok(&hookpack_as_nobody(&sb, &bin, &remove).output().unwrap());
    assert!(!sb.join("prof/hooks/tool-gate").exists());
}

/// An assemble into an OUT this user may not write (another user's folder), or may not
/// create: it said "cannot create staging folder in out: Permission denied (os error 13)
/// at path \"…/out/.hookpack-assemble-…\"", tempfile's text with its random name, and no
/// fix. It names OUT and the fix, as pack does; OUT stays as it was.
#[cfg(target_os = "linux")]
#[test]
fn an_assemble_into_a_folder_this_user_may_not_write_names_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "alpha");
    sb.write("out/notes.txt", "kept\n");
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for (out, said) in [
        (
            "out",
            "error: cannot write in out: Permission denied (os error 13); ",
        ),
        (
            "new/out",
            "error: cannot create folder new/out: Permission denied (os error 13); ",
        ),
    ] {
        let o = hookpack_as_nobody(
            &sb,
            &bin,
            &["assemble", "--recipes-dir", "src", "--out-dir", out],
        )
        .output()
        .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{err}");
        assert!(err.contains(said), "{err}");
        assert!(
            err.contains(&format!("make {out} a folder this user may write")),
            "{err}"
        );
        assert!(!err.contains("at path"), "{err}");
        assert_eq!(names_in(&sb.join("out")), ["notes.txt"]);
        assert!(!sb.join("new").exists());
    }
}

/// Two assembles into one OUT at once: the second moved a recipe's folder out of OUT while
/// the first had moved it out and not yet put the new one in, and failed with "cannot rename
/// out/alpha: to …: No such file or directory" (exit 3). Assembles take turns, holding a
/// lock on OUT as packs do. strace delays the first one's third rename (the new `alpha`
/// going in, after the list part way and the old `alpha` going out) by 2 s, and the
/// second starts meanwhile.
#[cfg(target_os = "linux")]
#[test]
fn two_assembles_into_one_out_take_turns() {
    let sb = Sandbox::new();
    for id in ["alpha", "beta"] {
        write_ts_recipe(&sb, "src", id);
    }
    let assemble = ["assemble", "--recipes-dir", "src", "--out-dir", "out"];
    ok(&sb.cmd().args(assemble).output().unwrap());
    let slow = failing_renames(&sb, "delay_enter=2000000:when=3")
        .args(assemble)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first has moved `alpha` out once its staging folder holds `.old-alpha`.
    let started = std::time::Instant::now();
    let moved_out = || {
        std::fs::read_dir(sb.join("out"))
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".hookpack-assemble-")
                    && e.path().join(".old-alpha").exists()
            })
    };
    while !moved_out() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the first assemble never moved alpha out"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let second = sb.cmd().args(assemble).output().unwrap();
    let first = slow.wait_with_output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    ok(&second);
    assert_eq!(
        names_in(&sb.join("out")),
        [
            ".assembled-by-hookpack",
            "alpha/README.md",
            "alpha/recipe.json",
            "alpha/scripts/main.js",
            "alpha/scripts/package.json",
            "beta/README.md",
            "beta/recipe.json",
            "beta/scripts/main.js",
            "beta/scripts/package.json",
        ]
    );
}

/// Found by review: an assemble killed between moving its folders and writing its list
/// left the new folders unlisted, never removed once their sources went (and a first fix
/// left OUT without a list for one rename). Killed at each rename of a swap, the next
/// assemble, with one recipe's sources gone, removes that recipe's folder.
#[cfg(target_os = "linux")]
#[test]
fn an_assemble_killed_at_any_rename_leaves_its_folders_listed() {
    const RENAMES: &str = "?rename,?renameat,?renameat2";
    // The renames: the list part way, the old `alpha` out, the new one in, `beta` (new)
    // in, the old `gamma` out, the new one in, the list.
    for when in 1..=7 {
        let sb = Sandbox::new();
        write_ts_recipe(&sb, "src", "alpha");
        write_ts_recipe(&sb, "src", "gamma");
        let assemble = ["assemble", "--recipes-dir", "src", "--out-dir", "out"];
        ok(&sb.cmd().args(assemble).output().unwrap());
        write_ts_recipe(&sb, "src", "beta");
        let o = crate::pack::under_strace(
            &sb,
            &[
                "-e",
                &format!("trace={RENAMES}"),
                "-e",
                &format!("inject={RENAMES}:signal=KILL:when={when}"),
            ],
        )
        .args(assemble)
        .output()
        .unwrap();
        assert_ne!(o.status.code(), Some(0), "rename {when}: not killed");
        for id in ["beta", "gamma"] {
            std::fs::remove_dir_all(sb.join("src").join(id)).unwrap();
        }
        ok(&sb.cmd().args(assemble).output().unwrap());
        assert!(!sb.join("out/beta").exists(), "rename {when}");
        assert!(!sb.join("out/gamma").exists(), "rename {when}");
        assert!(
            sb.join("out/alpha/scripts/main.js").is_file(),
            "rename {when}"
        );
    }
}

/// A rename assemble cannot make is named with both paths and reads as a sentence: it said
/// "cannot rename out/alpha: to …/.old-alpha: …", the second path inside the cause. OUT is
/// left as it was.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_rename_names_both_paths_in_one_sentence() {
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "alpha");
    let assemble = ["assemble", "--recipes-dir", "src", "--out-dir", "out"];
    ok(&sb.cmd().args(assemble).output().unwrap());
    let before = snapshot(&sb.join("out"));
    // The second rename moves the old `out/alpha` into the staging folder (the first puts
    // in the list of what assemble made that names what is on its way in).
    let o = failing_renames(&sb, "error=EIO:when=2")
        .args(assemble)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("error: cannot rename out/alpha to "), "{err}");
    assert!(err.contains("/.old-alpha: Input/output error"), "{err}");
    assert!(!err.contains("alpha: to"), "{err}");
    assert_eq!(snapshot(&sb.join("out")), before, "{err}");
}

/// A catalog folder in a folder this user may enter but not list (mode 711, as many home
/// folders are): pack locks OUT itself and stages inside it. It failed with "cannot open the
/// folder to lock pub: Permission denied". Run as user nobody (setpriv), since root opens
/// any folder.
#[cfg(target_os = "linux")]
#[test]
fn pack_into_a_folder_whose_parent_cannot_be_listed_locks_out_itself() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    let bin = catalog_in_a_711_folder(&sb);
    let o = pack_as_nobody(&sb, &bin, "src").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(names_in(&sb.join("pub/cat")), PACKED_ALPHA);
}

/// Two users packing into one OUT whose parent has mode 711: one may open the parent (here
/// root) and locked it, the other may not and locked OUT, so neither waited for the other
/// and the second could read the index while the first replaced it, dropping its versions.
/// Whoever locks the parent now locks OUT too. The test slows root's commit down (strace
/// delays its first rename by 5 s) and packs as nobody meanwhile, which must wait.
#[cfg(target_os = "linux")]
#[test]
fn packs_by_two_users_take_turns_when_only_one_may_open_outs_parent() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    write_recipe(&sb, "other/beta", &manifest("beta"));
    let bin = catalog_in_a_711_folder(&sb);
    let slow = Command::new(strace())
        .args(["-f", "-qq", "-o", "/dev/null"])
        .args(["-e", "trace=?rename,?renameat,?renameat2"])
        .args([
            "-e",
            "inject=?rename,?renameat,?renameat2:delay_enter=5000000:when=1",
        ])
        .arg(&bin)
        .args(["pack", "--recipes-dir", "src", "--out-dir", "pub/cat"])
        .current_dir(sb.path())
        .env("TMPDIR", sb.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its staging folder (beside OUT, in pub) holds the built archive once it commits.
    let started = std::time::Instant::now();
    let staged = || {
        std::fs::read_dir(sb.join("pub"))
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".hookpack-pack-")
                    && std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some())
            })
    };
    while !staged() {
        assert!(started.elapsed().as_secs() < 30, "root's pack never staged");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = pack_as_nobody(&sb, &bin, "other")
        .env("HOOKPACK_LOCK_TIMEOUT", "1")
        .output()
        .unwrap();
    let waited = String::from_utf8_lossy(&o.stderr).to_string();
    let first = slow.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{err}");
    assert_eq!(
        o.status.code(),
        Some(3),
        "nobody's pack did not wait: {waited}"
    );
    assert!(
        waited.contains("another hookpack process holds pub/cat"),
        "{waited}"
    );
    assert_eq!(names_in(&sb.join("pub/cat")), PACKED_ALPHA);
}

/// Where OUT's file system (or the kernel's protected_hardlinks) refuses a link, pack keeps
/// each file it replaces as a copy; a failed commit puts the copy back. The file put back
/// had the time of the failed pack, not its own (`make` and rsync saw the index change).
#[cfg(target_os = "linux")]
#[test]
fn a_failed_commit_puts_back_a_copied_file_with_its_own_time() {
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    pack_src_into_cat(&sb);
    let index = sb.join("cat/hooks-index.json");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(981_173_106);
    std::fs::File::options()
        .write(true)
        .open(&index)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let before = snapshot(&sb.join("cat"));
    write_recipe(&sb, "src/beta", &manifest("beta"));
    // Every link refused; the commit's renames: beta's archive, the index, SHA256SUMS
    // (the third, failing).
    let o = under_strace(
        &sb,
        &[
            "-e",
            "trace=?link,?linkat,?rename,?renameat,?renameat2",
            "-e",
            "inject=?link,?linkat:error=EPERM",
            "-e",
            "inject=?rename,?renameat,?renameat2:error=EIO:when=3",
        ],
    )
    .args(["pack", "--recipes-dir", "src", "--out-dir", "cat"])
    .env("TMPDIR", sb.path())
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("is as it was before this pack"), "{err}");
    assert_eq!(snapshot(&sb.join("cat")), before, "{err}");
    let mtime = std::fs::metadata(&index).unwrap().modified().unwrap();
    assert_eq!(mtime, old, "{err}");
}

/// Found by the user-side hostile-input sweep: a `remove` that ran out of room writing
/// `hooks.json` could not undo itself either (putting the receipt back needs room too), and
/// said only "No space left", with the journal, the staging folder and no receipt left.
/// It says the profile is half way through the change and what finishes or undoes it; once
/// there is room, `doctor --fix` puts the profile back as it was.
#[cfg(target_os = "linux")]
#[test]
fn a_change_that_cannot_undo_itself_says_the_profile_is_half_way() {
    use std::io::Write as _;
    let mut half_way = 0;
    for free in [4096u64, 6144] {
        let sb = Sandbox::new();
        let _m = Mount::tmpfs(&sb.join("prof"), "256k");
        let hp = |args: &[&str]| sb.cmd().args(args).args(["--profile", "prof"]).output();
        ok(&hp(&["install", "tool-gate"]).unwrap());
        let state = || {
            let mut prof = sandbox_state(&sb.join("prof"));
            prof.remove("filler");
            prof
        };
        let before = state();
        let filler = sb.join("prof/filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        while f.write(&[0u8; 4096]).is_ok_and(|n| n > 0) {}
        let len = f.metadata().unwrap().len();
        f.set_len(len - free).unwrap();
        drop(f);
        let o = hp(&["remove", "tool-gate"]).unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{free}: {err}");
        if sb.join("prof/.hookpack-journal.json").exists() {
            half_way += 1;
            assert!(err.contains("No space left"), "{free}: {err}");
            assert!(
                err.contains("undoing the change of `tool-gate` failed too (cannot write /"),
                "{free}: {err}"
            );
            assert!(
                err.contains(&format!(
                    "so the profile is half way through it: once the cause is put right (room \
                     on the disk, permissions), run `hookpack doctor --fix --profile {}`",
                    sb.join("prof").display()
                )),
                "{free}: {err}"
            );
        }
        std::fs::remove_file(&filler).unwrap();
        ok(&hp(&["doctor", "--fix"]).unwrap());
        assert_eq!(state(), before, "{free}: {err}");
        ok(&hp(&["doctor"]).unwrap());
    }
    assert!(
        half_way > 0,
        "no remove was left half way: the test no longer tests that"
    );
}

/// Found by the maintainer-side hostile-input sweep: a data file of a recipe this user may
/// not read passed `validate` (0 errors, exit 0), and `pack` then failed on it (exit 3).
/// `validate` names it as it names an unreadable folder: an `io-error`, exit 3.
#[cfg(target_os = "linux")]
#[test]
fn validate_names_a_file_of_a_recipe_that_cannot_be_read() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    write_recipe(&sb, "src/alpha", &manifest("alpha"));
    sb.write("src/alpha/rules.json", "{}\n");
    let bin = sb.join("hookpack");
    std::fs::copy(assert_cmd::cargo::cargo_bin("hookpack"), &bin).unwrap();
    std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let rules = sb.join("src/alpha/rules.json");
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = hookpack_as_nobody(&sb, &bin, &["validate", "src"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(
        out.contains(
            "src/alpha/rules.json: error[io-error]: cannot open: permission denied; check the \
             file's permissions"
        ),
        "{out}"
    );
    // Readable again, it validates.
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = hookpack_as_nobody(&sb, &bin, &["validate", "src"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}
