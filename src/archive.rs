//! Reading recipe archives without trusting them.
//!
//! Every entry is checked before anything is done with it, and the `tar` crate's
//! `unpack_in` is never used as the boundary. Refused: anything but regular files and
//! folders (links, devices, fifos, global pax headers but for `git archive`'s, which holds
//! only a `comment`); absolute paths, `..`, `.` (but for a leading `./`, which GNU tar and
//! Python's tarfile drop alike, and one folder `./`, skipped), empty components, backslashes, drive letters, NUL and
//! control characters; two entries that collide exactly, by case or by Unicode normalisation; a file whose name ends in `/` (or,
//! of type NUL, whose header's own name does, under a long name or pax path; one whose names
//! both end in `/` and that has no data is a folder, as old tars write one), a folder with
//! data; bytes in the ustar prefix field of a header without ustar magic; a number field in
//! a header (the GNU long-name and pax headers before an entry included) that GNU tar or
//! Python's tarfile read otherwise, and bytes after a long name's or pax header's data in
//! its last block; more than one top folder or a top folder other than the expected one;
//! more entries (the folders their paths imply included), deeper or longer paths, or more
//! unpacked bytes than [`Limits`] allow (checked from the header, before the data is read,
//! so a small archive that inflates to gigabytes is refused early); more than 1 MiB of
//! headers, long names and pax records before one entry; data after the end of the
//! archive; truncated streams; header and gzip/zstd checksum failures; a zstd window over
//! 128 MiB (said as such, before the decoder calls it a memory error). The format is told
//! by magic bytes, never by the file name.

use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Read};
use unicode_normalization::UnicodeNormalization;

/// Bounds on what an archive may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most entries; a folder no entry names but a path implies counts as one.
    pub max_entries: usize,
    /// Most bytes unpacked in all.
    pub max_total_bytes: u64,
    /// Longest entry path, in bytes.
    pub max_path_bytes: usize,
    /// Deepest entry path, in components.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 10_000,
            max_total_bytes: 256 * 1024 * 1024,
            max_path_bytes: 512,
            max_depth: 24,
        }
    }
}

/// The compression of an archive, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// gzip (`1f 8b`).
    Gzip,
    /// zstd (`28 b5 2f fd`).
    Zstd,
}

/// Why an archive is refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Neither gzip nor zstd.
    #[error("not a gzip or zstd archive (the first bytes are neither 1f8b nor 28b52ffd)")]
    UnknownFormat,
    /// Reading or decompressing failed (truncated stream, bad checksum, I/O).
    #[error("the archive is damaged or truncated: {0}")]
    Corrupt(io::Error),
    /// An entry type other than file or folder.
    #[error("entry `{path}` is a {kind}; only regular files and folders are allowed")]
    EntryTypeRefused {
        /// Entry path as stored.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// A path that could land outside the target or is malformed.
    #[error("entry `{path}` is refused: {why}")]
    EntryPathRefused {
        /// Entry path as stored (lossy).
        path: String,
        /// What is wrong.
        why: &'static str,
    },
    /// pax records that other tools would read otherwise than hookpack does.
    #[error("entry `{path}` is refused: {why}, which tools read differently; `hookpack pack` and `tar --format=gnu` write archives without pax records")]
    PaxRefused {
        /// Entry path as hookpack reads it (lossy).
        path: String,
        /// What is wrong.
        why: String,
    },
    /// A number in a header that other tools read otherwise than hookpack does.
    #[error("entry `{path}` is refused: the `{field}` field of {header} is `{value}`, which GNU tar and Python's tarfile do not read as the octal number hookpack reads (Python's tarfile stops unpacking at a header it cannot read, without an error)")]
    HeaderFieldRefused {
        /// Entry path as hookpack reads it (lossy).
        path: String,
        /// Which field.
        field: &'static str,
        /// The entry's own header, or an extension header before it.
        header: &'static str,
        /// The field's bytes, escaped.
        value: String,
    },
    /// Two entries with the same (or the same-looking) path.
    #[error("entries `{first}` and `{second}` collide ({how})")]
    EntryCollision {
        /// The earlier entry.
        first: String,
        /// The later one.
        second: String,
        /// Exactly, by case, or by Unicode normalisation.
        how: &'static str,
    },
    /// Entries under more than one top folder, or not under the expected one.
    #[error("entry `{path}` is not under the top folder `{expected}/`; an archive holds exactly one top folder")]
    TopFolder {
        /// The entry.
        path: String,
        /// The expected top folder.
        expected: String,
    },
    /// The one top folder is not `<id>-<version>` of the archive's own `recipe.json`.
    #[error("its top folder `{top}/` is not `{id}-{version}/`, the id and version its recipe.json gives (at /id and /version): a packed recipe's folder is named by them, so the archive was not made by `hookpack pack`, or it or its recipe.json was changed after packing")]
    TopFolderNotManifest {
        /// The top folder.
        top: String,
        /// `id` of the recipe.json.
        id: String,
        /// `version` of the recipe.json.
        version: String,
    },
    /// A limit was exceeded.
    #[error("the archive exceeds the limit on {what} ({limit})")]
    LimitExceeded {
        /// Which limit.
        what: &'static str,
        /// Its value.
        limit: u64,
    },
    /// A zstd frame asks for a larger window than the decoder keeps.
    #[error("its zstd window is {window} bytes, more than the {limit} hookpack decodes with; compress it with a window of 128 MiB at most (`zstd --long=27`, or `hookpack pack`)")]
    ZstdWindowTooLarge {
        /// The window the frame asks for.
        window: u64,
        /// The most the decoder keeps.
        limit: u64,
    },
    /// Data after the end of the archive.
    #[error("there is data after the end of the archive ({0})")]
    TrailingData(&'static str),
    /// No entries at all.
    #[error("the archive is empty")]
    Empty,
    /// The visitor refused an entry.
    #[error("{0}")]
    Visit(String),
    /// Writing an extracted entry failed (disk full, read-only folder): the machine's fault,
    /// not the archive's.
    #[error("cannot write {path}: {source}")]
    Write {
        /// Where.
        path: std::path::PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// One entry, after checking.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Path below the top folder, `/`-separated; empty for the top folder itself.
    pub path: String,
    /// True for a folder.
    pub is_dir: bool,
    /// Size in bytes (0 for folders).
    pub size: u64,
    /// Mode reduced to 0644 or 0755.
    pub mode: u32,
}

/// What a scan found.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The format.
    pub compression: Compression,
    /// The top folder name.
    pub top: String,
    /// Entries, in archive order.
    pub entries: Vec<Entry>,
    /// Bytes unpacked.
    pub total_bytes: u64,
}

/// Most zero bytes accepted after the end-of-archive marker.
const MAX_PADDING: usize = 1024 * 1024;

/// Most bytes read between one entry's data and the next entry: its padding, the next
/// header, and the GNU long names and pax records before it. The tar crate reads those
/// extensions into memory whole before it hands over the entry they describe, so without
/// this a long name claiming gigabytes of zeros (a few KiB compressed) would be held in
/// memory before its length could be refused. Real ones are a few hundred bytes.
const MAX_BETWEEN_ENTRIES: u64 = 1024 * 1024;

/// Most bytes of records in a global pax header, which is read whole to check them;
/// `git archive`'s is 52.
const MAX_GLOBAL_PAX: u64 = 64 * 1024;

/// How many bytes the tar reader may still pull from the decompressed stream: the data of
/// the entry it handed over last, then [`MAX_BETWEEN_ENTRIES`]. `tripped` says the budget
/// ran out, so the tar crate's error can be told for what it is. While `keep` is set, what
/// is read is kept (from the end of one entry's data to the next entry's header, within the
/// budget), so that the headers the tar crate folds into an entry can be checked too.
#[derive(Default)]
struct Budget {
    left: std::cell::Cell<u64>,
    tripped: std::cell::Cell<bool>,
    /// Bytes read so far.
    read: std::cell::Cell<u64>,
    keep: std::cell::Cell<bool>,
    kept: std::cell::RefCell<Vec<u8>>,
}

/// The decompressed stream as the tar reader sees it, bounded by a [`Budget`].
struct Budgeted<'b, R> {
    inner: R,
    budget: &'b Budget,
}

