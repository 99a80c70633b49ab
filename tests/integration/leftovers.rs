//! Leftovers (staging folders and temporary files) of a process that died are removed by
//! the next command that writes there; those of a process that still runs are left alone.
//! A pid alone does not tell them apart once another process has taken it over: on Linux a
//! leftover's name also holds its maker's start time (`<pid>-<start>-…`), and a process of
//! that pid that started at another time did not make it.

use crate::common::*;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// When the process `pid` started, in clock ticks since boot: field 22 of
/// `/proc/<pid>/stat`, counted after the `)` that ends its command name.
fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, fields) = stat.rsplit_once(')').unwrap();
    fields.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// A process that runs until dropped: one that holds a pid a leftover names.
struct Running(Child);

impl Running {
    fn sleep() -> Running {
        Running(Command::new("sleep").arg("600").spawn().unwrap())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Plants a folder (holding a file) or a file at `at`.
fn plant(sb: &Sandbox, at: &str, folder: bool) {
    match folder {
        true => sb.write(&format!("{at}/partial"), "partial\n"),
        false => sb.write(at, "partial\n"),
    };
}

/// A leftover named for a live process that started after its maker (the maker died and
/// its pid went to `sleep`) was taken for a running process's: install, pack, assemble and
/// `doctor --fix` left it for good. They remove it now, as one of a pid that names no
/// process; one named for that process with its own start time, and one named in the
/// form older versions write (`<pid>-…`, no start time), whose maker cannot be told from
/// the pid's new owner, are left alone.
#[cfg(target_os = "linux")]
#[test]
fn a_leftover_whose_pid_another_process_took_is_removed() {
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "alpha");
    pack_src_into_cat(&sb);
    let other = Running::sleep();
    let pid = other.0.id();
    let start = start_time(pid);
    let reused = format!("{pid}-{}", start - 1);
    let its_own = format!("{pid}-{start}");
    let old_form = pid.to_string();
    // (where, with the maker's tag for `{}`, whether it is a folder)
    let places = [
        ("prof/.hookpack-staging/{}-a", true),
        ("prof/.hookpack-tmp-{}-b", false),
        ("prof/hooks/.receipts/.hookpack-tmp-{}-c", false),
        ("finclaw-home/.hookpack-tmp-{}-d", false),
        (".hookpack-pack-{}-e", true),
        ("cat/.hookpack-pack-{}-f", true),
        ("out/.hookpack-assemble-{}-g", true),
        // Found by the maintainer-side sweep: a pack killed while it packed source trees
        // left their assembled copy in $TMPDIR for good.
        ("tmp/hookpack-assembled-{}-h", true),
    ];
    let named = |place: &str, tag: &str| place.replace("{}", tag);
    for (place, folder) in places {
        for tag in [&reused, &its_own, &old_form] {
            plant(&sb, &named(place, tag), folder);
        }
    }
    let run = |args: &[&str]| {
        let o = sb
            .cmd()
            .env("TMPDIR", sb.join("tmp"))
            .args(args)
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    run(&["assemble", "--recipes-dir", "src", "--out-dir", "out"]);
    run(&["pack", "--recipes-dir", "src", "--out-dir", "cat"]);
    let said = run(&["install", "alpha", "--index", "cat", "--profile", "prof"]);
    assert!(sb.join("prof/hooks/alpha/recipe.json").is_file(), "{said}");
    let fixed = sb
        .cmd()
        .args(["doctor", "--fix", "--profile", "prof", "--format", "json"])
        .output()
        .unwrap();
    let fixed = String::from_utf8_lossy(&fixed.stdout);
    let mut wrong = Vec::new();
    for (place, _) in places {
        let gone = named(place, &reused);
        if sb.join(&gone).exists() {
            wrong.push(format!("{gone} left, taken for the live pid {pid}'s"));
        }
        for kept in [named(place, &its_own), named(place, &old_form)] {
            if !sb.join(&kept).exists() {
                wrong.push(format!("{kept} removed"));
            }
        }
    }
    drop(other);
    assert!(wrong.is_empty(), "{wrong:#?}\n{said}\n{fixed}");
}

/// An install waiting for its archive (its staging folder made, the profile not yet
/// locked) while `doctor --fix` recovers the profile: the install's staging folder, named
/// for it with its start time, is left alone, and the install then lands.
#[cfg(target_os = "linux")]
#[test]
fn the_staging_folder_of_a_running_install_is_left_alone() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let sb = Sandbox::new();
    write_ts_recipe(&sb, "src", "alpha");
    pack_src_into_cat(&sb);
    /// Lets the server answer, also when the test fails first.
    struct Release(Arc<AtomicBool>);
    impl Drop for Release {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let asked = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let (a, r) = (asked.clone(), release.clone());
    let server = HttpServer::serve(
        sb.join("cat"),
        Box::new(move |path| {
            if path.ends_with(".tar.gz") {
                a.store(true, Ordering::SeqCst);
                let waited = Instant::now();
                while !r.load(Ordering::SeqCst) && waited.elapsed() < Duration::from_secs(60) {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            None
        }),
    );
    let index = server.url("hooks-index.json");
    let release = Release(release);
    let install = sb
        .std_cmd()
        .args(["install", "alpha", "--index", &index, "--profile", "prof"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !asked.load(Ordering::SeqCst) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the install never asked for the archive"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let staging: Vec<_> = std::fs::read_dir(sb.join("prof/.hookpack-staging"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let tag = format!("{}-{}-", install.id(), start_time(install.id()));
    assert!(
        staging.len() == 1 && staging[0].starts_with(&tag),
        "{staging:?}, wanted one starting {tag}"
    );
    // Plain doctor does not report the running install's folder as a leftover either.
    let report = sb
        .cmd()
        .args(["doctor", "--profile", "prof", "--format", "json"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&report.stdout).into_owned();
    let fixed = sb
        .cmd()
        .args(["doctor", "--fix", "--profile", "prof", "--format", "json"])
        .output()
        .unwrap();
    let fixed = String::from_utf8_lossy(&fixed.stdout).into_owned();
    let still = sb.join("prof/.hookpack-staging").join(&staging[0]);
    let kept = still.is_dir();
    drop(release);
    let o = install.wait_with_output().unwrap();
    assert!(
        kept,
        "{} removed under the install\n{fixed}",
        still.display()
    );
    assert!(!fixed.contains("staging leftovers"), "{fixed}");
    assert!(!report.contains("staging-leftover"), "{report}");
    ok(&o);
    assert!(Path::new(&sb.join("prof/hooks/alpha/recipe.json")).is_file());
}

/// `hookpack new` stages a recipe in `.<id>.new-<pid>-<start>` beside where it goes; one
/// that a killed `new` left was never removed (only a later `new` of the same pid, which the
/// start time now rules out, would have reused it), and `pack` warns of it as a hidden
/// recipe folder ever after. A later `new` of that id removes those of makers that are gone,
/// and leaves a running maker's.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_new_s_staging_folder_goes_with_the_next_new_of_that_id() {
    let sb = Sandbox::new();
    let other = Running::sleep();
    let pid = other.0.id();
    let start = start_time(pid);
    let gone = format!("recipes/.my-gate.new-{pid}-{}", start - 1);
    let running = format!("recipes/.my-gate.new-{pid}-{start}");
    let other_id = format!("recipes/.your-gate.new-{pid}-{}", start - 1);
    for at in [&gone, &running, &other_id] {
        plant(&sb, at, true);
    }
    ok(&sb
        .cmd()
        .args(["new", "my-gate", "--dir", "recipes"])
        .output()
        .unwrap());
    assert!(!sb.join(&gone).exists(), "{gone} is still there");
    assert!(sb.join(&running).is_dir(), "{running} was removed");
    assert!(sb.join(&other_id).is_dir(), "{other_id} was removed");
    assert!(sb.join("recipes/my-gate/recipe.json").is_file());
}

/// What a killed `hookpack new` left (`.<id>.new-<pid>-<start>`, holding a `recipe.json`
/// once `new` had written it) got validate's and pack's warning for a recipe set aside
/// under a hidden name, "to pack it, rename it to its id": that would publish a recipe
/// `new` never finished. It is named as that leftover now, with the command that removes
/// it, which does; a hidden recipe folder of another name keeps the old warning.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_new_s_staging_folder_is_named_as_such_with_its_fix() {
    let sb = Sandbox::new();
    let other = Running::sleep();
    let pid = other.0.id();
    let gone = format!(".my-gate.new-{pid}-{}", start_time(pid) - 1);
    sb.write(&format!("recipes/{gone}/recipe.json"), "{}\n");
    sb.write("recipes/.set-aside/recipe.json", "{}\n");
    let o = sb.cmd().args(["validate", "recipes"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stdout);
    let fix = "`hookpack new my-gate --dir recipes`";
    assert!(
        err.contains(&format!("recipes/{gone}: warning[hidden-not-packed]: "))
            && err.contains("a staging folder of `hookpack new my-gate` that was killed")
            && err.contains(fix),
        "{err}"
    );
    assert_eq!(err.matches("rename it to its id").count(), 1, "{err}");
    assert!(
        err.contains("recipes/.set-aside: warning[hidden-not-packed]"),
        "{err}"
    );
    let words: Vec<&str> = fix.trim_matches('`').split(' ').skip(1).collect();
    ok(&sb.cmd().args(&words).output().unwrap());
    assert!(!sb.join(&format!("recipes/{gone}")).exists());
}
