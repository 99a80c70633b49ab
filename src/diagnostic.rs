//! Problems found in user files: where (file, JSON pointer, line:column), how bad, what to do.
//!
//! Hosts skip a bad handler silently; hookpack never does. Every check reports into a
//! [`Findings`] for one file, which turns JSON pointers into line:column when it closes.

use crate::json::{Locations, Position};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file will not work as meant; `validate` exits 1.
    Error,
    /// Suspicious or ignored by hosts; an error under `--strict`.
    Warning,
}

/// One problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file the problem is in (or the folder, for tree problems).
    #[serde(serialize_with = "crate::output::path_text")]
    pub file: PathBuf,
    /// 1-based line, when the problem sits at a spot in a JSON document.
    pub line: Option<u32>,
    /// 1-based column in characters.
    pub column: Option<u32>,
    /// RFC 6901 pointer to the value concerned; empty for the whole document.
    pub pointer: String,
    /// Error or warning.
    pub severity: Severity,
    /// A stable, kebab-case name of the rule, for scripts and suppressions.
    pub code: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Diagnostic {
    /// A problem with a file as a whole (unreadable, not JSON, wrong kind).
    pub fn file_level(
        file: &Path,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            file: file.to_path_buf(),
            line: None,
            column: None,
            pointer: String::new(),
            severity,
            code,
            message: message.into(),
        }
    }

    /// Stands for the `errors` and `warnings` about `file` past the [`MAX_LISTED`] listed.
    pub fn unlisted(file: &Path, errors: usize, warnings: usize) -> Self {
        Diagnostic::file_level(
            file,
            if errors > 0 {
                Severity::Error
            } else {
                Severity::Warning
            },
            "problems-unlisted",
            format!(
                "{errors} more error(s) and {warnings} more warning(s) in this file are not \
                 listed (at most {MAX_LISTED} are); fix the ones above and check again"
            ),
        )
    }

    /// Reading order: by file, then by place in the file, with the count of a file's
    /// unlisted problems after those listed (it says to fix "the ones above").
    pub fn reading_order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
        let key = |d: &Diagnostic| d.code == "problems-unlisted";
        (&a.file, key(a), a.line, a.column).cmp(&(&b.file, key(b), b.line, b.column))
    }

    /// A problem at a known line and column.
    pub fn at(
        file: &Path,
        pos: Position,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            line: Some(pos.line),
            column: Some(pos.column),
            ..Diagnostic::file_level(file, severity, code, message)
        }
    }
}

/// Collects the problems of one JSON document.
pub struct Findings<'a> {
    file: &'a Path,
    locations: Option<&'a Locations>,
    out: Vec<Diagnostic>,
    cap: Cap,
}

/// Most problems listed for one file. A hostile document (an index of a million empty
/// entries, each missing every field) would otherwise make millions of diagnostics: gigabytes
/// held and as many lines printed. The rest are counted, and said to be there.
pub const MAX_LISTED: usize = 1000;

/// How many problems of one file are listed, at most [`MAX_LISTED`], and the errors and
/// warnings past that, counted instead.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cap {
    listed: usize,
    errors: usize,
    warnings: usize,
}

impl Cap {
    /// True when a problem of `severity` is to be listed; once the file has had its share,
    /// it is counted instead.
    pub fn admit(&mut self, severity: Severity) -> bool {
        if self.listed < MAX_LISTED {
            self.listed += 1;
            return true;
        }
        self.count(severity, 1);
        false
    }

    /// Counts `n` problems of `severity` that are not listed one by one.
    pub fn count(&mut self, severity: Severity, n: usize) {
        match severity {
            Severity::Error => self.errors += n,
            Severity::Warning => self.warnings += n,
        }
    }

    /// The errors counted, not listed.
    pub fn unlisted_errors(&self) -> usize {
        self.errors
    }

    /// The problem that stands for those of `file` counted, not listed, if any.
    pub fn unlisted(&self, file: &Path) -> Option<Diagnostic> {
        (self.errors + self.warnings > 0)
            .then(|| Diagnostic::unlisted(file, self.errors, self.warnings))
    }
}

/// Most characters of one problem's message: a message quoting a value of a hostile
/// document (a version of a megabyte) keeps its start and its end, where the fix is.
pub const MAX_MESSAGE_CHARS: usize = 4096;

/// `message`, with the middle of one longer than [`MAX_MESSAGE_CHARS`] left out and counted.
pub(crate) fn bounded(message: String) -> String {
    let count = message.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return message;
    }
    let (head, tail) = (MAX_MESSAGE_CHARS / 2, MAX_MESSAGE_CHARS / 4);
    let start: String = message.chars().take(head).collect();
    let end: String = message.chars().skip(count - tail).collect();
    format!(
        "{start}… ({} characters left out) …{end}",
        count - head - tail
    )
}

impl<'a> Findings<'a> {
    /// Starts collecting for `file`; `locations` maps pointers to line:column.
    pub fn new(file: &'a Path, locations: Option<&'a Locations>) -> Self {
        Findings {
            file,
            locations,
            out: Vec::new(),
            cap: Cap::default(),
        }
    }