impl<R: Read> Read for Budgeted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.budget.left.get();
        if left == 0 && !buf.is_empty() {
            self.budget.tripped.set(true);
            return Err(io::Error::other(
                "more bytes before the next entry than hookpack reads",
            ));
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.budget.left.set(left - n as u64);
        self.budget.read.set(self.budget.read.get() + n as u64);
        if self.budget.keep.get() {
            self.budget.kept.borrow_mut().extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

/// `s` with control characters escaped, so a hostile name cannot drive the terminal.
pub fn printable(s: &str) -> String {
    crate::output::escape_controls(s, &[])
}

/// [`printable`] of bytes read from an archive (a name, a pax key), not UTF-8 as they may
/// be.
fn printable_bytes(b: &[u8]) -> String {
    printable(&String::from_utf8_lossy(b))
}

fn kind_name(t: tar::EntryType) -> &'static str {
    match t {
        tar::EntryType::Symlink => "symbolic link",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char => "character device",
        tar::EntryType::Block => "block device",
        tar::EntryType::Fifo => "fifo",
        tar::EntryType::XGlobalHeader => "global pax header",
        tar::EntryType::GNUSparse => "sparse file",
        _ => "special entry",
    }
}

/// The tar crate's error for a header field it cannot read, in words that quote none of
/// the header: its text quotes the field and the entry's name as found, which in a damaged
/// archive are binary noise ("numeric field did not have utf-8 text: �[� when getting
/// cksum for g伇J…"). Other errors are kept as they are.
fn header_error(e: io::Error) -> io::Error {
    let text = e.to_string();
    let Some((_, rest)) = text
        .starts_with("numeric field ")
        .then(|| text.split_once(" when getting "))
        .flatten()
    else {
        return e;
    };
    let field = rest.split_whitespace().next().unwrap_or_default();
    io::Error::new(
        e.kind(),
        format!(
            "a header's `{field}` field holds no number, so it is no tar header: the archive's \
             data is damaged, or it is no tar archive"
        ),
    )
}

/// Checks one stored path and splits off its top folder.
fn check_path<'r>(raw: &'r [u8], limits: &Limits) -> Result<(&'r str, &'r str), ArchiveError> {
    // The printable name is only made for a refusal: most paths pass, and escaping each
    // one cost more than the checks themselves.
    let refuse = |why| ArchiveError::EntryPathRefused {
        path: printable_bytes(raw),
        why,
    };
    let s = std::str::from_utf8(raw).map_err(|_| refuse("its name is not UTF-8"))?;
    if s.len() > limits.max_path_bytes {
        return Err(ArchiveError::LimitExceeded {
            what: "path length",
            limit: limits.max_path_bytes as u64,
        });
    }
    if s.chars().any(|c| c.is_control()) {
        return Err(refuse("it contains a NUL or control character"));
    }
    // `tar -czf x.tar.gz ./demo-0.1.0` starts every name with `./`, which GNU tar and
    // Python's tarfile both unpack as if it were not there; `./` alone (what
    // `tar -C demo-0.1.0 -czf x.tar.gz .` writes first) is still a `.` component.
    let s = match s.strip_prefix("./") {
        Some(rest) if !rest.is_empty() => rest,
        _ => s,
    };
    if s.contains('\\') {
        return Err(refuse("it contains a backslash"));
    }
    if s.starts_with('/') {
        return Err(refuse("it is absolute"));
    }
    let b = s.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return Err(refuse("it starts with a drive letter"));
    }
    let trimmed = s.strip_suffix('/').unwrap_or(s);
    let parts: Vec<&str> = trimmed.split('/').collect();
    if parts.len() > limits.max_depth {
        return Err(ArchiveError::LimitExceeded {
            what: "path depth",
            limit: limits.max_depth as u64,
        });
    }
    for p in &parts {
        if p.len() > 255 {
            return Err(refuse(
                "a path component is longer than 255 bytes, more than file systems allow",
            ));
        }
        match *p {
            "" => return Err(refuse("it has an empty path component")),
            "." => return Err(refuse("it has a `.` component")),
            ".." => return Err(refuse("it has a `..` component")),
            _ => {}
        }
    }
    // The parts after the first, joined again, are what follows the first `/`.
    Ok(trimmed.split_once('/').unwrap_or((trimmed, "")))
}

