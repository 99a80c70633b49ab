//! `hookpack validate`: find out what each path is, check it, report every problem.
//!
//! Paths may name a recipe folder, a folder of recipes (this repo's `recipes/` or FinClaw's
//! `hooks/` with `recipes/` and `lib/`), a `recipe.json`, a `hooks.json`, a profile or
//! workspace folder (its `hooks.json`), a catalog folder or a `hooks-index.json`. One bad path never stops the others from being checked.

use crate::diagnostic::{Diagnostic, Findings, Severity};
use crate::fs::FsError;
use crate::json::{self, pointer_push, Parsed, SyntaxError};
use crate::{catalog, hooks_json, recipe};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Largest `hooks.json` or index read.
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

/// What a path turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A folder with a `recipe.json`.
    RecipeFolder,
    /// A folder of recipe folders (with an optional shared `lib/`).
    RecipesFolder,
    /// FinClaw's `hooks/` layout: `recipes/` and `lib/`.
    HooksDir,
    /// A `recipe.json` file.
    RecipeManifest,
    /// A `hooks.json` file.
    HooksFile,
    /// A `hooks-index.json` file.
    CatalogIndex,
    /// A folder holding `hooks-index.json`.
    CatalogFolder,
    /// Could not be read or recognised.
    Unknown,
}

/// One path checked.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// The path as given.
    #[serde(serialize_with = "crate::output::path_text")]
    pub path: PathBuf,
    /// What it was taken to be.
    pub kind: Kind,
    /// Errors found under it.
    pub errors: usize,
    /// Warnings found under it.
    pub warnings: usize,
    /// Recipes checked under it: source or assembled folders, or a lone `recipe.json`
    /// (archives an index lists are `catalog verify`'s).
    pub recipes: usize,
    /// Their folders, to tell one recipe given twice (`validate r r/recipe.json`).
    #[serde(skip)]
    pub recipe_dirs: Vec<PathBuf>,
}

/// The outcome of validating some paths.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Each path given, in order.
    pub paths: Vec<Checked>,
    /// Every problem, in path order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Number of problems of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// True when reading failed for a reason outside the input (permissions, I/O).
    pub fn environment_failed(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code == IO_ERROR)
    }

    /// Turns warnings into errors, but for those whose code is in `allowed`.
    pub fn make_strict(&mut self, allowed: &[String]) {
        // Each path's diagnostics follow the ones of the paths before it.
        let mut rest = &mut self.diagnostics[..];
        for p in &mut self.paths {
            let n = (p.errors + p.warnings).min(rest.len());
            let (own, after) = std::mem::take(&mut rest).split_at_mut(n);
            rest = after;
            for d in own.iter_mut() {
                if d.severity == Severity::Warning && !allowed.iter().any(|c| c == d.code) {
                    d.severity = Severity::Error;
                    p.errors += 1;
                    p.warnings = p.warnings.saturating_sub(1);
                }
            }
        }
    }
}

/// Code of diagnostics that report a failure of the machine rather than of the input.
pub const IO_ERROR: &str = "io-error";

/// A diagnostic for a filesystem failure: `io-error` when the machine failed (exit 3),
/// `path-invalid` when the path itself is the problem (exit 1).
pub fn fs_diagnostic(e: &FsError) -> Diagnostic {
    let code = if e.is_input_problem() {
        "path-invalid"
    } else {
        IO_ERROR
    };
    let message = match e.source.kind() {
        std::io::ErrorKind::NotFound => "does not exist; check the path".to_string(),
        std::io::ErrorKind::PermissionDenied => format!(
            "cannot {}: permission denied; check the file's permissions",
            e.op
        ),
        _ => format!("cannot {}: {}", e.op, e.source),
    };
    Diagnostic::file_level(&e.path, Severity::Error, code, message)
}

/// A diagnostic for a document that is not JSON.
pub fn syntax_diagnostic(file: &Path, e: &SyntaxError) -> Diagnostic {
    Diagnostic::at(
        file,
        e.position,
        Severity::Error,
        "json-syntax",
        e.message.clone(),
    )
}

/// Reports keys given twice in one object: JSON readers keep only the last value, so the
/// first one silently disappears.
pub fn report_duplicates(parsed: &Parsed, f: &mut Findings) {
    for d in &parsed.duplicates {
        f.error_at(
            d.again,
            &pointer_push(&d.object_pointer, &d.key),
            "duplicate-key",
            format!(
                "key `{}` appears twice in this object (first at line {}, column {}); readers keep only the last value, so remove one",
                d.key, d.first.line, d.first.column
            ),
        );
    }
    f.count_unlisted(Severity::Error, parsed.more_duplicates);
}

