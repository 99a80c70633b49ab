//! `hookpack test`: a recipe's fixture cases (`tests/*.json`), run through the host's
//! dispatch against the assembled tree.
//!
//! A case names an event, a stdin payload (merged over the host's common fields), optional
//! environment and the expected outcome. Each case gets a fresh temporary folder, which is
//! the working directory, `{tmp}` in the case, and `FINCLAW_PROFILE_ROOT`; nothing a case
//! does lands outside it unless the case says so.

use crate::command::{self, Target};
use crate::diagnostic::{Diagnostic, Findings, Severity};
use crate::error::Error;
use crate::event::Event;
use crate::fs::FsError;
use crate::hooks_json::compile_matcher;
use crate::json::{Locations, Position};
use crate::recipe::Recipe;
use crate::run::{self, Decision, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest fixture case file read.
const MAX_CASE_BYTES: u64 = 4 * 1024 * 1024;

/// Largest file a case's `file_contains` reads.
const MAX_CHECKED_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A fixture case as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What the case shows.
    pub name: String,
    /// The event to dispatch.
    pub event: String,
    /// The payload, or `"@raw:<text>"` for raw stdin bytes.
    #[serde(default)]
    pub payload: Value,
    /// Environment to add; `{tmp}` is the case's temporary folder.
    #[serde(default)]
    pub env: Map<String, Value>,
    /// Run only this handler id.
    #[serde(default)]
    pub handler: Option<String>,
    /// What must happen.
    pub expect: Expect,
}

/// Decisions a case may expect.
const DECISIONS: [&str; 8] = [
    "none", "allow", "deny", "ask", "block", "reject", "route", "failure",
];

/// The outcomes hosts can read from handlers of `event` (seeds/004), from the rules `run`
/// reads answers by: a permission verdict only before a tool runs, a block on tool events
/// and prompts, a reject on Stop, a route on prompts; any handler can give none or fail.
fn decisions_on(event: Event) -> Vec<&'static str> {
    let mut out = vec!["none"];
    if event.takes_permission() {
        out.extend(["allow", "deny", "ask"]);
    }
    if event.can_block() {
        out.push("block");
    }
    if event == Event::Stop {
        out.push("reject");
    }
    if event == Event::UserPromptSubmit {
        out.push("route");
    }
    out.push("failure");
    out
}

/// Problems in the fixture case files `files` found without running them, each file read
/// once: in each, JSON that is not a case (at its line:column), a key given twice, an
/// unknown event or decision, one the event never gives (or an `updated_model` or
/// `reason_contains` it cannot), an exit code no process gives, a payload that is neither
/// an object nor `"@raw:…"`, an `env` value that is not a string, an `env` name or value no
/// environment carries (a name empty or holding `=` or NUL, a value holding NUL), and (when
/// `recipe` is given) a `handler` the recipe lacks; then, for the recipe whose manifest is
/// `manifest`, a warning when its `min_cli` lets hosts that pass over what the cases expect
/// install it (`min_cli_below_cases`).
pub fn check_case_files(
    files: &[PathBuf],
    recipe: Option<&Recipe>,
    manifest: &Path,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut expected = Vec::new();
    for file in files {
        match load_case(file, recipe) {
            Ok((case, _)) => expected.push((file.as_path(), case.expect.decision)),
            Err(refused) => out.extend(refused.diagnostics),
        }
    }
    if let Some(recipe) = recipe {
        out.extend(min_cli_below_cases(recipe, manifest, &expected));
    }
    out
}

/// A warning at `min_cli` in `manifest` (the recipe's `recipe.json`) when it is below
/// [`run::HONOURS_FROM`] while cases (each case file with the decision it expects) expect
/// what hosts before that pass over (an ask, a Stop reject, a model route): install puts
/// the recipe on such hosts, where that answer does nothing (a gate that asks lets the tool
/// run). It names the first such case and counts the others.
fn min_cli_below_cases(
    recipe: &Recipe,
    manifest: &Path,
    cases: &[(&Path, String)],
) -> Option<Diagnostic> {
    if run::honours_all(&recipe.min_cli) {
        return None;
    }
    let mut passed_over = cases.iter().filter_map(|(file, decision)| {
        let what = match decision.as_str() {
            "ask" => "an ask",
            "reject" => "a Stop reject",
            "route" => "a model route",
            _ => return None,
        };
        Some((*file, what, decision))
    });
    let (file, what, decision) = passed_over.next()?;
    let more = passed_over.count();
    let case = file
        .strip_prefix(manifest.parent().unwrap_or(Path::new("")))
        .unwrap_or(file);
    let others = match more {
        0 => String::new(),
        1 => " (and 1 other case expects an ask, a reject or a route)".to_string(),
        n => format!(" (and {n} other cases expect an ask, a reject or a route)"),
    };
    let parsed =
        crate::json::parse(&crate::fs::read_limited(manifest, MAX_CASE_BYTES).ok()?).ok()?;
    let mut f = Findings::new(manifest, Some(&parsed.locations));
    f.warn(
        "/min_cli",
        "min-cli-too-low",
        format!(
            "min_cli is {}, but `{}` expects `{decision}`{others}, which CLI versions before \
             {from} pass over: install puts the recipe on them, where {what} does nothing; \
             set \"min_cli\": \"{from}\"",
            recipe.min_cli,
            case.display(),
            from = run::HONOURS_FROM
        ),
    );
    f.finish().into_iter().next()
}

