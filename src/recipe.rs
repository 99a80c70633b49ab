//! `recipe.json` (schema `hooks.recipe.v1`) and the recipe folder around it.
//!
//! A recipe is a folder named after its id, holding `recipe.json`, a README, data files and
//! the scripts its handlers run. This module checks all of SPEC 1.2: the manifest's fields,
//! every handler rule of `hooks.json`, that each command runs a script that stays inside the
//! folder, and that the folder holds nothing a package must not carry (links, special files,
//! `node_modules`). It refuses to produce a typed [`Recipe`] from a manifest with errors.

use crate::command::{self, Target};
use crate::diagnostic::{Diagnostic, Findings, Severity};
use crate::hooks_json::{self, Context, Group};
use crate::id::Id;
use crate::json::pointer_push;
use crate::version::Version;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

/// The exact schema string.
pub const SCHEMA: &str = "hooks.recipe.v1";

/// Largest `recipe.json` read.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// A validated recipe manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The recipe id; equals the folder name.
    pub id: Id,
    /// The recipe's own version.
    pub version: Version,
    /// Oldest host CLI that can run it.
    pub min_cli: Version,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One-line description.
    pub summary: String,
    /// Event → groups, as in `hooks.json`.
    pub hooks: IndexMap<String, Vec<Group>>,
    /// Fields hookpack does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

const KNOWN_FIELDS: [&str; 7] = [
    "schema", "id", "version", "min_cli", "name", "summary", "hooks",
];

/// Checks a manifest document. `dir` is the recipe folder when known, for the folder-name
/// and script checks.
pub fn check_manifest(value: &Value, dir: Option<&Path>, f: &mut Findings) {
    let Some(obj) = value.as_object() else {
        f.error(
            "",
            "document-not-object",
            "a recipe.json must be a JSON object",
        );
        return;
    };
    for key in obj.keys() {
        if !KNOWN_FIELDS.contains(&key.as_str()) {
            f.warn(
                &pointer_push("", key),
                "unknown-field",
                format!(
                    "unknown field `{key}`{}; known fields: {}",
                    crate::event::did_you_mean(key, &KNOWN_FIELDS),
                    KNOWN_FIELDS.join(", ")
                ),
            );
        }
    }
    match obj.get("schema") {
        Some(Value::String(s)) if s == SCHEMA => {}
        Some(other) => f.error(
            "/schema",
            "schema-mismatch",
            format!("`schema` must be exactly \"{SCHEMA}\", found {other}"),
        ),
        None => f.error(
            "",
            "schema-missing",
            format!("no `schema`; add \"schema\": \"{SCHEMA}\""),
        ),
    }
    let id = match obj.get("id") {
        Some(Value::String(s)) => match Id::parse(s) {
            Ok(id) => {
                // A warning: an archive published with such an id still installs.
                if let Some(product) = id.names_product() {
                    f.warn("/id", "recipe-id-product", product_id_why(&id, product));
                }
                Some(id)
            }
            Err(e) => {
                f.error("/id", "recipe-id-invalid", e.to_string());
                None
            }
        },
        Some(other) => {
            f.error(
                "/id",
                "recipe-id-invalid",
                format!("`id` must be a string, found {other}"),
            );
            None
        }
        None => {
            f.error(
                "",
                "recipe-id-missing",
                "no `id`; add the recipe id, which must equal the folder name",
            );
            None
        }
    };
    if let (Some(id), Some(dir)) = (&id, dir) {
        // The folder's name as given; `.`, `..` and the like are resolved first.
        let named = match dir.components().next_back() {
            Some(Component::Normal(n)) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        };
        let folder = named.or_else(|| {
            dir.canonicalize()
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        });
        if let Some(folder) = folder {
            if folder != id.as_str() {
                f.error(
                    "/id",
                    "folder-id-mismatch",
                    format!("recipe id `{id}` does not match its folder name `{folder}`; rename the folder or change `id`"),
                );
            }
        }
    }
    for key in ["version", "min_cli"] {
        match obj.get(key) {
            Some(Value::String(s)) => {
                if let Err(e) = Version::parse(s) {
                    f.error(
                        &pointer_push("", key),
                        "version-invalid",
                        format!("`{key}`: {e}"),
                    );
                }
            }
            Some(other) => f.error(
                &pointer_push("", key),
                "version-invalid",
                format!("`{key}` must be a string like \"0.1.0\", found {other}"),
            ),
            None => f.error(
                "",
                "field-missing",
                format!("no `{key}`; add it as \"X.Y.Z\""),
            ),
        }
    }
    check_one_line_text(obj, "", f);
    match obj.get("summary") {
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        Some(Value::String(_)) => f.error(
            "/summary",
            "summary-empty",
            "`summary` is empty; say in one line what the recipe does",
        ),
        Some(other) => f.error(
            "/summary",
            "summary-not-string",
            format!("`summary` must be a string, found {other}"),
        ),
        None => f.error(
            "",
            "field-missing",
            "no `summary`; add a one-line description",
        ),
    }
    if let Some(n) = obj.get("name") {
        if !n.is_string() {
            f.error(
                "/name",
                "name-not-string",
                format!("`name` must be a string, found {n}"),
            );
        }
    }
    let Some(hooks) = obj.get("hooks") else {
        f.error(
            "",
            "field-missing",
            "no `hooks`; a recipe needs at least one handler",
        );
        return;
    };
    let seen = hooks_json::check_hooks_map(hooks, "/hooks", Context::Recipe, f);
    if seen.is_empty() && hooks.is_object() {
        f.error(
            "/hooks",
            "recipe-no-handlers",
            "the recipe has no handlers; add at least one event with a handler",
        );
    }
    hooks_json::check_unique_ids(&seen, "recipe", f);
    for h in &seen {
        if let Some(cmd) = &h.command {
            check_command(cmd, &pointer_push(&h.pointer, "command"), dir, f);
        }
    }
}

