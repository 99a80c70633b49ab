//! Filesystem calls that put the path into every error.
//!
//! A bare `std::io::Error` says "No such file or directory" and nothing else; a user cannot
//! act on that. Every call here returns [`FsError`], which names the operation and the path.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An I/O failure with the operation and the path it concerned.
#[derive(Debug)]
pub struct FsError {
    /// What was being done, e.g. "read", "create folder".
    pub op: &'static str,
    /// The path the operation was applied to.
    pub path: PathBuf,
    /// Where `path` was being moved to, for a rename: "cannot rename A to B: …".
    pub to: Option<PathBuf>,
    /// The underlying error.
    pub source: io::Error,
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot {} {}", self.op, self.path.display())?;
        if let Some(to) = &self.to {
            write!(f, " to {}", to.display())?;
        }
        write!(f, ": {}", self.source)
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl FsError {
    /// Wraps `source` with the operation and path.
    pub fn new(op: &'static str, path: &Path, source: io::Error) -> Self {
        FsError {
            op,
            path: path.to_path_buf(),
            to: None,
            source,
        }
    }

    /// The same failure with `source` as its cause (the op and paths kept), for a caller
    /// that adds the fix or what was undone to the cause.
    pub fn with_source(self, source: io::Error) -> Self {
        FsError { source, ..self }
    }

    /// True when the failure says something about the input the user named (it does not
    /// exist, is the wrong kind of file, is a link loop) rather than about the machine.
    pub fn is_input_problem(&self) -> bool {
        use io::ErrorKind::*;
        matches!(
            self.source.kind(),
            NotFound | IsADirectory | NotADirectory | InvalidData | InvalidInput
        ) || self.source.raw_os_error() == Some(40) // ELOOP on Linux: a symlink loop
    }
}

/// `e` from `tempfile` without the ` at path "…"` it appends (the caller names the folder).
pub(crate) fn plain(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path \"") {
        Some((said, _)) => io::Error::new(e.kind(), said.to_string()),
        None => e,
    }
}

/// A new folder named `prefix<maker>-…` ([`crate::leftover::Maker::tag`]) in the temporary
/// folder (`$TMPDIR`, else `/tmp`), removed when dropped; the user's folders of that prefix
/// whose makers died are removed first. One that cannot be made is the machine's failure (exit 3, even when
/// `$TMPDIR` names no folder), named with the fix.
pub fn temp_folder(prefix: &str) -> Result<TempFolder, FsError> {
    let dir = std::env::temp_dir();
    // One a killed process left (Ctrl-C, kill -9: no destructor ran) would stay for good.
    crate::pack::remove_dead_own(&dir, prefix);
    let made = tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", crate::leftover::Maker::tag()))
        .tempdir_in(&dir)
        .map_err(|e| {
            let why = format!("{}; set TMPDIR to a folder this user may write", plain(e));
            FsError::new("create a temporary folder in", &dir, io::Error::other(why))
        })?;
    // Held while it lives: to a process in another pid namespace this pid may name none.
    let held = fs::File::open(made.path())
        .ok()
        .filter(|f| f.try_lock().is_ok());
    Ok(TempFolder {
        dir: made,
        _held: held,
    })
}

/// A folder of [`temp_folder`]'s, removed when dropped.
#[derive(Debug)]
pub struct TempFolder {
    dir: tempfile::TempDir,
    _held: Option<fs::File>,
}

impl TempFolder {
    /// Where it is.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn wrap<T>(op: &'static str, path: &Path, r: io::Result<T>) -> Result<T, FsError> {
    r.map_err(|e| FsError::new(op, path, e))
}

