//! A JSON reader that keeps what `serde_json` throws away.
//!
//! hookpack must say *where* a problem is: the line and column of every JSON pointer, and
//! every duplicated key (serde_json keeps the last one silently, so a user's first value
//! would vanish without a word). This module parses bytes into a [`serde_json::Value`]
//! (objects keep their key order) plus a parallel tree of positions.
//!
//! It refuses, with a line:column: invalid UTF-8, a byte-order mark, nesting deeper than
//! [`MAX_DEPTH`], keys on one path longer than [`MAX_POINTER_BYTES`], more than
//! [`MAX_VALUES`] values, control characters in strings, lone surrogates, numbers out of range and
//! trailing data. It never recurses deeper than [`MAX_DEPTH`], so hostile nesting cannot
//! overflow the stack.

use serde_json::{Map, Number, Value};

/// Deepest nesting accepted. Real hook documents are under ten levels deep.
pub const MAX_DEPTH: usize = 128;

/// Longest JSON pointer to a value, in bytes: the keys on one path added up. Every
/// value's pointer is built (and kept, for a key given twice), so a long key over many
/// values would cost its length for each of them.
pub const MAX_POINTER_BYTES: usize = 16 * 1024;

/// Most keys given twice, and most inexact numbers, recorded for one document; the rest of
/// the keys given twice are counted ([`Parsed::more_duplicates`]). More would only be
/// listed as far as [`crate::diagnostic::MAX_LISTED`] anyway.
pub const MAX_RECORDED: usize = 1000;

/// Most values (objects, arrays, strings, numbers, literals) in one document. Each costs
/// about 350 bytes once parsed, with its position (an index of this many values peaks at
/// about 350 MB), so a 64 MiB index of `0,0,0,…` would take gigabytes; a catalog of this
/// many values lists over 160,000 versions.
pub const MAX_VALUES: usize = 1_000_000;

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

/// Where each value of a document starts, shaped like the document.
#[derive(Debug, Clone)]
pub enum Locations {
    /// A string, number, boolean or null.
    Leaf(Position),
    /// An array and the location of each element.
    Array(Position, Vec<Locations>),
    /// An object and, per key, where the key starts and where its value is.
    Object(Position, Vec<(String, Position, Locations)>),
}

impl Locations {
    /// Where this value starts.
    pub fn position(&self) -> Position {
        match self {
            Locations::Leaf(p) | Locations::Array(p, _) | Locations::Object(p, _) => *p,
        }
    }

    /// The position of the value at `pointer` (RFC 6901). When the pointer names something
    /// that is not there (a missing field), the position of the nearest ancestor is given,
    /// which is where the user has to add it.
    pub fn locate(&self, pointer: &str) -> Position {
        let mut here = self;
        if pointer.is_empty() {
            return here.position();
        }
        for raw in pointer.split('/').skip(1) {
            match here.child(&unescape(raw)) {
                Some(loc) => here = loc,
                None => break,
            }
        }
        here.position()
    }

    /// Where the key that ends `pointer` is written (`"A"` of `{"A": 1}`, for `/A`): the
    /// spot of a problem with a name rather than with its value. When the pointer ends at
    /// an array element or names nothing there, as [`Locations::locate`] gives it.
    pub fn locate_key(&self, pointer: &str) -> Position {
        let key = pointer.rsplit_once('/').and_then(|(parent, last)| {
            let mut here = self;
            for raw in parent.split('/').skip(1) {
                here = here.child(&unescape(raw))?;
            }
            let Locations::Object(_, members) = here else {
                return None;
            };
            let token = unescape(last);
            members
                .iter()
                .rev()
                .find(|(k, _, _)| *k == token)
                .map(|(_, at, _)| *at)
        });
        key.unwrap_or_else(|| self.locate(pointer))
    }

