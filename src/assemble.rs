//! `hookpack assemble`: recipe source trees → trees that run as `node scripts/main.js` on
//! Node 20 with no `node_modules`, no network and no build step.
//!
//! TypeScript is compiled in-process ([`crate::typescript`]); imports of the shared helpers
//! (`lib/`) are rewritten to `./lib/…`, `.ts` specifiers become `.js`, only the helpers a
//! recipe actually imports are copied (never tests), and `scripts/package.json` declares
//! ES modules. Everything is compiled in memory first: one TypeScript error anywhere and
//! nothing is written. Each recipe folder in OUT is replaced whole, so files from an earlier
//! run never survive.
//!
//! It refuses: symbolic links and `node_modules` in sources, bare imports (there is no
//! `node_modules` at run time), imports that leave the recipe and the shared helpers, and an
//! OUT that is or holds the sources.

use crate::diagnostic::{Diagnostic, Severity};
use crate::error::Error;
use crate::id::Id;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Component, Path, PathBuf};

/// Start of the name of assemble's staging folder in OUT, followed by the assemble that
/// made it (its [`crate::leftover::Maker::tag`], so a later one can tell one whose assemble
/// died) and a random part.
const STAGING_PREFIX: &str = ".hookpack-assemble-";

/// The file in OUT listing the recipe folders assembles made there, one id a line: only
/// those are removed once their sources are gone. A folder that is not listed (the user's,
/// one `hookpack install` put in a profile) is never taken for stale output.
const ASSEMBLED_LIST: &str = ".assembled-by-hookpack";

/// In the staging folder, the list OUT holds while folders are being moved (see
/// `swap_in`).
const PART_WAY_LIST: &str = ".assembled-part-way";

/// Where the recipes and the shared helpers are.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Folder of recipe folders.
    pub recipes_dir: PathBuf,
    /// Shared helpers, if any.
    pub lib_dir: Option<PathBuf>,
}

impl Layout {
    /// FinClaw's layout: `DIR/recipes/<id>/` and `DIR/lib/`.
    pub fn hooks_dir(dir: &Path) -> Layout {
        let lib = dir.join("lib");
        Layout {
            recipes_dir: dir.join("recipes"),
            lib_dir: lib.is_dir().then_some(lib),
        }
    }

    /// This repo's layout: `DIR/<id>/` with helpers in `DIR/lib/` (or a sibling `lib/`).
    pub fn recipes_dir(dir: &Path) -> Layout {
        let inner = dir.join("lib");
        // `.` and `..` have no name, and `Path::parent` would give "" for `.`.
        let parent = match dir.file_name() {
            Some(_) => dir.parent().map(Path::to_path_buf),
            None => Some(dir.join("..")),
        };
        let sibling = parent.map(|p| p.join("lib"));
        let lib_dir = if inner.is_dir() {
            Some(inner)
        } else {
            sibling.filter(|s| s.is_dir())
        };
        Layout {
            recipes_dir: dir.to_path_buf(),
            lib_dir,
        }
    }
}

/// What `assemble` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where sources are.
    pub layout: Layout,
    /// Output folder; each recipe lands in `OUT/<id>/`.
    pub out_dir: PathBuf,
    /// Assemble only this recipe.
    pub only: Option<Id>,
}

/// One assembled recipe.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Assembled {
    /// Recipe id.
    pub id: String,
    /// Its folder in OUT.
    #[serde(serialize_with = "crate::output::path_text")]
    pub path: PathBuf,
    /// Files written, relative to `path`, sorted.
    pub files: Vec<String>,
}

/// The outcome of `assemble`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Recipes assembled, by id.
    pub recipes: Vec<Assembled>,
    /// Stale recipe folders removed from OUT.
    #[serde(serialize_with = "crate::output::paths_text")]
    pub removed: Vec<PathBuf>,
    /// Warnings about the sources (a missing README, a hidden file left out).
    pub warnings: Vec<Diagnostic>,
}

/// What goes into one output file.
enum Content {
    Bytes(Vec<u8>),
    Copy(PathBuf),
}

struct OutFile {
    content: Content,
    exec: bool,
}

/// True when `dir` is a TypeScript source tree (has `src/`).
pub fn is_source_tree(dir: &Path) -> bool {
    dir.join("src").is_dir()
}

pub(crate) fn is_test_file(name: &str) -> bool {
    let stem = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext));
    stem.is_some_and(|s| s.ends_with(".test") || s.ends_with(".spec") || s.ends_with(".d"))
}

/// Whether the file `name` in `src/` is data that assemble copies into `scripts/` as it is:
/// anything but code (modules, which it compiles; test and declaration files, which it
/// skips; and code of kinds it refuses: `.cjs`, `.cts`, `.tsx`, `.jsx`).
pub(crate) fn is_data_file(name: &str) -> bool {
    let code = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx"];
    !code.iter().any(|ext| name.ends_with(ext))
}

/// Why the file `name` in `src/` is refused, if it is code of a kind assemble does not
/// compile: left out, a handler or an import of it would fail only when the hook runs.
fn not_assembled(name: &str) -> Option<String> {
    if is_test_file(name) {
        return None;
    }
    if name.ends_with(".cts") {
        Some("CommonJS TypeScript (`.cts`) is not supported: recipes are ES modules, so rename it to `.ts` and use `import`/`export`".into())
    } else if name.ends_with(".cjs") {
        Some("CommonJS (`.cjs`) is not supported: recipes are ES modules, so rename it to `.js` and use `import`/`export`".into())
    } else if name.ends_with(".tsx") || name.ends_with(".jsx") {
        Some("JSX is not supported: hooks run under plain Node 20, with no JSX runtime; rename it to `.ts` (or `.js`) and write it without JSX".into())
    } else if let Some(dot) = name.rfind('.') {
        // `Util.TS` would be copied as data, TypeScript and all, and node loads no module
        // whose extension is not in lower case.
        let lower = format!("{}{}", &name[..dot], name[dot..].to_ascii_lowercase());
        if lower == name || is_data_file(&lower) {
            return None;
        }
        not_assembled(&lower).or_else(|| {
            Some(format!(
                "its extension is not in lower case, so it would be neither compiled nor \
                 loaded by node; rename it to `{lower}`"
            ))
        })
    } else {
        None
    }
}

/// Whether the file `name` is an ES module assemble compiles: TypeScript (`.ts`, `.mts`)
/// or JavaScript (`.js`, `.mjs`), whose imports are checked and rewritten alike.
fn is_module(name: &str) -> bool {
    [".ts", ".mts", ".js", ".mjs"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// Lexically normalises `p` (resolving `.` and `..`), without touching the filesystem.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            // `..` cancels a folder name; with none left (`../recipes`) it stays.
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The relative specifier from the folder of `from` to `to` (both relative to one root).
fn relative_specifier(from: &Path, to: &Path) -> String {
    let from_dir: Vec<_> = from
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    let to_parts: Vec<_> = to.components().collect();
    let common = from_dir
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..from_dir.len() {
        parts.push("..".into());
    }
    // Node resolves a specifier as a URL: `#` would start a fragment, `?` a query, and `%`
    // an escape, so a file named `a#1.js` is imported as `./a%231.js`.
    for c in &to_parts[common..] {
        let name = c.as_os_str().to_string_lossy();
        parts.push(
            name.replace('%', "%25")
                .replace('#', "%23")
                .replace('?', "%3F"),
        );
    }
    let joined = parts.join("/");
    if joined.starts_with("..") {
        joined
    } else {
        format!("./{joined}")
    }
}

fn with_js(p: &Path) -> PathBuf {
    p.with_extension("js")
}

/// Where a module is written: TypeScript compiled to `.js` (`.mts` to `.mjs`), anything
/// else (`.js`, `.mjs`, `.json`) under its own name.
fn output_name(module: &Path) -> PathBuf {
    match module.extension().and_then(|e| e.to_str()) {
        Some("ts") => with_js(module),
        Some("mts") => module.with_extension("mjs"),
        _ => module.to_path_buf(),
    }
}

/// Why a module cannot be imported at run time although it exists, if so: files the
/// output never holds (tests, declarations, hidden files).
fn never_shipped(module: &Path) -> Option<&'static str> {
    let name = module.file_name()?.to_string_lossy();
    if is_test_file(&name) {
        Some("it is a test or declaration file, which is never shipped; move what you need into a regular module")
    } else if crate::recipe::in_hidden(module) {
        Some("hidden files and folders are never shipped; rename it")
    } else {
        None
    }
}

/// A TypeScript (or JavaScript) module found by resolving a relative import.
fn resolve_module(base: &Path) -> Option<PathBuf> {
    let s = base.to_string_lossy();
    let candidates: Vec<PathBuf> =
        if s.ends_with(".ts") || s.ends_with(".mts") || s.ends_with(".json") {
            vec![base.to_path_buf()]
        } else if s.ends_with(".js") {
            vec![base.with_extension("ts"), base.to_path_buf()]
        } else if s.ends_with(".mjs") {
            vec![base.with_extension("mts"), base.to_path_buf()]
        } else {
            vec![
                PathBuf::from(format!("{s}.ts")),
                PathBuf::from(format!("{s}.js")),
                base.join("index.ts"),
                base.join("index.js"),
            ]
        };
    candidates.into_iter().find(|c| c.is_file())
}

/// The relative import `spec` without the end that makes it name a folder for node: trailing
/// slashes, and `/.` parts there, since URL resolution turns `./a.ts/.` into `./a.ts/`.
/// `None` when it ends in neither.
fn folder_tail(spec: &str) -> Option<&str> {
    let mut file = spec;
    while let Some(rest) = file.strip_suffix('/').or_else(|| file.strip_suffix("/.")) {
        file = rest;
    }
    (file.len() < spec.len()).then_some(file)
}

/// Why the relative import `spec`, which ends in `/` or `/.` (see [`folder_tail`]), is
/// refused (from a module in `dir`), with the specifier to write instead when one resolves:
/// the name without that end, or the folder's index file.
fn trailing_slash(spec: &str, dir: &Path) -> String {
    let file = folder_tail(spec).unwrap_or(spec);
    let tail = &spec[file.len()..];
    let tail = if tail.chars().all(|c| c == '/') {
        "slash".to_string()
    } else {
        format!("`{tail}`")
    };
    let mut fixes = vec![format!("{file}/index.ts"), format!("{file}/index.js")];
    // `./` and `../` without their slash are no relative specifiers at all.
    if !matches!(file, "." | "..") {
        fixes.insert(0, file.to_string());
    }
    let why = format!("a trailing {tail} names a folder, and node loads no folder as a module");
    match fixes
        .iter()
        .find(|f| resolve_module(&normalize(&dir.join(f))).is_some())
    {
        Some(fix) if fix == file => format!("{why}; drop the trailing {tail}: `{fix}`"),
        Some(fix) => format!("{why}; drop the trailing {tail} and name the file: `{fix}`"),
        None => format!(
            "{why}; drop the trailing {tail} and name the module's file (there is no `{}`)",
            fixes.join("`, `")
        ),
    }
}

/// The files [`resolve_module`] looks for, as specifiers like `spec`: `` `./a.ts`, `./a.js` ``.
fn tried(spec: &str) -> String {
    let names: Vec<String> = tried_names(spec).iter().map(|n| format!("`{n}`")).collect();
    names.join(", ")
}

/// The files an import of `spec` may name (see [`tried`]).
fn tried_names(spec: &str) -> Vec<String> {
    let s = spec.trim_end_matches('/');
    if s.ends_with(".ts") || s.ends_with(".mts") || s.ends_with(".json") {
        vec![s.into()]
    } else if let Some(stem) = s.strip_suffix(".js") {
        vec![format!("{stem}.ts"), s.into()]
    } else if let Some(stem) = s.strip_suffix(".mjs") {
        vec![format!("{stem}.mts"), s.into()]
    } else {
        vec![
            format!("{s}.ts"),
            format!("{s}.js"),
            format!("{s}/index.ts"),
            format!("{s}/index.js"),
        ]
    }
}

/// The module a missing import most likely meant: in the folder it names, the one whose
/// name is within two edits of it (`hooks.ts` for `hook.ts`, `./utils.js` for `util.ts`);
/// else, when a path climbs a folder too few or too many, the one file of that name under
/// the recipe folder and the shared lib/ (`roots`).
fn near_module(wanted: &Path, roots: &[&Path]) -> Option<PathBuf> {
    const KINDS: [&str; 5] = [".ts", ".mts", ".js", ".mjs", ".json"];
    let stem = |name: &str| -> String {
        let cut = KINDS.iter().find_map(|k| name.strip_suffix(k));
        cut.unwrap_or(name).to_string()
    };
    let is_module = |p: &Path| {
        p.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| KINDS.iter().any(|k| n.ends_with(k)) && !n.ends_with(".d.ts"))
    };
    let name = stem(wanted.file_name()?.to_str()?);
    let beside: Vec<PathBuf> = match wanted.parent().map(std::fs::read_dir) {
        Some(Ok(entries)) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| is_module(p))
            .collect(),
        _ => Vec::new(),
    };
    let file_stem = |p: &PathBuf| stem(&p.file_name().unwrap_or_default().to_string_lossy());
    if let Some(near) = crate::event::nearest(name.as_str(), beside, file_stem) {
        return Some(near);
    }
    // A bounded walk: a recipe and its helpers are a few dozen files.
    let mut same: Vec<PathBuf> = Vec::new();
    for root in roots {
        for p in visible_files(root, 6, 2_000) {
            if is_module(&p) && file_stem(&p) == name && !same.contains(&p) {
                same.push(p);
            }
        }
    }
    match same.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The files below `root` a recipe could ship (nothing hidden, nothing in `node_modules`),
