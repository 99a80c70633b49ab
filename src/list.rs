//! `hookpack list`: installed recipes and every handler a host would load, in host order
//! (profile `hooks.json`, then `<workspace>/.finclaw/hooks.json`), with what is wrong with
//! the ones a host would skip.

use crate::diagnostic::{Diagnostic, Findings, Severity};

/// The codes of the problems of a command hosts load but cannot start.
const UNSTARTABLE: [&str; 2] = ["command-nul", "command-too-long"];
use crate::error::Error;
use crate::profile::Profile;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// An installed recipe.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    /// Recipe id.
    pub id: String,
    /// Installed version.
    pub version: String,
    /// Where it came from.
    pub archive_url: String,
    /// Whether its folder is there.
    pub folder_present: bool,
    /// The pin it was installed with (`install ID@REQ`), which `update` stays within.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
}

/// One handler of a `hooks.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// `profile` or `workspace`.
    pub source: &'static str,
    /// The file.
    #[serde(serialize_with = "crate::output::path_text")]
    pub file: PathBuf,
    /// JSON pointer to the handler.
    pub pointer: String,
    /// Event name.
    pub event: String,
    /// Matcher, if any.
    pub matcher: Option<String>,
    /// Handler id, if any.
    pub id: Option<String>,
    /// The recipe that installed it, if any.
    pub recipe: Option<String>,
    /// The command.
    pub command: String,
    /// What a host would reject it for; empty when valid.
    pub problems: Vec<String>,
    /// What hosts pass over in its group, which changes when it runs (a misspelt
    /// `matcher`: the group then runs on every tool); empty when nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub group_notes: Vec<String>,
    /// Its only problems are in its command, which a host loads but cannot start (a NUL
    /// byte, past the kernel's argument size): run, it fails to start.
    #[serde(skip)]
    pub unstartable: bool,
    /// Trust status.
    pub status: crate::trust::Status,
    /// The trust hash as the handler stands now.
    pub hash: crate::sha256::Sha256,
    /// The trust file key.
    pub key: String,
    /// The script the command runs.
    pub script: crate::trust::Script,
    /// The handler as written.
    #[serde(skip)]
    pub handler: Value,
}

/// Everything `list` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// The profile root.
    #[serde(serialize_with = "crate::output::path_text")]
    pub profile: PathBuf,
    /// False when the profile folder does not exist (most likely a misspelt `--profile` or
    /// `$FINCLAW_PROFILE`): nothing is installed there.
    pub profile_exists: bool,
    /// Installed recipes.
    pub recipes: Vec<Installed>,
    /// Handlers, in host order.
    pub handlers: Vec<Listed>,
    /// A change a crash interrupted, which `recipes` shows as recovery will leave it (its
    /// handlers are as their files are now); shown as `{"id": ID, "recovery": "finish" |
    /// "undo"}`, or null.
    #[serde(serialize_with = "interrupted_text")]
    pub interrupted: Option<crate::install::Interrupted>,
}

/// An interrupted change as `list --format json` shows it: the recipe and what recovery
/// will do.
fn interrupted_text<S: serde::Serializer>(
    c: &Option<crate::install::Interrupted>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let shown = c.as_ref().map(|c| {
        serde_json::json!({
            "id": c.id,
            "recovery": c.recovery(),
        })
    });
    serde::Serialize::serialize(&shown, s)
}

/// The handlers of one `hooks.json`, if it exists, with their trust status. A file whose
/// shape hosts cannot walk (an event that is no array of groups, …) is refused as one that
/// is not JSON: listing the rest would pass over its handlers in silence.
pub fn handlers_of(
    file: &Path,
    source: &'static str,
    env: &crate::trust::Env,
    trust: &crate::trust::TrustFile,
) -> Result<Vec<Listed>, Error> {
    handlers_in(file, source, env, trust, true)
}

/// [`handlers_of`], but of a file of an odd shape, the handlers of the parts hosts can
/// walk: for `doctor`, which reports the shape itself.
pub fn walkable_handlers_of(
    file: &Path,
    source: &'static str,
    env: &crate::trust::Env,
    trust: &crate::trust::TrustFile,
) -> Result<Vec<Listed>, Error> {
    handlers_in(file, source, env, trust, false)
}

