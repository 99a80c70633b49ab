//! The one printer: data to stdout, messages to stderr, in text, JSON or GitHub
//! annotations; colour only on a terminal and never under `NO_COLOR`.

use crate::advice::Advice;
use crate::diagnostic::{Diagnostic, Severity};
use serde::{Serialize, Serializer};
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once anything has been written to stdout, so that an error ending the verb adds its
/// JSON error object only where no JSON document was started.
static WROTE_STDOUT: AtomicBool = AtomicBool::new(false);

/// Whether this process has written anything to stdout.
pub fn wrote_stdout() -> bool {
    WROTE_STDOUT.load(Ordering::Relaxed)
}

/// What `--format json` prints on stdout for an error that ends a verb before it has a
/// report: `{"error": {…}}`. Its shape is stable (README, "Exit codes").
#[derive(Debug, Serialize)]
pub struct ErrorReport<'a> {
    /// The error.
    pub error: ErrorObject<'a>,
}

/// The body of an [`ErrorReport`].
#[derive(Debug, Serialize)]
pub struct ErrorObject<'a> {
    /// The text of the `error:` line on stderr.
    pub message: String,
    /// The text of each `caused by:` line on stderr, in order (often none).
    pub causes: Vec<String>,
    /// The process exit code (1, 2 or 3).
    pub exit_code: u8,
    /// A short, stable machine name for the kind of error, such as `not-installed`.
    pub kind: &'static str,
    /// The per-file problems behind the error, as `validate` reports them (often none).
    pub diagnostics: &'a [Diagnostic],
}

/// How reports are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Lines for people.
    #[default]
    Text,
    /// One JSON document on stdout; its shape is stable.
    Json,
    /// GitHub Actions workflow commands (`::error file=…`), for `validate`.
    Github,
}

/// Writes everything a command prints.
#[derive(Debug, Clone)]
pub struct Printer {
    /// The report format.
    pub format: Format,
    /// Suppress messages on stderr (data still goes to stdout).
    pub quiet: bool,
    /// Colour on stdout, and on stderr: each is decided by whether it is a terminal.
    color: bool,
    color_err: bool,
    /// What the advice this printer prints must add (see [`crate::advice`]).
    advice: Advice,
}

impl Printer {
    /// A printer for `format`; colour is decided from the terminal and `NO_COLOR`.
    pub fn new(format: Format, quiet: bool) -> Self {
        let wanted =
            format == Format::Text && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Printer {
            format,
            quiet,
            color: wanted && io::stdout().is_terminal(),
            color_err: wanted && io::stderr().is_terminal(),
            advice: Advice::default(),
        }
    }

    /// This printer, completing the advice it prints with `advice`.
    pub fn advising(mut self, advice: &Advice) -> Self {
        self.advice = advice.clone();
        self
    }

    /// `text` with its advice completed (see [`crate::advice`]).
    pub fn advice(&self, text: &str) -> String {
        self.advice.complete(text)
    }

    /// `d` with its advice completed.
    fn advised(&self, d: &Diagnostic) -> Diagnostic {
        Diagnostic {
            message: self.advice(&d.message),
            ..d.clone()
        }
    }

    /// Writes a line of data to stdout, with terminal control characters escaped (see
    /// [`terminal_safe`]) and its advice completed.
    pub fn data(&self, line: &str) -> io::Result<()> {
        self.data_as_written(&self.advice(line))
    }

    /// [`Printer::data`] for a line holding what a hooks.json or a handler wrote (a command,
    /// a handler's answer or stderr): a `hookpack …` it quotes is theirs, shown as written.
    pub fn data_as_written(&self, line: &str) -> io::Result<()> {
        WROTE_STDOUT.store(true, Ordering::Relaxed);
        let mut out = io::stdout().lock();
        writeln!(out, "{}", terminal_safe(line))
    }