/// What a case asks that no run can give, of `recipe` when known; `test` fails such a case
/// without running it (a handler that ran would only make the report say "expected Deny,
/// got deny").
fn check_case(case: &Case, recipe: Option<&Recipe>, f: &mut Findings) {
    let event = Event::parse(&case.event);
    if let (Some(want), Some(event), Some(recipe)) = (&case.handler, event, recipe) {
        let ids = handler_ids(recipe, event);
        if !ids.contains(want) {
            let there = if ids.is_empty() {
                "it has none there".to_string()
            } else {
                format!("its handlers there: {}", ids.join(", "))
            };
            f.error(
                "/handler",
                "case-handler-unknown",
                format!("`handler` `{want}` names no handler of the recipe for {event}; {there}"),
            );
        }
    }
    if event.is_none() {
        f.error(
            "/event",
            "case-event-unknown",
            match crate::event::Event::suggest(&case.event) {
                Some(near) => format!("unknown event `{}`; did you mean `{near}`?", case.event),
                None => format!(
                    "unknown event `{}`; known events: {}",
                    case.event,
                    crate::event::Event::ALL.map(|e| e.name()).join(", ")
                ),
            },
        );
    }
    if !DECISIONS.contains(&case.expect.decision.as_str()) {
        f.error(
            "/expect/decision",
            "case-decision-unknown",
            format!(
                "unknown decision `{}`; expect one of {}",
                case.expect.decision,
                DECISIONS.join(", ")
            ),
        );
    }
    let decision = case.expect.decision.as_str();
    if let Some(event) = event.filter(|_| DECISIONS.contains(&decision)) {
        let possible = decisions_on(event);
        if !possible.contains(&decision) {
            f.error(
                "/expect/decision",
                "case-decision-impossible",
                format!(
                    "{event} never gives `{decision}`: its outcomes are {}; expect one of \
                     them, or set `event` to one that gives `{decision}`",
                    possible.join(", ")
                ),
            );
        }
        if case.expect.updated_model.is_some() && event != Event::UserPromptSubmit {
            f.error(
                "/expect/updated_model",
                "case-decision-impossible",
                format!(
                    "only UserPromptSubmit routes to a model, so no {event} case can give \
                     `updated_model`; leave it out, or set `event` to UserPromptSubmit"
                ),
            );
        }
    }
    // Only a verdict or a failure carries a reason (a route may come with a failure, whose
    // text is then the reason); an empty text is in every reason.
    if decision == "none"
        && case
            .expect
            .reason_contains
            .as_ref()
            .is_some_and(|r| !r.is_empty())
    {
        f.error(
            "/expect/reason_contains",
            "case-decision-impossible",
            format!(
                "a `{decision}` outcome has no reason, so `reason_contains` can never \
                 match; leave it out, or expect a decision that gives a reason"
            ),
        );
    }
    // A `none` outcome is one with no route either.
    if decision == "none" && case.expect.updated_model.is_some() {
        f.error(
            "/expect/updated_model",
            "case-decision-impossible",
            "a `none` outcome routes to no model, so `updated_model` can never match; expect \
             `route` for a case whose handler picks a model, or leave `updated_model` out",
        );
    }
    if let Some(exit) = case.expect.exit.filter(|c| !(0..=255).contains(c)) {
        f.error(
            "/expect/exit",
            "case-exit-invalid",
            exit_invalid(&exit.to_string()),
        );
    }
    // What the handler wrote is looked for in the case's folder: a path out of it (absolute,
    // or climbing out with `..`) would read the machine's files instead.
    if let Some(fc) = &case.expect.file_contains {
        let rel = fc.path.strip_prefix("{tmp}").unwrap_or(&fc.path);
        let rel = rel.trim_start_matches('/');
        let leaves = (fc.path.starts_with('/') && !fc.path.starts_with("{tmp}"))
            || Path::new(rel)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
        if leaves {
            f.error(
                "/expect/file_contains/path",
                "case-invalid",
                format!(
                    "`{}` is outside the case's folder, where the handler ran and the file is \
                     looked for; give a path relative to it (or starting with `{{tmp}}/`), \
                     without `..`",
                    fc.path
                ),
            );
        }
    }
    for (k, v) in &case.env {
        let pointer = crate::json::pointer_push("/env", k);
        if let Some(why) = env_name_problem(k) {
            f.error_key(&pointer, "case-env-invalid", why);
        }
        if let Some(why) = env_value_problem(k, v) {
            f.error(&pointer, "case-env-invalid", why);
        }
    }
    match &case.payload {
        Value::Object(_) | Value::Null => {}
        Value::String(s) if s.starts_with("@raw:") => {}
        other => f.error(
            "/payload",
            "case-payload-invalid",
            format!(
                "`payload` must be an object (merged over the common fields) or \
                 \"@raw:<bytes>\", found {}",
                other.to_string().chars().take(80).collect::<String>()
            ),
        ),
    }
    // Only for an otherwise sound case: a `handler` the recipe lacks is said above.
    if let (Some(event), Some(recipe), false) = (event, recipe, f.has_errors()) {
        if let Err((pointer, message)) = chosen_handlers(recipe, case, event) {
            f.error(pointer, "case-runs-nothing", message);
        }
    }
}

/// Why `name`, a name in a case's `env`, names no environment variable: the environment
/// cannot carry it, so the handler would not start.
fn env_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        Some("`env` name is empty; a variable needs a name: give it one or remove the entry".into())
    } else if name.contains('\0') {
        Some(format!(
            "`env` name {name:?} holds NUL, which no variable name can; remove it from the name"
        ))
    } else if name.contains('=') {
        Some(format!(
            "`env` name {name:?} holds `=`, which ends a variable's name in the environment; \
             rename it"
        ))
    } else if crate::run::is_secret_name(name) {
        // Found by review: such a variable reached the handler, which no host hands it.
        Some(format!(
            "`env` name {name:?} is one hosts strip from a handler's environment (a secret's \
             name), so no handler ever sees it; a handler gets a token through a \
             `FINCLAW_HOOK_…` variable, which hosts keep: name it so"
        ))
    } else {
        None
    }
}

