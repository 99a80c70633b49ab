//! `hooks.json`: the event → matcher group → handler document that hosts read.
//!
//! Two things live here. The typed view ([`HooksFile`], [`Group`], [`Handler`]) is what a
//! host or the runner works with. The checker ([`check_hooks_map`]) reports every rule of
//! SPEC 1.1 at its JSON pointer; hosts skip a bad handler silently, so this is where a user
//! learns why a handler never ran. Edits of users' files never go through the typed view:
//! they operate on the [`serde_json::Value`] (which keeps key order), so fields hookpack
//! does not know survive a read-modify-write untouched and in place.

use crate::diagnostic::{Diagnostic, Findings};
use crate::event::Event;
use crate::id::Id;
use crate::json::pointer_push;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// Default handler timeout in seconds.
pub const DEFAULT_TIMEOUT: u64 = 30;

/// A whole `hooks.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HooksFile {
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Event name → groups, in file order.
    #[serde(default)]
    pub hooks: IndexMap<String, Vec<Group>>,
    /// Fields hookpack does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A matcher group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Whole-string regular expression on the match string; absent or `*` matches all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The handlers, run in order.
    #[serde(default)]
    pub hooks: Vec<Handler>,
    /// Fields hookpack does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One command handler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handler {
    /// Always `command`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The shell command.
    pub command: String,
    /// Seconds before the handler is killed; [`DEFAULT_TIMEOUT`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Fire and forget.
    #[serde(rename = "async", default, skip_serializing_if = "Option::is_none")]
    pub is_async: Option<bool>,
    /// Text shown while the handler runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Stable id; keys the trust file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
    /// `deny`: a failing PreToolUse handler denies the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    /// The recipe that installed this handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<Id>,
    /// Fields hookpack does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Handler {
    /// The timeout in effect.
    pub fn effective_timeout(&self) -> u64 {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// Where a handler map sits, which changes a few rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// In a `recipe.json`: every handler needs an `id`, `recipe` is forbidden.
    Recipe,
    /// In a profile or workspace `hooks.json`.
    HooksFile,
}

/// A handler the checker saw, for checks that span handlers (unique ids, scripts).
#[derive(Debug, Clone)]
pub struct SeenHandler {
    /// Its event, when the event name is known.
    pub event: Option<Event>,
    /// Pointer to the handler object.
    pub pointer: String,
    /// Its `id`, when a string.
    pub id: Option<String>,
    /// Its `command`, when a non-empty string.
    pub command: Option<String>,
}

const HANDLER_FIELDS: [&str; 8] = [
    "type",
    "command",
    "timeout",
    "async",
    "statusMessage",
    "id",
    "failurePolicy",
    "recipe",
];

/// Compiles a matcher the way hosts apply it: as a regular expression that must match the
/// whole string. `None` means "matches everything".
pub fn compile_matcher(matcher: Option<&str>) -> Result<Option<regex::Regex>, regex::Error> {
    match matcher {
        None | Some("*") => Ok(None),
        Some(m) => {
            // Parsing the bare pattern first catches `a)|(b`, which would otherwise escape
            // the anchoring group and compile to something else. (Parsing is enough, and
            // much cheaper than compiling: the anchored pattern is compiled below.)
            regex_syntax::Parser::new()
                .parse(m)
                .map_err(|e| regex::Error::Syntax(e.to_string()))?;
            regex::RegexBuilder::new(&format!("^(?:{m})$"))
                .size_limit(1 << 20)
                .build()
                .map(Some)
        }
    }
}

/// Why `matcher` does not compile, in one line; `None` when it does.
///
/// Catalogs repeat the same few matchers (`Bash`, `Edit|Write`, ...) across hundreds of
/// recipes, and compiling one costs more than the rest of a recipe's checks, so answers are
/// remembered for the life of the process (up to a bound).
fn matcher_problem(matcher: &str) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some(known) = seen.lock().ok().and_then(|m| m.get(matcher).cloned()) {
        return known;
    }
    let problem = compile_matcher(Some(matcher)).err().map(|e| {
        e.to_string()
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string()
    });
    if let Ok(mut m) = seen.lock() {
        if m.len() < 4096 && matcher.len() <= 1024 {
            m.insert(matcher.to_string(), problem.clone());
        }
    }
    problem
}