/// Opens a regular file for reading. A folder, fifo, socket or device is refused without
/// blocking: opening a fifo would wait for a writer, reading a device might never end.
pub fn open_regular(path: &Path) -> Result<(fs::File, fs::Metadata), FsError> {
    // Not even opened: opening a device has effects of its own (a tty's DTR line, a
    // watchdog armed, a pty allocated). The check after opening closes the race.
    if fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(refused_read(
            path,
            io::ErrorKind::InvalidInput,
            "is a fifo, socket or device, expected a regular file",
        ));
    }
    let mut o = fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Only the open of a fifo would block; reads of a regular file ignore the flag.
        o.custom_flags(libc::O_NONBLOCK);
    }
    let file = wrap("open", path, o.open(path))?;
    let meta = wrap("inspect", path, file.metadata())?;
    if meta.is_dir() {
        return Err(refused_read(
            path,
            io::ErrorKind::IsADirectory,
            "is a folder, expected a file",
        ));
    }
    if !meta.is_file() {
        return Err(refused_read(
            path,
            io::ErrorKind::InvalidInput,
            "is a fifo, socket or device, expected a regular file",
        ));
    }
    Ok((file, meta))
}

/// Reads a whole file, refusing one larger than `limit` bytes before reading it.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    let (file, meta) = open_regular(path)?;
    read_opened(path, file, &meta, limit)
}

/// [`read_limited`] of a file opened without following a symbolic link in its place, with
/// the metadata of the file read (fstat of the descriptor): checks made on it hold for the
/// bytes returned, whatever is renamed into the path meanwhile. A link there fails to
/// open (ELOOP on Linux).
pub fn read_limited_no_follow(path: &Path, limit: u64) -> Result<(Vec<u8>, fs::Metadata), FsError> {
    let mut o = fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = wrap("open", path, o.open(path))?;
    let meta = wrap("inspect", path, file.metadata())?;
    if !meta.is_file() {
        return Err(refused_read(
            path,
            io::ErrorKind::InvalidInput,
            "is not a regular file",
        ));
    }
    Ok((read_opened(path, file, &meta, limit)?, meta))
}