/// Reads an archive from `input`, checking every entry against `limits` and the expected
/// top folder (`None`: whatever the first entry names, as long as it is the only one).
/// `visit` is called for each entry with its data; whatever it does not read is skipped.
pub fn scan<R: Read>(
    input: R,
    expected_top: Option<&str>,
    limits: &Limits,
    mut visit: impl FnMut(&Entry, &mut dyn Read) -> Result<(), ArchiveError>,
) -> Result<Summary, ArchiveError> {
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let head = input.fill_buf().map_err(ArchiveError::Corrupt)?;
    let compression = if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        if let Some(window) = zstd_window(head).filter(|w| *w > MAX_ZSTD_WINDOW) {
            return Err(ArchiveError::ZstdWindowTooLarge {
                window,
                limit: MAX_ZSTD_WINDOW,
            });
        }
        Compression::Zstd
    } else {
        return Err(ArchiveError::UnknownFormat);
    };
    match compression {
        Compression::Gzip => {
            let mut dec = flate2::bufread::GzDecoder::new(input);
            let summary = scan_tar(&mut dec, compression, expected_top, limits, &mut visit)?;
            let mut rest = dec.into_inner();
            ensure_consumed(&mut rest)?;
            Ok(summary)
        }
        Compression::Zstd => {
            let mut dec = zstd::stream::read::Decoder::with_buffer(input)
                .map_err(ArchiveError::Corrupt)?
                .single_frame();
            let summary = scan_tar(&mut dec, compression, expected_top, limits, &mut visit)?;
            let mut rest = dec.finish();
            ensure_consumed(&mut rest)?;
            Ok(summary)
        }
    }
}

/// The largest zstd window the decoder keeps (zstd's default limit, `--long=27`); a frame
/// asking for more is refused by it, which it reports only as "too much memory".
const MAX_ZSTD_WINDOW: u64 = 1 << 27;

/// The window the zstd frame starting `head` asks for (RFC 8878, 3.1.1.1), when its header
/// is all there: from the window descriptor, or a single-segment frame's content size.
fn zstd_window(head: &[u8]) -> Option<u64> {
    let fhd = *head.get(4)?;
    let single_segment = fhd & 0x20 != 0;
    if !single_segment {
        let wd = *head.get(5)?;
        let base = 1u64 << (10 + u32::from(wd >> 3));
        return Some(base + base / 8 * u64::from(wd & 7));
    }
    let dict_bytes = [0, 1, 2, 4][usize::from(fhd & 3)];
    let at = 5 + dict_bytes;
    let (len, add) = match fhd >> 6 {
        0 => (1, 0),
        1 => (2, 256),
        2 => (4, 0),
        _ => (8, 0),
    };
    let bytes = head.get(at..at + len)?;
    let mut le = [0u8; 8];
    le[..len].copy_from_slice(bytes);
    Some(u64::from_le_bytes(le) + add)
}

fn ensure_consumed(r: &mut impl BufRead) -> Result<(), ArchiveError> {
    let left = r.fill_buf().map_err(ArchiveError::Corrupt)?;
    if left.is_empty() {
        Ok(())
    } else {
        Err(ArchiveError::TrailingData("after the compressed stream"))
    }
}

/// The checks on an archive's list of entries, one entry at a time: its path (see
/// `check_path`), one top folder, collisions (exact, by case, by Unicode normalisation, a
/// file used as a folder or the reverse) and the [`Limits`] on entries and total size.
/// `pack` runs the same checks on what it is about to write.
pub struct Listing<'a> {
    limits: &'a Limits,
    top: Option<String>,
    count: usize,
    /// How many of those counted are folders no entry has named (yet).
    implied: usize,
    total: u64,
    seen_exact: HashMap<String, String>,
    seen_folded: HashMap<String, String>,
    /// Each file, case-folded and NFC-normalised, with its entry's path as stored.
    files: HashMap<String, String>,
    /// Each folder, case-folded and NFC-normalised, with its first spelling.
    folders: HashMap<String, String>,
}