/// Checks that a recipe command runs a script inside the recipe.
fn check_command(cmd: &str, p: &str, dir: Option<&Path>, f: &mut Findings) {
    let words = match command::split(cmd) {
        Ok(w) => w,
        Err(e) => {
            f.error(
                p,
                "command-unparsable",
                format!("{e}; hosts run the command with `$SHELL -lc`, so it must be valid shell"),
            );
            return;
        }
    };
    // Only the first simple command is understood: whatever follows `;`, `|`, `&&` or a
    // line break would run unhashed, unrewritten, from the host's working directory.
    if let Some(c) = &words.shell_syntax {
        f.error(
            p,
            "command-shell-syntax",
            format!("the command uses shell syntax ({}): install rewrites only the script path and the trust hash covers only that script, so another command, a redirection or an expansion (`$VAR`, read from the host's environment) would act outside what was checked; put that logic in the script (read variables with `process.env`) and keep the command to `interpreter script args`", command::describe(c)),
        );
    }
    let (path, direct) = match command::target(&words) {
        Target::Script {
            interpreter,
            path,
            loads,
            chdir,
            ..
        } => {
            if interpreter.is_none() && !path.contains('/') {
                f.error(
                    p,
                    "command-not-script",
                    format!("`{path}` would be looked up on the host's PATH; recipe commands run a script inside the recipe, e.g. `node scripts/main.js`"),
                );
                return;
            }
            if let Some(flag) = loads {
                f.error(
                    p,
                    "command-loads-code",
                    format!("`{}`: `{flag}` loads or lets in code besides the script (a preload, a loader, a debugger, stdin), which the trust hash does not cover; drop the flag, and load any code you need from `{path}` itself (an `import` relative to it)", one_line(cmd)),
                );
                return;
            }
            if let Some((flag, _)) = chdir.first() {
                f.error(
                    p,
                    "command-changes-directory",
                    format!("`{}`: `{flag}` changes directory before the script path is resolved, so the file that runs is not the `{path}` that validate checks, install rewrites and the trust hash covers; drop the flag and name the script from the recipe root", one_line(cmd)),
                );
                return;
            }
            (path, interpreter.is_none())
        }
        Target::Module { flag } => {
            f.error(
                p,
                "command-loads-code",
                format!("`{}`: `{flag}` runs a module found on the interpreter's search path, not a script in the recipe, so the trust hash does not cover it; run the file instead, e.g. `python3 scripts/main.py`", one_line(cmd)),
            );
            return;
        }
        Target::Inline { flag } => {
            let what = if flag == "-s" {
                "reads the code to run from stdin (the hook's payload)"
            } else {
                "runs inline code"
            };
            f.error(p, "command-inline-code", format!("`{}`: `{flag}` {what}, so there is no script file; recipes run a script file, so its bytes are covered by the trust hash", one_line(cmd)));
            return;
        }
        Target::Nothing => {
            f.error(
                p,
                "command-no-script",
                "the command names no script; write it as `node scripts/main.js`",
            );
            return;
        }
    };
    // `bin/node x.js` or `/usr/bin/env node x.js` is most likely meant as an interpreter.
    let hint = if interpreter_path(&path) {
        format!(" (an interpreter is named by its bare name, so `{path}` is taken as the script itself; write `node scripts/main.js`)")
    } else {
        String::new()
    };
    if let Err(why) = check_relative(&path) {
        f.error(p, "script-path-unsafe", format!("script `{path}` {why}; commands are relative to the recipe root, e.g. `scripts/main.js`{hint}"));
        return;
    }
    let Some(dir) = dir else { return };
    if let Some(instead) = shipped_for_source(dir, &path) {
        f.error(
            p,
            "script-in-src",
            format!("script `{path}` is in `src/`, which assemble compiles into `scripts/`: archives hold `scripts/`, never `src/`, so the installed handler would find no script; run `{instead}` instead"),
        );
        return;
    }
    match script_state(dir, Path::new(&path)) {
        ScriptState::File if direct => check_runnable(&dir.join(&path), &path, p, f),
        ScriptState::File => {}
        // Compiled output is written without an execute bit.
        ScriptState::WillBeAssembled if direct => f.error(
            p,
            "script-not-executable",
            format!("`{path}` is run directly, but assemble writes the scripts it compiles without an execute bit, so the host's shell would refuse to run it (exit 126, Permission denied); run it with its interpreter: `{}`", command::with_interpreter(&path)),
        ),
        ScriptState::WillBeAssembled => {}
        // The tree's walk reports the folder it could not read (`io-error`).
        ScriptState::Unreadable => {}
        ScriptState::Missing => f.error(
            p,
            "script-missing",
            format!(
                "script `{path}` does not exist in {}; {}{hint}",
                dir.display(),
                missing_script_fix(dir, Path::new(&path))
            ),
        ),
        ScriptState::NotAFile(kind) => f.error(p, "script-not-file", format!("script `{path}` is {kind}, not a regular file; point the command at the script file itself (e.g. `node scripts/main.js`)")),
        ScriptState::ThroughLink(link) => f.error(
            p,
            "script-symlink",
            format!("script `{path}` goes through the symbolic link `{link}`; recipes may not contain links (they could point outside the recipe)"),
        ),
    }
}