/// Reads the opened `file` (of `path`, with metadata `meta`), at most `limit` bytes.
fn read_opened(
    path: &Path,
    file: fs::File,
    meta: &fs::Metadata,
    limit: u64,
) -> Result<Vec<u8>, FsError> {
    use std::io::Read;
    if meta.len() > limit {
        return Err(refused_read(
            path,
            io::ErrorKind::InvalidData,
            format!(
                "file is {} bytes, larger than the {limit}-byte limit",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // `take` guards against a file that grows while being read.
    wrap("read", path, file.take(limit + 1).read_to_end(&mut bytes))?;
    if bytes.len() as u64 > limit {
        return Err(refused_read(
            path,
            io::ErrorKind::InvalidData,
            "file grew past the size limit while being read",
        ));
    }
    Ok(bytes)
}

/// A read refused for what the file is, not for an I/O failure.
fn refused_read(path: &Path, kind: io::ErrorKind, why: impl Into<String>) -> FsError {
    FsError::new("read", path, io::Error::new(kind, why.into()))
}

/// How many names (hard links) the file `meta` describes has; 1 where that cannot be told.
/// A file with more is split by a write that renames a new file into place: the other
/// names keep the old contents.
pub fn link_count(meta: &fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        std::os::unix::fs::MetadataExt::nlink(meta)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        1
    }
}

/// Whether this user owns what `meta` describes (anywhere but on Unix, taken to be).
pub fn mine(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Whether the file `meta` describes is write-protected: it has no write bit at all, or
/// it is this user's without the owner's write bit (`0464`). Root may write anything, but
/// such a file was protected on purpose all the same. (A file of another user's that this
/// user may not write is left to the profile's own checks: it is no file this user
/// protected.)
pub fn write_protected(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().readonly() || (mine(meta) && meta.permissions().mode() & 0o200 == 0)
    }
    #[cfg(not(unix))]
    {
        meta.permissions().readonly()
    }
}

/// What a file system entry of type `t` is, for messages: "a folder", "a fifo (named
/// pipe)", "a socket", "a device", "a symbolic link" or "a file".
pub fn kind_of(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a fifo (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "a file"
    }
}

/// `std::fs::symlink_metadata` with the path in the error.
pub fn symlink_metadata(path: &Path) -> Result<fs::Metadata, FsError> {
    wrap("inspect", path, fs::symlink_metadata(path))
}

/// When `path` is a symbolic link, how to name it in a message: ` (to TARGET)`, or nothing
/// when its target cannot be read. `None` when it is no link (or nothing is there).
pub fn link_shown(path: &Path) -> Option<String> {
    if !fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return None;
    }
    Some(
        fs::read_link(path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default(),
    )
}

/// `std::fs::metadata` (follows links) with the path in the error.
pub fn metadata(path: &Path) -> Result<fs::Metadata, FsError> {
    wrap("inspect", path, fs::metadata(path))
}

/// `std::fs::read_dir`, collected and sorted by file name so output never depends on the
/// order the filesystem happens to return.
pub fn read_dir_sorted(path: &Path) -> Result<Vec<fs::DirEntry>, FsError> {
    let mut entries = Vec::new();
    for entry in wrap("list", path, fs::read_dir(path))? {
        entries.push(wrap("list", path, entry)?);
    }
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

/// Folders created on the way to a path, removed again when dropped if they are empty then,
/// so a command that fails leaves no trace of them.
#[derive(Debug, Default)]
pub struct NewFolders {
    /// Outermost first.
    created: Vec<PathBuf>,
}

impl NewFolders {
    /// Creates `path` and its missing parents, remembering which were missing. A link on
    /// the way to a folder that does not exist yet is followed, and the folders are made
    /// where it points, as [`real_path`] tells (std's `create_dir_all` stops at such a link
    /// with "File exists").
    pub fn create(path: &Path) -> Result<NewFolders, FsError> {
        let path = &*made_at(path)?;
        let mut created: Vec<PathBuf> = path
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && fs::symlink_metadata(p).is_err())
            .map(Path::to_path_buf)
            .collect();
        created.reverse();
        create_dir_all(path)?;
        Ok(NewFolders { created })
    }

    /// Keeps the folders: the command they were created for succeeded.
    pub fn keep(mut self) {
        self.created.clear();
    }
}

impl Drop for NewFolders {
    fn drop(&mut self) {
        for d in self.created.iter().rev() {
            // One already gone (another command removed it, empty) is no reason to stop.
            match fs::remove_dir(d) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => break,
                _ => {}
            }
        }
    }
}

/// Files written into one folder, made durable together before they are published.
///
/// On Linux 5.8 and later that is one `syncfs` of the folder's file system: one device
/// flush, where an `fsync` per file costs one each (500 for a 500-recipe catalog; about
/// 10 % of a pack's time on a virtual disk, far more on a disk that seeks). The folder is
/// opened before the files are written, because `syncfs` reports the write-back errors of
/// that file system since its descriptor was opened. Older kernels' `syncfs` reports no
/// write-back error at all, so there, as on other systems, each file gets an `fsync`.
pub struct Durable {
    #[cfg(target_os = "linux")]
    dir: Option<fs::File>,
}

impl Durable {
    /// Starts watching `folder`, before anything is written into it.
    pub fn open(folder: &Path) -> Result<Durable, FsError> {
        #[cfg(target_os = "linux")]
        {
            let dir = if syncfs_reports_errors() {
                Some(fs::File::open(folder).map_err(|e| FsError::new("open", folder, e))?)
            } else {
                None
            };
            Ok(Durable { dir })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = folder;
            Ok(Durable {})
        }
    }

    /// Makes `files` (all in the folder) durable; a failure names `shown_as`, the place the
    /// files are being published to.
    pub fn sync<'p>(
        &self,
        files: impl IntoIterator<Item = &'p Path>,
        shown_as: &Path,
    ) -> Result<(), FsError> {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.dir {
            use std::os::fd::AsRawFd;
            // SAFETY: syncfs(2) only reads the descriptor, which `dir` keeps open.
            if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
                return Err(FsError::new(
                    "write to disk (syncfs) the file system holding",
                    shown_as,
                    io::Error::last_os_error(),
                ));
            }
            return Ok(());
        }
        let _ = shown_as;
        for path in files {
            fs::File::open(path)
                .and_then(|f| f.sync_all())
                .map_err(|e| FsError::new("sync", path, e))?;
        }
        Ok(())
    }
}