/// Why `value`, the value of `name` in a case's `env`, is no variable's value.
fn env_value_problem(name: &str, value: &Value) -> Option<String> {
    // serde would take any JSON value; the variable would then hold its JSON text
    // (`null`, `{"x":1}`), which no author means.
    let kind = match value {
        Value::String(s) if s.contains('\0') => {
            return Some(format!(
                "`env` value of {name:?} holds NUL, which no variable's value can (the handler \
                 would not start); remove it"
            ))
        }
        Value::String(_) => return None,
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Some(format!(
        "`env` value of `{name}` is {kind}; an environment variable holds text, so write it \
         as a string (\"1\", not 1; \"\" for an empty one)"
    ))
}

/// A case file [`load_case`] refused: why, and the case's name when it was read as a case
/// (one that asks what no run can give, or runs no handler), so `test` still names it.
struct Refused {
    /// The case's `name`, when the file is a case.
    name: Option<String>,
    /// Why it is refused, each at its line:column.
    diagnostics: Vec<Diagnostic>,
}

impl From<Diagnostic> for Refused {
    fn from(d: Diagnostic) -> Self {
        Refused {
            name: None,
            diagnostics: vec![d],
        }
    }
}

/// Reads a case file: the case and where its values are, or why it is none, at its
/// line:column. A case is written by hand, so a key given twice is a slip, not a choice of
/// the last value as JSON readers make it: the value the author meant may be the one that
/// would vanish.
fn load_case(file: &Path, recipe: Option<&Recipe>) -> Result<(Case, Locations), Refused> {
    let bytes = crate::fs::read_limited(file, MAX_CASE_BYTES)
        .map_err(|e| crate::validate::fs_diagnostic(&e))?;
    // The reader of hookpack's own documents first: it names a byte order mark, bad UTF-8
    // and every duplicated key at its place, where serde_json keeps the last value.
    let parsed =
        crate::json::parse(&bytes).map_err(|e| crate::validate::syntax_diagnostic(file, &e))?;
    let mut f = Findings::new(file, Some(&parsed.locations));
    crate::validate::report_duplicates(&parsed, &mut f);
    // serde reads a struct from an array too (its fields in order), so a case, its
    // `expect` or its `file_contains` written as an array would be taken; and its message
    // for one that does not fit names Rust types.
    if let Some((pointer, what)) = not_an_object(&parsed.value) {
        f.error(
            pointer,
            "case-invalid",
            format!(
                "not a fixture case: {what} must be a JSON object, found {}; the README \
                 (`test`) shows the fields of a case",
                crate::hooks_json::type_name(parsed.value.pointer(pointer).unwrap_or(&Value::Null))
            ),
        );
        return Err(Refused {
            name: None,
            diagnostics: f.finish(),
        });
    }
    // An integer no `i32` holds is no exit code either: say so as for 256, in the file's
    // digits (or as past u64, for one serde_json holds only as a float), rather than
    // serde's "expected an integer" or `1e+20`. A number written as a float (`2.0`,
    // `4e9`) is left to serde: no integer at all.
    let beyond_i32 = |v: &&Value| match (v.as_i64(), v.as_u64(), v.as_f64()) {
        (Some(n), _, _) => i32::try_from(n).is_err(),
        (None, Some(_), _) => true,
        (None, None, Some(_)) => crate::json::shown_value(v).starts_with("a whole number"),
        _ => false,
    };
    if let Some(exit) = (parsed.value.pointer("/expect/exit")).filter(beyond_i32) {
        let shown = crate::json::shown_value(exit);
        f.error("/expect/exit", "case-exit-invalid", exit_invalid(&shown));
        return Err(Refused {
            name: parsed
                .value
                .get("name")
                .and_then(Value::as_str)
                .map(String::from),
            diagnostics: f.finish(),
        });
    }
    match serde_json::from_slice::<Case>(&bytes) {
        Ok(case) => {
            check_case(&case, recipe, &mut f);
            if f.has_errors() {
                Err(Refused {
                    name: Some(case.name),
                    diagnostics: f.finish(),
                })
            } else {
                Ok((case, parsed.locations))
            }
        }
        // A field given twice is reported above, as the key given twice.
        Err(e)
            if f.has_errors() && crate::json::serde_message(&e).starts_with("duplicate field") =>
        {
            Err(Refused {
                name: None,
                diagnostics: f.finish(),
            })
        }
        Err(e) => {
            let pos = Position {
                line: u32::try_from(e.line()).unwrap_or(u32::MAX).max(1),
                column: u32::try_from(e.column()).unwrap_or(u32::MAX).max(1),
            };
            let mut out = f.finish();
            out.push(Diagnostic::at(
                file,
                pos,
                Severity::Error,
                "case-invalid",
                format!(
                    "not a fixture case: {}; the README (`test`) shows the fields of a case",
                    crate::json::serde_message(&e)
                ),
            ));
            Err(Refused {
                name: None,
                diagnostics: out,
            })
        }
    }
}

/// Why an expected exit code, as the file gives it, can never match.
fn exit_invalid(shown: &str) -> String {
    format!(
        "expected exit code {shown}, which no process gives; exit codes run from 0 to 255 (a \
         handler killed at its timeout has none: expect \"decision\": \"failure\" without \
         \"exit\")"
    )
}

/// The first of a case, its `expect` and its `file_contains` (when given) that is not a
/// JSON object: its pointer and what it is, in the words of an error message.
fn not_an_object(case: &Value) -> Option<(&'static str, &'static str)> {
    let parts = [
        ("", "a case"),
        ("/expect", "`expect`"),
        ("/expect/file_contains", "`file_contains`"),
    ];
    parts
        .into_iter()
        .find(|(pointer, _)| match case.pointer(pointer) {
            // A missing part is for serde to name (`missing field`); `file_contains` may be
            // `null`, as any optional field may.
            Some(Value::Null) => *pointer != "/expect/file_contains",
            None => false,
            Some(v) => !v.is_object(),
        })
}

/// A problem of a case file as a line of `test`'s report: `file:line:col: message`.
fn mismatch_line(d: &Diagnostic) -> String {
    let pos = d
        .line
        .zip(d.column)
        .map(|(line, column)| Position { line, column });
    report_line(&d.file, pos, &d.message)
}

/// A line of `test`'s report about `file`: `file:line:col: message`, or `file: message`
/// for the file as a whole.
fn report_line(file: &Path, pos: Option<Position>, message: &str) -> String {
    let mut place = file.display().to_string();
    if let Some(p) = pos {
        place.push_str(&format!(":{}:{}", p.line, p.column));
    }
    format!("{place}: {message}")
}

/// The expected outcome.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Exit code of the handler (every handler that ran).
    #[serde(default)]
    pub exit: Option<i32>,
    /// `none`, `allow`, `deny`, `ask`, `block`, `reject`, `route` or `failure`.
    pub decision: String,
    /// Text the reason must contain.
    #[serde(default)]
    pub reason_contains: Option<String>,
    /// The model a route must pick.
    #[serde(default)]
    pub updated_model: Option<String>,
    /// A file the handler must have written, and text it must contain.
    #[serde(default)]
    pub file_contains: Option<FileContains>,
}

