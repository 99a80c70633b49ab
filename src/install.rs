//! `install`, `remove` and `update`: recipes from an index into a profile, losing nothing.
//!
//! An install fetches the index, picks a version, streams the archive to a staging folder
//! inside the profile and checks its sha256 against the index **before** anything is
//! extracted; reads the archive twice (once to check every entry, once to write), validates
//! the extracted recipe and checks that its id, version and `min_cli` are the index's. Only
//! then, under the profile lock, does it change the profile, through a journal:
//!
//! 1. the journal records the state before and after;
//! 2. the old recipe folder moves into staging, the new one into `hooks/<id>/`;
//! 3. the receipt is written;
//! 4. `hooks.json` is replaced (temp file, fsync, rename, fsync of the folder; the previous
//!    file kept as `hooks.json.bak`) — the commit point;
//! 5. the journal is removed, then staging.
//!
//! The next command, finding a journal, rolls forward if `hooks.json` is the new one and
//! back otherwise, so a crash at any instant leaves the old state or the new. Install never
//! runs recipe code and never writes the trust file.
//!
//! Signals: a change's commit installs handlers for SIGINT, SIGTERM and SIGHUP (see
//! [`crate::run::interrupt`]) and holds a first signal until the commit is done; the
//! `hookpack` binary then ends by it. A program embedding this library that handles those
//! signals itself should know that they are replaced for the rest of the process.

use crate::archive::{self, Limits};
use crate::catalog::{Catalog, CatalogVersion};
use crate::command::{self, Target};
use crate::error::Error;
use crate::fetch::{Fetcher, Location};
use crate::hooks_json::Group;
use crate::leftover::Maker;
use crate::profile::{lock_wait, Lock, Profile};
use crate::receipt::{self, FileRecord, HandlerRecord, Receipt};
use crate::recipe::Recipe;
use crate::sha256::Sha256;
use crate::version::Version;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest `hooks.json` read.
pub const MAX_HOOKS_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// What the user asked for: `ID`, `ID@1.2.3` or `ID@^1.2`.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Recipe id.
    pub id: crate::id::Id,
    /// Version wanted.
    pub want: Want,
    /// The pin the receipt records: what followed `@`, as written (`None` for `ID`, which
    /// lifts a pin). `update` keeps the receipt's while it installs an exact version.
    pub pin: Option<String>,
}

/// A version choice.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// The newest the host can run.
    Newest,
    /// Exactly this one.
    Exact(Version),
    /// The newest in this semver range.
    Range(semver::VersionReq),
}

impl Want {
    /// Parses what follows `@` in `ID@…` (a command's, or a receipt's pin); `id` is for the
    /// advice of an error.
    pub fn parse(id: &str, v: &str) -> Result<Want, String> {
        match Version::parse(v) {
            Ok(exact) => Ok(Want::Exact(exact)),
            // Read as a range, `0.1.0-rc1` would install 0.1.0, which was not named.
            Err(crate::version::VersionError::Suffix(_)) => {
                let plain = semver::Version::parse(v)
                    .map(|p| format!("{}.{}.{}", p.major, p.minor, p.patch))
                    .unwrap_or_default();
                Err(format!(
                    "`{v}` has a prerelease or build suffix, and published versions are \
                     plain X.Y.Z; pin `{id}@{plain}`, or give a range"
                ))
            }
            Err(_) if v.trim() == "latest" => Err(format!(
                "for the newest version the host can run, give the id alone (`{id}`)"
            )),
            // A git tag's spelling (`v0.2.1`).
            Err(_) if v.starts_with(['v', 'V']) && Version::parse(&v[1..]).is_ok() => Err(format!(
                "versions are written without a `v`: `{id}@{}`",
                &v[1..]
            )),
            Err(_) => semver::VersionReq::parse(v)
                .map(Want::Range)
                .map_err(|e| e.to_string()),
        }
    }
}

impl Spec {
    /// Parses `ID[@VERSION|@RANGE]`.
    pub fn parse(s: &str) -> Result<Spec, Error> {
        let (id, want, pin) = match s.split_once('@') {
            None => (s, Want::Newest, None),
            Some((id, v)) => {
                // ` 0.1.0` is the exact version, not the range `^0.1.0` semver reads.
                let v = v.trim();
                let want = Want::parse(id, v).map_err(|why| Error::SpecInvalid {
                    spec: s.to_string(),
                    why,
                })?;
                (id, want, Some(v.to_string()))
            }
        };
        Ok(Spec {
            id: crate::id::Id::parse(id)?,
            want,
            pin,
        })
    }
}

/// How to install.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The host CLI version, for `min_cli`.
    pub cli_version: Option<Version>,
    /// Print the plan, write nothing.
    pub dry_run: bool,
    /// Write absolute script paths instead of `${FINCLAW_PROFILE_ROOT}/…`.
    pub absolute_paths: bool,
    /// Show a download progress bar.
    pub progress: bool,
    /// With `dry_run`, `hooks.json` as the recipes planned before this one leave it.
    pub preview: Preview,
    /// Read an archive an index on disk names outside its folder (`--allow-outside`),
    /// else refuse it unread.
    pub allow_outside: bool,
}

/// `hooks.json` as a dry run of several recipes in one command plans it, so that each
/// recipe's diff is against the file as the ones before it would leave it (a real run
/// writes them in turn) and the last shows what the command would write; and what the
/// recipes planned before hand over to the receipts of others (see
/// [`crate::merge::Handover`]), which a real run writes before the next recipe reads its
/// receipt. Shared by the clones of one command's [`Options`]; real runs do not use it.
#[derive(Debug, Clone, Default)]
pub struct Preview(std::sync::Arc<std::sync::Mutex<Planned>>);

/// What [`Preview`] holds.
#[derive(Debug, Default)]
struct Planned {
    hooks_json: Option<Vec<u8>>,
    handed: crate::merge::Handover,
}

impl Preview {
    /// The document and bytes of `hooks.json` at `path`: in a dry run as the recipes
    /// planned before left it, else (and in a real run) as [`read_hooks_json`] reads it.
    fn read(&self, path: &Path, dry_run: bool) -> Result<(Value, Option<Vec<u8>>), Error> {
        let planned = (self.0.lock().ok())
            .filter(|_| dry_run)
            .and_then(|p| p.hooks_json.clone());
        match planned {
            Some(bytes) => {
                let doc = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::Output(std::io::Error::other(format!(
                        "the planned hooks.json does not read back: {e}"
                    )))
                })?;
                Ok((doc, Some(bytes)))
            }
            None => read_hooks_json(path),
        }
    }

    /// `receipt` (of `id`) with what the recipes planned before in a dry run hand over to
    /// it; as it is in a real run.
    fn receipt(&self, id: &str, mut receipt: Option<Receipt>, dry_run: bool) -> Option<Receipt> {
        let Ok(planned) = self.0.lock() else {
            return receipt;
        };
        if !dry_run {
            return receipt;
        }
        if let Some(created) = receipt.as_mut().and_then(|r| r.created.as_mut()) {
            for (_, given) in planned.handed.iter().filter(|(to, _)| to == id) {
                created.absorb(given);
            }
        }
        receipt
    }

    /// Records what a recipe's plan leaves `hooks.json` holding (`None`: as it was) and
    /// hands over to other recipes.
    fn planned(&self, bytes: Option<&[u8]>, handover: &crate::merge::Handover) {
        if let Ok(mut p) = self.0.lock() {
            if let Some(bytes) = bytes {
                p.hooks_json = Some(bytes.to_vec());
            }
            p.handed.extend(handover.iter().cloned());
        }
    }
}

/// What an operation did or, with `--dry-run`, would do.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// `install`, `update`, `remove`, `unchanged`, `repair` (the same archive written
    /// again, see `reason`), or `left` (a recipe `update` cannot update, see `reason`).
    pub action: &'static str,
    /// Recipe id.
    pub id: String,
    /// Version before, if any.
    pub from: Option<String>,
    /// Version after, if any.
    pub to: Option<String>,
    /// The recipe folder.
    #[serde(serialize_with = "crate::output::path_text")]
    pub path: PathBuf,
    /// Files written (install) or removed (remove), relative to `path`; for `left` with
    /// `reason` `local-changes`, the files of the user that keep `update` from replacing it.
    pub files: Vec<String>,
    /// A line diff of `hooks.json` (`-`/`+` lines, with context).
    pub hooks_json_diff: Vec<String>,
    /// True when the file is laid out otherwise than hookpack writes JSON, so the whole
    /// file is rewritten: `hooks_json_diff` then compares it as hookpack would write it
    /// unchanged, which shows the change alone.
    pub hooks_json_relaid: bool,
    /// True when nothing was written.
    pub dry_run: bool,
    /// Why `update` left the recipe as it is (`action` `left`): `cli-too-old`,
    /// `not-in-index`, `pinned` or `local-changes`; why `install` wrote the same archive again (`action` `repair`):
    /// `files-differ` (the installed tree) or `entries-differ` (its hooks.json entries); what
    /// `install` of the version installed changed in its receipt (`action` `unchanged`):
    /// `pin-recorded` or `pin-lifted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// What went wrong after the change was made and needs the user (`remove`: trust
    /// entries that could not be dropped), each a sentence that says what to do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why it failed, for a recipe `update` left because its update failed (`reason`
    /// `failed`); the error also goes to stderr and sets the exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The pin the receipt records after it (`install ID@REQ`; `update` keeps it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// The recipe's handlers that another version has no more (an id renamed or dropped),
    /// as (`EVENT \`id\``, trust key), so that the user is told when one was trusted.
    #[serde(skip)]
    pub gone: Vec<(String, String)>,
}

/// The versions an index entry lists, for messages.
fn listed(entry: &crate::catalog::CatalogRecipe) -> String {
    entry
        .versions
        .iter()
        .map(|v| v.version.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Picks the version to install from an index entry.
pub fn choose<'a>(
    entry: &'a crate::catalog::CatalogRecipe,
    want: &Want,
    cli: Option<&Version>,
) -> Result<&'a CatalogVersion, Error> {
    let mut candidates: Vec<&CatalogVersion> = entry.versions.iter().collect();
    candidates.sort_by(|a, b| b.version.cmp(&a.version));
    let fits_cli = |v: &CatalogVersion| cli.is_none_or(|c| v.min_cli <= *c);
    // The newest version the host can run, for the fix a refusal suggests.
    let fix = || match candidates.iter().find(|v| fits_cli(v)) {
        Some(v) => format!(
            "upgrade the CLI, or pin `{}@{}`, the newest version it can run",
            entry.id, v.version
        ),
        None => "upgrade the CLI: no published version runs on it".to_string(),
    };
    let pick = match want {
        Want::Exact(x) => {
            let v = (candidates.iter().copied())
                .find(|v| v.version == *x)
                .ok_or_else(|| Error::VersionNotFound {
                    id: entry.id.to_string(),
                    want: x.to_string(),
                    available: listed(entry),
                })?;
            if !fits_cli(v) {
                return Err(Error::CliTooOld {
                    id: entry.id.to_string(),
                    version: v.version.to_string(),
                    needs: v.min_cli.to_string(),
                    have: cli.map(|c| c.to_string()).unwrap_or_default(),
                    fix: fix(),
                });
            }
            Some(v)
        }
        Want::Range(r) => {
            (candidates.iter().copied()).find(|v| r.matches(v.version.as_semver()) && fits_cli(v))
        }
        Want::Newest => {
            (candidates.iter().copied()).find(|v| v.version <= entry.latest && fits_cli(v))
        }
    };
    // The versions asked for, whatever the host runs: when there are none, the CLI is not
    // what stands in the way.
    let asked: Vec<&CatalogVersion> = (candidates.iter().copied())
        .filter(|v| want.takes(entry, v))
        .collect();
    pick.ok_or_else(|| match cli {
        Some(c) if !asked.is_empty() => Error::CliTooOld {
            id: entry.id.to_string(),
            // The least `min_cli` of the versions asked for is what the CLI lacks: of the
            // newest alone only when it is the one version up to `latest`.
            version: match want {
                Want::Range(r) => r.to_string(),
                _ if asked.len() > 1 => format!("up to {}", entry.latest),
                _ => entry.latest.to_string(),
            },
            needs: (asked.iter())
                .map(|v| v.min_cli.clone())
                .min()
                .map(|v| v.to_string())
                .unwrap_or_default(),
            have: c.to_string(),
            fix: fix(),
        },
        _ => Error::VersionNotFound {
            id: entry.id.to_string(),
            want: match want {
                Want::Range(r) => r.to_string(),
                _ => "newest".into(),
            },
            available: listed(entry),
        },
    })
}

impl Want {
    /// Whether `v`, a version of `entry`, is one this asks for, whatever the host runs.
    fn takes(&self, entry: &crate::catalog::CatalogRecipe, v: &CatalogVersion) -> bool {
        match self {
            Want::Exact(x) => v.version == *x,
            Want::Range(r) => r.matches(v.version.as_semver()),
            Want::Newest => v.version <= entry.latest,
        }
    }
}

/// With the host's CLI version unknown, [`choose`] takes `picked` whatever it needs. When
/// older versions the same request takes need less, a host older than `picked` needs would
/// have had one of them: the warning names what `picked` needs, those versions (the newest
/// for each lower bar, at most three) and how to give the host's version. `None` when no
/// such version exists.
pub fn unknown_cli_warning(
    entry: &crate::catalog::CatalogRecipe,
    want: &Want,
    picked: &CatalogVersion,
) -> Option<String> {
    let mut older: Vec<&CatalogVersion> = (entry.versions.iter())
        .filter(|v| v.version < picked.version && want.takes(entry, v))
        .collect();
    older.sort_by(|a, b| b.version.cmp(&a.version));
    let mut bar = &picked.min_cli;
    let mut less = Vec::new();
    for v in older {
        if v.min_cli < *bar {
            less.push(format!("{} {} needs {}", entry.id, v.version, v.min_cli));
            bar = &v.min_cli;
        }
    }
    if less.is_empty() {
        return None;
    }
    less.truncate(3);
    Some(format!(
        "{} {} needs CLI {} or newer; the host's CLI version was not given, so it was taken as \
         new enough. If your host is older, install again with --cli-version X.Y.Z (or \
         HOOKPACK_CLI_VERSION) for the newest version it runs ({})",
        entry.id,
        picked.version,
        picked.min_cli,
        less.join(", ")
    ))
}

/// Fetches and checks an index.
pub fn load_index(fetcher: &Fetcher, loc: &Location) -> Result<Catalog, Error> {
    Ok(load_index_from(fetcher, loc)?.0)
}

