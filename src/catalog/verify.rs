//! `hookpack catalog verify`: does a published catalog hold what its index promises?
//!
//! Fetches (or reads) every archive the index lists and checks its size and sha256, opens
//! it with the same checks `install` applies, validates its `recipe.json` and the files
//! beside it (written into a temporary folder, as install writes them) and compares its
//! id, version and `min_cli` with the index; checks that `latest` is the newest version and
//! that `SHA256SUMS` agrees with both. Every problem is reported, not just the first.

use crate::archive::{self, Limits};
use crate::diagnostic::{Cap, Diagnostic, Severity};
use crate::fetch::{FetchError, Fetcher, Location};
use crate::json::pointer_push;
use crate::sha256::Sha256;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Seek as _, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Largest index fetched.
pub const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;
/// Largest archive fetched.
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
/// Archives up to this size are kept in memory while verified; bigger ones in a temporary
/// file.
const SPOOL_IN_MEMORY: usize = 4 * 1024 * 1024;

/// One archive checked.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// Recipe id.
    pub id: String,
    /// Version.
    pub version: String,
    /// Where the archive was read from.
    pub location: String,
    /// Its digest, when it could be read.
    pub sha256: Option<Sha256>,
    /// Whether every check on it passed.
    pub ok: bool,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The index location.
    pub index: String,
    /// Archives checked.
    pub archives: Vec<Checked>,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
    /// True when a fetch failed for a reason outside the catalog (network, I/O).
    #[serde(skip)]
    pub environment_failed: bool,
}

impl Report {
    /// Number of errors.
    pub fn errors(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
}

/// Where the index is: a catalog folder means its `hooks-index.json`.
pub fn index_location(s: &str) -> Result<Location, FetchError> {
    Ok(match Location::parse(s)? {
        Location::Path(p) => index_at(p),
        other => other,
    })
}

/// The index at the local path `p`: a folder means its `hooks-index.json`.
pub fn index_at(p: PathBuf) -> Location {
    Location::Path(index_file(p))
}

/// The index file at the local path `p`: a folder's `hooks-index.json`, else `p` itself.
pub fn index_file(p: PathBuf) -> PathBuf {
    if p.is_dir() {
        p.join(super::INDEX_FILE)
    } else {
        p
    }
}

/// [`index_location`] for a command-line argument (`what`, e.g. `--index`): a value of the
/// wrong form is a usage error (exit 2).
pub fn index_argument(
    what: &'static str,
    s: &std::ffi::OsStr,
) -> Result<Location, crate::error::Error> {
    // A name that is not UTF-8 is no URL: a path, as `pack --out-dir` took it.
    let Some(s) = s.to_str() else {
        return Ok(index_at(PathBuf::from(s)));
    };
    index_location(s).map_err(|e| crate::error::Error::ArgInvalid {
        what,
        value: String::new(),
        why: e.to_string(),
    })
}

struct Ctx<'a> {
    index_file: PathBuf,
    diags: Vec<Diagnostic>,
    /// Per file, how many problems `error` and `warn` listed, and those past
    /// [`crate::diagnostic::MAX_LISTED`] counted instead: a served SHA256SUMS of millions
    /// of bad lines must not make millions of diagnostics.
    per_file: BTreeMap<PathBuf, Cap>,
    /// The errors counted instead of listed, over all files.
    unlisted_errors: usize,
    env_failed: bool,
    fetcher: &'a Fetcher,
    /// Where archives named by absolute URL are read from instead (`--assets-dir`).
    assets: Option<&'a Path>,
    /// A worker's context (one archive checked on its own thread) lists every problem and
    /// notes here which of `diags` went through [`Ctx::listed`], for [`Ctx::merge`] to apply
    /// the per-file cap in index order: the report is the same on any number of threads.
    /// `None` in the main context.
    capped: Option<Vec<usize>>,
    /// Whether an archive an index on disk names outside its folder is read
    /// (`--allow-outside`), else refused unread.
    allow_outside: bool,
}

impl<'a> Ctx<'a> {
    fn new(index_file: PathBuf, fetcher: &'a Fetcher, assets: Option<&'a Path>) -> Self {
        Ctx {
            index_file,
            diags: Vec::new(),
            per_file: BTreeMap::new(),
            unlisted_errors: 0,
            env_failed: false,
            fetcher,
            assets,
            capped: None,
            allow_outside: false,
        }
    }