/// in name order, at most `depth` folders down and `most` of them: a bounded look for
/// what an import or a helper names.
fn visible_files(root: &Path, depth: usize, most: usize) -> impl Iterator<Item = PathBuf> {
    walkdir::WalkDir::new(root)
        .max_depth(depth)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !crate::recipe::is_hidden(e.file_name()) && e.file_name() != "node_modules"
        })
        .flatten()
        .filter(|e| e.file_type().is_file())
        .take(most)
        .map(walkdir::DirEntry::into_path)
}

/// `path` as its names are spelt on disk, matching each name below `base` whatever its
/// case when no name matches exactly and one alone matches so; `None` when `path` is not
/// below `base` or some name has no such match.
fn spelt_on_disk(path: &Path, base: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(base).ok()?;
    let mut spelt = base.to_path_buf();
    for part in rest.components() {
        let std::path::Component::Normal(name) = part else {
            return None;
        };
        let dir = if spelt.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &spelt
        };
        let names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|entry| entry.ok().map(|e| e.file_name()))
            .collect();
        let found = if names.iter().any(|n| n == name) {
            name.to_os_string()
        } else {
            let lower = name.to_string_lossy().to_lowercase();
            let mut alike = names
                .into_iter()
                .filter(|n| n.to_string_lossy().to_lowercase() == lower);
            match (alike.next(), alike.next()) {
                (Some(only), None) => only,
                _ => return None,
            }
        };
        spelt.push(found);
    }
    Some(spelt)
}

/// The relative import, from a module in `dir`, of the source file `file`.
fn source_specifier(dir: &Path, file: &Path) -> String {
    let from: Vec<_> = dir.components().collect();
    let to: Vec<_> = file.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    if parts.is_empty() {
        parts.push(".".into());
    }
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// Where a module ends up, relative to the recipe's output root.
enum Place {
    /// In the recipe's own `src/`: the path under `scripts/`.
    Own(PathBuf),
    /// In the shared helpers: the path under `lib/`.
    Lib(PathBuf),
}

/// A shared helper compiled: its JavaScript, the helpers it imports and its links.
type CompiledHelper = (Vec<u8>, Vec<PathBuf>, crate::typescript::Links);

/// What the recipes planned in one run share: how their modules are compiled, and the
/// shared helpers compiled once (a helper's output does not depend on the recipe importing
/// it, as its imports stay inside `lib/`), by path.
#[derive(Default)]
struct Shared {
    compiled: std::sync::Mutex<std::collections::HashMap<PathBuf, CompiledHelper>>,
    /// Whether each compiled module ends in an inline source map to its source (`test`).
    mapped: bool,
}

struct Planner<'a> {
    recipe_dir: &'a Path,
    lib_dir: Option<&'a Path>,
    shared: &'a Shared,
    ts_errors: Vec<Diagnostic>,
    files: BTreeMap<String, OutFile>,
    /// The source of each output file, to name both when two would land on one name.
    origins: BTreeMap<String, PathBuf>,
    lib_queue: VecDeque<PathBuf>,
    lib_done: BTreeSet<PathBuf>,
    /// What each compiled output file imports and exports by name (its source is in
    /// `origins`).
    links: BTreeMap<String, crate::typescript::Links>,
}

