//! `hookpack pack`: reproducible recipe archives, the `hooks.catalog.v1` index and
//! `SHA256SUMS`.
//!
//! The same recipe tree gives the same archive bytes on any machine, in any run, whatever
//! the files' mtimes, owners, umask or the order the filesystem lists them: entries are
//! sorted bytewise, every header carries a fixed mtime (`SOURCE_DATE_EPOCH` when set), uid
//! and gid 0, empty owner names and mode 0644 or 0755, and the gzip header has no time or
//! name. Compression is pure-Rust deflate (zlib-rs, see [`crate::gzip`]) at a pinned level
//! and piece size, whose bytes do not depend on the CPU.
//!
//! It refuses, naming the path and writing nothing: symbolic links, hard links, devices,
//! fifos, sockets, anything under `node_modules`, non-UTF-8 names, recipes that do not
//! validate, and re-publishing an id+version with bytes other than those already indexed.
//! Everything is built in a staging folder first; `OUT` changes only once all of it
//! succeeded, archives before the index, so a reader never sees an index naming an archive
//! that is not there.

use crate::catalog::{self, archive_file, CatalogRecipe, INDEX_FILE};
use crate::diagnostic::{Diagnostic, Severity};
use crate::error::Error;
use crate::id::Id;
use crate::json;
use crate::leftover::Maker;
use crate::recipe::{self, Recipe, TreeEntry};
use crate::sha256::Sha256;
use crate::version::Version;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::Digest as _;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Deflate level of `.tar.gz` archives. Pinned: changing it changes every archive's bytes.
pub const GZIP_LEVEL: u32 = 6;
/// Most threads one `.tar.gz` archive is compressed on (only archives bigger than
/// [`crate::gzip::CHUNK`] use more than one). Each thread holds a few MiB of pieces in
/// flight; 4 keeps one archive under 32 MiB of memory on any machine.
const MAX_DEFLATE_THREADS: usize = 4;
/// zstd level of `.tar.zst` archives. Pinned, like the zstd library version in Cargo.lock.
pub const ZSTD_LEVEL: i32 = 10;
/// Bits of the zstd encoder's hash table for archives over [`ZSTD_SMALL`]. Level 10's own
/// parameters for them take 22: a 20 MiB table, which put a pack of one big recipe over
/// 32 MiB. 20 bits take 5 MiB, for archives up to about 0.5 % bigger.
const ZSTD_HASH_LOG: u32 = 20;
/// Up to this size zstd picks parameters for small inputs, whose tables are smaller still
/// (2^19 entries at most at level 10), and sizes its window to the input; they are kept.
const ZSTD_SMALL: u32 = 256 * 1024;
/// Start of the name of pack's staging folders, followed by the pack that made it (its
/// [`Maker::tag`], so a later pack can tell one whose pack died) and a random part.
const STAGING_PREFIX: &str = ".hookpack-pack-";
/// Start of the name of [`write_atomic`]'s temporary files, followed by the process
/// writing it (its [`Maker::tag`], so a crash's leftover can be told from a write in
/// progress) and a random part.
const TEMP_PREFIX: &str = ".hookpack-tmp-";
pub use crate::catalog::SUMS_FILE;

/// Archive compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// `.tar.gz`, deflate at [`GZIP_LEVEL`].
    #[default]
    Gzip,
    /// `.tar.zst`, zstd at [`ZSTD_LEVEL`], as the reference host reads.
    Zstd,
}

impl Compression {
    /// The archive file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Compression::Gzip => "tar.gz",
            Compression::Zstd => "tar.zst",
        }
    }
}

/// What `pack` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder of recipe folders (assembled, or TypeScript sources that are assembled first).
    pub recipes_dir: PathBuf,
    /// Catalog folder to write.
    pub out_dir: PathBuf,
    /// Prefix for archive URLs; relative URLs when absent.
    pub asset_base_url: Option<String>,
    /// `updated_at` to write when the index changes; derived from `mtime` or the clock when
    /// absent.
    pub updated_at: Option<String>,
    /// Pack only this recipe; other index entries are left as they are.
    pub only: Option<Id>,
    /// Archive compression.
    pub compression: Compression,
    /// An index whose versions stay listed along with those of `OUT/hooks-index.json`.
    pub merge: Option<PathBuf>,
    /// Compare with `OUT` instead of writing.
    pub check: bool,
    /// Archive entry mtime: `SOURCE_DATE_EPOCH`, or 0.
    pub mtime: u64,
    /// Whether `mtime` came from `SOURCE_DATE_EPOCH`.
    pub mtime_from_env: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// One archive in the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Packed {
    /// Recipe id.
    pub id: String,
    /// Recipe version.
    pub version: String,
    /// Archive file name.
    pub file: String,
    /// Archive digest.
    pub sha256: Sha256,
    /// Archive size in bytes.
    pub size: u64,
    /// `new` (added to the index), `unchanged` (already published with these bytes) or
    /// `repaired` (published with these bytes, which OUT had lost or damaged, or which the
    /// index listed with another `size`, now put right). With
    /// `--check`, what `pack` would do: nothing is written.
    pub status: &'static str,
}

/// A file in `OUT` that differs from what the sources produce (`--check`).
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// File name in `OUT`.
    pub file: String,
    /// Digest the sources produce.
    pub expected: Sha256,
    /// Digest found in `OUT`, if the file is there.
    pub actual: Option<Sha256>,
}

/// The outcome of `pack`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Archives built, in id order.
    pub archives: Vec<Packed>,
    /// The index path.
    #[serde(serialize_with = "crate::output::path_text")]
    pub index: PathBuf,
    /// Whether the index content changed.
    pub index_changed: bool,
    /// The lists (`hooks-index.json`, `SHA256SUMS`) written into OUT: those whose bytes
    /// changed, which a hand edit can cause with `index_changed` false. Empty with `--check`.
    pub rewritten: Vec<&'static str>,
    /// With `--check`: what differs (empty when `OUT` is current).
    pub differences: Vec<Difference>,
    /// With `--check`: the warnings, by code, that `catalog verify` fails on though pack
    /// keeps the index as it is (`latest-not-newest`); `--check` fails on them too.
    pub fails_verify: Vec<&'static str>,
    /// Warnings from validating the recipes.
    pub warnings: Vec<Diagnostic>,
}

/// Puts into `buf` the entry's path in the archive, `top/rel`; folders end in `/`, so a
/// folder sorts before its contents. One buffer serves a whole tree.
fn archive_path(buf: &mut String, top: &str, e: &TreeEntry) {
    buf.clear();
    buf.push_str(top);
    buf.push('/');
    buf.push_str(&e.rel);
    if e.size.is_none() {
        buf.push('/');
    }
}

fn refused(path: &Path, reason: &str) -> Error {
    Error::PackRefused {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: sha2::Sha256,
    count: u64,
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            hasher: sha2::Sha256::new(),
            count: 0,
        }
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads exactly `remaining` bytes, failing if the file turns out shorter or longer (it
/// changed since it was listed), so a race can never produce a corrupt or cut archive.
struct Exact<R> {
    inner: R,
    remaining: u64,
    /// The end of the file has been seen.
    at_end: bool,
}

impl<R: Read> Exact<R> {
    fn new(inner: R, size: u64) -> Exact<R> {
        Exact {
            inner,
            remaining: size,
            at_end: false,
        }
    }
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // A Ctrl-C stops a pack within one read, however big the file (see `pack`).
        #[cfg(unix)]
        if crate::run::interrupt::interrupted().is_some() {
            return Err(io::Error::other("interrupted"));
        }
        let changed = |what: &str| io::Error::other(format!("file {what} while being packed"));
        if self.remaining == 0 {
            if !self.at_end && !buf.is_empty() {
                let mut probe = [0u8; 1];
                if self.inner.read(&mut probe)? != 0 {
                    return Err(changed("grew"));
                }
                self.at_end = true;
            }
            return Ok(0);
        }
        // One byte more than is left, when there is room: a short read then shows the end
        // without another call.
        let want = buf
            .len()
            .min(usize::try_from(self.remaining.saturating_add(1)).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file shrank while being packed",
            ));
        }
        if n as u64 > self.remaining {
            return Err(changed("grew"));
        }
        self.remaining -= n as u64;
        if self.remaining == 0 && n < want {
            self.at_end = true;
        }
        Ok(n)
    }
}

/// A recipe folder as it was walked and checked: what goes into its archive.
struct Tree {
    /// Where the archive's files are read: the recipe folder, or its assembled copy.
    root: PathBuf,
    /// The recipe folder the user knows, for messages.
    source: PathBuf,
    /// In archive order (see [`Tree::new`]).
    entries: Vec<TreeEntry>,
}

impl Tree {
    /// The tree of `entries`, put in archive order: bytewise by archive path, whatever
    /// order the folder was listed in. Sorted once here, as both the install check and the
    /// archive walk them in that order.
    fn new(root: PathBuf, source: PathBuf, mut entries: Vec<TreeEntry>) -> Tree {
        // The archive path's bytes, compared without building it (see `archive_path`).
        fn key(e: &TreeEntry) -> impl Iterator<Item = u8> + '_ {
            e.rel.bytes().chain(e.size.is_none().then_some(b'/'))
        }
        entries.sort_by(|a, b| key(a).cmp(key(b)));
        Tree {
            root,
            source,
            entries,
        }
    }

    /// How to name `path` (under `root`) to the user: under the recipe folder, marked as
    /// assembled output when it is not a file of the source tree itself.
    fn shown(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(rel) if self.root != self.source => {
                let mut shown = self.source.join(rel).into_os_string();
                shown.push(" (as assembled)");
                PathBuf::from(shown)
            }
            _ => path.to_path_buf(),
        }
    }

    /// About how long this tree's tar stream is (headers, padded files, the top folder and
    /// the end marker; long names not counted), for zstd to size its tables and window to
    /// the archive. A function of the listing only, so the same tree gets the same bytes.
    fn tar_size_hint(&self) -> u32 {
        let padded = |size: u64| size.div_ceil(512).saturating_mul(512).saturating_add(512);
        let total = (self.entries.iter()).fold(1536, |t: u64, e| {
            t.saturating_add(padded(e.size.unwrap_or(0)))
        });
        // zstd takes hints up to i32::MAX (pack refuses recipes over 256 MiB anyway).
        total.min(i32::MAX as u64) as u32
    }
}

/// Writes the tar stream of `tree` under `top/` to `out`. Files are opened beneath the
/// recipe folder without following any link, and must still have the size they were
/// listed with.
fn write_tar<W: Write>(tree: &Tree, top: &str, mtime: u64, out: W) -> Result<W, Error> {
    let root = crate::fs::Beneath::open(&tree.root)
        .map_err(|err| changed_or_unreadable(&tree.root, err))?;
    let mut builder = tar::Builder::new(out);
    let mut top_header = header(tar::EntryType::Directory, 0o755, 0, mtime);
    builder
        .append_data(&mut top_header, format!("{top}/"), io::empty())
        .map_err(|e| Error::ArchiveWrite {
            path: PathBuf::from(top),
            source: e,
        })?;
    let mut name = String::new();
    for e in &tree.entries {
        archive_path(&mut name, top, e);
        let result = match e.size {
            None => {
                let mut h = header(tar::EntryType::Directory, 0o755, 0, mtime);
                builder.append_data(&mut h, &name, io::empty())
            }
            Some(size) => {
                let mode = if e.exec { 0o755 } else { 0o644 };
                let mut h = header(tar::EntryType::Regular, mode, size, mtime);
                let file = root
                    .open_file(&e.rel)
                    .map_err(|err| changed_or_unreadable(&tree.shown(&e.path), err))?;
                builder.append_data(&mut h, &name, Exact::new(file, size))
            }
        };
        result.map_err(|err| Error::ArchiveWrite {
            path: tree.shown(&e.path),
            source: err,
        })?;
    }
    builder.into_inner().map_err(|e| Error::ArchiveWrite {
        path: PathBuf::from(top),
        source: e,
    })
}

fn header(kind: tar::EntryType, mode: u32, size: u64, mtime: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(mtime);
    h.set_uid(0);
    h.set_gid(0);
    h
}

/// What `install` (and `catalog verify`) would refuse in this recipe's archive: the same
/// checks on the same list of entries, run before anything is written, so a catalog never
/// publishes an archive its users cannot install.
fn check_installable(tree: &Tree, recipe: &Recipe) -> Option<Diagnostic> {
    let top = format!("{}-{}", recipe.id, recipe.version);
    let limits = crate::archive::Limits::default();
    let mut listing = crate::archive::Listing::new(Some(&top), &limits);
    let refused = |path: &Path, e: crate::archive::ArchiveError| {
        Diagnostic::file_level(
            path,
            Severity::Error,
            "archive-uninstallable",
            format!("{e}; `hookpack install` and hosts refuse such an archive, so rename, merge or remove files until it fits"),
        )
    };
    if let Err(e) = listing.add(format!("{top}/").as_bytes(), true, 0) {
        return Some(refused(&tree.source, e));
    }
    if let Some(d) = hidden_script(tree, recipe) {
        return Some(d);
    }
    let mut raw = String::new();
    for e in &tree.entries {
        archive_path(&mut raw, &top, e);
        if let Err(err) = listing.add(raw.as_bytes(), e.size.is_none(), e.size.unwrap_or(0)) {
            return Some(refused(&tree.shown(&e.path), err));
        }
    }
    None
}