/// A JSON value's kind as a message names it: `null`, `a string`, `an array`…
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks an event map (`{"PreToolUse": [...], ...}`) at `pointer`, reporting every problem.
pub fn check_hooks_map(
    value: &Value,
    pointer: &str,
    ctx: Context,
    f: &mut Findings,
) -> Vec<SeenHandler> {
    let mut seen = Vec::new();
    let Some(events) = value.as_object() else {
        f.error(
            pointer,
            "hooks-not-object",
            format!(
                "`hooks` must be an object of event name → groups, found {}",
                type_name(value)
            ),
        );
        return seen;
    };
    for (name, groups) in events {
        let ep = pointer_push(pointer, name);
        let event = Event::parse(name);
        match event {
            None => {
                let hint = match Event::suggest(name) {
                    Some(e) => format!("did you mean `{e}`?"),
                    None => format!("known events: {}", Event::ALL.map(|e| e.name()).join(", ")),
                };
                f.error(
                    &ep,
                    "unknown-event",
                    format!("unknown event `{name}`; hosts never run it; {hint}"),
                );
            }
            Some(e) if !e.is_spawned() => f.warn(
                &ep,
                "event-never-spawned",
                format!("hosts list and hash `{e}` handlers but never run them"),
            ),
            Some(_) => {}
        }
        let Some(groups) = groups.as_array() else {
            f.error(
                &ep,
                "groups-not-array",
                format!(
                    "`{name}` must be an array of matcher groups, found {}",
                    type_name(groups)
                ),
            );
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            let gp = pointer_push(&ep, &gi.to_string());
            check_group(group, &gp, event, ctx, f, &mut seen);
        }
    }
    seen
}

fn check_group(
    group: &Value,
    gp: &str,
    event: Option<Event>,
    ctx: Context,
    f: &mut Findings,
    seen: &mut Vec<SeenHandler>,
) {
    let Some(obj) = group.as_object() else {
        f.error(
            gp,
            "group-not-object",
            format!("a matcher group must be an object like {{\"matcher\": \"exec\", \"hooks\": [...]}}, found {}", type_name(group)),
        );
        return;
    };
    for key in unknown_group_fields(obj) {
        f.warn(
            &pointer_push(gp, key),
            "unknown-field",
            format!(
                "unknown group field `{key}`{}; a group has only `matcher` and `hooks`",
                crate::event::did_you_mean(key, &GROUP_FIELDS)
            ),
        );
    }
    if let Some(m) = obj.get("matcher") {
        let mp = pointer_push(gp, "matcher");
        match m.as_str() {
            None => f.error(
                &mp,
                "matcher-not-string",
                format!(
                    "`matcher` must be a string (a regular expression), found {}",
                    type_name(m)
                ),
            ),
            Some(s) => {
                if let Some(detail) = matcher_problem(s) {
                    f.error(
                        &mp,
                        "matcher-invalid",
                        format!("matcher `{s}` is not a valid regular expression ({detail}); hosts skip this group; escape special characters or use `*` for all"),
                    );
                } else if s.is_empty() {
                    f.warn(&mp, "matcher-empty", "an empty matcher only matches an empty name; omit `matcher` or use `*` to match everything");
                }
                if let Some(e) = event {
                    if !e.is_tool_event() && s != "*" {
                        f.warn(
                            &mp,
                            "matcher-ignored",
                            format!("`{e}` is not a tool event, so hosts ignore its matcher and run the group for every `{e}`; remove `matcher`"),
                        );
                    }
                }
            }
        }
    }
    let hp = pointer_push(gp, "hooks");
    match obj.get("hooks") {
        None => f.error(gp, "group-missing-hooks", "matcher group has no `hooks` array; add \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]"),
        Some(Value::Array(handlers)) => {
            if handlers.is_empty() {
                f.warn(&hp, "group-empty", "this group has no handlers; remove it or add one");
            }
            for (hi, h) in handlers.iter().enumerate() {
                let p = pointer_push(&hp, &hi.to_string());
                seen.push(check_handler(h, &p, event, ctx, f));
            }
        }
        Some(other) => f.error(&hp, "hooks-not-array", format!("`hooks` in a group must be an array of handlers, found {}", type_name(other))),
    }
}