impl<'a> Listing<'a> {
    /// A listing whose top folder must be `expected_top` (`None`: whatever the first entry
    /// names).
    pub fn new(expected_top: Option<&str>, limits: &'a Limits) -> Listing<'a> {
        Listing {
            limits,
            top: expected_top.map(String::from),
            count: 0,
            implied: 0,
            total: 0,
            seen_exact: HashMap::new(),
            seen_folded: HashMap::new(),
            files: HashMap::new(),
            folders: HashMap::new(),
        }
    }

    /// Counts one more file or folder (`implied`: a folder a path implies and no entry
    /// names), refusing one past [`Limits::max_entries`]: said as over the limit on entries
    /// when the count is of entries alone, else on files and folders, whichever one
    /// crossed it.
    fn count_one(&mut self, implied: bool) -> Result<(), ArchiveError> {
        if self.count >= self.limits.max_entries {
            return Err(ArchiveError::LimitExceeded {
                what: match self.implied > 0 || implied {
                    true => "files and folders, those its paths imply included",
                    false => "entries",
                },
                limit: self.limits.max_entries as u64,
            });
        }
        self.count += 1;
        self.implied += usize::from(implied);
        Ok(())
    }

    /// Checks the next entry (stored path `raw`, a folder or a file, with `size` bytes of
    /// data, which count toward the unpacked size); returns its path below the top folder.
    pub fn add(&mut self, raw: &[u8], is_dir: bool, size: u64) -> Result<String, ArchiveError> {
        let limits = self.limits;
        let (entry_top, rest) = check_path(raw, limits)?;
        if !is_dir && raw.ends_with(b"/") {
            // GNU tar makes it a folder; so does Python's tarfile for a type NUL entry.
            return Err(ArchiveError::EntryPathRefused {
                path: String::from_utf8_lossy(raw).into_owned(),
                why: "it is a file, but its name ends in `/`, which GNU tar makes a folder",
            });
        }
        // check_path refused control characters, so the name needs no escaping here.
        let display = || String::from_utf8_lossy(raw).into_owned();
        match &self.top {
            Some(t) if *t != entry_top => {
                return Err(ArchiveError::TopFolder {
                    path: display(),
                    expected: t.clone(),
                });
            }
            Some(_) => {}
            None => self.top = Some(entry_top.to_string()),
        }
        if rest.is_empty() && !is_dir {
            return Err(ArchiveError::EntryPathRefused {
                path: display(),
                why: "a file sits where the top folder should be",
            });
        }
        // Collisions: exact, then case-folded and NFC-normalised.
        if let Some(first) = self.seen_exact.get(rest) {
            return Err(ArchiveError::EntryCollision {
                first: first.clone(),
                second: display(),
                how: "same path",
            });
        }
        // ASCII names need no normalisation.
        let folded: String = if rest.is_ascii() {
            rest.to_ascii_lowercase()
        } else {
            rest.nfc().collect::<String>().to_lowercase()
        };
        if let Some(first) = self.seen_folded.get(&folded) {
            let second = display();
            let how = how_alike(first, &second);
            return Err(ArchiveError::EntryCollision {
                first: first.clone(),
                second,
                how,
            });
        }
        // Another spelling of a folder seen, which the entry names or a path implied: on a
        // file system that ignores case or normalisation, one folder.
        let other_spelling = |spelt: &str, this: &str| {
            let first = format!("{entry_top}/{spelt}/");
            let second = display();
            (spelt != this).then(|| ArchiveError::EntryCollision {
                how: how_alike(spelt, this),
                first,
                second,
            })
        };
        // A path used both as a file and as a folder (`a` then `a/b`, or `a/b` then `a`).
        // Each folder above it, as a prefix of `folded` (which has its `/` where `rest` has
        // them); one already seen (the usual case: folders come before what they hold) is
        // not copied again.
        let ends = rest.match_indices('/').zip(folded.match_indices('/'));
        for ((spelt_end, _), (end, _)) in ends {
            let (prefix, spelt) = (&folded[..end], &rest[..spelt_end]);
            if let Some(file) = self.files.get(prefix) {
                return Err(ArchiveError::EntryCollision {
                    first: file.clone(),
                    second: display(),
                    how: "a file is used as a folder",
                });
            }
            match self.folders.get(prefix) {
                Some(seen) => {
                    if let Some(e) = other_spelling(seen, spelt) {
                        return Err(e);
                    }
                }
                None => {
                    // A folder no entry names counts too: else 10,000 files each 23
                    // folders deep would make 230,000 folders from an archive of 700 KB.
                    self.count_one(true)?;
                    self.folders.insert(prefix.to_string(), spelt.to_string());
                }
            }
        }
        if is_dir {
            // A folder a path before implied adds nothing.
            match self.folders.get(&folded) {
                Some(seen) => {
                    if let Some(e) = other_spelling(seen, rest) {
                        return Err(e);
                    }
                    // Named now (one named before was refused above as the same path).
                    self.implied = self.implied.saturating_sub(1);
                }
                None => {
                    self.count_one(false)?;
                    self.folders.insert(folded.clone(), rest.to_string());
                }
            }
        } else if let Some(spelt) = self.folders.get(&folded) {
            return Err(ArchiveError::EntryCollision {
                first: format!("{entry_top}/{spelt}/"),
                second: display(),
                how: "a folder is used as a file",
            });
        } else {
            self.count_one(false)?;
            self.files.insert(folded.clone(), display());
        }
        let shown = display();
        self.seen_exact.insert(rest.to_string(), shown.clone());
        self.seen_folded.insert(folded, shown);
        self.total = self.total.saturating_add(size);
        if self.total > limits.max_total_bytes {
            return Err(ArchiveError::LimitExceeded {
                what: "unpacked size in bytes",
                limit: limits.max_total_bytes,
            });
        }
        Ok(rest.to_string())
    }
}

/// How two names that are one after case folding and NFC normalisation differ.
fn how_alike(first: &str, second: &str) -> &'static str {
    // A folder is shown with its `/`, which takes no part in the comparison.
    let (a, b) = (first.trim_end_matches('/'), second.trim_end_matches('/'));
    // Normalisation first: `Å` (U+00C5) and `Å` (U+212B) are one letter, shown alike; then
    // case, between names in the same form (`å` and U+212B differ in both).
    let nfc = |s: &str| s.nfc().collect::<String>();
    if nfc(a) == nfc(b) {
        "same after Unicode normalisation"
    } else if (nfc(a) == a) == (nfc(b) == b) && a.to_lowercase() == b.to_lowercase() {
        "differ only by case"
    } else {
        "differ by case and Unicode normalisation"
    }
}

