//! `hookpack new`: a recipe source tree that validates, assembles and tests as written.
//!
//! The tree is written into a hidden temporary folder beside the target and renamed into
//! place at the end, so a failure never leaves half a recipe behind; an existing target is
//! never touched.

use crate::error::Error;
use crate::id::Id;
use std::path::{Path, PathBuf};

/// What `new` made.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scaffolded {
    /// The recipe id.
    pub id: String,
    /// The new recipe folder.
    #[serde(serialize_with = "crate::output::path_text")]
    pub path: PathBuf,
    /// Files written, relative to `path`, in order.
    pub files: Vec<String>,
}

/// The refusal of `target` when something is there already, saying what: a file or a
/// link there is no folder.
fn target_exists(target: &Path) -> Option<Error> {
    let meta = std::fs::symlink_metadata(target).ok()?;
    let kind = meta.file_type();
    let what = if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_file() {
        "a file"
    } else {
        "a fifo, socket or device"
    };
    Some(Error::ScaffoldTargetExists {
        path: target.to_path_buf(),
        what,
    })
}

/// Creates `<parent>/<id>/` with a working PreToolUse recipe.
pub fn create(id: &Id, parent: &Path) -> Result<Scaffolded, Error> {
    if id.as_str() == "lib" {
        return Err(Error::ScaffoldIdIsHelpers);
    }
    let target = parent.join(id.as_str());
    if let Some(e) = target_exists(&target) {
        return Err(e);
    }
    // A file there is the user's mistake, not a failing disk. A link to a folder not made
    // yet is followed: the folder is made where it points.
    if std::fs::symlink_metadata(parent).is_ok()
        && !parent.is_dir()
        && !crate::fs::dangling_link(parent)
    {
        return Err(Error::ScaffoldDirNotFolder {
            path: parent.to_path_buf(),
        });
    }
    if let Some((recipe, itself)) = enclosing_recipe(parent) {
        let fix = match recipe.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            Some(_) => PathBuf::from("."),
            None => PathBuf::from("/"),
        };
        return Err(Error::ScaffoldInsideRecipe {
            where_: if itself { "" } else { "inside " },
            path: parent.to_path_buf(),
            recipe,
            fix,
        });
    }
    crate::fs::create_dir_all(parent)?;
    remove_dead_staging(parent, id.as_str());
    let staging = parent.join(format!(".{id}.new-{}", crate::leftover::Maker::tag()));
    if std::fs::symlink_metadata(&staging).is_ok() {
        crate::fs::remove_dir_all(&staging)?;
    }
    let files = files(id);
    // The first write is the one a folder this user may not write in refuses: named as
    // that folder, with the fix, not as the hidden staging folder the user never asked for.
    let written = crate::fs::create_dir(&staging).map_err(|e| {
        let kind = e.source.kind();
        if !matches!(
            kind,
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ) {
            return Error::from(e);
        }
        let why = format!(
            "{}; `new` writes the recipe there: give --dir a folder this user may write",
            e.source
        );
        Error::from(crate::fs::FsError::new(
            "write in",
            parent,
            std::io::Error::new(kind, why),
        ))
    });
    let written = written
        .and_then(|()| write_all(&staging, &files))
        .and_then(|()| {
            // Re-check: another process may have created the target meanwhile, and rename
            // would replace an empty folder.
            if let Some(e) = target_exists(&target) {
                return Err(e);
            }
            crate::fs::rename(&staging, &target).map_err(Error::from)
        });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    Ok(Scaffolded {
        id: id.to_string(),
        path: target,
        files: files
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect(),
    })
}

/// Removes from `parent` the staging folders of `new` runs of `id` that were killed before
/// they could (`.<id>.new-<pid>-<start>`, or `.<id>.new-<pid>` from older versions), whose
/// makers no longer run; a running one's is left alone. Best effort: one that cannot be
/// removed stays, as it would have.
fn remove_dead_staging(parent: &Path, id: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let dead = name.to_str().and_then(left_by_killed_new) == Some(id);
        let folder = entry.file_type().is_ok_and(|t| t.is_dir());
        if dead && folder {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The id of a folder named as `new` stages a recipe (`.<id>.new-<pid>-<start>`, or
/// `.<id>.new-<pid>` from older versions) whose maker is gone, as a killed `new` leaves it.
pub(crate) fn left_by_killed_new(name: &str) -> Option<&str> {
    let (id, tag) = name.strip_prefix('.')?.split_once(".new-")?;
    crate::id::Id::parse(id).ok()?;
    // The maker's tag ends these names; `Maker::of` reads it before a part that follows.
    let maker = crate::leftover::Maker::of(&format!("{tag}-"))?;
    (!maker.alive()).then_some(id)
}

/// The recipe folder (one holding a `recipe.json`) that `parent` is or lies inside, if
/// any, and whether it is `parent` itself: a recipe made there would be packed into that
/// recipe's archive. Shown as the user wrote it when their path reaches it, else as an
/// absolute path.
fn enclosing_recipe(parent: &Path) -> Option<(PathBuf, bool)> {
    let absolute = resolved(&std::path::absolute(parent).ok()?);
    let plain = (parent.components()).all(|c| matches!(c, std::path::Component::Normal(_)));
    let given: Vec<&Path> = parent.ancestors().collect();
    let in_recipe = |p: &Path| p.ancestors().position(|a| a.join("recipe.json").is_file());
    let Some(found) = in_recipe(&absolute) else {
        // A link on the way leads where the folder is made (found by review: a link into a
        // recipe, even to a folder not made yet, put the new recipe inside it).
        let real = crate::fs::real_path(parent).ok()?;
        let found = in_recipe(&real)?;
        return Some((real.ancestors().nth(found)?.to_path_buf(), found == 0));
    };
    let shown = match given.get(found) {
        Some(g) if plain && !g.as_os_str().is_empty() => g.to_path_buf(),
        _ => absolute.ancestors().nth(found)?.to_path_buf(),
    };
    Some((shown, found == 0))
}

/// `path` (absolute) as the file system takes it when it holds a `..`: the parent of
/// where its folders lead, not the name before it (`recipes/a/..` is `recipes`, not a
/// folder inside `a`). The part that exists is resolved, the rest taken as written.
fn resolved(path: &Path) -> PathBuf {
    use std::path::Component;
    let parts: Vec<Component> = path.components().collect();
    if !parts.contains(&Component::ParentDir) {
        return path.to_path_buf();
    }
    for k in (1..=parts.len()).rev() {
        let Ok(mut out) = std::fs::canonicalize(parts[..k].iter().collect::<PathBuf>()) else {
            continue;
        };
        for c in &parts[k..] {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(name) => out.push(name),
                _ => {}
            }
        }
        return out;
    }
    path.to_path_buf()
}

/// Writes `files` into the folder `dir`, which exists and is empty.
fn write_all(dir: &Path, files: &[(&str, String)]) -> Result<(), Error> {
    for (name, body) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            crate::fs::create_dir_all(parent)?;
        }
        crate::fs::write_new(&path, body.as_bytes())?;
    }
    Ok(())
}