/// Whether this kernel's `syncfs` reports write-back errors (Linux 5.8 and later).
#[cfg(target_os = "linux")]
fn syncfs_reports_errors() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        // SAFETY: utsname is plain bytes; uname(2) fills it and returns 0 on success.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        if unsafe { libc::uname(&mut u) } != 0 {
            return false;
        }
        // SAFETY: uname wrote a NUL-terminated string into `release`.
        let release = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
        kernel_at_least(&release.to_string_lossy(), (5, 8))
    })
}

/// Whether a kernel release such as `6.18.44-fc` is at least `major.minor`.
#[cfg(target_os = "linux")]
fn kernel_at_least(release: &str, (major, minor): (u32, u32)) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let number = |p: Option<&str>| p.and_then(|s| s.parse::<u32>().ok());
    match (number(parts.next()), number(parts.next())) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

/// `std::fs::create_dir_all` with the path in the error. A link on the way to a folder that
/// does not exist yet is followed, and the folders are made where it points, as
/// [`real_path`] tells (std stops at such a link with "File exists").
pub fn create_dir_all(path: &Path) -> Result<(), FsError> {
    wrap("create folder", path, fs::create_dir_all(made_at(path)?))
}

/// [`create_dir_all`], but the folders it makes get 0755 at most, whatever the umask
/// allows: no one else may put a file in them. For `$FINCLAW_HOME`, whose trust file is
/// refused in a folder others can write to.
pub fn create_dir_all_unshared(path: &Path) -> Result<(), FsError> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o755);
    wrap("create folder", path, b.create(made_at(path)?))
}

/// Where making the folders of `path` makes them: `path` itself, or, with a link on the
/// way to a folder that does not exist yet, where that link points, as [`real_path`] tells.
pub fn made_at(path: &Path) -> Result<std::borrow::Cow<'_, Path>, FsError> {
    Ok(match path.ancestors().any(dangling_link) {
        true => std::borrow::Cow::Owned(real_path(path)?),
        false => std::borrow::Cow::Borrowed(path),
    })
}

/// Whether `file` has an execute bit for anyone (elsewhere than on Unix, taken as so); a
/// file that cannot be looked at has none.
pub fn executable(file: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        true
    }
}

/// `std::fs::create_dir` with the path in the error.
pub fn create_dir(path: &Path) -> Result<(), FsError> {
    wrap("create folder", path, fs::create_dir(path))
}

/// Creates a new file and writes `bytes`; fails if the file exists.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let mut file = wrap(
        "create",
        path,
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path),
    )?;
    wrap("write", path, file.write_all(bytes))
}

/// `std::fs::rename` with both paths in the error, and the fix where the machine refused
/// it: permissions, a read-only file system, or two file systems.
pub fn rename(from: &Path, to: &Path) -> Result<(), FsError> {
    fs::rename(from, to).map_err(|e| FsError {
        to: Some(to.to_path_buf()),
        ..FsError::new("rename", from, rename_fix(e, from, to))
    })
}

/// `e`, a failed rename of `from` to `to`, with what to do when the cause is the machine's.
fn rename_fix(e: io::Error, from: &Path, to: &Path) -> io::Error {
    let parent = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .display()
            .to_string()
    };
    let (out_of, into) = (parent(from), parent(to));
    let folders = match out_of == into {
        true => out_of.clone(),
        false => format!("{out_of} and {into}"),
    };
    let fix = match e.kind() {
        // EPERM, where EACCES is a missing write permission.
        io::ErrorKind::PermissionDenied if e.raw_os_error() == Some(libc::EPERM) => format!(
            "the system does not let this user move it: in a folder with the sticky bit (as \
             /tmp), only an entry's owner may, and an immutable file (`chattr +i`) no one may; \
             run the command as the owner of {}, or give a folder of this user's",
            from.display()
        ),
        io::ErrorKind::PermissionDenied => format!(
            "this user may not change {folders}: run the command as the owner, or give this \
             user write permission there"
        ),
        io::ErrorKind::ReadOnlyFilesystem => {
            format!("{folders} is on a file system mounted read-only, where nothing can change")
        }
        io::ErrorKind::CrossesDevices => format!(
            "{out_of} and {into} are on two file systems (one is a mount point), and a rename \
             cannot cross from one to the other: keep them on one file system"
        ),
        _ => return e,
    };
    io::Error::new(e.kind(), format!("{e}; {fix}"))
}