/// A file check.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileContains {
    /// Path; `{tmp}` is the case's temporary folder.
    pub path: String,
    /// Text it must contain.
    pub contains: String,
}

/// The result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// Recipe id.
    pub recipe: String,
    /// Case file name; its path under `tests/` for an entry in a subfolder.
    pub file: String,
    /// Case name.
    pub name: String,
    /// Passed or not.
    pub passed: bool,
    /// What differed: `expected …, got …` lines.
    pub mismatches: Vec<String>,
    /// Handler ids run, exit codes and durations in milliseconds.
    pub handlers: Vec<HandlerTrace>,
}

/// One handler run inside a case.
#[derive(Debug, Clone, Serialize)]
pub struct HandlerTrace {
    /// Handler id.
    pub id: String,
    /// Exit code (`None`: killed, or never started).
    pub exit: Option<i32>,
    /// The signal that ended it (`SIGSEGV`, `SIGKILL` at the timeout, …), as `run` shows it.
    pub signal: Option<String>,
    /// Whether its shell started (it did not when the system refused to start it: an
    /// environment too large, a missing shell).
    #[serde(skip)]
    pub started: bool,
    /// Milliseconds.
    pub ms: u128,
    /// The handler's decision.
    pub decision: Decision,
    /// First part of stderr.
    pub stderr: String,
}

/// The common stdin fields a host sends (seeds/004), for `event`.
pub fn common_fields(event: Event, cwd: &Path) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("session_id".into(), json!("hookpack-test-session"));
    m.insert("turn_id".into(), json!("hookpack-test-turn"));
    m.insert("cwd".into(), json!(cwd.display().to_string()));
    m.insert("hook_event_name".into(), json!(event.name()));
    m.insert("model".into(), json!("test-model"));
    m.insert("permission_mode".into(), json!("default"));
    m.insert("transcript_path".into(), Value::Null);
    // Tool events also carry the call's id (seeds/004: "tool_name, tool_input,
    // tool_use_id"); the payload gives the other two.
    if event.is_tool_event() {
        m.insert("tool_use_id".into(), json!("hookpack-test-tool-use"));
    }
    m
}

/// Caps of the `turn` object hosts send (seeds/004): bytes of `user_text` and
/// `assistant_text`, tools kept (the newest), bytes of each tool's summary.
const TURN_TEXT_BYTES: usize = 8192;
const TURN_TOOLS: usize = 32;
const TURN_SUMMARY_BYTES: usize = 1024;

/// The stdin a host sends for `event` in `cwd`: the common fields, then `payload`'s, then
/// the event's name; on the events that carry one, a `turn` (the payload's, cut to the
/// hosts' caps, or an empty one: the prompt as `user_text` on UserPromptSubmit). Also
/// says what was cut, if anything.
pub fn host_stdin(
    event: Event,
    cwd: &Path,
    payload: &Map<String, Value>,
) -> (Map<String, Value>, Vec<String>) {
    let mut m = common_fields(event, cwd);
    for (k, v) in payload {
        m.insert(k.clone(), v.clone());
    }
    m.insert("hook_event_name".into(), json!(event.name()));
    let mut cut = Vec::new();
    if event.has_turn() {
        // No host sends a `turn` of another type: taken as none, and said.
        if let Some(other) = m.get("turn").filter(|t| !t.is_object()) {
            cut.push(format!(
                "the payload's `turn` is {}, not an object; an empty one is sent, as hosts \
                 send none of another type",
                crate::hooks_json::type_name(other)
            ));
            m.remove("turn");
        }
        match m.get_mut("turn") {
            Some(Value::Object(turn)) => cap_turn(turn, &mut cut),
            Some(_) => {}
            None => {
                let prompt = (event == Event::UserPromptSubmit)
                    .then(|| m.get("prompt").and_then(Value::as_str))
                    .flatten()
                    .unwrap_or_default();
                let mut turn = Map::new();
                turn.insert("user_text".into(), json!(prompt));
                turn.insert("assistant_text".into(), Value::Null);
                turn.insert("tools".into(), json!([]));
                // (A prompt past the cap is cut in it as hosts cut it.)
                cap_turn(&mut turn, &mut cut);
                m.insert("turn".into(), Value::Object(turn));
            }
        }
    }
    (m, cut)
}