/// Fetches and checks an index, with the location its relative archive URLs resolve
/// against: the URL a redirect led to, if any.
pub fn load_index_from(fetcher: &Fetcher, loc: &Location) -> Result<(Catalog, Location), Error> {
    if let Location::Path(p) = loc {
        recipes_given_as_index(p)?;
        // Said of the index, not as "cannot open" some file.
        if std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Err(Error::FlagPathMissing {
                what: "the index",
                path: p.clone(),
                fix: "give a catalog folder (one `hookpack pack` wrote), its hooks-index.json, \
                      or the https:// URL of a published one",
            });
        }
    }
    let (bytes, base) = fetcher.read_document(loc, crate::catalog::verify::MAX_INDEX_BYTES)?;
    let catalog = crate::catalog::parse_index(&PathBuf::from(loc.to_string()), &bytes)?;
    Ok((catalog, base))
}

/// Refuses the index `p` (a catalog folder's `hooks-index.json`) when it is missing from a
/// folder of recipe sources or a recipe folder: that folder is to be packed first.
pub(crate) fn recipes_given_as_index(p: &Path) -> Result<(), Error> {
    if p.file_name() != Some(std::ffi::OsStr::new(crate::catalog::INDEX_FILE))
        || std::fs::symlink_metadata(p).is_ok()
    {
        return Ok(());
    }
    let Some(dir) = p.parent() else {
        return Ok(());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let recipes_dir = if dir.join("recipe.json").is_file() {
        match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from(".."),
        }
    } else if crate::pack::survey(dir, None).is_ok_and(|s| !s.recipes.is_empty()) {
        dir.to_path_buf()
    } else {
        return Ok(());
    };
    Err(Error::IndexIsRecipes {
        given: dir.to_path_buf(),
        recipes_dir,
    })
}

/// A staging folder inside the profile (or, for a dry run, the system temp folder), removed
/// when dropped.
pub struct Staging {
    /// Dropped first: the staging folder (unless a commit already moved it).
    dir: tempfile::TempDir,
    /// Then the profile's staging folder, if empty by then, whoever made it: the command
    /// that did may have found this one's folder in it when it cleaned up.
    _root: EmptyRoot,
    /// Then the folders created for it (the profile itself, `.hookpack-staging`), if empty
    /// by then, so a refused install leaves no trace.
    _created: crate::fs::NewFolders,
}