/// `path` made absolute, with each `name/..` folded where `name` is not a link (so it
/// names the same folder): `--profile ../p` gives one path from any folder, which trust
/// keys and messages rely on. Links are kept as written, and so is a `..` after one.
pub fn absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let Ok(abs) = std::path::absolute(path) else {
        return path.to_path_buf();
    };
    let mut out = PathBuf::new();
    for part in abs.components() {
        match part {
            Component::ParentDir => {
                let folds = matches!(out.components().next_back(), Some(Component::Normal(_)))
                    && !out
                        .symlink_metadata()
                        .is_ok_and(|m| m.file_type().is_symlink());
                if folds {
                    out.pop();
                } else {
                    out.push(part);
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where `path` really is: every link on it resolved, as the kernel would walk it, with
/// the parts that do not exist yet kept as written. Two names for one folder (a link, `..`)
/// give the same answer. A link whose target does not exist yet resolves to that target
/// (creating the folder would create it there). A `..` after a folder that does not exist
/// is refused: creating the path would create that folder wherever it sits, so no answer
/// here could say where the files would land.
pub fn real_path(path: &Path) -> Result<PathBuf, FsError> {
    let abs = wrap("resolve", path, std::path::absolute(path))?;
    resolve(path, &abs, 0)
}

fn resolve(given: &Path, abs: &Path, links: u32) -> Result<PathBuf, FsError> {
    use std::path::Component;
    let refuse = |why: &str| {
        Err(FsError::new(
            "resolve",
            given,
            io::Error::new(io::ErrorKind::InvalidInput, why.to_string()),
        ))
    };
    let mut out = PathBuf::new();
    // Set once a component does not exist: nothing below it exists either.
    let mut missing = false;
    for part in abs.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => out.push(part),
            Component::CurDir => {}
            Component::ParentDir if missing => {
                return refuse(
                    "`..` follows a folder that does not exist yet; write the path without it",
                )
            }
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if missing {
                    continue;
                }
                match fs::symlink_metadata(&out) {
                    Err(_) => missing = true,
                    // `out` had no link in it before this name, so only a link here can
                    // make it other than where it is.
                    Ok(m) if m.file_type().is_symlink() => match fs::canonicalize(&out) {
                        Ok(real) => out = real,
                        // A link to something that does not exist yet: where it points.
                        Err(_) if links < 40 => {
                            let target = wrap("read link", &out, fs::read_link(&out))?;
                            out.pop();
                            out = resolve(given, &out.join(target), links + 1)?;
                            missing = !out.exists();
                        }
                        Err(e) => return Err(FsError::new("resolve", given, e)),
                    },
                    Ok(_) => {}
                }
            }
        }
    }
    Ok(out)
}

/// Whether one of the two folders is the other or inside it, after resolving links.
pub fn overlaps(a: &Path, b: &Path) -> Result<bool, FsError> {
    Ok(nested(&real_path(a)?, &real_path(b)?))
}

/// Whether `dir` is the root of a mount, as statx tells on Linux 5.8 and later: a bind
/// mount of a folder of the parent's own file system has the parent's device number.
/// Elsewhere (or where statx cannot tell) false.
fn is_mount_root(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: statx fills in the plain-data struct it is given; the path is a valid,
        // NUL-terminated string that outlives the call.
        let mut st: libc::statx = unsafe { std::mem::zeroed() };
        let got = unsafe {
            libc::statx(
                libc::AT_FDCWD,
                path.as_ptr(),
                libc::AT_STATX_SYNC_AS_STAT,
                libc::STATX_BASIC_STATS,
                &mut st,
            )
        };
        let root = libc::STATX_ATTR_MOUNT_ROOT as u64;
        got == 0 && st.stx_attributes_mask & root != 0 && st.stx_attributes & root != 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        false
    }
}

