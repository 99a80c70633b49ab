//! `hookpack new`: a scaffold that validates, refuses bad ids, never overwrites.

use crate::common::*;
use crate::pack::snapshot;

/// `hookpack new ID --dir DIR`, whatever it exits.
fn new_in(sb: &Sandbox, id: &str, dir: &str) -> std::process::Output {
    sb.cmd().args(["new", id, "--dir", dir]).output().unwrap()
}

#[test]
fn scaffold_validates_and_never_overwrites() {
    let sb = Sandbox::new();
    sb.cmd()
        .args(["new", "my-gate", "--dir", "recipes"])
        .assert()
        .success();
    for f in [
        "recipe.json",
        "README.md",
        "src/main.ts",
        "tests/denies-rm-rf.json",
        "tests/allows-ls.json",
    ] {
        assert!(sb.join("recipes/my-gate").join(f).is_file(), "{f}");
    }
    let (code, r) = validate_json(&sb, &["--strict", "recipes/my-gate"]);
    assert_eq!(code, 0, "{r:#}");
    // A gate fails closed (found by the publisher walk-through: its code said "a gate must
    // not allow what it cannot read", but a crash let the call through).
    let m = read_json(&sb.join("recipes/my-gate/recipe.json"));
    assert_eq!(
        m["hooks"]["PreToolUse"][0]["hooks"][0]["failurePolicy"],
        "deny"
    );

    let before = std::fs::read(sb.join("recipes/my-gate/recipe.json")).unwrap();
    sb.write("recipes/my-gate/recipe.json", b"edited");
    let out = new_in(&sb, "my-gate", "recipes");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(
        std::fs::read(sb.join("recipes/my-gate/recipe.json")).unwrap(),
        b"edited"
    );
    assert_ne!(before, b"edited");
}

#[test]
fn scaffold_refuses_invalid_ids_and_leaves_nothing() {
    let sb = Sandbox::new();
    for bad in ["My_Gate", "-x", "a--b", ".hidden", &"x".repeat(65)] {
        let out = sb.cmd().args(["new", "--", bad]).output().unwrap();
        // An argument of the wrong form is a usage error.
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error: invalid recipe id"));
    }
    assert_eq!(std::fs::read_dir(sb.path()).unwrap().count(), 0);
}

#[test]
fn scaffold_defaults_to_recipes_folder() {
    let sb = Sandbox::new();
    std::fs::create_dir(sb.join("recipes")).unwrap();
    let out = sb
        .cmd()
        .args(["new", "x", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], "x");
    assert!(sb.join("recipes/x/recipe.json").is_file());
}

/// `--dir` naming a file, or a link to nothing, failed as the environment's fault (exit 3,
/// "cannot create folder …: File exists"); a file one level further down was exit 1.
#[cfg(unix)]
#[test]
fn scaffold_into_a_dir_that_is_not_a_folder_is_refused() {
    let sb = Sandbox::new();
    sb.write("file", "x");
    for dir in ["file", "file/sub"] {
        let out = new_in(&sb, "x", dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{dir}: {err}");
    }
    let out = new_in(&sb, "x", "file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("file exists and is not a folder"), "{err}");
    assert_eq!(std::fs::read(sb.join("file")).unwrap(), b"x");
}

/// A `--dir` that links to a folder not made yet is made where the link points, as pack's
/// and assemble's `--out-dir` and install's `--profile` are (it was refused).
#[cfg(unix)]
#[test]
fn scaffold_through_a_link_to_a_folder_not_made_yet_makes_it_there() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink(sb.join("made/recipes"), sb.join("dangling")).unwrap();
    let out = new_in(&sb, "x", "dangling");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(sb.join("made/recipes/x/recipe.json").is_file());
    // A link into a recipe, to a folder made or not, is refused as the path it leads to
    // would be (found by review: the new recipe went inside the other one, and shipped
    // in its archive).
    for (link, to) in [
        ("into-new", "made/recipes/x/sub"),
        ("into-src", "made/recipes/x/src"),
    ] {
        std::os::unix::fs::symlink(sb.join(to), sb.join(link)).unwrap();
        let out = new_in(&sb, "y", link);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{link}: {err}");
        assert!(err.contains("made/recipes/x"), "{link}: {err}");
        assert!(!sb.join(to).join("y").exists(), "{link}");
    }
    assert!(!sb.join("made/recipes/x/sub").exists());
}

/// Found by the maintainer-side hostile-input sweep: a file (or a link) where the recipe's
/// folder would go was refused as "hookpack never overwrites a folder", calling it a
/// folder; the refusal now says what is there.
#[cfg(unix)]
#[test]
fn scaffold_over_a_file_says_it_is_a_file() {
    let sb = Sandbox::new();
    sb.write("recipes/b", "mine\n");
    std::os::unix::fs::symlink(sb.join("nowhere"), sb.join("recipes/c")).unwrap();
    for (id, what) in [("b", "a file"), ("c", "a symbolic link")] {
        let out = new_in(&sb, id, "recipes");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{id}: {err}");
        assert!(
            err.contains(&format!(
                "recipes/{id} already exists ({what}); hookpack new never overwrites it"
            )),
            "{id}: {err}"
        );
    }
    assert_eq!(std::fs::read(sb.join("recipes/b")).unwrap(), b"mine\n");
    assert!(!sb.join("nowhere").exists());
}

/// `--dir` naming a recipe folder, or a folder inside one, would nest the new recipe in
/// the other's archive (found by a maintainer-side sweep: `validate` passed and pack
/// shipped b's sources inside a's archive). Refused, nothing written.
#[test]
fn scaffold_inside_a_recipe_folder_is_refused() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "a", "recipes"));
    let before = snapshot(&sb.join("recipes"));
    for dir in ["recipes/a", "recipes/a/src", "recipes/a/src/deeper"] {
        let out = new_in(&sb, "b", dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{dir}: {err}");
        assert!(
            err.contains(" the recipe folder recipes/a (it holds a recipe.json)")
                && err.contains("--dir recipes"),
            "{dir}: {err}"
        );
        assert_eq!(snapshot(&sb.join("recipes")), before, "{dir}");
    }
}