/// Warns of a hand-written command with a quote left open: the shell refuses it with a
/// syntax error and exit 2, which hosts read as a block. A warning, as hosts run it all the
/// same; and nothing where the shell may read a quote otherwise than the word splitter (a
/// `#` comment, `$'…'`, a here-document, a command substitution, which quotes afresh).
fn check_quotes(command: &str, p: &str, f: &mut Findings) {
    if command.contains(['#', '`']) || ["$'", "<<", "$("].iter().any(|s| command.contains(s)) {
        return;
    }
    if let Err(e @ crate::command::SplitError::Unterminated(_)) = crate::command::split(command) {
        f.warn(
            p,
            "command-unparsable",
            format!(
                "{e}: the shell refuses it with a syntax error and exits 2, so each run of the \
                 handler fails, and blocks the call on tool and prompt events; close the quote"
            ),
        );
    }
}

fn check_handler(
    h: &Value,
    p: &str,
    event: Option<Event>,
    ctx: Context,
    f: &mut Findings,
) -> SeenHandler {
    let mut seen = SeenHandler {
        event,
        pointer: p.to_string(),
        id: None,
        command: None,
    };
    let Some(obj) = h.as_object() else {
        f.error(p, "handler-not-object", format!("a handler must be an object like {{\"type\": \"command\", \"command\": \"...\"}}, found {}", type_name(h)));
        return seen;
    };
    let field = |k: &str| pointer_push(p, k);
    for key in obj.keys() {
        if !HANDLER_FIELDS.contains(&key.as_str()) {
            let message = format!(
                "unknown handler field `{key}`{}; FinClaw skips a handler with fields it does not know; known fields: {}",
                crate::event::did_you_mean(key, &HANDLER_FIELDS),
                HANDLER_FIELDS.join(", ")
            );
            // In a hooks.json hosts read, the handler never runs: an error, as `doctor` and
            // `trust` take it. A recipe's is a warning (SPEC 1.2; an error with --strict).
            match ctx {
                Context::HooksFile => f.error(&field(key), "unknown-field", message),
                Context::Recipe => f.warn(&field(key), "unknown-field", message),
            }
        }
    }
    match obj.get("type") {
        None => f.error(
            p,
            "handler-missing-type",
            "handler has no `type`; add \"type\": \"command\"",
        ),
        Some(Value::String(t)) if t == "command" => {}
        Some(other) => f.error(
            &field("type"),
            "handler-type",
            format!("`type` must be \"command\" (the only kind hosts run), found {other}"),
        ),
    }
    match obj.get("command") {
        None => f.error(
            p,
            "handler-missing-command",
            "handler has no `command`; add the shell command to run",
        ),
        Some(Value::String(c)) if c.trim().is_empty() => f.error(
            &field("command"),
            "command-empty",
            "`command` is empty; give the shell command to run",
        ),
        // No shell can be given it (hosts fail to start the handler), and text after it
        // would be cut off anywhere a C string carries the command.
        Some(Value::String(c)) if c.contains('\0') => f.error(
            &field("command"),
            "command-nul",
            "`command` holds a NUL byte (\"\\u0000\"), which no shell can be given, so hosts \
             cannot start the handler; remove it from the command",
        ),
        // Hosts pass it as one argument, and the kernel refuses to start a shell given a
        // longer one: every run fails, and denies on PermissionRequest.
        Some(Value::String(c)) if c.len() > crate::run::MAX_COMMAND_BYTES => f.error(
            &field("command"),
            "command-too-long",
            format!(
                "`command` is {} bytes, more than the {} Linux passes to a program in one \
                 argument (hosts run it as `$SHELL -lc COMMAND`), so hosts cannot start the \
                 handler (\"Argument list too long\"); move the text into the script, or a \
                 file it reads",
                c.len(),
                crate::run::MAX_COMMAND_BYTES
            ),
        ),
        Some(Value::String(c)) => {
            // (A recipe's commands are checked as recipe commands, an open quote an error.)
            if ctx == Context::HooksFile {
                check_quotes(c, &field("command"), f);
            }
            seen.command = Some(c.clone())
        }
        Some(other) => f.error(
            &field("command"),
            "command-not-string",
            format!("`command` must be a string, found {}", type_name(other)),
        ),
    }
    if let Some(t) = obj.get("timeout") {
        match t.as_u64() {
            Some(n) if n >= 1 => {}
            Some(_) => f.error(
                &field("timeout"),
                "timeout-too-small",
                "`timeout` must be at least 1 second; remove it for the default of 30",
            ),
            None if t.as_i64().is_some() => f.error(
                &field("timeout"),
                "timeout-too-small",
                "`timeout` must be at least 1 second; remove it for the default of 30",
            ),
            None => f.error(
                &field("timeout"),
                "timeout-not-integer",
                timeout_not_integer(t),
            ),
        }
    }
    if let Some(a) = obj.get("async") {
        match a.as_bool() {
            None => f.error(
                &field("async"),
                "async-not-bool",
                format!("`async` must be true or false, found {}", type_name(a)),
            ),
            Some(true) => {
                if let Some(e) = event.filter(|e| !e.allows_async()) {
                    f.error(&field("async"), "async-forbidden", format!("`async: true` is rejected on `{e}`: the host waits for its decision; remove `async`"));
                }
            }
            Some(false) => {}
        }
    }
    if let Some(s) = obj.get("statusMessage") {
        if !s.is_string() {
            f.error(
                &field("statusMessage"),
                "status-message-not-string",
                format!("`statusMessage` must be a string, found {}", type_name(s)),
            );
        }
    }
    match obj.get("id") {
        None if ctx == Context::Recipe => f.error(p, "handler-missing-id", "recipe handlers must have an `id` (lowercase letters, digits and dashes), e.g. \"id\": \"gate-mutating\""),
        None => {}
        Some(Value::String(s)) => match Id::parse(s) {
            Ok(_) => seen.id = Some(s.clone()),
            Err(e) => f.error(&field("id"), "handler-id-invalid", e.to_string()),
        },
        Some(other) => f.error(&field("id"), "handler-id-invalid", format!("`id` must be a string, found {}", type_name(other))),
    }
    if let Some(fp) = obj.get("failurePolicy") {
        if fp.as_str() != Some("deny") {
            f.error(
                &field("failurePolicy"),
                "failure-policy-value",
                format!("`failurePolicy` can only be \"deny\", found {fp}"),
            );
        } else if let Some(e) = event.filter(|e| !e.allows_failure_policy()) {
            f.error(&field("failurePolicy"), "failure-policy-event", format!("`failurePolicy` is only allowed on PreToolUse; on `{e}` hosts report a discovery error; remove it"));
        }
    }
    if let Some(r) = obj.get("recipe") {
        match ctx {
            Context::Recipe => f.error(
                &field("recipe"),
                "recipe-field-set",
                "`recipe` is written by `install`; remove it from the recipe",
            ),
            Context::HooksFile => match r.as_str().map(Id::parse) {
                Some(Ok(_)) => {}
                Some(Err(e)) => f.error(
                    &field("recipe"),
                    "recipe-stamp-invalid",
                    format!(
                        "`recipe` names no recipe ({e}); install writes this field: correct it, \
                         or remove it from a handler you wrote"
                    ),
                ),
                None => f.error(
                    &field("recipe"),
                    "recipe-stamp-invalid",
                    format!(
                        "`recipe` must be a recipe id string, found {}",
                        type_name(r)
                    ),
                ),
            },
        }
    }
    seen
}