fn handlers_in(
    file: &Path,
    source: &'static str,
    env: &crate::trust::Env,
    trust: &crate::trust::TrustFile,
    whole: bool,
) -> Result<Vec<Listed>, Error> {
    // No file, or a link to nothing: what a host reads as no file (a link it cannot
    // follow for another reason is refused below, as any link is).
    if std::fs::metadata(file).is_err_and(|e| {
        use std::io::ErrorKind::{NotADirectory, NotFound};
        matches!(e.kind(), NotFound | NotADirectory)
    }) {
        return Ok(Vec::new());
    }
    let (doc, bytes) = crate::install::read_hooks_json_to_list(file)?;
    let bytes = bytes.unwrap_or_default();
    let parsed = crate::json::parse_reading_huge_numbers(&bytes).ok();
    if let (true, Err(e)) = (whole, crate::merge::check_shape(&doc)) {
        let at = (parsed.as_ref())
            .map(|p| p.locations.locate(&e.pointer))
            .unwrap_or(crate::json::Position { line: 1, column: 1 });
        return Err(Error::HooksJsonUnreadable {
            path: file.to_path_buf(),
            why: format!(
                "its shape is not one hosts can walk: {} at {}:{} ({}), and hosts skip what \
                 it holds; fix it by hand (`hookpack validate {}` shows every problem)",
                e.why,
                at.line,
                at.column,
                if e.pointer.is_empty() {
                    "/"
                } else {
                    &e.pointer
                },
                crate::advice::quote_on_one_line(&file.to_string_lossy())
            ),
        });
    }
    let mut f = Findings::new(file, parsed.as_ref().map(|p| &p.locations));
    crate::hooks_json::check_document(&doc, &mut f);
    // Errors, and unknown fields: hosts skip a handler with a field they do not know
    // (the unknown fields of groups and of the document are not matched to a handler).
    let problems: Vec<_> = f
        .finish()
        .into_iter()
        .filter(|d| d.severity == Severity::Error || d.code == "unknown-field")
        .collect();
    let mut out = Vec::new();
    for (event, groups) in doc
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for (gi, g) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = g.get("matcher").and_then(Value::as_str).map(String::from);
            let group_notes = group_notes(event, g);
            for (hi, h) in g
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let pointer = format!(
                    "{}/{gi}/hooks/{hi}",
                    crate::json::pointer_push("/hooks", event)
                );
                let gp = format!("{}/{gi}", crate::json::pointer_push("/hooks", event));
                let found: Vec<&Diagnostic> = problems
                    .iter()
                    .filter(|d| {
                        d.pointer == pointer
                            || d.pointer.starts_with(&format!("{pointer}/"))
                            || d.pointer == format!("{gp}/matcher")
                            || d.pointer == crate::json::pointer_push("/hooks", event)
                    })
                    .collect();
                let unstartable =
                    !found.is_empty() && (found.iter()).all(|d| UNSTARTABLE.contains(&d.code));
                let mut mine: Vec<String> = found.iter().map(|d| d.message.clone()).collect();
                let subject = crate::trust::Subject {
                    event,
                    matcher: matcher.as_deref(),
                    handler: h,
                };
                let (hash, script) = match crate::trust::hash(&subject, env) {
                    Ok(hashed) => hashed,
                    // A script that cannot be read (another user's, a failing disk) cannot
                    // be hashed, so hosts never run it: that handler's problem, not one
                    // that hides every other handler.
                    Err(e) => {
                        mine.push(match e {
                            // Never read, so never trusted: a hook script is a few KiB.
                            Error::ScriptTooLarge { .. } => format!(
                                "{e}, and hookpack never trusts or runs it; check that the \
                                 command names the script meant (not a data file, nor one \
                                 that grows), or make the script smaller"
                            ),
                            _ => format!(
                                "{e}, so its trust hash cannot be taken and hosts never run \
                                 it; make the script readable"
                            ),
                        });
                        let cmd = h.get("command").and_then(Value::as_str).unwrap_or_default();
                        (
                            crate::sha256::Sha256::of(
                                crate::trust::canonical(&subject, None).as_bytes(),
                            ),
                            crate::trust::resolve_script(cmd, env),
                        )
                    }
                };
                let key = crate::trust::key(file, event, h);
                let status = crate::trust::status(trust, &key, &hash, &script, mine.is_empty());
                out.push(Listed {
                    status,
                    hash,
                    key,
                    script,
                    handler: h.clone(),
                    source,
                    file: file.to_path_buf(),
                    pointer,
                    event: event.clone(),
                    matcher: matcher.clone(),
                    id: h.get("id").and_then(Value::as_str).map(String::from),
                    recipe: h.get("recipe").and_then(Value::as_str).map(String::from),
                    command: h
                        .get("command")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    // (Not when its script cannot be hashed either.)
                    unstartable: unstartable && mine.len() == found.len(),
                    problems: mine,
                    group_notes: group_notes.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// What hosts pass over in the matcher group `g` of `event`: each field other than
/// `matcher` and `hooks`, said with what it means for when its handlers run.
fn group_notes(event: &str, g: &Value) -> Vec<String> {
    let Some(obj) = g.as_object() else {
        return Vec::new();
    };
    let tool_event = crate::event::Event::parse(event).is_some_and(|e| e.is_tool_event());
    crate::hooks_json::unknown_group_fields(obj)
        .map(|key| {
            let effect = if tool_event && !obj.contains_key("matcher") {
                ", so the group has no matcher and runs on every tool"
            } else {
                ""
            };
            format!(
                "its group has the field `{key}`{}, which hosts pass over{effect}",
                crate::event::did_you_mean(key, &crate::hooks_json::GROUP_FIELDS)
            )
        })
        .collect()
}

/// `<workspace>/.finclaw/hooks.json`.
pub fn workspace_hooks_json(workspace: &Path) -> PathBuf {
    workspace.join(".finclaw").join("hooks.json")
}

/// The `hooks.json` files a host loads, in host order (profile, then workspace), each with
/// the name of its source.
pub fn hooks_files(profile: &Profile, workspace: &Path) -> [(PathBuf, &'static str); 2] {
    [
        (profile.hooks_json(), "profile"),
        (workspace_hooks_json(workspace), "workspace"),
    ]
}

/// What commands are resolved against: the profile root and the workspace.
pub fn env_of(profile: &Profile, workspace: &Path) -> crate::trust::Env {
    crate::trust::Env {
        profile_root: profile.root.clone(),
        workspace: workspace.to_path_buf(),
    }
}

/// Every handler a host would load, in host order: profile, then workspace.
pub fn all_handlers(
    profile: &Profile,
    workspace: &Path,
    trust: &crate::trust::TrustFile,
) -> Result<Vec<Listed>, Error> {
    let env = env_of(profile, workspace);
    let mut handlers = Vec::new();
    for (file, source) in hooks_files(profile, workspace) {
        handlers.extend(handlers_of(&file, source, &env, trust)?);
    }
    Ok(handlers)
}

/// Collects the listing.
pub fn collect(profile: &Profile, workspace: &Path) -> Result<Listing, Error> {
    let workspace = &crate::fs::absolute(workspace);
    // As the next command that writes the profile will leave it.
    let (receipts, interrupted) = crate::install::receipts_after_recovery(profile)?;
    let recipes = receipts
        .into_iter()
        .map(|r| Installed {
            folder_present: crate::install::folder_after_recovery(
                profile,
                interrupted.as_ref(),
                &r.id,
            )
            .is_some_and(|f| f.is_dir()),
            id: r.id,
            version: r.version,
            archive_url: r.archive_url,
            pin: r.pin,
        })
        .collect();
    let trust = crate::trust::TrustFile::read(&profile.trust_file())?;
    let handlers = all_handlers(profile, workspace, &trust)?;
    Ok(Listing {
        profile: profile.root.clone(),
        profile_exists: profile.root.exists(),
        recipes,
        handlers,
        interrupted,
    })
}