    /// A context for checking one archive on another thread.
    fn worker(index_file: PathBuf, fetcher: &'a Fetcher, assets: Option<&'a Path>) -> Self {
        Ctx {
            capped: Some(Vec::new()),
            ..Ctx::new(index_file, fetcher, assets)
        }
    }

    /// Adds what a [`Ctx::worker`] found, as if it had been found here.
    fn merge(&mut self, part: Ctx) {
        self.env_failed |= part.env_failed;
        let mut capped = part.capped.unwrap_or_default().into_iter().peekable();
        for (k, d) in part.diags.into_iter().enumerate() {
            if capped.next_if_eq(&k).is_some() && !self.listed(&d.file, d.severity) {
                continue;
            }
            self.diags.push(d);
        }
    }

    fn error(&mut self, file: &Path, pointer: &str, code: &'static str, msg: impl Into<String>) {
        if self.listed(file, Severity::Error) {
            self.diags.push(Diagnostic {
                pointer: pointer.to_string(),
                ..Diagnostic::file_level(file, Severity::Error, code, msg)
            });
        }
    }
    fn warn(&mut self, file: &Path, code: &'static str, msg: impl Into<String>) {
        self.warn_at(file, "", code, msg);
    }
    fn warn_at(&mut self, file: &Path, pointer: &str, code: &'static str, msg: impl Into<String>) {
        if self.listed(file, Severity::Warning) {
            self.diags.push(Diagnostic {
                pointer: pointer.to_string(),
                ..Diagnostic::file_level(file, Severity::Warning, code, msg)
            });
        }
    }
    /// True when a problem of `severity` about `file` is to be listed; when the file has
    /// had its share, it is counted instead.
    fn listed(&mut self, file: &Path, severity: Severity) -> bool {
        if let Some(capped) = &mut self.capped {
            capped.push(self.diags.len());
            return true;
        }
        let cap = self.per_file.entry(file.to_path_buf()).or_default();
        let listed = cap.admit(severity);
        if !listed && severity == Severity::Error {
            self.unlisted_errors += 1;
        }
        listed
    }
    /// The index, or a file it lists (an archive, `SHA256SUMS`), could not be read. That
    /// the server answered 404 (or another definite refusal) is the input's fault, as a
    /// file missing on disk is; only a server that could not be reached is the environment.
    fn fetch_failed(&mut self, file: &Path, pointer: &str, e: &FetchError) {
        if !e.is_input_problem() {
            self.env_failed = true;
        }
        self.report_fetch(file, pointer, e);
    }
    fn report_fetch(&mut self, file: &Path, pointer: &str, e: &FetchError) {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            // A cause the message already quotes (an `FsError` quotes its `io::Error`) adds
            // nothing: the same rule as `cli::report_error`.
            let text = s.to_string();
            if !msg.contains(&text) {
                msg.push_str(&format!(": {text}"));
            }
            src = s.source();
        }
        // An archive the index lists (its entry's pointer, `/recipes/N/versions/M`) that is
        // not there: not uploaded, or deleted. Say what puts it back.
        let parts: Vec<&str> = pointer.split('/').collect();
        let archive = matches!(parts[..], ["", "recipes", _, "versions", _]);
        if archive && is_not_found(e) {
            msg.push_str(
                "; the index lists it, so it must be there: upload (or copy back) the archive \
                 `hookpack pack` wrote into its --out-dir, or, while the recipe's sources at that \
                 version are still there unchanged, pack them into the catalog folder again, \
                 which writes it anew (a version merged from another index has none here)",
            );
        }
        if archive {
            msg.push_str(&self.assets_dir_hint(file));
        }
        self.error(file, pointer, "fetch-failed", msg);
    }
    /// For an archive at `url` that could not be fetched, where the index was read from
    /// disk without `--assets-dir` and a file of the URL's name is beside it (a catalog
    /// packed with `--asset-base-url`, checked before its upload, as found by review): the
    /// flag that reads it from there.
    fn assets_dir_hint(&self, url: &Path) -> String {
        let url = url.to_string_lossy();
        let remote = url.starts_with("http://") || url.starts_with("https://");
        let name = url.rsplit('/').next().unwrap_or_default();
        let folder = self
            .index_file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let beside = folder.join(name);
        if self.assets.is_some() || !remote || name.is_empty() || !self.index_file.is_file() {
            return String::new();
        }
        if !beside.is_file() {
            return String::new();
        }
        format!(
            "; {} is beside the index: to check the archives there before they are uploaded, \
             give `--assets-dir {}`",
            crate::command::shell_quote(&beside.display().to_string()),
            crate::command::shell_quote(&folder.display().to_string())
        )
    }
}