/// Checks that `file`, the script `path` a command runs directly (no interpreter word), can
/// be run so: it has an execute bit, and a `#!` line naming what runs it.
fn check_runnable(file: &Path, path: &str, p: &str, f: &mut Findings) {
    if !crate::fs::executable(file) {
        f.error(
            p,
            "script-not-executable",
            format!("`{path}` is run directly, but it has no execute bit, so the host's shell would refuse to run it (exit 126, Permission denied); run it with its interpreter (`{}`), or make it executable (`chmod +x {path}`)", command::with_interpreter(path)),
        );
        return;
    }
    // A program (ELF, Mach-O, anything with a NUL near its start) is run by the kernel
    // itself; only text without `#!` is handed to the shell.
    let mut start = Vec::with_capacity(512);
    let read = std::fs::File::open(file).and_then(|r| {
        use std::io::Read;
        r.take(512).read_to_end(&mut start)
    });
    let text_without_interpreter = !start.starts_with(b"#!") && !start.contains(&0);
    if read.is_ok() && text_without_interpreter {
        f.warn(
            p,
            "script-no-interpreter-line",
            format!("`{path}` is run directly, but it does not start with a `#!` line, so the host's shell runs it as a shell script; start it with one (e.g. `#!/usr/bin/env node`), or run it with its interpreter (`{}`)", command::with_interpreter(path)),
        );
    }
}

/// `cmd` quoted in a one-line diagnostic: a line break is written `\n`.
fn one_line(cmd: &str) -> String {
    cmd.replace('\n', "\\n")
}

/// True when `path` is a path to an interpreter (`bin/node`, `/usr/bin/python3`) or to
/// `env`, which a recipe author most likely meant as the interpreter itself.
fn interpreter_path(path: &str) -> bool {
    path.rsplit_once('/')
        .is_some_and(|(_, base)| base == "env" || command::INTERPRETERS.contains(&base))
}

/// Refuses script paths that could leave the recipe root.
pub fn check_relative(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("is empty");
    }
    if path.starts_with('/') || path.starts_with('~') {
        return Err("is absolute");
    }
    if path.contains('$') || path.contains('`') {
        return Err("uses shell expansion");
    }
    if path.contains('\\') {
        return Err("contains a backslash");
    }
    if Path::new(path)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
    {
        return Err("contains `..`");
    }
    Ok(())
}