fn title(id: &Id) -> String {
    id.as_str()
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn files(id: &Id) -> Vec<(&'static str, String)> {
    let manifest = serde_json::json!({
        "schema": crate::recipe::SCHEMA,
        "id": id.as_str(),
        "version": "0.1.0",
        "min_cli": "0.13.0",
        "name": title(id),
        "summary": "Deny `exec` calls whose command matches a pattern.",
        "hooks": {
            "PreToolUse": [{
                "matcher": "exec",
                "hooks": [{
                    // The recipe's own id: hosts run one handler per id and event, so
                    // two scaffolded recipes installed together must not share one.
                    "id": id.as_str(),
                    "type": "command",
                    "command": "node scripts/main.js",
                    "timeout": 10,
                    // A gate: a crash or a timeout denies rather than lets the call through
                    // (hosts fail open by default).
                    "failurePolicy": "deny"
                }]
            }]
        }
    });
    let manifest = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    let readme = format!(
        "# {title}\n\n\
         A PreToolUse recipe for agent CLIs that read `hooks.json` (FinClaw, Codex, Claude Code).\n\
         It denies `exec` calls whose command matches `DENY_PATTERN` in `src/main.ts`.\n\n\
         ## Develop\n\n\
         ```sh\n\
         hookpack validate .            # check recipe.json and the tree\n\
         hookpack test .                # compile src/*.ts in memory, run the cases in tests/\n\
         hookpack pack --recipes-dir .. --out-dir ../../catalog   # publish with the other recipes\n\
         ```\n\n\
         Each file in `tests/` is one case: the event, the stdin payload, and the expected exit\n\
         code and decision.\n",
        title = title(id)
    );
    let main_ts =
        r#"// PreToolUse handler: reads the host's JSON payload on stdin and answers on stdout.
// Exit 0 with no output means "no decision"; exit 0 with a JSON object is a decision.

interface Payload {
  tool_name?: string;
  tool_input?: { command?: string };
}

// Commands this recipe refuses. Edit to taste.
const DENY_PATTERN = /\brm\s+-rf\s+\/(\s|$)/;

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk: string) => (data += chunk));
    process.stdin.on("end", () => resolve(data));
    process.stdin.on("error", reject);
  });
}

async function main(): Promise<void> {
  let payload: Payload;
  try {
    payload = JSON.parse(await readStdin()) as Payload;
  } catch {
    // A gate must not allow what it cannot read.
    deny("could not parse the hook payload");
    return;
  }
  const command = payload.tool_input?.command ?? "";
  if (payload.tool_name === "exec" && DENY_PATTERN.test(command)) {
    deny(`refused by local rule: ${command}`);
  }
}

function deny(reason: string): void {
  process.stdout.write(
    JSON.stringify({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: reason },
    }),
  );
}

await main();
"#
        .to_string();
    let deny_case = serde_json::json!({
        "name": "denies rm -rf /",
        "event": "PreToolUse",
        "payload": { "tool_name": "exec", "tool_input": { "command": "rm -rf /" } },
        "expect": { "exit": 0, "decision": "deny", "reason_contains": "rm -rf" }
    });
    let allow_case = serde_json::json!({
        "name": "says nothing about ls",
        "event": "PreToolUse",
        "payload": { "tool_name": "exec", "tool_input": { "command": "ls -la" } },
        "expect": { "exit": 0, "decision": "none" }
    });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    vec![
        ("recipe.json", manifest),
        ("README.md", readme),
        ("src/main.ts", main_ts),
        ("tests/denies-rm-rf.json", pretty(&deny_case)),
        ("tests/allows-ls.json", pretty(&allow_case)),
    ]
}