/// Refuses the pax records before an entry that GNU tar and Python's tarfile (which hosts
/// and users extract with) read otherwise than the tar crate, so that what hookpack checks
/// is what they unpack: a record that does not parse (the tar crate skips it; they stop), a
/// key given twice (it takes the first, they the last), a `size` that is no decimal number
/// (it falls back to the header's size, which moves where the next entry starts), a GNU
/// sparse file (they rebuild it under the name its records give), and a `path` beside a GNU
/// long name (it takes the long name).
fn check_pax<R: Read>(item: &mut tar::Entry<'_, R>) -> Result<(), ArchiveError> {
    let name = item.path_bytes().into_owned();
    let Some(records) = item.pax_extensions().map_err(ArchiveError::Corrupt)? else {
        return Ok(());
    };
    let refuse = |why: String| {
        Err(ArchiveError::PaxRefused {
            path: printable_bytes(&name),
            why,
        })
    };
    let mut keys = HashSet::new();
    for record in records {
        let Ok(record) = record else {
            return refuse("a pax record is malformed (its length or its `=` is wrong)".into());
        };
        let (key, value) = (record.key_bytes(), record.value_bytes());
        if !keys.insert(key) {
            return refuse(format!(
                "the pax key `{}` is given twice",
                printable_bytes(key)
            ));
        }
        let number = std::str::from_utf8(value)
            .ok()
            .filter(|v| v.bytes().all(|b| b.is_ascii_digit()));
        if key == b"size" && number.and_then(|v| v.parse::<u64>().ok()).is_none() {
            return refuse(format!(
                "the pax `size` `{}` is not a decimal number",
                printable_bytes(value)
            ));
        }
        if key == b"path" && value != name {
            return refuse("it has both a pax path and a GNU long name".into());
        }
        if key.starts_with(b"GNU.sparse.") {
            return refuse("it is a GNU sparse file (pax `GNU.sparse.*` records)".into());
        }
    }
    Ok(())
}

/// Checks a global pax header's records (`data`, of the header named `name`): only
/// `comment`, as `git archive` writes, is read alike, since GNU tar and Python's tarfile
/// skip it; they apply any other record to the entries that follow, which the tar crate
/// does not.
fn check_global_pax(data: &[u8], name: &[u8]) -> Result<(), ArchiveError> {
    check_pax_lengths(data, name)?;
    let refuse = |why: String| {
        Err(ArchiveError::PaxRefused {
            path: printable_bytes(name),
            why,
        })
    };
    for record in tar::PaxExtensions::new(data) {
        let Ok(record) = record else {
            return refuse("a record of this global pax header is malformed".into());
        };
        if record.key_bytes() != b"comment" {
            return refuse(format!(
                "it is a global pax header with a `{}` record, which GNU tar and Python's \
                 tarfile apply to the entries after it (only `comment`, as `git archive` \
                 writes, is skipped by all)",
                printable_bytes(record.key_bytes())
            ));
        }
    }
    Ok(())
}

/// The number fields of a header (name, offset, length), which Python's tarfile reads in
/// every header, GNU long-name and pax headers included.
const NUMBER_FIELDS: [(&str, usize, usize); 8] = [
    ("mode", 100, 8),
    ("uid", 108, 8),
    ("gid", 116, 8),
    ("size", 124, 12),
    ("mtime", 136, 12),
    ("chksum", 148, 8),
    ("devmajor", 329, 8),
    ("devminor", 337, 8),
];

/// Whether GNU tar, Python's tarfile and the tar crate read the number field `name` alike:
/// octal digits between spaces (C's), or blank, up to a NUL, after which all three stop
/// reading (a blank size, mode or checksum the tar crate refuses itself); or base-256, of which the tar crate reads a size's last 8 bytes
/// only. Python's tarfile stops unpacking, without an error, at a header it cannot read;
/// GNU tar reads a leading `+` as base-64, the others as octal.
fn number_read_alike(name: &str, field: &[u8]) -> bool {
    match field[0] {
        0x80 if name == "size" => field[1..field.len() - 8].iter().all(|&b| b == 0),
        0x80 | 0xff => name != "size",
        _ => {
            let text = field.split(|&b| b == 0).next().unwrap_or_default();
            let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
            let start = text.iter().position(|b| !space(b)).unwrap_or(text.len());
            let end = text
                .iter()
                .rposition(|b| !space(b))
                .map_or(start, |i| i + 1);
            let digits = &text[start..end];
            digits.iter().all(|b| (b'0'..=b'7').contains(b))
        }
    }
}