    /// The member `token` of this object, or element of this array; the last of a key
    /// given twice, whose value readers keep.
    fn child(&self, token: &str) -> Option<&Locations> {
        match self {
            Locations::Object(_, members) => members
                .iter()
                .rev()
                .find(|(k, _, _)| k == token)
                .map(|(_, _, loc)| loc),
            Locations::Array(_, items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Locations::Leaf(_) => None,
        }
    }
}

/// A reference token of a JSON pointer as the key it names (`~1` is `/`, `~0` is `~`).
fn unescape(raw: &str) -> String {
    raw.replace("~1", "/").replace("~0", "~")
}

/// A key that appears twice in one object.
#[derive(Debug, Clone)]
pub struct DuplicateKey {
    /// Pointer to the object holding the key.
    pub object_pointer: String,
    /// The key.
    pub key: String,
    /// Where the key first appears.
    pub first: Position,
    /// Where it appears again.
    pub again: Position,
}

impl DuplicateKey {
    /// Where the key is given twice: `at 2:5 and 3:5 (in /hooks)`, the object named by its
    /// pointer (`/` for the document).
    pub fn spots(&self) -> String {
        let object = if self.object_pointer.is_empty() {
            "/"
        } else {
            &self.object_pointer
        };
        format!(
            "at {}:{} and {}:{} (in {object})",
            self.first.line, self.first.column, self.again.line, self.again.column
        )
    }
}

/// A parsed document.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The value; for a duplicated key the last value wins, as in every JSON reader.
    pub value: Value,
    /// Where every value sits.
    pub locations: Locations,
    /// Keys given more than once (the first [`MAX_RECORDED`]).
    pub duplicates: Vec<DuplicateKey>,
    /// Keys given more than once past those recorded.
    pub more_duplicates: usize,
    /// Numbers that would not be written back with the value they were read with.
    pub inexact: Vec<InexactNumber>,
}

/// A number that a read-modify-write would change: more significant digits than a 64-bit
/// integer or float holds (`12345678901234567890123`, `0.1000000000000000000001`), which
/// would be written back rounded (`1.2345678901234568e22`, `0.1`).
#[derive(Debug, Clone)]
pub struct InexactNumber {
    /// Where it is.
    pub position: Position,
    /// Its pointer.
    pub pointer: String,
    /// The number as written in the file.
    pub text: String,
    /// What writing the parsed value back would give.
    pub written: String,
}

/// Why a document is not JSON, and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{position_line}:{position_column}: {message}", position_line = .position.line, position_column = .position.column)]
pub struct SyntaxError {
    /// Where the problem is.
    pub position: Position,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl SyntaxError {
    /// True when the document may be valid JSON, only nested deeper than [`MAX_DEPTH`].
    pub fn is_too_deep(&self) -> bool {
        self.message.starts_with(TOO_DEEP)
    }

    /// True when the document may be valid JSON, only larger than hookpack reads: more than
    /// [`MAX_VALUES`] values, or more than [`MAX_POINTER_BYTES`] of keys on one path.
    pub fn is_too_large(&self) -> bool {
        self.message.starts_with(TOO_MANY) || self.message.starts_with(TOO_LONG)
    }

    /// True when JavaScript's `JSON.parse` would read the document all the same: it is
    /// only past one of hookpack's limits, or holds what this reader refuses and
    /// `JSON.parse` takes (a lone surrogate escape, a number past f64's range).
    pub fn javascript_reads(&self) -> bool {
        self.valid_but_refused().is_some()
    }

    /// What to say of a document that is valid JSON, which a host may well read, but that
    /// hookpack refuses: past one of its limits ([`SyntaxError::past_limit`]), or holding
    /// what its strings and numbers cannot hold (a lone surrogate escape, a number past
    /// f64's range); `None` when it is not valid JSON.
    pub fn valid_but_refused(&self) -> Option<&'static str> {
        if let Some(limit) = self.past_limit() {
            Some(limit)
        } else if self.message.contains(SURROGATE) {
            Some(
                "it holds a lone surrogate escape, which JSON's grammar allows but which is no \
                 Unicode character, so hookpack cannot read the string (a pair such as \
                 `\\ud83d\\ude00` is one character, and `\\ufffd` stands for one lost)",
            )
        } else if self.message.starts_with("number `") && self.message.ends_with(OUT_OF_RANGE) {
            Some("it holds a number past the range of a 64-bit float, which hookpack does not read")
        } else {
            None
        }
    }