impl Planner<'_> {
    /// Adds the output file `out`, made from `from`; two sources for one output name (say
    /// `src/a.ts` and `src/a.js`) are refused instead of one silently replacing the other.
    fn put(&mut self, out: impl Into<String>, file: OutFile, from: &Path) -> Result<(), Error> {
        let out = out.into();
        // Every output path is joined onto OUT: it must stay a plain relative path there.
        // (A name like `x\..\..\f` once became `x/../../f` and was written outside OUT.)
        if out.contains('\\') {
            return Err(refused_name(from, "a backslash"));
        }
        if !out.split('/').all(|c| !matches!(c, "" | "." | "..")) {
            return Err(refused_name(from, "an empty, `.` or `..` path component"));
        }
        if let Some(first) = self.origins.get(&out) {
            return Err(Error::PackRefused {
                path: from.to_path_buf(),
                reason: format!(
                    "it would be written to `{out}`, like {}; rename one of them",
                    first.display()
                ),
            });
        }
        self.origins.insert(out.clone(), from.to_path_buf());
        self.files.insert(out, file);
        Ok(())
    }

    /// The folder holding both the recipe and the helpers: below it, imports are checked
    /// for the case of each name (see [`spelt_on_disk`]).
    fn case_base(&self) -> PathBuf {
        let recipe = normalize(self.recipe_dir);
        let Some(lib) = self.lib_dir.map(normalize) else {
            return recipe.parent().map(Path::to_path_buf).unwrap_or_default();
        };
        recipe
            .components()
            .zip(lib.components())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect()
    }

    fn locate(&self, module: &Path) -> Option<Place> {
        let src = normalize(&self.recipe_dir.join("src"));
        let module = normalize(module);
        if let Ok(rel) = module.strip_prefix(&src) {
            return Some(Place::Own(rel.to_path_buf()));
        }
        let lib = normalize(self.lib_dir?);
        module
            .strip_prefix(&lib)
            .ok()
            .map(|rel| Place::Lib(rel.to_path_buf()))
    }

    /// The files of the helpers folder that a helper in `dir` reads beside itself at `paths`
    /// (`new URL("./list.txt", import.meta.url)`), so that they ship with it: data, not
    /// code (that is imported), never a test or hidden file. Others are left to run time.
    fn helper_data(&self, dir: &Path, paths: &[crate::typescript::FileBeside]) -> Vec<PathBuf> {
        // As node reads the URL: `my%20file.txt` is `my file.txt`.
        let named: Vec<String> = (paths.iter())
            .filter_map(|beside| url_path(&beside.path).ok().flatten())
            .collect();
        let (folders, files): (Vec<&str>, Vec<&str>) = (named.iter().map(String::as_str))
            .partition(|path| folder_tail(path).is_some() || dir.join(path).is_dir());
        let mut wanted: Vec<PathBuf> = (folders.iter())
            .flat_map(|path| self.helper_folder(dir, path))
            .collect();
        wanted.extend(files.into_iter().filter_map(|path| {
            let file = normalize(&dir.join(path));
            // A module named by its output name (`./child.js` for `child.ts`) ships
            // compiled, as if imported.
            let file = if is_module(path) {
                resolve_module(&file).filter(|_| !path.ends_with("ts"))?
            } else {
                file
            };
            match self.locate(&file) {
                Some(Place::Lib(rel)) if never_shipped(&rel).is_none() && file.is_file() => {
                    Some(file)
                }
                _ => None,
            }
        }));
        wanted
    }

    /// The files of the folder `path` of the shared helpers, which a helper in `dir` reads
    /// (`readdirSync(new URL("./templates/", import.meta.url))`): each that ships (not
    /// hidden, not a test file, not TypeScript, which would ship compiled under another
    /// name). None for a folder holding the helper itself (`new URL("./", …)`, lib/ whole).
    fn helper_folder(&self, dir: &Path, path: &str) -> Vec<PathBuf> {
        let folder = normalize(&dir.join(folder_tail(path).unwrap_or(path)));
        let below =
            matches!(self.locate(&folder), Some(Place::Lib(rel)) if !rel.as_os_str().is_empty());
        if !below || dir.starts_with(&folder) {
            return Vec::new();
        }
        visible_files(&folder, 8, 10_000)
            .filter(|file| {
                let name = file.to_string_lossy();
                !(name.ends_with(".ts") || name.ends_with(".mts"))
                    && matches!(self.locate(file), Some(Place::Lib(rel)) if never_shipped(&rel).is_none())
            })
            .collect()
    }

    /// Why `new URL(path, import.meta.url)` in a recipe's own module in `dir` names nothing
    /// at run time: a file of the shared helpers folder, which is not beside `scripts/`
    /// there (helpers ship as `scripts/lib/`, with only the files they read).
    fn names_lib(&self, dir: &Path, path: &str) -> Option<String> {
        let target = normalize(&dir.join(path));
        let Some(Place::Lib(rel)) = self.locate(&target) else {
            return None;
        };
        target.exists().then(|| {
            format!(
                "`{path}` is in the shared lib/, which is not there when the handler runs \
                 (helpers ship in scripts/lib/, with only the files they read); read it in a \
                 helper in lib/, where `new URL(\"./{}\", import.meta.url)` ships it, and \
                 import that helper",
                url_escaped(&rel.to_string_lossy())
            )
        })
    }

    /// Compiles `file` (at `out_rel` under the output root) and queues the helpers it uses.
    fn compile(&mut self, file: &Path, out_rel: &Path) -> Result<(), Error> {
        let is_lib = out_rel.starts_with("scripts/lib");
        let cached = if is_lib {
            self.shared
                .compiled
                .lock()
                .ok()
                .and_then(|c| c.get(file).cloned())
        } else {
            None
        };
        if let Some((js, deps, links)) = cached {
            let out = out_rel.to_string_lossy().into_owned();
            self.links.insert(out.clone(), links);
            self.put(
                out,
                OutFile {
                    content: Content::Bytes(js),
                    exec: false,
                },
                file,
            )?;
            for m in deps {
                if self.lib_done.insert(m.clone()) {
                    self.lib_queue.push_back(m);
                }
            }
            return Ok(());
        }
        let mut recipe_specific = false;
        let mut bytes = Vec::new();
        let roots = source_roots(self.recipe_dir, self.lib_dir);
        std::io::Read::read_to_end(&mut open_source(file, &roots)?, &mut bytes)
            .map_err(|e| crate::fs::FsError::new("read", file, e))?;
        let source = match String::from_utf8(bytes) {
            Ok(source) => source,
            Err(e) => {
                self.ts_errors
                    .push(not_utf8(file, e.as_bytes(), e.utf8_error()));
                return Ok(());
            }
        };
        let mut wanted_lib: Vec<PathBuf> = Vec::new();
        let dir = file.parent().unwrap_or(Path::new("."));
        let mut rewrite = |spec: &str| -> crate::typescript::Resolution {
            if let Some(answer) = not_relative(spec) {
                return answer;
            }
            // A path drops a trailing slash (and `.` parts), so `./util.ts/` or `./util.ts/.`
            // would find the file `util.ts`, while node takes either for a folder and loads
            // no folder as a module.
            if folder_tail(spec).is_some() {
                return Err(trailing_slash(spec, dir));
            }
            let wanted = normalize(&dir.join(spec));
            let Some(module) = resolve_module(&wanted) else {
                if wanted.is_file() {
                    return Err("modules of this kind are not assembled: only .ts, .mts, .js, .mjs and .json are (recipes have no JSX or CommonJS); rename or convert it".into());
                }
                // Specifiers name files here (a file may be called `a#1.ts`), so a query or
                // fragment is part of the name; say so when the name without it is there.
                if let Some(at) = spec.find(['?', '#']) {
                    let (file, extra) = spec.split_at(at);
                    if resolve_module(&normalize(&dir.join(file))).is_some() {
                        return Err(format!(
                            "`{file}` is there, but imports here name files, so `{extra}` is \
                             taken as part of the name; a query or fragment is not supported: \
                             remove `{extra}`"
                        ));
                    }
                }
                let base = self.case_base();
                let meant = (tried_names(spec).iter())
                    .map(|name| normalize(&dir.join(name)))
                    .find_map(|path| spelt_on_disk(&path, &base).filter(|p| p.is_file()));
                if let Some(meant) = meant {
                    return Err(format!(
                        "no such file (tried {}); did you mean `{}`? Imports must spell a \
                         file's name in its case: Linux, where hooks run, tells them apart",
                        tried(spec),
                        source_specifier(dir, &meant)
                    ));
                }
                if let Some(meant) = near_module(&wanted, &roots) {
                    return Err(format!(
                        "no such file (tried {}); did you mean `{}`?",
                        tried(spec),
                        source_specifier(dir, &meant)
                    ));
                }
                if wanted.is_dir() {
                    return Err(format!(
                        "`{spec}` is a folder, and node loads no folder as a module: name the \
                         module in it (`{}/…`)",
                        spec.trim_end_matches('/')
                    ));
                }
                // Only a declaration file: types, and nothing node could load.
                let text = wanted.to_string_lossy();
                let stem = [".ts", ".js", ".mts", ".mjs"]
                    .iter()
                    .find_map(|ext| text.strip_suffix(ext))
                    .unwrap_or(&text);
                let declared = [".d.ts", ".d.mts"]
                    .iter()
                    .map(|ext| PathBuf::from(format!("{stem}{ext}")))
                    .find(|p| p.is_file());
                if let Some(declared) = declared {
                    return Err(format!(
                        "no such file (tried {}); only the declaration file `{}` is there, \
                         which holds types and no code, so node would have nothing to load (a \
                         `declare`d value or enum has none either): import its types with \
                         `import type {{ … }}`, which leaves no import behind, and put values \
                         in a `.ts` module",
                        tried(spec),
                        source_specifier(dir, &declared)
                    ));
                }
                return Err(format!("no such file (tried {})", tried(spec)));
            };
            // A file system that ignores case (macOS's and Windows' by default) finds
            // `./Util.ts` for `util.ts`; the output would import a name Linux does not find.
            // Elsewhere the lookup was exact, and listing folders for each import costs.
            let ignores_case = cfg!(any(target_os = "macos", target_os = "windows"));
            if let Some(meant) = ignores_case
                .then(|| spelt_on_disk(&module, &self.case_base()))
                .flatten()
            {
                if meant != module {
                    return Err(format!(
                        "the file is spelt `{}`: imports must spell a file's name in its case, \
                         as Linux, where hooks run, tells them apart",
                        source_specifier(dir, &meant)
                    ));
                }
            }
            if let Some(why) = not_json(&module, &roots) {
                return Err(why);
            }
            let place = self.locate(&module);
            // Judged on the path inside src/ or lib/: the folders above them may be hidden
            // (`~/.finclaw/hooks/…`) without that mattering.
            if let Some(why) = match &place {
                Some(Place::Own(rel) | Place::Lib(rel)) => never_shipped(rel),
                None => None,
            } {
                return Err(why.into());
            }
            let target = match place {
                Some(Place::Own(rel)) => {
                    recipe_specific = true;
                    Path::new("scripts").join(output_name(&rel))
                }
                Some(Place::Lib(rel)) => {
                    wanted_lib.push(module.clone());
                    Path::new("scripts/lib").join(output_name(&rel))
                }
                None if module.starts_with(normalize(self.recipe_dir)) => {
                    return Err(format!(
                        "it leaves the recipe's src/ and the shared lib/; move it into src/ and \
                         import it from there, or, for a data file at the recipe's top (copied \
                         beside scripts/ as it is), read it when the handler runs: \
                         `readFileSync(new URL({spec:?}, import.meta.url))`"
                    ));
                }
                None => {
                    return Err(
                        "it leaves the recipe's src/ and the shared lib/; move it into \
                                one of them and import it from there"
                            .into(),
                    );
                }
            };
            Ok(Some(relative_specifier(out_rel, &target)))
        };
        let result = if self.shared.mapped {
            crate::typescript::compile_module_mapped(&source, file, &mut rewrite)
        } else {
            crate::typescript::compile_module(&source, file, &mut rewrite)
        };
        match result {
            Ok((js, links)) => {
                // A helper's data files ship beside it; a recipe's own are copied with src/.
                if is_lib {
                    wanted_lib.extend(self.helper_data(dir, &links.files_beside));
                }
                for beside in &links.files_beside {
                    // The path as node reads the URL (`file:x.ts`, `..\\lib\\x`, `x.ts?v`).
                    let Ok(Some(path)) = url_path(&beside.path) else {
                        continue;
                    };
                    let why = names_a_source(dir, &path)
                        .or_else(|| (!is_lib).then(|| self.names_lib(dir, &path))?);
                    if let Some(why) = why {
                        let place = (beside.line, beside.column);
                        self.ts_errors
                            .push(error_at(file, place, "import-unresolved", why));
                    }
                }
                let js = js.into_bytes();
                if is_lib && !recipe_specific {
                    if let Ok(mut c) = self.shared.compiled.lock() {
                        let entry = (js.clone(), wanted_lib.clone(), links.clone());
                        c.insert(file.to_path_buf(), entry);
                    }
                }
                self.links
                    .insert(out_rel.to_string_lossy().into_owned(), links);
                self.put(
                    out_rel.to_string_lossy().into_owned(),
                    OutFile {
                        content: Content::Bytes(js),
                        exec: false,
                    },
                    file,
                )?;
            }
            Err(diags) => {
                // As for any file, at most MAX_LISTED are listed and the rest counted.
                let unlisted = diags.len().saturating_sub(crate::diagnostic::MAX_LISTED);
                for d in diags.into_iter().take(crate::diagnostic::MAX_LISTED) {
                    let place = (d.line, d.column);
                    self.ts_errors
                        .push(error_at(file, place, d.rule, d.message));
                }
                if unlisted > 0 {
                    self.ts_errors.push(Diagnostic::unlisted(file, unlisted, 0));
                }
            }
        }
        for m in wanted_lib {
            if self.lib_done.insert(m.clone()) {
                self.lib_queue.push_back(m);
            }
        }
        Ok(())
    }
}

/// What node would fail on when it loads an assembled tree's ES modules (`.mjs`, and `.js`
/// under a `package.json` saying `"type": "module"`): syntax errors, CommonJS names, and
/// imports of what the tree does not hold, each at its place. Source trees are checked as
/// they are compiled; CommonJS files (`.cjs`, other `.js`) are node's to read as such.
pub(crate) fn check_assembled_scripts(dir: &Path) -> Vec<Diagnostic> {
    let root = normalize(dir);
    let mut out = Vec::new();
    let files = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file());
    for entry in files {
        let file = entry.path();
        let es_module = match file.extension().and_then(|e| e.to_str()) {
            Some("mjs") => true,
            Some("js") => declares_module(file, dir),
            _ => false,
        };
        let Some(source) = es_module
            .then(|| std::fs::read_to_string(file).ok())
            .flatten()
        else {
            continue;
        };
        // Past the compiler's own limits a module is not read: they are no fault of it.
        if !crate::typescript::within_limits(&source) {
            out.push(Diagnostic::file_level(
                file,
                Severity::Warning,
                "module-not-read",
                format!(
                    "not read: it {}, past what validate's compiler reads, so node alone will \
                     tell its faults; run `node` on it to be sure it loads (then `validate \
                     --strict --allow module-not-read` lets this warning through)",
                    match source.len() > crate::typescript::MAX_SOURCE_LEN {
                        true => format!("is over {} bytes", crate::typescript::MAX_SOURCE_LEN),
                        false => format!(
                            "has brackets nested over {} deep",
                            crate::typescript::MAX_NESTING
                        ),
                    }
                ),
            ));
            continue;
        }
        let here = file.parent().unwrap_or(dir).to_path_buf();
        let mut check = |spec: &str| -> crate::typescript::Resolution {
            if spec.starts_with('#') {
                return package_import(spec, file, dir);
            }
            let scheme = |name: &str| crate::typescript::starts_with_scheme(spec, name);
            if scheme("data:") {
                return Ok(None);
            }
            if scheme("file:") {
                let why = "a `file:` URL names an absolute path (node reads `file:./x` as `/x`), \
                           not the folder the recipe is installed in; import a relative path \
                           (`./…`)";
                return Err(why.into());
            }
            if let Some(answer) = not_relative(spec) {
                return answer;
            }
            // Node reads the specifier as a URL: escapes decoded, a query or fragment
            // dropped.
            let Some(path) = url_path(spec).map_err(String::from)? else {
                return Ok(None);
            };
            let target = normalize(&here.join(path));
            if !target.starts_with(&root) {
                return Err("it leaves the recipe folder, which is all that is installed".into());
            }
            match target.is_file() {
                true => Ok(None),
                false => Err(format!(
                    "{} is not in the recipe (node imports the file named, extension \
                     included)",
                    target.display()
                )),
            }
        };
        if let Err(diags) = crate::typescript::check_module(&source, file, &mut check) {
            let unlisted = diags.len().saturating_sub(crate::diagnostic::MAX_LISTED);
            for d in diags.into_iter().take(crate::diagnostic::MAX_LISTED) {
                out.push(error_at(file, (d.line, d.column), d.rule, d.message));
            }
            if unlisted > 0 {
                out.push(Diagnostic::unlisted(file, unlisted, 0));
            }
        }
    }
    out
}