impl Staging {
    fn new(profile: &Profile, dry_run: bool) -> Result<Staging, Error> {
        let parent = if dry_run {
            std::env::temp_dir()
        } else {
            staging_root(profile)?
        };
        // Another command removes the staging folder once it is empty (its recovery, or the
        // cleanup of its own staging), maybe between its making here and the making of this
        // command's folder in it: then it is made again.
        let mut tries = 0;
        loop {
            let created = crate::fs::NewFolders::create(&parent).map_err(|e| {
                let within = e.path.parent().unwrap_or(&profile.root).to_path_buf();
                Self::unwritable(e, &within, dry_run)
            })?;
            match tempfile::Builder::new()
                .prefix(&format!("{}-", Maker::tag()))
                .tempdir_in(&parent)
            {
                Ok(dir) => {
                    return Ok(Staging {
                        dir,
                        _root: EmptyRoot((!dry_run).then(|| parent.clone())),
                        _created: created,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 16 => tries += 1,
                Err(e) => {
                    let e = crate::fs::FsError::new("create a staging folder in", &parent, e);
                    return Err(Self::unwritable(e, &parent, dry_run));
                }
            }
        }
    }

    /// `e`, a failure to make the staging folder (or the folder for it, `.hookpack-staging`)
    /// in the folder `within`, with the fix when this user may not write there or no one
    /// may (a read-only file system).
    fn unwritable(e: crate::fs::FsError, within: &Path, dry_run: bool) -> Error {
        let kind = e.source.kind();
        let fix = match kind {
            _ if dry_run => return e.into(),
            std::io::ErrorKind::PermissionDenied => format!(
                "this user may not write in {}: run the command as the user who owns it, or \
                 give this user write permission there",
                within.display()
            ),
            std::io::ErrorKind::ReadOnlyFilesystem => format!(
                "{} is on a file system mounted read-only: make the change where it can be \
                 written",
                within.display()
            ),
            _ => return e.into(),
        };
        let why = format!(
            "{}; every change is staged in the profile before it is made, and {fix}",
            e.source
        );
        e.with_source(std::io::Error::new(kind, why)).into()
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The profile's staging folder, removed when dropped if it is empty (None: the system
/// temp folder, left alone).
struct EmptyRoot(Option<PathBuf>);

impl Drop for EmptyRoot {
    fn drop(&mut self) {
        if let Some(root) = &self.0 {
            let _ = std::fs::remove_dir(root);
        }
    }
}

/// A recipe fetched, checked and extracted into staging, ready to commit.
pub struct Prepared {
    /// The manifest.
    pub recipe: Recipe,
    /// The extracted tree, `staging/new/<id>`.
    pub tree: PathBuf,
    /// Archive digest.
    pub sha256: Sha256,
    /// Index location, if any.
    pub index_url: Option<String>,
    /// Archive location.
    pub archive_url: String,
    /// Files extracted.
    pub files: Vec<FileRecord>,
    /// What validation warned of in the recipe (it installs all the same).
    pub warnings: Vec<String>,
    staging: Staging,
}

/// What the index promised about an archive.
pub struct Promise {
    /// Recipe id; `None` to take it from the archive (`--archive`).
    pub id: Option<String>,
    /// Version.
    pub version: Option<Version>,
    /// `min_cli`.
    pub min_cli: Option<Version>,
    /// Digest.
    pub sha256: Option<Sha256>,
    /// Size.
    pub size: Option<u64>,
}

fn progress_bar(enabled: bool, len: Option<u64>, label: &str) -> Option<indicatif::ProgressBar> {
    if !enabled {
        return None;
    }
    let pb = match len {
        Some(l) => indicatif::ProgressBar::new(l),
        None => indicatif::ProgressBar::new_spinner(),
    };
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes}")
    {
        pb.set_style(style);
    }
    pb.set_message(label.to_string());
    Some(pb)
}

struct Progress<W> {
    inner: W,
    bar: Option<indicatif::ProgressBar>,
    /// Whether writing failed (a full disk), which the fetch reports as its body failing.
    write_failed: bool,
}

/// The bar is cleared however the download ends, so a failure's message is not printed
/// under a half-drawn bar.
impl<W> Drop for Progress<W> {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl<W: Write> Write for Progress<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = (self.inner.write(buf)).inspect_err(|_| self.write_failed = true)?;
        if let Some(b) = &self.bar {
            b.inc(n as u64);
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Node refuses to load an ES module from a path holding a backslash
/// (`ERR_INVALID_MODULE_SPECIFIER`), so in such a profile every handler of a recipe that
/// runs its script with node would fail, and one with `failurePolicy: deny` would deny every
/// call. So from a path that is not UTF-8: node reads it as text, with U+FFFD for the bad
/// bytes, and looks for another file. Such an install is refused before anything is written.
fn node_can_load_from(profile: &Profile, recipe: &Recipe) -> Result<(), Error> {
    let dir = profile.recipe_dir(recipe.id.as_str());
    let runs_node = || {
        let mut handlers = recipe.hooks.values().flatten().flat_map(|g| &g.hooks);
        handlers.any(|h| {
            command::split(&h.command).is_ok_and(|words| {
                matches!(
                    command::target(&words),
                    Target::Script { interpreter: Some(i), .. } if i == "node"
                )
            })
        })
    };
    let why = match dir.to_str() {
        None => {
            "the path is not UTF-8, and node cannot load a script from such a path (it reads \
             the path as text and looks for another file): every handler of this recipe \
             would fail; use a profile whose path is UTF-8"
        }
        Some(text) if text.contains('\\') => {
            "the path holds a backslash, and node cannot load a module from such a path \
             (ERR_INVALID_MODULE_SPECIFIER): every handler of this recipe would fail; use a \
             profile whose path has none"
        }
        Some(_) => return Ok(()),
    };
    if runs_node() {
        return Err(Error::ConfigInvalid {
            path: dir,
            why: why.into(),
        });
    }
    Ok(())
}

/// The version the `recipe.json` of an installed recipe folder gives, if it reads as one.
pub(crate) fn held_version(dir: &Path) -> Option<String> {
    crate::fs::read_limited(&dir.join("recipe.json"), 1 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|m| m.get("version")?.as_str().map(str::to_string))
        .filter(|v| Version::parse(v).is_ok())
}

/// Downloads, verifies and extracts an archive into a new staging folder.
pub fn prepare(
    profile: &Profile,
    fetcher: &Fetcher,
    archive_loc: &Location,
    promise: &Promise,
    index_url: Option<String>,
    opts: &Options,
) -> Result<Prepared, Error> {
    let max = crate::catalog::verify::MAX_ARCHIVE_BYTES;
    // Past the most hookpack downloads, whatever the archive holds: said so, not fetched (a
    // cut-off download would read as other bytes than the index says).
    if let Some(size) = promise.size.filter(|s| *s > max) {
        return Err(Error::ArchiveRefused {
            location: archive_loc.to_string(),
            source: archive::ArchiveError::Visit(format!(
                "the index gives it as {size} bytes, more than the {max} bytes ({} MiB) \
                 hookpack downloads, so no install can take it; nothing was fetched (the \
                 catalog's maintainer packs the recipe smaller)",
                max >> 20
            )),
        });
    }
    let staging = Staging::new(profile, opts.dry_run)?;
    let archive_path = staging.path().join("archive");
    let limit = promise.size.unwrap_or(max);
    let label = promise
        .id
        .clone()
        .unwrap_or_else(|| archive_loc.to_string());
    // Bytes other than an index lists are the catalog's fault, at one URL: said with the
    // version, since the id alone does not tell which archive to look at.
    let whence = match (&promise.id, &promise.version) {
        (Some(id), Some(version)) => format!(
            " ({archive_loc}, which the index lists for {id} {version}, holds other bytes \
             than the index says; the catalog's maintainer finds such archives with \
             `hookpack catalog verify`)"
        ),
        _ => String::new(),
    };
    let digest = {
        // Readable by this user alone (as the staging folder is), whatever it turns out to
        // be: an index may name any file of this machine (`--allow-outside`).
        let mut create = std::fs::OpenOptions::new();
        create.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut create, 0o600);
        let file = create
            .open(&archive_path)
            .map_err(|e| crate::fs::FsError::new("create", &archive_path, e))?;
        let bar = progress_bar(opts.progress, promise.size, &label);
        let mut sink = Progress {
            inner: std::io::BufWriter::new(file),
            bar,
            write_failed: false,
        };
        let (digest, size) = match fetcher.copy_to(archive_loc, limit, &mut sink) {
            Ok(x) => x,
            // The copy in staging could not be written (a full disk): the archive was fine.
            Err(crate::fetch::FetchError::Body { source, .. }) if sink.write_failed => {
                return Err(crate::fs::FsError::new("write", &archive_path, source).into());
            }
            Err(crate::fetch::FetchError::TooLarge { announced, .. }) if promise.size.is_some() => {
                return Err(Error::SizeMismatch {
                    id: label,
                    whence,
                    expected: limit,
                    actual: None,
                    announced,
                });
            }
            Err(e) => {
                let not_found = match &e {
                    crate::fetch::FetchError::HttpStatus { status, .. } => {
                        matches!(status, 404 | 410)
                    }
                    crate::fetch::FetchError::Fs(f) => {
                        f.source.kind() == std::io::ErrorKind::NotFound
                    }
                    _ => false,
                };
                return Err(match (&promise.id, &promise.version) {
                    (Some(id), Some(version)) if not_found => Error::ArchiveNotInCatalog {
                        what: format!("{id} {version}"),
                        another: format!(
                            "hookpack install {id}@VERSION{}",
                            (index_url.as_deref())
                                .map(|index| crate::doctor::index_flag(profile, index))
                                .unwrap_or_default()
                        ),
                        source: e,
                    },
                    _ => e.into(),
                });
            }
        };
        sink.flush()
            .map_err(|e| crate::fs::FsError::new("write", &archive_path, e))?;
        // The size first: a download cut short (an upload that stopped midway) is told
        // apart from other bytes, which fail the digest too.
        if let Some(expected) = promise.size {
            if expected != size {
                return Err(Error::SizeMismatch {
                    id: label,
                    whence,
                    expected,
                    actual: Some(size),
                    announced: None,
                });
            }
        }
        if let Some(expected) = promise.sha256 {
            if expected != digest {
                return Err(Error::ChecksumMismatch {
                    // Only `--archive` installs take the id from the archive.
                    said_by: if promise.id.is_none() {
                        "--sha256 says"
                    } else {
                        "the index says"
                    },
                    id: label,
                    whence,
                    expected: expected.to_string(),
                    actual: digest.to_string(),
                });
            }
        }
        digest
    };
    let location = archive_loc.to_string();
    let refuse = |e: archive::ArchiveError| Error::ArchiveRefused {
        location: location.clone(),
        source: e,
    };
    let limits = Limits::default();
    // Pass 1: check every entry; nothing is written.
    let top = match (&promise.id, &promise.version) {
        (Some(id), Some(v)) => Some(format!("{id}-{v}")),
        _ => None,
    };
    let (summary, manifest) =
        archive::read_manifest(open(&archive_path)?, top.as_deref(), &limits).map_err(refuse)?;
    let Some(manifest) = manifest else {
        return Err(Error::ArchiveRefused {
            location,
            source: archive::ArchiveError::Visit(format!(
                "there is no {}/recipe.json",
                summary.top
            )),
        });
    };
    let recipe_value: Value =
        serde_json::from_slice(&manifest).map_err(|e| Error::ArchiveRefused {
            location: location.clone(),
            source: archive::ArchiveError::Visit(format!("recipe.json is not JSON: {e}")),
        })?;
    let id = recipe_value["id"].as_str().unwrap_or_default().to_string();
    if promise.id.is_none() && crate::id::Id::parse(&id).is_err() {
        return Err(Error::ArchiveRefused {
            location,
            source: archive::ArchiveError::Visit(format!(
                "its recipe.json has no valid `id` (found {})",
                recipe_value
                    .get("id")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "none".into())
            )),
        });
    }
    let version = recipe_value["version"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(promised) = promise.id.as_ref().filter(|p| **p != id) {
        return Err(Error::ManifestMismatch {
            what: "id".into(),
            index: promised.clone(),
            archive: id,
        });
    }
    if let Some(v) = &promise.version {
        if version != v.to_string() {
            return Err(Error::ManifestMismatch {
                what: "version".into(),
                index: v.to_string(),
                archive: version,
            });
        }
    }
    // Only for a version there is: one missing or of the wrong form is the recipe's
    // validation's to report, at its place.
    let version_given = crate::version::Version::parse(&version).is_ok();
    if version_given && summary.top != format!("{id}-{version}") {
        return Err(Error::ArchiveRefused {
            location,
            source: archive::ArchiveError::TopFolderNotManifest {
                top: summary.top.clone(),
                id,
                version,
            },
        });
    }
    if let Some(m) = &promise.min_cli {
        let got = recipe_value["min_cli"].as_str().unwrap_or_default();
        if got != m.to_string() {
            return Err(Error::ManifestMismatch {
                what: "min_cli".into(),
                index: m.to_string(),
                archive: got.to_string(),
            });
        }
    }
    // Pass 2: write, into `new/<id>`: `<id>` alone would be the download (`archive`), or
    // what a commit moves into staging (`old`, `bak`, `trash`) for a recipe so named.
    let tree = staging.path().join(NEW_TREE).join(&id);
    make_dirs(&tree).map_err(|e| crate::fs::FsError::new("create folder", &tree, e))?;
    let mut files =
        extract(open(&archive_path)?, &summary.top, &limits, &tree, true).map_err(|e| match e {
            // A full disk or a read-only folder: the machine's fault, not the archive's.
            archive::ArchiveError::Write { path, source } => {
                crate::fs::FsError::new("write", &path, source).into()
            }
            e => refuse(e),
        })?;
    // The extracted tree must be a valid recipe in its own right.
    let loaded = check_extracted(&tree, &location, &summary.top)
        .map_err(|diagnostics| Error::RecipesInvalid { diagnostics })?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Prepared {
        warnings: loaded.warnings.iter().map(recipe_warning).collect(),
        recipe: loaded.recipe,
        tree,
        sha256: digest,
        index_url,
        // A path as given would mean another file from another folder.
        archive_url: match archive_loc {
            Location::Path(p) => crate::fs::absolute(p).display().to_string(),
            _ => location,
        },
        files,
        staging,
    })
}

/// Writes the archive `input`, whose entries were checked already and lie under the top
/// folder `top`, into the new folder `tree`; returns the files written. With `durable`,
/// each file is synced (a tree to install); without, not (a tree only checked and thrown
/// away: `catalog verify` writes one per archive).
pub(crate) fn extract(
    input: impl std::io::Read,
    top: &str,
    limits: &Limits,
    tree: &Path,
    durable: bool,
) -> Result<Vec<FileRecord>, archive::ArchiveError> {
    let io = |path: &Path, err: std::io::Error| archive::ArchiveError::Write {
        path: path.to_path_buf(),
        source: err,
    };
    make_dirs(tree).map_err(|e| io(tree, e))?;
    let mut files = Vec::new();
    // The folders made so far: each file's folder is made once, not again for every file
    // in it (three system calls a file, most of `catalog verify`'s time).
    let mut made = std::collections::HashSet::new();
    archive::scan(input, Some(top), limits, |e, data| {
        let dest = tree.join(&e.path);
        let io = |err| io(&dest, err);
        if e.is_dir {
            make_dirs(&dest).map_err(io)?;
            made.insert(dest.clone());
            return Ok(());
        }
        if let Some(parent) = dest.parent().filter(|p| !made.contains(*p)) {
            make_dirs(parent).map_err(io)?;
            made.insert(parent.to_path_buf());
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&dest)
            .map_err(io)?;
        let mut hasher = HashingWriter {
            inner: &mut f,
            hasher: <sha2::Sha256 as sha2::Digest>::new(),
            count: 0,
            write_failed: false,
        };
        if let Err(err) = std::io::copy(data, &mut hasher) {
            // Writing failed (disk full): the machine's fault; reading failed: the archive's.
            return Err(if hasher.write_failed {
                io(err)
            } else {
                archive::ArchiveError::Corrupt(err)
            });
        }
        let digest: [u8; 32] = sha2::Digest::finalize(hasher.hasher).into();
        let size = hasher.count;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(e.mode))
                .map_err(io)?;
        }
        if durable {
            f.sync_all().map_err(io)?;
        }
        files.push(FileRecord {
            path: e.path.clone(),
            sha256: Sha256::from(digest),
            size,
            mode: e.mode,
        });
        Ok(())
    })?;
    Ok(files)
}

/// Checks the tree [`extract`] wrote into `tree` from the archive at `location` as a recipe
/// in its own right. Its problems name the files as they are in the archive
/// (`location!top/path`), in their messages too: the folder it was checked in is gone by
/// the time anyone reads them.
pub(crate) fn check_extracted(
    tree: &Path,
    location: &str,
    top: &str,
) -> Result<crate::recipe::Loaded, Vec<crate::diagnostic::Diagnostic>> {
    let inside = format!("{location}!{top}");
    let relocate = |mut d: crate::diagnostic::Diagnostic| {
        let rel = d
            .file
            .strip_prefix(tree)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        d.file = PathBuf::from(format!("{inside}/{}", rel.display()));
        d.message = d.message.replace(&tree.display().to_string(), &inside);
        d
    };
    match crate::recipe::load_extracted(tree) {
        Ok(mut loaded) => {
            loaded.warnings = loaded.warnings.into_iter().map(relocate).collect();
            Ok(loaded)
        }
        Err(diagnostics) => Err(diagnostics.into_iter().map(relocate).collect()),
    }
}

/// A warning about the recipe installed, as an outcome's warnings give it: its place, what
/// it says and its code (a matcher hosts ignore, a field they do not read).
fn recipe_warning(d: &crate::diagnostic::Diagnostic) -> String {
    let place = crate::output::place(d);
    let at = match d.pointer.is_empty() {
        true => String::new(),
        false => format!(" (at {})", d.pointer),
    };
    format!("{place}: {} [{}]{at}", d.message, d.code)
}

struct HashingWriter<'a> {
    inner: &'a mut std::fs::File,
    hasher: sha2::Sha256,
    count: u64,
    write_failed: bool,
}

impl Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self
            .inner
            .write(buf)
            .inspect_err(|_| self.write_failed = true)?;
        sha2::Digest::update(&mut self.hasher, &buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Creates a folder and its missing parents with mode 0755 whatever the umask allows more.
fn make_dirs(p: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o755);
    }
    b.create(p)?;
    #[cfg(unix)]
    {
        // An existing folder (the top folder given twice) keeps 0755 too.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

fn open(p: &Path) -> Result<std::fs::File, Error> {
    std::fs::File::open(p).map_err(|e| crate::fs::FsError::new("open", p, e).into())
}

/// The recipe's handlers with commands pointing at the installed tree.
pub fn rewrite_commands(
    recipe: &Recipe,
    profile: &Profile,
    absolute: bool,
) -> IndexMap<String, Vec<Group>> {
    let mut out = recipe.hooks.clone();
    for groups in out.values_mut() {
        for g in groups {
            for h in &mut g.hooks {
                let Ok(words) = command::split(&h.command) else {
                    continue;
                };
                if let Target::Script { word, path, .. } = command::target(&words) {
                    let rel = path.trim_start_matches("./");
                    let replacement = if absolute {
                        command::shell_quote(
                            &profile
                                .recipe_dir(recipe.id.as_str())
                                .join(rel)
                                .display()
                                .to_string(),
                        )
                    } else {
                        command::shell_quote_expanding(&format!(
                            "${{FINCLAW_PROFILE_ROOT}}/hooks/{}/{rel}",
                            recipe.id
                        ))
                    };
                    h.command = command::replace_word(&h.command, &words, word, &replacement);
                }
            }
        }
    }
    out
}

/// The current `hooks.json`: its value (an empty document when absent) and its bytes.
pub fn read_hooks_json(path: &Path) -> Result<(Value, Option<Vec<u8>>), Error> {
    read_hooks_json_to(path, true)
}

/// Reads `hooks.json` as [`read_hooks_json`] does, for a command that only reads it
/// (`list`, `run`, `trust`, `doctor`): what stops it is [`Error::HooksJsonUnreadable`].
pub fn read_hooks_json_to_list(path: &Path) -> Result<(Value, Option<Vec<u8>>), Error> {
    read_hooks_json_to(path, false)
}

fn read_hooks_json_to(path: &Path, rewrite: bool) -> Result<(Value, Option<Vec<u8>>), Error> {
    // `hosts_too`: a host could not read the file either (it is not JSON at all).
    let refused_because = |why: String, hosts_too: bool| {
        if rewrite {
            Error::HooksJsonRefused {
                path: path.to_path_buf(),
                why: format!("{why}; fix it first, hookpack will not overwrite it"),
            }
        } else if hosts_too {
            Error::HooksJsonUnreadable {
                path: path.to_path_buf(),
                why: format!("{why}; fix it (hosts cannot use it either)"),
            }
        } else {
            Error::HooksJsonUnreadable {
                path: path.to_path_buf(),
                why: format!("{why}; fix it"),
            }
        }
    };
    let refused = |why: String| refused_because(why, false);
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((serde_json::json!({"hooks": {}}), None)),
        Err(e) => return Err(crate::fs::FsError::new("inspect", path, e).into()),
        Ok(m) if m.file_type().is_symlink() && std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) => return Err(refused(format!(
            "it is a symbolic link to nothing ({}), which hookpack neither reads nor writes through; remove the link (install then writes a new file) or put the file it should be in its place",
            std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default()
        ))),
        Ok(m) if m.file_type().is_symlink() && std::fs::metadata(path).is_err_and(|e| e.raw_os_error() == Some(libc::ELOOP)) => return Err(refused(format!(
            "it is a symbolic link into a loop of links (to {}), so there is no file to read; remove the link (install then writes a new file)",
            std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default()
        ))),
        Ok(m) if m.file_type().is_symlink() => return Err(refused("it is a symbolic link, which hookpack neither reads nor writes through; replace it with the file itself".into())),
        Ok(m) if !m.is_file() => return Err(refused(format!(
            "it is {}, where hosts and hookpack read a file; move it away (install then writes a new file)",
            crate::fs::kind_of(&m.file_type())
        ))),
        Ok(m) if rewrite && crate::fs::write_protected(&m) => return Err(refused(format!(
            "it is write-protected, and hookpack writes a new file in its place, which would change it all the same; to let install, update and remove change it, make it writable (`chmod u+w {}`)",
            crate::command::shell_quote(&path.display().to_string())
        ))),
        Ok(m) if rewrite && crate::fs::link_count(&m) > 1 => return Err(refused(format!(
            "it has {} names (hard links, as some dotfiles tools make), and hookpack writes a new file in its place, which would leave the others with the old contents (give it one name, or make it a copy)",
            crate::fs::link_count(&m)
        ))),
        Ok(m) if m.len() > MAX_HOOKS_JSON_BYTES => return Err(refused(format!(
            "it is {} bytes, over the {MAX_HOOKS_JSON_BYTES} bytes hookpack reads (no hook configuration needs that much: make sure this is the right file, and move data hosts do not read out of it)",
            m.len()
        ))),
        Ok(_) => {}
    }
    let bytes = crate::fs::read_limited(path, MAX_HOOKS_JSON_BYTES)?;
    // A number past f64's range is read (as JSON.parse does) and is then the problem of the
    // handler holding it; it is never written back.
    let parsed = crate::json::parse_reading_huge_numbers(&bytes).map_err(|e| {
        // Nesting or size past hookpack's limits, or a lone surrogate escape, is valid JSON
        // that a host may well read.
        let valid = e.valid_but_refused();
        refused_because(
            format!(
                "{} ({}:{}: {})",
                valid.unwrap_or("it is not valid JSON"),
                e.position.line,
                e.position.column,
                e.message
            ),
            valid.is_none(),
        )
    })?;
    if let Some(d) = parsed.duplicates.first() {
        return Err(refused(format!(
            "key `{}` appears twice, {}: hosts keep one of them",
            d.key,
            d.spots()
        )));
    }
    // Reading it is fine (hosts round such a number too), rewriting it would change a value
    // that is not ours.
    if let Some(n) = parsed.inexact.first().filter(|_| rewrite) {
        let pointer = if n.pointer.is_empty() {
            "/"
        } else {
            &n.pointer
        };
        let at = format!(
            "the number `{}` at {}:{} ({pointer})",
            n.text, n.position.line, n.position.column
        );
        if n.text.parse::<f64>().is_ok_and(f64::is_infinite) {
            return Err(refused(format!(
                "{at} is past the range of a 64-bit float, so it cannot be written back as it \
                 is; write the value you mean (for a `timeout`, the seconds a handler may take, \
                 e.g. 30)"
            )));
        }
        return Err(refused(format!(
            "{at} would be written back as {}, losing digits; write it as a string, or as {} if \
             that is the value you mean",
            n.written, n.written
        )));
    }
    Ok((parsed.value, Some(bytes)))
}

/// The refusal of the `hooks.json` at `path`, whose shape merge will not touch (`e`), with
/// the line and column of the spot when the file still parses.
fn shape_refused(path: &Path, e: crate::merge::ShapeError) -> Error {
    let at = crate::fs::read_limited(path, MAX_HOOKS_JSON_BYTES)
        .ok()
        .and_then(|bytes| crate::json::parse_reading_huge_numbers(&bytes).ok())
        .filter(|p| p.value.pointer(&e.pointer).is_some())
        .map(|p| p.locations.locate(&e.pointer));
    Error::HooksJsonShape {
        path: path.to_path_buf(),
        at: at
            .map(|at| format!(":{}:{}", at.line, at.column))
            .unwrap_or_default(),
        source: e,
    }
}

/// Refuses to write `bytes` as the `hooks.json` at `path` when hookpack could not read them
/// back (over [`MAX_HOOKS_JSON_BYTES`], or over [`crate::json::MAX_VALUES`] values): every
/// later command, `remove` included, would refuse the profile (found by review: a compact
/// file near the limits, which hookpack writes indented, went over them).
fn check_readable_back(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let over = if bytes.len() as u64 > MAX_HOOKS_JSON_BYTES {
        Some(format!(
            "as hookpack would write it (indented by two spaces), it would be {} bytes, over \
             the {MAX_HOOKS_JSON_BYTES} bytes hookpack reads",
            bytes.len()
        ))
    } else if bytes.len() > crate::json::MAX_VALUES {
        // Each value takes a byte at least: a shorter file holds few enough.
        crate::json::parse_reading_huge_numbers(bytes)
            .err()
            .map(|e| format!("as hookpack would write it, {}", e.message))
    } else {
        None
    };
    match over {
        None => Ok(()),
        Some(why) => Err(Error::HooksJsonRefused {
            path: path.to_path_buf(),
            why: format!(
                "{why}, so every later command would refuse it; nothing was written: make \
                 the file smaller first (data hosts do not read belongs in a file of its own)"
            ),
        }),
    }
}