/// Checks the number fields of the headers read for the entry `path`: `kept` is the stream
/// from `from` (the end of the data of the entry before it) up to and including its header
/// at `header_at`, with the GNU long-name and pax headers (and their data) the tar crate
/// folded into it between.
fn check_headers(kept: &[u8], from: u64, header_at: u64, path: &[u8]) -> Result<(), ArchiveError> {
    let lost = || ArchiveError::Corrupt(io::Error::other("its headers could not be followed"));
    let mut at = from.div_ceil(512) * 512;
    loop {
        let start = usize::try_from(at - from).map_err(|_| lost())?;
        let block = kept.get(start..start + 512).ok_or_else(lost)?;
        let header = match at == header_at {
            true => "its header",
            false => "the GNU long name or pax header before it",
        };
        for (field, offset, len) in NUMBER_FIELDS {
            let bytes = &block[offset..offset + len];
            if !number_read_alike(field, bytes) {
                return Err(ArchiveError::HeaderFieldRefused {
                    path: printable_bytes(path),
                    field,
                    header,
                    value: bytes.escape_ascii().to_string(),
                });
            }
        }
        if at == header_at {
            return Ok(());
        }
        // An extension header: its data (a long name, pax records) comes before the next.
        let size = tar::Header::from_byte_slice(block)
            .entry_size()
            .map_err(ArchiveError::Corrupt)?;
        let (data, rest) = usize::try_from(size)
            .ok()
            .and_then(|size| {
                let blocks = kept.get(start + 512..)?.get(..size.div_ceil(512) * 512)?;
                Some(blocks.split_at(size))
            })
            .ok_or_else(lost)?;
        // GNU tar and Python's tarfile read a long name on to a NUL past its size, Python
        // pax records too; the tar crate stops at its size.
        if rest.iter().any(|&b| b != 0) {
            return Err(ArchiveError::EntryPathRefused {
                path: printable_bytes(path),
                why: "the GNU long name or pax header before it has bytes after its data in \
                      its last block, which GNU tar or Python's tarfile read as more of it",
            });
        }
        if block[156] == b'x' {
            check_pax_lengths(data, path)?;
        }
        at = at.saturating_add(512 + size.div_ceil(512).saturating_mul(512));
        if at > header_at {
            return Err(lost());
        }
    }
}

/// Refuses a pax record whose length is not decimal digits alone: the tar crate reads a
/// leading `+` as a sign and takes the record, where GNU tar and Python's tarfile skip it
/// (Python all records after it too). Records are split as the tar crate splits them; any
/// other fault in them is `check_pax`'s to refuse.
fn check_pax_lengths(data: &[u8], path: &[u8]) -> Result<(), ArchiveError> {
    for line in data
        .split(|&b| b == b'\n')
        .take_while(|line| !line.is_empty())
    {
        let length = line.split(|&b| b == b' ').next().unwrap_or_default();
        if !length.iter().all(u8::is_ascii_digit) {
            return Err(ArchiveError::PaxRefused {
                path: printable_bytes(path),
                why: format!(
                    "a pax record's length `{}` is not decimal digits",
                    printable_bytes(length)
                ),
            });
        }
    }
    Ok(())
}