/// A handler whose script is hidden, or in a hidden folder: the archive would lack it, since
/// hidden entries are never packed (see [`recipe::walk_tree`]).
fn hidden_script(tree: &Tree, recipe: &Recipe) -> Option<Diagnostic> {
    let handlers = recipe.hooks.iter().flat_map(|(event, groups)| {
        groups
            .iter()
            .flat_map(move |g| g.hooks.iter().map(move |h| (event, h)))
    });
    for (event, h) in handlers {
        let Ok(words) = crate::command::split(&h.command) else {
            continue;
        };
        let crate::command::Target::Script { path, .. } = crate::command::target(&words) else {
            continue;
        };
        if recipe::in_hidden(Path::new(&path)) {
            let which =
                h.id.as_ref()
                    .map(|id| format!("`{id}`, "))
                    .unwrap_or_default();
            return Some(Diagnostic::file_level(
                &tree.source.join("recipe.json"),
                Severity::Error,
                "script-hidden",
                format!(
                    "script `{path}` (handler {which}{event}) is in a hidden file or folder, \
                     which is never packed; rename it"
                ),
            ));
        }
    }
    None
}

/// What `pack` would refuse (`archive-uninstallable`) in the archive of the assembled
/// recipe folder `dir`, for `validate`.
pub(crate) fn check_folder_installable(dir: &Path) -> Option<Diagnostic> {
    let (loaded, entries) = recipe::load_with_tree(dir, false).ok()?;
    let tree = Tree::new(dir.to_path_buf(), dir.to_path_buf(), entries);
    check_installable(&tree, &loaded.recipe)
}

/// The same for a source tree `dir` whose assembled files would be `files` (path under
/// the recipe, size): their folders are implied.
pub(crate) fn check_planned_installable(
    dir: &Path,
    files: &std::collections::BTreeMap<String, u64>,
) -> Option<Diagnostic> {
    let loaded = recipe::load(dir, false).ok()?;
    let mut folders = std::collections::BTreeSet::new();
    for rel in files.keys() {
        let mut at = 0;
        while let Some(i) = rel[at..].find('/') {
            folders.insert(&rel[..at + i]);
            at += i + 1;
        }
    }
    // Entries sit under an empty root, so that messages name them as `DIR/rel (as
    // assembled)`: the files do not exist yet.
    let entry = |rel: &str, size| TreeEntry {
        rel: rel.to_string(),
        path: PathBuf::from(rel),
        size,
        exec: size.is_none(),
    };
    let entries = (folders.into_iter().map(|f| entry(f, None)))
        .chain(files.iter().map(|(rel, size)| entry(rel, Some(*size))))
        .collect();
    let tree = Tree::new(PathBuf::new(), dir.to_path_buf(), entries);
    check_installable(&tree, &loaded.recipe)
}

/// A file that cannot be opened for its archive: refused when a link or another kind of
/// file took its place (or a folder's on its path) after the tree was checked.
pub(crate) fn changed_or_unreadable(path: &Path, err: io::Error) -> Error {
    #[cfg(unix)]
    if matches!(
        err.raw_os_error(),
        Some(libc::ELOOP | libc::EXDEV | libc::ENOTDIR)
    ) {
        return refused(
            path,
            "it was replaced by a symbolic link (or a link was put on its path) while the recipe was being packed; nothing was written, so remove the link and pack again",
        );
    }
    crate::fs::FsError::new("open", path, err).into()
}

/// Builds one archive of `tree` at `dest` (not yet fsynced), returning its digest and size.
fn build_archive(
    tree: &Tree,
    top: &str,
    opts: &Options,
    dest: &Path,
) -> Result<(Sha256, u64), Error> {
    let file = File::create(dest).map_err(|e| crate::fs::FsError::new("create", dest, e))?;
    let sink = Hashing::new(BufWriter::with_capacity(256 * 1024, file));
    let werr = |e: io::Error| Error::ArchiveWrite {
        path: dest.to_path_buf(),
        source: e,
    };
    // A failure while adding a file (a full disk, or the file changed) names the archive,
    // on the file system that failed, and the file as the user knows it.
    let adding = |e: Error| match e {
        Error::ArchiveWrite { path, source } => werr(io::Error::new(
            source.kind(),
            format!("adding {}: {source}", path.display()),
        )),
        other => other,
    };
    let mut sink = match opts.compression {
        Compression::Gzip => {
            let threads = opts.jobs.clamp(1, MAX_DEFLATE_THREADS);
            let enc = crate::gzip::GzipWriter::new(sink, GZIP_LEVEL, threads);
            write_tar(tree, top, opts.mtime, enc)
                .map_err(adding)?
                .finish()
                .map_err(werr)?
        }
        Compression::Zstd => {
            let mut enc = zstd::stream::Encoder::new(sink, ZSTD_LEVEL).map_err(werr)?;
            enc.include_checksum(true).map_err(werr)?;
            let hint = tree.tar_size_hint();
            enc.set_parameter(zstd::zstd_safe::CParameter::SrcSizeHint(hint))
                .map_err(werr)?;
            if hint > ZSTD_SMALL {
                enc.set_parameter(zstd::zstd_safe::CParameter::HashLog(ZSTD_HASH_LOG))
                    .map_err(werr)?;
            }
            write_tar(tree, top, opts.mtime, enc)
                .map_err(adding)?
                .finish()
                .map_err(werr)?
        }
    };
    sink.flush().map_err(werr)?;
    let digest = Sha256::from(<[u8; 32]>::from(sink.hasher.finalize()));
    let file = sink.inner.into_inner().map_err(|e| werr(e.into_error()))?;
    // Catalogs are served to others: readable whatever the umask.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(werr)?;
    }
    drop(file);
    Ok((digest, sink.count))
}

/// `--asset-base-url`: an absolute http(s) URL of a folder, to which archive names are
/// appended; so no query, fragment or credentials.
fn check_asset_base(base: &str) -> Result<(), String> {
    // Installers fetch the archives from it, so a file:// URL (which `catalog::check_url`
    // takes, for an index read where it lies) names a folder on this machine only.
    const TAKES: &str = "--asset-base-url takes the https:// (or http://) URL of the folder \
                         the archives will be served from";
    catalog::check_url_with(base, &["https", "http"], TAKES)?;
    let url = reqwest::Url::parse(base).map_err(|e| {
        format!("is not an absolute URL ({e}); write it like `https://host/catalog`")
    })?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(format!("uses the `{}:` scheme; {TAKES}", url.scheme()));
    }
    // The text goes into the index as given, so it must spell its host the plain way:
    // parsers that forgive `https:///host` or `https:host` are not the only readers.
    let after_scheme = base.split_once("://").map(|(_, rest)| rest);
    if url.host_str().is_none_or(str::is_empty)
        || after_scheme.is_none_or(|rest| rest.starts_with(['/', '\\']))
    {
        return Err("has no host; write it like `https://host/catalog`".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("has a `?query` or `#fragment`; archive names are appended to it, so give the folder's URL alone".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "carries credentials; an index is public, so give the URL without `user:password@`"
                .into(),
        );
    }
    Ok(())
}

/// What a folder of recipes holds: its recipe folders (each with a `recipe.json`), sorted
/// by name, its `lib/` of shared helpers if any, and what is neither (a folder without a
/// `recipe.json`, a link), as errors. Hidden entries, files of any kind (only a folder is a
/// recipe, and nothing of them is packed), `node_modules` (npm's, beside a `package.json`;
/// never a recipe), catalog folders (with a `hooks-index.json`) and `output` (the folder
/// the command writes, which may sit among the recipes) are skipped.
pub fn survey(dir: &Path, output: Option<&Path>) -> Result<Surveyed, crate::fs::FsError> {
    let output = output.and_then(|o| std::fs::canonicalize(o).ok());
    let mut out = Surveyed::default();
    for entry in crate::fs::read_dir_sorted(dir)? {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "node_modules" {
            continue;
        }
        let ft = entry
            .file_type()
            .map_err(|e| crate::fs::FsError::new("inspect", &path, e))?;
        // A catalog folder (this command's OUT, or a pack's) is no recipe; a recipe folder
        // given as OUT stays listed, so the overlap check refuses it, and `lib/` is the
        // helpers folder whatever it holds. Only a folder can be skipped, and only one
        // without a `recipe.json`, so the other checks are made for those alone (a
        // catalog's recipes would otherwise cost a path resolution each).
        let has_manifest = ft.is_dir() && path.join("recipe.json").exists();
        if ft.is_dir() && !has_manifest && name != "lib" {
            let is_output = output.is_some() && std::fs::canonicalize(&path).ok() == output;
            if is_output || path.join(catalog::INDEX_FILE).is_file() {
                continue;
            }
        }
        if ft.is_symlink() {
            out.problems.push(Diagnostic::file_level(
                &path,
                Severity::Error,
                "symlink",
                "symbolic links are not allowed among recipes; replace the link with the \
                 folder itself",
            ));
        } else if !ft.is_dir() {
            continue;
        } else if has_manifest && name == "lib" {
            // Its files are copied into every other recipe as their helpers.
            out.problems.push(Diagnostic::file_level(
                &path,
                Severity::Error,
                "recipe-in-helpers",
                "`lib` is the folder of the shared helpers, so it cannot be a recipe (it \
                 holds a recipe.json); move the recipe to a folder of another name, with that \
                 name as its id",
            ));
        } else if has_manifest {
            out.recipes.push(path);
        } else if name == "lib" {
            out.lib = Some(path);
        } else {
            out.problems.push(Diagnostic::file_level(
                &path,
                Severity::Error,
                "recipe-manifest-missing",
                format!(
                    "folder `{name}` has no recipe.json; add one (see `hookpack new`) or move \
                     the folder out of {}",
                    dir.display()
                ),
            ));
        }
    }
    Ok(out)
}

/// A warning for each hidden folder of `dir` that holds a `recipe.json`: hidden entries
/// are never recipes (an id may not start with `.`, and `.git` is no recipe), so it is left
/// out, as a recipe set aside by such a name should be; but one named so by mistake would
/// be lost without a word.
pub fn hidden_recipes(dir: &Path) -> Vec<Diagnostic> {
    let Ok(entries) = crate::fs::read_dir_sorted(dir) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with('.')
                && e.file_type().is_ok_and(|t| t.is_dir())
                && e.path().join("recipe.json").exists()
        })
        .map(|e| {
            let why = match crate::scaffold::left_by_killed_new(&e.file_name().to_string_lossy()) {
                // Renamed into place, it would publish a recipe `new` never finished.
                Some(id) => format!(
                    "a staging folder of `hookpack new {id}` that was killed before it \
                     finished, so it is left out; delete it, or make the recipe again with \
                     `hookpack new {id} --dir {}`, which removes it",
                    crate::command::shell_quote(&dir.display().to_string())
                ),
                None => "hidden folders are never taken as recipes (an id may not start with \
                         `.`), so this one is left out though it holds a recipe.json; to pack \
                         it, rename it to its id"
                    .to_string(),
            };
            Diagnostic::file_level(&e.path(), Severity::Warning, "hidden-not-packed", why)
        })
        .collect()
}

/// What [`survey`] found in a folder of recipes.
#[derive(Debug, Default)]
pub struct Surveyed {
    /// The recipe folders, sorted by name.
    pub recipes: Vec<PathBuf>,
    /// `lib/`, the shared helpers of this repo's layout.
    pub lib: Option<PathBuf>,
    /// Links and folders that are not recipes.
    pub problems: Vec<Diagnostic>,
}

/// The recipe folders under `dir`, sorted by name; refused when it holds links or folders
/// that are not recipes (as `validate` reports them). `output` is the folder the command
/// writes, if any.
pub fn discover(dir: &Path, output: Option<&Path>) -> Result<Vec<PathBuf>, Error> {
    discover_for(dir, output, None)
}

/// [`discover`] for a command given `--only ID`: only a problem with that folder refuses it,
/// so a recipe beside folders that are not recipes (`--recipes-dir PARENT --only ID`, as
/// the refusal of a recipe folder advises) can be worked on.
pub fn discover_for(
    dir: &Path,
    output: Option<&Path>,
    only: Option<&crate::id::Id>,
) -> Result<Vec<PathBuf>, Error> {
    // One recipe given where a folder of them is expected would otherwise have each of
    // its own folders (`src/`, `scripts/`) reported as a recipe without a recipe.json.
    if dir.join("recipe.json").is_file() {
        let parent = match (dir.file_name(), dir.parent()) {
            (Some(_), Some(p)) if !p.as_os_str().is_empty() => p.display().to_string(),
            (Some(_), _) => ".".to_string(),
            // `.`, `..`, `x/..`: the folder's name comes from where it really is.
            (None, _) => dir.join("..").display().to_string(),
        };
        let name = dir
            .file_name()
            .map(std::ffi::OsStr::to_os_string)
            .or_else(|| std::fs::canonicalize(dir).ok()?.file_name().map(Into::into))
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(Error::ArgInvalid {
            what: "--recipes-dir",
            value: dir.display().to_string(),
            why: format!(
                "{} is a recipe folder (it holds recipe.json), and --recipes-dir takes the folder holding recipe folders: give `--recipes-dir {parent} --only {name}`",
                dir.display()
            ),
        });
    }
    // Listed as a folder, a file was only "Not a directory".
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::RecipesDirNotFolder {
            path: dir.to_path_buf(),
            fix: "give the folder holding the recipe folders",
        });
    }
    // And a path to nothing only "cannot list …: No such file or directory".
    if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Err(Error::FlagPathMissing {
            what: "--recipes-dir",
            path: dir.to_path_buf(),
            fix: "give the folder holding the recipe folders (each with a recipe.json)",
        });
    }
    let found = survey(dir, output)?;
    // A FinClaw hooks folder (`DIR/recipes/<id>/`, as `validate` and `test` take) holds no
    // recipe itself: say which folder does, rather than that `recipes/` lacks a recipe.json.
    let inner = dir.join("recipes");
    if found.recipes.is_empty()
        && !inner.join("recipe.json").exists()
        && survey(&inner, output).is_ok_and(|s| !s.recipes.is_empty())
    {
        return Err(Error::ArgInvalid {
            what: "--recipes-dir",
            value: dir.display().to_string(),
            why: format!(
                "{} is a FinClaw hooks folder (its recipes are in {}): give `--recipes-dir {}`",
                dir.display(),
                inner.display(),
                inner.display()
            ),
        });
    }
    let problems: Vec<Diagnostic> = (found.problems.into_iter())
        .filter(|d| only.is_none_or(|id| d.file.starts_with(dir.join(id.as_str()))))
        .collect();
    if !problems.is_empty() {
        return Err(Error::RecipesInvalid {
            diagnostics: problems,
        });
    }
    Ok(found.recipes)
}