enum ScriptState {
    File,
    WillBeAssembled,
    /// A folder on the way could not be looked at (permissions): whether the script is
    /// there cannot be told.
    Unreadable,
    Missing,
    NotAFile(&'static str),
    ThroughLink(String),
}

/// Walks `rel` from `dir` one component at a time, without following links.
fn script_state(dir: &Path, rel: &Path) -> ScriptState {
    let mut here = dir.to_path_buf();
    let parts: Vec<_> = rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    for (i, part) in parts.iter().enumerate() {
        here.push(part);
        let last = i + 1 == parts.len();
        match std::fs::symlink_metadata(&here) {
            Err(e) if unsearchable(&e) => return ScriptState::Unreadable,
            Err(_) => {
                return if is_source_tree_output(dir, rel) {
                    ScriptState::WillBeAssembled
                } else {
                    ScriptState::Missing
                }
            }
            Ok(m) if m.file_type().is_symlink() => {
                return ScriptState::ThroughLink(rel_display(dir, &here));
            }
            Ok(m) if last && m.is_dir() => return ScriptState::NotAFile("a folder"),
            Ok(m) if last && !m.is_file() => return ScriptState::NotAFile("a special file"),
            Ok(m) if !last && !m.is_dir() => return ScriptState::Missing,
            Ok(_) => {}
        }
    }
    ScriptState::File
}

/// For a script `src/<path>` named in a source tree's command: the `scripts/` file assemble
/// makes of it (`src/<path>.ts` gives `scripts/<path>.js`), which is what an archive holds.
fn shipped_for_source(dir: &Path, path: &str) -> Option<String> {
    let mut parts = Path::new(path)
        .components()
        .filter(|c| !matches!(c, Component::CurDir));
    if parts.next() != Some(Component::Normal("src".as_ref())) {
        return None;
    }
    if !crate::assemble::is_source_tree(dir) {
        return None;
    }
    let rest: Vec<String> = parts
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let rest = rest.join("/");
    let rest = if let Some(stem) = rest.strip_suffix(".mts") {
        format!("{stem}.mjs")
    } else if let Some(stem) = rest.strip_suffix(".ts") {
        format!("{stem}.js")
    } else {
        rest
    };
    Some(format!("scripts/{rest}"))
}

/// In a TypeScript source tree, `scripts/<path>.js` is produced by `assemble` from
/// `src/<path>.ts` or `.js` (`.mjs` from `.mts` or `.mjs`), at any depth under `src/` and
/// whatever dots the name holds; it is not missing yet. Test and declaration files and
/// hidden entries are never assembled, so a script named after one is missing.
fn is_source_tree_output(dir: &Path, rel: &Path) -> bool {
    matches!(assembled_from(dir, rel), Some((_, Source::Found)))
}

/// True when looking a path up failed because a folder on the way could not be searched
/// (permissions), which the tree's walk reports; any other failure (not there, a file where
/// a folder should be, a name too long to exist) means no file is there.
fn unsearchable(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::PermissionDenied
}

/// True when `path` is a regular file, or cannot be looked at (a folder on the way this
/// user may not search): the tree's walk reports that folder, and a source that may well
/// be there is never called missing.
fn file_or_unreadable(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => m.is_file(),
        Err(e) => unsearchable(&e),
    }
}

/// What a source tree holds for the script `scripts/<path>` that `assemble` writes.
enum Source {
    Found,
    /// Test and declaration files and hidden entries, which `assemble` never ships.
    NeverShipped,
    Absent,
}

/// For `rel` = `scripts/<path>.js` (or `.mjs`) in a source tree (a `src/`): the TypeScript file it is made from, `src/<path>.ts` (or `.mts`), and
/// whether that file, or its JavaScript twin, is there to be assembled; for a data file
/// `scripts/<path>`, the `src/<path>` it is copied from.
fn assembled_from(dir: &Path, rel: &Path) -> Option<(String, Source)> {
    let parts: Option<Vec<&str>> = (rel.components())
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let Some(["scripts", folders @ .., file]) = parts.as_deref() else {
        return None;
    };
    // A `scripts/` of the maintainer's beside `src/` is copied, `src/` compiled next to it.
    if !crate::assemble::is_source_tree(dir) {
        return None;
    }
    let hidden = folders.iter().chain([file]).any(|p| p.starts_with('.'));
    let src = (folders.iter()).fold(dir.join("src"), |p, f| p.join(f));
    let (stem, sources) = if let Some(stem) = file.strip_suffix(".js") {
        (stem, ["ts", "js"])
    } else if let Some(stem) = file.strip_suffix(".mjs") {
        (stem, ["mts", "mjs"])
    } else if crate::assemble::is_data_file(file) {
        // Copied as it is, from the same path under `src/`.
        let source = (folders.iter())
            .chain([file])
            .fold(String::from("src"), |p, f| format!("{p}/{f}"));
        let state = match (hidden, file_or_unreadable(&src.join(file))) {
            (true, _) => Source::NeverShipped,
            (false, true) => Source::Found,
            (false, false) => Source::Absent,
        };
        return Some((source, state));
    } else {
        return None;
    };
    let typescript = (folders.iter())
        .chain([&stem])
        .fold(String::from("src"), |p, f| format!("{p}/{f}"))
        + "."
        + sources[0];
    if hidden || crate::assemble::is_test_file(&format!("{stem}.{}", sources[0])) {
        return Some((typescript, Source::NeverShipped));
    }
    let found = (sources.iter()).any(|ext| file_or_unreadable(&src.join(format!("{stem}.{ext}"))));
    Some((
        typescript,
        if found { Source::Found } else { Source::Absent },
    ))
}

