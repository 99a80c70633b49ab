//! `hookpack doctor`: what hosts fail on silently.
//!
//! Finds stamped entries whose recipe folder or receipt is gone, receipts whose entries or
//! folder are gone, installed trees that differ from their receipt, scripts that are
//! missing, handlers a host would skip, interrupted commits and staging leftovers, and
//! trust entries for handlers that no longer exist. A `hooks.json` that cannot be read, or
//! whose shape hosts cannot walk, is reported, and its trust entries are left alone; so is
//! a profile folder that does not exist.
//! `--fix` repairs only what is safe: interrupted commits (rolled forward or back), staging
//! leftovers, dangling trust entries.

use crate::diagnostic::{Diagnostic, Severity};
use crate::error::Error;
use crate::profile::Profile;
use crate::receipt;
use crate::trust::{Status, TrustFile};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The outcome of a check.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Problems found (after fixing, with `--fix`).
    pub problems: Vec<Diagnostic>,
    /// What `--fix` did.
    pub fixed: Vec<String>,
    /// Handlers hosts skip until they are trusted (again): no problem with the profile, but
    /// the likeliest reason a hook does not run.
    pub awaiting_trust: Vec<AwaitingTrust>,
}

/// A handler that was never trusted, or changed since it was.
#[derive(Debug, Clone, Serialize)]
pub struct AwaitingTrust {
    /// Its trust key.
    pub key: String,
    /// `untrusted` or `modified`.
    pub status: Status,
    /// The recipe that installed it, if any.
    pub recipe: Option<String>,
    /// `profile`, or `workspace` for one in the working folder's `.finclaw/hooks.json`.
    pub source: &'static str,
}

