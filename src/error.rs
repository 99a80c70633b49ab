//! The library's error type and the process exit codes it maps to (SPEC §4).

use crate::fs::FsError;
use std::path::{Path, PathBuf};

/// How a command ended, as a process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success.
    Success = 0,
    /// The input is invalid or the operation was refused.
    Invalid = 1,
    /// Command-line usage.
    Usage = 2,
    /// The environment failed: I/O, network, lock.
    Environment = 3,
}

/// Everything a library operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A filesystem call failed.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// An id given on the command line is not valid.
    #[error("invalid recipe id")]
    IdInvalid(#[from] crate::id::IdError),
    /// `new` would overwrite something.
    #[error(
        "{path} already exists ({what}); hookpack new never overwrites it, so choose another id or --dir"
    )]
    ScaffoldTargetExists {
        /// What is there already.
        path: PathBuf,
        /// What it is: "a folder", "a file", …
        what: &'static str,
    },
    /// `run --workspace` names something that is not a folder.
    #[error("workspace {path} is not a folder; handlers run in it (--workspace, default the current folder)")]
    WorkspaceNotFolder {
        /// The path as given.
        path: PathBuf,
    },
    /// `trust`, `revoke` or `run` on a profile folder that does not exist (`list` and
    /// `doctor` report it instead).
    #[error("the profile folder {path} does not exist; check --profile, $FINCLAW_PROFILE and $FINCLAW_HOME/active-profile (`hookpack install ID` creates it; to use only the workspace's hooks.json, create the folder)")]
    ProfileMissing {
        /// The profile root.
        path: PathBuf,
    },
    /// `new lib`: the name of the shared helpers folder beside the recipes.
    #[error("`lib` is the name of the shared helpers folder beside the recipes (`recipes/lib/`, which other recipes import from), so a recipe of that id would be taken for the helpers; choose another id")]
    ScaffoldIdIsHelpers,
    /// `new --dir` names something that is not a folder.
    #[error("{path} exists and is not a folder; give --dir a folder (it is created when missing)")]
    ScaffoldDirNotFolder {
        /// The path as given.
        path: PathBuf,
    },
    /// `new --dir` names a recipe folder or a folder inside one.
    #[error("--dir {path} is {where_}the recipe folder {recipe} (it holds a recipe.json), so the new recipe would ship inside that recipe's archive; give --dir the folder of recipes instead (`--dir {fix}`)")]
    ScaffoldInsideRecipe {
        /// The path as given.
        path: PathBuf,
        /// `"inside "`, or nothing when `path` is the recipe folder itself.
        where_: &'static str,
        /// The recipe folder found at or above it.
        recipe: PathBuf,
        /// The folder that holds that recipe folder.
        fix: PathBuf,
    },
    /// The output folder is, contains or sits inside the sources.
    #[error("output folder {out} overlaps the sources in {sources}; choose an output folder outside them")]
    OutOverlaps {
        /// The output folder as given.
        out: PathBuf,
        /// The source folder it overlaps.
        sources: PathBuf,
    },
    /// A recipe folder in assemble's OUT, to be replaced or removed, holds sources.
    #[error("{path} holds `src/`: it is a recipe's source tree, not assembled output, and assembling would replace or remove it; give --out-dir a folder of assembled recipes or a new one (are --recipes-dir and --out-dir swapped?)")]
    OutHoldsSources {
        /// The recipe folder in OUT.
        path: PathBuf,
    },
    /// Where assemble would put a recipe's folder in OUT, there is a file of the user's.
    #[error("{path} is {kind}, not a folder: assembling would replace it with the assembled recipe of that name; move it out of the output folder, or give --out-dir another folder")]
    OutEntryNotFolder {
        /// The file in OUT.
        path: PathBuf,
        /// What it is: `a file`, `a link`.
        kind: &'static str,
    },
    /// Assemble's OUT is a profile's hooks folder.
    #[error("{out} holds `.receipts/`: it is a profile's hooks folder, whose recipe folders `hookpack install`, `update` and `remove` manage, and assembling there would replace or remove them; give --out-dir a build folder (e.g. assembled-recipes), then pack it and install from the catalog")]
    OutIsProfile {
        /// The folder given as OUT.
        out: PathBuf,
    },
    /// `--out-dir` names something that is not a folder.
    #[error("output folder {out} exists and is not a folder; give --out-dir a folder (it is created when missing)")]
    OutNotFolder {
        /// The output path as given.
        out: PathBuf,
    },
    /// `--out-dir` names a path under a file, so no folder can be made there.
    #[error("output folder {out} cannot be made: {file} is {kind}, not a folder; give --out-dir a path under folders (missing ones are created)")]
    OutUnderFile {
        /// The output path as given.
        out: PathBuf,
        /// The first of its parents that exists.
        file: PathBuf,
        /// What that is: "a file", "a fifo (named pipe)", …
        kind: &'static str,
    },
    /// A recipe tree holds something a package must not.
    #[error("refused {path}: {reason}")]
    PackRefused {
        /// The offending path.
        path: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// Writing an archive failed.
    #[error("cannot write the archive for {path}")]
    ArchiveWrite {
        /// The file or archive concerned.
        path: PathBuf,
        /// The I/O failure.
        source: std::io::Error,
    },
    /// Recipes failed validation; nothing was written.
    #[error("{} problem(s) in the recipes; nothing was written", diagnostics.len())]
    RecipesInvalid {
        /// Every problem found.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// Recipes given to `test` failed validation; no case was run.
    #[error("{} problem(s) in the recipes; no case was run", diagnostics.len())]
    RecipesInvalidUntested {
        /// Every problem found.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// An existing index does not validate.
    #[error("the catalog index does not validate; nothing was changed")]
    IndexInvalid {
        /// Every problem found.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// [`Error::IndexInvalid`] for a command that never changes anything (`catalog list`),
    /// so the message makes no claim about what was left unchanged.
    #[error("the catalog index does not validate")]
    IndexInvalidReadOnly {
        /// Every problem found.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// An id+version already in the index would get other bytes.
    #[error("{what} is already published with sha256 {published}, but packing it now gives {now}; published versions are immutable, so bump `version` in {}{note}", manifest.display())]
    Republish {
        /// The recipe's `recipe.json`, where the version is bumped.
        manifest: PathBuf,
        /// Recipe id and version (`tool-gate 0.2.0`).
        what: String,
        /// Digest in the index.
        published: String,
        /// Digest of the new archive.
        now: String,
        /// What else explains it (the files are the same, their mtime is not), or nothing.
        note: String,
    },
    /// Several recipes refused by pack against what is published (a re-publish, a lost
    /// archive, an unlisted one): the first is the error, the others are listed before it,
    /// each at its `recipe.json`.
    #[error("{first}{}", more_refused(also.len()))]
    RecipesRefused {
        /// The first recipe's refusal.
        first: Box<Error>,
        /// The others, each as a diagnostic of its kind (`republish`, ...).
        also: Vec<crate::diagnostic::Diagnostic>,
    },
    /// A published archive is missing from the catalog folder or damaged there, and packing
    /// its sources now gives other bytes.
    #[error("{what}: {}", archive_lost(path, digests, manifest))]
    PublishedArchiveLost {
        /// Recipe id and version (`tool-gate 0.2.0`).
        what: String,
        /// Where the archive should be.
        path: PathBuf,
        /// The index's, the sources' and the file's digests.
        digests: Box<LostDigests>,
        /// The recipe's `recipe.json`, where the version is bumped.
        manifest: PathBuf,
    },
    /// An archive `pack` keeps (a published version it does not build now) is in the catalog
    /// folder with bytes other than those the index lists.
    #[error("{what}: {} is not the published archive: the index lists sha256 {expected}, it has {actual}. This pack does not build that version, so cannot repair it: copy it back from where the catalog is served (or delete it; the index keeps listing it) and pack again", path.display())]
    KeptArchiveDamaged {
        /// Recipe id and version (`tool-gate 0.2.0`).
        what: String,
        /// The archive in the catalog folder.
        path: PathBuf,
        /// Digest in the index.
        expected: String,
        /// Digest of the file.
        actual: crate::sha256::Sha256,
    },
    /// A version the index does not list would be packed with other bytes than the archive
    /// the catalog folder holds for it, or than its `SHA256SUMS` records.
    #[error("{what}: {found}, though the index does not list it, and packing the sources now gives {now}; a version never gets other bytes than it was published with, so if it was (its entry taken out of the index), put the index back from your last pack (or the published one, with --merge) and bump `version` in {} to publish these sources; if it never was, {unpublished} and pack again", manifest.display())]
    ArchiveExists {
        /// Recipe id and version (`tool-gate 0.2.0`).
        what: String,
        /// What the catalog folder holds: the archive and its digest, or the
        /// `SHA256SUMS` line.
        found: String,
        /// Digest of the new archive.
        now: String,
        /// The recipe's `recipe.json`, where the version is bumped.
        manifest: PathBuf,
        /// What to do when the version was never published.
        unpublished: &'static str,
    },
    /// `--only` names a recipe that is not there.
    #[error("no recipe `{id}` in {}; {hint}", dir.display())]
    RecipeNotFound {
        /// The id asked for.
        id: String,
        /// Where it was looked for.
        dir: PathBuf,
        /// The id most likely meant, or those there are.
        hint: String,
    },
    /// A folder of recipes (`--recipes-dir`, `test`'s RECIPE_DIR) names a file.
    #[error("{path} is not a folder; {fix}")]
    RecipesDirNotFolder {
        /// The path as given.
        path: PathBuf,
        /// Which folder to give instead.
        fix: &'static str,
    },
    /// A flag that takes a folder (`--hooks-dir`) names nothing that exists.
    #[error("{what} {} does not exist; {fix}", path.display())]
    FlagPathMissing {
        /// The flag.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
        /// Which folder to give.
        fix: &'static str,
    },
    /// A flag that takes a folder (`--assets-dir`) names something else.
    #[error("{what} {} is not a folder; {fix}", path.display())]
    FlagNotFolder {
        /// The flag.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
        /// Which folder to give instead.
        fix: &'static str,
    },
    /// `test` given a file or folder inside a recipe (a case file, `tests/`, `recipe.json`).
    #[error("{} is not a recipe folder: it is inside the recipe folder {}; `hookpack test {}` runs its cases", path.display(), recipe.display(), recipe.display())]
    TestPathInsideRecipe {
        /// The path as given.
        path: PathBuf,
        /// The recipe folder holding it.
        recipe: PathBuf,
    },
    /// A folder of recipe sources (or a recipe folder) given where an index goes.
    #[error("{} holds recipe sources, not a catalog (no hooks-index.json); make one with `hookpack pack --recipes-dir {} --out-dir OUT` and give OUT", given.display(), recipes_dir.display())]
    IndexIsRecipes {
        /// The folder given.
        given: PathBuf,
        /// The folder of recipes to pack.
        recipes_dir: PathBuf,
    },
    /// A recipes folder holds no recipe.
    #[error(
        "no recipes in {dir}: expected folders each holding a recipe.json{}",
        hidden_recipes(hidden)
    )]
    NoRecipes {
        /// The folder.
        dir: PathBuf,
        /// The hidden folders in it that hold a `recipe.json` (left out: hidden entries are
        /// never recipes), by name.
        hidden: Vec<String>,
    },
    /// `--updated-at` is not RFC 3339.
    #[error("`{value}` is not an RFC 3339 time of the years 0000 to 9999 (in UTC), such as 2026-11-29T00:00:00Z")]
    TimestampInvalid {
        /// The value given.
        value: String,
    },
    /// An index on disk names an archive outside its folder, and `--allow-outside` was not
    /// given.
    #[error("the index {index} names the archive of {id} {version} by `{url}`, which {why}; nothing there was read, as an index may be anyone's and could name any file of this machine: `--allow-outside` reads it (the catalog format allows such a URL)")]
    IndexUrlOutside {
        /// The index.
        index: String,
        /// The recipe.
        id: String,
        /// The version.
        version: String,
        /// The archive URL as the index gives it.
        url: String,
        /// Where it leads.
        why: &'static str,
    },
    /// A remote index names an archive on this machine.
    #[error("the index {index} names the archive of {id} {version} by `{url}`, a local file; a remote index may only name http(s) archives, so that it cannot make hookpack read this machine's files: fix its `url`, or install from the index on disk")]
    IndexNamesLocalFile {
        /// The index.
        index: String,
        /// The recipe.
        id: String,
        /// The version.
        version: String,
        /// The archive URL as the index gives it.
        url: String,
    },
    /// A URL given on the command line is unusable.
    #[error("URL `{url}` {why}")]
    UrlInvalid {
        /// The URL.
        url: String,
        /// What is wrong.
        why: String,
    },
    /// TypeScript failed to compile; nothing was written.
    #[error("errors in the TypeScript or JavaScript sources (above); nothing was written")]
    TypeScript {
        /// Each error as `file:line:col: message`.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// TypeScript given to `test` failed to compile; no case was run.
    #[error("errors in the TypeScript or JavaScript sources (above); no case was run")]
    TypeScriptUntested {
        /// Each error as `file:line:col: message`.
        diagnostics: Vec<crate::diagnostic::Diagnostic>,
    },
    /// Fetching an index or archive failed.
    #[error(transparent)]
    Fetch(#[from] crate::fetch::FetchError),
    /// An archive an index lists is not where it says (a 404, or no such file).
    #[error("{source}: the index lists it for {what}, but the catalog does not hold it; its maintainer finds such archives with `hookpack catalog verify`, and `{another}` takes another version")]
    ArchiveNotInCatalog {
        /// Recipe id and version (`tool-gate 0.2.0`).
        what: String,
        /// `hookpack install ID@VERSION`, with ` --index URL` when the index is not the one
        /// the profile uses by default.
        another: String,
        /// The failed fetch.
        source: crate::fetch::FetchError,
    },
    /// A handler's script is larger than hookpack hashes: it is never read.
    #[error(
        "its script {} is {size} bytes, over the {limit} bytes (16 MiB) hookpack hashes for \
         trust, so it is not read",
        path.display()
    )]
    ScriptTooLarge {
        /// The script.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The most hashed.
        limit: u64,
    },
    /// `config.yaml` could not be read.
    #[error("{path}: {why}")]
    ConfigInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// `$FINCLAW_HOME` is unset and there is no absolute home folder to find `~/.finclaw` in.
    #[error(
        "cannot tell where the FinClaw home is: $FINCLAW_HOME is unset and {why}; set \
         FINCLAW_HOME (or HOME) to an absolute folder"
    )]
    HomeUnknown {
        /// Why `$HOME` does not do.
        why: String,
    },
    /// A profile name from the environment or `active-profile` is not one folder name.
    #[error(
        "`{name}` (from {from}) is not a profile name: {why}; name a folder in \
         $FINCLAW_HOME/profiles, or give --profile DIR to use a folder elsewhere"
    )]
    ProfileNameInvalid {
        /// The name as found.
        name: String,
        /// Where it came from: `$FINCLAW_PROFILE` or the `active-profile` file's path.
        from: String,
        /// What is wrong with it.
        why: String,
    },
    /// Another process holds the profile lock.
    #[error("another hookpack process holds {path}; gave up after {waited:?}")]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long it waited.
        waited: std::time::Duration,
    },
    /// A command-line value is not what the flag takes.
    #[error("{what}{}: {why}", if value.is_empty() { String::new() } else { format!(" `{value}` is invalid") })]
    ArgInvalid {
        /// The argument, e.g. `--cli-version` or `EVENT`.
        what: &'static str,
        /// What was given.
        value: String,
        /// Why, and what to give instead.
        why: String,
    },
    /// A payload given to `run` is not a JSON object.
    #[error("payload {source_name}: {why}")]
    PayloadInvalid {
        /// The file, or `-` for stdin.
        source_name: String,
        /// Why.
        why: String,
    },
    /// `ID@…` is not a version or range.
    #[error("`{spec}` is not ID, ID@VERSION or ID@RANGE: {why}")]
    SpecInvalid {
        /// What was given.
        spec: String,
        /// Why.
        why: String,
    },
    /// The index does not list the recipe.
    #[error("the index {index} has no recipe `{id}`; {}", match (.installed_from, .near) {
        (Some(from), _) => format!(
            "`{id}` was installed in this profile from {from}: give `--index {}`",
            crate::advice::quote_on_one_line(from)
        ),
        (None, Some(near)) => format!("did you mean `{near}`?"),
        (None, None) => format!("`hookpack catalog list {index}` shows what it has"),
    })]
    RecipeNotInIndex {
        /// Recipe id.
        id: String,
        /// The index.
        index: String,
        /// The id of the index nearest to `id`, when one is a likely misspelling of it.
        near: Option<String>,
        /// The other index the profile's receipt of `id` names, when it is installed.
        installed_from: Option<String>,
    },
    /// No listed version matches.
    #[error("no version of `{id}` matches {want}; available: {available}")]
    VersionNotFound {
        /// Recipe id.
        id: String,
        /// What was asked.
        want: String,
        /// What there is.
        available: String,
    },
    /// The host CLI is older than every candidate's `min_cli`.
    #[error("`{id}` {version} needs CLI {needs} or newer, and the host is {have}; {fix}")]
    CliTooOld {
        /// Recipe id.
        id: String,
        /// Version or range considered.
        version: String,
        /// Lowest `min_cli` on offer.
        needs: String,
        /// The host version.
        have: String,
        /// What to do: pin a version the host runs, if one is published, or upgrade.
        fix: String,
    },
    /// The index a recipe was installed from lists other bytes for the installed version.
    #[error("{}, and nothing was changed; ask its maintainer, or to take the new bytes anyway, `hookpack remove {id}`, then `hookpack install {id}@{version}{index}`{}", crate::install::other_bytes(.id, .version, .listed, .installed), crate::doctor::pin_note(.id, .version, None, .index))]
    VersionBytesChanged {
        /// Recipe id.
        id: String,
        /// ` --index URL` naming that index when `install` reads another by default (which
        /// need not list the recipe), else empty.
        index: String,
        /// The version installed.
        version: String,
        /// The digest the index lists now.
        listed: String,
        /// The digest of the archive installed.
        installed: String,
    },
    /// The archive's digest is not the index's.
    #[error("checksum mismatch for {id}: {said_by} sha256 {expected}, the archive's is {actual}; nothing was extracted{whence}")]
    ChecksumMismatch {
        /// Recipe id (or archive location).
        id: String,
        /// For an archive an index lists: its URL and version, and who can put it right.
        whence: String,
        /// Who promised the digest: "the index says" or "--sha256 says".
        said_by: &'static str,
        /// From the index.
        expected: String,
        /// Of the bytes received.
        actual: String,
    },
    /// The archive's size is not the index's.
    #[error("size mismatch for {id}: the index says {expected} bytes, {}; nothing was extracted{whence}", match (actual, announced) {
        (Some(a), _) => format!("the download is {a}"),
        (None, Some(n)) => format!("the server announces {n} bytes (its Content-Length), so nothing was downloaded"),
        (None, None) => "the download is larger".to_string(),
    })]
    SizeMismatch {
        /// Recipe id.
        id: String,
        /// The archive's URL and version, and who can put it right.
        whence: String,
        /// From the index.
        expected: u64,
        /// Received, when known.
        actual: Option<u64>,
        /// The length the server announced, when it was past `expected` before any byte.
        announced: Option<u64>,
    },
    /// The archive was refused while reading it.
    #[error("refused the archive {location}")]
    ArchiveRefused {
        /// Where it came from.
        location: String,
        /// Why.
        source: crate::archive::ArchiveError,
    },
    /// The archive's recipe.json disagrees with the index.
    #[error("the archive's recipe.json has {what} `{archive}` but the index promised `{index}`; the index or the archive is wrong, nothing was installed")]
    ManifestMismatch {
        /// Which field.
        what: String,
        /// The index's value.
        index: String,
        /// The archive's value.
        archive: String,
    },
    /// `hooks.json` cannot be safely rewritten.
    #[error("refusing to rewrite {path}: {why}")]
    HooksJsonRefused {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A `hooks.json` that `list`, `run`, `trust` or `doctor` cannot read.
    #[error("cannot read {path}: {why}")]
    HooksJsonUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// `hooks.json` has a shape merge will not touch.
    #[error("refusing to rewrite {}{at}", path.display())]
    HooksJsonShape {
        /// The file.
        path: PathBuf,
        /// `:LINE:COLUMN` of the spot, when the file tells.
        at: String,
        /// Where and what.
        source: crate::merge::ShapeError,
    },
    /// The recipe is not installed.
    #[error("`{id}` is not installed in {profile}{}", not_installed_hint(.near, *.profile_missing))]
    NotInstalled {
        /// Recipe id.
        id: String,
        /// The profile.
        profile: PathBuf,
        /// The installed recipe nearest to `id`, when one is a likely misspelling of it.
        near: Option<String>,
        /// The profile folder does not exist (most likely a misspelt `--profile`).
        profile_missing: bool,
    },
    /// No handler has this trust key.
    #[error(
        "no handler with trust key `{key}` in the profile or workspace hooks.json (a handler \
         changed since the key was printed, or another workspace is meant: give its \
         --workspace); `hookpack list --format json` shows each handler's key"
    )]
    HandlerKeyNotFound {
        /// The key.
        key: String,
    },
    /// No handler has this id.
    #[error("no handler with id `{id}` in the profile or workspace hooks.json; {}", match .meant {
        Some(HandlerMeant::Recipe) => format!("`{id}` is a recipe: give `--recipe {id}` for its handlers"),
        Some(HandlerMeant::Near(near)) => format!("did you mean `{near}`?"),
        None => "`hookpack list` shows them".to_string(),
    })]
    HandlerNotFound {
        /// The id.
        id: String,
        /// What the id given likely stands for, when something does.
        meant: Option<HandlerMeant>,
    },
    /// Another version would replace or remove files of the recipe the user changed or added.
    #[error(
        "`{id}` {from} in {dir} has files you changed or added ({}), which {to} would replace or remove; \
         `{id}` is left as it is: move them out of the folder to keep them, then run the \
         command again; or drop them with `{command}`, which puts the folder back as {from} \
         installed it{note}",
        files.join(", "),
        command = .restore.0,
        note = .restore.1,
    )]
    LocalChanges {
        /// Recipe id.
        id: String,
        /// The installed version (boxed, as `to` and `restore` are: the variant stays
        /// within clippy's size for an error).
        from: Box<str>,
        /// The version that would replace it.
        to: Box<str>,
        /// The recipe's folder.
        dir: PathBuf,
        /// The files, relative to `dir`.
        files: Vec<String>,
        /// The command that installs `from` again as it was installed (doctor's advice):
        /// `hookpack install ID@FROM`, or for a recipe installed with `--archive`, that
        /// archive with its digest; and what it does besides: what `install ID@FROM` does to
        /// the recipe's pin, and how to lift it (empty when it is pinned to `from` already,
        /// else `update` leaves it at `from`), or whether the archive is still there.
        restore: Box<(String, String)>,
    },
    /// `remove` would delete files of the recipe the user changed or added.
    #[error(
        "`{id}` {version} in {dir} has files you changed or added ({}), which remove would \
         delete; nothing was changed: move them out of the folder to keep them (or drop them \
         with `{command}`{note}, which puts the folder back as installed), then run \
         `hookpack remove {id}` again",
        files.join(", "),
        command = .restore.0,
        note = .restore.1,
    )]
    RemoveLocalChanges {
        /// Recipe id.
        id: String,
        /// The installed version.
        version: String,
        /// The recipe's folder.
        dir: PathBuf,
        /// The files, relative to `dir`.
        files: Vec<String>,
        /// The command that installs `version` again as it was installed: `hookpack
        /// install ID@VERSION`, or for a recipe installed with `--archive`, that archive
        /// with its digest; and, for an archive, whether it is still there (boxed: the
        /// variant stays within clippy's size for an error).
        restore: Box<(String, String)>,
    },
    /// `remove` of a folder hookpack did not install: no receipt, no stamped handler.
    #[error(
        "{dir} was not installed by hookpack (it has no install receipt, and no handler in \
         hooks.json is stamped `{id}`), so remove leaves it as it is; delete it yourself if you \
         mean to"
    )]
    RemoveNotInstalledFolder {
        /// Recipe id.
        id: String,
        /// The folder.
        dir: PathBuf,
    },
    /// `remove` would leave the removed handlers trusted in a trust file it cannot read.
    #[error(
        "cannot remove `{id}`: the trust file {} cannot be read, so the trust of `{id}`'s \
         handlers could not be dropped and a later install of `{id}` would be trusted without \
         asking; nothing was changed. Fix the file (or move it away, which forgets all trust), \
         then run `hookpack remove {id}` again",
        path.display()
    )]
    RemoveTrustUnreadable {
        /// Recipe id.
        id: String,
        /// The trust file.
        path: PathBuf,
        /// Why it cannot be read.
        source: Box<Error>,
    },
    /// A recipe folder without a receipt holds files the install would replace or remove.
    #[error(
        "`{id}` has no install receipt, and {dir} holds files that are not as {to} installs them \
         ({}); hookpack cannot tell whether you changed or added them, so nothing was written: \
         {fix}",
        files.join(", ")
    )]
    UnreceiptedFiles {
        /// Recipe id.
        id: String,
        /// The version that would be installed.
        to: String,
        /// The recipe's folder.
        dir: PathBuf,
        /// The files, relative to `dir`.
        files: Vec<String>,
        /// What to do.
        fix: String,
    },
    /// No handler is stamped with this recipe id (`trust --recipe`, `revoke --recipe`).
    #[error("no handler of recipe `{id}` in the profile's hooks.json, where install puts them; {}", match .near {
        Some(near) => format!("did you mean `{near}`?"),
        None => "`hookpack list` shows the installed recipes".to_string(),
    })]
    RecipeHandlersNotFound {
        /// The recipe id.
        id: String,
        /// The recipe with handlers whose id is nearest to `id`, when one is a likely
        /// misspelling of it.
        near: Option<String>,
    },
    /// Writing to stdout failed because the reader went away (`| head`).
    #[error("broken pipe")]
    BrokenPipe,
    /// Writing output failed.
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
    /// A signal interrupted `run` or `test`: the handlers running were killed, or it came
    /// between handlers (`test`, which stops there).
    #[error("interrupted by {}; {}", crate::run::signal_name(*signal), if *killed {
        "the handler that was running was killed, as its timeout would have killed it"
    } else {
        "it came between handlers, and the command stopped there"
    })]
    Interrupted {
        /// The signal.
        signal: i32,
        /// Whether a running handler was killed.
        killed: bool,
    },
    /// A signal (Ctrl-C, SIGTERM, SIGHUP) stopped `pack` or `assemble` before its commit:
    /// its staging folder is removed as the error returns, and OUT is as it was.
    #[error("interrupted by {}; nothing was written: {} is as it was", crate::run::signal_name(*signal), out.display())]
    StoppedBeforeCommit {
        /// The signal.
        signal: i32,
        /// The folder the command writes.
        out: std::path::PathBuf,
    },
    /// A change to a profile failed, and recovering from that failed too: the profile is
    /// half way through the change until recovery runs again.
    #[error("{source}; {doing} the change of `{id}` failed too ({why}), so the profile is half way through it: once the cause is put right (room on the disk, permissions), run `hookpack doctor --fix`, which finishes or undoes it, as the next install, update or remove will")]
    ChangeLeftHalfWay {
        /// The recipe the change was of.
        id: String,
        /// `undoing` (before the commit point) or `finishing`.
        doing: &'static str,
        /// Why recovery failed.
        why: String,
        /// What made the change fail.
        source: Box<Error>,
    },
}