/// The recipe folders `dirs` (found in `recipes_dir`) to work on: the one `--only` names,
/// or all; refused when there are none.
pub fn chosen(
    mut dirs: Vec<PathBuf>,
    only: Option<&crate::id::Id>,
    recipes_dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let name = |d: &PathBuf| d.file_name().map(|n| n.to_string_lossy().into_owned());
    if let Some(only) = only {
        let ids: Vec<String> = dirs.iter().filter_map(name).collect();
        dirs.retain(|d| name(d).as_deref() == Some(only.as_str()));
        if dirs.is_empty() {
            let helpers = only.as_str() == "lib" && recipes_dir.join("lib").is_dir();
            let hint = match crate::event::nearest(only.as_str(), &ids, |id| id.to_string()) {
                // The shared helpers are not a recipe: they ship inside each recipe that
                // imports them.
                _ if helpers => format!(
                    "{} holds the shared helpers, which are copied into each recipe that \
                     imports them, not packed alone; name a recipe: {}",
                    recipes_dir.join("lib").display(),
                    ids.join(", ")
                ),
                Some(near) => format!("did you mean `{near}`?"),
                None if ids.is_empty() => "it holds no recipes".to_string(),
                None => format!("it holds {}", ids.join(", ")),
            };
            return Err(Error::RecipeNotFound {
                id: only.to_string(),
                dir: recipes_dir.to_path_buf(),
                hint,
            });
        }
    }
    if dirs.is_empty() {
        return Err(no_recipes(recipes_dir));
    }
    Ok(dirs)
}

/// The error for a folder of recipes that holds none, naming the hidden folders holding a
/// `recipe.json` it does hold ([`hidden_recipes`]): with no recipe to pack, their warning
/// would never be printed, and the folder would seem empty.
pub fn no_recipes(dir: &Path) -> Error {
    // A killed `new`'s staging folder is no recipe to rename into place.
    let hidden = (hidden_recipes(dir).iter())
        .filter_map(|d| d.file.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| crate::scaffold::left_by_killed_new(n).is_none())
        .collect();
    Error::NoRecipes {
        dir: dir.to_path_buf(),
        hidden,
    }
}

/// `first`, with the recipes refused against what is published before it came (each with
/// its `recipe.json`) as diagnostics of their own kinds: [`Error::RecipesRefused`] when there are
/// any.
fn with_refusals(first: Error, refusals: Vec<(PathBuf, Error)>) -> Error {
    if refusals.is_empty() {
        return first;
    }
    let mut also: Vec<Diagnostic> = (refusals.into_iter())
        .map(|(manifest, e)| Diagnostic {
            pointer: "/version".into(),
            ..Diagnostic::file_level(&manifest, Severity::Error, e.kind(), e.to_string())
        })
        .collect();
    // At the `version`'s line and column, as pack's warnings are.
    crate::diagnostic::place(&mut also, None, |_, _, pointer| Some(pointer.to_string()));
    Error::RecipesRefused {
        first: Box::new(first),
        also,
    }
}

/// An error that stops [`merge_index`] after it refused some recipes already: the error,
/// with those refusals (taken) named too, so that a later failure (an unreadable archive)
/// does not hide them.
fn failed_after(refusals: &mut Vec<(PathBuf, Error)>, e: Error) -> Error {
    with_refusals(e, std::mem::take(refusals))
}

struct Built {
    recipe: Recipe,
    /// The recipe's `recipe.json` in the folder the user packs, for messages.
    manifest: PathBuf,
    file: String,
    sha256: Sha256,
    size: u64,
    /// Position in the list of recipes (and of their trees).
    index: usize,
}

