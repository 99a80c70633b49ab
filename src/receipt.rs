//! Install receipts: what `install` put into a profile, so that `remove` undoes exactly
//! that, `update` knows what is there, and `doctor` can tell when a tree has drifted.

use crate::error::Error;
use crate::profile::Profile;
use crate::sha256::Sha256;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The receipt schema string.
pub const SCHEMA: &str = "hookpack.receipt.v1";

/// One installed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Path inside the recipe folder, `/`-separated.
    pub path: String,
    /// Digest of its bytes.
    pub sha256: Sha256,
    /// Size in bytes.
    pub size: u64,
    /// 0644 or 0755.
    pub mode: u32,
}

/// One handler merged into `hooks.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandlerRecord {
    /// Event name.
    pub event: String,
    /// Handler id.
    pub id: String,
    /// The command as written into `hooks.json`.
    pub command: String,
}

/// What one install did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Recipe id.
    pub id: String,
    /// Installed version.
    pub version: String,
    /// The recipe's `min_cli`.
    pub min_cli: String,
    /// Digest of the archive installed.
    pub sha256: Sha256,
    /// Where the index was (absent for `--archive`).
    pub index_url: Option<String>,
    /// Where the archive was.
    pub archive_url: String,
    /// When, RFC 3339.
    pub installed_at: String,
    /// Files of the recipe folder.
    pub files: Vec<FileRecord>,
    /// Handlers merged.
    pub handlers: Vec<HandlerRecord>,
    /// What the merge added to `hooks.json`'s structure, for an exact removal. Absent in
    /// receipts that predate it: removal then deletes every event it leaves empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<crate::merge::Created>,
    /// Whether the commands name scripts by absolute path (`install --absolute-paths`):
    /// `update` keeps that style.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub absolute_paths: bool,
    /// The version requirement the recipe was installed with (`install ID@REQ`, as written
    /// after `@`: `0.1.0`, `^0.1`): `update` stays within it. Absent for `install ID`,
    /// `--archive` and receipts that predate it: no pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
}

/// `<profile>/hooks/.receipts/<id>.json`.
pub fn path(profile: &Profile, id: &str) -> std::path::PathBuf {
    profile.receipts_dir().join(format!("{id}.json"))
}

/// Reads the receipt of `id`, if there is one.
pub fn read(profile: &Profile, id: &str) -> Result<Option<Receipt>, Error> {
    // A file of the user's in the place of a folder would fail as "Not a directory" on a
    // receipt that does not exist: name the file instead.
    if let Some((path, why)) = folder_not_folder(profile) {
        return Err(Error::ConfigInvalid {
            path,
            why: why.to_string(),
        });
    }
    read_file(&path(profile, id))
}

/// `hooks/` or `hooks/.receipts/` when it is there but no folder (a file of the user's), and
/// what to say of it: install and remove refuse it, and `doctor` reports it.
pub fn folder_not_folder(profile: &Profile) -> Option<(std::path::PathBuf, &'static str)> {
    [profile.hooks_dir(), profile.receipts_dir()]
        .into_iter()
        .find(|dir| dir.exists() && !dir.is_dir())
        .map(|dir| {
            (
                dir,
                "it is not a folder: hookpack keeps installed recipes in `hooks/` and their \
                 receipts in `hooks/.receipts/`, and will not replace it; move it elsewhere, \
                 then run the command again",
            )
        })
}