/// Whether `path` is a symbolic link to something that does not exist (yet).
pub fn dangling_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) && !path.exists()
}

/// Whether one of two resolved paths (see [`real_path`]) is the other or inside it.
pub fn nested(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Whether the folder `dir` is mounted on `parent` (another file system, or a bind mount of
/// a folder of the same one), so nothing can be renamed from one into the other.
pub fn is_mount_point(dir: &Path, parent: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(dir), fs::metadata(parent)) {
            (Ok(d), Ok(p)) => d.is_dir() && (d.dev() != p.dev() || is_mount_root(dir)),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, parent);
        false
    }
}

/// A folder whose files are opened without ever passing through a symbolic link, so a
/// folder swapped for a link after the tree was checked cannot lead outside it.
pub struct Beneath {
    root: PathBuf,
    #[cfg(unix)]
    dir: fs::File,
}

impl Beneath {
    /// Opens the folder `root` itself, refusing it if it is a symbolic link.
    pub fn open(root: &Path) -> io::Result<Beneath> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                .open(root)?;
            Ok(Beneath {
                root: root.to_path_buf(),
                dir,
            })
        }
        #[cfg(not(unix))]
        Ok(Beneath {
            root: root.to_path_buf(),
        })
    }

    /// Opens the plain file `rel` (`/`-separated, inside the folder) for reading. A symbolic
    /// link in any component, a `..` or an absolute path fails (ELOOP, EXDEV or
    /// InvalidInput on Linux).
    pub fn open_file(&self, rel: &str) -> io::Result<fs::File> {
        if rel.is_empty()
            || rel.starts_with('/')
            || rel.split('/').any(|c| c == ".." || c.is_empty())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{rel}` is not a plain path inside {}", self.root.display()),
            ));
        }
        #[cfg(target_os = "linux")]
        match self.openat2(rel) {
            // Kernels before 5.6, and sandboxes that filter the call, lack openat2.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {}
            other => return other,
        }
        #[cfg(unix)]
        return self.open_by_components(rel);
        #[cfg(not(unix))]
        fs::File::open(self.root.join(rel))
    }

    #[cfg(target_os = "linux")]
    fn openat2(&self, rel: &str) -> io::Result<fs::File> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let name = std::ffi::CString::new(rel)?;
        // SAFETY: open_how is plain integers; all-zero is its documented default.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        // O_NONBLOCK: a fifo put in a file's place must not block the open.
        how.flags = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK) as u64;
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: openat2(2) reads `name` (NUL-terminated, alive for the call) and `how`
        // (a live open_how whose size we pass); it returns a new descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                self.dir.as_raw_fd(),
                name.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a descriptor openat2 just opened for us and nothing else owns.
        Ok(unsafe { fs::File::from_raw_fd(fd as i32) })
    }

    /// The portable way: one `openat(O_NOFOLLOW)` per component, each relative to the last.
    #[cfg(unix)]
    fn open_by_components(&self, rel: &str) -> io::Result<fs::File> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let mut parts: Vec<&str> = rel.split('/').collect();
        let last = parts.pop().unwrap_or_default();
        let mut here: Option<fs::File> = None;
        let open = |at: &Option<fs::File>, name: &str, flags: i32| -> io::Result<fs::File> {
            let name = std::ffi::CString::new(name)?;
            let at = at.as_ref().unwrap_or(&self.dir).as_raw_fd();
            // SAFETY: openat(2) reads `name`, NUL-terminated and alive for the call.
            let fd = unsafe {
                libc::openat(
                    at,
                    name.as_ptr(),
                    flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a descriptor openat just opened, owned by nothing else.
            Ok(unsafe { fs::File::from_raw_fd(fd) })
        };
        for part in parts {
            here = Some(open(&here, part, libc::O_RDONLY | libc::O_DIRECTORY)?);
        }
        open(&here, last, libc::O_RDONLY | libc::O_NONBLOCK)
    }
}

/// `std::fs::remove_file` with the path in the error.
pub fn remove_file(path: &Path) -> Result<(), FsError> {
    wrap("remove", path, fs::remove_file(path))
}

/// `std::fs::remove_dir_all` with the path in the error.
pub fn remove_dir_all(path: &Path) -> Result<(), FsError> {
    wrap("remove", path, fs::remove_dir_all(path))
}

#[cfg(all(test, target_os = "linux"))]
mod kernel_version_tests {
    #[test]
    fn releases_compare_by_major_then_minor() {
        use super::kernel_at_least as at_least;
        assert!(at_least("6.18.44-fc-v669-x86_64", (5, 8)));
        assert!(at_least("5.8.0", (5, 8)));
        assert!(at_least("5.10", (5, 8)));
        assert!(!at_least("5.4.0-150-generic", (5, 8)));
        assert!(!at_least("4.18.0-553.el8_10.x86_64", (5, 8)));
        assert!(!at_least("garbage", (5, 8)));
        assert!(!at_least("", (5, 8)));
    }
}

#[cfg(all(test, unix))]
mod real_path_tests {
    use super::real_path;

    #[test]
    fn links_are_resolved_wherever_they_are_on_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("real/demo")).unwrap();
        std::os::unix::fs::symlink(base.join("real/demo"), base.join("olink")).unwrap();
        let demo = base.join("real/demo");
        for (given, want) in [
            ("olink", demo.clone()),
            ("olink/o", demo.join("o")),
            ("real/./demo/../demo/x", demo.join("x")),
            ("olink/../demo", demo.clone()),
        ] {
            assert_eq!(real_path(&base.join(given)).unwrap(), want, "{given}");
        }
        // A link to a folder that does not exist yet resolves to where it points (found by
        // review: `create_dir_all` creates the target, inside whatever holds it).
        std::os::unix::fs::symlink(base.join("real/demo/gen"), base.join("dangling")).unwrap();
        assert_eq!(
            real_path(&base.join("dangling/cat")).unwrap(),
            demo.join("gen/cat")
        );
        // `..` after a folder that does not exist yet has no answer.
        for given in ["real/demo/new/../../x", "dangling/../x", "missing/../olink"] {
            let err = real_path(&base.join(given)).unwrap_err();
            assert!(
                err.to_string().contains("does not exist yet"),
                "{given}: {err}"
            );
        }
        // Link loops end.
        std::os::unix::fs::symlink(base.join("loop"), base.join("loop")).unwrap();
        assert!(real_path(&base.join("loop/x")).is_err());
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::Beneath;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    /// root/a/b.txt, root/link -> outside/, root/file-link -> outside/secret.txt.
    fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a/b.txt"), "inside").unwrap();
        std::fs::write(outside.join("secret.txt"), "outside").unwrap();
        symlink(&outside, root.join("link")).unwrap();
        symlink(outside.join("secret.txt"), root.join("file-link")).unwrap();
        (tmp, root)
    }

    fn read(f: std::io::Result<std::fs::File>) -> String {
        let mut s = String::new();
        f.unwrap().read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn files_inside_open_and_links_on_the_way_are_refused() {
        let (_tmp, root) = tree();
        let b = Beneath::open(&root).unwrap();
        assert_eq!(read(b.open_file("a/b.txt")), "inside");
        for rel in [
            "link/secret.txt",
            "file-link",
            "a/../link/secret.txt",
            "../outside/secret.txt",
            "/etc/passwd",
            "",
        ] {
            assert!(b.open_file(rel).is_err(), "{rel} was opened");
        }
    }

    #[test]
    fn the_portable_way_refuses_the_same_links() {
        let (_tmp, root) = tree();
        let b = Beneath::open(&root).unwrap();
        assert_eq!(read(b.open_by_components("a/b.txt")), "inside");
        for rel in ["link/secret.txt", "file-link"] {
            assert!(b.open_by_components(rel).is_err(), "{rel} was opened");
        }
    }

    #[test]
    fn a_root_that_is_a_link_is_refused() {
        let (tmp, root) = tree();
        let alias = tmp.path().join("alias");
        symlink(&root, &alias).unwrap();
        assert!(Beneath::open(&alias).is_err());
    }
}