/// Reports handler ids used twice among `handlers`; `scope` says where they must be unique.
pub fn check_unique_ids<'a>(
    handlers: impl IntoIterator<Item = &'a SeenHandler>,
    scope: &str,
    f: &mut Findings,
) {
    let mut first: std::collections::HashMap<(&str, Option<Event>), &str> =
        std::collections::HashMap::new();
    for h in handlers {
        let Some(id) = h.id.as_deref() else { continue };
        let key_event = if scope == "event" { h.event } else { None };
        if let Some(prev) = first.get(&(id, key_event)) {
            f.error(
                &pointer_push(&h.pointer, "id"),
                "handler-id-duplicate",
                format!("handler id `{id}` is already used at {prev}; ids must be unique in the {scope} because trust is keyed by them"),
            );
        } else {
            first.insert((id, key_event), h.pointer.as_str());
        }
    }
}

/// Checks a whole `hooks.json` document.
pub fn check_document(value: &Value, f: &mut Findings) {
    let Some(obj) = value.as_object() else {
        f.error(
            "",
            "document-not-object",
            format!(
                "a hooks.json must be an object like {{\"hooks\": {{...}}}}, found {}",
                type_name(value)
            ),
        );
        return;
    };
    for key in obj.keys() {
        if Event::parse(key).is_some() {
            f.error(
                &pointer_push("", key),
                "event-outside-hooks",
                format!(
                    "`{key}` is an event, but at the top level, outside `hooks`, where hosts \
                     look for none; move it into \"hooks\": {{\"{key}\": [...]}}"
                ),
            );
        } else if key != "hooks" && key != "description" {
            f.warn(
                &pointer_push("", key),
                "unknown-field",
                format!(
                    "unknown top-level field `{key}`{}; a hooks.json has `description` and `hooks`",
                    crate::event::did_you_mean(key, &["description", "hooks"])
                ),
            );
        }
    }
    if let Some(d) = obj.get("description") {
        if !d.is_string() {
            f.error(
                "/description",
                "description-not-string",
                format!("`description` must be a string, found {}", type_name(d)),
            );
        }
    }
    match obj.get("hooks") {
        None => f.error(
            "",
            "missing-hooks",
            "no `hooks` object; add \"hooks\": {\"PreToolUse\": [...]} or the file does nothing",
        ),
        Some(h) => {
            let seen = check_hooks_map(h, "/hooks", Context::HooksFile, f);
            check_unique_ids(&seen, "event", f);
        }
    }
}