/// Pretty JSON with a final newline, as hookpack writes `hooks.json`.
pub fn to_bytes(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}

/// The change to `hooks.json` a dry run shows: `old` (the file as it is, parsed as
/// `old_doc`; `None` when there is none) against `new`. A file laid out otherwise than
/// hookpack writes JSON (another indentation, escapes) is compared as hookpack would write it
/// unchanged, after a line saying so: compared as it is, every line of it would show as
/// changed, and the change itself would be lost among them (found by review).
fn hooks_json_diff(old: Option<&[u8]>, old_doc: &Value, new: &[u8]) -> (Vec<String>, bool) {
    let new = String::from_utf8_lossy(new);
    let Some(old) = old else {
        return (line_diff("", &new), false);
    };
    let relaid = to_bytes(old_doc);
    if relaid == old {
        return (line_diff(&String::from_utf8_lossy(old), &new), false);
    }
    // No change but the layout, which is left as it is: the file is not written.
    if relaid == new.as_bytes() {
        return (Vec::new(), false);
    }
    (line_diff(&String::from_utf8_lossy(&relaid), &new), true)
}

/// A line diff of two texts: removed lines `-`, added `+`, up to two lines of context ` `.
pub fn line_diff(before: &str, after: &str) -> Vec<String> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        return vec![format!(
            "(hooks.json: {} lines before, {} after; too large to diff)",
            a.len(),
            b.len()
        )];
    }
    // Longest common subsequence table.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removed lines first, as a unified diff shows a change.
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let near = |k: usize| {
        ops[k.saturating_sub(2)..(k + 3).min(ops.len())]
            .iter()
            .any(|(c, _)| *c != ' ')
    };
    let mut out = Vec::new();
    let mut skipped = false;
    for (k, (c, line)) in ops.iter().enumerate() {
        if *c != ' ' || near(k) {
            if skipped {
                out.push("…".to_string());
                skipped = false;
            }
            out.push(format!("{c}{line}"));
        } else {
            skipped = true;
        }
    }
    out
}

/// The folder of a staging folder that holds the new tree, as `new/<id>`.
const NEW_TREE: &str = "new";

/// The journal of a commit in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    id: String,
    /// The staging folder's name (in the profile's staging folder; journals of earlier
    /// releases hold its whole path, of which recovery takes the name too).
    staging: PathBuf,
    hooks_before: Option<Sha256>,
    hooks_after: Sha256,
    old_receipt: Option<Receipt>,
    new_receipt: Option<Receipt>,
    /// Whether the commit makes `hooks/` (a first install): undone, it goes too.
    #[serde(default)]
    made_hooks_dir: bool,
    /// Whether the commit makes the first `hooks.json.bak`: undone, it goes too. (One
    /// that existed, a file or a symbolic link, is moved into the staging folder as `bak`
    /// first, and put back.)
    #[serde(default)]
    made_backup: bool,
    /// The trust keys of the handlers the change takes out (a remove), dropped from the
    /// trust file once `hooks.json` no longer holds them, before the journal goes: a crash
    /// in between leaves them to recovery, never in the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    forget_trust: Vec<String>,
    /// Whether the new folder is staged as `new/<id>`; journals of earlier releases staged
    /// it as `<id>`, beside `old`, `bak` and `trash`.
    #[serde(default)]
    new_tree_in_new: bool,
    /// The digests of the handlers stamped with the id in `hooks.json` before and after
    /// the change (see [`stamped_digest`]): when `hooks.json` is neither the file before
    /// nor the file after (edited since the crash), they tell whether the change landed.
    /// None in journals of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stamped_before: Option<Sha256>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stamped_after: Option<Sha256>,
}

impl Journal {
    /// Where the new folder is staged (the staging folder resolved): `new/<id>`, or `<id>`
    /// in journals of earlier releases.
    fn new_tree(&self) -> PathBuf {
        if self.new_tree_in_new {
            self.staging.join(NEW_TREE).join(&self.id)
        } else {
            self.staging.join(&self.id)
        }
    }

    /// Whether the change passed its commit point, `hooks.json` (at `path`) having the
    /// digest `now`: recovery finishes it, else undoes it. `hooks.json` is the commit point.
    /// When the change leaves it byte-identical (an upgrade with the same handlers) it
    /// cannot tell, so such a change is undone: the journal still exists, so the old folder
    /// is still in staging. A `hooks.json` that is neither the file before nor the one
    /// after was edited since (a user's own handler added, the file reformatted): the
    /// change landed if the recipe's own handlers in it are those the change made, and
    /// not those it had before. Undoing it then would take out the recipe's folder and
    /// receipt and leave its new handlers. Handlers that are neither (the user edited the
    /// recipe's own) are undone, as before.
    fn committed(&self, now: Option<Sha256>, path: &Path) -> bool {
        if now == Some(self.hooks_after) {
            return self.hooks_before != Some(self.hooks_after);
        }
        if now == self.hooks_before {
            return false;
        }
        // Journals of earlier releases keep neither: such a change is undone, as those
        // releases undid it.
        let (Some(before), Some(after)) = (self.stamped_before, self.stamped_after) else {
            return false;
        };
        after != before && stamped_digest_of_file(path, &self.id) == Some(after)
    }

    /// Whether undoing the change moves the recipe folder in place to the trash (its
    /// staging folder resolved): the new folder is in place when it left staging and is
    /// not in the trash yet. An undo that died after moving it there (and maybe the old one
    /// back) is not done again.
    fn undo_trashes_folder(&self, profile: &Profile) -> bool {
        let there = |p: &Path| std::fs::symlink_metadata(p).is_ok();
        !there(&self.new_tree())
            && self.new_receipt.is_some()
            && there(&profile.recipe_dir(&self.id))
            && !there(&self.staging.join("trash"))
            && there(&self.staging)
    }
}

/// The digest of the handlers stamped with `id` in the `hooks.json` document `doc`, with
/// their groups' matchers; each object's keys sorted, and the handlers too, so that a file
/// reformatted (`jq -S`, an editor) holds the same handlers.
fn stamped_digest(doc: &Value, id: &str) -> Sha256 {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // Sorted too: `jq -S` also reorders the events.
    let mut groups: Vec<(String, String)> = crate::merge::stamped_groups(doc, id)
        .into_iter()
        .map(|(event, group)| (event, sorted(&group).to_string()))
        .collect();
    groups.sort();
    Sha256::of(&serde_json::to_vec(&groups).unwrap_or_default())
}

/// [`stamped_digest`] of the `hooks.json` at `path` (of an empty one when it is not
/// there); None when it cannot be read or parsed.
fn stamped_digest_of_file(path: &Path, id: &str) -> Option<Sha256> {
    let doc = match crate::fs::read_limited(path, MAX_HOOKS_JSON_BYTES) {
        Ok(bytes) => serde_json::from_slice(&bytes).ok()?,
        Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => Value::Null,
        Err(_) => return None,
    };
    Some(stamped_digest(&doc, id))
}

fn file_digest(p: &Path) -> Result<Option<Sha256>, Error> {
    match std::fs::File::open(p) {
        Ok(f) => Ok(Some(
            Sha256::of_reader(f)
                .map_err(|e| crate::fs::FsError::new("read", p, e))?
                .0,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(crate::fs::FsError::new("read", p, e).into()),
    }
}

/// Whether the receipt `r` keeps a private index's credentials (a password, a token): a file
/// holding it is for its owner's eyes alone.
fn keeps_secret(r: Option<&Receipt>) -> bool {
    (r.and_then(|r| r.index_url.as_deref())).is_some_and(crate::fetch::holds_secret)
}

fn write_receipt(profile: &Profile, id: &str, r: Option<&Receipt>) -> Result<(), Error> {
    let p = receipt::path(profile, id);
    match r {
        Some(r) => {
            crate::fs::create_dir_all(&profile.receipts_dir())?;
            let mut bytes = serde_json::to_vec_pretty(r).unwrap_or_default();
            bytes.push(b'\n');
            let mode = if keeps_secret(Some(r)) {
                0o600
            } else {
                crate::pack::file_mode(&p)
            };
            crate::pack::write_atomic_mode(&p, &bytes, mode)
        }
        None => match std::fs::remove_file(&p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(crate::fs::FsError::new("remove", &p, e).into()),
        },
    }
}

/// Gives other installed recipes' receipts what this change hands over to them (see
/// [`crate::merge::Handover`]), so that the last recipe using an event it did not create
/// still removes it. Written before the commit: if the commit then fails, two recipes claim
/// the same structure, which is harmless (a claim only removes structure once it is empty).
/// Stamps that name no installed recipe, unreadable receipts and receipts without a record
/// (which remove every event they empty anyway) are left alone.
fn hand_over(profile: &Profile, id: &str, handover: &crate::merge::Handover) -> Result<(), Error> {
    for (to, given) in handover {
        if to == id || crate::id::Id::parse(to).is_err() {
            continue;
        }
        let Some(mut r) = receipt::read(profile, to).ok().flatten() else {
            continue;
        };
        let Some(created) = r.created.as_mut() else {
            continue;
        };
        let before = created.clone();
        created.absorb(given);
        if *created != before {
            write_receipt(profile, to, Some(&r))?;
        }
    }
    Ok(())
}

fn move_if_exists(from: &Path, to: &Path) -> Result<bool, Error> {
    match std::fs::symlink_metadata(from) {
        Ok(_) => {
            crate::fs::rename(from, to)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(crate::fs::FsError::new("inspect", from, e).into()),
    }
}

/// `<profile>/.hookpack-staging`, where it may be used: not a link (whose target's
/// folders would be taken for leftovers and deleted) and not a file.
fn staging_root(profile: &Profile) -> Result<PathBuf, Error> {
    let dir = profile.staging_dir();
    let why = match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => {
            "it is a symbolic link; hookpack keeps its staging folders in the profile itself and \
             does not follow a link there (it deletes what it leaves in them): remove the link, \
             the folder is made again when needed"
        }
        Ok(m) if !m.is_dir() => "it is not a folder; remove it, the folder is made when needed",
        Ok(_) => return Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(dir),
        Err(e) => return Err(crate::fs::FsError::new("inspect", &dir, e).into()),
    };
    Err(Error::ConfigInvalid {
        path: dir,
        why: why.into(),
    })
}

/// The staging folders in `<profile>/.hookpack-staging` (named `<pid>-<start>-…` or
/// `<pid>-…` by the process that made them), with that process. Anything else there is
/// not hookpack's, and is left alone.
pub fn staging_folders(profile: &Profile) -> Result<Vec<(PathBuf, Maker)>, Error> {
    let staging = staging_root(profile)?;
    if !staging.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for e in crate::fs::read_dir_sorted(&staging)? {
        let maker = Maker::of(&e.file_name().to_string_lossy());
        let is_dir = std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir());
        if let Some(maker) = maker.filter(|_| is_dir) {
            out.push((e.path(), maker));
        }
    }
    Ok(out)
}

/// The temporary files that writes of the journal, receipts, `hooks.json` and its backup
/// left in the profile when their process died before renaming them into place.
pub fn temporary_leftovers(profile: &Profile) -> Vec<PathBuf> {
    let mut out = crate::pack::dead_temporary_files(&profile.root);
    out.extend(crate::pack::dead_temporary_files(&profile.receipts_dir()));
    out
}

/// Why a folder in the place of the profile's journal stops every change: hookpack writes
/// the journal there at each commit, and will not delete a folder it did not make.
pub const JOURNAL_FOLDER_WHY: &str = "it is a folder, where hookpack writes the journal of \
    each change to the profile; move it elsewhere, then run the command again";

/// The profile's journal, when there is one to act on: the journal, its staging folder
/// taken as the one of that name in the profile's staging folder, or (`Err`) why recovery
/// ignores it and removes it (keeping what its staging folder holds): it cannot be read or
/// parsed, it names what hookpack never writes, its receipts name another recipe than it
/// does, or it is to be undone and its staging folder is gone. None when no file can be
/// read there (none, or not a file).
fn read_journal(profile: &Profile) -> Option<Result<Journal, String>> {
    let jpath = profile.journal();
    let read = match crate::fs::open_regular(&jpath) {
        Ok((mut file, _)) => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes)
                .ok()
                .map(|_| Ok(bytes))?
        }
        // A fifo (or socket, or device) is no journal hookpack wrote, and opening it as one
        // would wait for a writer for good: ignored as an unreadable journal is.
        Err(e) if e.source.kind() == std::io::ErrorKind::InvalidInput => Err(e.source.to_string()),
        Err(_) => return None,
    };
    let parsed =
        read.and_then(|bytes| serde_json::from_slice::<Journal>(&bytes).map_err(|e| e.to_string()));
    let mut j = match parsed {
        Ok(j) => j,
        Err(e) => return Some(Err(format!("it cannot be read: {e}"))),
    };
    // Only the staging folder's name is taken from the journal (it is always directly in
    // the profile's staging folder), so a profile reached or moved elsewhere still
    // recovers, and a journal hookpack did not write cannot name paths outside.
    let staging = j
        .staging
        .file_name()
        .filter(|n| Path::new(n).components().count() == 1 && *n != "..")
        .map(|n| profile.staging_dir().join(n));
    let staging = match staging {
        Some(staging) if crate::id::Id::parse(&j.id).is_ok() => staging,
        _ => {
            return Some(Err(format!(
                "it names `{}` and the staging folder {}, which hookpack never writes",
                j.id,
                j.staging.display()
            )))
        }
    };
    // Undone, such a journal would delete the folder of the recipe it names, which the
    // change never touched (and any file the user keeps there).
    if let Some(r) = [&j.old_receipt, &j.new_receipt]
        .into_iter()
        .flatten()
        .find(|r| r.id != j.id)
    {
        return Some(Err(format!(
            "it names `{}` but holds a receipt of `{}`, which hookpack never writes",
            j.id, r.id
        )));
    }
    // An undo puts back what the change moved into its staging folder: without that folder
    // it would take out part of the change and report it undone. (A commit removes the
    // journal before its staging folder, so hookpack never leaves such a pair.)
    let undoing = file_digest(&profile.hooks_json())
        .ok()
        .is_some_and(|now| !j.committed(now, &profile.hooks_json()));
    if undoing && std::fs::symlink_metadata(&staging).is_err() {
        return Some(Err(format!(
            "its change of `{}` did not reach its commit point (hooks.json), and the staging \
             folder {} it would be undone from is gone, so it cannot be undone: what the \
             change had put in place stays, and `hookpack doctor` names it",
            j.id,
            staging.display()
        )));
    }
    j.staging = staging;
    Some(Ok(j))
}