    /// What to say of a document refused past one of hookpack's limits (valid JSON a host
    /// may well read), or `None` when it is not valid JSON.
    pub fn past_limit(&self) -> Option<&'static str> {
        if self.is_too_deep() {
            Some("it is nested deeper than hookpack reads")
        } else if self.message.starts_with(TOO_LONG) {
            Some("its keys on one path are longer than hookpack reads")
        } else if self.is_too_large() {
            Some("it holds more values than hookpack reads")
        } else {
            None
        }
    }
}

/// What the errors for lone surrogate escapes hold.
const SURROGATE: &str = "surrogate";

/// How the error for a number past f64's range ends.
const OUT_OF_RANGE: &str = "is out of range";

/// How the error for nesting past [`MAX_DEPTH`] begins.
const TOO_DEEP: &str = "nesting is deeper than";

/// How the error for more than [`MAX_VALUES`] values begins.
const TOO_MANY: &str = "the document holds more than";

/// What a value may be, for a byte that starts none.
const NOT_A_VALUE: &str =
    "expected a JSON value (object, array, string, number, true, false or null)";

/// How the error for keys past [`MAX_POINTER_BYTES`] on one path begins.
const TOO_LONG: &str = "the keys on one path add up to more than";

/// Parses a complete document.
pub fn parse(bytes: &[u8]) -> Result<Parsed, SyntaxError> {
    parse_with(bytes, false)
}

/// Parses a complete document as [`parse`] does, but reads a number past f64's range
/// (`1e400`, which `JSON.parse` reads as Infinity) as the largest finite float of its sign,
/// recorded in [`Parsed::inexact`] (so a rewrite refuses it), rather than refusing the
/// document: a `hooks.json` with such a `timeout` is one handler's problem, reported at its
/// place, as a `timeout` of `1e30` is.
pub fn parse_reading_huge_numbers(bytes: &[u8]) -> Result<Parsed, SyntaxError> {
    parse_with(bytes, true)
}

/// Parses a complete document as `JSON.parse` reads it, within hookpack's limits: a number
/// past f64's range as [`parse_reading_huge_numbers`] reads it, and a lone surrogate escape
/// as U+FFFD. For a handler's answer, which a host reads so: an answer a host takes for a
/// deny must not be a failure here.
pub fn parse_as_javascript(bytes: &[u8]) -> Result<Parsed, SyntaxError> {
    parse_with_options(bytes, true, true)
}

fn parse_with(bytes: &[u8], huge_numbers: bool) -> Result<Parsed, SyntaxError> {
    parse_with_options(bytes, huge_numbers, false)
}

fn parse_with_options(
    bytes: &[u8],
    huge_numbers: bool,
    lone_surrogates: bool,
) -> Result<Parsed, SyntaxError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(SyntaxError {
            position: Position { line: 1, column: 1 },
            message: "the file starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM"
                .into(),
        });
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let good = e.valid_up_to();
            let mut p = Parser::new(&bytes[..good]);
            p.skip_to_end_counting();
            return Err(SyntaxError {
                position: p.position(),
                message: "invalid UTF-8 byte; JSON files must be UTF-8 text".into(),
            });
        }
    };
    let mut p = Parser::new(text.as_bytes());
    p.huge_numbers = huge_numbers;
    p.lone_surrogates = lone_surrogates;
    p.skip_ws();
    let (value, locations) = p.value(0, "")?;
    p.skip_ws();
    if p.pos < p.bytes.len() {
        return Err(p.error("unexpected data after the end of the JSON value"));
    }
    Ok(Parsed {
        value,
        locations,
        duplicates: p.duplicates,
        more_duplicates: p.more_duplicates,
        inexact: p.inexact,
    })
}

/// `map` in a map of its own size: one grown key by key holds room for up to twice as
/// many, which over a document of many small objects (an index's versions) is most of
/// its memory.
fn exact(mut map: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(map.len());
    out.append(&mut map);
    out
}