    /// Writes `value` as pretty JSON to stdout, its strings as they are (JSON escapes the
    /// C0 controls) but for the other characters [`terminal_safe`] escapes, which are
    /// written as `\uXXXX`: the document parses to the same text, and none of them reaches
    /// a terminal that shows it.
    ///
    /// The document is built whole before any of it is written: a value that cannot be
    /// serialized leaves stdout untouched (and free for the JSON error object), never
    /// holding part of a document.
    pub fn json<T: Serialize>(&self, value: &T) -> io::Result<()> {
        let mut doc = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut doc, TerminalSafeJson::new());
        if self.advice.is_empty() {
            value.serialize(&mut ser).map_err(io::Error::other)?;
        } else {
            let mut value = serde_json::to_value(value).map_err(io::Error::other)?;
            self.advice.complete_json(&mut value);
            value.serialize(&mut ser).map_err(io::Error::other)?;
        }
        doc.push(b'\n');
        WROTE_STDOUT.store(true, Ordering::Relaxed);
        let mut out = io::stdout().lock();
        out.write_all(&doc)?;
        out.flush()
    }

    /// Writes a message for people to stderr, unless quiet.
    pub fn message(&self, line: &str) {
        if !self.quiet {
            self.error_line(line);
        }
    }

    /// Writes a line to stderr even when quiet: an error, which is always shown.
    pub fn error_line(&self, line: &str) {
        let _ = writeln!(io::stderr().lock(), "{}", terminal_safe(&self.advice(line)));
    }

    /// Writes one diagnostic as a line of data to stdout, its severity coloured on a
    /// terminal.
    pub fn diagnostic(&self, d: &Diagnostic) -> io::Result<()> {
        WROTE_STDOUT.store(true, Ordering::Relaxed);
        // The line is terminal-safe already, apart from the colour added here.
        writeln!(
            io::stdout().lock(),
            "{}",
            diagnostic_line(&self.advised(d), self.color)
        )
    }

    /// Writes one diagnostic to stderr, even when quiet (errors are always shown), its
    /// severity coloured on a terminal.
    pub fn diagnostic_to_stderr(&self, d: &Diagnostic) {
        let _ = writeln!(
            io::stderr().lock(),
            "{}",
            diagnostic_line(&self.advised(d), self.color_err)
        );
    }
}

/// Serializes a path as the text [`Path::display`] gives, U+FFFD for bytes that are not
/// UTF-8, where serde would refuse the path and leave the document half written. Every
/// path in a report goes through it: `#[serde(serialize_with = "crate::output::path_text")]`.
pub fn path_text<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&path.display())
}

/// [`path_text`] for each path of a list.
pub fn paths_text<S: Serializer>(paths: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    struct Text<'a>(&'a Path);
    impl Serialize for Text<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            path_text(self.0, s)
        }
    }
    s.collect_seq(paths.iter().map(|p| Text(p)))
}

/// One diagnostic as a terminal-safe text line,
/// `file:line:col: error[code]: message (at /pointer)`, its severity in colour when `color`.
/// Where a diagnostic is: `file`, or `file:line:column`. One line: a line break in a file
/// name is shown escaped, so it cannot start a line that reads as another finding.
pub(crate) fn place(d: &Diagnostic) -> String {
    let mut place = escape_controls(&d.file.display().to_string(), &[]);
    if let (Some(l), Some(c)) = (d.line, d.column) {
        place.push_str(&format!(":{l}:{c}"));
    }
    place
}

fn diagnostic_line(d: &Diagnostic, color: bool) -> String {
    let paint = |s: &str, code: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let place = place(d);
    let sev = match d.severity {
        Severity::Error => paint("error", "1;31"),
        Severity::Warning => paint("warning", "1;33"),
    };
    let at = if d.pointer.is_empty() {
        String::new()
    } else {
        format!(" (at {})", escape_controls(&d.pointer, &[]))
    };
    format!(
        "{place}: {sev}[{}]: {}{at}",
        d.code,
        terminal_safe(&d.message)
    )
}

/// `s` with control characters other than tab and newline escaped (`\u{1b}`): text from an
/// index, an archive or a handler can then never move the cursor, retitle the terminal or
/// hide what came before it.
pub fn terminal_safe(s: &str) -> String {
    escape_controls(s, &['\t', '\n'])
}