/// Why recovery will ignore the profile's journal (and delete it, undoing nothing), when
/// there is one it will ignore.
pub fn unusable_journal(profile: &Profile) -> Option<String> {
    read_journal(profile)?.err()
}

/// Finishes or undoes a commit that a crash interrupted, and removes staging folders left
/// by processes that are gone. Call under the profile lock.
pub fn recover(profile: &Profile) -> Result<Vec<String>, Error> {
    staging_root(profile)?;
    // Refused before anything is staged: the commit would fail on it half way.
    if std::fs::symlink_metadata(profile.journal()).is_ok_and(|m| m.is_dir()) {
        return Err(Error::ConfigInvalid {
            path: profile.journal(),
            why: JOURNAL_FOLDER_WHY.to_string(),
        });
    }
    let mut notes = Vec::new();
    let jpath = profile.journal();
    // Whether a journal was ignored: its staging folder is then kept (below).
    let mut ignored = false;
    if let Some(read) = read_journal(profile) {
        let mut done = None;
        match read {
            Ok(j) => {
                let tree = profile.recipe_dir(&j.id);
                let old_tree = j.staging.join("old");
                if j.committed(file_digest(&profile.hooks_json())?, &profile.hooks_json()) {
                    // Committed: finish.
                    write_receipt(profile, &j.id, j.new_receipt.as_ref())?;
                    if let Err(e) = crate::trust::forget(profile, &j.forget_trust) {
                        notes.push(not_forgotten(profile, &j.id, j.forget_trust.len(), &e));
                    }
                    notes.push(format!("completed the interrupted change of `{}`", j.id));
                } else {
                    // Not committed: undo.
                    if j.undo_trashes_folder(profile) {
                        crate::fs::rename(&tree, &j.staging.join("trash"))?;
                    }
                    move_if_exists(&old_tree, &tree)?;
                    write_receipt(profile, &j.id, j.old_receipt.as_ref())?;
                    let backup = profile.backup();
                    if !move_if_exists(&j.staging.join("bak"), &backup)? && j.made_backup {
                        match std::fs::remove_file(&backup) {
                            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                                return Err(crate::fs::FsError::new("remove", &backup, e).into())
                            }
                            _ => {}
                        }
                    }
                    if j.made_hooks_dir {
                        // Left empty by the undo, unless something else landed there since.
                        let _ = std::fs::remove_dir(profile.receipts_dir());
                        let _ = std::fs::remove_dir(profile.hooks_dir());
                    }
                    notes.push(format!("rolled back the interrupted change of `{}`", j.id));
                }
                // Removed once the journal is gone (as a commit does): a recovery that dies
                // between the two leaves a staging folder of a dead process, not a journal
                // naming a folder that is gone.
                if j.staging.starts_with(profile.staging_dir()) {
                    done = Some(j.staging);
                }
            }
            Err(why) => {
                ignored = true;
                notes.push(format!("ignored the journal {}: {why}", jpath.display()));
            }
        }
        std::fs::remove_file(&jpath).map_err(|e| crate::fs::FsError::new("remove", &jpath, e))?;
        if let Some(done) = done.filter(|d| d.exists()) {
            crate::fs::remove_dir_all(&done)?;
        }
    }
    let staging = profile.staging_dir();
    for (path, maker) in staging_folders(profile)? {
        if maker.alive() {
            continue;
        }
        // Undoing nothing means losing nothing: a change whose journal was ignored may
        // have moved the recipe's earlier folder (`old`) or the earlier hooks.json.bak
        // (`bak`) here, and nothing else puts them back.
        let moved_aside = ["old", "bak"]
            .iter()
            .any(|n| std::fs::symlink_metadata(path.join(n)).is_ok());
        if ignored && moved_aside {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let kept = staging.join(format!("kept-{name}"));
            crate::fs::rename(&path, &kept)?;
            notes.push(format!(
                "kept {}: the change of the ignored journal had moved aside there the \
                 recipe's earlier folder (`old`) or hooks.json.bak (`bak`); move back what \
                 you need, then delete it",
                kept.display()
            ));
            continue;
        }
        crate::fs::remove_dir_all(&path)?;
        notes.push(format!("removed staging leftovers {}", path.display()));
    }
    for path in temporary_leftovers(profile) {
        crate::fs::remove_file(&path)?;
        notes.push(format!("removed the temporary file {}", path.display()));
    }
    // Folders a rolled-back first install leaves empty go too (removing a folder that is not
    // empty fails, and that is fine).
    let _ = std::fs::remove_dir(&staging);
    let _ = std::fs::remove_dir(profile.receipts_dir());
    Ok(notes)
}

/// Whether the profile holds a journal or a staging folder: a change a crash may have
/// interrupted, for [`recover`] to finish or undo.
pub fn interrupted(profile: &Profile) -> bool {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    exists(&profile.journal()) || exists(&profile.staging_dir())
}

/// A change a crash interrupted, as the next command that writes the profile (or `doctor
/// --fix`) will leave it: what `list` and `update --dry-run`, which write nothing, show.
#[derive(Debug, Clone)]
pub struct Interrupted {
    /// The recipe it changes.
    pub id: String,
    /// Whether it passed its commit point: recovery finishes it; else it undoes it.
    pub committed: bool,
    /// The receipt recovery keeps; None when the recipe is not installed then.
    pub receipt: Option<Receipt>,
    /// Where the recipe folder recovery leaves is now (in staging, for one it moves back);
    /// None when it leaves none.
    pub folder: Option<PathBuf>,
    /// The change's staging folder, which recovery takes what it moves back from.
    pub staging: PathBuf,
    /// The trust entries recovery drops when it finishes the change (a remove's).
    pub forget_trust: Vec<String>,
}

impl Interrupted {
    /// What recovery will do with it: `finish` (past its commit point) or `undo`.
    pub fn recovery(&self) -> &'static str {
        if self.committed {
            "finish"
        } else {
            "undo"
        }
    }
}

/// The change a crash interrupted, as [`recover`] will leave it, read without the lock and
/// without writing anything. None when there is no journal, or one recovery ignores (or
/// that holds a receipt hookpack would not read back), or one of a change a running
/// process is making, or `hooks.json` cannot be read: the receipts then stand as they are.
pub fn interrupted_change(profile: &Profile) -> Option<Interrupted> {
    let j = read_journal(profile)?.ok()?;
    // One a running process is making is not interrupted: it holds the profile's lock,
    // which recovery waits for. (Its staging folder's pid could be another process's, taken
    // after a reboot.) The lock is only tried, never waited for.
    if let Err(Error::LockTimeout { .. }) = Lock::acquire_shared(profile, std::time::Duration::ZERO)
    {
        return None;
    }
    let committed = j.committed(
        file_digest(&profile.hooks_json()).ok()?,
        &profile.hooks_json(),
    );
    let tree = profile.recipe_dir(&j.id);
    let (receipt, folder) = if committed {
        (j.new_receipt.clone(), Some(tree))
    } else {
        let old_tree = j.staging.join("old");
        let folder = if std::fs::symlink_metadata(&old_tree).is_ok() {
            Some(old_tree)
        } else {
            (!j.undo_trashes_folder(profile)).then_some(tree)
        };
        (j.old_receipt.clone(), folder)
    };
    if let Some(r) = &receipt {
        receipt::check(&receipt::path(profile, &j.id), r).ok()?;
    }
    Some(Interrupted {
        id: j.id,
        committed,
        receipt,
        folder,
        staging: j.staging,
        forget_trust: if committed {
            j.forget_trust
        } else {
            Vec::new()
        },
    })
}

/// Where the folder of the recipe `id` that recovery of `change` leaves is now (None: it
/// leaves none); for any other recipe, its folder in the profile.
pub fn folder_after_recovery(
    profile: &Profile,
    change: Option<&Interrupted>,
    id: &str,
) -> Option<PathBuf> {
    match change.filter(|c| c.id == id) {
        Some(c) => c.folder.clone(),
        None => Some(profile.recipe_dir(id)),
    }
}

/// The receipt of `id` and its folder (None: there is none), as a change or remove plans
/// from them: a real run has recovered an interrupted change first; a dry run, which
/// changes nothing, plans from what that recovery will leave.
fn receipt_and_folder(
    profile: &Profile,
    id: &str,
    dry_run: bool,
) -> Result<(Option<Receipt>, Option<PathBuf>), Error> {
    let change = if dry_run {
        interrupted_change(profile)
    } else {
        None
    };
    Ok(match change.filter(|c| c.id == id) {
        Some(c) => (c.receipt, c.folder),
        None => (receipt::read(profile, id)?, Some(profile.recipe_dir(id))),
    })
}

/// The profile's receipts as recovery will leave them (those of [`receipt::all`], with
/// the one of an [`interrupted_change`] as recovery keeps it), and that change.
pub fn receipts_after_recovery(
    profile: &Profile,
) -> Result<(Vec<Receipt>, Option<Interrupted>), Error> {
    let mut receipts = receipt::all(profile)?;
    let change = interrupted_change(profile);
    if let Some(c) = &change {
        receipts.retain(|r| r.id != c.id);
        receipts.extend(c.receipt.clone());
        // In the order of their files, as read.
        receipts.sort_by_key(|r| format!("{}.json", r.id));
    }
    Ok((receipts, change))
}

/// Finishes or undoes a change a crash interrupted, under the profile lock, before a
/// command changes the profile, and says what it did: `update` reads the receipts before
/// it decides what to change, and one written by the interrupted change names a version
/// whose entries `hooks.json` may not hold; `install` and `remove` would recover silently
/// under their own lock. A profile with no journal and no staging folder is left as it is
/// (no lock file is made).
pub fn recover_interrupted(profile: &Profile) -> Result<Vec<String>, Error> {
    if !interrupted(profile) {
        return Ok(Vec::new());
    }
    let _lock = Lock::acquire(profile, lock_wait())?;
    recover(profile)
}

/// Hooks a crash test can use to stop the process at numbered points of a commit.
fn crash_point(n: u32) {
    if let Ok(v) = std::env::var("HOOKPACK_TEST_CRASH_AT") {
        // `N:panic`: a bug's panic, which unwinds, running destructors on its way out.
        let (at, panics) = match v.split_once(':') {
            Some((at, "panic")) => (at, true),
            _ => (v.as_str(), false),
        };
        if at.parse::<u32>().ok() == Some(n) {
            if panics {
                panic!("HOOKPACK_TEST_CRASH_AT={v}");
            }
            // Abrupt, like kill -9: no destructors, no cleanup.
            std::process::abort();
        }
    }
}

/// Why the trust of a removed recipe's handlers stayed: a reinstall would be trusted
/// without asking until `doctor --fix` drops it.
fn not_forgotten(profile: &Profile, id: &str, n: usize, e: &Error) -> String {
    format!(
        "`{id}` was removed, but the trust of its {n} handler(s) could not be dropped from {} \
         ({e}); a later install of `{id}` would be trusted without asking: fix the file, then \
         run `hookpack doctor --fix`, which removes these entries",
        profile.trust_file().display()
    )
}

/// Applies a change to the profile through the journal. `new_tree` is the staged recipe
/// folder (None to remove), `new_hooks` the new `hooks.json`, `forget_trust` the trust keys
/// of the handlers it takes out. On an error before the commit point the change is rolled
/// back before the error is returned; past it, the change is made, and recovery finishes
/// it. When even that fails, the journal and the staging folder it restores from are left
/// for the next command, and the error is returned. What went wrong with a change that is
/// made (a trust file that could not be rewritten, a journal that could not be removed
/// but recovery did) is returned as warnings.
fn commit(
    profile: &Profile,
    id: &str,
    staging: &mut Staging,
    new_tree: Option<&Path>,
    new_receipt: Option<Receipt>,
    new_hooks: &[u8],
    forget_trust: &[String],
) -> Result<Vec<String>, Error> {
    // A Ctrl-C (SIGTERM, SIGHUP) now waits until the commit is done, or rolled back:
    // then the command ends by it, its staging folder removed (see `cli::main`), rather
    // than leaving a journal for the next command to recover from.
    #[cfg(unix)]
    let _deferred = crate::run::interrupt::defer();
    // A change that leaves hooks.json byte-identical has no commit point recovery can see:
    // with its journal left, recovery undoes it.
    let same_hooks = file_digest(&profile.hooks_json())? == Some(Sha256::of(new_hooks));
    // While the journal exists, the staging folder holds what recovery puts back (the
    // recipe's earlier folder, the earlier backup): a panic unwinding from here must not
    // take it away and leave the journal. Removed below, or by recovery, as it should be.
    staging.dir.disable_cleanup(true);
    let steps = commit_steps(
        profile,
        id,
        staging.path(),
        new_tree,
        new_receipt,
        new_hooks,
        forget_trust,
    );
    let (e, committed) = match steps.map(|()| finish_commit(profile, staging.path(), forget_trust))
    {
        Ok(Ok(None)) => return Ok(Vec::new()),
        Ok(Ok(Some(e))) => return Ok(vec![not_forgotten(profile, id, forget_trust.len(), &e)]),
        Ok(Err(e)) => (e, true),
        Err(e) => (e, false),
    };
    let journal_left = profile.journal().exists();
    if !journal_left {
        // Nothing to recover from it (the journal was never written, or is gone).
        staging.dir.disable_cleanup(false);
    }
    if journal_left {
        let recovered = recover(profile);
        if recovered.is_err() || profile.journal().exists() {
            staging.dir.disable_cleanup(true);
            // What recovery tried, as it judges it: by what hooks.json holds now.
            let finishing = match (read_journal(profile), file_digest(&profile.hooks_json())) {
                (Some(Ok(j)), Ok(now)) => j.committed(now, &profile.hooks_json()),
                _ => committed,
            };
            return Err(Error::ChangeLeftHalfWay {
                id: id.to_string(),
                doing: if finishing { "finishing" } else { "undoing" },
                why: match recovered {
                    Err(r) => r.to_string(),
                    Ok(_) => format!("{} is still there", profile.journal().display()),
                },
                source: Box::new(e),
            });
        }
    }
    if !committed || (journal_left && same_hooks) {
        return Err(e);
    }
    Ok(vec![format!(
        "the change of `{id}` is made, but cleaning up after it failed ({e}); the next \
         command removes what is left"
    )])
}