/// What an import of `spec` resolves to when it is not a relative path (`./`, `../`): a
/// Node built-in is kept; anything else is refused, as recipes ship no `node_modules`.
fn not_relative(spec: &str) -> Option<crate::typescript::Resolution> {
    if crate::typescript::is_node_builtin(spec) {
        return Some(Ok(None));
    }
    if let Some(name) = spec.strip_prefix("node:") {
        return Some(Err(crate::typescript::not_a_builtin(name)));
    }
    if spec.starts_with("./") || spec.starts_with("../") {
        return None;
    }
    Some(Err(
        "recipes run without node_modules; import Node built-ins as `node:…` or a \
              relative file"
            .into(),
    ))
}

/// Whether the `package.json` nearest `file` (up to the recipe folder `dir`) says
/// `"type": "module"`, which makes node load a `.js` as an ES module.
fn declares_module(file: &Path, dir: &Path) -> bool {
    nearest_manifest(file, dir).is_some_and(|(_, doc)| doc.is_some_and(|d| d["type"] == "module"))
}

/// The `package.json` nearest `file`, up to the recipe folder `dir`, as node finds it (the
/// first one met, whatever it holds), with its contents if they are JSON.
fn nearest_manifest(file: &Path, dir: &Path) -> Option<(PathBuf, Option<serde_json::Value>)> {
    for folder in file.ancestors().skip(1) {
        let manifest = folder.join("package.json");
        if manifest.is_file() {
            // Node reads one with a byte order mark as well.
            let doc = std::fs::read(&manifest).ok().and_then(|b| {
                serde_json::from_slice(b.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&b)).ok()
            });
            return Some((manifest, doc));
        }
        if folder == dir {
            break;
        }
    }
    None
}

/// Whether node 20 can resolve `spec`, a `#` specifier in `file`, through the `"imports"`
/// of the nearest `package.json`: an exact key, else the key with one `*` that matches with
/// the longest part before it (then the longest key), the `*` standing for at least one
/// character. A target is followed through conditions (`node`, `import`, `default`, in the
/// map's order); a relative one must name a file of the recipe, a package fails (no
/// `node_modules` ships), a list is node's to try in turn.
fn package_import(spec: &str, file: &Path, dir: &Path) -> crate::typescript::Resolution {
    if spec == "#" || spec.starts_with("#/") || spec.ends_with('/') {
        let why = "node refuses `#` alone, `#/…` and a name ending in `/` as import names; \
                   name the import `#name` in the package.json's \"imports\"";
        return Err(why.into());
    }
    let Some((manifest, doc)) = nearest_manifest(file, dir) else {
        return Err(format!(
            "node resolves `#` specifiers through the \"imports\" of the nearest package.json, \
             and none is in the recipe above {}; add one that maps it, or import a relative \
             path",
            file.display()
        ));
    };
    let Some(doc) = doc else {
        return Err(format!(
            "node resolves `#` specifiers through the \"imports\" of {}, which is not valid \
             JSON; fix it",
            manifest.display()
        ));
    };
    let imports = doc["imports"].as_object();
    let found = imports.and_then(|map| {
        map.get(spec).map(|t| (t, None)).or_else(|| {
            map.iter()
                .filter_map(|(key, t)| {
                    let (head, tail) = key.split_once('*')?;
                    if tail.contains('*') {
                        return None;
                    }
                    let middle = spec.strip_prefix(head)?.strip_suffix(tail)?;
                    (!middle.is_empty()).then_some(((head.len(), key.len()), (t, Some(middle))))
                })
                .max_by_key(|(rank, _)| *rank)
                .map(|(_, found)| found)
        })
    });
    let Some((target, star)) = found else {
        return Err(format!(
            "it is not among the \"imports\" of {}, through which node resolves `#` \
             specifiers; map it there, or import a relative path",
            manifest.display()
        ));
    };
    let target = match chosen_target(target) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return Err(format!(
                "{} maps it only under conditions node does not match when it imports a \
                 module (node 20 matches `node`, `import`, `module-sync`, `node-addons` and \
                 `default`)",
                manifest.display()
            ))
        }
        Err(other) => {
            return Err(format!(
                "{} maps it to {other}, which node does not resolve; map it to a relative \
                 path (`./…`)",
                manifest.display()
            ))
        }
    };
    let target = match star {
        Some(middle) => target.replace('*', middle),
        None => target.to_string(),
    };
    let Some(rest) = target.strip_prefix("./") else {
        // A built-in module by its bare name (`"#fs": "fs"`) is one node resolves.
        if !target.starts_with("node:") && crate::typescript::is_node_builtin(&target) {
            return Ok(None);
        }
        if let Some(answer) = not_relative(&target).filter(|a| a.is_err()) {
            if !target.contains(':') {
                return answer;
            }
        }
        return Err(format!(
            "{} maps it to `{target}`, which node 20 refuses as a target; map it to a relative \
             path (`./…`)",
            manifest.display()
        ));
    };
    // Node refuses `.`, `..` and `node_modules` segments, in any case and once decoded.
    let bad = |text: &str| {
        text.split(['/', '\\'])
            .any(|seg| seg == "." || seg == ".." || seg.eq_ignore_ascii_case("node_modules"))
    };
    let path = match url_path(&target) {
        Ok(Some(path)) if !bad(rest) && !bad(path.trim_start_matches("./")) => path,
        Err(why) => {
            return Err(format!(
                "{} maps it to `{target}`: {why}",
                manifest.display()
            ))
        }
        _ => {
            return Err(format!(
                "{} maps it to `{target}`, which node refuses (a target may not hold `.`, `..` \
                 or `node_modules` segments); map it to a plain relative path",
                manifest.display()
            ))
        }
    };
    let base = manifest.parent().unwrap_or(dir);
    let resolved = normalize(&base.join(&path));
    if resolved.starts_with(normalize(dir)) && resolved.is_file() {
        return Ok(None);
    }
    Err(format!(
        "{} maps it to `{target}`, which is not in the recipe",
        manifest.display()
    ))
}

/// The target node 20 takes from an `"imports"` value when it imports an ES module: a
/// string as it is; in a conditions object, the first condition it matches whose value
/// gives a target (one giving none is passed over); in a list, the first string starting
/// with `./` or object. `Ok(None)` when nothing matches; `Err` names a value node refuses.
fn chosen_target(value: &serde_json::Value) -> Result<Option<&str>, String> {
    const CONDITIONS: [&str; 5] = ["node", "import", "module-sync", "node-addons", "default"];
    match value {
        serde_json::Value::String(t) => Ok(Some(t)),
        // Node refuses a conditions object with a key that is a number.
        serde_json::Value::Object(conditions)
            if conditions
                .keys()
                .any(|k| k.bytes().all(|b| b.is_ascii_digit())) =>
        {
            Err(value.to_string())
        }
        serde_json::Value::Object(conditions) => {
            for (key, next) in conditions {
                if CONDITIONS.contains(&key.as_str()) {
                    if let Some(t) = chosen_target(next)? {
                        return Ok(Some(t));
                    }
                }
            }
            Ok(None)
        }
        serde_json::Value::Array(items) => {
            let first = items
                .iter()
                .find(|t| t.is_object() || t.as_str().is_some_and(|s| s.starts_with("./")));
            match first {
                Some(t) => chosen_target(t),
                None => Err(value.to_string()),
            }
        }
        other => Err(other.to_string()),
    }
}

/// An error at line and column `place` of the source `file`.
fn error_at(
    file: &Path,
    (line, column): (u32, u32),
    rule: &'static str,
    message: String,
) -> Diagnostic {
    let place = crate::json::Position { line, column };
    Diagnostic::at(file, place, Severity::Error, rule, message)
}

/// The assembled tree of one recipe, planned: every output file, compiled in memory.
struct Planned {
    files: BTreeMap<String, OutFile>,
    /// What the recipe's sources may get wrong without failing the assemble.
    warnings: Vec<Diagnostic>,
}

/// Plans the assembled tree of one recipe.
fn plan(recipe_dir: &Path, lib_dir: Option<&Path>, shared: &Shared) -> Result<Planned, Error> {
    let mut p = Planner {
        recipe_dir,
        lib_dir,
        shared,
        ts_errors: Vec::new(),
        files: BTreeMap::new(),
        origins: BTreeMap::new(),
        lib_queue: VecDeque::new(),
        lib_done: BTreeSet::new(),
        links: BTreeMap::new(),
    };
    let source = is_source_tree(recipe_dir);
    let mut walker = walkdir::WalkDir::new(recipe_dir)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(item) = walker.next() {
        let item = item.map_err(|e| {
            let path = e.path().unwrap_or(recipe_dir).to_path_buf();
            crate::fs::FsError::new(
                "read",
                &path,
                e.into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("walk failed")),
            )
        })?;
        let path = item.path();
        let rel = path.strip_prefix(recipe_dir).unwrap_or(path);
        let name = item.file_name().to_string_lossy().into_owned();
        let top = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        if item.file_type().is_symlink() {
            return Err(Error::PackRefused {
                path: path.to_path_buf(),
                reason: "symbolic links are refused; replace it with a copy".into(),
            });
        }
        if name.eq_ignore_ascii_case("node_modules") {
            return Err(Error::PackRefused {
                path: path.to_path_buf(),
                reason: "`node_modules` is refused: recipes run without it".into(),
            });
        }
        if name.contains('\\') {
            return Err(refused_name(path, "a backslash"));
        }
        let depth1 = item.depth() == 1;
        let skip = name.starts_with('.')
            || (source && (top == "tests" || top == "test"))
            || (depth1
                && (name.starts_with("tsconfig")
                    || name == "package.json"
                    || name == "package-lock.json"));
        if skip {
            if item.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if item.file_type().is_dir() {
            continue;
        }
        if !item.file_type().is_file() {
            return Err(Error::PackRefused {
                path: path.to_path_buf(),
                reason: "devices, fifos and sockets are refused".into(),
            });
        }
        if source && top == "src" {
            let under_src = rel.strip_prefix("src").unwrap_or(rel);
            // Named with the others, and with the sources' errors: one run shows them all.
            if let Some(reason) = not_assembled(&name) {
                p.ts_errors.push(path_refused(path, reason));
                continue;
            }
            if is_module(&name) && !is_test_file(&name) {
                p.compile(path, &Path::new("scripts").join(output_name(under_src)))?;
            } else if is_data_file(&name) {
                let out = Path::new("scripts").join(under_src);
                p.put(
                    out.to_string_lossy().into_owned(),
                    OutFile {
                        content: Content::Copy(path.to_path_buf()),
                        // JSON in src/ has always shipped as 0644: an executable bit on it
                        // would change the bytes of versions already published.
                        exec: is_exec(path) && !name.ends_with(".json"),
                    },
                    path,
                )?;
            }
            continue;
        }
        let exec = is_exec(path);
        p.put(
            rel.to_string_lossy().into_owned(),
            OutFile {
                content: Content::Copy(path.to_path_buf()),
                exec,
            },
            path,
        )?;
    }
    // The shared helpers the recipe imports, and the helpers they import in turn.
    while let Some(module) = p.lib_queue.pop_front() {
        let Some(Place::Lib(rel)) = p.locate(&module) else {
            continue;
        };
        let out = Path::new("scripts/lib").join(output_name(&rel));
        if is_module(&module.to_string_lossy()) {
            p.compile(&module, &out)?;
        } else {
            // A helper's data keeps its executable bit (a script it runs), as src/'s does;
            // JSON never has one.
            let json = module.extension().is_some_and(|e| e == "json");
            p.put(
                out.to_string_lossy().into_owned(),
                OutFile {
                    content: Content::Copy(module.clone()),
                    exec: !json && is_exec(&module),
                },
                &module,
            )?;
        }
    }
    if p.ts_errors.is_empty() {
        p.ts_errors = unlinked_imports(&p.links, &p.origins);
    }
    if !p.ts_errors.is_empty() {
        return Err(Error::TypeScript {
            diagnostics: p.ts_errors,
        });
    }
    if source {
        p.put(
            "scripts/package.json",
            OutFile {
                content: Content::Bytes(b"{\n  \"type\": \"module\"\n}\n".to_vec()),
                exec: false,
            },
            p.recipe_dir,
        )?;
    }
    let warnings = missing_beside(&p);
    Ok(Planned {
        files: p.files,
        warnings,
    })
}