/// Cuts `turn` to the hosts' caps, noting each cut in `cut`.
fn cap_turn(turn: &mut Map<String, Value>, cut: &mut Vec<String>) {
    for key in ["user_text", "assistant_text"] {
        if let Some(Value::String(s)) = turn.get_mut(key) {
            if cut_to(s, TURN_TEXT_BYTES) {
                cut.push(format!("`turn.{key}` to {TURN_TEXT_BYTES} bytes"));
            }
        }
    }
    if let Some(Value::Array(tools)) = turn.get_mut("tools") {
        if tools.len() > TURN_TOOLS {
            let dropped = tools.len() - TURN_TOOLS;
            tools.drain(..dropped);
            cut.push(format!(
                "`turn.tools` to the newest {TURN_TOOLS} ({dropped} dropped)"
            ));
        }
        let mut summaries = 0;
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            for key in ["input_summary", "result_summary"] {
                if let Some(Value::String(s)) = tool.get_mut(key) {
                    summaries += usize::from(cut_to(s, TURN_SUMMARY_BYTES));
                }
            }
        }
        if summaries > 0 {
            cut.push(format!(
                "{summaries} tool summaries to {TURN_SUMMARY_BYTES} bytes"
            ));
        }
    }
}

/// Cuts `s` to at most `bytes` bytes, at a character boundary; whether it was longer.
fn cut_to(s: &mut String, bytes: usize) -> bool {
    if s.len() <= bytes {
        return false;
    }
    let mut end = bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    true
}

fn expand(s: &str, tmp: &Path) -> String {
    s.replace("{tmp}", &tmp.display().to_string())
}

fn verdict_name(d: &Decision) -> &'static str {
    match d.verdict {
        Some(Verdict::Allow) => "allow",
        Some(Verdict::Ask) => "ask",
        Some(Verdict::Deny) => "deny",
        Some(Verdict::Block) => "block",
        Some(Verdict::Reject) => "reject",
        None if d.failure.is_some() => "failure",
        None if d.updated_model.is_some() => "route",
        None => "none",
    }
}