fn commit_steps(
    profile: &Profile,
    id: &str,
    staging: &Path,
    new_tree: Option<&Path>,
    new_receipt: Option<Receipt>,
    new_hooks: &[u8],
    forget_trust: &[String],
) -> Result<(), Error> {
    let hooks_path = profile.hooks_json();
    let before = file_digest(&hooks_path)?;
    // What the change was made from; one that does not parse (it was read and merged
    // before, so it does) leaves recovery to judge by the file's digest alone.
    let stamped_before = stamped_digest_of_file(&hooks_path, id);
    let stamped_after = serde_json::from_slice::<Value>(new_hooks)
        .ok()
        .map(|doc| stamped_digest(&doc, id));
    let journal = Journal {
        id: id.to_string(),
        // Its name only: recovery looks for it in the profile's staging folder anyway, and
        // the name (unlike a profile path) is always UTF-8, which JSON needs.
        staging: staging.file_name().map(PathBuf::from).unwrap_or_default(),
        hooks_before: before,
        hooks_after: Sha256::of(new_hooks),
        old_receipt: receipt::read(profile, id)?,
        new_receipt,
        made_hooks_dir: new_tree.is_some()
            && std::fs::symlink_metadata(profile.hooks_dir()).is_err(),
        made_backup: std::fs::symlink_metadata(profile.backup()).is_err(),
        forget_trust: forget_trust.to_vec(),
        new_tree_in_new: true,
        stamped_before,
        stamped_after,
    };
    let journal_bytes = serde_json::to_vec_pretty(&journal).map_err(|e| {
        crate::fs::FsError::new("write", &profile.journal(), std::io::Error::other(e))
    })?;
    // It holds the receipts, so their credentials too.
    let mode = if keeps_secret(journal.old_receipt.as_ref())
        || keeps_secret(journal.new_receipt.as_ref())
    {
        0o600
    } else {
        crate::pack::file_mode(&profile.journal())
    };
    crate::pack::write_atomic_mode(&profile.journal(), &journal_bytes, mode)?;
    crash_point(1);
    let tree = profile.recipe_dir(id);
    move_if_exists(&tree, &staging.join("old"))?;
    crash_point(2);
    if let Some(new_tree) = new_tree {
        crate::fs::create_dir_all(&profile.hooks_dir())?;
        crate::fs::rename(new_tree, &tree)?;
    }
    crash_point(3);
    write_receipt(profile, id, journal.new_receipt.as_ref())?;
    crash_point(4);
    // Only a missing file has no backup: one that cannot be read (an I/O error) fails the
    // change, which is rolled back, rather than going on without a backup.
    let old = match std::fs::read(&hooks_path) {
        Ok(old) => Some(old),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(crate::fs::FsError::new("read", &hooks_path, e).into()),
    };
    if let Some(old) = old {
        // The copy is as private as the file. The backup it replaces is kept in staging
        // until the commit point, so that a rollback puts back exactly what was there: a
        // symbolic link moves as the link itself (its target is never written). A folder
        // was refused before the change (`not_a_file_of_the_user`), and is never moved
        // into staging, whose removal would delete it.
        let mode = crate::pack::file_mode(&hooks_path);
        let backup = profile.backup();
        if std::fs::symlink_metadata(&backup).is_ok_and(|m| !m.is_dir()) {
            crate::fs::rename(&backup, &staging.join("bak"))?;
        }
        crate::pack::write_atomic_mode(&backup, &old, mode)?;
    }
    crash_point(5);
    crate::pack::write_atomic(&hooks_path, new_hooks)?;
    crash_point(6);
    Ok(())
}

/// What a commit does once `hooks.json` is written (its commit point): drops the trust of
/// the handlers it took out, then removes the journal and the staging folder.
fn finish_commit(
    profile: &Profile,
    staging: &Path,
    forget_trust: &[String],
) -> Result<Option<Error>, Error> {
    let not_forgotten = crate::trust::forget(profile, forget_trust).err();
    // The journal goes first: while it exists, the old folder must still be in staging.
    std::fs::remove_file(profile.journal())
        .map_err(|e| crate::fs::FsError::new("remove", &profile.journal(), e))?;
    crash_point(7);
    crate::fs::remove_dir_all(staging)?;
    // The profile's staging folder too, once empty: the command that made it may have
    // found this one's folder in it when it cleaned up.
    let _ = std::fs::remove_dir(profile.staging_dir());
    Ok(not_forgotten)
}

/// The warning of a first install (or a remove) over handlers stamped with its id that no
/// receipt records: each as a group of its own (`stamped`: event, group), in full, since a
/// later change in the same command replaces `hooks.json.bak` too.
fn unrecorded_stamps(
    id: &str,
    stamped: &[(String, Value)],
    dry_run: bool,
    removing: bool,
) -> String {
    let verb = if removing { "removed" } else { "replaced" };
    let (n, they, be) = match (stamped.len(), dry_run) {
        (1, false) => ("1 handler".to_string(), "it", "is"),
        (1, true) => ("1 handler".to_string(), "it", "would be"),
        (n, false) => (format!("{n} handlers"), "they", "are"),
        (n, true) => (format!("{n} handlers"), "they", "would be"),
    };
    let with = match removing {
        false => format!("by {id}'s own handlers"),
        true => "with the events only such handlers held".to_string(),
    };
    let groups: Vec<String> = (stamped.iter())
        .map(|(event, group)| format!("{event}: {group}"))
        .collect();
    format!(
        "hooks.json held {n} stamped `\"recipe\": \"{id}\"` that no receipt of this profile \
         records, copied from another profile or left by a lost receipt; taken as hookpack's, \
         {they} {be} {verb}{} {with}. To keep one as yours, add its group back under its event \
         without the `recipe` field: {}",
        if removing { "," } else { "" },
        groups.join("; ")
    )
}

/// The handlers of `id` in `doc` that `new_doc` has no handler for under their trust key
/// (a version that renamed or dropped them): (`EVENT \`id\``, key).
fn handlers_gone(
    profile: &Profile,
    doc: &Value,
    new_doc: &Value,
    id: &str,
) -> Vec<(String, String)> {
    let key =
        |event: &str, handler: &Value| crate::trust::key(&profile.hooks_json(), event, handler);
    let staying: std::collections::BTreeSet<String> = (crate::merge::handlers(new_doc))
        .map(|(event, handler)| key(event, handler))
        .collect();
    crate::merge::stamped_handlers(doc, id)
        .into_iter()
        .map(|(event, hid, command)| {
            let shown = format!("{event} `{}`", hid.as_deref().unwrap_or(&command));
            (
                shown,
                key(
                    &event,
                    &serde_json::json!({ "id": hid, "command": command }),
                ),
            )
        })
        .filter(|(_, k)| !staying.contains(k))
        .collect()
}

/// Installs a prepared recipe into the profile (or describes it, for a dry run); the
/// receipt records `pin` (see [`Spec::pin`]), whatever the one before recorded.
pub fn install_prepared(
    profile: &Profile,
    prepared: Prepared,
    pin: Option<String>,
    opts: &Options,
) -> Result<Outcome, Error> {
    let id = prepared.recipe.id.to_string();
    node_can_load_from(profile, &prepared.recipe)?;
    let _lock = if opts.dry_run {
        None
    } else {
        Some(Lock::acquire(profile, lock_wait())?)
    };
    if !opts.dry_run {
        recover(profile)?;
    }
    let (doc, old_bytes) = opts.preview.read(&profile.hooks_json(), opts.dry_run)?;
    let hooks = rewrite_commands(&prepared.recipe, profile, opts.absolute_paths);
    let (previous, folder) = receipt_and_folder(profile, &id, opts.dry_run)?;
    let previous = opts.preview.receipt(&id, previous, opts.dry_run);
    not_a_file_of_the_user(profile, &id, "installing")?;
    let merged = crate::merge::merge(
        &doc,
        &id,
        &hooks,
        previous.as_ref().and_then(|r| r.created.as_ref()),
    )
    .map_err(|e| shape_refused(&profile.hooks_json(), e))?;
    let new_doc = merged.doc;
    let new_bytes = to_bytes(&new_doc);
    check_readable_back(&profile.hooks_json(), &new_bytes)?;
    let (diff, relaid) = hooks_json_diff(old_bytes.as_deref(), &doc, &new_bytes);

    let from = previous.as_ref().map(|r| r.version.clone());
    let to = prepared.recipe.version.to_string();
    // A version is published once: the index it was installed from listing other bytes
    // for it was republished or altered. From elsewhere (`--archive`, another index) other
    // bytes are what the user asked for, and said.
    let mut warnings = prepared.warnings.clone();
    if let Some(r) = previous
        .as_ref()
        .filter(|r| r.version == to && r.sha256 != prepared.sha256)
    {
        let same = (r.index_url.as_deref())
            .filter(|was| (prepared.index_url.as_deref()).is_some_and(|now| same_index(was, now)));
        if let Some(index) = same {
            return Err(Error::VersionBytesChanged {
                index: crate::doctor::index_flag(profile, index),
                id,
                version: to,
                listed: prepared.sha256.to_string(),
                installed: r.sha256.to_string(),
            });
        }
        warnings.push(format!(
            "`{id}` {to} from {} has other bytes than the {to} installed (sha256 {}, installed \
             {}); they replace it",
            prepared.archive_url, prepared.sha256, r.sha256
        ));
    }
    // Without a receipt, handlers stamped with the id are taken as hookpack's and replaced:
    // named, as they may be the user's (copied from another profile).
    if previous.is_none() {
        let stamped = crate::merge::stamped_groups(&doc, &id);
        if !stamped.is_empty() {
            warnings.push(unrecorded_stamps(&id, &stamped, opts.dry_run, false));
        }
    }
    // The same archive again: what is left to do is what `doctor` reports, files edited,
    // added or deleted in the installed tree, or the recipe's hooks.json entries changed
    // (a file only laid out otherwise is left as it is).
    let mut repair = None;
    let action = match (&from, &previous) {
        (Some(v), Some(r)) if *v == to && r.sha256 == prepared.sha256 => {
            // No folder (recovery of an interrupted change leaves none): every file is gone.
            if folder
                .as_deref()
                .is_none_or(|dir| !crate::doctor::tree_drift(profile, dir, r).is_empty())
            {
                repair = Some("files-differ");
            } else if old_bytes.is_none() || new_doc != doc {
                repair = Some("entries-differ");
            }
            if repair.is_some() {
                "repair"
            } else {
                "unchanged"
            }
        }
        (None, _) => "install",
        (Some(_), _) => "update",
    };
    // Another version replaces the folder whole: files the user edited there would be gone
    // without a word. (`repair`, the same version again, is asked for.)
    if let (Some(r), "update", Some(dir)) = (&previous, action, &folder) {
        let files = local_changes_in(dir, r);
        if !files.is_empty() {
            return Err(Error::LocalChanges {
                restore: Box::new(crate::doctor::reinstall(profile, r)),
                id: id.clone(),
                from: r.version.as_str().into(),
                to: to.into(),
                dir: profile.recipe_dir(&id),
                files,
            });
        }
    }
    // Without a receipt nothing says what hookpack put there: every file the install would
    // replace or remove is taken as the user's.
    if let (None, Some(dir)) = (&previous, &folder) {
        let files = unreceipted_files(dir, &prepared.files);
        if !files.is_empty() {
            // Against another version, its own changes would be named too: the version the
            // folder holds tells the user's apart.
            let held = held_version(dir).filter(|v| *v != to);
            let fix = match held {
                Some(v) => format!(
                    "its recipe.json says {v}: install `{id}@{v}` first, which names the files \
                     you changed there, and update from it"
                ),
                None => "move them out of the folder to keep them (or delete them), then run \
                         the command again"
                    .to_string(),
            };
            return Err(Error::UnreceiptedFiles {
                dir: profile.recipe_dir(&id),
                id,
                to,
                files,
                fix,
            });
        }
    }
    // The version installed, asked for with another pin (or none): only the receipt changes.
    let repin = match &previous {
        Some(r) if action == "unchanged" && r.pin != pin => Some(r),
        _ => None,
    };
    let outcome = Outcome {
        action,
        id: id.clone(),
        from,
        to: Some(to.clone()),
        path: profile.recipe_dir(&id),
        files: prepared.files.iter().map(|f| f.path.clone()).collect(),
        hooks_json_diff: diff,
        hooks_json_relaid: relaid,
        dry_run: opts.dry_run,
        reason: repair.or(repin.map(|_| match pin {
            Some(_) => "pin-recorded",
            None => "pin-lifted",
        })),
        warnings,
        error: None,
        pin: pin.clone(),
        gone: handlers_gone(profile, &doc, &new_doc, &id),
    };
    if let (Some(r), false) = (repin, opts.dry_run) {
        let mut r = r.clone();
        r.pin = pin.clone();
        write_receipt(profile, &id, Some(&r))?;
    }
    if opts.dry_run {
        // What the next recipe's plan starts from: this one is not refused, and a real run
        // writes the file unless nothing changes.
        match (&old_bytes, action) {
            (Some(old), "unchanged") => opts.preview.planned(Some(old), &Vec::new()),
            _ => opts.preview.planned(Some(&new_bytes), &merged.handover),
        }
    }
    if opts.dry_run || action == "unchanged" {
        return Ok(outcome);
    }
    let handlers = crate::merge::stamped_handlers(&new_doc, &id)
        .into_iter()
        .map(|(event, hid, command)| HandlerRecord {
            event,
            id: hid.unwrap_or_default(),
            command,
        })
        .collect();
    let receipt = Receipt {
        schema: receipt::SCHEMA.into(),
        id: id.clone(),
        version: to,
        min_cli: prepared.recipe.min_cli.to_string(),
        sha256: prepared.sha256,
        index_url: prepared.index_url.clone(),
        archive_url: prepared.archive_url.clone(),
        installed_at: crate::catalog::format_timestamp(crate::catalog::now_secs()),
        files: prepared.files.clone(),
        handlers,
        created: Some(merged.created),
        absolute_paths: opts.absolute_paths,
        pin,
    };
    hand_over(profile, &id, &merged.handover)?;
    let mut prepared = prepared;
    let warnings = commit(
        profile,
        &id,
        &mut prepared.staging,
        Some(&prepared.tree),
        Some(receipt),
        &new_bytes,
        &[],
    )?;
    let mut outcome = outcome;
    outcome.warnings.extend(warnings);
    Ok(outcome)
}