/// Packs the recipes and writes (or, with `check`, compares) the catalog folder.
pub fn pack(opts: &Options) -> Result<Report, Error> {
    // Written in its UTC form: one instant, one index.
    let in_utc;
    let opts = match &opts.updated_at {
        Some(ts) => {
            in_utc = Options {
                updated_at: Some(
                    catalog::utc_form(ts)
                        .ok_or_else(|| Error::TimestampInvalid { value: ts.clone() })?,
                ),
                ..opts.clone()
            };
            &in_utc
        }
        None => opts,
    };
    if let Some(base) = &opts.asset_base_url {
        check_asset_base(base).map_err(|why| Error::UrlInvalid {
            url: base.clone(),
            why,
        })?;
    }
    let dirs = discover_for(&opts.recipes_dir, Some(&opts.out_dir), opts.only.as_ref())?;
    // Archives written into a recipe would be packed into its next version, and into the
    // helpers folder, into every recipe that imports from it; so OUT may overlap none of
    // them, with `--only` too. The recipe folders are folders (never links) right under
    // the recipes folder, so resolving that once gives where each of them really is.
    check_out_dir(&opts.out_dir)?;
    let out_real = crate::fs::real_path(&opts.out_dir)?;
    let recipes_real = crate::fs::real_path(&opts.recipes_dir)?;
    for dir in &dirs {
        let real = match dir.file_name() {
            Some(name) => recipes_real.join(name),
            None => crate::fs::real_path(dir)?,
        };
        if crate::fs::nested(&out_real, &real) {
            return Err(Error::OutOverlaps {
                out: opts.out_dir.clone(),
                sources: dir.clone(),
            });
        }
    }
    // An OUT at `lib/` beside the recipes would become their helpers folder.
    if crate::fs::nested(&out_real, &recipes_real.join("lib")) {
        return Err(Error::OutOverlaps {
            out: opts.out_dir.clone(),
            sources: opts.recipes_dir.join("lib"),
        });
    }
    if let Some(lib) = crate::assemble::Layout::recipes_dir(&opts.recipes_dir).lib_dir {
        if crate::fs::nested(&out_real, &crate::fs::real_path(&lib)?) {
            return Err(Error::OutOverlaps {
                out: opts.out_dir.clone(),
                sources: lib,
            });
        }
    }
    let dirs = chosen(dirs, opts.only.as_ref(), &opts.recipes_dir)?;

    // From here on a Ctrl-C (SIGTERM, SIGHUP) is recorded, and the pack stops at its next
    // check: the temporary and staging folders go as the error returns, OUT is as it was,
    // and `cli::main` ends the process by the signal. One during the commit lets it finish.
    #[cfg(unix)]
    let _deferred = crate::run::interrupt::defer();
    // Validate everything before building anything.
    let assembled = crate::assemble::assemble_to_temp(&opts.recipes_dir, &dirs, false)?;
    crate::run::check_stopped(&opts.out_dir)?;
    let sources = dirs;
    let dirs: Vec<PathBuf> = assembled.dirs.clone();
    let mut recipes = Vec::new();
    let mut problems = Vec::new();
    let mut warnings = assembled.warnings.clone();
    if opts.only.is_none() {
        warnings.splice(0..0, hidden_recipes(&opts.recipes_dir));
    }
    let mut trees = Vec::new();
    // Each recipe is validated, and its listing checked as install would, on all cores.
    let pairs: Vec<(&PathBuf, &PathBuf)> = dirs.iter().zip(&sources).collect();
    let loaded = crate::parallel::map(
        &pairs,
        opts.jobs,
        |&(dir, source)| {
            recipe::load_with_tree(dir, false).map(|(l, entries)| {
                let tree = Tree::new(dir.clone(), source.clone(), entries);
                let refusal = check_installable(&tree, &l.recipe);
                (l, tree, refusal)
            })
        },
        |_| false,
    );
    for (l, &(dir, source)) in loaded.into_iter().zip(&pairs) {
        match l {
            Some(Ok((l, tree, refusal))) => {
                for w in at_source(l.warnings, dir, source) {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                problems.extend(at_source(refusal.into_iter().collect(), dir, source));
                recipes.push(l.recipe);
                trees.push(tree);
            }
            Some(Err(diags)) => problems.extend(
                at_source(diags, dir, source)
                    .into_iter()
                    .filter(|d| d.severity == Severity::Error),
            ),
            None => {
                return Err(Error::Output(io::Error::other(
                    "a validating thread could not start",
                )))
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::RecipesInvalid {
            diagnostics: problems,
        });
    }
    crate::run::check_stopped(&opts.out_dir)?;

    // One pack at a time per OUT, from reading its index to the commit: a second pack
    // waits, then sees what the first published. The lock is on OUT's parent folder, which
    // the staging folder needs anyway, so no lock file is left anywhere.
    let parent = match (opts.out_dir.file_name(), opts.out_dir.parent()) {
        (Some(_), Some(p)) if !p.as_os_str().is_empty() => p.to_path_buf(),
        (Some(_), _) => PathBuf::from("."),
        // `.`, `..`, `x/..`: as the path reads, OUT would be its own parent, and staging in
        // it would change it; its parent is where it really is.
        (None, _) => std::fs::canonicalize(&opts.out_dir)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| opts.out_dir.join("..")),
    };
    // Folders made for the lock are removed again if the pack fails (after the lock is
    // released: locals drop in reverse order).
    let mut _new_folders = crate::fs::NewFolders::default();
    let mut _new_out = None;
    let _locks = if opts.check {
        None
    } else {
        _new_folders = crate::fs::NewFolders::create(&parent)?;
        let wait = crate::profile::lock_wait();
        // A wait for another pack ends at a signal.
        let stopped = |e: Error| crate::run::stopped_or(e, &opts.out_dir);
        let out_lock = || crate::profile::Lock::acquire_dir(&opts.out_dir, wait).map_err(stopped);
        Some(
            match crate::profile::Lock::acquire_dir(&parent, wait).map_err(stopped) {
                // A user who may not open the parent (below) locks OUT alone, so whoever locks
                // the parent locks OUT too, made now if it is not there yet (one that cannot be
                // made is a pack no such user can make either: they need OUT to be there).
                Ok(parent_lock) => {
                    _new_out = crate::fs::NewFolders::create(&opts.out_dir).ok();
                    // (A parent that is OUT itself, through a link, is locked already.)
                    let out = if opts.out_dir.is_dir() && !same_folder(&parent, &opts.out_dir) {
                        Some(out_lock()?)
                    } else {
                        None
                    };
                    (Some(parent_lock), out)
                }
                // A parent this user may enter but not list (mode 711, as many home folders
                // are) cannot be opened to lock: OUT itself is, where it exists (and the
                // staging folder goes inside it, as that parent cannot take one either).
                Err(Error::Fs(e))
                    if e.source.kind() == io::ErrorKind::PermissionDenied
                        && opts.out_dir.is_dir() =>
                {
                    (None, Some(out_lock()?))
                }
                Err(e) => return Err(e),
            },
        )
    };
    let index_path = opts.out_dir.join(INDEX_FILE);
    // OUT has no index before its first pack; an index to merge must be there.
    let own_index = match read_index(&index_path) {
        Err(Error::Fs(e)) if e.source.kind() == io::ErrorKind::NotFound => None,
        other => Some(other?),
    };
    let old_index = match &opts.merge {
        // Every version either index lists stays listed; OUT's own is never dropped.
        Some(other) => {
            combine_indexes((own_index.clone(), &index_path), read_index(other)?, other)?
        }
        None => own_index.clone(),
    };

    // Build every archive into a staging folder beside OUT, so the commit is a rename;
    // inside OUT when OUT is a mount point, since a rename cannot cross file systems, or
    // when this user may write OUT but not its parent.
    let staging_dirs = if opts.check {
        vec![std::env::temp_dir()]
    } else if crate::fs::is_mount_point(&opts.out_dir, &parent) {
        vec![opts.out_dir.clone()]
    } else {
        vec![parent.clone(), opts.out_dir.clone()]
    };
    if !opts.check {
        for dir in [&parent, &opts.out_dir] {
            remove_dead_staging(dir, STAGING_PREFIX);
        }
    }
    crate::fs::create_dir_all(&staging_dirs[0])?;
    let staging_in = |dir: &Path| {
        tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", Maker::tag()))
            .tempdir_in(dir)
            .map_err(|e| {
                crate::fs::FsError::new("create staging folder in", dir, crate::fs::plain(e))
            })
    };
    // A catalog on a read-only file system (or in a folder this user may not write) is
    // still packed into a temporary folder: a pack that finds it current writes nothing, so
    // succeeds; one that has something to write fails with this error before the commit.
    let mut unwritable = None;
    let mut staged = None;
    for dir in &staging_dirs {
        if *dir == opts.out_dir && !dir.is_dir() {
            continue;
        }
        match staging_in(dir) {
            Ok(staging) => {
                staged = Some(staging);
                break;
            }
            Err(e)
                if matches!(
                    e.source.kind(),
                    io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied
                ) =>
            {
                unwritable.get_or_insert(e);
            }
            Err(e) => return Err(e.into()),
        }
    }
    let staging = match staged {
        Some(staging) => {
            unwritable = None;
            staging
        }
        None => {
            unwritable = unwritable.map(|e| {
                let why = format!(
                    "{}; pack writes its files in a staging folder beside {out} or in it, \
                     then moves them in: make {out} a folder this user may write (or the \
                     folder it is in), or give --out-dir one that is",
                    e.source,
                    out = opts.out_dir.display()
                );
                crate::fs::FsError::new(
                    "write in",
                    &opts.out_dir,
                    io::Error::new(e.source.kind(), why),
                )
            });
            staging_in(&std::env::temp_dir())?
        }
    };
    // Held as long as the folder is there: to a pack in another pid namespace (a container)
    // this pid may name no process, and the lock tells it the folder is in use.
    let _in_use = File::open(staging.path())
        .ok()
        .filter(|f| f.try_lock().is_ok());
    let durable = if opts.check || unwritable.is_some() {
        None
    } else {
        Some(crate::fs::Durable::open(staging.path())?)
    };
    let mut built = build_all(&trees, &recipes, opts, staging.path())?;

    // Merge into the index, refusing to change a published version; one whose contents
    // are unchanged but compressed otherwise (by another hookpack) keeps its archive.
    let unchanged = |b: &Built, published: &Path, mtime: u64| {
        same_contents(&trees[b.index], &b.recipe, mtime, published)
    };
    let changes = |b: &Built, published: &Path| {
        what_changed(&trees[b.index], &b.recipe, published).unwrap_or_default()
    };
    let (new_index, mut statuses) = merge_index(
        (old_index.as_ref(), own_index.as_ref()),
        &mut built,
        opts,
        (&unchanged, &changes),
        &mut warnings,
    )
    .map_err(|e| crate::run::stopped_or(e, &opts.out_dir))?;
    // A published archive that OUT lost or holds damaged is written again: the sources
    // still give the bytes the index lists. One that is intact is left as it is, even when
    // its entry's `size` was put right.
    // A new version's archive that OUT already holds byte for byte (its entry was taken out
    // of the index by hand, and put back by this pack) is left as it is too.
    let mut rewrite = Vec::with_capacity(built.len());
    for (b, status) in built.iter().zip(statuses.iter_mut()) {
        let held = digest_of_file(&opts.out_dir.join(&b.file))? == Some(b.sha256);
        let lost = *status != "new" && !held;
        if lost {
            *status = "repaired";
        }
        rewrite.push(!held);
    }
    let index_bytes = {
        let mut s = serde_json::to_string_pretty(&new_index)
            .map_err(|e| Error::Output(io::Error::other(e)))?;
        s.push('\n');
        s.into_bytes()
    };
    // What pack writes must itself pass `validate`.
    catalog::parse_index::<Value>(&index_path, &index_bytes)?;
    // Changed compared with the index in OUT, whatever `--merge` brought in.
    let index_changed = own_index
        .as_ref()
        .is_none_or(|old| old.get("recipes") != new_index.get("recipes"));

    let mut archives = Vec::new();
    for (b, status) in built.iter().zip(&statuses) {
        archives.push(Packed {
            id: b.recipe.id.to_string(),
            version: b.recipe.version.to_string(),
            file: b.file.clone(),
            sha256: b.sha256,
            size: b.size,
            status,
        });
    }
    // Nothing in OUT is written through or over a link, nor vouched for through one.
    refuse_link(&index_path)?;
    refuse_link(&opts.out_dir.join(SUMS_FILE))?;
    let built_names = built.iter().map(|b| b.file.as_str()).collect();
    let mut gone = Vec::new();
    let sums = sums_file(
        &new_index,
        &index_bytes,
        &opts.out_dir,
        &built_names,
        &mut warnings,
        &mut gone,
    )?;
    warnings.extend(unlisted_since(&opts.out_dir, &new_index));
    // Once the command is done, OUT's index holds these bytes, or under --check its own.
    let written = (!opts.check).then_some(index_bytes.as_slice());
    place_warnings(&mut warnings, (&index_path, written), &new_index);
    crate::run::check_stopped(&opts.out_dir)?;

    if opts.check {
        // A published archive gone from OUT is a difference as long as it is gone, though
        // a pack writes SHA256SUMS without it.
        let mut differences = compare(opts, &built, &index_bytes, &sums)?;
        differences.extend(gone);
        let mut fails_verify: Vec<&'static str> = (warnings.iter())
            .map(|w| w.code)
            .filter(|code| *code == catalog::LATEST_NOT_NEWEST)
            .collect();
        fails_verify.dedup();
        return Ok(Report {
            archives,
            index: index_path,
            index_changed,
            rewritten: Vec::new(),
            differences,
            fails_verify,
            warnings,
        });
    }

    // Commit: archives first, then the index, then SHA256SUMS. A folder in the way of any of
    // them is refused before the first file moves, so OUT is all old or all new.
    let dests = built
        .iter()
        .map(|b| opts.out_dir.join(&b.file))
        .chain([index_path.clone(), opts.out_dir.join(SUMS_FILE)]);
    for dest in dests {
        if std::fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir()) {
            return Err(refused(
                &dest,
                "a folder is where this file must go; move the folder away and pack again",
            ));
        }
    }
    let moves: Vec<(PathBuf, PathBuf)> = built
        .iter()
        .zip(&rewrite)
        .filter(|(_, rewrite)| **rewrite)
        .map(|(b, _)| (staging.path().join(&b.file), opts.out_dir.join(&b.file)))
        .collect();
    // The index and SHA256SUMS, where they change (a re-pack of unchanged sources leaves
    // them as they were, inode and modification time included); each keeps the mode of the
    // file it replaces (a new one is 0644).
    let sums_path = opts.out_dir.join(SUMS_FILE);
    let lists: Vec<(&Path, &[u8], &'static str)> = [
        (index_path.as_path(), index_bytes.as_slice(), INDEX_FILE),
        (sums_path.as_path(), sums.as_slice(), SUMS_FILE),
    ]
    .into_iter()
    .filter(|(path, bytes, _)| !holds(path, bytes))
    .collect();
    let rewritten = lists.iter().map(|(_, _, name)| *name).collect();
    if let Some(e) = unwritable {
        if !moves.is_empty() || !lists.is_empty() {
            return Err(e.into());
        }
    }
    if moves.is_empty() && lists.is_empty() {
        return Ok(Report {
            archives,
            index: index_path,
            index_changed,
            rewritten,
            differences: Vec::new(),
            fails_verify: Vec::new(),
            warnings,
        });
    }
    let mut staged_lists = Vec::new();
    for (dest, bytes, _) in lists {
        let staged = staging.path().join(dest.file_name().unwrap_or_default());
        write_new_mode(&staged, bytes, file_mode(dest), dest)?;
        staged_lists.push((staged, dest.to_path_buf()));
    }
    // Everything new is on disk, in the staging folder, before OUT changes at all (a failed
    // sync leaves OUT as it was, even when that is absent): one sync for all of it.
    if let Some(d) = &durable {
        let staged = moves.iter().chain(&staged_lists);
        d.sync(staged.map(|(from, _)| from.as_path()), &opts.out_dir)?;
    }
    // Then the archives move in, and only once their names are on disk too, the index and
    // SHA256SUMS that list them: a crash never leaves an index naming an archive not there.
    // A move that fails puts back every one made before it, so OUT is as it was (the
    // folders made for it are removed as `new_folders` goes).
    let new_folders = crate::fs::NewFolders::create(&opts.out_dir)?;
    let mut moved = Moved::new(staging.path());
    let committed = (|| {
        for (from, dest) in &moves {
            moved.move_in(from, dest)?;
        }
        if !moves.is_empty() && !staged_lists.is_empty() {
            sync_folder(&opts.out_dir);
        }
        for (from, dest) in &staged_lists {
            moved.move_in(from, dest)?;
        }
        Ok(())
    })();
    if let Err(e) = committed {
        return Err(moved.undo(e, &opts.out_dir).into());
    }
    new_folders.keep();
    sync_folder(&opts.out_dir);
    Ok(Report {
        archives,
        index: index_path,
        index_changed,
        rewritten,
        differences: Vec::new(),
        fails_verify: Vec::new(),
        warnings,
    })
}

/// The pointer to `field` of `version` of the recipe `id` among an index's `recipes`;
/// empty (the whole index) when it does not list that version.
fn version_pointer(recipes: &[Value], id: &str, version: &str, field: &str) -> String {
    recipes
        .iter()
        .enumerate()
        .filter(|(_, r)| r["id"] == id)
        .find_map(|(i, r)| {
            let versions = r["versions"].as_array()?;
            let j = versions.iter().position(|v| v["version"] == version)?;
            Some(json::pointer_push(
                &format!("/recipes/{i}/versions/{j}"),
                field,
            ))
        })
        .unwrap_or_default()
}

/// Gives each warning at a spot in a JSON document (a pointer but no line) that spot's
/// line and column, as `validate` places its findings: in the recipe.json as it is, and
/// in OUT's index as it is once pack is done, `index` (the bytes written, or `None` under
/// `--check`: the file as OUT holds it). A pointer into `new_index`, the index pack
/// writes or would write, is moved to the same recipe and version in the index placed in,
/// which may list them elsewhere (under `--check`, before a recipe or version packed now);
/// a spot that index does not have is left as it was, pointer alone.
fn place_warnings(
    warnings: &mut [Diagnostic],
    (index_path, index): (&Path, Option<&[u8]>),
    new_index: &Value,
) {
    crate::diagnostic::place(
        warnings,
        index.map(|bytes| (index_path, bytes)),
        |file, doc, pointer| {
            if file == index_path {
                same_spot(new_index, doc, pointer)
            } else {
                Some(pointer.to_string())
            }
        },
    );
}

/// `pointer` into the index `from`, moved to the same recipe (by id) and version in the
/// index `to`; `None` when `to` does not list them.
fn same_spot(from: &Value, to: &Value, pointer: &str) -> Option<String> {
    let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
    let ["recipes", i, rest @ ..] = tokens.as_slice() else {
        return Some(pointer.to_string());
    };
    let recipe = from["recipes"].get(i.parse::<usize>().ok()?)?;
    let id = recipe["id"].as_str()?;
    let to_recipes = to["recipes"].as_array()?;
    let ti = to_recipes.iter().position(|r| r["id"] == id)?;
    let mut out = format!("/recipes/{ti}");
    let rest = match rest {
        ["versions", j, rest @ ..] => {
            let version = recipe["versions"].get(j.parse::<usize>().ok()?)?["version"].as_str()?;
            let tj = to_recipes[ti]["versions"]
                .as_array()?
                .iter()
                .position(|v| v["version"] == version)?;
            out.push_str(&format!("/versions/{tj}"));
            rest
        }
        rest => rest,
    };
    for token in rest {
        out.push('/');
        out.push_str(token);
    }
    Some(out)
}

/// `diagnostics` of the recipe folder `dir`, with paths in `dir` (a temporary folder a
/// source tree was assembled into, gone when pack exits) moved to the `source` folder.
fn at_source(mut diagnostics: Vec<Diagnostic>, dir: &Path, source: &Path) -> Vec<Diagnostic> {
    if dir != source {
        for d in &mut diagnostics {
            if let Ok(rest) = d.file.strip_prefix(dir) {
                d.file = source.join(rest);
            }
        }
    }
    diagnostics
}

fn build_all(
    trees: &[Tree],
    recipes: &[Recipe],
    opts: &Options,
    staging: &Path,
) -> Result<Vec<Built>, Error> {
    let items: Vec<(&Tree, &Recipe)> = trees.iter().zip(recipes).collect();
    let results = crate::parallel::map(
        &items,
        opts.jobs,
        |(tree, r)| {
            crate::run::check_stopped(&opts.out_dir)?;
            let top = format!("{}-{}", r.id, r.version);
            let file = archive_file_name(&r.id, &r.version, opts.compression);
            build_archive(tree, &top, opts, &staging.join(&file))
        },
        // The whole pack fails anyway: stop handing out work.
        Result::is_err,
    );
    let mut built = Vec::new();
    for ((result, r), tree) in results.into_iter().zip(recipes).zip(trees) {
        match result {
            Some(Ok((sha256, size))) => built.push(Built {
                recipe: r.clone(),
                manifest: tree.source.join("recipe.json"),
                file: archive_file_name(&r.id, &r.version, opts.compression),
                sha256,
                size,
                index: built.len(),
            }),
            // One that a signal stopped failed reading its files.
            Some(Err(e)) => return Err(crate::run::stopped_or(e, &opts.out_dir)),
            // Not built: stopped after another recipe failed (that error is returned
            // above, in order) or no thread could start.
            None => {
                return Err(Error::Output(io::Error::other(format!(
                    "{} {} was not packed: no thread could start",
                    r.id, r.version
                ))))
            }
        }
    }
    Ok(built)
}