/// `s` with every control character except those in `keep` escaped, and the invisible
/// characters that have no use inside text (zero-width space, word joiner, byte-order
/// mark): `\u{feff}work` would read as `work`. The zero-width joiners, which emoji and
/// several scripts need, are shown as they are.
pub fn escape_controls(s: &str, keep: &[char]) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if escaped(c) && !keep.contains(&c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `s`, JSON text (a line of `hooks.json`), with the characters [`escape_controls`] escapes
/// (but tab, which may indent it) escaped as JSON does (`\u2028`). Such characters stand
/// only inside JSON strings (JSON allows none elsewhere), where the escape means the same.
pub fn json_line_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if escaped(c) && c != '\t' {
            // All such characters are in the Basic Multilingual Plane: one `\uXXXX` each.
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether [`escape_controls`] escapes `c`: it is [`is_unsafe`], or invisible with no use
/// inside text.
fn escaped(c: char) -> bool {
    is_unsafe(c) || matches!(c, '\u{200B}' | '\u{2060}' | '\u{FEFF}')
}

/// Whether `c` must not reach a terminal as it is: a control character, or one that
/// reorders or breaks what is shown around it. Names hookpack takes (profile names, URLs)
/// may not hold such characters at all.
pub(crate) fn is_unsafe(c: char) -> bool {
    // Bidirectional overrides, isolates and marks reorder what is shown around them; the
    // line and paragraph separators break lines in some viewers.
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// The first character of one-line text (a recipe's `name` or `summary`) that breaks it or
/// reorders what is around it where it is listed (a control character, a bidirectional
/// override, embedding or isolate, a line or paragraph separator; not the marks LRM, RLM
/// and ALM, which right-to-left text needs), named with its place (counted in characters
/// from 1): `the bidirectional control U+202E at character 5`.
pub(crate) fn unsafe_in_line(text: &str) -> Option<String> {
    let (i, c) = text.chars().enumerate().find(|&(_, c)| {
        c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
    })?;
    let what = match c {
        '\u{2028}' => "the line separator",
        '\u{2029}' => "the paragraph separator",
        c if c.is_control() => "the control character",
        _ => "the bidirectional control",
    };
    Some(format!(
        "{what} U+{:04X} at character {}",
        u32::from(c),
        i + 1
    ))
}

/// serde_json's pretty layout, writing each character of a string that [`is_unsafe`] but
/// that JSON need not escape (DEL, C1 controls, bidirectional controls, line separators)
/// as a `\uXXXX` escape.
struct TerminalSafeJson(serde_json::ser::PrettyFormatter<'static>);

impl TerminalSafeJson {
    fn new() -> Self {
        TerminalSafeJson(serde_json::ser::PrettyFormatter::new())
    }
}

impl serde_json::ser::Formatter for TerminalSafeJson {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_unsafe(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // Every such character is in the Basic Multilingual Plane: one escape.
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

/// `file` as GitHub places an annotation: relative to the repository's checkout
/// (`$GITHUB_WORKSPACE`, else the current folder) when it is inside it; an absolute path
/// (`hookpack validate "$PWD/recipes"`) would name no file of the repository.
fn annotation_path(file: &Path) -> PathBuf {
    if !file.is_absolute() {
        return file.to_path_buf();
    }
    let base = std::env::var_os("GITHUB_WORKSPACE")
        .map(PathBuf::from)
        .filter(|b| b.is_absolute())
        .or_else(|| std::env::current_dir().ok());
    base.and_then(|b| file.strip_prefix(b).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .map_or_else(|| file.to_path_buf(), Path::to_path_buf)
}

/// Formats one diagnostic as a GitHub Actions workflow command.
pub fn github_annotation(d: &Diagnostic) -> String {
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut props = format!(
        "file={}",
        github_prop(&annotation_path(&d.file).display().to_string())
    );
    if let (Some(l), Some(c)) = (d.line, d.column) {
        props.push_str(&format!(",line={l},col={c}"));
    }
    props.push_str(&format!(
        ",title={}",
        github_prop(&format!("hookpack {}", d.code))
    ));
    let at = if d.pointer.is_empty() {
        String::new()
    } else {
        format!(" (at {})", d.pointer)
    };
    format!(
        "::{level} {props}::{}",
        github_data(&format!("{}{at}", d.message))
    )
}

/// The GitHub Actions workflow command for an error that ended a command, of kind `kind`
/// (as `--format json` names it), with no file to put it on.
pub fn github_error(kind: &str, message: &str) -> String {
    format!(
        "::error title={}::{}",
        github_prop(&format!("hookpack {kind}")),
        github_data(message)
    )
}

/// A workflow command's property value, escaped.
fn github_prop(s: &str) -> String {
    github_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A workflow command's message, escaped.
fn github_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_are_not_utf8_serialize_as_display_shows_them() {
        use std::os::unix::ffi::OsStrExt as _;
        #[derive(Serialize)]
        struct Paths {
            #[serde(serialize_with = "path_text")]
            one: PathBuf,
            #[serde(serialize_with = "paths_text")]
            all: Vec<PathBuf>,
        }
        let bad = PathBuf::from(std::ffi::OsStr::from_bytes(b"a/b\xff\xfec"));
        let value = Paths {
            one: bad.clone(),
            all: vec![PathBuf::from("ok"), bad],
        };
        assert_eq!(
            serde_json::to_value(&value).unwrap(),
            serde_json::json!({"one": "a/b\u{fffd}\u{fffd}c", "all": ["ok", "a/b\u{fffd}\u{fffd}c"]})
        );
    }

    #[test]
    fn json_strings_parse_to_the_same_text_with_no_unsafe_character_raw() {
        let text = "a\x1b[2J\x07\x7f\u{9b}\u{202e}\u{2066}\u{200f}\u{2028}\u{2029}\u{61c}\n\té€😀b";
        let value = serde_json::json!({ text: [text, 1] });
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, TerminalSafeJson::new());
        value.serialize(&mut ser).unwrap();
        let shown = String::from_utf8(out).unwrap();
        assert!(
            !shown.chars().any(|c| is_unsafe(c) && c != '\n'),
            "{shown:?}"
        );
        assert!(shown.contains(r"\u009b\u202e\u2066"), "{shown}");
        assert!(shown.contains("é€😀b"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
        // The layout is serde_json's pretty one.
        let plain = serde_json::json!({"k": [1, {"a": "b"}], "e": {}});
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, TerminalSafeJson::new());
        plain.serialize(&mut ser).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string_pretty(&plain).unwrap()
        );
    }
}