/// How to give a missing script: in a source tree, the source `assemble` makes it from.
fn missing_script_fix(dir: &Path, rel: &Path) -> String {
    match assembled_from(dir, rel) {
        Some((ts, Source::NeverShipped)) => format!(
            "`hookpack assemble` would make it from `{ts}`, but test and declaration files and hidden files are never assembled; give the handler's source another name"
        ),
        Some((source, _)) if !source.ends_with(".ts") && !source.ends_with(".mts") => format!(
            "`hookpack assemble` copies it from `{source}`, which is not there; create `{source}`"
        ),
        Some((ts, _)) => {
            let twin = if ts.ends_with(".mts") { "mjs" } else { "js" };
            // The source there in the other module kind (`src/main.mts` for `main.js`).
            let (stem, others, becomes) = match ts.strip_suffix(".mts") {
                Some(stem) => (stem, ["ts", "js"], "js"),
                None => (ts.strip_suffix(".ts").unwrap_or(&ts), ["mts", "mjs"], "mjs"),
            };
            let other = others
                .iter()
                .map(|ext| format!("{stem}.{ext}"))
                .find(|source| dir.join(source).is_file());
            if let Some(other) = other {
                let script = format!(
                    "scripts{}.{becomes}",
                    stem.strip_prefix("src").unwrap_or(stem)
                );
                return format!(
                    "`{other}` is there, which assemble makes into `{script}`: name `{script}` in the command (or rename the source to `{ts}`)"
                );
            }
            format!(
                "`hookpack assemble` makes it from `{ts}` (or `.{twin}`), which is not there; create `{ts}`, or name in the command the script an existing file in `src/` becomes (`src/<path>.ts` gives `scripts/<path>.js`)"
            )
        }
        None => "create it (or run `hookpack assemble` for a TypeScript source tree)".into(),
    }
}

fn rel_display(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

/// One thing in a recipe folder, as [`walk_tree`] found it.
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// Path inside the folder, `/`-separated, no leading `./`.
    pub rel: String,
    /// Where it is on disk.
    pub path: PathBuf,
    /// `None` for a folder; the size for a file.
    pub size: Option<u64>,
    /// Any execute bit set (folders: always).
    pub exec: bool,
}

/// Walks a folder once, listing its folders and plain files and reporting what a package
/// must not hold: links (the folder itself included), special files, hard links,
/// `node_modules`, non-UTF-8 names.
///
/// Hidden entries (`.DS_Store`, `.git/`) are passed over, as assemble never ships them, and
/// so are folders with no file below them, which git does not keep: a working tree and a
/// checkout of it list the same.
///
/// Depth first, each folder's entries sorted bytewise by name. Each folder is listed and
/// its files' sizes read (`statx` relative to the open folder, so no path is looked up from
/// the root again) before the next one is opened, so a deep tree never holds more than one
/// folder open.
pub fn walk_tree(dir: &Path) -> (Vec<TreeEntry>, Vec<Diagnostic>) {
    walk_tree_with(dir, true)
}

/// [`walk_tree`], hidden entries included when not `skip_hidden`: an extracted archive is
/// checked whole, since install lays out all it holds.
fn walk_tree_with(dir: &Path, skip_hidden: bool) -> (Vec<TreeEntry>, Vec<Diagnostic>) {
    let mut walk = Walk {
        root: dir,
        skip_hidden,
        entries: Vec::new(),
        problems: Vec::new(),
        pending: Vec::new(),
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => walk.problems.push(symlink_diagnostic(dir)),
        _ => walk.list(dir),
    }
    while let Some(level) = walk.pending.last_mut() {
        match level.next() {
            Some(child) => walk.visit(child),
            None => {
                walk.pending.pop();
            }
        }
    }
    let mut entries = walk.entries;
    let mut holding = std::collections::HashSet::new();
    for e in entries.iter().filter(|e| e.size.is_some()) {
        let mut rel = e.rel.as_str();
        while let Some((folder, _)) = rel.rsplit_once('/') {
            if holding.contains(folder) {
                break;
            }
            holding.insert(folder.to_string());
            rel = folder;
        }
    }
    entries.retain(|e| e.size.is_some() || holding.contains(&e.rel));
    (entries, walk.problems)
}