impl Error {
    /// A short, stable machine name for this error, the variant's name in kebab case
    /// (`not-installed`, `fetch`): the `kind` of the `--format json` error object.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Fs(_) => "fs",
            Error::ChangeLeftHalfWay { .. } => "change-left-half-way",
            Error::Interrupted { .. } | Error::StoppedBeforeCommit { .. } => "interrupted",
            Error::IdInvalid(_) => "id-invalid",
            Error::ScaffoldTargetExists { .. } => "scaffold-target-exists",
            Error::WorkspaceNotFolder { .. } => "workspace-not-folder",
            Error::ProfileMissing { .. } => "profile-missing",
            Error::ScaffoldIdIsHelpers => "scaffold-id-is-helpers",
            Error::ScaffoldDirNotFolder { .. } => "scaffold-dir-not-folder",
            Error::ScaffoldInsideRecipe { .. } => "scaffold-inside-recipe",
            Error::OutOverlaps { .. } => "out-overlaps",
            Error::OutHoldsSources { .. } => "out-holds-sources",
            Error::OutEntryNotFolder { .. } => "out-entry-not-folder",
            Error::OutIsProfile { .. } => "out-is-profile",
            Error::OutNotFolder { .. } | Error::OutUnderFile { .. } => "out-not-folder",
            Error::PackRefused { .. } => "pack-refused",
            Error::ArchiveWrite { .. } => "archive-write",
            Error::RecipesInvalid { .. } | Error::RecipesInvalidUntested { .. } => {
                "recipes-invalid"
            }
            // One fault, one kind, whichever verb met it.
            Error::IndexInvalid { .. } | Error::IndexInvalidReadOnly { .. } => "index-invalid",
            Error::Republish { .. } => "republish",
            Error::RecipesRefused { first, .. } => first.kind(),
            Error::PublishedArchiveLost { .. } => "published-archive-lost",
            Error::KeptArchiveDamaged { .. } => "kept-archive-damaged",
            Error::ArchiveExists { .. } => "archive-exists",
            Error::RecipeNotFound { .. } => "recipe-not-found",
            Error::RecipesDirNotFolder { .. } => "recipes-dir-not-folder",
            Error::FlagNotFolder { .. } => "not-a-folder",
            Error::FlagPathMissing { .. } => "path-missing",
            Error::NoRecipes { .. } => "no-recipes",
            Error::IndexIsRecipes { .. } => "index-is-recipes",
            Error::TestPathInsideRecipe { .. } => "test-path-inside-recipe",
            Error::TimestampInvalid { .. } => "timestamp-invalid",
            Error::UrlInvalid { .. } => "url-invalid",
            Error::IndexNamesLocalFile { .. } => "index-names-local-file",
            Error::IndexUrlOutside { .. } => "index-url-outside",
            Error::TypeScript { .. } | Error::TypeScriptUntested { .. } => "typescript",
            Error::Fetch(_) | Error::ArchiveNotInCatalog { .. } => "fetch",
            Error::ConfigInvalid { .. } => "config-invalid",
            Error::ScriptTooLarge { .. } => "script-too-large",
            Error::ProfileNameInvalid { .. } => "profile-name-invalid",
            Error::HomeUnknown { .. } => "home-unknown",
            Error::LockTimeout { .. } => "lock-timeout",
            Error::ArgInvalid { .. } => "arg-invalid",
            Error::PayloadInvalid { .. } => "payload-invalid",
            Error::SpecInvalid { .. } => "spec-invalid",
            Error::RecipeNotInIndex { .. } => "recipe-not-in-index",
            Error::VersionNotFound { .. } => "version-not-found",
            Error::CliTooOld { .. } => "cli-too-old",
            Error::ChecksumMismatch { .. } => "checksum-mismatch",
            Error::VersionBytesChanged { .. } => "version-bytes-changed",
            Error::SizeMismatch { .. } => "size-mismatch",
            Error::ArchiveRefused { .. } => "archive-refused",
            Error::ManifestMismatch { .. } => "manifest-mismatch",
            Error::HooksJsonRefused { .. } => "hooks-json-refused",
            Error::HooksJsonUnreadable { .. } => "hooks-json-unreadable",
            Error::HooksJsonShape { .. } => "hooks-json-shape",
            Error::NotInstalled { .. } => "not-installed",
            Error::HandlerNotFound { .. } => "handler-not-found",
            Error::HandlerKeyNotFound { .. } => "handler-key-not-found",
            Error::LocalChanges { .. } => "local-changes",
            Error::RemoveLocalChanges { .. } => "remove-local-changes",
            Error::RemoveNotInstalledFolder { .. } => "remove-not-installed-folder",
            Error::RemoveTrustUnreadable { .. } => "remove-trust-unreadable",
            Error::UnreceiptedFiles { .. } => "unreceipted-files",
            Error::RecipeHandlersNotFound { .. } => "recipe-handlers-not-found",
            Error::BrokenPipe => "broken-pipe",
            Error::Output(_) => "output",
        }
    }

    /// The per-file problems behind this error, for errors that carry them.
    pub fn diagnostics(&self) -> &[crate::diagnostic::Diagnostic] {
        match self {
            Error::RecipesInvalid { diagnostics }
            | Error::RecipesInvalidUntested { diagnostics }
            | Error::IndexInvalid { diagnostics }
            | Error::IndexInvalidReadOnly { diagnostics }
            | Error::TypeScript { diagnostics }
            | Error::TypeScriptUntested { diagnostics } => diagnostics,
            Error::RecipesRefused { also, .. } => also,
            _ => &[],
        }
    }

    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Fs(e) if e.is_input_problem() => ExitCode::Invalid,
            Error::Fs(_)
            | Error::Output(_)
            | Error::Interrupted { .. }
            | Error::StoppedBeforeCommit { .. } => ExitCode::Environment,
            Error::ArchiveWrite { .. }
            | Error::ArchiveRefused {
                source: crate::archive::ArchiveError::Write { .. },
                ..
            } => ExitCode::Environment,
            Error::Fetch(e) | Error::ArchiveNotInCatalog { source: e, .. }
                if e.is_input_problem() =>
            {
                ExitCode::Invalid
            }
            Error::ArchiveNotInCatalog { .. } => ExitCode::Environment,
            Error::Fetch(_) | Error::LockTimeout { .. } => ExitCode::Environment,
            // A folder or file of the recipes that could not be read is the machine's
            // failure (permissions, I/O), as `validate` reports it.
            Error::RecipesInvalid { diagnostics }
            | Error::RecipesInvalidUntested { diagnostics }
                if diagnostics
                    .iter()
                    .any(|d| d.code == crate::validate::IO_ERROR) =>
            {
                ExitCode::Environment
            }
            Error::ConfigInvalid { .. }
            | Error::ScriptTooLarge { .. }
            | Error::ProfileNameInvalid { .. }
            | Error::HomeUnknown { .. } => ExitCode::Invalid,
            Error::RemoveTrustUnreadable { source, .. }
            | Error::ChangeLeftHalfWay { source, .. } => source.exit_code(),
            Error::RecipesRefused { first, .. } => first.exit_code(),
            Error::ScaffoldTargetExists { .. }
            | Error::ScaffoldDirNotFolder { .. }
            | Error::ScaffoldInsideRecipe { .. }
            | Error::WorkspaceNotFolder { .. }
            | Error::ProfileMissing { .. }
            | Error::PackRefused { .. }
            | Error::OutOverlaps { .. }
            | Error::OutNotFolder { .. }
            | Error::OutUnderFile { .. }
            | Error::OutHoldsSources { .. }
            | Error::OutEntryNotFolder { .. }
            | Error::OutIsProfile { .. }
            | Error::RecipesInvalid { .. }
            | Error::RecipesInvalidUntested { .. }
            | Error::IndexInvalid { .. }
            | Error::IndexInvalidReadOnly { .. }
            | Error::Republish { .. }
            | Error::PublishedArchiveLost { .. }
            | Error::KeptArchiveDamaged { .. }
            | Error::ArchiveExists { .. }
            | Error::RecipeNotFound { .. }
            | Error::RecipesDirNotFolder { .. }
            | Error::FlagNotFolder { .. }
            | Error::FlagPathMissing { .. }
            | Error::TestPathInsideRecipe { .. }
            | Error::IndexIsRecipes { .. }
            | Error::NoRecipes { .. }
            | Error::TypeScript { .. }
            | Error::TypeScriptUntested { .. }
            | Error::PayloadInvalid { .. }
            | Error::RecipeNotInIndex { .. }
            | Error::IndexNamesLocalFile { .. }
            | Error::IndexUrlOutside { .. }
            | Error::VersionNotFound { .. }
            | Error::CliTooOld { .. }
            | Error::ChecksumMismatch { .. }
            | Error::VersionBytesChanged { .. }
            | Error::SizeMismatch { .. }
            | Error::ArchiveRefused { .. }
            | Error::ManifestMismatch { .. }
            | Error::HooksJsonRefused { .. }
            | Error::HooksJsonUnreadable { .. }
            | Error::HooksJsonShape { .. }
            | Error::NotInstalled { .. }
            | Error::HandlerNotFound { .. }
            | Error::HandlerKeyNotFound { .. }
            | Error::RecipeHandlersNotFound { .. }
            | Error::LocalChanges { .. }
            | Error::RemoveLocalChanges { .. }
            | Error::RemoveNotInstalledFolder { .. }
            | Error::UnreceiptedFiles { .. } => ExitCode::Invalid,
            // Ids and specs come only from the command line (data gets diagnostics).
            Error::ArgInvalid { .. }
            | Error::IdInvalid(_)
            | Error::ScaffoldIdIsHelpers
            | Error::SpecInvalid { .. }
            | Error::TimestampInvalid { .. }
            | Error::UrlInvalid { .. } => ExitCode::Usage,
            Error::BrokenPipe => ExitCode::Success,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::Output(e)
        }
    }
}