fn scan_tar<R: Read>(
    dec: &mut R,
    compression: Compression,
    expected_top: Option<&str>,
    limits: &Limits,
    visit: &mut impl FnMut(&Entry, &mut dyn Read) -> Result<(), ArchiveError>,
) -> Result<Summary, ArchiveError> {
    let budget = Budget::default();
    budget.left.set(MAX_BETWEEN_ENTRIES);
    budget.keep.set(true);
    // Where the entry before ended: its headers are kept from there.
    let mut from: u64 = 0;
    let mut archive = tar::Archive::new(Budgeted {
        inner: &mut *dec,
        budget: &budget,
    });
    let mut listing = Listing::new(expected_top, limits);
    let mut entries = Vec::new();
    // The name of a global pax header just read: its block's padding is checked with the
    // next entry's headers, as Python's tarfile reads records on into it.
    let mut global_before: Option<Vec<u8>> = None;
    // `git archive` writes one; more would go uncounted by the entry limit.
    let mut global_seen = false;
    let mut root_seen = false;
    let over_budget = |e: io::Error| {
        if budget.tripped.get() {
            ArchiveError::LimitExceeded {
                what: "bytes of headers, long names and pax records before one entry",
                limit: MAX_BETWEEN_ENTRIES,
            }
        } else {
            ArchiveError::Corrupt(header_error(e))
        }
    };
    for item in archive.entries().map_err(ArchiveError::Corrupt)? {
        let mut item = item.map_err(over_budget)?;
        budget.keep.set(false);
        if let Some(name) = global_before.take() {
            let pad = usize::try_from(from.div_ceil(512) * 512 - from).unwrap_or(usize::MAX);
            let kept = budget.kept.borrow();
            if kept
                .get(..pad)
                .is_none_or(|pad| pad.iter().any(|&b| b != 0))
            {
                return Err(ArchiveError::PaxRefused {
                    path: printable_bytes(&name),
                    why: "the global pax header has bytes after its records in its last \
                          block, which Python's tarfile reads as more records"
                        .into(),
                });
            }
        }
        check_headers(
            &budget.kept.borrow(),
            from,
            item.raw_header_position(),
            &item.path_bytes(),
        )?;
        budget.kept.borrow_mut().clear();
        // This entry's data (a pax `size` record included), then what leads to the next.
        let data = item.size().div_ceil(512).saturating_mul(512);
        budget.left.set(data.saturating_add(MAX_BETWEEN_ENTRIES));
        let raw = item.path_bytes().into_owned();
        // The tar crate reads the prefix only under ustar magic and version; GNU tar under
        // ustar magic with any version, Python's tarfile under any magic (a GNU header's
        // access and change times sit there).
        if item.header().as_ustar().is_none() && item.header().as_bytes()[345] != 0 {
            return Err(ArchiveError::EntryPathRefused {
                path: printable_bytes(&raw),
                why: "its header has bytes in the ustar prefix field without ustar magic and \
                      version (`ustar\\0` `00`), which Python's tarfile puts before its name",
            });
        }
        let kind = item.header().entry_type();
        if kind == tar::EntryType::XGlobalHeader {
            // A long name or pax header before it would be folded into it by the tar crate,
            // and into the entry after it by GNU tar and Python's tarfile.
            if std::mem::replace(&mut global_seen, true) {
                return Err(ArchiveError::PaxRefused {
                    path: printable_bytes(&raw),
                    why: "it is a second global pax header".into(),
                });
            }
            if item.raw_header_position() != from.div_ceil(512) * 512 {
                return Err(ArchiveError::PaxRefused {
                    path: printable_bytes(&raw),
                    why: "it is a global pax header with a long name or pax header before it"
                        .into(),
                });
            }
            if item.size() > MAX_GLOBAL_PAX {
                return Err(ArchiveError::LimitExceeded {
                    what: "bytes of global pax records",
                    limit: MAX_GLOBAL_PAX,
                });
            }
            let mut data = Vec::new();
            item.read_to_end(&mut data).map_err(ArchiveError::Corrupt)?;
            check_global_pax(&data, &raw)?;
            global_before = Some(raw);
            from = budget.read.get();
            budget.keep.set(true);
            continue;
        }
        // Python's tarfile makes a type NUL entry a folder by its header's own name, before
        // a GNU long name or pax path replaces it; GNU tar by the name it ends with.
        let own_name = &item.header().as_old().name;
        let own_slash = own_name
            .split(|&b| b == 0)
            .next()
            .unwrap_or_default()
            .ends_with(b"/");
        let type_nul = item.header().as_bytes()[156] == 0;
        // A folder as old tars (and `bsdtar --format v7`) write it: both names end in `/`
        // and there is no data, so all of them make the same empty folder.
        let v7_folder = type_nul && own_slash && raw.ends_with(b"/") && item.size() == 0;
        let is_dir = match kind {
            tar::EntryType::Regular if v7_folder => true,
            tar::EntryType::Regular | tar::EntryType::Continuous => false,
            tar::EntryType::Directory => true,
            // Extension headers (GNU long names, pax) are folded into the next entry by
            // the tar crate; anything else is refused.
            other => {
                return Err(ArchiveError::EntryTypeRefused {
                    path: printable_bytes(&raw),
                    kind: kind_name(other),
                });
            }
        };
        // After the type: a global pax header's own records are not the entry's.
        check_pax(&mut item)?;
        // The entry's real size: a pax `size` record overrides the header's. The tar crate
        // skips data a folder claims; GNU tar and Python's tarfile read it as the entries
        // that follow, so it is refused (from the header, before it is inflated).
        let size = item.size();
        if is_dir && size > 0 {
            return Err(ArchiveError::EntryPathRefused {
                path: printable_bytes(&raw),
                why: "it is a folder with data, which GNU tar and Python's tarfile read as \
                      the entries that follow",
            });
        }
        // `./`, which `tar -C dir .` and Python's `shutil.make_archive` write first, is the
        // folder GNU tar and Python's tarfile unpack into; one is skipped (a second is a
        // `.` component, as is a file named so).
        if is_dir && !root_seen && matches!(raw.as_slice(), b"./" | b".") {
            root_seen = true;
            io::copy(&mut item, &mut io::sink()).map_err(ArchiveError::Corrupt)?;
            from = budget.read.get();
            budget.keep.set(true);
            continue;
        }
        let rest = listing.add(&raw, is_dir, size)?;
        // Any other type NUL entry whose header's own name ends in `/` (a final name ending
        // in `/` on a file was refused above).
        if type_nul && own_slash && !is_dir {
            return Err(ArchiveError::EntryPathRefused {
                path: printable_bytes(&raw),
                why: "it is a file of type NUL, but its header's own name ends in `/`, which \
                      Python's tarfile makes a folder",
            });
        }
        let raw_mode = item.header().mode().map_err(ArchiveError::Corrupt)?;
        let mode = if is_dir || raw_mode & 0o111 != 0 {
            0o755
        } else {
            0o644
        };
        let entry = Entry {
            path: rest,
            is_dir,
            size,
            mode,
        };
        visit(&entry, &mut item)?;
        // Drain what the visitor left, so truncation and checksum errors surface here.
        io::copy(&mut item, &mut io::sink()).map_err(ArchiveError::Corrupt)?;
        entries.push(entry);
        from = budget.read.get();
        budget.keep.set(true);
    }
    // After the end-of-archive blocks, only zero padding may follow, and not much of it
    // (tar pads to a 10 KiB record): a stream of zeros could otherwise inflate forever.
    let mut buf = [0u8; 8192];
    let mut padding = 0usize;
    loop {
        let n = dec.read(&mut buf).map_err(ArchiveError::Corrupt)?;
        if n == 0 {
            break;
        }
        padding += n;
        if padding > MAX_PADDING {
            return Err(ArchiveError::TrailingData(
                "more than 1 MiB of padding after the end-of-archive marker",
            ));
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Err(ArchiveError::TrailingData(
                "after the end-of-archive marker",
            ));
        }
    }
    let Some(top) = listing.top.filter(|_| !entries.is_empty()) else {
        return Err(ArchiveError::Empty);
    };
    Ok(Summary {
        compression,
        top,
        entries,
        total_bytes: listing.total,
    })
}