    /// Counts `n` problems of `severity` that were found but not recorded one by one.
    pub fn count_unlisted(&mut self, severity: Severity, n: usize) {
        self.cap.count(severity, n);
    }

    /// The file being checked.
    pub fn file(&self) -> &Path {
        self.file
    }

    /// Records a problem at `pointer`.
    pub fn push(
        &mut self,
        severity: Severity,
        pointer: &str,
        code: &'static str,
        message: impl Into<String>,
    ) {
        if !self.cap.admit(severity) {
            return;
        }
        let pos = self.locations.map(|l| l.locate(pointer));
        self.out.push(Diagnostic {
            file: self.file.to_path_buf(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            pointer: pointer.to_string(),
            severity,
            code,
            message: bounded(message.into()),
        });
    }

    /// Records an error at `pointer`, placed at `pos` instead of where the value starts.
    pub fn error_at(
        &mut self,
        pos: Position,
        pointer: &str,
        code: &'static str,
        message: impl Into<String>,
    ) {
        if !self.cap.admit(Severity::Error) {
            return;
        }
        self.out.push(Diagnostic {
            pointer: pointer.to_string(),
            ..Diagnostic::at(
                self.file,
                pos,
                Severity::Error,
                code,
                bounded(message.into()),
            )
        });
    }

    /// Records an error at `pointer`.
    pub fn error(&mut self, pointer: &str, code: &'static str, message: impl Into<String>) {
        self.push(Severity::Error, pointer, code, message);
    }

    /// Records an error about the name of the key that ends `pointer`, not its value,
    /// placed where the key is written.
    pub fn error_key(&mut self, pointer: &str, code: &'static str, message: impl Into<String>) {
        match self.locations.map(|l| l.locate_key(pointer)) {
            Some(pos) => self.error_at(pos, pointer, code, message),
            None => self.error(pointer, code, message),
        }
    }

    /// Records a warning at `pointer`.
    pub fn warn(&mut self, pointer: &str, code: &'static str, message: impl Into<String>) {
        self.push(Severity::Warning, pointer, code, message);
    }

    /// True when an error has been recorded.
    pub fn has_errors(&self) -> bool {
        self.cap.unlisted_errors() > 0 || self.out.iter().any(|d| d.severity == Severity::Error)
    }

    /// The problems recorded: the first [`MAX_LISTED`], then one that counts the rest.
    pub fn finish(mut self) -> Vec<Diagnostic> {
        self.out.extend(self.cap.unlisted(self.file));
        self.out
    }
}

/// Gives each diagnostic at a spot of a JSON file (a pointer, no line yet) that spot's line
/// and column, as `validate` places its findings, reading each file once. `given` is a
/// file's document as it will be, when that is not what is on disk (pack's index before it
/// is written). `spot` says where the pointer's spot is in a file's document (`None`: it
/// has none, and the diagnostic keeps its pointer alone). A file that does not read or
/// parse leaves its diagnostics as they are.
pub(crate) fn place(
    diags: &mut [Diagnostic],
    given: Option<(&Path, &[u8])>,
    spot: impl Fn(&Path, &serde_json::Value, &str) -> Option<String>,
) {
    let mut documents: std::collections::BTreeMap<PathBuf, Option<crate::json::Parsed>> =
        std::collections::BTreeMap::new();
    for d in diags {
        if d.line.is_some() || d.pointer.is_empty() {
            continue;
        }
        let doc = documents
            .entry(d.file.clone())
            .or_insert_with(|| match given {
                Some((file, bytes)) if file == d.file => crate::json::parse(bytes).ok(),
                _ => crate::fs::read_limited(&d.file, crate::validate::MAX_DOCUMENT_BYTES)
                    .ok()
                    .and_then(|bytes| crate::json::parse(&bytes).ok()),
            });
        let Some(doc) = doc else {
            continue;
        };
        let pointer = spot(&d.file, &doc.value, &d.pointer);
        let Some(pointer) = pointer.filter(|p| doc.value.pointer(p).is_some()) else {
            continue;
        };
        let at = doc.locations.locate(&pointer);
        d.line = Some(at.line);
        d.column = Some(at.column);
        d.pointer = pointer;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_lists_its_first_problems_and_counts_the_rest() {
        let file = Path::new("index.json");
        let mut f = Findings::new(file, None);
        for _ in 0..MAX_LISTED {
            f.warn("", "w", "a warning");
        }
        assert!(!f.has_errors());
        f.error("/x", "e", "an error past the listed ones");
        f.count_unlisted(Severity::Warning, 2);
        assert!(f.has_errors(), "an error counted is still an error");
        let out = f.finish();
        assert_eq!(out.len(), MAX_LISTED + 1);
        let last = &out[MAX_LISTED];
        assert_eq!(
            (last.code, last.severity),
            ("problems-unlisted", Severity::Error)
        );
        assert!(
            last.message
                .starts_with("1 more error(s) and 2 more warning(s)"),
            "{}",
            last.message
        );
        assert!(Cap::default().unlisted(file).is_none());
    }
}