/// What follows a "not installed" message: the installed recipe whose id is a likely
/// misspelling of the one given, or that the profile folder is not there at all.
fn not_installed_hint(near: &Option<String>, profile_missing: bool) -> String {
    match near {
        Some(near) => format!("; did you mean `{near}`?"),
        None if profile_missing => format!("; {MISSING_PROFILE}"),
        None => String::new(),
    }
}

/// Said of a profile folder that does not exist where a verb expects one.
pub(crate) const MISSING_PROFILE: &str = "that folder does not exist; check --profile, \
     $FINCLAW_PROFILE and $FINCLAW_HOME/active-profile";

/// What a handler id that names no handler likely stands for.
#[derive(Debug)]
pub enum HandlerMeant {
    /// A recipe of that id has handlers: `--recipe ID` takes them.
    Recipe,
    /// The handler id nearest to it.
    Near(String),
}

/// The digests of a published archive [`Error::PublishedArchiveLost`] names.
#[derive(Debug)]
pub struct LostDigests {
    /// The index's.
    pub published: String,
    /// What the sources give now.
    pub now: String,
    /// The file in the catalog folder's, when there is one.
    pub on_disk: Option<String>,
}

/// What [`Error::PublishedArchiveLost`] says: the archive at `path` is gone, or holds other
/// bytes than the index's; when those are what the sources give now, the index is the
/// likelier culprit (an edit by hand), and a version bump no fix.
fn archive_lost(path: &Path, digests: &LostDigests, manifest: &Path) -> String {
    let LostDigests {
        published,
        now,
        on_disk,
    } = digests;
    let either = format!(
        "If the recipe changed since it was published, bump `version` in {} and copy this \
         archive back too, since the index keeps it listed; if it did not (another \
         compression, hookpack release or SOURCE_DATE_EPOCH gives other bytes), copy the \
         published archive back from where the catalog is served",
        manifest.display()
    );
    match on_disk {
        Some(found) if found == now => format!(
            "{} holds what the sources produce now (sha256 {now}), but the index lists \
             {published} for it: if the index was edited by hand, put it back from your last \
             pack; if the archive was replaced after it was published, copy the published \
             one back from where the catalog is served",
            path.display()
        ),
        Some(found) => format!(
            "{} has sha256 {found}, not the one the index lists ({published}), and packing \
             the sources now gives other bytes ({now}). {either}",
            path.display()
        ),
        None => format!(
            "{} is missing, and packing the sources now gives other bytes than the sha256 \
             the index lists ({published}). {either}",
            path.display()
        ),
    }
}

/// The end of an [`Error::RecipesRefused`] message.
fn more_refused(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 more recipe is refused, listed above)".into(),
        n => format!(" (and {n} more recipes are refused, listed above)"),
    }
}

/// The end of an [`Error::NoRecipes`] message naming the hidden recipe folders left out.
fn hidden_recipes(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!(
            "; {one} holds one but is hidden (its name starts with `.`), so it is left out: \
             rename it to its id"
        ),
        _ => format!(
            "; {} hold one but are hidden (their names start with `.`), so they are left out: \
             rename each to its id",
            quoted.join(", ")
        ),
    }
}