/// Runs one case against an assembled recipe in `dir`.
pub fn run_case(dir: &Path, recipe: &Recipe, file: &Path) -> Result<CaseResult, Error> {
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut result = CaseResult {
        recipe: recipe.id.to_string(),
        file: file_name,
        name: String::new(),
        passed: false,
        mismatches: Vec::new(),
        handlers: Vec::new(),
    };
    let (case, locations) = match load_case(file, Some(recipe)) {
        Ok(loaded) => loaded,
        Err(refused) => {
            // A case that was read keeps its name; one that could not be read has none.
            result.name = refused.name.unwrap_or_default();
            result
                .mismatches
                .extend(refused.diagnostics.iter().map(mismatch_line));
            return Ok(result);
        }
    };
    result.name = case.name.clone();
    let Some(event) = Event::parse(&case.event) else {
        result
            .mismatches
            .push(format!("unknown event `{}`", case.event));
        return Ok(result);
    };
    let tmp = crate::fs::temp_folder("hookpack-case-")?;
    let tmp_path = tmp.path().to_path_buf();
    let stdin: Vec<u8> = match &case.payload {
        Value::String(s) if s.starts_with("@raw:") => s.as_bytes()["@raw:".len()..].to_vec(),
        Value::Object(p) => serde_json::to_vec(&Value::Object(host_stdin(event, &tmp_path, p).0))
            .unwrap_or_default(),
        Value::Null => {
            let m = host_stdin(event, &tmp_path, &Map::new()).0;
            serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
        }
        other => {
            result.mismatches.push(format!(
                "`payload` must be an object or \"@raw:…\", found {other}"
            ));
            return Ok(result);
        }
    };
    let mut env: Vec<(String, std::ffi::OsString)> = vec![
        ("FINCLAW_HOOK_EVENT".into(), event.name().into()),
        ("FINCLAW_PROFILE".into(), "hookpack-test".into()),
        (
            "FINCLAW_PROFILE_ROOT".into(),
            tmp_path.join("profile").into_os_string(),
        ),
    ];
    // Names and values the environment cannot carry were refused by `check_case`.
    for (k, v) in &case.env {
        let v = match v {
            Value::String(s) => expand(s, &tmp_path),
            other => other.to_string(),
        };
        env.retain(|(name, _)| name != k);
        env.push((k.clone(), v.into()));
    }
    // The assembled modules end in source maps to the TypeScript (see
    // `assemble_to_temp`): node then names an error's line in the source, not in a
    // temporary file that is gone once the run ends.
    let mut node_options = match env.iter().position(|(name, _)| name == "NODE_OPTIONS") {
        Some(at) => env.remove(at).1,
        None => std::env::var_os("NODE_OPTIONS").unwrap_or_default(),
    };
    if !node_options.is_empty() {
        node_options.push(" ");
    }
    node_options.push("--enable-source-maps");
    env.push(("NODE_OPTIONS".into(), node_options));
    let handlers = match chosen_handlers(recipe, &case, event) {
        Ok(handlers) => handlers,
        // `load_case` refused such a case already; kept so a run never passes silently.
        Err((pointer, message)) => {
            result
                .mismatches
                .push(report_line(file, Some(locations.locate(pointer)), &message));
            return Ok(result);
        }
    };
    let mut decisions = Vec::new();
    for h in handlers {
        let id = h.id.as_ref().map(|i| i.to_string()).unwrap_or_default();
        // The case runs in its own folder, so a relative recipe folder would not do.
        let command = absolute_command(&h.command, &crate::fs::absolute(dir));
        let deny_on_failure = h.failure_policy.as_deref() == Some("deny");
        run::check_interrupted()?;
        let spawned = run::spawn(&run::Spawn {
            command: &command,
            cwd: &tmp_path,
            stdin: &stdin,
            env: &env,
            timeout: Duration::from_secs(h.effective_timeout()),
        });
        run::check_interrupted()?;
        let started = spawned.is_ok();
        let (decision, exit, signal, ms, stderr) = match spawned {
            Ok(out) => (
                run::interpret(event, &out, deny_on_failure),
                out.exit,
                out.signal.map(run::signal_shown),
                out.duration.as_millis(),
                String::from_utf8_lossy(&out.stderr)
                    .chars()
                    .take(400)
                    .collect(),
            ),
            Err(e) => (
                run::start_failed(event, &e, deny_on_failure),
                None,
                None,
                0,
                String::new(),
            ),
        };
        result.handlers.push(HandlerTrace {
            id,
            exit,
            signal,
            started,
            ms,
            decision: decision.clone(),
            stderr,
        });
        decisions.push(decision);
    }
    let outcome = run::combine(&decisions);
    let e = &case.expect;
    if let Some(want) = e.exit {
        for h in &result.handlers {
            if h.exit != Some(want) {
                let got = match h.exit {
                    Some(code) => code.to_string(),
                    None => match &h.signal {
                        Some(sig) => format!("killed by {sig}"),
                        None if h.started => "killed".into(),
                        None => "no exit: the shell never started".into(),
                    },
                };
                result
                    .mismatches
                    .push(format!("exit: expected {want}, got {got}"));
            }
        }
    }
    let got = verdict_name(&outcome);
    let decision_ok = got == e.decision
        || (e.decision == "route" && outcome.updated_model.is_some() && outcome.verdict.is_none());
    if !decision_ok {
        // Why the handlers gave what they gave: a failure, else what they meant but hosts
        // do not read so.
        let warnings: Vec<String> = result
            .handlers
            .iter()
            .filter_map(|h| {
                h.decision
                    .warning
                    .as_ref()
                    .map(|w| format!("{}: {w}", h.id))
            })
            .collect();
        let detail = match outcome.failure.as_deref() {
            Some(f) => format!(" ({f})"),
            None if !warnings.is_empty() => format!(" ({})", warnings.join("; ")),
            None => String::new(),
        };
        result.mismatches.push(format!(
            "decision: expected {}, got {got}{detail}",
            e.decision
        ));
    }
    if let Some(want) = &e.reason_contains {
        // For a failure, the reason is what failed (exit code and the first line of stderr).
        let reason = outcome
            .reason
            .clone()
            .or_else(|| outcome.failure.clone())
            .unwrap_or_default();
        if !reason.contains(want.as_str()) {
            result.mismatches.push(format!(
                "reason: expected it to contain {want:?}, got {reason:?}"
            ));
        }
    }
    if let Some(want) = &e.updated_model {
        if outcome.updated_model.as_deref() != Some(want.as_str()) {
            result.mismatches.push(format!(
                "updatedModel: expected {want:?}, got {:?}",
                outcome.updated_model
            ));
        }
    }
    if let Some(fc) = &e.file_contains {
        // A relative path is the handler's: it ran in the case's folder, not in ours.
        let path = tmp_path.join(expand(&fc.path, &tmp_path));
        // A link the handler made can lead out of the case's folder, which is all a case
        // may read (found by review: a link to /etc/passwd was read).
        let outside = match (
            std::fs::canonicalize(&path),
            std::fs::canonicalize(&tmp_path),
        ) {
            (Ok(real), Ok(folder)) if !real.starts_with(&folder) => Some(real),
            _ => None,
        };
        // A regular file only, and bounded: a fifo would block and /dev/zero never ends.
        let read = match outside {
            Some(real) => Err(format!(
                "{} leads out of the case's folder, to {}, through a symbolic link; \
                 file_contains reads files in the case's folder only",
                path.display(),
                real.display()
            )),
            None => {
                crate::fs::read_limited(&path, MAX_CHECKED_FILE_BYTES).map_err(|e| e.to_string())
            }
        };
        match read.map(|b| String::from_utf8_lossy(&b).into_owned()) {
            Ok(text) if text.contains(&fc.contains) => {}
            Ok(text) => result.mismatches.push(format!(
                "{}: expected it to contain {:?}, it holds {:?}",
                path.display(),
                fc.contains,
                text.chars().take(300).collect::<String>()
            )),
            Err(err) => result
                .mismatches
                .push(format!("expected a file to check: {err}")),
        }
    }
    result.passed = result.mismatches.is_empty();
    Ok(result)
}

/// `command` with its script path made absolute inside `dir` (shell-quoted), so it runs
/// from any working directory, as an installed handler does.
pub fn absolute_command(cmd: &str, dir: &Path) -> String {
    let Ok(words) = command::split(cmd) else {
        return cmd.to_string();
    };
    match command::target(&words) {
        Target::Script { word, path, .. } if !path.starts_with('/') => {
            let abs = dir.join(path.trim_start_matches("./"));
            command::replace_word(
                cmd,
                &words,
                word,
                &command::shell_quote(&abs.display().to_string()),
            )
        }
        _ => cmd.to_string(),
    }
}