/// Parses `bytes` as JSON and runs `check` on it, with syntax errors and duplicate keys
/// reported first; `file` names the document in the diagnostics.
pub fn check_bytes(
    file: &Path,
    bytes: &[u8],
    check: impl FnOnce(&serde_json::Value, &mut Findings),
) -> Vec<Diagnostic> {
    check_parsed_bytes(file, bytes, json::parse, check)
}

/// [`check_bytes`] with the JSON read by `parse`.
pub fn check_parsed_bytes(
    file: &Path,
    bytes: &[u8],
    parse: fn(&[u8]) -> Result<json::Parsed, json::SyntaxError>,
    check: impl FnOnce(&serde_json::Value, &mut Findings),
) -> Vec<Diagnostic> {
    match parse(bytes) {
        Err(e) => vec![syntax_diagnostic(file, &e)],
        Ok(parsed) => {
            let mut f = Findings::new(file, Some(&parsed.locations));
            report_duplicates(&parsed, &mut f);
            check(&parsed.value, &mut f);
            f.finish()
        }
    }
}

/// Validates every path.
pub fn validate_paths(paths: &[PathBuf]) -> Report {
    let mut report = Report::default();
    for path in paths {
        let Validated {
            kind,
            mut diags,
            recipe_dirs,
        } = validate_path(path);
        // Reading order: by file, then by place in the file.
        diags.sort_by(crate::diagnostic::Diagnostic::reading_order);
        report.paths.push(Checked {
            path: path.clone(),
            kind,
            errors: diags
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count(),
            warnings: diags
                .iter()
                .filter(|d| d.severity == Severity::Warning)
                .count(),
            recipes: recipe_dirs.len(),
            recipe_dirs,
        });
        report.diagnostics.extend(diags);
    }
    report
}

/// What [`validate_path`] found.
pub struct Validated {
    /// What the path was taken to be.
    pub kind: Kind,
    /// Its problems.
    pub diags: Vec<Diagnostic>,
    /// The folders of the recipes checked under it.
    pub recipe_dirs: Vec<PathBuf>,
}

impl Validated {
    /// `path` taken for `kind`: a `recipe.json` is its folder's recipe.
    fn new(path: &Path, kind: Kind, diags: Vec<Diagnostic>) -> Validated {
        let recipe_dirs = if kind == Kind::RecipeManifest {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            vec![dir.unwrap_or(Path::new(".")).to_path_buf()]
        } else {
            Vec::new()
        };
        Validated {
            kind,
            diags,
            recipe_dirs,
        }
    }
}

/// Works out what `path` is and checks it.
pub fn validate_path(path: &Path) -> Validated {
    let meta = match crate::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            let text = path.to_string_lossy();
            let lower = text.to_ascii_lowercase();
            let url = lower.starts_with("https://") || lower.starts_with("http://");
            if url && e.source.kind() == std::io::ErrorKind::NotFound {
                let message = format!(
                    "is a URL, and validate reads local files only; `hookpack catalog verify \
                     {text}` checks a published index and its archives"
                );
                let d = Diagnostic::file_level(path, Severity::Error, "path-invalid", message);
                return Validated::new(path, Kind::Unknown, vec![d]);
            }
            return Validated::new(path, Kind::Unknown, vec![fs_diagnostic(&e)]);
        }
    };
    if meta.is_dir() {
        validate_dir(path)
    } else if meta.is_file() {
        let (kind, diags) = validate_file(path);
        Validated::new(path, kind, diags)
    } else {
        Validated::new(
            path,
            Kind::Unknown,
            vec![Diagnostic::file_level(
                path,
                Severity::Error,
                "path-invalid",
                "this is a device, fifo or socket, not a file or folder to validate",
            )],
        )
    }
}

fn validate_dir(dir: &Path) -> Validated {
    if dir.join("recipe.json").exists() {
        let mut out = Vec::new();
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let lib = crate::assemble::Layout::recipes_dir(parent).lib_dir;
        check_recipes(&[dir.to_path_buf()], lib.as_deref(), &mut out);
        return Validated {
            kind: Kind::RecipeFolder,
            diags: out,
            recipe_dirs: vec![dir.to_path_buf()],
        };
    }
    if dir.join("recipes").is_dir() && !dir.join("recipes/recipe.json").exists() {
        let (mut out, recipe_dirs) = validate_recipes_folder(&dir.join("recipes"));
        let lib = dir.join("lib");
        if lib.is_dir() {
            out.extend(recipe::check_tree(&lib, false));
        }
        return Validated {
            kind: Kind::HooksDir,
            diags: out,
            recipe_dirs,
        };
    }
    if dir.join(catalog::INDEX_FILE).is_file() {
        let index = dir.join(catalog::INDEX_FILE);
        let mut out = validate_document(&index, catalog::validate_on_disk);
        // An index beside recipe folders (put there by hand) must not hide them.
        let mut recipe_dirs = Vec::new();
        if holds_recipe_folders(dir) {
            let (found, dirs) = validate_recipes_folder(dir);
            out.extend(found);
            recipe_dirs = dirs;
        }
        return Validated {
            kind: Kind::CatalogFolder,
            diags: out,
            recipe_dirs,
        };
    }
    // A profile (`hooks.json`, `hooks/`, `logs/`) or a workspace (`.finclaw/hooks.json`):
    // what there is to check in it is its hooks.json.
    if !holds_recipe_folders(dir) {
        let found = ["hooks.json", ".finclaw/hooks.json"]
            .map(|f| dir.join(f))
            .into_iter()
            .find(|f| f.is_file());
        if let Some(file) = found {
            let (kind, diags) = validate_file(&file);
            return Validated::new(&file, kind, diags);
        }
    }
    let (diags, recipe_dirs) = validate_recipes_folder(dir);
    Validated {
        kind: Kind::RecipesFolder,
        diags,
        recipe_dirs,
    }
}