/// Reads a receipt file, if it exists.
pub fn read_file(p: &Path) -> Result<Option<Receipt>, Error> {
    let unreadable = |e: String| Error::ConfigInvalid {
        path: p.to_path_buf(),
        why: unreadable_why(p, &e),
    };
    // Found by review: a link in a receipt's place was read through, so a file outside the
    // profile said what is installed. Install writes receipts as files, never links.
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(unreadable(
            "it is a symbolic link, which hookpack does not read through (install writes \
             receipts as files)"
                .to_string(),
        ));
    }
    // A regular file only: a fifo would wait for a writer for good.
    let file = match crate::fs::open_regular(p) {
        Ok((file, _)) => file,
        Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // A folder or fifo in its place is an unreadable receipt; other failures (say,
        // `hooks/.receipts` is a file) are not the receipt's.
        Err(e)
            if matches!(
                e.source.kind(),
                std::io::ErrorKind::IsADirectory | std::io::ErrorKind::InvalidInput
            ) =>
        {
            return Err(unreadable(e.source.to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let mut b = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut b)
        .map_err(|e| crate::fs::FsError::new("read", p, e))?;
    let r: Receipt = serde_json::from_slice(&b).map_err(|e| unreadable(e.to_string()))?;
    check(p, &r).map_err(unreadable)?;
    Ok(Some(r))
}

/// The id and file paths of a receipt are joined to the profile's paths (`doctor` reads
/// the files, `update` installs the id): they must be what install writes.
pub(crate) fn check(p: &Path, r: &Receipt) -> Result<(), String> {
    // Another schema's fields may mean something else under the same names: read as ours,
    // `remove` could take out what the receipt does not say it installed.
    if r.schema != SCHEMA {
        return Err(format!(
            "its schema is `{}`, and hookpack reads only {SCHEMA} receipts (one written by a \
             newer hookpack, or by hand?)",
            r.schema
        ));
    }
    let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
    if crate::id::Id::parse(&r.id).is_err() || stem.as_deref() != Some(r.id.as_str()) {
        return Err(format!("it names the recipe `{}`", r.id));
    }
    // `update` compares it and advice names `ID@VERSION`: it must be one.
    if crate::version::Version::parse(&r.version).is_err() {
        return Err(format!(
            "its version `{}` is not a version (X.Y.Z)",
            r.version
        ));
    }
    // `update` chooses by it and advice names `ID@PIN`.
    if let Some(pin) = &r.pin {
        if crate::install::Want::parse(&r.id, pin).is_err() {
            return Err(format!(
                "its pin `{pin}` is not a version (X.Y.Z) or a range (such as `^0.1`)"
            ));
        }
    }
    // `update` fetches from it.
    if let Some(url) = &r.index_url {
        if let Err(e) = crate::fetch::Location::parse(url) {
            return Err(format!("its index {e}"));
        }
    }
    for f in &r.files {
        let clean = !f.path.is_empty()
            && Path::new(&f.path)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !clean {
            return Err(format!("it lists the file `{}`", f.path));
        }
    }
    Ok(())
}

/// What is wrong with a receipt hookpack cannot use, and the way out: install, remove,
/// update, list and doctor all read receipts, so without one the profile is stuck.
fn unreadable_why(p: &Path, e: &str) -> String {
    let id = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "not a readable receipt: {e}; delete it, then `hookpack install {id}` installs the \
         recipe again with a new receipt (or `hookpack remove {id}` takes it out)"
    )
}

/// Every receipt in the profile, by id.
pub fn all(profile: &Profile) -> Result<Vec<Receipt>, Error> {
    let (receipts, unreadable) = all_readable(profile)?;
    match unreadable.into_iter().next() {
        Some((path, why)) => Err(Error::ConfigInvalid { path, why }),
        None => Ok(receipts),
    }
}

/// A receipt file that does not parse: (path, what is wrong and the way out).
pub type Unreadable = (PathBuf, String);

/// Every receipt in the profile that parses, and each that does not: for `doctor`, which
/// reports those and checks the rest.
pub fn all_readable(profile: &Profile) -> Result<(Vec<Receipt>, Vec<Unreadable>), Error> {
    let dir = profile.receipts_dir();
    if !dir.is_dir() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    for e in crate::fs::read_dir_sorted(&dir)? {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json") {
            match read_file(&p) {
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(Error::ConfigInvalid { path, why }) => unreadable.push((path, why)),
                Err(e) => return Err(e),
            }
        }
    }
    Ok((out, unreadable))
}