/// Refuses a `hooks/<id>` that is not a folder (a hand-written hook script named like the
/// recipe, a link to one): hookpack never put it there, and a commit would move it aside
/// as the old recipe folder and delete it. `doing` says what would: `installing`.
fn not_a_file_of_the_user(profile: &Profile, id: &str, doing: &str) -> Result<(), Error> {
    no_links(profile, id, doing)?;
    // The commit keeps the old hooks.json there; a folder would stop it half way.
    let backup = profile.backup();
    if std::fs::symlink_metadata(&backup).is_ok_and(|m| m.is_dir()) {
        return Err(Error::ConfigInvalid {
            path: backup,
            why: "it is not a file: hookpack keeps hooks.json as it was before each change \
                  there, and will not delete a folder; move it elsewhere, then run the command \
                  again"
                .to_string(),
        });
    }
    let dir = profile.recipe_dir(id);
    if std::fs::symlink_metadata(&dir).is_err() || dir.is_dir() {
        return Ok(());
    }
    Err(Error::ConfigInvalid {
        path: dir,
        why: format!(
            "it is not a folder, so not one hookpack installed `{id}` in, and {doing} `{id}` \
             would delete it; move it elsewhere (or delete it yourself), then run the command \
             again"
        ),
    })
}

/// Refuses `hooks/`, `hooks/.receipts` or `hooks/<id>` as a symbolic link (a maintainer's
/// working copy linked in for development): a commit would move the link aside and delete
/// it, or write into its target, and neither is the user's recipe folder to replace.
fn no_links(profile: &Profile, id: &str, doing: &str) -> Result<(), Error> {
    for path in [
        profile.hooks_dir(),
        profile.receipts_dir(),
        profile.recipe_dir(id),
    ] {
        let Some(target) = crate::fs::link_shown(&path) else {
            continue;
        };
        return Err(Error::ConfigInvalid {
            path,
            why: format!(
                "it is a symbolic link{target}, and hookpack neither installs nor removes \
                 through a link, so {doing} `{id}` left both the link and its target as they \
                 are; remove the link (what it points to stays), then run the command again"
            ),
        });
    }
    Ok(())
}

/// Files of an installed recipe that the user changed or added (relative, sorted):
/// installing another version, which replaces the folder whole, would replace or remove
/// them. A missing file loses nothing, and neither does Python's bytecode cache
/// (`__pycache__`), which handlers write there themselves.
pub fn local_changes(profile: &Profile, r: &Receipt) -> Vec<String> {
    local_changes_in(&profile.recipe_dir(&r.id), r)
}

/// [`local_changes`] of the recipe folder `dir`, wherever it is (in staging, for one that
/// recovery moves back).
fn local_changes_in(dir: &Path, r: &Receipt) -> Vec<String> {
    let mut files: Vec<String> = (r.files.iter())
        .filter(|f| !same_file(&dir.join(&f.path), f))
        // A file that is gone loses nothing; one that cannot be read as a file (a folder
        // put in its place) is the user's.
        .filter(|f| std::fs::symlink_metadata(dir.join(&f.path)).is_ok())
        .map(|f| f.path.clone())
        .collect();
    let installed: std::collections::HashSet<&str> =
        r.files.iter().map(|f| f.path.as_str()).collect();
    let added = tree_files(dir)
        .map(|(_, rel)| rel)
        // Below a file the user replaced by a folder: named as that file.
        .filter(|rel| {
            !installed.contains(rel.as_str())
                && !installed.iter().any(|i| rel.starts_with(&format!("{i}/")))
        });
    files.extend(added);
    files.sort();
    files
}