/// Verifies the catalog whose index is at `index`. With `assets`, an archive the index
/// names by absolute URL (`pack --asset-base-url`) is read from that folder, by the URL's
/// file name, instead of being fetched: a catalog can be checked before its upload. Up to
/// `jobs` archives are checked at once; the report is the same for any number.
pub fn verify(
    index: &Location,
    fetcher: &Fetcher,
    assets: Option<&Path>,
    allow_outside: bool,
    jobs: usize,
) -> Report {
    let index_file = PathBuf::from(index.to_string());
    let mut ctx = Ctx::new(index_file.clone(), fetcher, assets);
    ctx.allow_outside = allow_outside;
    let mut archives = Vec::new();
    // A folder of recipe sources given for a catalog: say so, not that no index is there.
    if let Location::Path(p) = index {
        if let Err(e) = crate::install::recipes_given_as_index(p) {
            ctx.error(&index_file, "", "index-is-recipes", e.to_string());
            return finish(index, archives, ctx);
        }
    }
    // Archives and SHA256SUMS are beside the index that answered (after redirects).
    let (bytes, base) = match fetcher.read_document(index, MAX_INDEX_BYTES) {
        Ok(b) => b,
        Err(e) => {
            ctx.fetch_failed(&index_file, "", &e);
            return finish(index, archives, ctx);
        }
    };
    // The index's own checks, with one made stricter: `validate` only warns when `latest`
    // is not the newest version (the format allows holding one back), but a catalog that
    // passes verification gives `install ID` its newest version.
    ctx.diags.extend(
        super::validate_bytes(&index_file, &bytes)
            .into_iter()
            .map(|mut d| {
                if d.code == super::LATEST_NOT_NEWEST {
                    d.severity = Severity::Error;
                }
                d
            }),
    );
    let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
        return finish(index, archives, ctx);
    };
    // Every archive listed, in index order.
    let mut listed = Vec::new();
    for (i, r) in doc["recipes"].as_array().into_iter().flatten().enumerate() {
        let Some(id) = r["id"].as_str() else { continue };
        for (j, v) in r["versions"].as_array().into_iter().flatten().enumerate() {
            let (Some(version), Some(url)) = (v["version"].as_str(), v["url"].as_str()) else {
                continue;
            };
            let vp = format!("/recipes/{i}/versions/{j}");
            listed.push((id, version, url, v, vp));
        }
    }
    // Checked on `jobs` threads (fetching, hashing, opening and writing out each archive is
    // independent of the others), then reported in index order.
    let (file, assets) = (ctx.index_file.clone(), ctx.assets);
    let check = |(id, version, url, v, vp): &(&str, &str, &str, &Value, String)| {
        let mut part = Ctx::worker(file.clone(), fetcher, assets);
        part.allow_outside = allow_outside;
        let (checked, from_assets) = verify_archive(&mut part, &base, id, version, url, v, vp);
        (checked, from_assets, part)
    };
    let results = crate::parallel::map(&listed, jobs, check, |_| false);
    let mut sums_expected: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut elsewhere = BTreeSet::new();
    for (task, result) in listed.iter().zip(results) {
        // An archive no thread took (none could start) is checked here.
        let (checked, from_assets, part) = result.unwrap_or_else(|| check(task));
        ctx.merge(part);
        let (_, _, url, v, vp) = task;
        let name = url.rsplit('/').next().unwrap_or(url).to_string();
        let sums_name = match from_assets {
            // Read from the assets folder, it is checked against SHA256SUMS as a local
            // one, by the name of the file read (the URL's `?query` is no part of it).
            FromAssets::File(file) => Some(file),
            // Reported as `asset-unnamed`: no line of SHA256SUMS can name it.
            FromAssets::Unnamed => None,
            // By its path from the index's folder, as pack lists it (`old/x.tar.gz`).
            FromAssets::No if !url.contains("://") => {
                Some(super::archive_file(url).unwrap_or(name))
            }
            FromAssets::No => {
                // Named by absolute URL (`pack --asset-base-url`), its line in
                // SHA256SUMS names the file uploaded there.
                elsewhere.insert(name);
                None
            }
        };
        match (sums_name, v["sha256"].as_str()) {
            // An archive that could not be read is reported as such, once: pack leaves
            // one OUT lacks out of SHA256SUMS, so "SHA256SUMS does not list it" would
            // only repeat that, with advice (pack again) that cannot help while it is
            // gone. Its line, if any, is checked once it can be read.
            (Some(name), _) if checked.sha256.is_none() => {
                elsewhere.insert(name);
            }
            (Some(name), Some(sha)) => {
                sums_expected.insert(name, (sha.to_string(), vp.clone()));
            }
            _ => {}
        }
        archives.push(checked);
    }
    verify_sums(&mut ctx, &base, &bytes, &sums_expected, &elsewhere);
    finish(index, archives, ctx)
}