/// Refuses an `--out-dir` that exists as something other than a folder (or a link to one),
/// or that is missing under something other than a folder (where none can be made).
pub(crate) fn check_out_dir(out: &Path) -> Result<(), Error> {
    match std::fs::metadata(out) {
        Ok(m) if !m.is_dir() => {
            return Err(Error::OutNotFolder {
                out: out.to_path_buf(),
            })
        }
        Ok(_) => return Ok(()),
        Err(_) => {}
    }
    // Missing: the first of its parents that exists must be a folder to make it in. Through
    // a link to something not made yet, OUT is made where the link points.
    let target = crate::fs::made_at(out)?;
    for parent in target.ancestors().skip(1) {
        if parent.as_os_str().is_empty() {
            break;
        }
        let kind = match std::fs::metadata(parent) {
            Ok(m) if m.is_dir() => break,
            Ok(m) => crate::fs::kind_of(&m.file_type()),
            Err(_) => continue,
        };
        return Err(Error::OutUnderFile {
            out: out.to_path_buf(),
            file: parent.to_path_buf(),
            kind,
        });
    }
    Ok(())
}

/// `hooks-<id>-<version>.tar.gz` (or `.tar.zst`).
pub fn archive_file_name(id: &Id, version: &Version, compression: Compression) -> String {
    format!("hooks-{id}-{version}.{}", compression.extension())
}

/// Sorts an index entry's `versions` newest first, as `latest` and `min_cli` are read from
/// the first.
fn newest_first(versions: &mut [Value]) {
    versions.sort_by_key(|v| {
        std::cmp::Reverse(v["version"].as_str().and_then(|s| Version::parse(s).ok()))
    });
}

/// The index in OUT joined with the `--merge` index `other`: the union of their versions.
/// A version both list must have the same digest; an id's newest version gives its
/// `latest`, `min_cli`, name and summary.
fn combine_indexes(
    (ours, ours_path): (Option<Value>, &Path),
    theirs: Value,
    other: &Path,
) -> Result<Option<Value>, Error> {
    let Some(mut ours) = ours else {
        return Ok(Some(theirs));
    };
    let mut entries: BTreeMap<String, Value> = BTreeMap::new();
    for r in ours["recipes"].as_array().into_iter().flatten() {
        if let Some(id) = r["id"].as_str() {
            entries.insert(id.to_string(), r.clone());
        }
    }
    for (i, r) in theirs["recipes"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(id) = r["id"].as_str() else { continue };
        let Some(mine) = entries.get_mut(id) else {
            entries.insert(id.to_string(), r.clone());
            continue;
        };
        let mut versions = mine["versions"].as_array().cloned().unwrap_or_default();
        for (j, v) in r["versions"].as_array().into_iter().flatten().enumerate() {
            match versions.iter().find(|m| m["version"] == v["version"]) {
                Some(m) if m["sha256"] != v["sha256"] => {
                    let message = format!(
                        "{id} {} has sha256 {} here but {} in {}; published versions are \
                         immutable, so these catalogs cannot be merged until one of them is \
                         corrected",
                        v["version"].as_str().unwrap_or_default(),
                        v["sha256"].as_str().unwrap_or_default(),
                        m["sha256"].as_str().unwrap_or_default(),
                        ours_path.display(),
                    );
                    let pointer = format!("/recipes/{i}/versions/{j}/sha256");
                    return Err(Error::IndexInvalid {
                        diagnostics: vec![at_pointer(other, &pointer, "index-conflict", message)],
                    });
                }
                Some(_) => {}
                None => versions.push(v.clone()),
            }
        }
        newest_first(&mut versions);
        let Some(newest) = versions.first().cloned() else {
            continue;
        };
        if newest["version"] != mine["latest"] {
            for key in ["name", "summary"] {
                if let Some(value) = r.get(key) {
                    mine[key] = value.clone();
                }
            }
        }
        mine["latest"] = newest["version"].clone();
        mine["min_cli"] = newest["min_cli"].clone();
        mine["versions"] = Value::Array(versions);
    }
    ours["recipes"] = Value::Array(entries.into_values().collect());
    Ok(Some(ours))
}

/// An error at `pointer` of the JSON file `path`, placed at its line:column when the file
/// can be read again (it was read a moment ago).
fn at_pointer(path: &Path, pointer: &str, code: &'static str, message: String) -> Diagnostic {
    let place = crate::fs::read_limited(path, crate::validate::MAX_DOCUMENT_BYTES)
        .ok()
        .and_then(|bytes| json::parse(&bytes).ok())
        .filter(|doc| doc.value.pointer(pointer).is_some())
        .map(|doc| doc.locations.locate(pointer));
    let d = match place {
        Some(place) => Diagnostic::at(path, place, Severity::Error, code, message),
        None => Diagnostic::file_level(path, Severity::Error, code, message),
    };
    Diagnostic {
        pointer: pointer.to_string(),
        ..d
    }
}

fn read_index(path: &Path) -> Result<Value, Error> {
    let bytes = crate::fs::read_limited(path, crate::validate::MAX_DOCUMENT_BYTES)?;
    catalog::parse_index(path, &bytes)
}

fn version_entry(b: &Built, opts: &Options) -> Value {
    let url = match &opts.asset_base_url {
        Some(base) => format!("{}/{}", base.trim_end_matches('/'), b.file),
        None => b.file.clone(),
    };
    json!({
        "version": b.recipe.version.to_string(),
        "url": url,
        "sha256": b.sha256.to_string(),
        "size": b.size,
        "min_cli": b.recipe.min_cli.to_string(),
    })
}

/// Whether the published archive at a path holds the tar stream a build gives (with an mtime).
type SameContents<'a> = &'a dyn Fn(&Built, &Path, u64) -> Result<bool, Error>;
/// What differs between a build and the published archive at a path, as a note.
type Changes<'a> = &'a dyn Fn(&Built, &Path) -> String;