/// Whether a file named `name` is one the system makes in any folder a file manager shows
/// (Finder's `.DS_Store`, Windows Explorer's `Thumbs.db` and `desktop.ini`): not the user's
/// work, so it counts as no change to an installed recipe and goes with its folder.
pub(crate) fn made_by_the_system(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    [".DS_Store", "Thumbs.db", "desktop.ini"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// Each entry below an installed recipe folder `dir` that is not a folder, with its path
/// relative to `dir` as receipts write it. `__pycache__` folders are left out: python
/// handlers write them there themselves; so are the files the system makes there.
fn tree_files(dir: &Path) -> impl Iterator<Item = (walkdir::DirEntry, String)> + '_ {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.file_name() != "__pycache__")
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .filter(|e| !(e.file_type().is_file() && made_by_the_system(e.file_name())))
        .filter_map(move |e| {
            let rel = e.path().strip_prefix(dir).ok()?.to_string_lossy();
            let rel = rel.replace('\\', "/");
            Some((e, rel))
        })
}

/// What is said of an index that lists other bytes for the installed version `version` of
/// `id` than those installed from it (`install` refuses them, `update` warns).
pub fn other_bytes(id: &str, version: &str, listed: &str, installed: &str) -> String {
    format!(
        "the index lists other bytes for `{id}` {version} than the ones installed from it \
         (sha256 {listed}, installed {installed}): a published version never changes, so the \
         catalog was republished or altered"
    )
}

/// An index location as a receipt records it: a path absolute, so that `update` finds it
/// again from any folder; a URL as given, password included (`update` fetches with it; it
/// is never printed).
pub(crate) fn recorded_index(index: &Location) -> String {
    match index {
        Location::Path(p) => std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string(),
        Location::Http(u) => u.to_string(),
        other => other.to_string(),
    }
}

/// Whether two index locations a receipt records are one index: the same text, or two
/// paths to one file (a link to its folder, a `..`: the path recorded is absolute, not
/// resolved).
pub(crate) fn same_index(was: &str, now: &str) -> bool {
    use crate::fetch::Location;
    if was == now {
        return true;
    }
    match (Location::parse(was), Location::parse(now)) {
        (Ok(Location::Path(a)), Ok(Location::Path(b))) => {
            match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether `path` is a regular file holding the bytes `f` records (a fifo in its place is
/// not, and is never opened as one: that would wait for a writer for good).
fn same_file(path: &Path, f: &FileRecord) -> bool {
    matches!(
        crate::fs::open_regular(path).map(|(file, _)| Sha256::of_reader(file)),
        Ok(Ok((digest, _))) if digest == f.sha256
    )
}

/// Files in `dir`, an installed recipe folder without a receipt, that installing `files`
/// would replace or remove: every one not byte-identical to the file installed in its place,
/// but for Python's bytecode cache (relative, sorted).
fn unreceipted_files(dir: &Path, files: &[FileRecord]) -> Vec<String> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let by_path: std::collections::HashMap<&str, &FileRecord> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut out: Vec<String> = tree_files(dir)
        .filter(|(e, rel)| {
            let kept = e.file_type().is_file()
                && by_path
                    .get(rel.as_str())
                    .is_some_and(|f| same_file(e.path(), f));
            !kept
        })
        .map(|(_, rel)| rel)
        .collect();
    out.sort();
    out
}

/// Installs `spec` from the index at `index`.
pub fn install(
    profile: &Profile,
    fetcher: &Fetcher,
    index: &Location,
    spec: &Spec,
    opts: &Options,
) -> Result<Outcome, Error> {
    let loaded = load_index_from(fetcher, index)?;
    install_from(profile, fetcher, index, &loaded, spec, opts)
}

/// Installs `spec` from the index at `index`, fetched already as `loaded` (its catalog, and
/// the location its relative archive URLs resolve against: see [`load_index_from`]), so a
/// command taking several recipes from one index fetches it once and sees one snapshot.
pub fn install_from(
    profile: &Profile,
    fetcher: &Fetcher,
    index: &Location,
    loaded: &(Catalog, Location),
    spec: &Spec,
    opts: &Options,
) -> Result<Outcome, Error> {
    let (catalog, base) = loaded;
    let entry = catalog
        .recipes
        .iter()
        .find(|r| r.id == spec.id)
        .ok_or_else(|| Error::RecipeNotInIndex {
            id: spec.id.to_string(),
            index: index.to_string(),
            near: crate::event::nearest(spec.id.as_str(), &catalog.recipes, |r| r.id.to_string())
                .map(|r| r.id.to_string()),
            // `update` reads the index its receipt names; `install` the one it is given.
            installed_from: receipt::read(profile, spec.id.as_str())
                .ok()
                .flatten()
                .and_then(|r| r.index_url)
                .filter(|from| !same_index(from, &recorded_index(index))),
        })?;
    let version = choose(entry, &spec.want, opts.cli_version.as_ref())?;
    let archive_loc = base.join(&version.url)?;
    let outside = crate::catalog::local_archive_outside(base, &archive_loc, &version.url);
    if let (Some(why), false) = (outside, opts.allow_outside) {
        // Nothing outside the catalog folder is read unless asked: the index may be
        // anyone's, and could name any file of this machine.
        return Err(Error::IndexUrlOutside {
            index: index.to_string(),
            id: spec.id.to_string(),
            version: version.version.to_string(),
            url: version.url.clone(),
            why,
        });
    }
    if matches!(index, Location::Http(_)) && !matches!(archive_loc, Location::Http(_)) {
        // A remote index must not make hookpack read files or devices of this machine.
        return Err(Error::IndexNamesLocalFile {
            index: index.to_string(),
            id: spec.id.to_string(),
            version: version.version.to_string(),
            url: version.url.clone(),
        });
    }
    let promise = Promise {
        id: Some(spec.id.to_string()),
        version: Some(version.version.clone()),
        min_cli: Some(version.min_cli.clone()),
        sha256: Some(version.sha256),
        size: version.size,
    };
    let mut prepared = prepare(
        profile,
        fetcher,
        &archive_loc,
        &promise,
        Some(recorded_index(index)),
        opts,
    )?;
    if opts.cli_version.is_none() {
        // What the user asked for: `update` installs an exact version, chosen within the
        // receipt's pin (or among all, without one).
        let asked = match &spec.pin {
            Some(pin) => Want::parse(spec.id.as_str(), pin).unwrap_or_else(|_| spec.want.clone()),
            None => Want::Newest,
        };
        prepared
            .warnings
            .extend(unknown_cli_warning(entry, &asked, version));
    }
    // SPEC 1.5 allows an index on disk to name an archive anywhere on this machine; it is
    // read as a regular file only, and its size and sha256 were checked before opening.
    if let Some(why) = outside {
        prepared.warnings.push(format!(
            "the index {index} names the archive of {} {} by `{}`, which {why}; it was read \
             from {archive_loc}, as --allow-outside asks, and its sha256 agrees with the index",
            spec.id, version.version, version.url
        ));
    }
    install_prepared(profile, prepared, spec.pin.clone(), opts)
}

/// Installs an archive file with no index; `sha256` is checked when given.
pub fn install_archive(
    profile: &Profile,
    fetcher: &Fetcher,
    archive: &Location,
    sha256: Option<Sha256>,
    opts: &Options,
) -> Result<Outcome, Error> {
    // The id, version and min_cli come from the archive itself.
    let promise = Promise {
        id: None,
        version: None,
        min_cli: None,
        sha256,
        size: None,
    };
    let prepared = prepare(profile, fetcher, archive, &promise, None, opts)?;
    if let Some(cli) = &opts.cli_version {
        if prepared.recipe.min_cli > *cli {
            return Err(Error::CliTooOld {
                id: prepared.recipe.id.to_string(),
                version: prepared.recipe.version.to_string(),
                needs: prepared.recipe.min_cli.to_string(),
                have: cli.to_string(),
                fix: "upgrade the CLI".to_string(),
            });
        }
    }
    // An archive is no choice among versions: nothing to pin.
    install_prepared(profile, prepared, None, opts)
}

/// Removes `id`: its stamped handlers, the groups and events they leave empty, its folder
/// and its receipt. With `dry_run`, plans it from `hooks.json` as `preview` holds it (as
/// the recipes the command removed before this one leave it), writing nothing.
pub fn remove(
    profile: &Profile,
    id: &str,
    dry_run: bool,
    preview: &Preview,
) -> Result<Outcome, Error> {
    // Nothing is installed in a profile folder that is not there (a misspelt --profile),
    // and taking the lock would create it.
    if std::fs::symlink_metadata(&profile.root).is_err() {
        return Err(Error::NotInstalled {
            id: id.to_string(),
            profile: profile.root.clone(),
            near: None,
            profile_missing: true,
        });
    }
    let _lock = if dry_run {
        None
    } else {
        Some(Lock::acquire(profile, lock_wait())?)
    };
    if !dry_run {
        recover(profile)?;
    }
    let (doc, old_bytes) = preview.read(&profile.hooks_json(), dry_run)?;
    let (previous, folder) = receipt_and_folder(profile, id, dry_run)?;
    let previous = preview.receipt(id, previous, dry_run);
    let (new_doc, removed, handover) = crate::merge::unmerge_handing_over(
        &doc,
        id,
        previous.as_ref().and_then(|r| r.created.as_ref()),
    )
    .map_err(|e| shape_refused(&profile.hooks_json(), e))?;
    let tree = profile.recipe_dir(id);
    not_a_file_of_the_user(profile, id, "removing")?;
    if removed == 0 && previous.is_none() {
        if folder
            .as_ref()
            .is_some_and(|f| std::fs::symlink_metadata(f).is_ok())
        {
            return Err(Error::RemoveNotInstalledFolder {
                id: id.to_string(),
                dir: tree,
            });
        }
        // Another receipt that cannot be read only costs the hint. A dry run names those
        // recovery leaves: not the receipt of a first install it undoes.
        let receipts = receipts_after_recovery(profile)
            .map(|(r, _)| r)
            .unwrap_or_default();
        return Err(Error::NotInstalled {
            id: id.to_string(),
            profile: profile.root.clone(),
            near: near_installed(id, &receipts),
            profile_missing: !profile.root.exists(),
        });
    }
    // What the user changed or added there is theirs: remove deletes only what it installed.
    if let (Some(r), Some(dir)) = (&previous, &folder) {
        let files = local_changes_in(dir, r);
        if !files.is_empty() {
            // What the restore does to a pin does not matter: the recipe goes next.
            let (restore, note) = crate::doctor::reinstall(profile, r);
            return Err(Error::RemoveLocalChanges {
                id: id.to_string(),
                version: r.version.clone(),
                dir: tree,
                files,
                restore: Box::new((
                    restore,
                    if r.index_url.is_some() {
                        String::new()
                    } else {
                        note
                    },
                )),
            });
        }
    }
    // The removed handlers' trust goes with them: a later handler with the same id must be
    // trusted anew, and `doctor` has no dangling entry to report. A trust file that cannot
    // be read would keep those entries (and trust a reinstall without asking once fixed),
    // so the remove is refused before anything changes. A key that a handler staying has
    // too (the user's, with the same event and id) is that handler's trust, and stays.
    let keys: Vec<String> = (handlers_gone(profile, &doc, &new_doc, id).into_iter())
        .map(|(_, key)| key)
        .collect();
    if !keys.is_empty() {
        crate::trust::TrustFile::read(&profile.trust_file()).map_err(|e| {
            Error::RemoveTrustUnreadable {
                id: id.to_string(),
                path: profile.trust_file(),
                source: Box::new(e),
            }
        })?;
    }
    let new_bytes = if removed == 0 {
        old_bytes.clone().unwrap_or_else(|| to_bytes(&new_doc))
    } else {
        to_bytes(&new_doc)
    };
    check_readable_back(&profile.hooks_json(), &new_bytes)?;
    if dry_run {
        preview.planned((removed > 0).then_some(&new_bytes[..]), &handover);
    }
    // Without a receipt nothing says which files are the recipe's: the folder goes whole,
    // and the outcome lists all it holds, so `--dry-run` shows it first.
    let (files, mut warnings) = match &previous {
        Some(r) => (r.files.iter().map(|f| f.path.clone()).collect(), Vec::new()),
        None if folder.as_deref().is_some_and(Path::is_dir) => {
            let dir = folder.as_deref().unwrap_or(&tree);
            let mut held: Vec<String> = walkdir::WalkDir::new(dir)
                .min_depth(1)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| !e.file_type().is_dir())
                .filter_map(|e| {
                    let rel = e.path().strip_prefix(dir).ok()?.to_string_lossy();
                    Some(rel.replace('\\', "/"))
                })
                .collect();
            held.sort();
            let n = held.len();
            let goes = if dry_run {
                format!("would go, with all the {n} file(s) it holds")
            } else {
                format!("went, with all the {n} file(s) it held")
            };
            let warning = format!(
                "`{id}` has no install receipt, so hookpack cannot tell the recipe's files \
                 from ones you put in its folder: the whole folder {goes}"
            );
            (held, vec![warning])
        }
        None => (Vec::new(), Vec::new()),
    };
    // As a first install over them does, name in full the stamped handlers removed that
    // no receipt records: they may be the user's, copied from another profile.
    if previous.is_none() && removed > 0 {
        let stamped = crate::merge::stamped_groups(&doc, id);
        warnings.push(unrecorded_stamps(id, &stamped, dry_run, true));
    }
    let (diff, relaid) = if removed == 0 {
        (Vec::new(), false)
    } else {
        hooks_json_diff(old_bytes.as_deref(), &doc, &new_bytes)
    };
    let outcome = Outcome {
        action: "remove",
        id: id.to_string(),
        from: previous.as_ref().map(|r| r.version.clone()),
        to: None,
        path: tree,
        files,
        hooks_json_diff: diff,
        hooks_json_relaid: relaid,
        dry_run,
        reason: None,
        pin: None,
        warnings,
        error: None,
        gone: Vec::new(),
    };
    if dry_run {
        return Ok(outcome);
    }
    let mut staging = Staging::new(profile, false)?;
    if removed == 0 && old_bytes.is_none() {
        // No hooks.json to rewrite: just move the folder and receipt away. A receipt that
        // stays takes its folder back (deleted with the staging folder otherwise).
        let (tree, moved) = (profile.recipe_dir(id), staging.path().join("old"));
        move_if_exists(&tree, &moved)?;
        if let Err(e) = write_receipt(profile, id, None) {
            let _ = move_if_exists(&moved, &tree);
            return Err(e);
        }
        return Ok(outcome);
    }
    hand_over(profile, id, &handover)?;
    // The recipe is gone whatever happens to its trust (the trust file changed since it
    // was read, or cannot be written): say so, since a reinstall would be trusted without
    // asking.
    let mut outcome = outcome;
    let warnings = commit(profile, id, &mut staging, None, None, &new_bytes, &keys)?;
    outcome.warnings.extend(warnings);
    Ok(outcome)
}

/// An installed recipe and what the index offers for it.
#[derive(Debug, Clone, Serialize)]
pub struct Outdated {
    /// Recipe id.
    pub id: String,
    /// Installed version.
    pub installed: String,
    /// The version `update` would install (the newest the host can run, within the pin).
    pub available: Option<String>,
    /// The index's `latest`.
    pub latest: Option<String>,
    /// What `update` does with it.
    pub state: UpdateState,
    /// For an outdated recipe, files of it the user changed or added: `update` refuses to
    /// replace or remove them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub local_changes: Vec<String>,
    /// The pin its receipt records (`install ID@REQ`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// For a pinned recipe, the newest version the host can run, pin or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest: Option<String>,
    /// The sha256 the index lists for the installed version, when it is the index the recipe
    /// was installed from and the bytes differ from those installed: republished or altered
    /// (`install` refuses them; the installed files stay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_changed: Option<String>,
    /// The sha256 of the archive installed.
    #[serde(skip)]
    pub installed_sha256: String,
    /// For a recipe whose index could not be read (`failed`), the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What `update` does with an installed recipe, given what the index offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateState {
    /// A newer version runs on the host: it is installed.
    Outdated,
    /// The installed version is the one `update` would choose, or a newer one the host
    /// runs (pinned past the index's `latest`): left as it is.
    Current,
    /// The index lists the recipe, but no version of it runs on the host: left as it is.
    CliTooOld,
    /// The index does not list the recipe: left as it is.
    NotInIndex,
    /// A newer version runs on the host, outside the pin the recipe was installed with
    /// (`install ID@REQ`): left as it is; `install ID` lifts the pin.
    Pinned,
    /// The index it is compared with cannot be read: left as it is (`update --dry-run`
    /// lists it so; a real run says `left`, reason `failed`).
    Failed,
}

impl UpdateState {
    /// How `update --dry-run` shows it.
    pub fn label(self) -> &'static str {
        match self {
            UpdateState::Outdated => "outdated",
            UpdateState::Current => "current",
            UpdateState::CliTooOld => "cli too old",
            UpdateState::NotInIndex => "not in index",
            UpdateState::Pinned => "pinned",
            UpdateState::Failed => "failed",
        }
    }

    /// The `reason` of a recipe `update` leaves as it is (`None` when it does not).
    pub fn reason(self) -> Option<&'static str> {
        match self {
            UpdateState::CliTooOld => Some("cli-too-old"),
            UpdateState::NotInIndex => Some("not-in-index"),
            UpdateState::Pinned => Some("pinned"),
            UpdateState::Failed => Some("failed"),
            UpdateState::Outdated | UpdateState::Current => None,
        }
    }
}

/// The profile's receipts as recovery will leave them, and the change it will finish or
/// undo, after checking that every one of `ids` is installed.
fn installed(
    profile: &Profile,
    ids: &[String],
) -> Result<(Vec<Receipt>, Option<Interrupted>), Error> {
    let (receipts, change) = receipts_after_recovery(profile)?;
    for id in ids {
        if !receipts.iter().any(|r| r.id == *id) {
            return Err(Error::NotInstalled {
                id: id.clone(),
                profile: profile.root.clone(),
                near: near_installed(id, &receipts),
                profile_missing: !profile.root.exists(),
            });
        }
    }
    Ok((receipts, change))
}

/// The installed recipe whose id is a likely misspelling of `id`, for "did you mean".
fn near_installed(id: &str, receipts: &[Receipt]) -> Option<String> {
    crate::event::nearest(id, receipts, |r| r.id.to_string()).map(|r| r.id.to_string())
}

/// Which index each installed recipe (`ids`, or all) is compared with by `update`: `flag`
/// (`--index`) for all of them when given; else the index its receipt says it came from;
/// else (installed with `--archive`) the profile's usual index, which is looked up only
/// then: one that cannot be used stops `update` only when a recipe needs it.
pub fn update_sources(
    profile: &Profile,
    flag: Option<Location>,
    ids: &[String],
) -> Result<Vec<(Location, Vec<String>)>, Error> {
    let default = || profile.resolve_index(None).map(|(location, _)| location);
    let (receipts, _) = installed(profile, ids)?;
    let mut groups: Vec<(Location, Vec<String>)> = Vec::new();
    for r in receipts {
        if !ids.is_empty() && !ids.contains(&r.id) {
            continue;
        }
        let recorded = match &r.index_url {
            Some(url) => Some(crate::catalog::verify::index_location(url)?),
            None => None,
        };
        let loc = match (&flag, recorded) {
            (Some(f), _) => f.clone(),
            // Receipts written before paths were recorded absolute name a folder relative
            // to wherever install ran: not trustworthy from here.
            (None, Some(Location::Path(p))) if p.is_relative() => default()?,
            (None, Some(recorded)) => recorded,
            (None, None) => default()?,
        };
        match groups.iter_mut().find(|(l, _)| *l == loc) {
            Some((_, members)) => members.push(r.id.clone()),
            None => groups.push((loc, vec![r.id.clone()])),
        }
    }
    Ok(groups)
}

/// Compares installed recipes (`ids`, or all) with the index.
pub fn outdated(
    profile: &Profile,
    fetcher: &Fetcher,
    index: &Location,
    ids: &[String],
    cli: Option<&Version>,
) -> Result<Vec<Outdated>, Error> {
    outdated_in(profile, index, &load_index(fetcher, index)?, ids, cli)
}

/// Compares installed recipes (`ids`, or all) with `catalog`, the index at `index` fetched
/// already.
pub fn outdated_in(
    profile: &Profile,
    index: &Location,
    catalog: &Catalog,
    ids: &[String],
    cli: Option<&Version>,
) -> Result<Vec<Outdated>, Error> {
    let mut out = Vec::new();
    let (receipts, change) = installed(profile, ids)?;
    for r in receipts {
        if !ids.is_empty() && !ids.contains(&r.id) {
            continue;
        }
        let entry = catalog.recipes.iter().find(|e| e.id.as_str() == r.id);
        // The receipt's pin was checked when it was read.
        let pin = (r.pin.as_deref()).and_then(|p| Want::parse(&r.id, p).ok());
        let newest = entry
            .and_then(|e| choose(e, &Want::Newest, cli).ok())
            .map(|v| v.version.clone());
        let available = match &pin {
            Some(want) => entry
                .and_then(|e| choose(e, want, cli).ok())
                .map(|v| v.version.clone()),
            None => newest.clone(),
        };
        let installed = Version::parse(&r.version).ok();
        // `update` never goes back from a version the host can run: an index whose `latest`
        // holds a newer version back would otherwise take a pinned install back to it.
        let older = (available.as_ref())
            .zip(installed.as_ref())
            .is_some_and(|(available, installed)| available < installed);
        let runs_here = cli.is_none_or(|c| Version::parse(&r.min_cli).is_ok_and(|m| m <= *c));
        let state = match (&available, entry) {
            (Some(v), _) if v.to_string() != r.version && !(older && runs_here) => {
                UpdateState::Outdated
            }
            (Some(_), _) => UpdateState::Current,
            // The pin holds nothing the host runs (or the index dropped the pinned version).
            (None, Some(_)) if pin.is_some() && newest.is_some() => UpdateState::Current,
            (None, Some(_)) => UpdateState::CliTooOld,
            (None, None) => UpdateState::NotInIndex,
        };
        // Left where the pin keeps it, though a newer version runs here.
        let held_back = (newest.as_ref())
            .zip(installed.as_ref())
            .is_some_and(|(newest, installed)| newest > installed);
        let state = if pin.is_some() && state == UpdateState::Current && held_back {
            UpdateState::Pinned
        } else {
            state
        };
        let bytes_changed = entry
            .and_then(|e| {
                e.versions
                    .iter()
                    .find(|v| v.version.to_string() == r.version)
            })
            .filter(|v| v.sha256 != r.sha256)
            .filter(|_| {
                (r.index_url.as_deref()).is_some_and(|was| same_index(was, &recorded_index(index)))
            })
            .map(|v| v.sha256.to_string());
        let available = available.map(|v| v.to_string());
        let local_changes = if state == UpdateState::Outdated {
            (folder_after_recovery(profile, change.as_ref(), &r.id))
                .map(|dir| local_changes_in(&dir, &r))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        out.push(Outdated {
            local_changes,
            id: r.id.clone(),
            installed: r.version.clone(),
            available,
            latest: entry.map(|e| e.latest.to_string()),
            state,
            newest: newest.filter(|_| pin.is_some()).map(|v| v.to_string()),
            pin: r.pin.clone(),
            bytes_changed,
            installed_sha256: r.sha256.to_string(),
            error: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// Found by the reviews of the diff: recovery compared the recipe's handlers by their
    /// bytes, so a `hooks.json` reformatted after a crash (`jq -S`: keys and events
    /// sorted) read as other handlers. Order is no difference; a changed handler is.
    #[test]
    fn the_recipes_handlers_are_compared_whatever_their_order() {
        let doc = serde_json::json!({"hooks": {
            "SessionEnd": [{"hooks": [{"type": "command", "command": "b", "recipe": "r"}]}],
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "a", "recipe": "r", "id": "x"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]
        }});
        let sorted = serde_json::json!({"hooks": {
            "PostToolUse": [{"hooks": [{"command": "a", "id": "x", "recipe": "r", "type": "command"}], "matcher": "*"}],
            "SessionEnd": [{"hooks": [{"command": "b", "recipe": "r", "type": "command"}]}],
            "Stop": [{"hooks": [{"command": "mine", "type": "command"}]}]
        }});
        use super::stamped_digest;
        assert_eq!(stamped_digest(&doc, "r"), stamped_digest(&sorted, "r"));
        let mut changed = sorted.clone();
        changed["hooks"]["SessionEnd"][0]["hooks"][0]["command"] = "c".into();
        assert_ne!(stamped_digest(&doc, "r"), stamped_digest(&changed, "r"));
    }

    use super::line_diff;

    #[test]
    fn a_pin_is_recorded_without_the_spaces_around_it() {
        for (spec, pin) in [
            ("tool-gate@ 0.1.0", "0.1.0"),
            ("tool-gate@^0.1 ", "^0.1"),
            ("tool-gate@>=0.1, <0.3", ">=0.1, <0.3"),
        ] {
            let parsed = super::Spec::parse(spec).unwrap();
            assert_eq!(parsed.pin.as_deref(), Some(pin), "{spec}");
        }
        let exact = super::Spec::parse("tool-gate@ 0.1.0 ").unwrap().want;
        assert!(matches!(exact, super::Want::Exact(_)), "{exact:?}");
        assert_eq!(super::Spec::parse("tool-gate").unwrap().pin, None);
    }

    #[test]
    fn a_changed_line_shows_removed_before_added_with_context() {
        let before =
            "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5,\n  \"f\": 6\n}\n";
        let after = before.replace("\"b\": 2", "\"b\": 20");
        assert_eq!(
            line_diff(before, &after),
            [
                "{",
                "  \"a\": 1,",
                "-  \"b\": 2,",
                "+  \"b\": 20,",
                "  \"c\": 3,",
                "  \"d\": 4,",
            ]
            .map(|l| if l.starts_with(['-', '+']) {
                l.to_string()
            } else {
                format!(" {l}")
            })
        );
    }
}