/// The case files in `tests` (regular files `*.json`), and an error for each entry that
/// looks meant as one but would not run: a folder (or fifo, socket, device) named `*.json`,
/// a name ending `.json` in other letter case (`x.JSON`), and a case in a subfolder (a
/// `*.json` whose top level is an object with an `event`). Skipping those would make a run
/// pass without the cases its author wrote; other files (a README, data in a subfolder)
/// are no cases.
pub fn case_files(tests: &Path) -> Result<(Vec<PathBuf>, Vec<Diagnostic>), FsError> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for entry in crate::fs::read_dir_sorted(tests)? {
        let p = entry.path();
        // The entry's own type: a link to a folder is not searched.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            problems.extend(nested_cases(tests, &p));
        }
        let Some(ext) = p.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        let link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if ext == "json" {
            if p.is_file() {
                files.push(p);
            } else if !link {
                // A link is refused as a link, by the tree checks.
                let what = if p.is_dir() {
                    "a folder"
                } else {
                    "not a regular file (a fifo, socket or device)"
                };
                problems.push(Diagnostic::file_level(
                    &p,
                    Severity::Error,
                    "case-file-invalid",
                    format!(
                        "{what}, not a case file; a fixture case is a regular file \
                         `tests/NAME.json`: rename it or move it out of `tests/`"
                    ),
                ));
            }
        } else if ext.eq_ignore_ascii_case("json") {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            problems.push(Diagnostic::file_level(
                &p,
                Severity::Error,
                "case-file-invalid",
                format!(
                    "a case file's name ends in `.json` in lower case, or `test` does not \
                     run it; rename it to `{stem}.json`"
                ),
            ));
        }
    }
    Ok((files, problems))
}

/// Deepest a subfolder of `tests/` is searched for cases, counted from `tests/`.
const MAX_NESTED_DEPTH: usize = 16;

/// An error for each file in the subfolder `dir` of `tests` that is meant as a case:
/// named `*.json` (in any letter case), its top level an object with an `event`. `test`
/// runs only the cases directly in `tests/` (SPEC: `tests/*.json`), so such a file would be
/// skipped in silence. Other files there (data the handlers read, JSON that is no case,
/// text that does not parse, files over [`MAX_CASE_BYTES`]) are no cases; links are not
/// followed (the tree checks refuse them), and an entry that cannot be read is passed over.
fn nested_cases(tests: &Path, dir: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .max_depth(MAX_NESTED_DEPTH - 1)
        .sort_by_file_name();
    for item in walk.into_iter().flatten() {
        let named_json = item
            .path()
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if !item.file_type().is_file() || !named_json || !meant_as_case(item.path()) {
            continue;
        }
        let rel = item.path().strip_prefix(tests).unwrap_or(item.path());
        // One name for the file's path, so files of two subfolders do not collide.
        let words: Vec<String> = rel
            .with_extension("")
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        out.push(Diagnostic::file_level(
            item.path(),
            Severity::Error,
            "case-file-invalid",
            format!(
                "a fixture case in a subfolder of `tests/`, which `test` never runs: it runs \
                 only the case files directly in `tests/`; move it there, e.g. to \
                 `tests/{}.json`",
                words.join("-")
            ),
        ));
    }
    out
}

/// Whether the file at `path` is JSON whose top level is an object with an `event`.
fn meant_as_case(path: &Path) -> bool {
    crate::fs::read_limited(path, MAX_CASE_BYTES)
        .ok()
        .and_then(|bytes| crate::json::parse(&bytes).ok())
        .is_some_and(|parsed| {
            parsed
                .value
                .as_object()
                .is_some_and(|o| o.contains_key("event"))
        })
}

/// An error when `tests` is there but no folder (a file, fifo…): its cases would be none,
/// and a run would pass on "no fixture cases found". A link is refused as a link, by the
/// tree checks.
pub fn tests_not_a_folder(tests: &Path) -> Option<Diagnostic> {
    let meta = crate::fs::symlink_metadata(tests).ok()?;
    if meta.is_dir() || meta.file_type().is_symlink() {
        return None;
    }
    let what = if meta.is_file() {
        "a file"
    } else {
        "not a folder (a fifo, socket or device)"
    };
    Some(Diagnostic::file_level(
        tests,
        Severity::Error,
        "case-file-invalid",
        format!(
            "{what}, not a folder of fixture cases; make `tests/` a folder holding \
             `NAME.json` case files, or remove it"
        ),
    ))
}

/// The ids of `recipe`'s handlers of `event`, in their order.
fn handler_ids(recipe: &Recipe, event: Event) -> Vec<String> {
    recipe
        .hooks
        .get(event.name())
        .into_iter()
        .flatten()
        .flat_map(|g| &g.hooks)
        .filter_map(|h| h.id.as_ref().map(|i| i.to_string()))
        .collect()
}

/// The JSON object a case's `payload` gives the handlers: the payload itself, or the
/// `"@raw:…"` bytes when they are one (written raw to keep their exact form).
fn payload_object(payload: &Value) -> Option<std::borrow::Cow<'_, serde_json::Map<String, Value>>> {
    match payload {
        Value::String(s) => match serde_json::from_str::<Value>(s.strip_prefix("@raw:")?) {
            Ok(Value::Object(o)) => Some(std::borrow::Cow::Owned(o)),
            _ => None,
        },
        Value::Object(o) => Some(std::borrow::Cow::Borrowed(o)),
        _ => None,
    }
}