/// Where verify keeps an archive while checking it. A failure to keep it (a full
/// temporary folder) says so, not only that reading the archive failed.
struct Spool(tempfile::SpooledTempFile);

impl Spool {
    fn kept(e: io::Error) -> io::Error {
        let dir = std::env::temp_dir();
        let why = format!(
            "cannot keep it in a temporary file in {}: {e}; set TMPDIR to a folder with room \
             for it (verify keeps each archive above {} MiB there while it checks it)",
            dir.display(),
            SPOOL_IN_MEMORY >> 20
        );
        io::Error::new(e.kind(), why)
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(Spool::kept)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(Spool::kept)
    }
}

/// Reads back an archive [`Spool`] kept, remembering a failure to read it: that is the
/// temporary file failing on this machine, not the archive being invalid.
struct ReadBack<'a> {
    spool: &'a mut tempfile::SpooledTempFile,
    failed: Option<io::Error>,
}

impl ReadBack<'_> {
    fn failed(e: io::Error) -> String {
        format!(
            "cannot read back the archive kept in a temporary file in {}: {e}; this machine \
             failed, not the archive: set TMPDIR to a folder on a working disk and verify again",
            std::env::temp_dir().display()
        )
    }
}

impl io::Read for ReadBack<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.spool.read(buf).inspect_err(|e| {
            self.failed = Some(io::Error::new(e.kind(), e.to_string()));
        })
    }
}

/// The file name an archive uploaded to `url` has in the folder `pack` wrote it to: the
/// URL's last path segment, when it is a plain file name (pack's names need no escapes).
fn asset_name(url: &reqwest::Url) -> Option<&str> {
    let name = url.path().rsplit('/').next()?;
    (!name.is_empty() && name != "." && name != ".." && !name.contains('%')).then_some(name)
}

/// Whether an archive was to be read from `--assets-dir`, and as which file.
enum FromAssets {
    /// No: it is named by relative URL, no folder was given, or its URL was refused first.
    No,
    /// Yes, as this file of the folder, which its line in SHA256SUMS names.
    File(String),
    /// Yes, but its URL names no file there (`asset-unnamed`), so nothing was read.
    Unnamed,
}

fn finish(index: &Location, archives: Vec<Checked>, mut ctx: Ctx) -> Report {
    for (file, cap) in &ctx.per_file {
        ctx.diags.extend(cap.unlisted(file));
    }
    Report {
        index: index.to_string(),
        archives,
        diagnostics: ctx.diags,
        environment_failed: ctx.env_failed,
    }
}