/// `--dir recipes/a/..` is the folder of recipes, not a folder inside `a`: it was refused
/// as inside `a` (its `..` was read as a name, so `a` looked like an enclosing folder),
/// while `--dir recipes` made the recipe. A `..` that does lead into a recipe is refused.
#[test]
fn scaffold_dir_with_dot_dot_is_taken_as_the_file_system_takes_it() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "a", "recipes"));
    ok(&new_in(&sb, "b", "recipes/a/.."));
    assert!(sb.join("recipes/b/recipe.json").is_file());
    assert!(!sb.join("recipes/a/b").exists());
    let out = new_in(&sb, "c", "recipes/b/../a/src");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("recipes/a (it holds a recipe.json)"), "{err}");
    assert!(!sb.join("recipes/a/src/c").exists());
}

#[test]
fn scaffold_refuses_the_helpers_folder_name_as_id() {
    let sb = Sandbox::new();
    let out = new_in(&sb, "lib", "recipes");
    // The id comes from the command line, so this is a usage error, as an id of the wrong
    // form is.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`lib`") && err.contains("shared helpers"),
        "{err}"
    );
    assert!(err.contains("choose another id"), "{err}");
    assert_eq!(std::fs::read_dir(sb.path()).unwrap().count(), 0);
}

/// `hookpack test` inside a recipe folder (its default, `.`), `test .` and `test ..` from
/// `src/` assembled the recipe into the temporary folder's root, so it was refused as an
/// id that does not match the folder `hookpack-assembled-XXXXXX` (found by review). They
/// test it as `test recipes/my-gate` does, with the helpers of the folder holding it.
#[test]
fn test_run_inside_a_recipe_folder_tests_that_recipe() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "my-gate", "recipes"));
    // A shared helper, found in the recipes folder above the one given as `.`.
    sb.write(
        "recipes/lib/reason.ts",
        "export const REASON = \"rm -rf / wipes the machine\";\n",
    );
    let main = sb.join("recipes/my-gate/src/main.ts");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(
        &main,
        format!("import {{ REASON }} from \"../../lib/reason.ts\";\nvoid REASON;\n{text}"),
    )
    .unwrap();
    for (cwd, args) in [
        ("recipes/my-gate", &[][..]),
        ("recipes/my-gate", &["."][..]),
        ("recipes/my-gate/src", &[".."][..]),
        ("recipes/my-gate/src", &["../."][..]),
        (".", &["recipes/my-gate"][..]),
    ] {
        let o = sb
            .cmd()
            .current_dir(sb.join(cwd))
            .arg("test")
            .args(args)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{cwd} {args:?}: {out}{err}");
        assert!(
            out.contains("ok   my-gate/denies-rm-rf.json") && out.contains("2 passed, 0 failed"),
            "{cwd} {args:?}: {out}{err}"
        );
    }
}

/// `hookpack test` with no folder, run from a recipe's `src/` (or deeper), said only that
/// neither ./recipe.json nor ./recipes is there (found by the new-user walkthrough); it
/// names the recipe folder above to give.
#[test]
fn test_run_below_a_recipe_folder_names_it() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "my-gate", "recipes"));
    std::fs::create_dir_all(sb.join("recipes/my-gate/src/rules")).unwrap();
    for (cwd, up) in [
        ("recipes/my-gate/src", ".."),
        ("recipes/my-gate/src/rules", "../.."),
    ] {
        let o = sb
            .cmd()
            .current_dir(sb.join(cwd))
            .arg("test")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cwd}: {err}");
        assert!(
            err.contains(&format!(
                "this folder is inside the recipe folder `{up}`: run `hookpack test {up}`"
            )),
            "{cwd}: {err}"
        );
    }
}