/// Whether a name is hidden (`.DS_Store`, `.git`): never packed.
pub fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// Whether a hidden name is one that version control, file managers or editors leave in a
/// folder (`.git`, `.gitignore`, `.DS_Store`, `._x`, `.vscode`, `.x.swp`): left out of packs
/// like any hidden name, but without a warning, since no handler reads it.
fn is_tool_litter(name: &std::ffi::OsStr) -> bool {
    const PREFIXES: [&str; 12] = [
        ".git",
        ".hg",
        ".svn",
        ".DS_Store",
        "._",
        ".directory",
        ".idea",
        ".vscode",
        ".editorconfig",
        ".eslint",
        ".prettier",
        ".npm",
    ];
    let name = name.to_string_lossy();
    PREFIXES.iter().any(|p| name.starts_with(p))
        || name == ".keep"
        || name.ends_with(".swp")
        || name.ends_with(".swo")
}

/// Whether any file or folder name on `path` is hidden (`.` and `..` are not names).
pub fn in_hidden(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, std::path::Component::Normal(name) if is_hidden(name)))
}

fn symlink_diagnostic(path: &Path) -> Diagnostic {
    Diagnostic::file_level(path, Severity::Error, "symlink", "symbolic links are not allowed in a recipe (they can point outside it); replace the link with a copy of what it points to")
}

struct Walk<'a> {
    root: &'a Path,
    /// Pass over hidden entries (see [`walk_tree`]).
    skip_hidden: bool,
    entries: Vec<TreeEntry>,
    problems: Vec<Diagnostic>,
    /// What is still to visit in each folder being walked, outermost first.
    pending: Vec<std::vec::IntoIter<Listed>>,
}

/// One entry of a folder, as read while the folder was open.
struct Listed {
    name: std::ffi::OsString,
    path: PathBuf,
    kind: std::io::Result<std::fs::FileType>,
    /// For a plain file: size, any execute bit, hard link count.
    facts: Option<std::io::Result<(u64, bool, u64)>>,
}

impl Walk<'_> {
    fn cannot_read(&mut self, path: &Path, e: &std::io::Error) {
        self.problems.push(Diagnostic::file_level(
            path,
            Severity::Error,
            "io-error",
            format!("cannot read: {e}"),
        ));
    }

    /// Queues the entries of the folder `dir`, sorted by name; the folder is closed again
    /// before this returns.
    fn list(&mut self, dir: &Path) {
        let read = std::fs::read_dir(dir).and_then(|entries| {
            entries
                .map(|entry| {
                    let entry = entry?;
                    let kind = entry.file_type();
                    let facts = match &kind {
                        Ok(k) if k.is_file() => Some(entry.metadata().map(|m| file_facts(&m))),
                        _ => None,
                    };
                    Ok(Listed {
                        name: entry.file_name(),
                        path: entry.path(),
                        kind,
                        facts,
                    })
                })
                .collect::<std::io::Result<Vec<Listed>>>()
        });
        match read {
            Ok(mut children) => {
                children.sort_by(|a, b| a.name.cmp(&b.name));
                self.pending.push(children.into_iter());
            }
            Err(e) => self.cannot_read(dir, &e),
        }
    }

    fn visit(&mut self, child: Listed) {
        if self.skip_hidden && is_hidden(&child.name) {
            // `tests/` is never packed, hidden or not, and `test` runs every case there.
            let in_tests = (child.path.strip_prefix(self.root).ok())
                .is_some_and(|rel| rel.starts_with("tests"));
            if !is_tool_litter(&child.name) && !in_tests {
                self.problems.push(Diagnostic::file_level(
                    &child.path,
                    Severity::Warning,
                    "hidden-not-packed",
                    "hidden files and folders are never packed, so this one is left out; if a \
                     handler reads it, rename it without the leading dot",
                ));
            }
            return;
        }
        let path = child.path;
        let ft = match child.kind {
            Ok(ft) => ft,
            Err(e) => return self.cannot_read(&path, &e),
        };
        // In any case: on a case-insensitive disk node finds modules in `Node_Modules`.
        if child.name.eq_ignore_ascii_case("node_modules") {
            self.problems.push(Diagnostic::file_level(&path, Severity::Error, "node-modules", "recipes may not contain `node_modules` (in any letter case: on a case-insensitive disk node reads modules from it); assemble bundles what a handler needs into `scripts/`, so delete this folder"));
            return;
        }
        let rel = path.strip_prefix(self.root).unwrap_or(&path);
        let Some(rel) = rel.to_str() else {
            self.problems.push(Diagnostic::file_level(
                &path,
                Severity::Error,
                "name-not-utf8",
                "this name is not valid UTF-8, and archive paths must be; rename it",
            ));
            // Still walked, so what is inside is reported too.
            if ft.is_dir() {
                self.list(&path);
            }
            return;
        };
        let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
        if ft.is_symlink() {
            self.problems.push(symlink_diagnostic(&path));
        } else if ft.is_dir() {
            self.entries.push(TreeEntry {
                rel,
                path: path.clone(),
                size: None,
                exec: true,
            });
            self.list(&path);
        } else if let Some(facts) = child.facts {
            match facts {
                Ok((_, _, links)) if links > 1 => {
                    self.problems.push(Diagnostic::file_level(&path, Severity::Error, "hard-link", format!("this file has {links} hard links; packs refuse hard links, so replace it with a plain copy")));
                }
                Ok((size, exec, _)) => self.entries.push(TreeEntry {
                    rel,
                    path,
                    size: Some(size),
                    exec,
                }),
                Err(e) => self.cannot_read(&path, &e),
            }
        } else {
            self.problems.push(Diagnostic::file_level(
                &path,
                Severity::Error,
                "special-file",
                "devices, fifos and sockets are not allowed in a recipe; remove it",
            ));
        }
    }
}