fn verify_archive(
    ctx: &mut Ctx,
    index: &Location,
    id: &str,
    version: &str,
    url: &str,
    entry: &Value,
    vp: &str,
) -> (Checked, FromAssets) {
    let before = (ctx.diags.len(), ctx.unlisted_errors);
    let index_file = ctx.index_file.clone();
    let mut checked = Checked {
        id: id.into(),
        version: version.into(),
        location: url.into(),
        sha256: None,
        ok: false,
    };
    let loc = match index.join(url) {
        Ok(l) => l,
        // The index's own checks named the URL's fault already, at the same pointer.
        Err(_) if super::check_url(url).is_err() => return (checked, FromAssets::No),
        Err(e) => {
            ctx.fetch_failed(&index_file, &pointer_push(vp, "url"), &e);
            return (checked, FromAssets::No);
        }
    };
    if let Some(why) = super::local_archive_outside(index, &loc, url) {
        // SPEC 1.5 allows it, but the index may be anyone's (a pull request's): read only
        // when asked, and the folder is not whole either way.
        if !ctx.allow_outside {
            ctx.error(
                &index_file,
                &pointer_push(vp, "url"),
                "url-outside",
                format!(
                    "url `{url}` {why}; nothing there was read, as an index may be anyone's \
                     and could name any file of this machine: `--allow-outside` reads it \
                     (the catalog format allows such a URL); {}",
                    super::PUBLISH_INSIDE
                ),
            );
            return (checked, FromAssets::No);
        }
        ctx.warn_at(
            &index_file,
            &pointer_push(vp, "url"),
            "url-outside",
            format!(
                "url `{url}` {why} (read from {loc}, as --allow-outside asks); {}",
                super::PUBLISH_INSIDE
            ),
        );
    }
    checked.location = loc.to_string();
    if matches!(index, Location::Http(_)) && !matches!(loc, Location::Http(_)) {
        ctx.error(
            &index_file,
            &pointer_push(vp, "url"),
            "url-local",
            "a remote index may only name http(s) archives, not local files",
        );
        return (checked, FromAssets::No);
    }
    let mut from_assets = FromAssets::No;
    let loc = match (ctx.assets, &loc) {
        (Some(dir), Location::Http(u)) if url.contains("://") => match asset_name(u) {
            Some(name) => {
                from_assets = FromAssets::File(name.to_string());
                Location::Path(dir.join(name))
            }
            None => {
                let why = format!(
                    "the URL {u} names no file that --assets-dir could hold (its last path \
                     segment is empty or percent-encoded); verify without --assets-dir once \
                     the archives are uploaded"
                );
                ctx.error(&index_file, &pointer_push(vp, "url"), "asset-unnamed", why);
                return (checked, FromAssets::Unnamed);
            }
        },
        _ => loc,
    };
    checked.location = loc.to_string();
    let archive_file = PathBuf::from(loc.to_string());
    // The index is the record of what was published, and a published version's bytes never
    // change: an archive that disagrees with it is put right by uploading the one packed.
    let reupload = match (&from_assets, ctx.assets) {
        // Not uploaded yet: pack writes an archive of OUT that differs from the index again.
        (FromAssets::File(_), Some(dir)) => format!(
            "pack into {} again with `hookpack pack`, which writes the archive of {id} {version} again from its sources, before uploading it",
            dir.display()
        ),
        _ => format!("upload again the archive `hookpack pack` wrote for {id} {version}"),
    };
    if let Some(size) = entry["size"].as_u64().filter(|s| *s > MAX_ARCHIVE_BYTES) {
        ctx.error(
            &archive_file,
            &pointer_push(vp, "size"),
            "archive-too-large",
            format!(
                "the index says {size} bytes, more than the {MAX_ARCHIVE_BYTES} bytes ({} MiB) \
                 `hookpack install` downloads (and catalog verify reads), so no install can \
                 take this version; pack the recipe smaller",
                MAX_ARCHIVE_BYTES >> 20
            ),
        );
        return (checked, from_assets);
    }
    let limit = entry["size"].as_u64().unwrap_or(MAX_ARCHIVE_BYTES);
    // The archive is hashed as it arrives and kept to be opened after: in memory when
    // small, else in a temporary file, so a big one never is held in memory whole.
    let read = |limit| {
        let mut spool = Spool(tempfile::SpooledTempFile::new(SPOOL_IN_MEMORY));
        let (digest, len) = ctx.fetcher.copy_to(&loc, limit, &mut spool)?;
        Ok((digest, len, spool.0))
    };
    let got = match read(limit) {
        // Longer than the index says: read it whole (up to the most any archive may be), so
        // its digest tells whether the archive or the index's `size` is wrong.
        Err(FetchError::TooLarge { .. }) if limit < MAX_ARCHIVE_BYTES => read(MAX_ARCHIVE_BYTES),
        other => other,
    };
    let (actual, len, mut spool) = match got {
        Ok(got) => got,
        Err(FetchError::TooLarge { announced, .. }) if entry["size"].is_u64() => {
            let is = match announced {
                Some(n) => format!(
                    "is announced as {n} bytes (its Content-Length, so nothing was read), more"
                ),
                None => "is larger".to_string(),
            };
            ctx.error(
                &archive_file,
                vp,
                "size-mismatch",
                format!("the archive {is} than the index's size of {} bytes, and than the {MAX_ARCHIVE_BYTES} bytes catalog verify reads; {reupload}: a published version's bytes never change", entry["size"]),
            );
            return (checked, from_assets);
        }
        Err(e) => {
            ctx.fetch_failed(&archive_file, vp, &e);
            return (checked, from_assets);
        }
    };
    checked.sha256 = Some(actual);
    let sha_agrees = entry["sha256"].as_str() == Some(actual.to_string().as_str());
    if let Some(size) = entry["size"].as_u64() {
        if size != len {
            let fix = if sha_agrees {
                format!(
                    "the archive is the one the index names (its sha256 agrees), so the index is wrong: set `size` to {len} (`hookpack pack` into the catalog folder holding this archive does so)"
                )
            } else {
                format!("{reupload}: a published version's bytes never change")
            };
            ctx.error(
                &archive_file,
                &pointer_push(vp, "size"),
                "size-mismatch",
                format!("the index says {size} bytes, the archive has {len}; {fix}"),
            );
        }
    }
    match entry["sha256"].as_str() {
        Some(expected) if !sha_agrees => {
            ctx.error(
                &archive_file,
                &pointer_push(vp, "sha256"),
                "sha256-mismatch",
                format!("the index says sha256 {expected}, the archive's is {actual}; {reupload}: a published version's bytes never change"),
            );
        }
        _ => {}
    }
    let top = format!("{id}-{version}");
    let mut back = ReadBack {
        spool: &mut spool,
        failed: None,
    };
    let opened = back
        .spool
        .seek(SeekFrom::Start(0))
        .map_err(ReadBack::failed);
    let opened = match opened {
        Ok(_) => {
            let read = archive::read_manifest(
                io::BufReader::new(&mut back),
                Some(&top),
                &Limits::default(),
            );
            match back.failed.take() {
                Some(e) => Err(ReadBack::failed(e)),
                None => Ok(read),
            }
        }
        Err(e) => Err(e),
    };
    let opened = match opened {
        Ok(read) => read,
        Err(why) => {
            ctx.env_failed = true;
            ctx.error(&archive_file, vp, "archive-unreadable", why);
            return (checked, from_assets);
        }
    };
    match opened.map_err(|e| e.to_string()) {
        Err(e) => ctx.error(&archive_file, vp, "archive-invalid", e),
        Ok((_, None)) => ctx.error(
            &archive_file,
            vp,
            "archive-no-manifest",
            format!("the archive has no {top}/recipe.json"),
        ),
        Ok((_, Some(manifest))) => {
            let file = PathBuf::from(format!("{}!{top}/recipe.json", loc));
            let diags = crate::recipe::validate_manifest_bytes(&file, &manifest, None);
            let errors: Vec<Diagnostic> = diags
                .into_iter()
                .filter(|d| d.severity == Severity::Error)
                .collect();
            // The files beside it only once it validates, as install checks them: in a
            // folder named after its id, as install's.
            let named = serde_json::from_slice::<Value>(&manifest)
                .ok()
                .and_then(|m| Some(crate::id::Id::parse(m["id"].as_str()?).ok()?.to_string()));
            if let Some(named) = named.filter(|_| errors.is_empty()) {
                check_tree(ctx, &mut spool, &loc, &top, &named, &archive_file, vp);
            }
            ctx.diags.extend(errors);
            if let Ok(m) = serde_json::from_slice::<Value>(&manifest) {
                let wanted = [
                    ("id", Some(id.to_string())),
                    ("version", Some(version.to_string())),
                    ("min_cli", entry["min_cli"].as_str().map(String::from)),
                ];
                for (field, want) in wanted {
                    let Some(want) = want else { continue };
                    let got = m[field].as_str();
                    if got != Some(want.as_str()) {
                        ctx.error(
                            &file,
                            &format!("/{field}"),
                            "manifest-mismatch",
                            match got {
                                // The archive opened with the top folder `<id>-<version>/`
                                // the index gives, so the index is not what was edited.
                                Some(got) if field != "min_cli" => format!(
                                    "recipe.json has {field} {got}, but its own top folder `{top}/` and the index say {want}, so the archive is not one `hookpack pack` built; {reupload}"
                                ),
                                Some(got) => format!(
                                    "recipe.json has {field} {got}, the index says {want}; if the index was edited, set its {field} back to {got} (a new {field} needs a new version), else {reupload}"
                                ),
                                None => format!(
                                    "recipe.json has no {field}, the index says {want}; {reupload}"
                                ),
                            },
                        );
                    }
                }
            }
        }
    }
    checked.ok = ctx.unlisted_errors == before.1
        && ctx.diags[before.0..]
            .iter()
            .all(|d| d.severity != Severity::Error);
    (checked, from_assets)
}