/// `value` as a message quotes it: as JSON, except a whole number past what hookpack reads
/// as an integer (2^64 and up, or below -2^63), which serde_json holds as a float and would
/// print in a form the file does not hold (`1e+20`).
pub fn shown_value(value: &Value) -> String {
    match value.as_f64() {
        Some(x) if value.is_f64() && x.fract() == 0.0 && x >= 18_446_744_073_709_551_616.0 => {
            format!("a whole number past {}", u64::MAX)
        }
        Some(x) if value.is_f64() && x.fract() == 0.0 && x < -9_223_372_036_854_775_808.0 => {
            format!("a whole number below {}", i64::MIN)
        }
        _ => value.to_string(),
    }
}

/// serde_json's message without the ` at line L column C` it appends (the caller
/// gives the place), in JSON's words rather than Rust's (`expected i32` is an integer).
pub fn serde_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let text = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
    // Only serde's own words, at the ends of its message (a quoted key may hold the same).
    let mut text = match text.strip_prefix("invalid type: ") {
        Some(rest) => {
            let rest = (rest.strip_prefix("sequence,").map(|r| format!("array,{r}")))
                .or_else(|| rest.strip_prefix("map,").map(|r| format!("object,{r}")))
                .unwrap_or_else(|| rest.to_string());
            format!("invalid type: {rest}")
        }
        None => text,
    };
    for (rust, json) in [
        ("expected i32", "expected an integer"),
        ("expected a map", "expected an object"),
    ] {
        if let Some(head) = text.strip_suffix(rust) {
            text = format!("{head}{json}");
        }
    }
    // `expected struct TrustFile`: the name is Rust's, the value an object.
    if let Some((head, name)) = text.rsplit_once("expected struct ") {
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()) {
            text = format!("{head}expected an object");
        }
    }
    text
}

/// Appends one reference token to a JSON pointer, escaping `~` and `/`.
pub fn pointer_push(base: &str, token: &str) -> String {
    let mut s = String::with_capacity(base.len() + token.len() + 1);
    s.push_str(base);
    s.push('/');
    for c in token.chars() {
        match c {
            '~' => s.push_str("~0"),
            '/' => s.push_str("~1"),
            c => s.push(c),
        }
    }
    s
}