fn merge_index(
    (old, own): (Option<&Value>, Option<&Value>),
    built: &mut [Built],
    opts: &Options,
    (same_contents, changes): (SameContents, Changes),
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Value, Vec<&'static str>), Error> {
    let mut entries: BTreeMap<String, Value> = BTreeMap::new();
    let mut top_extra = Map::new();
    let mut old_updated_at = None;
    if let Some(old) = old {
        for r in old["recipes"].as_array().into_iter().flatten() {
            if let Some(id) = r["id"].as_str() {
                entries.insert(id.to_string(), r.clone());
            }
        }
        if let Some(obj) = old.as_object() {
            for (k, v) in obj {
                if !matches!(k.as_str(), "schema" | "updated_at" | "recipes") {
                    top_extra.insert(k.clone(), v.clone());
                }
            }
        }
        old_updated_at = old["updated_at"].as_str().map(String::from);
    }
    let mut statuses = Vec::new();
    let mut sizes: Vec<SizeFix> = Vec::new();
    let mut min_clis: Vec<MinCliFix> = Vec::new();
    // (id, version, url) of each published URL kept though --asset-base-url differs.
    let mut kept_urls: Vec<(String, String, String)> = Vec::new();
    // Each recipe refused against what is published, with its `recipe.json`: every one is
    // named in one run (a shared helper changed under all of them), not one per pack.
    let mut refusals: Vec<(PathBuf, Error)> = Vec::new();
    for b in built.iter_mut() {
        let id = b.recipe.id.to_string();
        let version = b.recipe.version.to_string();
        let mut versions: Vec<Value> = entries
            .get(&id)
            .and_then(|e| e["versions"].as_array().cloned())
            .unwrap_or_default();
        match versions.iter().find(|v| v["version"] == version.as_str()) {
            Some(existing) => {
                let published = existing["sha256"].as_str().unwrap_or_default().to_string();
                if published != b.sha256.to_string() {
                    // OUT lost it or holds it damaged, and these sources do not give it
                    // back: the recipe changed, or the settings did.
                    let found = archive_in_out(existing, opts);
                    let found = found.map_err(|e| failed_after(&mut refusals, e))?;
                    let intact = found
                        .clone()
                        .filter(|(_, sha, _)| sha.to_string() == published);
                    let Some((file, sha256, size)) = intact else {
                        let url = existing["url"].as_str().unwrap_or_default();
                        let path = opts
                            .out_dir
                            .join(archive_name(existing).unwrap_or_else(|| url.to_string()));
                        // What is there instead, if anything: the sources' own bytes point
                        // at an edited index rather than a lost archive.
                        let on_disk = found.map(|(_, sha, _)| sha.to_string());
                        let lost = Error::PublishedArchiveLost {
                            what: format!("{id} {version}"),
                            path,
                            digests: Box::new(crate::error::LostDigests {
                                published,
                                now: b.sha256.to_string(),
                                on_disk,
                            }),
                            manifest: b.manifest.clone(),
                        };
                        refusals.push((b.manifest.clone(), lost));
                        continue;
                    };
                    // The same tar stream compressed otherwise (another hookpack, level or
                    // compression) stays published that way; other contents are refused.
                    let path = opts.out_dir.join(&file);
                    let same = same_contents(b, &path, opts.mtime);
                    if !same.map_err(|e| failed_after(&mut refusals, e))? {
                        let note = same_files_but_mtime(&path, b, opts, same_contents);
                        let mut note = note.map_err(|e| failed_after(&mut refusals, e))?;
                        if note.is_empty() {
                            note = changes(b, &path);
                        }
                        let refused = Error::Republish {
                            what: format!("{id} {version}"),
                            published,
                            now: b.sha256.to_string(),
                            manifest: b.manifest.clone(),
                            note,
                        };
                        refusals.push((b.manifest.clone(), refused));
                        continue;
                    }
                    // Report and commit the published archive, not the new bytes.
                    b.file = file;
                    b.sha256 = sha256;
                    b.size = size;
                }
                if let (Some(base), Some(url)) = (&opts.asset_base_url, existing["url"].as_str()) {
                    if !url.starts_with(&format!("{}/", base.trim_end_matches('/'))) {
                        kept_urls.push((id.clone(), version.clone(), url.to_string()));
                    }
                }
                // The archive is the published one (its sha256 is the index's), so a `size`
                // or `min_cli` that disagrees with it is the index's mistake (an edit by
                // hand): put right, with a word.
                let mut repaired = false;
                if let Some(listed) = existing["size"].as_u64().filter(|&l| l != b.size) {
                    sizes.push(SizeFix {
                        id: id.clone(),
                        version: version.clone(),
                        file: b.file.clone(),
                        listed,
                        actual: b.size,
                    });
                    repaired = true;
                }
                let min_cli = b.recipe.min_cli.to_string();
                if let Some(listed) = existing["min_cli"].as_str().filter(|&l| l != min_cli) {
                    min_clis.push(MinCliFix {
                        id: id.clone(),
                        version: version.clone(),
                        file: b.file.clone(),
                        listed: listed.to_string(),
                        actual: min_cli,
                    });
                    repaired = true;
                }
                statuses.push(if repaired { "repaired" } else { "unchanged" });
                continue;
            }
            None => {
                // A version the index does not list may still have been published (an entry
                // taken out by hand): its archive in OUT, or SHA256SUMS's line for it, says
                // with which bytes, and those never change.
                if let Some((found, unpublished)) =
                    unlisted_archive(&opts.out_dir, b, opts.mtime, same_contents)
                        .map_err(|e| failed_after(&mut refusals, e))?
                {
                    let exists = Error::ArchiveExists {
                        what: format!("{id} {version}"),
                        found,
                        now: b.sha256.to_string(),
                        manifest: b.manifest.clone(),
                        unpublished,
                    };
                    refusals.push((b.manifest.clone(), exists));
                    continue;
                }
                versions.push(version_entry(b, opts));
                statuses.push("new");
            }
        }
        newest_first(&mut versions);
        let old_entry = entries.get(&id).cloned().unwrap_or(Value::Null);
        let latest_entry = versions[0].clone();
        let latest_is_new = latest_entry["version"] == version.as_str();
        if !latest_is_new {
            // Published, as a backport for pins is; but a slip of the bump would leave the
            // sources unreachable by `install ID` and `update`, with nothing said.
            let newest = latest_entry["version"].as_str().unwrap_or_default();
            warnings.push(Diagnostic {
                pointer: "/version".into(),
                ..Diagnostic::file_level(
                    &b.manifest,
                    Severity::Warning,
                    "version-below-latest",
                    format!(
                        "{id} {version} is older than {newest}, the newest version {} lists, \
                         so `install {id}` and `update` still take {newest} ({version} serves \
                         pins such as `{id}@{version}`); to publish these sources as the \
                         newest, bump `version` here above {newest}",
                        opts.out_dir.join(INDEX_FILE).display(),
                    ),
                )
            });
        }
        let (name, summary) = if latest_is_new || old_entry.is_null() {
            (
                b.recipe.name.clone().map(Value::String),
                Value::String(b.recipe.summary.clone()),
            )
        } else {
            (
                old_entry.get("name").cloned(),
                old_entry
                    .get("summary")
                    .cloned()
                    .unwrap_or(Value::String(String::new())),
            )
        };
        let mut m = Map::new();
        m.insert("id".into(), Value::String(id.clone()));
        if let Some(n) = name {
            m.insert("name".into(), n);
        }
        m.insert("summary".into(), summary);
        m.insert("latest".into(), latest_entry["version"].clone());
        m.insert("min_cli".into(), latest_entry["min_cli"].clone());
        m.insert("versions".into(), Value::Array(versions));
        if let Some(obj) = old_entry.as_object() {
            for (k, v) in obj {
                if !m.contains_key(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
        }
        entries.insert(id, Value::Object(m));
    }
    let mut refusals = refusals.into_iter();
    if let Some((_, first)) = refusals.next() {
        return Err(with_refusals(first, refusals.collect()));
    }
    // Every other version the index lists whose archive OUT keeps: the older versions of
    // the recipes packed now, and those of recipes whose sources are not here (retired, or
    // packed from elsewhere), which `catalog verify` sends here to be put right too.
    for (id, entry) in &entries {
        let packed = built
            .iter()
            .find(|b| b.recipe.id.as_str() == id)
            .map(|b| b.recipe.version.to_string());
        for v in entry["versions"].as_array().into_iter().flatten() {
            if packed.as_deref().is_none_or(|p| v["version"] != p) {
                if let Some(fix) = kept_size_fix(id, v, opts)? {
                    sizes.push(fix);
                }
            }
        }
    }
    let mut recipes: Vec<Value> = entries.into_values().collect();
    // `updated_at` moves when the result differs from the index in OUT (`own`), which is not
    // `old` under `--merge`; a size put right is no new entry, so it is not counted.
    let changed = own.is_none_or(|o| o.get("recipes") != Some(&Value::Array(recipes.clone())));
    // `--check` writes nothing: its warnings say what a pack would put right.
    let (was, so_lists) = if opts.check {
        ("is", "`hookpack pack` would list")
    } else {
        ("was", "the index now lists")
    };
    let index_path = opts.out_dir.join(INDEX_FILE);
    for (id, version, url) in kept_urls {
        warnings.push(Diagnostic {
            pointer: version_pointer(&recipes, &id, &version, "url"),
            ..Diagnostic::file_level(
                &index_path,
                Severity::Warning,
                "published-url-kept",
                format!(
                    "{id} {version} keeps its published URL `{url}`: --asset-base-url \
                     applies only to versions packed now, since a published entry never \
                     changes; if that URL never served the archive (a mistyped base URL), \
                     correct it in this index by hand and pack again"
                ),
            )
        });
    }
    for fix in sizes {
        let entry = recipes
            .iter_mut()
            .filter(|r| r["id"] == fix.id.as_str())
            .flat_map(|r| r["versions"].as_array_mut().into_iter().flatten())
            .find(|v| v["version"] == fix.version.as_str());
        if let Some(entry) = entry {
            entry["size"] = Value::from(fix.actual);
        }
        warnings.push(Diagnostic {
            pointer: version_pointer(&recipes, &fix.id, &fix.version, "size"),
            ..Diagnostic::file_level(
                &index_path,
                Severity::Warning,
                "size-repaired",
                format!(
                    "{} {} {was} listed with size {}, but its archive {} has {} bytes; its \
                     sha256 is the index's, so the archive is the published one and \
                     {so_lists} {}",
                    fix.id, fix.version, fix.listed, fix.file, fix.actual, fix.actual
                ),
            )
        });
    }
    // Likewise a `min_cli`, at the recipe's level too when the version is its `latest`.
    for fix in min_clis {
        for r in recipes.iter_mut().filter(|r| r["id"] == fix.id.as_str()) {
            if r["latest"] == fix.version.as_str() {
                r["min_cli"] = Value::String(fix.actual.clone());
            }
            let versions = r["versions"].as_array_mut().into_iter().flatten();
            for v in versions.filter(|v| v["version"] == fix.version.as_str()) {
                v["min_cli"] = Value::String(fix.actual.clone());
            }
        }
        warnings.push(Diagnostic {
            pointer: version_pointer(&recipes, &fix.id, &fix.version, "min_cli"),
            ..Diagnostic::file_level(
                &index_path,
                Severity::Warning,
                "min-cli-repaired",
                format!(
                    "{} {} {was} listed with min_cli {}, but its archive {} (the published \
                     one: its sha256 is the index's) says {}, so {so_lists} {}; a new min_cli \
                     needs a new version",
                    fix.id, fix.version, fix.listed, fix.file, fix.actual, fix.actual
                ),
            )
        });
    }
    // A `latest` below the newest version listed stays (pack keeps a published entry), but
    // `catalog verify` fails on it: said here, where it can be put right before the upload,
    // and `--check` fails on it too.
    for (i, r) in recipes.iter().enumerate() {
        let parse = |v: &Value| v.as_str().and_then(|s| Version::parse(s).ok());
        let newest = r["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| parse(&v["version"]))
            .max();
        if let (Some(latest), Some(newest)) = (parse(&r["latest"]), newest) {
            if newest > latest {
                let id = r["id"].as_str().unwrap_or_default();
                warnings.push(Diagnostic {
                    pointer: format!("/recipes/{i}/latest"),
                    ..Diagnostic::file_level(
                        &index_path,
                        Severity::Warning,
                        crate::catalog::LATEST_NOT_NEWEST,
                        format!(
                            "{id}'s `latest` is {latest} but {newest} is listed too, so \
                             `install {id}` takes {latest}, and `catalog verify` and `pack \
                             --check` fail; pack keeps a published recipe's entry as it is, so \
                             set `latest` to {newest} here"
                        ),
                    )
                });
            }
        }
    }
    // It says when the entries last changed, so it stays while they do not, whatever
    // time `--updated-at` gives.
    let updated_at = match (changed, old_updated_at, &opts.updated_at) {
        (false, Some(old), _) => old,
        (_, _, Some(ts)) => ts.clone(),
        _ => {
            let secs = if opts.mtime_from_env {
                opts.mtime
            } else {
                catalog::now_secs()
            };
            catalog::format_timestamp(secs)
        }
    };
    let mut doc = Map::new();
    doc.insert("schema".into(), Value::String(catalog::SCHEMA.into()));
    doc.insert("updated_at".into(), Value::String(updated_at));
    doc.insert("recipes".into(), Value::Array(recipes));
    doc.extend(top_extra);
    // The result must itself be a valid index.
    let typed: Result<Vec<CatalogRecipe>, _> = serde_json::from_value(doc["recipes"].clone());
    if let Err(e) = typed {
        return Err(Error::IndexInvalid {
            diagnostics: vec![Diagnostic::file_level(
                Path::new(INDEX_FILE),
                Severity::Error,
                "index-invalid",
                e.to_string(),
            )],
        });
    }
    Ok((Value::Object(doc), statuses))
}

/// When the published archive at `path` holds the very files `b` packs, with another
/// mtime (`SOURCE_DATE_EPOCH` set then or now, not both alike), what to do about it, for
/// the end of a re-publish refusal; else nothing.
fn same_files_but_mtime(
    path: &Path,
    b: &Built,
    opts: &Options,
    same_contents: &dyn Fn(&Built, &Path, u64) -> Result<bool, Error>,
) -> Result<String, Error> {
    let then = match published_mtime(path) {
        Some(then) if then != opts.mtime && same_contents(b, path, then)? => then,
        _ => return Ok(String::new()),
    };
    let now = if opts.mtime_from_env {
        format!("SOURCE_DATE_EPOCH={} gives them now", opts.mtime)
    } else {
        "with SOURCE_DATE_EPOCH unset they get 0".to_string()
    };
    let fix = if then == 0 {
        "unset SOURCE_DATE_EPOCH".to_string()
    } else {
        format!("pack with SOURCE_DATE_EPOCH={then}")
    };
    Ok(format!(
        ". But the published archive holds these very files, only with mtime {then} where \
         {now}: if the recipe did not change, {fix} instead"
    ))
}

/// What differs between the files `tree` gives now and those of the published archive at
/// `published`, as the note of a refused re-publish: the files changed, new, gone or whose
/// executable bit changed, by their path in the archive, a few of each. `None` when the
/// archive cannot be read or nothing differs file by file.
fn what_changed(tree: &Tree, recipe: &Recipe, published: &Path) -> Option<String> {
    let top = format!("{}-{}/", recipe.id, recipe.version);
    let mut then: BTreeMap<String, (Sha256, bool)> = BTreeMap::new();
    let mut archive = tar::Archive::new(decompressed(published).ok()??);
    for entry in archive.entries().ok()?.take(100_000) {
        let mut entry = entry.ok()?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry.path().ok()?.to_string_lossy().into_owned();
        let Some(rel) = path.strip_prefix(&top).map(str::to_string) else {
            continue;
        };
        let exec = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
        then.insert(rel, (Sha256::of_reader(&mut entry).ok()?.0, exec));
    }
    let root = crate::fs::Beneath::open(&tree.root).ok()?;
    let mut now: BTreeMap<&str, (Sha256, bool)> = BTreeMap::new();
    for e in tree.entries.iter().filter(|e| e.size.is_some()) {
        let digest = Sha256::of_reader(root.open_file(&e.rel).ok()?).ok()?.0;
        now.insert(&e.rel, (digest, e.exec));
    }
    let (mut changed, mut new, mut mode) = (Vec::new(), Vec::new(), Vec::new());
    for (&rel, (digest, exec)) in &now {
        match then.get(rel) {
            None => new.push(rel),
            Some((d, _)) if d != digest => changed.push(rel),
            Some((_, x)) if x != exec => mode.push(rel),
            Some(_) => {}
        }
    }
    let gone: Vec<&str> = (then.keys())
        .filter(|rel| !now.contains_key(rel.as_str()))
        .map(String::as_str)
        .collect();
    // Found by review: a checkout that marks every file executable (a Windows or SMB file
    // system, git's `core.fileMode=false`) changes only modes, and a new version is not the
    // fix for that.
    let only_modes = changed.is_empty() && new.is_empty() && gone.is_empty() && !mode.is_empty();
    let mode_hint = only_modes.then(|| {
        let (to, flag) = if now.get(mode[0]).is_some_and(|(_, x)| *x) {
            ("are executable now", "-x")
        } else {
            ("are not executable now", "+x")
        };
        format!(
            "; only modes differ, so if these files {to} by accident (a checkout on a file \
             system that marks every file executable, or git's `core.fileMode=false`), \
             `chmod {flag}` them in the sources and pack again instead"
        )
    });
    let groups: Vec<String> = [
        ("changed", changed),
        ("new", new),
        ("gone", gone),
        ("executable bit changed", mode),
    ]
    .into_iter()
    .filter(|(_, files)| !files.is_empty())
    .map(|(what, files)| {
        let shown = files.iter().take(5).copied().collect::<Vec<_>>().join(", ");
        match files.len() {
            n if n > 5 => format!("{what} {shown} and {} more", n - 5),
            _ => format!("{what} {shown}"),
        }
    })
    .collect();
    (!groups.is_empty()).then(|| {
        format!(
            "; against the published archive: {}{}",
            groups.join("; "),
            mode_hint.unwrap_or_default()
        )
    })
}

/// The mtime of the first entry of the archive at `published` (pack gives every entry the
/// same one), when it can be read.
fn published_mtime(published: &Path) -> Option<u64> {
    let mut input = decompressed(published).ok()??;
    let mut block = [0u8; 512];
    input.read_exact(&mut block).ok()?;
    tar::Header::from_byte_slice(&block).mtime().ok()
}

/// The tar stream of the archive at `published`, gzip or zstd; `None` for anything else.
fn decompressed(published: &Path) -> Result<Option<Box<dyn Read>>, Error> {
    let rerr = |e: io::Error| crate::fs::FsError::new("read", published, e);
    let file = File::open(published).map_err(rerr)?;
    let mut input = io::BufReader::new(file);
    let head = io::BufRead::fill_buf(&mut input).map_err(rerr)?.to_vec();
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Some(Box::new(flate2::bufread::GzDecoder::new(input)))
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::stream::read::Decoder::with_buffer(input)
            .ok()
            .map(|d| Box::new(d) as Box<dyn Read>)
    } else {
        None
    })
}

/// An index entry whose `size` is not the size of its archive in OUT, which has the digest
/// the entry lists.
struct SizeFix {
    id: String,
    version: String,
    /// The archive's file name in OUT.
    file: String,
    /// The size the index lists.
    listed: u64,
    /// The archive's size.
    actual: u64,
}

/// An index entry whose `min_cli` is not the one the recipe.json of its archive gives, an
/// archive this pack builds with the digest the entry lists.
struct MinCliFix {
    id: String,
    version: String,
    /// The archive's file name in OUT.
    file: String,
    /// The `min_cli` the index lists.
    listed: String,
    /// The archive's.
    actual: String,
}

/// The [`SizeFix`] of the entry `v` of recipe `id`, a version this pack does not build,
/// when OUT holds its archive intact with another size than the entry lists. The archive is
/// hashed only when the sizes differ; one with another digest is left to the refusal of
/// [`sums_file`].
fn kept_size_fix(id: &str, v: &Value, opts: &Options) -> Result<Option<SizeFix>, Error> {
    let Some(listed) = v["size"].as_u64() else {
        return Ok(None);
    };
    let on_disk = archive_name(v)
        .and_then(|name| std::fs::symlink_metadata(opts.out_dir.join(name)).ok())
        .filter(|m| m.is_file() && m.len() != listed);
    if on_disk.is_none() {
        return Ok(None);
    }
    Ok(intact_archive(v, opts)?.map(|(file, _, actual)| SizeFix {
        id: id.to_string(),
        version: v["version"].as_str().unwrap_or_default().to_string(),
        file,
        listed,
        actual,
    }))
}

/// The name in OUT of the archive an index entry lists: see [`archive_file`].
fn archive_name(existing: &Value) -> Option<String> {
    archive_file(existing["url"].as_str()?)
}

/// The archive of an index entry as it sits in `OUT`, when it is there with the digest the
/// entry lists: its file name, digest and size.
fn intact_archive(
    existing: &Value,
    opts: &Options,
) -> Result<Option<(String, Sha256, u64)>, Error> {
    let Some(sha256) = existing["sha256"]
        .as_str()
        .and_then(|s| Sha256::parse(s).ok())
    else {
        return Ok(None);
    };
    Ok(archive_in_out(existing, opts)?.filter(|(_, found, _)| *found == sha256))
}

/// The archive file OUT holds for the index entry `existing`, whatever its bytes: its name,
/// sha256 and size; `None` when no regular file is there.
fn archive_in_out(
    existing: &Value,
    opts: &Options,
) -> Result<Option<(String, Sha256, u64)>, Error> {
    let Some(name) = archive_name(existing) else {
        return Ok(None);
    };
    let path = opts.out_dir.join(&name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    Ok(digest_of_file(&path)?.map(|sha256| (name, sha256, meta.len())))
}

/// Whether the archive at `published` decompresses to the tar stream `tree` gives now.
fn same_contents(
    tree: &Tree,
    recipe: &Recipe,
    mtime: u64,
    published: &Path,
) -> Result<bool, Error> {
    let top = format!("{}-{}", recipe.id, recipe.version);
    let now = write_tar(tree, &top, mtime, Hashing::new(io::sink()))?;
    // A damaged or foreign archive is simply not the same contents.
    let Some(input) = decompressed(published)? else {
        return Ok(false);
    };
    let mut then = Hashing::new(io::sink());
    // Reading one byte more than expected is enough to tell them apart.
    let copied = io::copy(&mut input.take(now.count + 1), &mut then);
    if copied.is_err() || then.count != now.count {
        return Ok(false);
    }
    Ok(then.hasher.finalize() == now.hasher.finalize())
}

/// `SHA256SUMS`: every archive the index names that lives in the catalog folder (one of
/// `built`, or already in `out_dir`), and the index itself, sorted by name. A relative
/// archive the folder lacks is left out, with a warning in `missing` and its name and
/// digest in `gone`; one kept from an earlier pack whose digest is not the index's is
/// refused.
fn sums_file(
    index: &Value,
    index_bytes: &[u8],
    out_dir: &Path,
    built: &std::collections::HashSet<&str>,
    missing: &mut Vec<Diagnostic>,
    gone: &mut Vec<Difference>,
) -> Result<Vec<u8>, Error> {
    let mut lines: BTreeMap<String, String> = BTreeMap::new();
    for (i, r) in index["recipes"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (j, v) in r["versions"].as_array().into_iter().flatten().enumerate() {
            let (Some(url), Some(sha)) = (v["url"].as_str(), v["sha256"].as_str()) else {
                continue;
            };
            let pointer = format!("/recipes/{i}/versions/{j}/url");
            // Kept from an index on disk or `--merge`d: one that leaves the folder is no
            // file of it, and not summed.
            if let Some(why) = crate::catalog::local_url_outside(url) {
                missing.push(Diagnostic {
                    pointer,
                    ..Diagnostic::file_level(
                        &out_dir.join(INDEX_FILE),
                        Severity::Warning,
                        "url-outside",
                        format!(
                            "url `{url}` {why} (it is left out of SHA256SUMS); {}",
                            crate::catalog::PUBLISH_INSIDE
                        ),
                    )
                });
                continue;
            }
            let name = archive_file(url);
            // (Relative URLs naming these are refused with the index; an absolute one is
            // taken by its last part.) The index and the sums have their own line.
            if name
                .as_deref()
                .is_some_and(|n| n == INDEX_FILE || n == SUMS_FILE)
            {
                continue;
            }
            if let Some(name) = name.as_deref() {
                refuse_links_to(out_dir, name)?;
                // A folder or fifo where a kept archive belongs is no archive gone missing:
                // "copy it back" would put the file inside the folder.
                let there = std::fs::symlink_metadata(out_dir.join(name));
                if let Some(m) = there.ok().filter(|m| !m.is_file() && !built.contains(name)) {
                    return Err(Error::ConfigInvalid {
                        path: out_dir.join(name),
                        why: format!(
                            "it is {}, where the index lists the published archive of {} {}; \
                             move it away and put the archive back from where the catalog is \
                             served",
                            crate::fs::kind_of(&m.file_type()),
                            r["id"].as_str().unwrap_or_default(),
                            v["version"].as_str().unwrap_or_default()
                        ),
                    });
                }
                let kept = (!built.contains(name))
                    .then(|| std::fs::metadata(out_dir.join(name)).ok())
                    .flatten()
                    .filter(|m| m.is_file());
                // A kept archive is not rebuilt, so its bytes are checked here: SHA256SUMS
                // must not list the index's digest for a file that does not have it, nor
                // the folder be uploaded over the published archive.
                if kept.is_some() {
                    let path = out_dir.join(name);
                    if let Some(actual) = digest_of_file(&path)?.filter(|a| a.to_string() != sha) {
                        return Err(Error::KeptArchiveDamaged {
                            what: format!(
                                "{} {}",
                                r["id"].as_str().unwrap_or_default(),
                                v["version"].as_str().unwrap_or_default()
                            ),
                            path,
                            expected: sha.to_string(),
                            actual,
                        });
                    }
                }
                if built.contains(name) || kept.is_some() {
                    lines.insert(name.to_string(), sha.to_string());
                    continue;
                }
            }
            if !url.contains("://") {
                if let Ok(expected) = Sha256::parse(sha) {
                    gone.push(Difference {
                        file: name.unwrap_or_else(|| url.to_string()),
                        expected,
                        actual: None,
                    });
                }
                missing.push(Diagnostic {
                    pointer,
                    ..Diagnostic::file_level(
                        &out_dir.join(INDEX_FILE),
                        Severity::Warning,
                        "archive-missing",
                        format!(
                            "the index lists `{url}` (sha256 {sha}), which is not in {}; copy \
                             it back from where the catalog is served, or `catalog verify` \
                             will fail",
                            out_dir.display()
                        ),
                    )
                });
            }
        }
    }
    lines.insert(INDEX_FILE.to_string(), Sha256::of(index_bytes).to_string());
    let mut out = String::new();
    for (name, sha) in lines {
        out.push_str(&format!("{sha}  {name}\n"));
    }
    Ok(out.into_bytes())
}

/// The `(digest, name)` of each line of the `SHA256SUMS` in OUT (the record of what was
/// published), names without a leading `./`; none when OUT has no readable `SHA256SUMS`.
fn published_sums(out_dir: &Path) -> Vec<(String, String)> {
    let Ok((file, _)) = crate::fs::open_regular(&out_dir.join(SUMS_FILE)) else {
        return Vec::new();
    };
    let mut text = String::new();
    if io::Read::read_to_string(&mut io::Read::take(file, 16 << 20), &mut text).is_err() {
        return Vec::new();
    }
    // Read as `catalog verify` reads it (`sha256sum -c`'s forms; a line behind a byte
    // order mark still records what was published).
    (text.lines())
        .filter_map(|line| crate::catalog::sums_line(line)?.1)
        .map(|(sha, name)| (sha, name.to_string()))
        .collect()
}

/// For the archive `b` a pack would add as a new version, what OUT holds of it with other
/// bytes: the file itself (left by a pack whose index entry was taken out since), or the
/// archive of that version compressed otherwise with other contents (its bytes always
/// differ), or else a `SHA256SUMS` line recording it as published. Said as the error puts
/// it, with what to do if the version was never published.
fn unlisted_archive(
    out_dir: &Path,
    b: &Built,
    mtime: u64,
    same_contents: SameContents,
) -> Result<Option<(String, &'static str)>, Error> {
    let (file, now) = (&b.file, &b.sha256);
    let other = [Compression::Gzip, Compression::Zstd]
        .map(|c| out_dir.join(archive_file_name(&b.recipe.id, &b.recipe.version, c)))
        .into_iter()
        .find(|path| !path.ends_with(file));
    if let Some(path) = other {
        if let Some(there) = digest_of_file(&path)? {
            if !same_contents(b, &path, mtime)? {
                let found = format!(
                    "{} is already in {} with sha256 {there} and other contents",
                    path.display(),
                    out_dir.display()
                );
                return Ok(Some((found, "move that archive out of the catalog folder")));
            }
        }
    }
    let path = out_dir.join(file);
    if let Some(there) = digest_of_file(&path)? {
        return Ok((there != *now).then(|| {
            let found = format!(
                "{} is already in {} with sha256 {there}",
                path.display(),
                out_dir.display()
            );
            (found, "move that archive out of the catalog folder")
        }));
    }
    let recorded = published_sums(out_dir)
        .into_iter()
        .find(|(digest, name)| name == file && *digest != now.to_string());
    Ok(recorded.map(|(digest, _)| {
        let found = format!(
            "{} lists {file} with sha256 {digest}",
            out_dir.join(SUMS_FILE).display()
        );
        (found, "remove that line from SHA256SUMS")
    }))
}

/// A warning for each archive the `SHA256SUMS` in OUT lists (the record of what was
/// published) that `index` no longer lists: a version taken out of the index by hand, which
/// pack keeps as it finds it. Nothing when OUT has no readable `SHA256SUMS`.
fn unlisted_since(out_dir: &Path, index: &Value) -> Vec<Diagnostic> {
    let sums_path = out_dir.join(SUMS_FILE);
    let listed: std::collections::HashSet<String> = index["recipes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["versions"].as_array().into_iter().flatten())
        .filter_map(|v| archive_file(v["url"].as_str()?))
        .collect();
    let mut out = Vec::new();
    for (_, name) in published_sums(out_dir) {
        let name = name.as_str();
        let archive = name.ends_with(".tar.gz") || name.ends_with(".tar.zst");
        if archive && !listed.contains(name) {
            out.push(Diagnostic::file_level(
                &out_dir.join(INDEX_FILE),
                Severity::Warning,
                "version-unlisted",
                format!(
                    "{} lists {name}, a published archive, which the index no longer lists, \
                     so it leaves SHA256SUMS too and nobody can install or pin that version; \
                     every published version stays listed, so put the index back from your \
                     last pack (or the published one, with --merge), unless it is withdrawn \
                     on purpose",
                    sums_path.display()
                ),
            ));
        }
    }
    out
}

/// Refuses a symbolic link at `path` in OUT. Pack would replace the link with a file,
/// leaving what it points to (often another catalog's file) as it was, or vouch in
/// SHA256SUMS for bytes the folder does not hold itself.
fn refuse_link(path: &Path) -> Result<(), Error> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused(
            path,
            "is a symbolic link, and pack writes and vouches only for files OUT holds itself: \
             replace the link with a copy of the file it points to, or remove it, and pack \
             again",
        ));
    }
    Ok(())
}