/// A warning for each file a compiled module names beside itself
/// (`new URL("./data/words.json", import.meta.url)`) that the assembled recipe does not
/// hold, at the URL: the handler fails when it reads it. Paths that leave the recipe, and
/// URLs with a query, a fragment or an escaped separator, are left alone.
fn missing_beside(p: &Planner<'_>) -> Vec<Diagnostic> {
    let files = &p.files;
    let holds = |target: &str| {
        target.is_empty()
            || files.contains_key(target)
            || (files.range(format!("{target}/")..).next())
                .is_some_and(|(name, _)| name.starts_with(&format!("{target}/")))
    };
    let mut found = Vec::new();
    for (out, l) in &p.links {
        let Some(source) = p.origins.get(out) else {
            continue;
        };
        let from_helper = out.starts_with("scripts/lib/");
        for beside in &l.files_beside {
            let place = crate::json::Position {
                line: beside.line,
                column: beside.column,
            };
            let path = match url_path(&beside.path) {
                Ok(Some(path)) => path,
                Ok(None) => continue,
                Err(why) => {
                    found.push(Diagnostic::at(
                        source,
                        place,
                        Severity::Warning,
                        "file-beside-url",
                        format!("`{}` is no file the handler can read: {why}", beside.path),
                    ));
                    continue;
                }
            };
            let here = Path::new(out).parent().unwrap_or(Path::new(""));
            let target = normalize(&here.join(path)).to_string_lossy().into_owned();
            if target.starts_with("..") || holds(&target) {
                continue;
            }
            // Where its source would be: a helper's own files in lib/, the rest in the
            // recipe (a recipe's `src/` is copied into `scripts/` whole, `src/lib/` too).
            let from = match (target.strip_prefix("scripts/lib/"), p.lib_dir) {
                (Some(rest), Some(lib)) if from_helper => lib.join(rest),
                _ => match target.strip_prefix("scripts/") {
                    Some(rest) => p.recipe_dir.join("src").join(rest),
                    None => p.recipe_dir.join(&target),
                },
            };
            let fix = match never_shipped(Path::new(&target)) {
                Some(why) if from.exists() => format!("{} is there, but {why}", from.display()),
                _ => format!(
                    "add {} (or, if the handler writes it first, ignore this)",
                    from.display()
                ),
            };
            found.push(Diagnostic::at(
                source,
                place,
                Severity::Warning,
                "file-beside-missing",
                format!(
                    "`{}` is {target} in the assembled recipe, which will not hold it: the \
                     handler fails when it reads it; {fix}",
                    beside.path
                ),
            ));
        }
    }
    found.sort_by(Diagnostic::reading_order);
    found
}

/// The file path a URL beside a module names (see [`crate::typescript::relative_url`]),
/// as node's `fileURLToPath` gives it: query and fragment dropped, `\` read as `/`, percent
/// escapes decoded (`my%20file.txt` is `my file.txt`, `%2e%2e` is `..`). `Ok(None)` for a
/// URL that names no path beside the module, or the module itself, or an escaped `\`
/// (a name no recipe ships). `Err` says why `fileURLToPath` throws on it, or why the path
/// it gives names no file, with the fix.
fn url_path(url: &str) -> Result<Option<String>, &'static str> {
    let Some(relative) = crate::typescript::relative_url(url) else {
        return Ok(None);
    };
    let path = relative.split(['?', '#']).next().unwrap_or_default();
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|hex| std::str::from_utf8(hex).ok());
                let Some(byte) = hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) else {
                    return Err(
                        "a `%` not followed by two hex digits makes node's fileURLToPath \
                                throw (URI malformed); write `%25` for a `%`",
                    );
                };
                match byte {
                    b'/' => {
                        return Err("node's fileURLToPath refuses an escaped `/` (`%2F`); \
                                    write `/`");
                    }
                    0 => return Err("an escaped NUL (`%00`) names no file; take it out"),
                    b'\\' => return Ok(None),
                    _ => out.push(byte),
                }
                i += 3;
            }
            b'\\' => {
                out.push(b'/');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(path) if path.is_empty() => Ok(None),
        Ok(path) => Ok(Some(path)),
        Err(_) => Err(
            "escapes that are not UTF-8 make node's fileURLToPath throw (URI \
                       malformed); escape the name's UTF-8 bytes",
        ),
    }
}

/// A source whose output path would contain `what`: hosts, archive readers and other
/// systems take a backslash for a folder separator, so it could land outside the recipe.
fn refused_name(path: &Path, what: &str) -> Error {
    Error::PackRefused {
        path: path.to_path_buf(),
        reason: format!(
            "its path contains {what}, which hosts and archive readers take for folder \
             separators or steps outside the recipe; rename it"
        ),
    }
}

/// What a name a module exports resolves to, as in ECMAScript's ResolveExport.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// A binding: the module that holds it (an output path, or a specifier not compiled
    /// here such as `node:fs`) and its name there.
    Found(String, String),
    /// Not exported.
    NotFound,
    /// Asked for again while resolving it, or already resolved through another path: as
    /// ResolveExport's `null` for a circular request, it adds nothing.
    Again,
    /// Given by two `export *` of the output file named as different bindings: node refuses
    /// to link an import of it.
    Ambiguous(String),
    /// Cannot be known: it may come from a module not compiled here (a builtin, JSON).
    Unknown,
}

/// Resolves `name` as exported by the output file `out`, following re-exports and
/// `export *` as node does. `seen` holds the (module, name) pairs already asked for.
fn resolve_export(
    out: &str,
    name: &str,
    links: &BTreeMap<String, crate::typescript::Links>,
    seen: &mut BTreeSet<(String, String)>,
) -> Resolved {
    use crate::typescript::Binding;
    let Some(l) = links.get(out) else {
        return Resolved::Unknown;
    };
    if !seen.insert((out.to_string(), name.to_string())) {
        return Resolved::Again;
    }
    match l.exports.get(name) {
        Some(Binding::Local(local)) => return Resolved::Found(out.to_string(), local.clone()),
        Some(Binding::From { from, name: theirs }) => {
            let target = module_of(out, from);
            return match resolve_export(&target, theirs, links, seen) {
                found @ (Resolved::Found(..) | Resolved::Again) => found,
                // Not compiled here: that module's own binding.
                Resolved::Unknown => Resolved::Found(target, theirs.clone()),
                // Reported where it is re-exported; here it is that module's name.
                Resolved::NotFound | Resolved::Ambiguous(_) => {
                    Resolved::Found(out.to_string(), name.to_string())
                }
            };
        }
        None => {}
    }
    if name == "default" {
        return Resolved::NotFound;
    }
    let mut found = None;
    let mut unknown = false;
    for from in &l.star_from {
        let result = match target_of(out, from) {
            Some(target) => resolve_export(&target, name, links, seen),
            // A builtin's names are known; not those of a builtin whose exports vary.
            None => match crate::typescript::builtin_exports(from) {
                Some(names) if names.contains(name) => {
                    Resolved::Found(module_of(out, from), name.to_string())
                }
                Some(_) => Resolved::NotFound,
                None => Resolved::Unknown,
            },
        };
        match result {
            ambiguous @ Resolved::Ambiguous(_) => return ambiguous,
            Resolved::Found(module, binding) => match &found {
                None => found = Some((module, binding)),
                Some(first) if *first == (module.clone(), binding.clone()) => {}
                Some(_) => return Resolved::Ambiguous(out.to_string()),
            },
            Resolved::NotFound | Resolved::Again => {}
            Resolved::Unknown => unknown = true,
        }
    }
    match found {
        Some((module, binding)) => Resolved::Found(module, binding),
        None if unknown => Resolved::Unknown,
        None => Resolved::NotFound,
    }
}

/// Every named import of a compiled module from another one, or from a Node builtin, that
/// the target does not export, or gets from two `export *` as different bindings: node
/// refuses to link such a module (`does not provide an export named`, `contains
/// conflicting star exports`).
fn unlinked_imports(
    links: &BTreeMap<String, crate::typescript::Links>,
    origins: &BTreeMap<String, PathBuf>,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (out, l) in links {
        let Some(source) = origins.get(out) else {
            continue;
        };
        for import in &l.imports {
            let Some(target) = target_of(out, &import.from) else {
                if let Some(d) = unexported_by_builtin(source, import) {
                    found.push(d);
                }
                continue;
            };
            // Named by its source, as the user wrote it, not by its output name.
            let module = match origins.get(&target) {
                Some(file) => file.display().to_string(),
                None => import.from.clone(),
            };
            let name = import.name.as_str();
            // A JSON module exports its value as `default`, and nothing else.
            let resolved = if target.ends_with(".json") {
                if name == "default" {
                    Resolved::Unknown
                } else {
                    Resolved::NotFound
                }
            } else {
                resolve_export(&target, name, links, &mut BTreeSet::new())
            };
            let message = match resolved {
                Resolved::Found(..) | Resolved::Unknown => continue,
                Resolved::Ambiguous(at) => {
                    let module = origins.get(&at).map_or(at, |f| f.display().to_string());
                    format!(
                        "`{module}` gets `{name}` from more than one `export *`, each a different \
                         binding, and node refuses to load a module that imports such a name; in \
                         `{module}`, re-export the one you mean by name (`export {{ {name} }} from \
                         \"…\"`)"
                    )
                }
                Resolved::NotFound | Resolved::Again => {
                    let fix = if target.ends_with(".json") {
                        "import the whole value instead (`import data from … with { type: \"json\" }`) \
                         and read `data.name`"
                            .to_string()
                    } else if name == "default"
                        && links.get(&target).is_some_and(|t| !t.star_from.is_empty())
                    {
                        // `export *` passes on every export but `default`.
                        format!(
                            "`export * from` does not pass on a module's `default`; in \
                             `{module}`, re-export it by name (`export {{ default }} from \"…\"`), \
                             or import it from the module that declares it"
                        )
                    } else {
                        format!(
                            "if it is a type, import or re-export it with `type` (`import type {{ {name} }}`)"
                        )
                    };
                    not_exported(&module, name, &fix)
                }
            };
            found.push(at_import(source, import, message));
        }
    }
    found
}

/// A named import from a Node builtin that Node 20's builtin does not export, with the
/// name it most likely meant (`readFileSynk`).
fn unexported_by_builtin(
    source: &Path,
    import: &crate::typescript::NamedImport,
) -> Option<Diagnostic> {
    let names = crate::typescript::builtin_exports(&import.from)?;
    if names.contains(import.name.as_str()) {
        return None;
    }
    let hint = match crate::event::nearest(&import.name, names, |n| n.to_string()) {
        Some(n) => format!("did you mean `{n}`?"),
        None => format!(
            "`node -p \"Object.keys(require('{}'))\"` lists what it exports",
            import.from
        ),
    };
    let message = not_exported(&import.from, &import.name, &hint);
    Some(at_import(source, import, message))
}