/// A JSON number's exact value as (negative, significant digits, power of ten), so that
/// `1E2` and `100.0` compare equal and `12345678901234567890123` and
/// `1.2345678901234568e22` do not. `None` for an exponent too large to hold, which no
/// finite parsed value keeps.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Some((negative, String::new(), 0));
    }
    let exp = exp.parse::<i64>().ok()?;
    let trimmed = digits.trim_end_matches('0');
    let zeros = (digits.len() - trimmed.len()) as i64;
    let power = exp.checked_sub(frac.len() as i64)?.checked_add(zeros)?;
    Some((negative, trimmed.to_string(), power))
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    column: u32,
    duplicates: Vec<DuplicateKey>,
    more_duplicates: usize,
    inexact: Vec<InexactNumber>,
    /// Values started so far.
    values: usize,
    /// Read a number past f64's range as the largest float of its sign.
    huge_numbers: bool,
    /// Read a lone surrogate escape as U+FFFD, as `JSON.parse` reads it (into a string
    /// holding one, which a Rust string cannot).
    lone_surrogates: bool,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Parser {
            bytes,
            pos: 0,
            line: 1,
            column: 1,
            duplicates: Vec::new(),
            more_duplicates: 0,
            inexact: Vec::new(),
            values: 0,
            huge_numbers: false,
            lone_surrogates: false,
        }
    }

    fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            position: self.position(),
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Moves one byte on, keeping line and column (in characters) current.
    fn bump(&mut self) {
        let b = self.bytes[self.pos];
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else if b & 0xC0 != 0x80 {
            self.column += 1;
        }
    }

    fn skip_to_end_counting(&mut self) {
        while self.pos < self.bytes.len() {
            self.bump();
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.bump();
        }
    }

    fn expect_literal(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            for _ in 0..word.len() {
                self.bump();
            }
            Ok(value)
        } else {
            // The hint is for a near miss (`nul`, `ture`, `fals` cut short); any other word
            // (`not json`, an unquoted `test`) is no misspelt literal.
            let written: String = self.bytes[self.pos..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .take(64)
                .map(|&b| b as char)
                .collect();
            if word.starts_with(&written) || crate::event::edit_distance(&written, word) <= 2 {
                Err(self.error(format!(
                    "expected a JSON value here (did you mean `{word}`?)"
                )))
            } else {
                Err(self.error(NOT_A_VALUE))
            }
        }
    }

    fn value(&mut self, depth: usize, pointer: &str) -> Result<(Value, Locations), SyntaxError> {
        let at = self.position();
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(self.error(format!(
                "{TOO_MANY} {MAX_VALUES} values (objects, arrays, strings, numbers); no hook document needs that many"
            )));
        }
        match self.peek() {
            None => Err(self.error("unexpected end of file; the document is empty or cut short")),
            Some(b'{') => self.object(depth, pointer),
            Some(b'[') => self.array(depth, pointer),
            Some(b'"') => Ok((Value::String(self.string()?), Locations::Leaf(at))),
            Some(b't') => Ok((
                self.expect_literal("true", Value::Bool(true))?,
                Locations::Leaf(at),
            )),
            Some(b'f') => Ok((
                self.expect_literal("false", Value::Bool(false))?,
                Locations::Leaf(at),
            )),
            Some(b'n') => Ok((
                self.expect_literal("null", Value::Null)?,
                Locations::Leaf(at),
            )),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.pos;
                let n = self.number()?;
                // Only ASCII digits and signs were consumed, so the slice is valid UTF-8.
                let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("0");
                let written = n.to_string();
                if decimal(text) != decimal(&written) && self.inexact.len() < MAX_RECORDED {
                    self.inexact.push(InexactNumber {
                        position: at,
                        pointer: pointer.to_string(),
                        text: text.to_string(),
                        written,
                    });
                }
                Ok((Value::Number(n), Locations::Leaf(at)))
            }
            Some(b'\'') => {
                Err(self.error("strings must use double quotes (\"), not single quotes"))
            }
            Some(b'/') => Err(self.error("comments are not allowed in JSON")),
            Some(_) => Err(self.error(NOT_A_VALUE)),
        }
    }

    fn enter(&self, depth: usize) -> Result<(), SyntaxError> {
        if depth >= MAX_DEPTH {
            Err(self.error(format!(
                "{TOO_DEEP} {MAX_DEPTH} levels; no hook document needs that"
            )))
        } else {
            Ok(())
        }
    }

    /// The pointer of `token` below `pointer`, refused past [`MAX_POINTER_BYTES`].
    fn pointer_to(&self, pointer: &str, token: &str) -> Result<String, SyntaxError> {
        let child = pointer_push(pointer, token);
        if child.len() > MAX_POINTER_BYTES {
            return Err(self.error(format!(
                "{TOO_LONG} {MAX_POINTER_BYTES} bytes; no hook document needs that (shorten the keys)"
            )));
        }
        Ok(child)
    }

    fn object(&mut self, depth: usize, pointer: &str) -> Result<(Value, Locations), SyntaxError> {
        self.enter(depth)?;
        let at = self.position();
        self.bump(); // {
        let mut map = Map::new();
        // A key given again moves to the end, as the last value wins: its earlier slot is
        // emptied (found through `slot`) rather than searched for, so an object of many
        // keys, or one key given many times, is read in linear time.
        let mut members: Vec<Option<(String, Position, Locations)>> = Vec::new();
        let mut slot: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let members_of = |members: Vec<Option<_>>| {
            let mut kept: Vec<_> = members.into_iter().flatten().collect();
            kept.shrink_to_fit();
            kept
        };
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok((Value::Object(map), Locations::Object(at, Vec::new())));
        }
        loop {
            self.skip_ws();
            let key_at = self.position();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') => {
                    return Err(self.error("trailing comma before `}`; remove the last comma"))
                }
                None => {
                    return Err(
                        self.error("unexpected end of file inside an object; a `}` is missing")
                    )
                }
                _ => return Err(self.error("expected a key in double quotes")),
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after the key"));
            }
            self.bump();
            self.skip_ws();
            let child_pointer = self.pointer_to(pointer, &key)?;
            let (value, loc) = self.value(depth + 1, &child_pointer)?;
            if let Some(earlier) = slot.get(&key).and_then(|&i| members[i].take()) {
                if self.duplicates.len() < MAX_RECORDED {
                    self.duplicates.push(DuplicateKey {
                        object_pointer: pointer.to_string(),
                        key: key.clone(),
                        first: earlier.1,
                        again: key_at,
                    });
                } else {
                    self.more_duplicates += 1;
                }
            }
            map.insert(key.clone(), value);
            slot.insert(key.clone(), members.len());
            members.push(Some((key, key_at, loc)));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok((
                        Value::Object(exact(map)),
                        Locations::Object(at, members_of(members)),
                    ));
                }
                None => {
                    return Err(
                        self.error("unexpected end of file inside an object; a `}` is missing")
                    )
                }
                _ => return Err(self.error("expected `,` or `}` after an object member")),
            }
        }
    }

    fn array(&mut self, depth: usize, pointer: &str) -> Result<(Value, Locations), SyntaxError> {
        self.enter(depth)?;
        let at = self.position();
        self.bump(); // [
        let mut items = Vec::new();
        let mut locs = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok((Value::Array(items), Locations::Array(at, locs)));
        }
        loop {
            self.skip_ws();
            if self.peek() == Some(b']') {
                return Err(self.error("trailing comma before `]`; remove the last comma"));
            }
            let child_pointer = self.pointer_to(pointer, &items.len().to_string())?;
            let (value, loc) = self.value(depth + 1, &child_pointer)?;
            items.push(value);
            locs.push(loc);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    items.shrink_to_fit();
                    locs.shrink_to_fit();
                    return Ok((Value::Array(items), Locations::Array(at, locs)));
                }
                None => {
                    return Err(
                        self.error("unexpected end of file inside an array; a `]` is missing")
                    )
                }
                _ => return Err(self.error("expected `,` or `]` after an array element")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b) if b.is_ascii_hexdigit() => (b as char).to_digit(16).unwrap_or(0),
                _ => return Err(self.error("`\\u` must be followed by four hex digits")),
            };
            v = v * 16 + d;
            self.bump();
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.bump(); // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            // Copy a run of plain characters in one go.
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.bump();
            }
            // The input was checked as UTF-8 and runs end on ASCII bytes, so this slice is valid.
            out.push_str(std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or_default());
            match self.peek() {
                None => {
                    return Err(self.error(
                        "unexpected end of file inside a string; a closing `\"` is missing",
                    ))
                }
                Some(b'"') => {
                    self.bump();
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.bump();
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.bump();
                            let hi = self.hex4()?;
                            let lone = |p: &Self| match p.lone_surrogates {
                                true => Ok(0xFFFD),
                                false => Err(p.error("lone surrogate in a `\\u` escape")),
                            };
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.bytes[self.pos..].starts_with(b"\\u") {
                                    self.bump();
                                    self.bump();
                                    let lo = self.hex4()?;
                                    if (0xDC00..0xE000).contains(&lo) {
                                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                    } else if self.lone_surrogates {
                                        // The high one lost, then the escape after it.
                                        out.push('\u{FFFD}');
                                        if (0xD800..0xE000).contains(&lo) {
                                            0xFFFD
                                        } else {
                                            lo
                                        }
                                    } else {
                                        return Err(self.error("a high surrogate `\\u` escape must be followed by a low surrogate"));
                                    }
                                } else {
                                    lone(self)?
                                }
                            } else if (0xDC00..0xE000).contains(&hi) {
                                lone(self)?
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => out.push(c),
                                None => return Err(self.error("invalid `\\u` escape")),
                            }
                            continue;
                        }
                        _ => return Err(self.error(
                            "invalid escape; use one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
                        )),
                    };
                    self.bump();
                    out.push(c);
                }
                Some(_) => {
                    return Err(self
                        .error("control character inside a string; escape it (e.g. \\n or \\t)"));
                }
            }
        }
    }

    fn number(&mut self) -> Result<Number, SyntaxError> {
        let start = self.pos;
        let start_pos = self.position();
        let bad = |p: &Self| SyntaxError {
            position: start_pos,
            message: format!(
                "invalid number `{}`",
                String::from_utf8_lossy(&p.bytes[start..p.pos.max(start + 1).min(p.bytes.len())])
            ),
        };
        let mut integer = true;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => {
                self.bump();
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(SyntaxError {
                        position: start_pos,
                        message: "numbers must not have leading zeros".into(),
                    });
                }
            }
            Some(b'1'..=b'9') => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.bump();
                }
            }
            _ => return Err(bad(self)),
        }
        if self.peek() == Some(b'.') {
            integer = false;
            self.bump();
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(bad(self));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.bump();
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integer = false;
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(bad(self));
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.bump();
            }
        }
        // Only ASCII digits and signs were consumed, so the slice is valid UTF-8.
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("0");
        if integer {
            if let Ok(v) = text.parse::<u64>() {
                return Ok(Number::from(v));
            }
            // `-0` is a float in serde_json (negative zero), not the integer 0.
            if let Some(v) = text.parse::<i64>().ok().filter(|v| *v != 0) {
                return Ok(Number::from(v));
            }
        }
        let parsed = text.parse::<f64>().ok();
        let parsed = match parsed {
            Some(x) if x.is_infinite() && self.huge_numbers => Some(f64::MAX.copysign(x)),
            other => other,
        };
        parsed
            .and_then(Number::from_f64)
            .ok_or_else(|| SyntaxError {
                position: start_pos,
                message: format!("number `{text}` {OUT_OF_RANGE}"),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_key_is_said_to_be_one_not_deep_nesting() {
        let key = "k".repeat(MAX_POINTER_BYTES + 1);
        let e = parse(format!("{{\"{key}\": 1}}").as_bytes()).unwrap_err();
        assert!(e.is_too_large() && !e.is_too_deep(), "{}", e.message);
        assert!(!e.message.contains("nesting"), "{}", e.message);
        assert!(e.message.contains("keys on one path"), "{}", e.message);
        assert_eq!(
            e.past_limit(),
            Some("its keys on one path are longer than hookpack reads")
        );
        let deep = parse("[".repeat(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert_eq!(
            deep.past_limit(),
            Some("it is nested deeper than hookpack reads")
        );
        assert_eq!(parse(b"{,}").unwrap_err().past_limit(), None);
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let doc = "{\n  \"a\": [1, {\"é\": true}],\n  \"b\": \"x\"\n}";
        let p = parse(doc.as_bytes()).unwrap();
        assert_eq!(
            p.locations.locate("/a/1/é"),
            Position {
                line: 2,
                column: 18
            }
        );
        assert_eq!(p.locations.locate("/b"), Position { line: 3, column: 8 });
        // A missing member points at the nearest ancestor.
        assert_eq!(
            p.locations.locate("/a/1/missing"),
            Position {
                line: 2,
                column: 12
            }
        );
    }

    #[test]
    fn keys_are_located_where_they_are_written() {
        let doc = "{\n  \"a\": [1, {\"é\": true, \"\": 0}],\n  \"b/c\": \"x\"\n}";
        let p = parse(doc.as_bytes()).unwrap();
        let at = |line, column| Position { line, column };
        assert_eq!(p.locations.locate_key("/a/1/é"), at(2, 13));
        assert_eq!(p.locations.locate_key("/a/1/"), at(2, 24));
        assert_eq!(p.locations.locate_key("/b~1c"), at(3, 3));
        assert_eq!(p.locations.locate_key("/a"), at(2, 3));
        // An element has no key, and a missing member points at the nearest ancestor.
        assert_eq!(p.locations.locate_key("/a/0"), at(2, 9));
        assert_eq!(p.locations.locate_key("/a/1/missing"), at(2, 12));
        assert_eq!(p.locations.locate_key("/x/y"), at(1, 1));
        assert_eq!(p.locations.locate_key(""), at(1, 1));
    }

    #[test]
    fn numbers_past_f64_are_refused_or_read_as_the_largest_float() {
        let doc = b"{\"a\": [1e400, -1e400]}";
        let e = parse(doc).unwrap_err();
        assert!(
            e.message.ends_with(OUT_OF_RANGE) && e.javascript_reads(),
            "{e}"
        );
        let p = parse_reading_huge_numbers(doc).unwrap();
        assert_eq!(p.value["a"], serde_json::json!([f64::MAX, -f64::MAX]));
        let found: Vec<_> = (p.inexact.iter())
            .map(|n| (n.pointer.as_str(), n.text.as_str()))
            .collect();
        assert_eq!(found, [("/a/0", "1e400"), ("/a/1", "-1e400")]);
    }

    #[test]
    fn numbers_written_back_with_other_digits_are_inexact() {
        for same in [
            "1E2",
            "100.0",
            "1e+2",
            "0.10",
            "-0",
            "0e99999999999999999999",
        ] {
            let p = parse(format!("[{same}]").as_bytes()).unwrap();
            assert!(p.inexact.is_empty(), "{same}: {:?}", p.inexact);
        }
        let p = parse(b"{\"a\": [12345678901234567890123, 1e-99999999999999999999]}").unwrap();
        let found: Vec<_> = p
            .inexact
            .iter()
            .map(|n| (n.pointer.as_str(), n.text.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("/a/0", "12345678901234567890123"),
                ("/a/1", "1e-99999999999999999999")
            ]
        );
        assert_eq!(p.inexact[0].written, "1.2345678901234568e+22");
    }

    #[test]
    fn duplicate_keys_are_reported_and_last_wins() {
        let p = parse(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(p.value["a"], 3);
        assert_eq!(p.duplicates.len(), 1);
        assert_eq!(p.duplicates[0].key, "a");
        assert_eq!(p.duplicates[0].first.column, 2);
        assert_eq!(p.duplicates[0].again.column, 18);
        // Key order is the order of first appearance, as serde_json's preserve_order keeps it.
        let keys: Vec<_> = p.value.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion_blowup() {
        let doc = "[".repeat(100_000);
        let e = parse(doc.as_bytes()).unwrap_err();
        assert!(e.message.contains("deeper than 128"), "{e}");
    }

    #[test]
    fn invalid_utf8_is_located() {
        let e = parse(b"{\"a\":\n \"\xff\"}").unwrap_err();
        assert_eq!(e.position, Position { line: 2, column: 3 });
    }

    #[test]
    fn agrees_with_serde_json_on_valid_input() {
        let doc = r#"{"s":"a\"b\\c\u00e9\ud83d\ude00\n","n":[0,-0,-1,1.5,2e3,18446744073709551615,-9223372036854775808],"t":true,"f":false,"z":null}"#;
        let ours = parse(doc.as_bytes()).unwrap().value;
        let theirs: Value = serde_json::from_str(doc).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn syntax_errors_are_located() {
        for (doc, line, column) in [
            ("{\n \"a\": 1,\n}", 3, 1),
            ("[1 2]", 1, 4),
            ("{\"a\": 01}", 1, 7),
            ("{\"a\": \"x\n\"}", 1, 9),
            ("{} x", 1, 4),
            ("", 1, 1),
            ("\"\\ud800\"", 1, 8),
        ] {
            let e = parse(doc.as_bytes()).unwrap_err();
            assert_eq!(
                (e.position.line, e.position.column),
                (line, column),
                "{doc:?}: {e}"
            );
        }
    }
}