/// [`refuse_link`] for the file `name` of OUT and each folder on the way to it (`old/` of
/// a merged archive named `old/x.tar.gz`).
fn refuse_links_to(out_dir: &Path, name: &str) -> Result<(), Error> {
    let mut path = out_dir.to_path_buf();
    for part in name.split('/') {
        path.push(part);
        refuse_link(&path)?;
    }
    Ok(())
}

/// The digest of the file at `path`, `None` when there is none. Anything but a regular file
/// there is refused without blocking (opening a fifo would wait for a writer).
fn digest_of_file(path: &Path) -> Result<Option<Sha256>, Error> {
    match crate::fs::open_regular(path) {
        Ok((f, _)) => Ok(Some(
            Sha256::of_reader(f)
                .map_err(|e| crate::fs::FsError::new("read", path, e))?
                .0,
        )),
        Err(e) if e.source.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn compare(
    opts: &Options,
    built: &[Built],
    index_bytes: &[u8],
    sums: &[u8],
) -> Result<Vec<Difference>, Error> {
    let mut diffs = Vec::new();
    let mut expect: Vec<(String, Sha256)> =
        built.iter().map(|b| (b.file.clone(), b.sha256)).collect();
    expect.push((INDEX_FILE.to_string(), Sha256::of(index_bytes)));
    expect.push((SUMS_FILE.to_string(), Sha256::of(sums)));
    for (file, expected) in expect {
        let actual = digest_of_file(&opts.out_dir.join(&file))?;
        if actual != Some(expected) {
            diffs.push(Difference {
                file,
                expected,
                actual,
            });
        }
    }
    Ok(diffs)
}

/// Writes `bytes` to the new file `path` with `mode` (on Unix), not synced; errors name
/// `shown_as`, the file the user knows.
fn write_new_mode(path: &Path, bytes: &[u8], mode: u32, shown_as: &Path) -> Result<(), Error> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| crate::fs::FsError::new("create", shown_as, e))?;
    file.write_all(bytes)
        .map_err(|e| crate::fs::FsError::new("write", shown_as, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| crate::fs::FsError::new("set the mode of", shown_as, e))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(())
}

/// Whether `path` is a regular file holding exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && std::fs::read(path).is_ok_and(|old| old == bytes)
}