/// Says that `module` does not export `name`; `fix` says what to do.
fn not_exported(module: &str, name: &str, fix: &str) -> String {
    format!("`{module}` does not export `{name}`, so node would refuse to load this module; {fix}")
}

/// An error about `import`, in the source file `source`, where the name is.
fn at_import(
    source: &Path,
    import: &crate::typescript::NamedImport,
    message: String,
) -> Diagnostic {
    Diagnostic::at(
        source,
        crate::json::Position {
            line: import.line,
            column: import.column,
        },
        Severity::Error,
        crate::typescript::UNRESOLVED,
        message,
    )
}

/// The module `specifier` names in the output file `out`, as one name for each: its output
/// path, a builtin's name without `node:` (`node:fs` and `fs` are one module), or the
/// specifier as it is.
fn module_of(out: &str, specifier: &str) -> String {
    target_of(out, specifier).unwrap_or_else(|| {
        crate::typescript::builtin_name(specifier)
            .unwrap_or(specifier)
            .to_string()
    })
}

/// The output path (under the recipe) a relative specifier of the output file `out` names,
/// undoing the URL escapes [`relative_specifier`] adds; `None` for any other specifier.
fn target_of(out: &str, specifier: &str) -> Option<String> {
    if !(specifier.starts_with("./") || specifier.starts_with("../")) {
        return None;
    }
    let unescaped = specifier
        .replace("%3F", "?")
        .replace("%23", "#")
        .replace("%25", "%");
    let dir = Path::new(out).parent().unwrap_or(Path::new(""));
    Some(
        normalize(&dir.join(unescaped))
            .to_string_lossy()
            .into_owned(),
    )
}

#[cfg(unix)]
fn is_exec(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_exec(_: &Path) -> bool {
    false
}

/// The folders a recipe's sources may be read from: its own folder and the helpers folder.
fn source_roots<'p>(recipe_dir: &'p Path, lib_dir: Option<&'p Path>) -> Vec<&'p Path> {
    std::iter::once(recipe_dir).chain(lib_dir).collect()
}

/// The error for a source that is not UTF-8, at its first bad byte: oxc reads only UTF-8.
fn not_utf8(file: &Path, bytes: &[u8], e: std::str::Utf8Error) -> Diagnostic {
    let good = &bytes[..e.valid_up_to()];
    // Valid up to here, so this is text; columns count characters, as elsewhere.
    let good = std::str::from_utf8(good).unwrap_or_default();
    let line = good.split('\n').count();
    let column = good.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    let utf16 = bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]);
    let what = if utf16 {
        "the file is UTF-16 (it starts with a UTF-16 byte order mark)"
    } else {
        "this byte is not UTF-8"
    };
    Diagnostic::at(
        file,
        crate::json::Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        },
        Severity::Error,
        "typescript",
        format!("{what}, and sources are read as UTF-8; save it as UTF-8"),
    )
}

/// Why `new URL(path, import.meta.url)` in a module in `dir` names nothing at run time:
/// a source that assemble compiles (`./worker.ts`) and ships only under its output name.
fn names_a_source(dir: &Path, path: &str) -> Option<String> {
    let outputs = [(".ts", ".js"), (".mts", ".mjs")];
    let (stem, out_ext) = outputs
        .iter()
        .find_map(|(ext, out)| path.strip_suffix(ext).map(|stem| (stem, out)))?;
    if path.ends_with(".d.ts") || !normalize(&dir.join(path)).is_file() {
        return None;
    }
    Some(format!(
        "`{path}` is a source that assemble compiles, and only its output ships: write \
         `new URL(\"{}{out_ext}\", import.meta.url)`",
        url_escaped(stem)
    ))
}

/// `path` (a file's path, as node decodes a URL naming it) as a URL names it: what a URL
/// reads otherwise (`%`, `#`, `?`) escaped.
fn url_escaped(path: &str) -> String {
    path.replace('%', "%25")
        .replace('#', "%23")
        .replace('?', "%3F")
}

/// Why node would refuse to load `module` as a JSON module, when it is one (`*.json`) and
/// would be refused: it reads the file as UTF-8 (a bad byte becomes U+FFFD), drops a byte
/// order mark and gives the rest to `JSON.parse`. A file that cannot be read here is left
/// to the step that copies it, which says why.
fn not_json(module: &Path, roots: &[&Path]) -> Option<String> {
    if module.extension().and_then(|e| e.to_str()) != Some("json") {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_source(module, roots).ok()?, &mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let err = crate::json::parse(text.as_bytes()).err()?;
    if err.javascript_reads() {
        return None;
    }
    Some(format!(
        "{}:{}:{} is not valid JSON ({}), so node refuses to load it as a module; fix the file",
        module.display(),
        err.position.line,
        err.position.column,
        err.message
    ))
}

/// Opens `path`, a file under one of `roots` (the recipe folder, the helpers folder), without
/// following any link on the way down from that root: a folder swapped for a link after
/// the recipe was checked cannot bring a file from elsewhere into the output.
fn open_source(path: &Path, roots: &[&Path]) -> Result<std::fs::File, Error> {
    // Where the file's folder really is (`..`, a linked folder above the recipes), and the
    // same for each root; the part below the root is then opened without following links.
    let real =
        |p: &Path| std::fs::canonicalize(p).map_err(|e| crate::fs::FsError::new("resolve", p, e));
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (Some(name), parent) = (path.file_name(), real(parent)?) else {
        return Err(Error::PackRefused {
            path: path.to_path_buf(),
            reason: "it names no file".into(),
        });
    };
    for root in roots {
        let root = real(root)?;
        let Ok(below) = parent.strip_prefix(&root) else {
            continue;
        };
        let rel: Vec<String> = below
            .join(name)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        return crate::fs::Beneath::open(&root)
            .and_then(|b| b.open_file(&rel.join("/")))
            .map_err(|e| crate::pack::changed_or_unreadable(path, e));
    }
    Err(Error::PackRefused {
        path: path.to_path_buf(),
        reason: "a symbolic link on its path leads outside the recipe and the helpers folder (it may have been put there while assembling); replace the link with the folder itself".into(),
    })
}

fn write_tree(
    dest: &Path,
    files: &BTreeMap<String, OutFile>,
    roots: &[&Path],
) -> Result<(), Error> {
    crate::fs::create_dir_all(dest)?;
    for (rel, f) in files {
        let path = dest.join(rel);
        if let Some(parent) = path.parent() {
            crate::fs::create_dir_all(parent)?;
        }
        match &f.content {
            Content::Bytes(b) => crate::fs::write_new(&path, b)?,
            Content::Copy(src) => {
                let mut from = open_source(src, roots)?;
                let mut to = std::fs::File::create(&path)
                    .map_err(|e| crate::fs::FsError::new("create", &path, e))?;
                // Either side may fail (a full disk is the copy's): both are named.
                std::io::copy(&mut from, &mut to).map_err(|e| crate::fs::FsError {
                    to: Some(path.clone()),
                    ..crate::fs::FsError::new("copy", src, e)
                })?;
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if f.exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| crate::fs::FsError::new("set permissions of", &path, e))?;
        }
    }
    Ok(())
}

/// `diagnostics` without repeats: a shared helper is compiled, and its errors found, once
/// for each recipe that imports it.
pub(crate) fn once_each(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    (diagnostics.into_iter())
        .filter(|d| seen.insert(format!("{d:?}")))
        .collect()
}

/// A source path assembling refuses ([`Error::PackRefused`]), as `validate` and `test`
/// report it.
pub(crate) fn path_refused(path: &Path, reason: String) -> Diagnostic {
    Diagnostic::file_level(path, Severity::Error, "path-refused", reason)
}

/// What assembling the source trees among `dirs` would report, without writing anything:
/// TypeScript errors and imports that cannot be resolved, each at file:line:col.
pub fn check_sources(dirs: &[PathBuf], lib_dir: Option<&Path>) -> Vec<Diagnostic> {
    let sources: Vec<PathBuf> = dirs.iter().filter(|d| is_source_tree(d)).cloned().collect();
    let mut out = Vec::new();
    let shared = Shared::default();
    for (dir, result) in sources
        .iter()
        .zip(plan_all_with(&sources, lib_dir, &shared))
    {
        match result {
            // What pack would refuse in the archive: names that collide by case or
            // Unicode normalisation, paths too long, …
            Ok(Planned { files, warnings }) => {
                out.extend(warnings);
                let sizes = (files.iter())
                    .map(|(rel, f)| {
                        let size = match &f.content {
                            Content::Bytes(b) => b.len() as u64,
                            Content::Copy(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
                        };
                        (rel.clone(), size)
                    })
                    .collect();
                out.extend(crate::pack::check_planned_installable(dir, &sizes));
            }
            Err(Error::TypeScript { diagnostics }) => out.extend(diagnostics),
            Err(e) => out.push(plan_failure(dir, e)),
        }
    }
    // Only when every recipe that could import a helper was planned: those of one folder,
    // all of its source trees, none failing (a recipe left out, or one that stopped early,
    // may import the helper).
    let one_folder = sources.first().and_then(|d| d.parent()).filter(|parent| {
        let all = crate::pack::survey(parent, None)
            .map(|s| s.recipes)
            .unwrap_or_default();
        let all: BTreeSet<PathBuf> = all
            .iter()
            .filter(|d| is_source_tree(d))
            .map(|d| normalize(d))
            .collect();
        all == sources.iter().map(|d| normalize(d)).collect()
    });
    let all_planned = one_folder.is_some() && !out.iter().any(|d| d.severity == Severity::Error);
    if let Some(lib) = lib_dir.filter(|_| all_planned) {
        let told: BTreeSet<PathBuf> = out.iter().map(|d| normalize(&d.file)).collect();
        out.extend(unimported_helpers(lib, &shared, &told));
    }
    once_each(out)
}

/// Warnings for each shared helper of `lib` that no recipe imports (none in `shared`, none
/// in `told`) and that does not compile: assemble never reads such a helper, so it would be
/// found broken only once a recipe imports it again. Its imports are not followed.
fn unimported_helpers(lib: &Path, shared: &Shared, told: &BTreeSet<PathBuf>) -> Vec<Diagnostic> {
    let compiled: BTreeSet<PathBuf> = shared
        .compiled
        .lock()
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default();
    let helpers = walkdir::WalkDir::new(lib)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || name == "node_modules")
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            is_module(&name) && !is_test_file(&name)
        });
    let mut out = Vec::new();
    for entry in helpers {
        let file = normalize(entry.path());
        if compiled.contains(&file) || told.contains(&file) {
            continue;
        }
        // One that cannot be read at all is the reading step's to tell, for the recipes
        // that import it; no recipe does, so it is passed over.
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let source = match String::from_utf8(bytes) {
            Ok(source) => source,
            Err(e) => {
                let mut d = not_utf8(entry.path(), e.as_bytes(), e.utf8_error());
                d.severity = Severity::Warning;
                d.message = unused_helper_says(&d.message);
                out.push(d);
                continue;
            }
        };
        let Err(diags) = crate::typescript::compile_module(&source, &file, &mut |_| Ok(None))
        else {
            continue;
        };
        for d in diags.into_iter().take(crate::diagnostic::MAX_LISTED) {
            let message = unused_helper_says(&d.message);
            let place = crate::json::Position {
                line: d.line,
                column: d.column,
            };
            out.push(Diagnostic::at(
                entry.path(),
                place,
                Severity::Warning,
                d.rule,
                message,
            ));
        }
    }
    out
}

/// The message of a fault in a helper no recipe imports.
fn unused_helper_says(fault: &str) -> String {
    format!(
        "{fault} (no recipe imports this helper, so assemble does not ship it; it will fail \
         once one does: fix it, or delete it if it is no longer used)"
    )
}