/// Parses and checks a `hooks.json` given as bytes; `file` names it in the diagnostics.
pub fn validate_bytes(file: &Path, bytes: &[u8]) -> Vec<Diagnostic> {
    // A number past f64's range is the problem of the field holding it (a `timeout` of
    // `1e400` is too large, as one of `1e30` is), not of the whole document.
    crate::validate::check_parsed_bytes(
        file,
        bytes,
        crate::json::parse_reading_huge_numbers,
        check_document,
    )
}

/// Why `t`, a `timeout` that is no integer (or one too large to read as one), is refused,
/// and what to write instead.
fn timeout_not_integer(t: &Value) -> String {
    // 2^64, the least whole number past `u64::MAX` (which `u64::MAX as f64` rounds up to):
    // an integer written from there on is read as a float, and is no timeout at all.
    const PAST_U64: f64 = 18_446_744_073_709_551_616.0;
    // A number past f64's range (`1e400`) is read as the largest float of its sign: saying
    // `1.7976931348623157e308` would name a value the file does not hold.
    let shown = match t.as_f64() {
        Some(x) if x.abs() == f64::MAX => "(a number past the range of a 64-bit float)".into(),
        _ => crate::json::shown_value(t),
    };
    let fix = match t.as_f64() {
        // Not quoted: serde_json reads such an integer as a float, whose form (`1e+20`)
        // is not what the file holds.
        Some(x) if x >= PAST_U64 => {
            return format!(
                "`timeout` is larger than {}, the most seconds hookpack can read; write the \
                 seconds a handler may take, e.g. 30",
                u64::MAX
            )
        }
        // Hosts read `timeout` as an integer: `1e1` or `10.0` may not load there. Not
        // quoted: the value read (`10.0`) may not be what the file holds (`1e1`).
        Some(x) if x >= 1.0 && x.fract() == 0.0 => {
            return format!(
                "`timeout` must be a whole number of seconds written as one: this one is \
                 {x:.0} written with a fraction or an exponent, which hosts that read it as an \
                 integer refuse; write {x:.0}"
            )
        }
        Some(x) if x > 0.0 => "round it to a whole number of seconds (at least 1)".to_string(),
        // `-0` (which serde_json reads as a float, to keep its sign) is no fraction.
        Some(0.0) => {
            return "`timeout` must be at least 1 second; remove it for the default of 30".into()
        }
        Some(_) => "remove it for the default of 30".to_string(),
        None => "write a number, e.g. 30".to_string(),
    };
    format!("`timeout` must be a whole number of seconds, found {shown}; {fix}")
}