/// Replaces `path` with `bytes` by temp file, fsync and rename. The file keeps the mode of the
/// one it replaces (a `hooks.json` or trust file the user keeps private stays so); a new one
/// is 0644.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_mode(path, bytes, file_mode(path))
}

/// The permission bits of the regular file at `path`, or 0644 when there is none (or on
/// systems without them).
pub fn file_mode(path: &Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map_or(0o644, |m| m.permissions().mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0o644
    }
}

/// [`write_atomic`] with the given mode (on Unix).
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", Maker::tag()))
        .tempfile_in(dir)
        .map_err(|e| crate::fs::FsError::new("create a temporary file in", dir, e))?;
    // Errors name `path`, the file the user knows: the temporary copy is an implementation
    // detail, and is gone once the error is reported. (Through the file itself: tempfile's
    // own `Write` adds its path to the message.)
    tmp.as_file_mut()
        .write_all(bytes)
        .map_err(|e| crate::fs::FsError::new("write", path, e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| crate::fs::FsError::new("sync", path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt};
        // The file it replaces keeps its owner, as `sed -i` keeps it: root rewriting a
        // user's hooks.json must not take it from them. Only root (or the owner, for a
        // group it is in) may give a file away; a refusal leaves the file this user's.
        if let Some(old) = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file()) {
            let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(old.uid()), Some(old.gid()));
        }
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.persist(path)
        .map_err(|e| crate::fs::FsError::new("replace", path, e.error))?;
    sync_folder(dir);
    Ok(())
}

/// The temporary files [`write_atomic`] left in `dir` when its process died (a crash,
/// kill -9) before the rename: regular files named so whose maker no longer runs.
/// Call under the lock the writes into `dir` take, so that none is a write in progress.
pub fn dead_temporary_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| {
            let name = e.file_name();
            (name.to_str())
                .and_then(|n| n.strip_prefix(TEMP_PREFIX))
                .and_then(Maker::of)
                .is_some_and(|maker| !maker.alive())
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The files a commit has moved into OUT, each with a link to (or copy of) the file it
/// replaced, kept in the staging folder until the commit is done.
struct Moved<'a> {
    staging: &'a Path,
    done: Vec<(PathBuf, Option<PathBuf>)>,
}

impl<'a> Moved<'a> {
    fn new(staging: &'a Path) -> Self {
        Moved {
            staging,
            done: Vec::new(),
        }
    }

    /// Renames `from` to `dest`, first keeping whatever `dest` was.
    fn move_in(&mut self, from: &Path, dest: &Path) -> Result<(), crate::fs::FsError> {
        let backup = match std::fs::symlink_metadata(dest) {
            Ok(meta) => {
                let kept = self.staging.join(format!(".replaced-{}", self.done.len()));
                // A link costs nothing (of a symbolic link, it is that link); where the file
                // system has none (or the file refuses one), a copy of a file does.
                // Neither: the file (one pack would replace) stays, and so does OUT.
                let unkept = |e: io::Error| {
                    let why = format!(
                        "{e}; pack keeps each file it replaces until its commit is done, to put \
                         it back should the commit fail, and can neither link nor read this \
                         one: make it readable to this user, or move it out of the folder, \
                         and pack again"
                    );
                    crate::fs::FsError::new("keep", dest, io::Error::new(e.kind(), why))
                };
                if let Err(e) = std::fs::hard_link(dest, &kept) {
                    if !meta.is_file() {
                        return Err(unkept(e));
                    }
                    keep_copy(dest, &kept, &meta).map_err(unkept)?;
                }
                Some(kept)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(crate::fs::FsError::new("inspect", dest, e)),
        };
        let op = if backup.is_some() {
            "replace"
        } else {
            "create"
        };
        std::fs::rename(from, dest).map_err(|e| crate::fs::FsError::new(op, dest, e))?;
        self.done.push((dest.to_path_buf(), backup));
        Ok(())
    }

    /// Puts back, newest first, what the files moved in replaced (or removes those that
    /// replaced nothing; OUT, when the commit created it, goes with its `NewFolders`), and returns `failed`
    /// saying so, or naming the files it could not put back. The first file that cannot be
    /// put back stops the undo: those moved in before it stay too, as a crash there would
    /// have left them, since it may name them (an index left new names the new archives).
    fn undo(self, failed: crate::fs::FsError, out_dir: &Path) -> crate::fs::FsError {
        let mut left = Vec::new();
        let mut done = self.done;
        while let Some((dest, backup)) = done.pop() {
            let put_back = match &backup {
                Some(kept) => std::fs::rename(kept, &dest),
                None => std::fs::remove_file(&dest),
            };
            if let Err(e) = put_back {
                left.push(format!("{} ({e})", dest.display()));
                left.extend(done.iter().rev().map(|(d, _)| d.display().to_string()));
                break;
            }
        }
        sync_folder(out_dir);
        let outcome = if left.is_empty() {
            format!("{} is as it was before this pack", out_dir.display())
        } else {
            format!(
                "and files this pack had written could not be taken back: {}; pack again once \
                 the cause is fixed, which writes them all again",
                left.join(", ")
            )
        };
        let source = io::Error::new(
            failed.source.kind(),
            format!("{}; {outcome}", failed.source),
        );
        failed.with_source(source)
    }
}

/// Whether `a` and `b` name one folder (they may be spelt differently, `.` and `/x`).
fn same_folder(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(a)
            .ok()
            .is_some_and(|a| std::fs::canonicalize(b).ok() == Some(a))
    }
}

/// Copies `file` (of metadata `meta`) to `kept`, as the file it is: its times, and its
/// owner where this user may set it, and on disk before the commit that may put it back.
fn keep_copy(file: &Path, kept: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    std::fs::copy(file, kept)?;
    let copy = std::fs::File::options().write(true).open(kept)?;
    let times = std::fs::FileTimes::new().set_modified(meta.modified()?);
    let times = match meta.accessed() {
        Ok(at) => times.set_accessed(at),
        Err(_) => times,
    };
    copy.set_times(times)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Only root may give a file away; for anyone else the copy is theirs, as it must be.
        let _ = std::os::unix::fs::fchown(&copy, Some(meta.uid()), Some(meta.gid()));
    }
    copy.sync_all()
}

/// Removes from `dir` the staging folders (named `prefix`, maker, `-`, a random part) of packs
/// or assembles that died before their commit (a crash, kill -9), which a pack into OUT may
/// find in OUT or beside it; those of running processes, those a pack or assemble holds
/// (one whose pid means nothing here), and any this cannot tell, are left alone.
pub(crate) fn remove_dead_staging(dir: &Path, prefix: &str) {
    remove_dead(dir, prefix, false);
}

/// [`remove_dead_staging`] in a folder other users write too (`$TMPDIR`): only folders of
/// this user's are removed.
pub(crate) fn remove_dead_own(dir: &Path, prefix: &str) {
    remove_dead(dir, prefix, true);
}

fn remove_dead(dir: &Path, prefix: &str, own_only: bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(maker) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(Maker::of)
        else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if own_only && !entry.metadata().is_ok_and(|m| crate::fs::mine(&m)) {
            continue;
        }
        if is_dir && !maker.alive() && !held(&entry.path()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether a running pack holds the lock on its staging folder `dir`. One this cannot
/// lock for another reason (a file system without locks) is not held: its pid decides.
fn held(dir: &Path) -> bool {
    File::open(dir).is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// Makes the names just moved into `dir` durable. Best effort: some file systems cannot
/// sync a folder, and the files themselves already are on disk.
fn sync_folder(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_is_the_file_its_url_resolves_to_in_the_catalog_folder() {
        for (url, file) in [
            ("hooks-a-1.0.0.tar.gz", Some("hooks-a-1.0.0.tar.gz")),
            ("./hooks-a-1.0.0.tar.gz", Some("hooks-a-1.0.0.tar.gz")),
            ("old/hooks-a-1.0.0.tar.gz", Some("old/hooks-a-1.0.0.tar.gz")),
            ("old/../hooks-a-1.0.0.tar.gz", Some("hooks-a-1.0.0.tar.gz")),
            (
                "https://cdn.test/h/hooks-a-1.0.0.tar.gz",
                Some("hooks-a-1.0.0.tar.gz"),
            ),
            ("../hooks-a-1.0.0.tar.gz", None),
            ("/srv/hooks-a-1.0.0.tar.gz", None),
            ("old/", None),
            ("old/..", None),
            // Read beside the index without its query, as a static server serves it.
            ("hooks-a-1.0.0.tar.gz?v=1", Some("hooks-a-1.0.0.tar.gz")),
            ("hooks-a-1.0.0.tar.gz#top", Some("hooks-a-1.0.0.tar.gz")),
            ("https://cdn.test/h/hooks-a-1.0.0.tar.gz?v=1", None),
            ("?v=1", None),
            ("hooks%2Da-1.0.0.tar.gz", None),
            ("https://cdn.test/h/", None),
        ] {
            assert_eq!(archive_file(url).as_deref(), file, "{url}");
        }
    }

    #[test]
    fn sums_never_list_the_index_or_themselves_as_an_archive() {
        let out = tempfile::tempdir().unwrap();
        for name in [SUMS_FILE, INDEX_FILE, "hooks-a-1.0.0.tar.gz"] {
            std::fs::write(out.path().join(name), "x").unwrap();
        }
        let sha = "0".repeat(64);
        let index = serde_json::json!({"recipes": [{"versions": [
            {"url": "SHA256SUMS", "sha256": sha},
            {"url": "https://elsewhere/hooks-index.json", "sha256": sha},
            {"url": "hooks-a-1.0.0.tar.gz", "sha256": Sha256::of(b"x").to_string()},
            {"url": "hooks-b-1.0.0.tar.gz", "sha256": sha},
            {"url": "hooks-c-1.0.0.tar.gz", "sha256": sha},
        ]}]});
        let built = ["hooks-b-1.0.0.tar.gz"].into_iter().collect();
        let mut missing = Vec::new();
        let mut gone = Vec::new();
        let sums = sums_file(&index, b"{}", out.path(), &built, &mut missing, &mut gone).unwrap();
        let sums = String::from_utf8(sums).unwrap();
        let names: Vec<&str> = sums.lines().map(|l| &l[66..]).collect();
        // c is neither built nor in OUT: not listed, and said to be missing.
        assert_eq!(
            names,
            ["hooks-a-1.0.0.tar.gz", "hooks-b-1.0.0.tar.gz", INDEX_FILE],
            "{sums}"
        );
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(
            missing[0].message.contains("`hooks-c-1.0.0.tar.gz`"),
            "{missing:?}"
        );
        assert!(sums.contains(&format!("{}  {INDEX_FILE}", Sha256::of(b"{}"))));
    }

    fn read_all(data: &[u8], size: u64, chunk: usize) -> io::Result<Vec<u8>> {
        let mut r = Exact::new(data, size);
        let mut out = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn trees_are_in_bytewise_order_of_archive_paths() {
        let entry = |rel: &str, is_dir: bool| TreeEntry {
            rel: rel.into(),
            path: PathBuf::new(),
            size: (!is_dir).then_some(1),
            exec: false,
        };
        // As a walk lists them: each folder's names sorted, a folder's contents after it.
        let walked = vec![
            entry("B", false),
            entry("a", true),
            entry("a/x", false),
            entry("a-b", false),
            entry("a.", true),
            entry("a0", false),
            entry("é", false),
        ];
        let tree = Tree::new(PathBuf::new(), PathBuf::new(), walked);
        let mut name = String::new();
        let names: Vec<String> = (tree.entries.iter())
            .map(|e| {
                archive_path(&mut name, "t", e);
                name.clone()
            })
            .collect();
        // `-` and `.` sort before `/`, `0` after it.
        assert_eq!(
            names,
            ["t/B", "t/a-b", "t/a./", "t/a/", "t/a/x", "t/a0", "t/é"]
        );
    }

    #[test]
    fn zstd_takes_the_size_hint_of_any_tree() {
        let tree = |sizes: &[u64]| Tree {
            root: PathBuf::new(),
            source: PathBuf::new(),
            entries: (sizes.iter())
                .map(|&size| TreeEntry {
                    rel: "f".into(),
                    path: PathBuf::new(),
                    size: Some(size),
                    exec: false,
                })
                .collect(),
        };
        assert_eq!(tree(&[]).tar_size_hint(), 1536);
        assert_eq!(tree(&[1, 512]).tar_size_hint(), 1536 + 1024 + 1024);
        for sizes in [&[3 << 30][..], &[u64::MAX, u64::MAX]] {
            let hint = tree(sizes).tar_size_hint();
            assert_eq!(hint, i32::MAX as u32);
            let mut enc = zstd::stream::Encoder::new(Vec::new(), ZSTD_LEVEL).unwrap();
            enc.set_parameter(zstd::zstd_safe::CParameter::SrcSizeHint(hint))
                .unwrap();
        }
    }

    #[test]
    fn exact_refuses_files_that_changed_size() {
        for chunk in [1, 3, 4, 5, 8192] {
            assert_eq!(read_all(b"abcd", 4, chunk).unwrap(), b"abcd");
            assert!(read_all(b"abc", 4, chunk).is_err(), "shrank, chunk {chunk}");
            assert!(read_all(b"abcde", 4, chunk).is_err(), "grew, chunk {chunk}");
        }
        assert_eq!(read_all(b"", 0, 8).unwrap(), b"");
        assert!(read_all(b"x", 0, 8).is_err());
    }
}
