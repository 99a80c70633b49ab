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
    /// The underlying error.
    pub source: io::Error,
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot {} {}: {}",
            self.op,
            self.path.display(),
            self.source
        )
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
            source,
        }
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

fn wrap<T>(op: &'static str, path: &Path, r: io::Result<T>) -> Result<T, FsError> {
    r.map_err(|e| FsError::new(op, path, e))
}

/// Reads a whole file, refusing one larger than `limit` bytes before reading it.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    use std::io::Read;
    let file = wrap("open", path, fs::File::open(path))?;
    let meta = wrap("inspect", path, file.metadata())?;
    if meta.is_dir() {
        return Err(FsError::new(
            "read",
            path,
            io::Error::new(io::ErrorKind::IsADirectory, "is a folder, expected a file"),
        ));
    }
    if meta.len() > limit {
        return Err(FsError::new(
            "read",
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "file is {} bytes, larger than the {limit}-byte limit",
                    meta.len()
                ),
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // `take` guards against a file that grows while being read.
    wrap("read", path, file.take(limit + 1).read_to_end(&mut bytes))?;
    if bytes.len() as u64 > limit {
        return Err(FsError::new(
            "read",
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                "file grew past the size limit while being read",
            ),
        ));
    }
    Ok(bytes)
}

/// `std::fs::symlink_metadata` with the path in the error.
pub fn symlink_metadata(path: &Path) -> Result<fs::Metadata, FsError> {
    wrap("inspect", path, fs::symlink_metadata(path))
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

/// `std::fs::create_dir_all` with the path in the error.
pub fn create_dir_all(path: &Path) -> Result<(), FsError> {
    wrap("create folder", path, fs::create_dir_all(path))
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

/// `std::fs::rename` with both paths in the error.
pub fn rename(from: &Path, to: &Path) -> Result<(), FsError> {
    fs::rename(from, to).map_err(|e| {
        FsError::new(
            "rename",
            from,
            io::Error::new(e.kind(), format!("to {}: {e}", to.display())),
        )
    })
}

/// `std::fs::remove_dir_all` with the path in the error.
pub fn remove_dir_all(path: &Path) -> Result<(), FsError> {
    wrap("remove", path, fs::remove_dir_all(path))
}