/// The fields a matcher group has; hosts pass over any other.
pub(crate) const GROUP_FIELDS: [&str; 2] = ["matcher", "hooks"];

/// The fields of the matcher group `obj` that hosts pass over (a misspelt `matchers`
/// leaves the group matching everything).
pub(crate) fn unknown_group_fields(obj: &Map<String, Value>) -> impl Iterator<Item = &String> {
    obj.keys().filter(|k| !GROUP_FIELDS.contains(&k.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(doc: &str) -> Vec<(String, &'static str)> {
        validate_bytes(Path::new("hooks.json"), doc.as_bytes())
            .into_iter()
            .map(|d| (d.pointer, d.code))
            .collect()
    }

    #[test]
    fn a_good_file_has_no_findings() {
        let doc = r#"{"description":"x","hooks":{"PreToolUse":[{"matcher":"exec|write_file","hooks":[{"type":"command","command":"node a.js","timeout":10,"failurePolicy":"deny","id":"a"}]}],"Stop":[{"hooks":[{"type":"command","command":"true","async":true}]}]}}"#;
        assert_eq!(codes(doc), []);
    }

    #[test]
    fn each_rule_is_reported_at_its_pointer() {
        let doc = r#"{"hooks":{
          "PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x","async":true,"timeout":0}]}],
          "Stop":[{"matcher":"x","hooks":[{"type":"shell","command":"","failurePolicy":"deny","id":"Bad_Id","extra":1}]}],
          "pretooluse":[]
        }}"#;
        let got = codes(doc);
        for want in [
            ("/hooks/PreToolUse/0/matcher", "matcher-invalid"),
            ("/hooks/PreToolUse/0/hooks/0/async", "async-forbidden"),
            ("/hooks/PreToolUse/0/hooks/0/timeout", "timeout-too-small"),
            ("/hooks/Stop/0/matcher", "matcher-ignored"),
            ("/hooks/Stop/0/hooks/0/type", "handler-type"),
            ("/hooks/Stop/0/hooks/0/command", "command-empty"),
            (
                "/hooks/Stop/0/hooks/0/failurePolicy",
                "failure-policy-event",
            ),
            ("/hooks/Stop/0/hooks/0/id", "handler-id-invalid"),
            ("/hooks/Stop/0/hooks/0/extra", "unknown-field"),
            ("/hooks/pretooluse", "unknown-event"),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1)),
                "missing {want:?} in {got:?}"
            );
        }
    }

    /// `"timeout": 1e1` was refused with "must be a whole number of seconds, found 10.0",
    /// which is one: the message now says what to write instead, without quoting the value
    /// in a form the file does not hold (`1e1` was "found 10.0").
    #[test]
    fn a_timeout_written_with_a_fraction_or_exponent_says_how_to_write_it() {
        for (written, fix) in [
            ("1e1", "write 10"),
            ("5.0", "write 5"),
            ("2.5", "round it"),
            ("-0", "at least 1 second"),
        ] {
            let doc = format!(
                r#"{{"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"x","timeout":{written}}}]}}]}}}}"#
            );
            let found = validate_bytes(Path::new("hooks.json"), doc.as_bytes());
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].code, "timeout-not-integer");
            assert!(
                found[0].message.contains(fix),
                "{written}: {}",
                found[0].message
            );
            // Never quoted in a form the file does not hold (`1e1` as `10.0`).
            assert!(
                !found[0].message.contains(".0"),
                "{written}: {}",
                found[0].message
            );
        }
    }

    /// An integer past the largest hookpack reads (2^64 and up) is read as a float: the
    /// message said "write 18446744073709551616, without a fraction or exponent" of
    /// `18446744073709551616` written so, and "round it" of `99999999999999999999`; then it
    /// quoted `100000000000000000000` as `1e+20`.
    #[test]
    fn a_timeout_too_large_to_read_says_so() {
        for written in [
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
            "1e30",
        ] {
            let doc = format!(
                r#"{{"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"x","timeout":{written}}}]}}]}}}}"#
            );
            let found = validate_bytes(Path::new("hooks.json"), doc.as_bytes());
            assert_eq!(found.len(), 1, "{found:?}");
            let message = &found[0].message;
            assert!(
                !message.contains("write 1") && !message.contains("round it"),
                "{written}: {message}"
            );
            // Said without the float form serde_json reads it in (`1e+20`), as a negative
            // one is (found by review).
            assert!(
                message.contains("larger than 18446744073709551615") && !message.contains("e+"),
                "{written}: {message}"
            );
        }
    }

    #[test]
    fn a_huge_negative_timeout_is_not_quoted_in_float_form() {
        for written in ["-100000000000000000000", "-18446744073709551616"] {
            let doc = format!(
                r#"{{"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"x","timeout":{written}}}]}}]}}}}"#
            );
            let found = validate_bytes(Path::new("hooks.json"), doc.as_bytes());
            let message = &found[0].message;
            assert!(
                message.contains("found a whole number below -9223372036854775808")
                    && !message.contains("e+"),
                "{written}: {message}"
            );
        }
    }

    #[test]
    fn matcher_cannot_escape_its_anchors() {
        assert!(compile_matcher(Some("a)|(b")).is_err());
        let m = compile_matcher(Some("exec|write_file")).unwrap().unwrap();
        assert!(m.is_match("exec") && !m.is_match("exec2") && !m.is_match("xexec"));
        assert!(compile_matcher(Some("*")).unwrap().is_none());
    }

    #[test]
    fn remembered_matcher_answers_are_the_compiled_ones() {
        for _ in 0..2 {
            let why = matcher_problem("a)|(b").expect("escapes its anchors");
            assert!(why.contains("unopened group"), "{why}");
            assert_eq!(matcher_problem("Edit|Write"), None);
            let why = matcher_problem("(unclosed").expect("unclosed group");
            assert!(why.contains("unclosed group"), "{why}");
        }
    }

    #[test]
    fn typed_view_keeps_unknown_fields() {
        let doc = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","zeta":1,"alpha":2}]}]},"other":true}"#;
        let file: HooksFile = serde_json::from_str(doc).unwrap();
        let h = &file.hooks.get("Stop").unwrap()[0].hooks[0];
        assert_eq!(h.extra.keys().collect::<Vec<_>>(), ["zeta", "alpha"]);
        assert_eq!(file.extra["other"], true);
    }
}