/// What install refuses in the files beside `recipe.json` (the script a handler runs
/// missing, a `node_modules` folder, …): the archive kept in `spool`, whose top folder is
/// `top`, is written into a temporary folder named `id`, as install writes it into
/// staging, and checked there the same way.
fn check_tree(
    ctx: &mut Ctx,
    spool: &mut tempfile::SpooledTempFile,
    loc: &Location,
    top: &str,
    id: &str,
    archive_file: &Path,
    vp: &str,
) {
    let machine_failed = |ctx: &mut Ctx, why: String| {
        ctx.env_failed = true;
        ctx.error(archive_file, vp, "archive-unreadable", why);
    };
    let dir = match crate::fs::temp_folder("hookpack-verify-") {
        Ok(dir) => dir,
        Err(e) => return machine_failed(ctx, e.to_string()),
    };
    let tree = dir.path().join(id);
    let mut back = ReadBack {
        spool,
        failed: None,
    };
    if let Err(e) = back.spool.seek(SeekFrom::Start(0)) {
        return machine_failed(ctx, ReadBack::failed(e));
    }
    let written = crate::install::extract(
        io::BufReader::new(&mut back),
        top,
        &Limits::default(),
        &tree,
        false,
    );
    if let Some(e) = back.failed.take() {
        return machine_failed(ctx, ReadBack::failed(e));
    }
    match written {
        Ok(_) => {}
        Err(archive::ArchiveError::Write { path, source }) => {
            let why = format!(
                "cannot write {} to check its files: {source}; set TMPDIR to a folder with \
                 room for them",
                path.display()
            );
            return machine_failed(ctx, why);
        }
        // Read once already with the same checks, which it passed.
        Err(e) => return ctx.error(archive_file, vp, "archive-invalid", e.to_string()),
    }
    if let Err(diags) = crate::install::check_extracted(&tree, &loc.to_string(), top) {
        ctx.diags
            .extend(diags.into_iter().filter(|d| d.severity == Severity::Error));
    }
}