/// True when a folder directly under `dir` holds a `recipe.json`.
pub(crate) fn holds_recipe_folders(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().join("recipe.json").exists())
    })
}

/// Validates each recipe folder under `dir`, and gives those folders; `lib/` holds shared
/// helpers and dot-folders are ignored.
fn validate_recipes_folder(dir: &Path) -> (Vec<Diagnostic>, Vec<PathBuf>) {
    let found = match crate::pack::survey(dir, None) {
        Ok(found) => found,
        Err(e) => return (vec![fs_diagnostic(&e)], Vec::new()),
    };
    let mut out = found.problems;
    out.extend(crate::pack::hidden_recipes(dir));
    let recipes = found.recipes;
    if let Some(lib) = &found.lib {
        out.extend(recipe::check_tree(lib, false));
    }
    let lib = crate::assemble::Layout::recipes_dir(dir).lib_dir;
    check_recipes(&recipes, lib.as_deref(), &mut out);
    if recipes.is_empty() && !out.iter().any(|d| d.severity == Severity::Error) {
        out.push(Diagnostic::file_level(dir, Severity::Error, "no-recipes", "no recipes found: expected recipe folders (each with a recipe.json), a `recipes/` folder, or a hooks-index.json"));
    }
    (out, recipes)
}

/// Validates recipe folders, then what only assembling or testing them would show:
/// TypeScript errors and unresolvable imports in source trees (those with no other error),
/// and fixture cases (`tests/*.json`) that are not valid cases or that `test` would not run.
fn check_recipes(dirs: &[PathBuf], lib_dir: Option<&Path>, out: &mut Vec<Diagnostic>) {
    let mut clean = Vec::new();
    for dir in dirs {
        let found = recipe::validate_folder(dir);
        if !found.iter().any(|d| d.severity == Severity::Error) {
            clean.push(dir.clone());
        }
        out.extend(found);
    }
    out.extend(shared_handler_ids(&clean));
    out.extend(crate::assemble::check_sources(&clean, lib_dir));
    // What pack would refuse in an assembled tree's archive (source trees: above).
    for dir in clean.iter().filter(|d| !crate::assemble::is_source_tree(d)) {
        out.extend(crate::pack::check_folder_installable(dir));
        out.extend(crate::assemble::check_assembled_scripts(dir));
    }
    for dir in dirs {
        let tests = dir.join("tests");
        if !tests.is_dir() {
            out.extend(crate::fixture::tests_not_a_folder(&tests));
            continue;
        }
        // The handler ids cases name are checked against a recipe that loads.
        let recipe = recipe::load(dir, false).ok().map(|l| l.recipe);
        match crate::fixture::case_files(&tests) {
            Ok((files, problems)) => {
                out.extend(problems);
                let manifest = dir.join("recipe.json");
                out.extend(crate::fixture::check_case_files(
                    &files,
                    recipe.as_ref(),
                    &manifest,
                ));
            }
            Err(e) => out.push(fs_diagnostic(&e)),
        }
    }
}