/// Found by the publisher walk-through: `hookpack test` with no folder, run inside the
/// folder of recipes itself, exited 2 ("neither ./recipe.json nor ./recipes exists here").
/// A folder holding recipe folders is taken as the folder of recipes, as `recipes` is.
#[test]
fn test_run_in_a_folder_of_recipes_tests_them() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "my-gate", "recipes"));
    ok(&new_in(&sb, "other-gate", "recipes"));
    let o = sb
        .cmd()
        .current_dir(sb.join("recipes"))
        .arg("test")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("4 passed, 0 failed"), "{out}");
}

/// `hookpack test` given one case file, the `tests` folder or the recipe.json was told to
/// give "a recipe folder or a folder of recipes" (or that `tests` holds no recipes); it
/// names the recipe folder they are in, whose cases `test` runs (found by review).
#[test]
fn test_given_a_path_inside_a_recipe_names_the_recipe_folder() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "my-gate", "recipes"));
    for arg in [
        "recipes/my-gate/tests/allows-ls.json",
        "recipes/my-gate/tests",
        "recipes/my-gate/recipe.json",
        "recipes/my-gate/src",
    ] {
        let o = sb.cmd().args(["test", arg]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{arg}: {err}");
        assert!(
            err.contains("it is inside the recipe folder recipes/my-gate; `hookpack test recipes/my-gate` runs its cases"),
            "{arg}: {err}"
        );
    }
}

/// Two recipes scaffolded by `new`, packed into one catalog as the README's maintainer flow
/// does, install side by side and both run: each scaffold gave its handler the id
/// `check-exec`, and hosts run one handler per id and event, so the second recipe installed
/// was skipped (`install` warned "will not run"). And the scaffold's README packs into the
/// catalog beside the recipes folder, as the maintainer flow does, not into one inside it.
#[test]
fn two_scaffolded_recipes_install_side_by_side() {
    let sb = Sandbox::new();
    for id in ["a-gate", "b-gate"] {
        ok(&new_in(&sb, id, "recipes"));
    }
    ok(&sb
        .cmd()
        .args(["pack", "--recipes-dir", "recipes", "--out-dir", "catalog"])
        .output()
        .unwrap());
    let o = sb
        .cmd()
        .args([
            "install",
            "a-gate",
            "b-gate",
            "--index",
            "catalog",
            "--profile",
            "p",
        ])
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("will not run"), "{err}");
    let list = sb.cmd().args(["list", "--profile", "p"]).output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(!text.contains("invalid"), "{text}");
    let readme = std::fs::read_to_string(sb.join("recipes/a-gate/README.md")).unwrap();
    assert!(
        readme.contains("hookpack pack --recipes-dir .. --out-dir ../../catalog"),
        "{readme}"
    );
}

/// `test` of a scaffold whose TypeScript does not parse names the spot and says no case was
/// run: it ended with assemble's "nothing was assembled", though `test` assembles nothing a
/// user keeps. `assemble` keeps its own wording.
#[test]
fn test_of_a_recipe_whose_typescript_does_not_parse_says_no_case_was_run() {
    let sb = Sandbox::new();
    ok(&new_in(&sb, "x", "r"));
    let main = sb.join("r/x/src/main.ts");
    let source = std::fs::read_to_string(&main).unwrap();
    let broken = source.replacen("const DENY_PATTERN =", "const DENY_PATTERN = =", 1);
    assert_ne!(broken, source);
    std::fs::write(&main, broken).unwrap();
    let o = sb.cmd().args(["test", "r"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("r/x/src/main.ts:10:22: error[typescript]"),
        "{err}"
    );
    assert!(
        err.contains(
            "error: errors in the TypeScript or JavaScript sources (above); no case was run"
        ),
        "{err}"
    );
    assert!(!err.contains("assembled"), "{err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = sb
        .cmd()
        .args(["assemble", "--recipes-dir", "r", "--out-dir", "out"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("sources (above); nothing was written"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // pack, which assembles the sources in memory, said "nothing was assembled" too (found
    // by a README walk-through): it too says nothing was written.
    let o = sb
        .cmd()
        .args(["pack", "--recipes-dir", "r", "--out-dir", "cat"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("sources (above); nothing was written") && !err.contains("assembled"),
        "{err}"
    );
}

/// Found by a hostile sweep: `new`'s "next: hookpack validate DIR" printed the folder
/// unquoted (`sp ace/z`, or a line break), so the command failed as printed. It is quoted
/// for a shell now, on one line, and runs as printed.
#[test]
fn the_next_command_new_prints_runs_as_printed() {
    for dir in ["sp ace", "it's", "line\nbreak"] {
        let sb = Sandbox::new();
        let o = new_in(&sb, "my-gate", dir);
        assert!(o.status.success(), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let next = err
            .lines()
            .find_map(|l| l.split_once("; next: ").map(|(_, c)| c.to_string()))
            .unwrap_or_else(|| panic!("{err}"));
        let o = sb.shell("bash", &next).output().unwrap();
        assert!(o.status.success(), "{dir:?}: {next}: {o:?}");
    }
}