/// Reads `recipe.json` from an archive while checking all of it.
pub fn read_manifest<R: Read>(
    input: R,
    expected_top: Option<&str>,
    limits: &Limits,
) -> Result<(Summary, Option<Vec<u8>>), ArchiveError> {
    let mut manifest = None;
    let summary = scan(input, expected_top, limits, |e, data| {
        if e.path == "recipe.json" && !e.is_dir {
            let mut buf = Vec::new();
            data.take(crate::recipe::MAX_MANIFEST_BYTES + 1)
                .read_to_end(&mut buf)
                .map_err(ArchiveError::Corrupt)?;
            if buf.len() as u64 > crate::recipe::MAX_MANIFEST_BYTES {
                return Err(ArchiveError::Visit(
                    "recipe.json is larger than 4 MiB".into(),
                ));
            }
            manifest = Some(buf);
        }
        Ok(())
    })?;
    Ok((summary, manifest))
}

#[cfg(test)]
mod tests {
    use super::{ArchiveError, Limits, Listing};

    /// Adds `entries` (path, is a folder) to a listing of top folder `t`; the first error.
    fn first_error(entries: &[(&str, bool)]) -> Option<ArchiveError> {
        let limits = Limits::default();
        let mut listing = Listing::new(Some("t"), &limits);
        entries
            .iter()
            .find_map(|(path, is_dir)| listing.add(path.as_bytes(), *is_dir, 1).err())
    }

    fn collision(entries: &[(&str, bool)]) -> (String, String, &'static str) {
        match first_error(entries) {
            Some(ArchiveError::EntryCollision { first, second, how }) => (first, second, how),
            other => panic!("{entries:?}: {other:?}"),
        }
    }

    #[test]
    fn a_path_is_a_file_or_a_folder_never_both() {
        let ok = [
            ("t/", true),
            ("t/a/", true),
            ("t/a/b/", true),
            ("t/a/b/c", false),
            ("t/a/b/d", false),
            ("t/a/e", false),
            ("t/f", false),
        ];
        assert!(first_error(&ok).is_none());
        // Folders implied by a deeper entry count as folders, at every depth.
        assert!(first_error(&[("t/", true), ("t/x/y/z", false), ("t/x/y/", true)]).is_none());
        assert_eq!(
            collision(&[("t/", true), ("t/A", false), ("t/a/b/c", false)]),
            ("t/A".into(), "t/a/b/c".into(), "a file is used as a folder")
        );
        assert_eq!(
            collision(&[("t/", true), ("t/x/Y/z", false), ("t/x/y", false)]),
            (
                "t/x/Y/".into(),
                "t/x/y".into(),
                "a folder is used as a file"
            )
        );
        assert_eq!(
            collision(&[("t/", true), ("t/x/a", false), ("t/x/A", false)]),
            ("t/x/a".into(), "t/x/A".into(), "differ only by case")
        );
        assert_eq!(
            collision(&[("t/", true), ("t/x", false), ("t/x", false)]),
            ("t/x".into(), "t/x".into(), "same path")
        );
    }

    #[test]
    fn folders_a_path_implies_count_once_as_entries() {
        let limits = Limits {
            max_entries: 4,
            ..Limits::default()
        };
        let mut listing = Listing::new(Some("t"), &limits);
        // The top folder, a file and the two folders its path implies: four.
        for (path, is_dir) in [
            ("t/", true),
            ("t/a/b/c", false),
            ("t/a/", true),
            ("t/a/b/", true),
        ] {
            assert!(listing.add(path.as_bytes(), is_dir, 1).is_ok(), "{path}");
        }
        assert!(matches!(
            listing.add(b"t/d", false, 1),
            Err(ArchiveError::LimitExceeded {
                what: "entries",
                ..
            })
        ));
        let mut listing = Listing::new(Some("t"), &limits);
        assert!(listing.add(b"t/a/b/c", false, 1).is_ok());
        assert!(matches!(
            listing.add(b"t/x/y/z", false, 1),
            Err(ArchiveError::LimitExceeded {
                what: "files and folders, those its paths imply included",
                ..
            })
        ));
    }

    #[test]
    fn refused_paths_are_named_printably() {
        let refused = |path: &[u8]| {
            let limits = Limits::default();
            match Listing::new(Some("t"), &limits).add(path, false, 1) {
                Err(ArchiveError::EntryPathRefused { path, why }) => (path, why),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            refused(b"t/a/../b"),
            ("t/a/../b".into(), "it has a `..` component")
        );
        let (shown, why) = refused(b"t/a\x1b[2Jb");
        assert_eq!(why, "it contains a NUL or control character");
        assert!(!shown.contains('\x1b'), "{shown:?}");
        assert_eq!(refused(b"t/\xff").1, "its name is not UTF-8");
        assert_eq!(
            refused(b"t").1,
            "a file sits where the top folder should be"
        );
        let limits = Limits::default();
        assert!(matches!(
            Listing::new(Some("t"), &limits).add(b"u/a", false, 1),
            Err(ArchiveError::TopFolder { .. })
        ));
    }
}