impl Report {
    /// The note on [`Report::awaiting_trust`], when there is one.
    pub fn awaiting_trust_note(&self) -> Option<String> {
        let count = |status| {
            (self.awaiting_trust.iter())
                .filter(|h| h.status == status)
                .count()
        };
        let (never, changed) = (count(Status::Untrusted), count(Status::Modified));
        let parts: Vec<String> = [
            (never, "never trusted"),
            (changed, "changed since it was trusted"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let total = never + changed;
        let them = if total == 1 { "it" } else { "them" };
        // `trust --all` would trust the workspace's handlers too: a cloned
        // repository's, which are not to be trusted unread.
        let in_workspace = (self.awaiting_trust.iter())
            .filter(|h| h.source == "workspace")
            .count();
        let how = if in_workspace == 0 {
            format!("`hookpack trust --all` trusts {them}")
        } else {
            // `trust --recipe` takes the profile's handlers only.
            let mut recipes: Vec<&str> = (self.awaiting_trust.iter())
                .filter(|h| h.source == "profile")
                .filter_map(|h| h.recipe.as_deref())
                .collect();
            recipes.sort_unstable();
            recipes.dedup();
            let by_recipe = match recipes.as_slice() {
                [] => String::new(),
                [one] => format!("`hookpack trust --recipe {one}` trusts an installed recipe's, "),
                _ => "`hookpack trust --recipe ID` trusts an installed recipe's, ".to_string(),
            };
            format!(
                "{by_recipe}`hookpack trust --key KEY` one you have read; {in_workspace} \
                 {} in the workspace's .finclaw/hooks.json, so not `trust --all`, which \
                 would trust {} unread",
                if in_workspace == 1 { "is" } else { "are" },
                if in_workspace == 1 {
                    "that one"
                } else {
                    "those"
                },
            )
        };
        (total > 0).then(|| {
            format!(
                "{total} handler{} will not run until {} trusted ({}); `hookpack list` names \
                 {them}, {how}",
                if total == 1 { "" } else { "s" },
                if total == 1 { "it is" } else { "they are" },
                parts.join(", "),
            )
        })
    }
}

/// A finding that breaks nothing (`doctor` exits 0 on these alone).
fn warning(out: &mut Vec<Diagnostic>, file: &Path, code: &'static str, msg: String) {
    out.push(Diagnostic::file_level(file, Severity::Warning, code, msg));
}

fn problem(out: &mut Vec<Diagnostic>, file: &Path, pointer: &str, code: &'static str, msg: String) {
    out.push(Diagnostic {
        pointer: pointer.into(),
        ..Diagnostic::file_level(file, Severity::Error, code, msg)
    });
}

/// What following a repair advice `hookpack install ID@VERSION` does besides: the
/// `@VERSION` records a pin (README, the user flow), which `update` then keeps. Empty when
/// the recipe is pinned to that version already. `index` is the advice's ` --index URL`
/// (or nothing): the command that lifts the pin or puts the user's back reads the same
/// index, since the default one need not list the recipe.
pub(crate) fn pin_note(id: &str, version: &str, pin: Option<&str>, index: &str) -> String {
    // `=0.1.0` is that one version too, written as a range.
    let exact = |p: &str| {
        let p = p.trim().strip_prefix('=').unwrap_or(p);
        matches!(crate::install::Want::parse(id, p.trim()),
                 Ok(crate::install::Want::Exact(v)) if v.to_string() == version)
    };
    match pin {
        Some(p) if exact(p) => String::new(),
        // Quoted as the shell needs it: a range such as `>=0.1, <0.3` holds a redirection
        // and a space.
        Some(p) => format!(
            " (that pins `{id}` to {version} in place of `{p}`; `hookpack install {}{index}` \
             then records your pin again, and takes the newest version it allows)",
            crate::command::shell_quote(&format!("{id}@{p}"))
        ),
        None => format!(
            " (that pins `{id}` to {version}, where `update` then leaves it; a later \
             `hookpack install {id}{index}` lifts the pin)"
        ),
    }
}

/// What a command `hookpack install ID…` for a recipe of `index` (a location as receipts
/// record it) adds: ` --index URL` when that is another index than the one `install` reads
/// by default (an `--index` given then), which need not list the recipe; else nothing.
pub(crate) fn index_flag(profile: &Profile, index: &str) -> String {
    match profile.resolve_index(None) {
        Ok((d, _)) if crate::install::same_index(index, &crate::install::recorded_index(&d)) => {
            String::new()
        }
        _ => format!(
            " --index {}",
            crate::command::shell_quote(&crate::fetch::shown_url(index))
        ),
    }
}

/// The command that installs the version `r` records again, which is how doctor's findings
/// are put right, and what to say of it: for a recipe installed from an index, `hookpack
/// install ID@VERSION` with its [`pin_note`]; for one installed with `--archive` (its
/// receipt names no index), which the index in use need not list at all, that archive
/// again, checked against the digest the receipt records. `install --archive` records no
/// pin, so that command changes none.
pub(crate) fn reinstall(profile: &Profile, r: &receipt::Receipt) -> (String, String) {
    if let Some(index) = &r.index_url {
        let flag = index_flag(profile, index);
        return (
            format!("hookpack install {}@{}{flag}", r.id, r.version),
            pin_note(&r.id, &r.version, r.pin.as_deref(), &flag),
        );
    }
    let location = crate::fetch::Location::parse(&r.archive_url);
    let shown = match &location {
        Ok(crate::fetch::Location::Path(_)) => r.archive_url.clone(),
        _ => crate::fetch::shown_url(&r.archive_url),
    };
    let command = format!(
        "hookpack install --archive {} --sha256 {}",
        crate::command::shell_quote(&shown),
        r.sha256
    );
    let note = match &location {
        // Receipts of releases before the path was recorded absolute name it as given.
        Ok(crate::fetch::Location::Path(p)) if p.is_relative() => {
            " (the archive it was installed from, named as it was given to install: relative \
             to the folder install ran in)"
        }
        Ok(crate::fetch::Location::Path(p)) if !p.is_file() => {
            " (the archive it was installed from, no longer there: give --archive a copy of it)"
        }
        _ => "",
    };
    (command, note.to_string())
}

/// What to say of a profile folder that does not exist (`list` says it too).
pub fn profile_missing(profile: &Profile) -> String {
    format!(
        "the profile folder {} does not exist, so nothing is installed there; check \
         --profile, $FINCLAW_PROFILE and $FINCLAW_HOME/active-profile (`hookpack install ID` \
         creates it)",
        profile.root.display()
    )
}

/// Checks the profile (and workspace) and, with `fix`, repairs what is safe.
pub fn check(profile: &Profile, workspace: &Path, fix: bool) -> Result<Report, Error> {
    let mut fixed = Vec::new();
    let mut out = Vec::new();
    // Most likely a misspelt name or path; or the profile was moved away, and then its
    // trust entries may be wanted back with it: they are left alone, and nothing is created.
    let exists = profile.root.exists();
    if !exists {
        problem(
            &mut out,
            &profile.root,
            "",
            "profile-missing",
            profile_missing(profile),
        );
    }
    // What install and update stop on (a config.yaml that is a folder, not YAML, …).
    if exists {
        if let Err(Error::ConfigInvalid { path, why }) = profile.configured_index() {
            problem(&mut out, &path, "", "config-invalid", why);
        }
    }
    // The lock is taken only when there is something to finish or remove, so a sound
    // profile on a read-only file system is checked, not refused.
    let to_recover = crate::install::interrupted(profile)
        || !crate::install::temporary_leftovers(profile).is_empty();
    if fix && exists && to_recover {
        let _lock = crate::profile::Lock::acquire(profile, crate::profile::lock_wait())?;
        fixed.extend(crate::install::recover(profile)?);
    }
    // A change a crash interrupted (none once recovered): its staging folder is what
    // recovery works from, not a leftover, and its recipe's folder, receipt and handlers
    // are checked once recovery has finished or undone it, not half way.
    let pending = crate::install::interrupted_change(profile);
    let in_pending = |id: &str| pending.as_ref().is_some_and(|c| c.id == id);
    let of_pending = |h: &&crate::list::Listed| {
        h.source == "profile" && h.recipe.as_deref().is_some_and(in_pending)
    };
    // Held while the handlers are read and the trust entries left dangling are dropped, so
    // no install lands in between (its new handlers' trust would go). Shared: a read-only
    // profile is no obstacle.
    let _shared = match fix && exists {
        true => crate::profile::Lock::acquire_shared(profile, crate::profile::lock_wait())?,
        false => None,
    };
    // Those of trust file writes, beside it (their maker is gone: no write is going on).
    for path in crate::pack::dead_temporary_files(&profile.home) {
        if fix {
            crate::fs::remove_file(&path)?;
            fixed.push(format!("removed the temporary file {}", path.display()));
        } else {
            warning(&mut out, &path, "staging-leftover", "a temporary file of a write of the trust file that did not finish (harmless: the trust file is whole); `hookpack doctor --fix` removes it".into());
        }
    }
    if let Some((path, why)) = receipt::folder_not_folder(profile) {
        problem(&mut out, &path, "", "hooks-not-folder", why.to_string());
    }
    if std::fs::symlink_metadata(profile.journal()).is_ok_and(|m| m.is_dir()) {
        problem(
            &mut out,
            &profile.journal(),
            "",
            "journal-unusable",
            crate::install::JOURNAL_FOLDER_WHY.to_string(),
        );
    } else if profile.journal().exists() {
        let why = match &pending {
            Some(c) => format!(
                "a change of `{id}` was interrupted; `hookpack doctor --fix` (or the next \
                 install, update or remove) will {will} it; `{id}` is checked once that is done",
                id = c.id,
                will = c.recovery(),
            ),
            None => match crate::install::unusable_journal(profile) {
                Some(why) => format!(
                    "hookpack cannot use this journal of an interrupted change ({why}); \
                     `hookpack doctor --fix` (or the next install, update or remove) deletes \
                     it, finishing or undoing nothing; run `hookpack doctor` after that to see \
                     what the change left"
                ),
                None => "an install, update or remove was interrupted; `hookpack doctor --fix` \
                         (or the next install, update or remove) finishes or undoes it"
                    .into(),
            },
        };
        problem(&mut out, &profile.journal(), "", "interrupted-commit", why);
    }
    // What stands where a lock file goes stops every change it guards.
    for (lock, whose, stops) in [
        (
            profile.lock_file(),
            "the profile's lock file",
            "every install, update and remove",
        ),
        (
            crate::trust::lock_file(profile),
            "the trust file's lock file",
            "every trust and revoke (and a remove's dropping of trust)",
        ),
    ] {
        let Ok(m) = std::fs::symlink_metadata(&lock) else {
            continue;
        };
        let what = if m.is_dir() {
            Some("a folder")
        } else if m.is_symlink() {
            Some("a symbolic link")
        } else if !m.is_file() {
            Some("a fifo, socket or device")
        } else {
            None
        };
        if let Some(what) = what {
            problem(&mut out, &lock, "", "lock-unusable", format!("it is {what}, where hookpack makes {whose}, so {stops} stops on it; remove it (hookpack makes the lock file anew)"));
        }
    }
    match crate::install::staging_folders(profile) {
        Ok(folders) => {
            // One whose maker still runs is an install under way, not a leftover.
            let pending_staging = |path: &Path| {
                (pending.as_ref()).is_some_and(|c| c.staging.file_name() == path.file_name())
            };
            for (path, _) in (folders.into_iter())
                .filter(|(path, maker)| !maker.alive() && !pending_staging(path))
            {
                warning(&mut out, &path, "staging-leftover", "a staging folder of an install, update or remove that did not finish before its commit (a download or a recipe tree it was staging, readable by this user only; no change is half made, or doctor would name it); `hookpack doctor --fix` removes it, as the next install, update or remove does".into());
            }
        }
        Err(Error::ConfigInvalid { path, why }) => {
            problem(&mut out, &path, "", "staging-unusable", why)
        }
        Err(e) => return Err(e),
    }
    for path in crate::install::temporary_leftovers(profile) {
        warning(
            &mut out,
            &path,
            "staging-leftover",
            "a temporary file of a change that did not finish (harmless); `hookpack doctor \
             --fix` removes it, as the next install, update or remove does"
                .into(),
        );
    }
    let workspace = crate::fs::absolute(workspace);
    let trust_path = profile.trust_file();
    // A trust file that cannot be read is reported like an unreadable hooks.json, and the
    // rest is checked all the same; which of its entries dangle cannot be told, and it is
    // never written.
    let (mut trust, trust_readable) = match TrustFile::read(&trust_path) {
        Ok(t) => (t, true),
        Err(Error::ConfigInvalid { path, why } | Error::HooksJsonRefused { path, why }) => {
            problem(&mut out, &path, "", "trust-file-unreadable", why);
            (TrustFile::default(), false)
        }
        Err(Error::Fs(e)) if e.is_input_problem() => {
            problem(
                &mut out,
                &e.path.clone(),
                "",
                "trust-file-unreadable",
                format!("{e}; fix or remove it"),
            );
            (TrustFile::default(), false)
        }
        Err(e) => return Err(e),
    };
    // A hooks.json that cannot be read is itself the problem; its trust entries are then
    // left alone, since which of them still name a handler cannot be told. The other
    // file's handlers are checked all the same.
    let env = crate::list::env_of(profile, &workspace);
    let mut handlers = Vec::new();
    let mut unreadable = BTreeSet::new();
    if !exists {
        unreadable.insert(profile.hooks_json().display().to_string());
    }
    // A workspace that is not a folder (moved, not mounted, misspelt) is warned of, and its
    // handlers are not taken; whether its trust entries still name handlers cannot be told.
    if !workspace.is_dir() {
        unreadable.insert(
            crate::list::workspace_hooks_json(&workspace)
                .display()
                .to_string(),
        );
    }
    // A link to nothing (say, to a disk not mounted) holds no handlers for hosts, as no file
    // does; but the file may come back, and which of its handlers are gone cannot be told,
    // so their trust entries stay. (The profile's is `hooks-json-refused`, below.)
    let link_to_nothing =
        |file: &Path| crate::fs::link_shown(file).is_some() && std::fs::metadata(file).is_err();
    let links_to_nothing: BTreeSet<String> = crate::list::hooks_files(profile, &workspace)
        .into_iter()
        .filter(|(file, _)| link_to_nothing(file))
        .map(|(file, _)| file.display().to_string())
        .collect();
    for (file, source) in crate::list::hooks_files(profile, &workspace) {
        match crate::list::walkable_handlers_of(&file, source, &env, &trust) {
            Ok(found) => {
                // Parts of another shape hold handlers no one can list, so which trust
                // entries still name one cannot be told either: as for an unreadable file.
                let oddity = odd_shape(&file)?;
                if let Oddity::Warnings(warnings) = oddity {
                    out.extend(warnings);
                } else if let Oddity::Shape(e, at) = oddity {
                    out.push(Diagnostic {
                        line: Some(at.line),
                        column: Some(at.column),
                        pointer: e.pointer,
                        ..Diagnostic::file_level(&file, Severity::Error, "hooks-json-shape", format!("{}: hosts skip what it holds, and install, update and remove will not rewrite the file; fix it by hand (`hookpack validate {}` shows every problem)", e.why, crate::advice::quote_on_one_line(&file.to_string_lossy())))
                    });
                    unreadable.insert(file.display().to_string());
                }
                handlers.extend(found)
            }
            Err(Error::HooksJsonUnreadable { path, why }) => {
                problem(&mut out, &path, "", "hooks-json-unreadable", why);
                unreadable.insert(file.display().to_string());
            }
            Err(e) => return Err(e),
        }
    }
    // Readable, but not to be rewritten (a second name, a number that would lose digits):
    // every install, update and remove stops on it.
    let hooks = profile.hooks_json();
    if !unreadable.contains(&hooks.display().to_string()) {
        if let Err(Error::HooksJsonRefused { path, why }) = crate::install::read_hooks_json(&hooks)
        {
            let why = format!("install, update and remove refuse to rewrite it: {why}");
            problem(&mut out, &path, "", "hooks-json-refused", why);
        }
    }
    let (receipts, unreadable_receipts) = receipt::all_readable(profile)?;
    for (path, why) in &unreadable_receipts {
        problem(&mut out, path, "", "receipt-unreadable", why.clone());
    }
    let unreadable_ids: BTreeSet<String> = unreadable_receipts
        .iter()
        .filter_map(|(p, _)| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let hooks_file = profile.hooks_json();
    for h in handlers.iter().filter(|h| !of_pending(h)) {
        match h.status {
            Status::Invalid => problem(
                &mut out,
                &h.file,
                &h.pointer,
                "handler-invalid",
                format!("hosts skip this handler: {}", h.problems.join("; ")),
            ),
            Status::ScriptMissing => {
                if let crate::trust::Script::Missing(p) = &h.script {
                    problem(
                        &mut out,
                        &h.file,
                        &h.pointer,
                        "script-missing",
                        format!(
                            "the command runs {}, which {}",
                            p.display(),
                            // A folder, fifo or device there is no script either.
                            if std::fs::symlink_metadata(p).is_ok() {
                                "is not a regular file"
                            } else {
                                "does not exist"
                            }
                        ),
                    );
                }
            }
            Status::ScriptUnknown => {
                if let crate::trust::Script::Unresolved(p) = &h.script {
                    let (why, fix) = crate::trust::unresolved_why(p, &h.command, &env);
                    problem(
                        &mut out,
                        &h.file,
                        &h.pointer,
                        "script-unknown",
                        format!("{why}, and it is never trusted; {fix}"),
                    );
                }
            }
            Status::ScriptWritableByOthers => {
                if let crate::trust::Script::File(p) = &h.script {
                    if let Some(why) = crate::trust::script_exposure(p).refusal(p) {
                        problem(
                            &mut out,
                            &h.file,
                            &h.pointer,
                            "script-writable-by-others",
                            format!(
                                "{why}; until then trust refuses it and run skips \
                                 it, trusted or not"
                            ),
                        );
                    }
                }
            }
            _ => {
                if let crate::trust::Script::File(p) = &h.script {
                    if let Some(why) = crate::trust::script_exposure(p).group_warning(p) {
                        out.push(Diagnostic {
                            pointer: h.pointer.clone(),
                            ..Diagnostic::file_level(
                                &h.file,
                                Severity::Warning,
                                "script-writable-by-group",
                                why,
                            )
                        });
                    }
                    if runs_directly(&h.command) && !crate::fs::executable(p) {
                        problem(
                            &mut out,
                            &h.file,
                            &h.pointer,
                            "script-not-executable",
                            format!(
                                "the command runs {} directly, and it has no execute bit, so \
                                 hosts fail it (exit 126, Permission denied){}; make it \
                                 executable (`chmod +x {}`), or run it with its interpreter \
                                 (`{}`)",
                                p.display(),
                                match h.handler["failurePolicy"] == "deny" {
                                    true => ", and its `failurePolicy: deny` denies every call",
                                    false => "",
                                },
                                p.display(),
                                crate::command::with_interpreter(&p.display().to_string()),
                            ),
                        );
                    }
                }
            }
        }
        // A stamp that is no recipe id (written by hand) is the handler's problem, reported
        // above as one hosts skip: no recipe of that name can be installed or removed.
        if let Some(r) = h
            .recipe
            .as_ref()
            .filter(|r| crate::id::Id::parse(r).is_ok())
        {
            if h.source == "profile" {
                if !receipts.iter().any(|x| x.id == *r) && !unreadable_ids.contains(r) {
                    // `install ID` alone takes the newest, refused over files another
                    // version put there: name the one the folder holds.
                    let (spec, note) = match crate::install::held_version(&profile.recipe_dir(r)) {
                        Some(v) => (format!("{r}@{v}"), pin_note(r, &v.to_string(), None, "")),
                        None => (r.clone(), String::new()),
                    };
                    problem(&mut out, &h.file, &h.pointer, "receipt-missing", format!("stamped by recipe `{r}`, which has no install receipt; reinstall it with `hookpack install {spec}`{note}, adding the `--index` it came from if that is not the default (with no receipt, hookpack cannot tell where it came from; for one installed from an archive, `hookpack install --archive FILE --sha256 HEX`), or drop it with `hookpack remove {r}`"));
                }
                if !profile.recipe_dir(r).is_dir() {
                    // The installed version, as the receipt's own finding names it: `install
                    // ID` alone would take the newest instead of restoring it.
                    let (command, note) = match receipts.iter().find(|x| x.id == *r) {
                        Some(x) => reinstall(profile, x),
                        None => (format!("hookpack install {r}"), String::new()),
                    };
                    problem(&mut out, &h.file, &h.pointer, "recipe-folder-missing", format!("stamped by recipe `{r}`, whose folder {} is gone; `{command}` restores it{note}, `hookpack remove {r}` drops it", profile.recipe_dir(r).display()));
                }
            }
        }
    }
    for r in receipts.iter().filter(|r| !in_pending(&r.id)) {
        let (command, note) = reinstall(profile, r);
        let rp = receipt::path(profile, &r.id);
        let dir = profile.recipe_dir(&r.id);
        // Hosts run none of a handler deleted from hooks.json, and `install ID@VERSION` takes
        // one missing as damage to repair: so is each, also beside the recipe's others.
        let stamped: Vec<_> = (handlers.iter())
            .filter(|h| h.source == "profile" && h.recipe.as_deref() == Some(r.id.as_str()))
            .collect();
        let missing: Vec<String> = (r.handlers.iter())
            .filter(|rh| {
                !(stamped.iter()).any(|h| h.event == rh.event && h.id.as_deref() == Some(&rh.id))
            })
            .map(|rh| format!("`{}` ({})", rh.id, rh.event))
            .collect();
        if stamped.is_empty() && !r.handlers.is_empty() {
            problem(&mut out, &hooks_file, "", "entries-missing", format!("`{}` is installed but hooks.json has none of its handlers; `{command}` puts them back{note}", r.id));
        } else if !missing.is_empty() {
            problem(&mut out, &hooks_file, "", "entries-missing", format!("`{}` is installed but hooks.json lacks its handler(s) {}, which hosts therefore never run; `{command}` puts them back{note}", r.id, missing.join(", ")));
        }
        // A working copy linked in for development: the host runs it, but install, update
        // and remove refuse it, and its files differ from the receipt by design.
        if let Some(target) = crate::fs::link_shown(&dir) {
            out.push(Diagnostic::file_level(
                &dir,
                Severity::Warning,
                "recipe-folder-link",
                format!(
                    "`{}` is installed here as a symbolic link{target}, which `hookpack \
                     install`, `update` and `remove` refuse to go through; to hand it back to \
                     hookpack, remove the link (what it points to stays) and run \
                     `{command}`{note}",
                    r.id
                ),
            ));
            continue;
        }
        if !dir.is_dir() {
            problem(
                &mut out,
                &rp,
                "",
                "recipe-folder-missing",
                format!(
                    "`{}` has a receipt but its folder {} is gone; `{command}` restores \
                     it{note}",
                    r.id,
                    dir.display(),
                ),
            );
            continue;
        }
        out.extend(tree_drift(profile, &dir, r));
    }
    // Trust entries for handlers that no longer exist.
    let live: BTreeSet<&str> = handlers.iter().map(|h| h.key.as_str()).collect();
    let dangling: Vec<String> = (trust.handlers.keys())
        .filter(|_| trust_readable)
        // Those recovery of an interrupted change drops itself are that change's.
        .filter(|k| !(pending.as_ref()).is_some_and(|c| c.forget_trust.contains(k)))
        .filter(|k| {
            let file = crate::trust::split_key(k).map_or("", |(file, _)| file);
            !unreadable.contains(file)
                && !links_to_nothing.contains(file)
                && !live.contains(k.as_str())
                && belongs_here(k, profile, &workspace)
        })
        .cloned()
        .collect();
    if fix && !dangling.is_empty() {
        let _lock = crate::profile::Lock::acquire_file(
            &crate::trust::lock_file(profile),
            crate::profile::lock_wait(),
        )?;
        trust = TrustFile::read(&trust_path)?;
        for k in &dangling {
            trust.handlers.remove(k);
            fixed.push(format!("removed the trust entry {k} (no such handler)"));
        }
        trust.write(&trust_path)?;
    } else {
        for k in dangling {
            problem(&mut out, &trust_path, "", "trust-dangling", format!("trust entry {k} names a handler that no longer exists; `hookpack doctor --fix` removes it"));
        }
    }
    // Read against no trust file, every handler would be "never trusted": which are cannot
    // be told (`trust-file-unreadable` says why).
    let awaiting_trust = (handlers.iter())
        .filter(|_| trust_readable)
        .filter(|h| matches!(h.status, Status::Untrusted | Status::Modified))
        .filter(|h| !of_pending(h))
        .map(|h| AwaitingTrust {
            key: h.key.clone(),
            status: h.status,
            recipe: h.recipe.clone(),
            source: h.source,
        })
        .collect();
    // A handler hosts skip is named once, as `handler-invalid`: what validate warns of
    // inside it (an unknown field) says nothing more.
    let skipped: Vec<(std::path::PathBuf, String)> = (out.iter())
        .filter(|d| d.code == "handler-invalid")
        .map(|d| (d.file.clone(), format!("{}/", d.pointer)))
        .collect();
    out.retain(|d| {
        d.severity == Severity::Error
            || !(skipped.iter()).any(|(f, p)| *f == d.file && d.pointer.starts_with(p.as_str()))
    });
    // At their line and column too, as `validate` gives them, for an editor to jump to.
    crate::diagnostic::place(&mut out, None, |_, _, pointer| Some(pointer.to_string()));
    Ok(Report {
        problems: out,
        fixed,
        awaiting_trust,
    })
}

/// What is odd in the `hooks.json` `file` beyond its handlers' own problems: a part of
/// another shape (an error, found first), else what `hookpack validate` warns of in it
/// (a `matcher` hosts ignore, a command the shell cannot parse, an unknown field, …).
fn odd_shape(file: &Path) -> Result<Oddity, Error> {
    if !file.exists() {
        return Ok(Oddity::Warnings(Vec::new()));
    }
    let (doc, bytes) = crate::install::read_hooks_json_to_list(file)?;
    let bytes = bytes.unwrap_or_default();
    let Err(e) = crate::merge::check_shape(&doc) else {
        let found = crate::hooks_json::validate_bytes(file, &bytes);
        let warnings = (found.into_iter())
            .filter(|d| d.severity == Severity::Warning)
            // A command the shell refuses fails every run of its handler (and blocks the
            // call on tool and prompt events): broken, not merely odd.
            .map(|d| match d.code {
                "command-unparsable" => Diagnostic {
                    severity: Severity::Error,
                    ..d
                },
                _ => d,
            });
        return Ok(Oddity::Warnings(warnings.collect()));
    };
    // The file was just read as JSON, so it parses again.
    let at = crate::json::parse_reading_huge_numbers(&bytes)
        .map(|p| p.locations.locate(&e.pointer))
        .unwrap_or(crate::json::Position { line: 1, column: 1 });
    Ok(Oddity::Shape(e, at))
}

/// What [`odd_shape`] found.
enum Oddity {
    Shape(crate::merge::ShapeError, crate::json::Position),
    Warnings(Vec<Diagnostic>),
}

/// Trust entries of other profiles' and workspaces' files are not this check's business.
fn belongs_here(key: &str, profile: &Profile, workspace: &Path) -> bool {
    let Some((file, _)) = crate::trust::split_key(key) else {
        return false;
    };
    file == profile.hooks_json().display().to_string()
        || file
            == crate::list::workspace_hooks_json(workspace)
                .display()
                .to_string()
}

/// Differences between an installed tree and its receipt (`install` of the same version
/// writes the tree again when there are any).
pub(crate) fn tree_drift(profile: &Profile, dir: &Path, r: &receipt::Receipt) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let (command, note) = reinstall(profile, r);
    for f in &r.files {
        let p = dir.join(&f.path);
        seen.insert(f.path.clone());
        // A regular file only: a fifo in its place would wait for a writer for good.
        match crate::fs::open_regular(&p).map(|(file, _)| crate::sha256::Sha256::of_reader(file)) {
            Ok(Ok((digest, _))) if digest == f.sha256 => {}
            Ok(Ok(_)) => problem(
                &mut out,
                &p,
                "",
                "tree-modified",
                format!(
                    "differs from what `{}` {} installed; `{command}` restores it{note}",
                    r.id, r.version
                ),
            ),
            // Something else took the file's place (a folder, a fifo, a link), or it cannot
            // be read.
            _ if std::fs::symlink_metadata(&p).is_ok() => problem(
                &mut out,
                &p,
                "",
                "tree-modified",
                format!(
                    "is no longer the file `{}` {} installed there (it is no regular file, or \
                     cannot be read); `{command}` restores it{note}",
                    r.id, r.version
                ),
            ),
            _ => problem(
                &mut out,
                &p,
                "",
                "tree-file-missing",
                format!(
                    "installed by `{}` {} and now missing; `{command}` restores it{note}",
                    r.id, r.version
                ),
            ),
        }
    }
    for e in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_type().is_dir()
            || (e.file_type().is_file() && crate::install::made_by_the_system(e.file_name()))
        {
            continue;
        }
        let rel = e
            .path()
            .strip_prefix(dir)
            .unwrap_or(e.path())
            .to_string_lossy()
            .replace('\\', "/");
        if !seen.contains(&rel) {
            problem(
                &mut out,
                e.path(),
                "",
                "tree-extra-file",
                format!(
                    "not part of `{}` {} as installed; move it out of the folder, which \
                     `{command}` puts back as installed, without it{note}",
                    r.id, r.version
                ),
            );
        }
    }
    out
}

/// Whether `command` runs its script itself, with no interpreter word before it.
fn runs_directly(command: &str) -> bool {
    crate::command::split(command).is_ok_and(|w| {
        matches!(
            crate::command::host_target(&w),
            crate::command::Target::Script {
                interpreter: None,
                ..
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn awaiting(source: &'static str, recipe: Option<&str>) -> AwaitingTrust {
        AwaitingTrust {
            key: format!("/{source}/hooks.json#PreToolUse#id:x"),
            status: Status::Untrusted,
            recipe: recipe.map(str::to_string),
            source,
        }
    }

    fn note(handlers: Vec<AwaitingTrust>) -> String {
        Report {
            problems: Vec::new(),
            fixed: Vec::new(),
            awaiting_trust: handlers,
        }
        .awaiting_trust_note()
        .unwrap()
    }

    /// `trust --all` trusts the workspace's handlers too, and `trust --recipe` takes the
    /// profile's only: the note advises each where it does what it says (the review found
    /// it advising `--recipe` for a workspace handler's stamp, which `trust` refuses).
    #[test]
    fn the_trust_advice_fits_where_the_handlers_are() {
        let profile_only = note(vec![awaiting("profile", Some("tool-gate"))]);
        assert!(
            profile_only.ends_with("`hookpack trust --all` trusts it"),
            "{profile_only}"
        );

        let stamped_in_workspace = note(vec![
            awaiting("profile", None),
            awaiting("workspace", Some("tool-gate")),
        ]);
        assert!(
            !stamped_in_workspace.contains("--recipe"),
            "{stamped_in_workspace}"
        );
        assert!(
            stamped_in_workspace.contains("`hookpack trust --key KEY` one you have read; 1 is in the workspace's .finclaw/hooks.json, so not `trust --all`"),
            "{stamped_in_workspace}"
        );

        let two_recipes = note(vec![
            awaiting("profile", Some("audit-log")),
            awaiting("profile", Some("tool-gate")),
            awaiting("workspace", Some("tool-gate")),
        ]);
        assert!(
            two_recipes.contains("`hookpack trust --recipe ID` trusts an installed recipe's, "),
            "{two_recipes}"
        );
        let one_recipe = note(vec![
            awaiting("profile", Some("audit-log")),
            awaiting("workspace", None),
        ]);
        assert!(
            one_recipe
                .contains("`hookpack trust --recipe audit-log` trusts an installed recipe's, "),
            "{one_recipe}"
        );
    }
}