fn is_not_found(e: &FetchError) -> bool {
    match e {
        FetchError::Fs(e) => e.source.kind() == std::io::ErrorKind::NotFound,
        FetchError::HttpStatus { status, .. } => matches!(status, 404 | 410),
        _ => false,
    }
}

fn verify_sums(
    ctx: &mut Ctx,
    index: &Location,
    index_bytes: &[u8],
    expected: &BTreeMap<String, (String, String)>,
    elsewhere: &BTreeSet<String>,
) {
    let sums_loc = match index.join(super::SUMS_FILE) {
        Ok(l) => l,
        Err(_) => return,
    };
    let sums_file = PathBuf::from(sums_loc.to_string());
    let text = match ctx.fetcher.read_to_vec(&sums_loc, 16 * 1024 * 1024) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if is_not_found(&e) => {
            ctx.error(
                &sums_file,
                "",
                "sums-missing",
                "there is no SHA256SUMS beside the index, so nothing vouches for the catalog's files as a set; `hookpack pack` writes it into its --out-dir with the index and archives: publish it beside the index",
            );
            return;
        }
        Err(e) => {
            ctx.fetch_failed(&sums_file, "", &e);
            return;
        }
    };
    // A web server's error page or folder listing where SHA256SUMS should be: one error,
    // not one per line of HTML.
    if text.trim_start().starts_with('<') {
        ctx.error(
            &sums_file,
            "",
            "sums-malformed",
            "this is HTML, not SHA256SUMS (an error page or a folder listing?); publish the SHA256SUMS `hookpack pack` wrote beside the index",
        );
        return;
    }
    // Each name with its digest and the line it came from.
    let mut listed: BTreeMap<String, String> = BTreeMap::new();
    let mut first_line: BTreeMap<String, usize> = BTreeMap::new();
    // Names listed with two digests: reported once, as such, and not compared again.
    let mut conflicting = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        // The line's digest is compared even behind a byte order mark, which makes
        // `sha256sum -c` leave the file it names unchecked.
        let Some((bom, parsed)) = super::sums_line(line) else {
            continue;
        };
        if bom {
            let unchecked = match &parsed {
                Some((_, name)) => format!("leaves {name} unchecked"),
                None => "is not `<sha256>  <file>` behind it either".to_string(),
            };
            ctx.error(
                &sums_file,
                "",
                "sums-malformed",
                format!(
                    "line {} starts with a byte order mark (U+FEFF), so `sha256sum -c` takes it \
                     for no checksum line, and it {unchecked}; save SHA256SUMS without the mark \
                     (`hookpack pack` writes none)",
                    n + 1,
                ),
            );
            if parsed.is_none() {
                continue;
            }
        }
        match parsed {
            Some((sha, name)) => match listed.get(name) {
                // `sha256sum -c` checks every line, so one of two digests fails there
                // whichever of them this check would take.
                Some(before) if *before != sha && conflicting.insert(name.to_string()) => ctx.error(
                    &sums_file,
                    "",
                    "sums-conflict",
                    format!(
                        "SHA256SUMS lists {name} twice, lines {} and {}, with other digests ({before} and {sha}), so `sha256sum -c` fails on one of them; pack into the catalog folder again with `hookpack pack` (it rewrites SHA256SUMS from the index and archives there) and publish it",
                        first_line[name],
                        n + 1
                    ),
                ),
                Some(_) => {}
                None => {
                    listed.insert(name.to_string(), sha);
                    first_line.insert(name.to_string(), n + 1);
                }
            },
            _ => ctx.error(
                &sums_file,
                "",
                "sums-malformed",
                format!("line {} is not `<sha256>  <file>`", n + 1),
            ),
        }
    }
    let index_name = match index {
        Location::Path(p) => p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Location::Http(u) => u.path().rsplit('/').next().unwrap_or_default().to_string(),
        Location::Builtin(n) => n.clone(),
    };
    // SHA256SUMS is written by `pack` from the index and archives beside it; when it
    // disagrees, the two were published from different packs, or one was edited.
    let repack = "pack into the catalog folder again with `hookpack pack` (it rewrites SHA256SUMS from the index and archives there) and publish the index and SHA256SUMS together";
    for name in &conflicting {
        listed.remove(name);
    }
    match listed.get(&index_name) {
        _ if conflicting.contains(&index_name) => {}
        None => ctx.error(
            &sums_file,
            "",
            "sums-incomplete",
            format!("SHA256SUMS does not list {index_name}; {repack}"),
        ),
        Some(sha) if *sha != Sha256::of(index_bytes).to_string() => ctx.error(
            &sums_file,
            "",
            "sums-mismatch",
            format!(
                "SHA256SUMS says {index_name} has sha256 {sha}, it has {}; {repack}",
                Sha256::of(index_bytes)
            ),
        ),
        Some(_) => {}
    }
    for (name, line) in &first_line {
        if *name != index_name
            && !expected.contains_key(name)
            && !elsewhere.contains(name)
            && !conflicting.contains(name)
        {
            ctx.warn(
                &sums_file,
                "sums-unlisted",
                format!(
                    "line {line} lists {name}, which is neither {index_name} nor an archive it lists, so catalog verify does not check it, while `sha256sum -c SHA256SUMS` fails where that file is absent or differs; remove the line, or pack into the catalog folder again with `hookpack pack` (it writes SHA256SUMS from the index and archives there)"
                ),
            );
        }
    }
    for (name, (sha, vp)) in expected {
        match listed.get(name) {
            _ if conflicting.contains(name) => {}
            None => ctx.error(
                &sums_file,
                vp,
                "sums-incomplete",
                format!("SHA256SUMS does not list {name}; {repack}"),
            ),
            Some(s) if s != sha => ctx.error(
                &sums_file,
                vp,
                "sums-mismatch",
                format!("SHA256SUMS says {name} has sha256 {s}, the index says {sha}; {repack}"),
            ),
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_asset_is_named_by_its_urls_last_plain_segment() {
        let name = |u: &str| asset_name(&reqwest::Url::parse(u).unwrap()).map(str::to_string);
        assert_eq!(
            name("https://cdn.test/hooks/hooks-a-1.0.0+b.1.tar.gz?x=1").as_deref(),
            Some("hooks-a-1.0.0+b.1.tar.gz")
        );
        assert_eq!(name("https://cdn.test/hooks/"), None);
        assert_eq!(name("https://cdn.test/hooks/a%2Fb.tar.gz"), None);
        assert_eq!(name("https://cdn.test/hooks/.."), None);
    }
}