/// Plans every recipe, on all cores; results in the order of `dirs`. With `mapped`, each
/// compiled module ends in an inline source map (see [`Shared::mapped`]).
fn plan_all(dirs: &[PathBuf], lib_dir: Option<&Path>, mapped: bool) -> Vec<Result<Planned, Error>> {
    let shared = Shared {
        mapped,
        ..Shared::default()
    };
    plan_all_with(dirs, lib_dir, &shared)
}

/// [`plan_all`], the helpers compiled kept in `shared`.
fn plan_all_with(
    dirs: &[PathBuf],
    lib_dir: Option<&Path>,
    shared: &Shared,
) -> Vec<Result<Planned, Error>> {
    let stack = crate::typescript::POOL_STACK;
    let mut planned = crate::parallel::map_with_stack(
        dirs,
        crate::parallel::cores(),
        Some(stack),
        // Runs on threads started with `stack`, so claiming it is true.
        |dir| crate::typescript::with_stack(stack, || plan(dir, lib_dir, shared)),
        |_| false,
    );
    if planned.iter().any(Option::is_none) {
        // No thread got that big a stack (an address-space limit, a 32-bit machine):
        // plan on ordinary threads, where each compile starts a thread sized for its file.
        planned = crate::parallel::map(
            dirs,
            crate::parallel::cores(),
            |dir| plan(dir, lib_dir, shared),
            |_| false,
        );
    }
    planned
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(Error::Output(std::io::Error::other(
                    "no planning thread could start",
                )))
            })
        })
        .collect()
}

/// The recipe folders of a layout, optionally just one.
fn recipe_dirs(
    layout: &Layout,
    only: Option<&Id>,
    output: Option<&Path>,
) -> Result<Vec<PathBuf>, Error> {
    let dirs = crate::pack::discover_for(&layout.recipes_dir, output, only)?;
    crate::pack::chosen(dirs, only, &layout.recipes_dir)
}

/// Validates the recipe folders and the helpers folder (which may hold no links either:
/// a linked helper would pull a file from outside the repository into every archive),
/// returning the warnings, in file order.
fn validate_sources(dirs: &[PathBuf], lib_dir: Option<&Path>) -> Checked {
    let lib: Vec<Diagnostic> = lib_dir
        .map(|l| crate::recipe::check_tree(l, false))
        .unwrap_or_default();
    let lib_clean = lib.iter().all(|d| d.severity != Severity::Error);
    let mut all = Vec::new();
    let mut clean = Vec::with_capacity(dirs.len());
    for d in dirs {
        let found = crate::recipe::validate_folder(d);
        clean.push(lib_clean && found.iter().all(|d| d.severity != Severity::Error));
        all.extend(found);
    }
    all.extend(lib);
    let (errors, mut warnings): (Vec<Diagnostic>, Vec<Diagnostic>) =
        all.into_iter().partition(|d| d.severity == Severity::Error);
    warnings.sort_by(crate::diagnostic::Diagnostic::reading_order);
    Checked {
        errors,
        warnings,
        clean,
    }
}

/// A recipe's failure to compile for another reason than its TypeScript (a file refused,
/// one that cannot be read), as a diagnostic to tell beside other recipes' errors, as
/// `validate` tells it.
fn plan_failure(dir: &Path, e: Error) -> Diagnostic {
    match e {
        Error::Fs(e) => crate::validate::fs_diagnostic(&e),
        Error::PackRefused { path, reason } => path_refused(&path, reason),
        e => Diagnostic::file_level(
            dir,
            Severity::Error,
            "assemble-failed",
            format!("{e}; run `hookpack assemble` on this recipe for details"),
        ),
    }
}

/// What [`validate_sources`] found: the errors, the warnings, and for each recipe folder
/// whether it (and the shared helpers' folder) had no error, so that it is compiled and its
/// TypeScript errors are told in the same run as the other recipes' errors.
struct Checked {
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    clean: Vec<bool>,
}

impl Checked {
    /// The error for all that was found wrong, if anything was. A failure of the machine's
    /// (a thread that could not start) is told alone, and so is a recipe's failure to
    /// compile for another reason than its TypeScript (a file refused or unreadable) when
    /// it is all that was found. Otherwise the validation errors, `ts_errors` (the compile
    /// errors of the clean recipes) and `failures` are told together, each recipe's
    /// together: as [`Error::RecipesInvalid`] when validation found errors, else as
    /// [`Error::TypeScript`].
    fn failure(self, ts_errors: Vec<Diagnostic>, failures: Vec<(PathBuf, Error)>) -> Option<Error> {
        let (machine, failures): (Vec<_>, Vec<_>) =
            (failures.into_iter()).partition(|(_, e)| matches!(e, Error::Output(_)));
        if let Some((_, e)) = machine.into_iter().next() {
            return Some(e);
        }
        if self.errors.is_empty() && ts_errors.is_empty() {
            return failures.into_iter().next().map(|(_, e)| e);
        }
        // Diagnostics from more than one source are sorted by path; one source's are
        // already in file order.
        let sources = [
            !self.errors.is_empty(),
            !ts_errors.is_empty(),
            !failures.is_empty(),
        ];
        let mixed = sources.iter().filter(|&&found| found).count() > 1;
        let validation_failed = !self.errors.is_empty();
        let mut compile = ts_errors;
        compile.extend(failures.into_iter().map(|(d, e)| plan_failure(&d, e)));
        let mut diagnostics = self.errors;
        diagnostics.extend(once_each(compile));
        if mixed {
            diagnostics.sort_by(|a, b| a.file.cmp(&b.file));
        }
        Some(match validation_failed {
            true => Error::RecipesInvalid { diagnostics },
            false => Error::TypeScript { diagnostics },
        })
    }
}

/// The recipe folders in `out` that an assemble made (listed in [`ASSEMBLED_LIST`]) and
/// whose sources are gone (none unless `all`, as with `--only`), and the ids OUT holds
/// assembled once those are removed and `ids` written. A listed folder no longer there, or
/// no longer a folder with a `recipe.json`, is forgotten.
///
/// # Errors
///
/// When the list is there but cannot be read, or is not text: taken as empty, the folders
/// it names would be kept, stale, and forgotten by the list written next.
fn stale_folders(
    out: &Path,
    ids: &BTreeSet<String>,
    all: bool,
) -> Result<(Vec<PathBuf>, BTreeSet<String>), Error> {
    let list = out.join(ASSEMBLED_LIST);
    let listed = match std::fs::read(&list) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            let why = format!(
                "{e}; assemble keeps the list of the recipe folders it made in OUT in this \
                 file, and removes none without it: let this user read it, or run assemble \
                 as its owner"
            );
            let e = std::io::Error::new(e.kind(), why);
            return Err(crate::fs::FsError::new("read", &list, e).into());
        }
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| Error::ConfigInvalid {
            path: list.clone(),
            why: "assemble keeps the list of the recipe folders it made in OUT in this file, \
                  and it is not text; delete it (assemble then removes none of the folders \
                  it made, as it no longer knows them), then run assemble again"
                .to_string(),
        })?,
    };
    let mut stale = Vec::new();
    let mut kept = ids.clone();
    for name in listed.lines().filter(|l| Id::parse(l).is_ok()) {
        let path = out.join(name);
        let made = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
            && path.join("recipe.json").is_file();
        if !made || ids.contains(name) {
            continue;
        }
        match all {
            true => stale.push(path),
            false => {
                kept.insert(name.to_string());
            }
        }
    }
    Ok((stale, kept))
}

/// `e`, a failure to create `out` or to write in it, with the fix when this user may not
/// (permissions, a read-only file system): the machine's failure, which the user can fix.
fn out_unwritable(e: crate::fs::FsError, out: &Path) -> crate::fs::FsError {
    if !matches!(
        e.source.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    ) {
        return e;
    }
    let why = format!(
        "{}; assemble writes each recipe in a staging folder in {out}, then moves it in: \
         make {out} a folder this user may write (or one it may create), or give --out-dir \
         one that is",
        e.source,
        out = out.display()
    );
    let kind = e.source.kind();
    e.with_source(std::io::Error::new(kind, why))
}