/// A warning at each handler whose id a recipe met before in `dirs` has on the same event:
/// hosts run one handler per id and event, so a profile holding both recipes skips the
/// handler of the one installed second. (Within one recipe, ids are unique already.)
fn shared_handler_ids(dirs: &[PathBuf]) -> Vec<Diagnostic> {
    let mut first: std::collections::HashMap<(String, String), String> = Default::default();
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(loaded) = recipe::load(dir, false) else {
            continue;
        };
        let r = &loaded.recipe;
        for (event, groups) in &r.hooks {
            for (g, group) in groups.iter().enumerate() {
                for (h, handler) in group.hooks.iter().enumerate() {
                    let Some(id) = handler.id.as_ref().map(|i| i.as_str().to_string()) else {
                        continue;
                    };
                    let key = (event.clone(), id.clone());
                    let Some(other) = first.get(&key) else {
                        first.insert(key, r.id.to_string());
                        continue;
                    };
                    if other == r.id.as_str() {
                        continue;
                    }
                    let pointer = format!("/hooks/{event}/{g}/hooks/{h}/id");
                    let message = format!(
                        "handler id `{id}` of {event} is also one of recipe `{other}` here: \
                         hosts run one handler per id and event, so in a profile with both \
                         recipes the one installed second does not run; give this handler \
                         another id (such as `{}-{id}`)",
                        r.id
                    );
                    // At the id's line and column, as the recipe's other problems are: the
                    // manifest loaded, so it is read and parses again.
                    let file = dir.join("recipe.json");
                    let at = crate::fs::read_limited(&file, MAX_DOCUMENT_BYTES)
                        .ok()
                        .and_then(|bytes| crate::json::parse(&bytes).ok())
                        .map(|parsed| parsed.locations.locate(&pointer));
                    out.push(Diagnostic {
                        line: at.map(|p| p.line),
                        column: at.map(|p| p.column),
                        pointer,
                        ..Diagnostic::file_level(
                            &file,
                            Severity::Warning,
                            "handler-id-shared",
                            message,
                        )
                    });
                }
            }
        }
    }
    out
}

fn validate_document(file: &Path, check: fn(&Path, &[u8]) -> Vec<Diagnostic>) -> Vec<Diagnostic> {
    match crate::fs::read_limited(file, MAX_DOCUMENT_BYTES) {
        Ok(bytes) => check(file, &bytes),
        Err(e) => vec![fs_diagnostic(&e)],
    }
}

fn validate_file(file: &Path) -> (Kind, Vec<Diagnostic>) {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.as_str() {
        "recipe.json" => {
            let dir = file.parent().map(|p| {
                if p.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    p
                }
            });
            return (
                Kind::RecipeManifest,
                recipe::validate_manifest_file(file, dir),
            );
        }
        catalog::INDEX_FILE => {
            return (
                Kind::CatalogIndex,
                validate_document(file, catalog::validate_on_disk),
            )
        }
        "hooks.json" => {
            return (
                Kind::HooksFile,
                validate_document(file, hooks_json::validate_bytes),
            )
        }
        _ => {}
    }
    // Another name: tell the kind from the content.
    let bytes = match crate::fs::read_limited(file, MAX_DOCUMENT_BYTES) {
        Ok(b) => b,
        Err(e) => return (Kind::Unknown, vec![fs_diagnostic(&e)]),
    };
    let parsed = match json::parse(&bytes) {
        Ok(p) => p,
        // An archive or SHA256SUMS (`validate catalog/*`) is no broken JSON document: say
        // what it is not, and what checks it. A document that opens like JSON gets its
        // syntax error at its place.
        Err(_) if !meant_as_json(&name, &bytes) => {
            let folder = match file.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
                _ => ".".to_string(),
            };
            return (
                Kind::Unknown,
                vec![Diagnostic::file_level(
                    file,
                    Severity::Error,
                    "kind-unknown",
                    format!("this file is not JSON, so none that validate checks (recipe.json, hooks.json, {}); a catalog's archives and SHA256SUMS are checked with its index by `hookpack catalog verify {folder}`", catalog::INDEX_FILE),
                )],
            );
        }
        Err(e) => return (Kind::Unknown, vec![syntax_diagnostic(file, &e)]),
    };
    let schema = parsed
        .value
        .get("schema")
        .and_then(|s| s.as_str())
        .map(String::from);
    let has_hooks = parsed.value.get("hooks").is_some();
    // The checks parse the document again: not held twice.
    drop(parsed);
    match schema.as_deref() {
        Some(recipe::SCHEMA) => (Kind::RecipeManifest, recipe::validate_manifest_bytes(file, &bytes, None)),
        Some(catalog::SCHEMA) => (Kind::CatalogIndex, catalog::validate_on_disk(file, &bytes)),
        _ if has_hooks => (Kind::HooksFile, hooks_json::validate_bytes(file, &bytes)),
        _ => (
            Kind::Unknown,
            vec![Diagnostic::file_level(
                file,
                Severity::Error,
                "kind-unknown",
                format!("cannot tell what this file is: name it recipe.json, hooks.json or {}, or give it a `schema` of {} or {}", catalog::INDEX_FILE, recipe::SCHEMA, catalog::SCHEMA),
            )],
        ),
    }
}

/// Whether a file that does not parse was meant as JSON: named `*.json`, or opening
/// (after a byte-order mark and blanks) like a JSON object or array.
pub(crate) fn meant_as_json(name: &str, bytes: &[u8]) -> bool {
    let start = bytes
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(bytes)
        .trim_ascii_start();
    name.to_ascii_lowercase().ends_with(".json")
        || start.starts_with(b"{")
        || start.starts_with(b"[")
}