/// The handlers of `recipe` that `case` runs for `event`, in order: those the case's
/// `handler` names, or else (for a tool event) those in groups whose matcher takes the
/// payload's tool. When it runs none: the spot of the case to change (a JSON pointer) and
/// a message with the fix.
fn chosen_handlers<'r>(
    recipe: &'r Recipe,
    case: &Case,
    event: Event,
) -> Result<Vec<&'r crate::hooks_json::Handler>, (&'static str, String)> {
    let groups: &[crate::hooks_json::Group] = recipe
        .hooks
        .get(event.name())
        .map(Vec::as_slice)
        .unwrap_or_default();
    // `None`: the group runs for every tool.
    let matcher =
        |g: &crate::hooks_json::Group| compile_matcher(g.matcher.as_deref()).ok().flatten();
    let by_matcher = event.is_tool_event() && case.handler.is_none();
    // What the payload holds as `tool_name`: nothing when there is no payload; `None` for
    // raw bytes that are not a JSON object, which name no tool at all.
    let given: Option<Option<Value>> = match &case.payload {
        Value::Null => Some(None),
        payload => payload_object(payload).map(|o| o.get("tool_name").cloned()),
    };
    if by_matcher && given.is_none() && groups.iter().any(|g| matcher(g).is_some()) {
        return Err((
            "/payload",
            format!(
                "the `@raw:` payload is not a JSON object, so it names no tool for the \
                 recipe's matchers; add \"handler\": \"<id>\" to the case to pick the handler \
                 it runs (its handlers for {event}: {})",
                handler_ids(recipe, event).join(", ")
            ),
        ));
    }
    let given = given.flatten();
    // The tool a host matches: the `tool_name` string, else none (empty).
    let tool = given.as_ref().and_then(Value::as_str).unwrap_or("");
    let chosen: Vec<&crate::hooks_json::Handler> = groups
        .iter()
        .filter(|g| !by_matcher || matcher(g).is_none_or(|m| m.is_match(tool)))
        .flat_map(|g| &g.hooks)
        .filter(|h| match &case.handler {
            Some(want) => h.id.as_ref().is_some_and(|id| id.to_string() == *want),
            None => true,
        })
        .collect();
    if !chosen.is_empty() {
        return Ok(chosen);
    }
    if by_matcher && groups.iter().any(|g| !g.hooks.is_empty()) {
        // The matchers passed over the tool: the payload's `tool_name` is the spot, or
        // the payload when it names none.
        let matchers: Vec<String> = groups
            .iter()
            .filter_map(|g| g.matcher.as_ref().map(|m| format!("`{m}`")))
            .collect();
        let which = match given {
            _ if !tool.is_empty() => format!("with tool `{tool}`"),
            Some(Value::String(_)) => "with an empty `tool_name`".to_string(),
            // Hosts read the tool's name from a string only.
            Some(other) => format!("with a `tool_name` that is no string ({other})"),
            None => "with no `tool_name` in the payload".to_string(),
        };
        // The spot the file has: a `@raw:` string, or an object without the key, has
        // no `/payload/tool_name`.
        let spot = match &case.payload {
            Value::Object(o) if o.contains_key("tool_name") => "/payload/tool_name",
            _ => "/payload",
        };
        return Err((
            spot,
            format!(
                "no handler of the recipe runs for {event} {which}: its matchers there are {}; \
                 set the payload's `tool_name` to a tool one of them matches, or pick the \
                 handler with \"handler\"",
                matchers.join(", ")
            ),
        ));
    }
    let events: Vec<&str> = recipe
        .hooks
        .iter()
        .filter(|(_, groups)| groups.iter().any(|g| !g.hooks.is_empty()))
        .map(|(name, _)| name.as_str())
        .collect();
    let fix = if events.is_empty() {
        "it has none at all; add handlers to recipe.json".to_string()
    } else {
        format!(
            "it has none for that event; set `event` to one it has handlers for: {}",
            events.join(", ")
        )
    };
    Err((
        "/event",
        format!("no handler of the recipe runs for {event}: {fix}"),
    ))
}

/// The failed result standing for an entry of `tests` (or `tests` itself) that is meant
/// as a case but is none, `d` saying why; it is named by its path under `tests`.
fn not_a_case(recipe: &Recipe, tests: &Path, d: &Diagnostic) -> CaseResult {
    let file = match d.file.strip_prefix(tests) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => d
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    CaseResult {
        recipe: recipe.id.to_string(),
        file,
        name: String::new(),
        passed: false,
        mismatches: vec![mismatch_line(d)],
        handlers: Vec::new(),
    }
}

/// Runs every case in `source/tests/` against the assembled tree `assembled`; an entry
/// there that is meant as a case but is none fails as a case of its own.
pub fn run_recipe(
    source: &Path,
    assembled: &Path,
    recipe: &Recipe,
) -> Result<Vec<CaseResult>, Error> {
    let tests = source.join("tests");
    let mut out = Vec::new();
    if !tests.is_dir() {
        if let Some(d) = tests_not_a_folder(&tests) {
            out.push(not_a_case(recipe, &tests, &d));
        }
        return Ok(out);
    }
    let (files, problems) = case_files(&tests)?;
    out.extend(problems.iter().map(|d| not_a_case(recipe, &tests, d)));
    for p in files {
        crate::run::check_interrupted()?;
        out.push(run_case(assembled, recipe, &p)?);
    }
    // Reading order, as the folder lists them.
    out.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(out)
}