/// Assembles the recipes of `opts.layout` into `opts.out_dir`.
pub fn assemble(opts: &Options) -> Result<Report, Error> {
    let dirs = recipe_dirs(&opts.layout, opts.only.as_ref(), Some(&opts.out_dir))?;
    crate::pack::check_out_dir(&opts.out_dir)?;
    let sources = std::iter::once(&opts.layout.recipes_dir).chain(&opts.layout.lib_dir);
    for src in sources {
        if crate::fs::overlaps(&opts.out_dir, src)? {
            return Err(Error::OutOverlaps {
                out: opts.out_dir.clone(),
                sources: src.clone(),
            });
        }
    }
    // From here on a Ctrl-C (SIGTERM, SIGHUP) is recorded, and assemble stops at its next
    // check, before the swap: the staging folder goes as the error returns, OUT is as it
    // was, and `cli::main` ends the process by the signal. One during the swap lets it end.
    #[cfg(unix)]
    let _deferred = crate::run::interrupt::defer();
    let mut checked = validate_sources(&dirs, opts.layout.lib_dir.as_deref());
    let mut warnings = std::mem::take(&mut checked.warnings);
    if opts.only.is_none() {
        warnings.splice(0..0, crate::pack::hidden_recipes(&opts.layout.recipes_dir));
    }
    // The recipes without validation errors are compiled all the same, so that one run
    // tells every recipe's errors.
    let clean: Vec<PathBuf> = (dirs.iter().zip(&checked.clean))
        .filter(|(_, clean)| **clean)
        .map(|(d, _)| d.clone())
        .collect();
    let mut plans = Vec::new();
    let mut ts_errors = Vec::new();
    let mut failures = Vec::new();
    for (d, planned) in clean
        .iter()
        .zip(plan_all(&clean, opts.layout.lib_dir.as_deref(), false))
    {
        match planned {
            Ok(p) => {
                warnings.extend(p.warnings);
                plans.push((d.clone(), p.files));
            }
            Err(Error::TypeScript { diagnostics }) => ts_errors.extend(diagnostics),
            Err(e) => failures.push((d.to_path_buf(), e)),
        }
    }
    if let Some(e) = checked.failure(ts_errors, failures) {
        return Err(e);
    }
    crate::run::check_stopped(&opts.out_dir)?;

    // A failure below leaves no trace: folders created for OUT are removed again. Assembles
    // into one OUT take turns (as packs do), from reading what OUT holds to the commit: one
    // moving a recipe's folder out while another had moved it out and not yet put the new
    // one in failed.
    let new_folders = crate::fs::NewFolders::create(&opts.out_dir)
        .map_err(|e| out_unwritable(e, &opts.out_dir))?;
    // A folder this user may not open, or a file system without locks, takes no turn: the
    // staging folder's creation says what is wrong with OUT, if anything is.
    let _turn = match crate::profile::Lock::acquire_dir(&opts.out_dir, crate::profile::lock_wait())
    {
        Ok(lock) => Some(lock),
        Err(e @ Error::LockTimeout { .. }) => return Err(e),
        // A signal while it waited.
        Err(e @ Error::Interrupted { .. }) => return Err(crate::run::stopped_or(e, &opts.out_dir)),
        Err(_) => None,
    };

    let ids: BTreeSet<String> = plans
        .iter()
        .map(|(dir, _)| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    // A profile's hooks folder is `install`'s: its recipe folders are no build output.
    if std::fs::symlink_metadata(opts.out_dir.join(".receipts")).is_ok() {
        return Err(Error::OutIsProfile {
            out: opts.out_dir.clone(),
        });
    }
    // Anything but a file named like the list of what assemble made is the user's.
    let list = opts.out_dir.join(ASSEMBLED_LIST);
    if std::fs::symlink_metadata(&list).is_ok_and(|m| !m.is_file()) {
        return Err(Error::ConfigInvalid {
            path: list,
            why: "assemble keeps the list of the recipe folders it made in OUT in this file, \
                  and it is not one; move it elsewhere, then run assemble again"
                .to_string(),
        });
    }
    let (stale, listed) = stale_folders(&opts.out_dir, &ids, opts.only.is_none())?;
    // Each folder replaced or removed below must be assemble's output: one holding `src/`
    // is a recipe's sources (an --out-dir naming another recipes folder, or the two flags
    // swapped), which would be lost with its tests.
    for path in ids
        .iter()
        .map(|id| opts.out_dir.join(id))
        .chain(stale.clone())
    {
        if !path.is_symlink() && is_source_tree(&path) {
            return Err(Error::OutHoldsSources { path });
        }
    }
    // A file or link named like a recipe is the user's (assemble writes only folders
    // there): replacing it would delete it.
    for id in &ids {
        let dest = opts.out_dir.join(id);
        if let Ok(meta) = std::fs::symlink_metadata(&dest) {
            if !meta.is_dir() {
                return Err(Error::OutEntryNotFolder {
                    path: dest,
                    kind: if meta.is_symlink() {
                        "a link"
                    } else {
                        "a file"
                    },
                });
            }
        }
    }

    // One left by an assemble that died (kill -9) holds what it had moved out of OUT.
    crate::pack::remove_dead_staging(&opts.out_dir, STAGING_PREFIX);
    let staging = tempfile::Builder::new()
        .prefix(&format!(
            "{STAGING_PREFIX}{}-",
            crate::leftover::Maker::tag()
        ))
        .tempdir_in(&opts.out_dir)
        .map_err(|e| {
            let e = crate::fs::FsError::new("write in", &opts.out_dir, crate::fs::plain(e));
            out_unwritable(e, &opts.out_dir)
        })?;
    // Held as long as the folder is there: to an assemble in another pid namespace (a
    // container) this pid may name no process, and the lock tells it the folder is in use.
    let _in_use = std::fs::File::open(staging.path())
        .ok()
        .filter(|f| f.try_lock().is_ok());
    let mut report = Report {
        recipes: Vec::new(),
        removed: Vec::new(),
        // A shared helper's, once for all the recipes that import it.
        warnings: once_each(warnings),
    };
    for (dir, files) in &plans {
        crate::run::check_stopped(&opts.out_dir)?;
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let roots = source_roots(dir, opts.layout.lib_dir.as_deref());
        write_tree(&staging.path().join(&id), files, &roots)?;
        report.recipes.push(Assembled {
            id: id.clone(),
            path: opts.out_dir.join(&id),
            files: files.keys().cloned().collect(),
        });
    }
    // Swap each recipe folder in whole; without --only, move assembled recipes that no
    // longer have sources out of the way. Everything moved goes into the staging folder,
    // so a rename that fails half way is undone and OUT is as it was; what was moved out
    // is deleted with the staging folder once all is in place.
    // The list of what OUT holds of ours once done, and one that names as well what it
    // holds part way (the stale folders), put in place first: an assemble killed half way
    // then leaves none of its folders unlisted, each one removable once its sources go.
    let stale_ids = stale
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let part_way: BTreeSet<String> = listed.iter().cloned().chain(stale_ids).collect();
    for (name, ids) in [(ASSEMBLED_LIST, &listed), (PART_WAY_LIST, &part_way)] {
        let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let path = staging.path().join(name);
        std::fs::write(&path, text).map_err(|e| crate::fs::FsError::new("write", &path, e))?;
    }
    crate::run::check_stopped(&opts.out_dir)?;
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    let swapped = swap_in(&opts.out_dir, staging.path(), &ids, &stale, &mut moved);
    if let Err(e) = swapped {
        for (from, to) in moved.iter().rev() {
            let _ = std::fs::rename(to, from);
        }
        return Err(e);
    }
    report.removed = stale;
    drop(staging);
    new_folders.keep();
    Ok(report)
}

/// Moves the `stale` folders and the old `OUT/<id>` folders into `staging`, and the new
/// `staging/<id>` folders into OUT, recording in `moved` each rename made (from, to) so
/// that the caller can undo them. OUT's list of what assemble made is `staging`'s
/// [`PART_WAY_LIST`] while folders move, and its [`ASSEMBLED_LIST`] once all are in.
fn swap_in(
    out: &Path,
    staging: &Path,
    ids: &BTreeSet<String>,
    stale: &[PathBuf],
    moved: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<(), Error> {
    // The list part way replaces the old one in one rename, so OUT is never without one;
    // a copy of the old one is kept to be put back (recorded as if moved there) if the
    // swap is undone.
    let list = out.join(ASSEMBLED_LIST);
    if std::fs::symlink_metadata(&list).is_ok() {
        let copy = staging.join(".list-before");
        std::fs::copy(&list, &copy).map_err(|e| crate::fs::FsError {
            to: Some(copy.clone()),
            ..crate::fs::FsError::new("copy", &list, e)
        })?;
        moved.push((list.clone(), copy));
    }
    let mut step = |from: PathBuf, to: PathBuf| -> Result<(), Error> {
        crate::fs::rename(&from, &to)?;
        moved.push((from, to));
        Ok(())
    };
    step(staging.join(PART_WAY_LIST), list)?;
    for (n, path) in stale.iter().enumerate() {
        step(path.clone(), staging.join(format!(".stale-{n}")))?;
    }
    for id in ids {
        let dest = out.join(id);
        if std::fs::symlink_metadata(&dest).is_ok() {
            step(dest.clone(), staging.join(format!(".old-{id}")))?;
        }
        step(staging.join(id), dest)?;
    }
    // The list of what assemble made there, last, in place of the one part way.
    step(staging.join(ASSEMBLED_LIST), out.join(ASSEMBLED_LIST))?;
    Ok(())
}

/// Recipe folders ready to pack: source trees are assembled into a temporary folder, which
/// lives as long as this value.
pub struct ForPack {
    /// Assembled recipe folders, in the order given.
    pub dirs: Vec<PathBuf>,
    /// Warnings about the source trees, at their paths.
    pub warnings: Vec<Diagnostic>,
    _tmp: Option<crate::fs::TempFolder>,
}

/// Assembles the source trees among `dirs` (recipes of `recipes_dir`) for packing; with
/// `mapped` (for `test`), each compiled module ends in an inline source map, so that node
/// run with `--enable-source-maps` names the TypeScript line of an error.
pub fn assemble_to_temp(
    recipes_dir: &Path,
    dirs: &[PathBuf],
    mapped: bool,
) -> Result<ForPack, Error> {
    if !dirs.iter().any(|d| is_source_tree(d)) {
        return Ok(ForPack {
            dirs: dirs.to_vec(),
            warnings: Vec::new(),
            _tmp: None,
        });
    }
    let layout = Layout::recipes_dir(recipes_dir);
    let mut checked = validate_sources(dirs, layout.lib_dir.as_deref());
    let mut warnings = std::mem::take(&mut checked.warnings);
    // The source trees without validation errors are compiled all the same, so that one
    // run tells every recipe's errors; nothing is written until none has any.
    let sources: Vec<PathBuf> = (dirs.iter().zip(&checked.clean))
        .filter(|(d, clean)| **clean && is_source_tree(d))
        .map(|(d, _)| d.clone())
        .collect();
    let mut plans = Vec::new();
    let mut ts_errors = Vec::new();
    let mut failures = Vec::new();
    for (d, planned) in sources
        .iter()
        .zip(plan_all(&sources, layout.lib_dir.as_deref(), mapped))
    {
        match planned {
            Ok(Planned {
                files,
                warnings: more,
            }) => {
                warnings.extend(more);
                plans.push((d, files));
            }
            Err(Error::TypeScript { diagnostics }) => ts_errors.extend(diagnostics),
            Err(e) => failures.push((d.to_path_buf(), e)),
        }
    }
    if let Some(e) = checked.failure(ts_errors, failures) {
        return Err(e);
    }
    let tmp = crate::fs::temp_folder("hookpack-assembled-")?;
    let mut plans = plans.into_iter();
    let mut out = Vec::new();
    for d in dirs {
        if !is_source_tree(d) {
            out.push(d.clone());
            continue;
        }
        let Some((source, files)) = plans.next() else {
            return Err(Error::Output(std::io::Error::other(
                "planning lost a recipe",
            )));
        };
        let id = source
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        let dest = tmp.path().join(&id);
        let roots = source_roots(source, layout.lib_dir.as_deref());
        write_tree(&dest, &files, &roots)?;
        out.push(dest);
    }
    Ok(ForPack {
        dirs: out,
        // A shared helper's, once for all the recipes that import it.
        warnings: once_each(warnings),
        _tmp: Some(tmp),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_specifiers() {
        assert_eq!(
            relative_specifier(
                Path::new("scripts/main.js"),
                Path::new("scripts/lib/hook.js")
            ),
            "./lib/hook.js"
        );
        assert_eq!(
            relative_specifier(Path::new("scripts/lib/a.js"), Path::new("scripts/lib/b.js")),
            "./b.js"
        );
        assert_eq!(
            relative_specifier(
                Path::new("scripts/sub/x.js"),
                Path::new("scripts/lib/hook.js")
            ),
            "../lib/hook.js"
        );
        assert_eq!(
            relative_specifier(Path::new("scripts/main.js"), Path::new("scripts/a#1%?.js")),
            "./a%231%25%3F.js"
        );
    }

    /// Found by review: the list of what assemble made was put in place after the folders,
    /// so an assemble killed between the two left its new folders unlisted, never removed
    /// once their sources were gone. A swap cut short after its first folder (as by a kill:
    /// nothing undone) leaves a list naming the old folders, the stale one and both new
    /// ones; undone, it leaves OUT's list as it was.
    #[test]
    fn a_swap_cut_short_leaves_every_folder_of_ours_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let (out, staging) = (tmp.path().join("out"), tmp.path().join("staging"));
        for dir in ["out/old", "out/gone", "staging/a"] {
            std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        }
        std::fs::write(out.join(ASSEMBLED_LIST), "gone\nold\n").unwrap();
        std::fs::write(staging.join(ASSEMBLED_LIST), "a\nb\nold\n").unwrap();
        std::fs::write(staging.join(PART_WAY_LIST), "a\nb\ngone\nold\n").unwrap();
        // `staging/b` is missing, so the second folder's rename fails.
        let ids: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let mut moved = Vec::new();
        let stale = [out.join("gone")];
        assert!(swap_in(&out, &staging, &ids, &stale, &mut moved).is_err());
        let list = std::fs::read_to_string(out.join(ASSEMBLED_LIST)).unwrap();
        assert_eq!(list, "a\nb\ngone\nold\n");
        assert!(out.join("a").is_dir());
        for (from, to) in moved.iter().rev() {
            std::fs::rename(to, from).unwrap();
        }
        let list = std::fs::read_to_string(out.join(ASSEMBLED_LIST)).unwrap();
        assert_eq!(list, "gone\nold\n");
        assert!(!out.join("a").exists() && out.join("gone").is_dir());
    }
}