/// Checks the files of a recipe folder (or a shared helper folder) as [`walk_tree`] does,
/// and, when `want_readme`, that it has a README.
pub fn check_tree(dir: &Path, want_readme: bool) -> Vec<Diagnostic> {
    let mut out = walk_tree(dir).1;
    if want_readme {
        out.extend(check_readme(dir));
    }
    out
}

fn check_readme(dir: &Path) -> Option<Diagnostic> {
    let readme = dir.join("README.md");
    let message = match std::fs::symlink_metadata(&readme) {
        // A link there is refused as every link in a recipe is, by its own error.
        Ok(m) if m.is_file() || m.file_type().is_symlink() => return None,
        // A folder (or fifo) of that name: "has no README.md" would send the user looking.
        Ok(m) => format!(
            "README.md is {}, where the recipe's README file belongs; make it a file saying \
             what the recipe does and how to configure it",
            crate::fs::kind_of(&m.file_type())
        ),
        _ => "the recipe has no README.md; add one saying what it does and how to configure it"
            .to_string(),
    };
    Some(Diagnostic::file_level(
        dir,
        Severity::Warning,
        "readme-missing",
        message,
    ))
}

/// Size, any execute bit, and hard link count of a file.
#[cfg(unix)]
fn file_facts(m: &std::fs::Metadata) -> (u64, bool, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.len(), m.mode() & 0o111 != 0, m.nlink())
}

#[cfg(not(unix))]
fn file_facts(m: &std::fs::Metadata) -> (u64, bool, u64) {
    (m.len(), false, 1)
}

/// Why `id`, named after the judgment product `product`, is no recipe id.
pub(crate) fn product_id_why(id: &Id, product: &str) -> String {
    format!(
        "recipe id `{id}` is named after the judgment product {product}, which the recipe \
         format reserves: recipe ids name what a recipe does, and the official recipes name \
         {product} only as their backend; name the recipe after what it does, e.g. \
         `tool-gate`"
    )
}

/// Warns of a `name` or `summary` (of a manifest, or an index's recipe at `at`) holding a
/// character that breaks it or reorders what is around it where it is listed. Output
/// escapes them; a warning, so an index or archive holding one still installs.
pub(crate) fn check_one_line_text(
    obj: &serde_json::Map<String, Value>,
    at: &str,
    f: &mut Findings,
) {
    for key in ["name", "summary"] {
        let Some(c) =
            (obj.get(key).and_then(Value::as_str)).and_then(crate::output::unsafe_in_line)
        else {
            continue;
        };
        f.warn(
            &crate::json::pointer_push(at, key),
            "text-unsafe",
            format!(
                "`{key}` holds {c}, which catalogs and hosts may show as a line break, as \
                 text reordered, or not at all; remove it"
            ),
        );
    }
}

/// Validates a whole recipe folder: manifest and tree, and that each of its files can be
/// opened, as pack must.
pub fn validate_folder(dir: &Path) -> Vec<Diagnostic> {
    let (mut out, tree, _) = validate_folder_tree(dir, true);
    for e in tree.iter().filter(|e| e.size.is_some()) {
        let named = |out: &[Diagnostic]| {
            (out.iter()).any(|d| d.file == e.path && d.code == crate::validate::IO_ERROR)
        };
        if let Err(err) = std::fs::File::open(&e.path) {
            if !named(&out) {
                let err = crate::fs::FsError::new("open", &e.path, err);
                out.push(crate::validate::fs_diagnostic(&err));
            }
        }
    }
    out
}

/// Validates a whole recipe folder, also returning what its tree holds and the manifest's
/// bytes (when they could be read).
fn validate_folder_tree(
    dir: &Path,
    skip_hidden: bool,
) -> (Vec<Diagnostic>, Vec<TreeEntry>, Option<Vec<u8>>) {
    let manifest = dir.join("recipe.json");
    let (mut out, bytes) = match crate::fs::read_limited(&manifest, MAX_MANIFEST_BYTES) {
        Ok(b) => (validate_manifest_bytes(&manifest, &b, Some(dir)), Some(b)),
        Err(e) => (vec![crate::validate::fs_diagnostic(&e)], None),
    };
    let (tree, mut problems) = walk_tree_with(dir, skip_hidden);
    if bytes.is_none() {
        // Already said why it cannot be read (a fifo: "expected a regular file"); the tree's
        // "fifos are not allowed in a recipe; remove it" would be a second error for it.
        problems.retain(|d| d.file != manifest);
    }
    out.extend(problems);
    if !tree
        .iter()
        .any(|e| e.rel == "README.md" && e.size.is_some())
    {
        out.extend(check_readme(dir));
    }
    (out, tree, bytes)
}

/// Validates a `recipe.json`; `dir` is its recipe folder when the file sits in one.
pub fn validate_manifest_file(file: &Path, dir: Option<&Path>) -> Vec<Diagnostic> {
    let bytes = match crate::fs::read_limited(file, MAX_MANIFEST_BYTES) {
        Ok(b) => b,
        Err(e) => return vec![crate::validate::fs_diagnostic(&e)],
    };
    validate_manifest_bytes(file, &bytes, dir)
}

/// Validates manifest bytes; `file` names it in the diagnostics.
pub fn validate_manifest_bytes(file: &Path, bytes: &[u8], dir: Option<&Path>) -> Vec<Diagnostic> {
    crate::validate::check_bytes(file, bytes, |v, f| check_manifest(v, dir, f))
}

/// A recipe folder that validated, and the warnings it had.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The manifest.
    pub recipe: Recipe,
    /// Warnings (no errors: those refuse the load).
    pub warnings: Vec<Diagnostic>,
}

/// Loads a recipe folder, refusing it when validation finds errors (or warnings, when
/// `strict`).
pub fn load(dir: &Path, strict: bool) -> Result<Loaded, Vec<Diagnostic>> {
    load_with_tree(dir, strict).map(|(loaded, _)| loaded)
}

/// [`load`], also returning what the folder holds (for packing it without a second walk).
pub fn load_with_tree(
    dir: &Path,
    strict: bool,
) -> Result<(Loaded, Vec<TreeEntry>), Vec<Diagnostic>> {
    load_tree(dir, strict, true)
}

/// [`load`] for a tree extracted from an archive: its hidden entries are checked too, as
/// install lays them out with the rest (an archive pack did not make may hold them).
pub fn load_extracted(dir: &Path) -> Result<Loaded, Vec<Diagnostic>> {
    load_tree(dir, false, false).map(|(loaded, _)| loaded)
}

fn load_tree(
    dir: &Path,
    strict: bool,
    skip_hidden: bool,
) -> Result<(Loaded, Vec<TreeEntry>), Vec<Diagnostic>> {
    let (diags, tree, bytes) = validate_folder_tree(dir, skip_hidden);
    if diags
        .iter()
        .any(|d| d.severity == Severity::Error || strict)
    {
        return Err(diags);
    }
    // Validation passed, so the manifest was read.
    let bytes = bytes.unwrap_or_default();
    let recipe: Recipe = serde_json::from_slice(&bytes).map_err(|e| {
        vec![Diagnostic::file_level(
            &dir.join("recipe.json"),
            Severity::Error,
            "manifest-invalid",
            e.to_string(),
        )]
    })?;
    Ok((
        Loaded {
            recipe,
            warnings: diags,
        },
        tree,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_paths_must_stay_inside() {
        assert!(check_relative("scripts/main.js").is_ok());
        assert!(check_relative("./scripts/main.js").is_ok());
        for bad in [
            "/abs.js",
            "~/x.js",
            "../x.js",
            "scripts/../../x.js",
            "$HOME/x.js",
            "a\\b.js",
            "",
        ] {
            assert!(check_relative(bad).is_err(), "{bad}");
        }
    }
}
