//! Command-line parsing. Raw clap structs are turned into typed settings here and never
//! reach the rest of the library.

use crate::advice::Advice;
use crate::archive::printable;
use crate::diagnostic::Severity;
use crate::error::{Error, ExitCode};
use crate::id::Id;
use crate::output::{github_annotation, Format, Printer};
use crate::{assemble, catalog, install, pack, scaffold, validate};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::Read as _;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "hookpack",
    version,
    about = "Assemble, validate, pack, install and run command-hook recipes for agent CLIs",
    long_about = None,
    after_help = "Exit codes: 0 success, 1 invalid input or refused, 2 usage, 3 environment (I/O, network, lock)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print no notes, warnings, progress or summaries on stderr (errors and diagnostics still print; stdout is unaffected).
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check recipe folders, recipe.json, hooks.json and hooks-index.json; report every problem.
    Validate(ValidateArgs),
    /// Create a recipe source tree that validates, assembles and tests as written.
    New(NewArgs),
    /// Compile recipe sources (TypeScript, in-process) into runnable trees.
    Assemble(AssembleArgs),
    /// Build reproducible archives, hooks-index.json and SHA256SUMS.
    Pack(PackArgs),
    /// Install recipes by id from an index into a profile.
    Install(InstallArgs),
    /// Remove installed recipes: their handlers, folders and receipts.
    Remove(RemoveArgs),
    /// Update installed recipes to the newest version the host can run.
    Update(UpdateArgs),
    /// List installed recipes and every handler of the profile and workspace hooks.json.
    List(ListArgs),
    /// Trust handlers (record their hash), so hosts and `run` will run them.
    Trust(TrustArgs),
    /// Forget the trust of handlers.
    Revoke(TrustArgs),
    /// Dispatch an event payload through the matching handlers, as a host does.
    Run(RunArgs),
    /// Find what hosts fail on silently; --fix repairs what is safe.
    Doctor(DoctorArgs),
    /// Run recipes' fixture cases (tests/*.json) the way a host runs the handlers.
    Test(TestArgs),
    /// Read or check a published catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// (Internal) Kills an async handler that outlives its timeout, as a host does: `run`
    /// starts it beside each async handler, as the handler's process ends with `run`'s.
    #[command(name = "__watch-async", hide = true)]
    WatchAsync(WatchAsyncArgs),
}

#[derive(Debug, clap::Args)]
struct WatchAsyncArgs {
    /// The handler's pid, which leads its process group.
    pid: u32,
    /// Its start time (`/proc/PID/stat` field 22), so a pid taken over is never killed.
    start: u64,
    /// Seconds from now it may run.
    timeout: u64,
}

#[derive(Debug, clap::Args)]
struct ProfileArgs {
    /// Profile folder [default: $FINCLAW_HOME (else ~/.finclaw)/profiles/<$FINCLAW_PROFILE, else the file active-profile, else default>].
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct SourceArgs {
    /// Index URL or path [default: $HOOKPACK_INDEX_URL, extra.hooks.index_url in config.yaml, else built in].
    #[arg(long, value_name = "URL|PATH")]
    index: Option<String>,
    /// Host CLI version for `min_cli` checks [env: HOOKPACK_CLI_VERSION].
    #[arg(long, value_name = "X.Y.Z")]
    cli_version: Option<String>,
    /// Extra CA certificate (PEM) to trust for https (SSL_CERT_FILE is honoured too).
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    /// Read an archive that an index on disk names outside its folder (`../x.tar.gz`, a
    /// path from `/`, a `file://` URL), which is refused unread otherwise.
    #[arg(long)]
    allow_outside: bool,
}

#[derive(Debug, clap::Args)]
struct InstallArgs {
    /// ID, ID@VERSION or ID@RANGE (e.g. tool-gate@^0.1).
    #[arg(value_name = "ID", required_unless_present = "archive")]
    specs: Vec<String>,
    #[command(flatten)]
    profile: ProfileArgs,
    #[command(flatten)]
    source: SourceArgs,
    /// Install this archive file (or URL) instead, with no index.
    #[arg(long, value_name = "FILE", conflicts_with = "specs")]
    archive: Option<String>,
    /// With --archive: the sha256 the archive must have.
    #[arg(long, value_name = "HEX", requires = "archive")]
    sha256: Option<String>,
    /// Write absolute script paths instead of ${FINCLAW_PROFILE_ROOT}/… (for hosts that do not set it).
    #[arg(long)]
    absolute_paths: bool,
    /// Print the plan and the hooks.json change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct RemoveArgs {
    /// Recipe ids.
    #[arg(value_name = "ID", required = true)]
    ids: Vec<String>,
    #[command(flatten)]
    profile: ProfileArgs,
    /// Print the plan and the hooks.json change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct UpdateArgs {
    /// Recipe ids [default: every installed recipe].
    #[arg(value_name = "ID")]
    ids: Vec<String>,
    #[command(flatten)]
    profile: ProfileArgs,
    #[command(flatten)]
    source: SourceArgs,
    /// Write absolute script paths instead of ${FINCLAW_PROFILE_ROOT}/… into the recipes it
    /// updates (one already current keeps its paths).
    #[arg(long)]
    absolute_paths: bool,
    /// Show what is outdated; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    #[command(flatten)]
    profile: ProfileArgs,
    /// Workspace whose .finclaw/hooks.json is listed too [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["ids", "recipe", "all", "key"]))]
struct TrustArgs {
    /// Handler ids.
    #[arg(value_name = "HANDLER_ID")]
    ids: Vec<String>,
    /// Every handler installed by this recipe.
    #[arg(long, value_name = "ID")]
    recipe: Option<String>,
    /// Every handler of the profile and workspace.
    #[arg(long)]
    all: bool,
    /// The handler with this trust key (as `trust`, `run` and `list --format json` show it):
    /// one without an id, or a workspace handler whose id the profile has too. Repeatable.
    #[arg(long, value_name = "KEY")]
    key: Vec<String>,
    #[command(flatten)]
    profile: ProfileArgs,
    /// Workspace whose .finclaw/hooks.json is included [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The event, e.g. PreToolUse.
    event: String,
    /// JSON payload file, or - for stdin [default: the common fields only].
    #[arg(long, value_name = "FILE|-")]
    payload: Option<String>,
    /// Run handlers that are not trusted too (never invalid ones).
    #[arg(long)]
    include_untrusted: bool,
    #[command(flatten)]
    profile: ProfileArgs,
    /// Workspace: the handlers' working directory, and its .finclaw/hooks.json [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Host CLI version to read the answers as: before 0.13.1, ask, updatedModel and Stop reject are passed over [env: HOOKPACK_CLI_VERSION; default: all honoured].
    #[arg(long, value_name = "X.Y.Z")]
    cli_version: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct DoctorArgs {
    /// Repair what is safe: interrupted commits, staging leftovers, dangling trust entries.
    #[arg(long)]
    fix: bool,
    #[command(flatten)]
    profile: ProfileArgs,
    /// Workspace whose .finclaw/hooks.json is checked too [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct TestArgs {
    /// Recipe folders or folders of recipes [default: . if it is a recipe, else ./recipes].
    #[arg(value_name = "RECIPE_DIR")]
    dirs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// List the recipes and versions an index offers.
    List(CatalogArgs),
    /// Fetch every archive an index lists and check it against the index and SHA256SUMS.
    Verify(VerifyArgs),
}

#[derive(Debug, clap::Args)]
struct CatalogArgs {
    /// The index: a hooks-index.json path or URL, a catalog folder, or `builtin:` (the
    /// catalog built into hookpack) [default: the one `install` uses: $HOOKPACK_INDEX_URL,
    /// else the active profile's config.yaml, else builtin:].
    #[arg(value_name = "INDEX")]
    index: Option<std::ffi::OsString>,
    /// Without INDEX: the profile whose index `install` uses (its config.yaml's
    /// extra.hooks.index_url) [default: the active profile].
    #[arg(long, value_name = "DIR", conflicts_with = "index")]
    profile: Option<PathBuf>,
    /// Extra CA certificate (PEM) to trust for https (SSL_CERT_FILE is honoured too).
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct VerifyArgs {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Read archives the index names by absolute URL (`pack --asset-base-url`) from DIR, by
    /// file name, instead of fetching them: check a catalog before uploading it.
    #[arg(long, value_name = "DIR")]
    assets_dir: Option<PathBuf>,
    /// Archives checked at once, 1 or more [default: the number of CPUs].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Read an archive that an index on disk names outside its folder (`../x.tar.gz`, a
    /// path from `/`, a `file://` URL), which is refused unread otherwise.
    #[arg(long)]
    allow_outside: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompressionArg {
    Gzip,
    Zstd,
}

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["hooks_dir", "recipes_dir"]))]
struct AssembleArgs {
    /// FinClaw layout: DIR/recipes/<id>/ and shared helpers in DIR/lib/.
    #[arg(long, value_name = "DIR")]
    hooks_dir: Option<PathBuf>,
    /// This repo's layout: DIR/<id>/ and shared helpers in DIR/lib/.
    #[arg(long, value_name = "DIR")]
    recipes_dir: Option<PathBuf>,
    /// Output folder; each recipe is written to OUT/<id>/.
    #[arg(long, value_name = "OUT")]
    out_dir: PathBuf,
    /// Assemble only this recipe.
    #[arg(long, value_name = "ID")]
    only: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, clap::Args)]
struct PackArgs {
    /// Folder of recipe folders: assembled trees, or TypeScript sources (assembled first).
    #[arg(long, value_name = "DIR")]
    recipes_dir: PathBuf,
    /// Catalog folder to write (archives, hooks-index.json, SHA256SUMS).
    #[arg(long, value_name = "OUT")]
    out_dir: PathBuf,
    /// Base URL for archive URLs in the index [default: URLs relative to the index].
    #[arg(long, value_name = "URL")]
    asset_base_url: Option<String>,
    /// `updated_at` to write when the index changes (RFC 3339) [default: SOURCE_DATE_EPOCH, else now].
    #[arg(long, value_name = "TS")]
    updated_at: Option<String>,
    /// Pack only this recipe; other index entries stay byte-identical.
    #[arg(long, value_name = "ID")]
    only: Option<String>,
    /// Archive compression.
    #[arg(long, value_enum, default_value = "gzip")]
    compression: CompressionArg,
    /// Keep every version this index lists as well as OUT/hooks-index.json's (a local file, or a catalog folder for its hooks-index.json: a path or a file:// URL).
    #[arg(long, value_name = "INDEX")]
    merge: Option<PathBuf>,
    /// Write nothing; exit 1 with the differences if OUT is not what the sources produce.
    #[arg(long)]
    check: bool,
    /// Worker threads, 1 or more [default: the number of CPUs].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Text,
    Json,
    Github,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Github => Format::Github,
        }
    }
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// Recipe folders, folders of recipes, FinClaw hooks folders, catalog folders, profile or
    /// workspace folders (their hooks.json or .finclaw/hooks.json), or JSON files.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    /// Under --strict, keep the warnings of this code warnings (e.g. `--allow
    /// module-not-read`); repeat it for more codes.
    #[arg(long, value_name = "CODE", value_parser = warning_code)]
    allow: Vec<String>,
    /// Report format: text, json, or github (Actions annotations).
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

/// A code as diagnostics give it: lowercase letters and digits in words joined by `-`.
fn warning_code(code: &str) -> Result<String, String> {
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    match code.split('-').all(word) {
        true => Ok(code.to_string()),
        false => Err(format!(
            "`{code}` is not a warning code; give one as the report prints it, in brackets \
             after `warning` (e.g. module-not-read)"
        )),
    }
}

#[derive(Debug, clap::Args)]
struct NewArgs {
    /// The recipe id: lowercase letters, digits and single dashes, at most 64 characters.
    id: String,
    /// Folder to create the recipe in [default: ./recipes if it exists, else .].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
}

/// Typed settings for `validate`.
#[derive(Debug, Clone)]
pub struct ValidateSettings {
    /// Paths to check.
    pub paths: Vec<PathBuf>,
    /// Warnings count as errors.
    pub strict: bool,
    /// Codes of the warnings that stay warnings under `strict`.
    pub allow: Vec<String>,
}

/// Handlers are waited for to read their exit codes. Inherited from a parent that ignores
/// SIGCHLD, that disposition has the kernel reap them first, and every code is lost (each
/// handler taken for one killed by a signal, a gate's deny dropped as a failure).
#[cfg(unix)]
fn take_back_sigchld() {
    // SAFETY: signal(2) sets the default disposition; no handler function is installed.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    }
}

/// Runs the command line `args` and returns the exit code; errors are printed on stderr.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    #[cfg(unix)]
    take_back_sigchld();
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            if !e.use_stderr() {
                // `--help` and `--version`: not errors.
                return ExitCode::Success;
            }
            if asks_for_json(&args) {
                let _ = Printer::new(Format::Json, false).json(&usage_error_report(&e));
            }
            return ExitCode::Usage;
        }
    };
    let quiet = cli.quiet;
    let format = format_of(&cli.command);
    let advice = advice_of(&cli.command);
    let result = match check_environment() {
        Err(e) => Err(e),
        Ok(()) => run_command(cli.command, quiet, &advice),
    };
    match result {
        Ok(code) => {
            // A signal an install, update or remove deferred until its commit was done.
            #[cfg(unix)]
            crate::run::interrupt::reraise();
            code
        }
        Err(e) => {
            let code = e.exit_code();
            if !matches!(e, Error::BrokenPipe) {
                for d in e.diagnostics() {
                    Printer::new(Format::Text, false)
                        .advising(&advice)
                        .diagnostic_to_stderr(d);
                }
                report_error(&e, &Printer::new(Format::Text, quiet).advising(&advice));
                // Only while stdout is empty: an error once a report has begun is one
                // writing it, and a second document would not parse as one.
                if format == Format::Json && !crate::output::wrote_stdout() {
                    let _ = Printer::new(Format::Json, quiet)
                        .advising(&advice)
                        .json(&error_report(&e));
                }
                if format == Format::Github {
                    annotate_error(&e, &Printer::new(Format::Github, quiet).advising(&advice));
                }
            }
            // Its temporary folders are gone now: end as the signal would have (also when
            // another error came first, while a deferred signal waited to be acted on).
            #[cfg(unix)]
            crate::run::interrupt::reraise();
            code
        }
    }
}

/// An error that ends one part of a command (a recipe's install, an index's updates) while
/// the rest goes on: its problems (an index's diagnostics) and itself on stderr, and under
/// `--format github` as workflow commands on stdout.
fn report_failure(e: &Error, printer: &Printer) {
    for d in e.diagnostics() {
        printer.diagnostic_to_stderr(d);
    }
    report_error(e, printer);
    if printer.format == Format::Github {
        annotate_error(e, printer);
    }
}

/// For a GitHub Actions log, on stdout: each problem of `e` on its file, and `e` itself.
fn annotate_error(e: &Error, printer: &Printer) {
    for d in e.diagnostics() {
        let _ = printer.data(&github_annotation(d));
    }
    let _ = printer.data(&crate::output::github_error(
        e.kind(),
        &error_lines(e).join("; caused by: "),
    ));
}

/// Whether the raw arguments `args` (the program name first) end with `--format json` as
/// the parser reads them, for a command line it refused: each option that takes a value
/// (from the command definition) takes the next argument unless that one starts with `-`,
/// as clap does, so `--payload=--format json` or a `--format json` after `--` asks for
/// nothing, while `--payload --format json` (a payload without its value) does. The last
/// `--format` given wins.
fn asks_for_json(args: &[OsString]) -> bool {
    let mut root = <Cli as clap::CommandFactory>::command();
    root.build();
    let mut command = &root;
    let mut json = false;
    // Set after an option that takes a value, until that value is seen: whether it is
    // `--format`.
    let mut pending: Option<bool> = None;
    for arg in args.iter().skip(1) {
        // A word that is not UTF-8 is no flag that matters here.
        let Some(word) = arg.to_str() else {
            pending = None;
            continue;
        };
        let is_flag = word.starts_with('-') && word != "-";
        if let Some(is_format) = pending.take() {
            if !is_flag {
                if is_format {
                    json = word == "json";
                }
                continue;
            }
        }
        if word == "--" {
            break;
        }
        let takes_value =
            |arg: Option<&clap::Arg>| arg.is_some_and(|a| a.get_action().takes_values());
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            // Every verb has `--format`; given where it is unknown, it is still the one
            // the user meant.
            let is_format = name == "format";
            match value {
                Some(value) if is_format => json = value == "json",
                Some(_) => {}
                None => {
                    let known = command.get_arguments().find(|a| a.get_long() == Some(name));
                    if is_format || takes_value(known) {
                        pending = Some(is_format);
                    }
                }
            }
        } else if is_flag {
            // A cluster of short flags: one that takes a value takes the rest of the word,
            // or else the next argument.
            let shorts = &word[1..];
            for (i, c) in shorts.char_indices() {
                let known = command.get_arguments().find(|a| a.get_short() == Some(c));
                if takes_value(known) {
                    if i + c.len_utf8() == shorts.len() {
                        pending = Some(false);
                    }
                    break;
                }
            }
        } else if let Some(sub) = command.find_subcommand(word) {
            command = sub;
        }
    }
    json
}

/// The JSON error object of a usage error the parser found: kind `usage`, exit code 2, and
/// as message clap's text without colours, its `error: ` prefix, the usage line and the
/// `--help` hint after it.
fn usage_error_report(e: &clap::Error) -> crate::output::ErrorReport<'static> {
    let message = if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        // Its text is the help, printed for a command line that names no subcommand.
        "a subcommand is required; see --help".to_string()
    } else {
        let text = e.render().to_string();
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        let kept: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
            .collect();
        kept.join("\n").trim().to_string()
    };
    crate::output::ErrorReport {
        error: crate::output::ErrorObject {
            message,
            causes: Vec::new(),
            exit_code: ExitCode::Usage as u8,
            kind: "usage",
            diagnostics: &[],
        },
    }
}

/// The `--format` a parsed command was given.
fn format_of(command: &Command) -> Format {
    match command {
        Command::Validate(a) => a.format,
        Command::New(a) => a.format,
        Command::Assemble(a) => a.format,
        Command::Pack(a) => a.format,
        Command::Install(a) => a.format,
        Command::Remove(a) => a.format,
        Command::Update(a) => a.format,
        Command::List(a) => a.format,
        Command::Trust(a) | Command::Revoke(a) => a.format,
        Command::Run(a) => a.format,
        Command::Doctor(a) => a.format,
        Command::Test(a) => a.format,
        Command::Catalog(CatalogCommand::List(a)) => a.format,
        Command::Catalog(CatalogCommand::Verify(a)) => a.catalog.format,
        Command::WatchAsync(_) => FormatArg::Text,
    }
    .into()
}

/// The most seconds a timeout variable takes (about 31 years): far larger values overflow
/// the clock arithmetic of the HTTP client and the lock.
const MOST_SECONDS: f64 = 1e9;

/// Seconds a variable may hold, with the least value it takes.
const ENV_SECONDS: [(&str, f64); 3] = [
    ("HOOKPACK_LOCK_TIMEOUT", 0.0),
    // Below a millisecond a network wait is no wait, and below a nanosecond it is 0.
    ("HOOKPACK_HTTP_TIMEOUT", 0.001),
    ("HOOKPACK_HTTP_DEADLINE", 0.001),
];

/// The seconds `text` holds if they are in range for the variable whose least value is
/// `least`.
fn seconds_in_range(text: &str, least: f64) -> Option<std::time::Duration> {
    let s = text.trim().parse::<f64>().ok()?;
    (least..=MOST_SECONDS)
        .contains(&s)
        .then(|| std::time::Duration::try_from_secs_f64(s).ok())?
}

/// Refuses a setting in the environment that would otherwise be ignored (a timeout of
/// `abc` used to fall back to the default without a word).
fn check_environment() -> Result<(), Error> {
    for (name, least) in ENV_SECONDS {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        let text = value.to_string_lossy();
        if text.trim().is_empty() || seconds_in_range(&text, least).is_some() {
            continue;
        }
        return Err(Error::ArgInvalid {
            what: name,
            value: text.into_owned(),
            why: if least > 0.0 {
                "give a number of seconds from 0.001 to 1e9, such as 2.5, or unset it".into()
            } else {
                "give a number of seconds from 0 (do not wait) to 1e9, such as 2.5, or unset it"
                    .into()
            },
        });
    }
    Ok(())
}

/// What the advice `command` prints must carry: the `--profile` and `--workspace` folders
/// it was given (advice run as printed then acts on them; without, it finds the same ones
/// the command did).
fn advice_of(command: &Command) -> Advice {
    let (profile, workspace) = match command {
        Command::Install(a) => (&a.profile, None),
        Command::Remove(a) => (&a.profile, None),
        Command::Update(a) => (&a.profile, None),
        Command::List(a) => (&a.profile, a.workspace.as_deref()),
        Command::Trust(a) | Command::Revoke(a) => (&a.profile, a.workspace.as_deref()),
        Command::Run(a) => (&a.profile, a.workspace.as_deref()),
        Command::Doctor(a) => (&a.profile, a.workspace.as_deref()),
        _ => return Advice::default(),
    };
    Advice::new(profile.profile.as_deref(), workspace)
}

/// Runs one parsed command, its advice completed with `advice`.
fn run_command(command: Command, quiet: bool, advice: &Advice) -> Result<ExitCode, Error> {
    match command {
        Command::Validate(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            let settings = ValidateSettings {
                paths: a.paths,
                strict: a.strict,
                allow: a.allow,
            };
            run_validate(&settings, &printer)
        }
        Command::New(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            run_new(&a.id, a.dir, &printer)
        }
        Command::Assemble(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            assemble_settings(a).and_then(|o| run_assemble(&o, &printer))
        }
        Command::Pack(a) => {
            if matches!(a.compression, CompressionArg::Gzip) {
                // Before any thread starts, as the settings require.
                crate::gzip::keep_freed_memory();
            }
            let printer = Printer::new(a.format.into(), quiet);
            pack_settings(a).and_then(|o| run_pack(&o, &printer))
        }
        Command::Install(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_install(a, &printer)
        }
        Command::Remove(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_remove(a, &printer)
        }
        Command::Update(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_update(a, &printer)
        }
        Command::List(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_list(a, &printer)
        }
        Command::Trust(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_trust(a, false, &printer)
        }
        Command::Revoke(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_trust(a, true, &printer)
        }
        Command::Run(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_run(a, &printer)
        }
        Command::Doctor(a) => {
            let printer = Printer::new(a.format.into(), quiet).advising(advice);
            run_doctor(a, &printer)
        }
        Command::Test(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            run_test(a.dirs, &printer)
        }
        Command::WatchAsync(a) => {
            crate::run::watch_async(a.pid, a.start, std::time::Duration::from_secs(a.timeout));
            Ok(ExitCode::Success)
        }
        Command::Catalog(CatalogCommand::List(a)) => {
            let printer = Printer::new(a.format.into(), quiet);
            run_catalog_list(&a, &printer)
        }
        Command::Catalog(CatalogCommand::Verify(a)) => {
            let printer = Printer::new(a.catalog.format.into(), quiet);
            run_catalog_verify(&a, &printer)
        }
    }
}

/// Prints `error: …` and a `caused by:` line per source.
pub fn report_error(e: &(dyn std::error::Error + 'static), printer: &Printer) {
    let lines = error_lines(e);
    for (i, line) in lines.iter().enumerate() {
        // Messages quote names from archives, indexes and files: never let them drive the
        // terminal.
        let line = printable(&printer.advice(line));
        if i == 0 {
            eprintln!("error: {line}");
        } else {
            eprintln!("  caused by: {line}");
        }
    }
}

/// The JSON error object `--format json` prints for `e`: the text of the lines
/// [`report_error`] prints, the exit code, the kind and the diagnostics.
fn error_report(e: &Error) -> crate::output::ErrorReport<'_> {
    // The text as it is, not escaped as on stderr: JSON escapes what it must, and the
    // printer writes what could still drive a terminal as `\uXXXX` escapes.
    let mut lines = error_lines(e).into_iter();
    crate::output::ErrorReport {
        error: crate::output::ErrorObject {
            message: lines.next().unwrap_or_default(),
            causes: lines.collect(),
            exit_code: e.exit_code() as u8,
            kind: e.kind(),
            diagnostics: e.diagnostics(),
        },
    }
}

/// The message of `e`, then each of its sources that the lines before do not already quote.
fn error_lines(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut lines = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !lines.iter().any(|l| l.contains(&text)) {
            lines.push(text);
        }
        source = s.source();
    }
    lines
}

fn run_validate(s: &ValidateSettings, printer: &Printer) -> Result<ExitCode, Error> {
    let mut report = validate::validate_paths(&s.paths);
    // An `--allow` that does nothing is said, so a misspelt code is not taken for one that
    // failed to work.
    if !s.strict && !s.allow.is_empty() {
        printer.message(
            "note: --allow has no effect without --strict (warnings fail nothing without it)",
        );
    }
    if s.strict {
        for code in s
            .allow
            .iter()
            .filter(|c| !report.diagnostics.iter().any(|d| d.code == c.as_str()))
        {
            printer.message(&format!("note: --allow {code}: no finding has that code"));
        }
        report.make_strict(&s.allow);
    }
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    match printer.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                ok: bool,
                errors: usize,
                warnings: usize,
                #[serde(flatten)]
                report: &'a validate::Report,
            }
            printer.json(&Out {
                ok: errors == 0,
                errors,
                warnings,
                report: &report,
            })?;
        }
        Format::Github => {
            for d in &report.diagnostics {
                printer.data(&github_annotation(d))?;
            }
        }
        Format::Text => {
            for d in &report.diagnostics {
                printer.diagnostic(d)?;
            }
        }
    }
    printer.message(&format!(
        "validated {}{}: {}, {}",
        counted(report.paths.len(), "path", "paths"),
        what_was_validated(&report),
        counted(errors, "error", "errors"),
        counted(warnings, "warning", "warnings")
    ));
    Ok(if report.environment_failed() {
        ExitCode::Environment
    } else if errors > 0 {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}

/// `n` and the word for that many (`1 path`, `2 paths`).
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the paths given to `validate` held, for its summary: ` (5 recipes, 1 hooks.json)`,
/// or nothing when none was recognised.
fn what_was_validated(report: &validate::Report) -> String {
    let count = |kinds: &[validate::Kind]| {
        report
            .paths
            .iter()
            .filter(|p| kinds.contains(&p.kind))
            .count()
    };
    // One recipe given twice (`validate r r/recipe.json`) is one recipe.
    let recipes = (report.paths.iter())
        .flat_map(|p| &p.recipe_dirs)
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let hooks_files = count(&[validate::Kind::HooksFile]);
    let indexes = count(&[validate::Kind::CatalogIndex, validate::Kind::CatalogFolder]);
    let mut parts = Vec::new();
    if recipes > 0 {
        parts.push(counted(recipes, "recipe", "recipes"));
    }
    if hooks_files > 0 {
        parts.push(format!("{hooks_files} hooks.json"));
    }
    if indexes > 0 {
        parts.push(counted(indexes, "index", "indexes"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn run_new(id: &str, dir: Option<PathBuf>, printer: &Printer) -> Result<ExitCode, Error> {
    let id = Id::parse(id)?;
    if let Some(product) = id.names_product() {
        return Err(Error::ArgInvalid {
            what: "ID",
            value: id.to_string(),
            why: crate::recipe::product_id_why(&id, product),
        });
    }
    let parent = dir.unwrap_or_else(|| {
        if std::path::Path::new("recipes").is_dir() {
            PathBuf::from("recipes")
        } else {
            PathBuf::from(".")
        }
    });
    let made = scaffold::create(&id, &parent)?;
    match printer.format {
        Format::Json => printer.json(&made)?,
        _ => {
            for f in &made.files {
                printer.data(&printable(&made.path.join(f).display().to_string()))?;
            }
            // The command is to be copied: quoted, and on one line.
            let dir = made.path.to_string_lossy();
            printer.message(&printable(&format!(
                "created recipe `{id}` in {}; next: hookpack validate {}",
                made.path.display(),
                crate::advice::quote_on_one_line(&dir)
            )));
        }
    }
    Ok(ExitCode::Success)
}

fn parse_only(only: Option<String>) -> Result<Option<Id>, Error> {
    only.map(|s| Id::parse(&s)).transpose().map_err(Error::from)
}

fn assemble_settings(a: AssembleArgs) -> Result<assemble::Options, Error> {
    let layout = match (a.hooks_dir, a.recipes_dir) {
        (Some(h), _) => {
            if std::fs::symlink_metadata(&h)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                return Err(Error::FlagPathMissing {
                    what: "--hooks-dir",
                    path: h,
                    fix: "give the folder holding `recipes/` and `lib/`",
                });
            }
            if !h.join("recipes").is_dir() && h.exists() {
                return Err(Error::ArgInvalid {
                    what: "--hooks-dir",
                    value: h.display().to_string(),
                    why: format!(
                        "it has no `recipes/` folder; --hooks-dir takes the folder holding `recipes/` and `lib/`{}",
                        if crate::pack::discover(&h, None).is_ok_and(|d| !d.is_empty()) {
                            format!(", and {} holds recipes itself: use `--recipes-dir {}`", h.display(), h.display())
                        } else {
                            String::new()
                        }
                    ),
                });
            }
            assemble::Layout::hooks_dir(&h)
        }
        (None, Some(r)) => assemble::Layout::recipes_dir(&r),
        (None, None) => unreachable!("clap requires one of --hooks-dir and --recipes-dir"),
    };
    Ok(assemble::Options {
        layout,
        out_dir: a.out_dir,
        only: parse_only(a.only)?,
    })
}

/// Prints `warnings` of a command that succeeded: on stderr (unless `--quiet`), or under
/// `--format github` as annotations on stdout, as `validate` prints its findings.
fn warn_of(warnings: &[crate::diagnostic::Diagnostic], printer: &Printer) -> std::io::Result<()> {
    for w in warnings {
        if printer.format == Format::Github {
            printer.data(&github_annotation(w))?;
        } else if !printer.quiet {
            printer.diagnostic_to_stderr(w);
        }
    }
    Ok(())
}

fn run_assemble(o: &assemble::Options, printer: &Printer) -> Result<ExitCode, Error> {
    let report = assemble::assemble(o)?;
    warn_of(&report.warnings, printer)?;
    match printer.format {
        Format::Json => printer.json(&report)?,
        _ => {
            for r in &report.recipes {
                // Tab-separated: the path is escaped, tabs and all, not the line.
                printer.data(&format!(
                    "{}\t{}\t{} files",
                    r.id,
                    printable(&r.path.display().to_string()),
                    r.files.len()
                ))?;
            }
            for p in &report.removed {
                printer.message(&printable(&format!("removed stale {}", p.display())));
            }
            printer.message(&printable(&format!(
                "assembled {} recipe(s) into {}",
                report.recipes.len(),
                o.out_dir.display()
            )));
        }
    }
    Ok(ExitCode::Success)
}

/// The last second an index's `updated_at` can hold (9999-12-31T23:59:59Z).
const LAST_EPOCH_SECOND: u64 = 253_402_300_799;

/// `SOURCE_DATE_EPOCH`, when set to a whole number of seconds. It takes seconds, not an
/// RFC 3339 time, so a bad value is refused as such, and one past year 9999 here rather
/// than as an invalid index once `updated_at` is formatted from it.
fn source_date_epoch() -> Result<Option<u64>, Error> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<u64>() {
            Ok(secs) if secs <= LAST_EPOCH_SECOND => Ok(Some(secs)),
            _ => Err(Error::ArgInvalid {
                what: "SOURCE_DATE_EPOCH",
                value: v,
                why: format!(
                    "it takes a whole number of seconds since 1970-01-01T00:00:00Z, at most {LAST_EPOCH_SECOND} (year 9999), as `date +%s` prints; set it so or unset it"
                ),
            }),
        },
        _ => Ok(None),
    }
}

fn pack_settings(a: PackArgs) -> Result<pack::Options, Error> {
    let epoch = source_date_epoch()?;
    Ok(pack::Options {
        recipes_dir: a.recipes_dir,
        out_dir: a.out_dir,
        asset_base_url: a.asset_base_url,
        updated_at: a.updated_at,
        only: parse_only(a.only)?,
        compression: match a.compression {
            CompressionArg::Gzip => pack::Compression::Gzip,
            CompressionArg::Zstd => pack::Compression::Zstd,
        },
        merge: a.merge.map(merge_argument).transpose()?,
        check: a.check,
        mtime: epoch.unwrap_or(0),
        mtime_from_env: epoch.is_some(),
        jobs: a.jobs.map_or_else(crate::parallel::cores, usize::from),
    })
}

fn run_pack(o: &pack::Options, printer: &Printer) -> Result<ExitCode, Error> {
    let report = pack::pack(o)?;
    warn_of(&report.warnings, printer)?;
    match printer.format {
        Format::Json => printer.json(&report)?,
        _ => {
            // --check writes nothing: the differences below say what pack would change.
            let written = if o.check {
                &[][..]
            } else {
                &report.archives[..]
            };
            for a in written {
                printer.data(&format!(
                    "{:<9} {} {} {} {}",
                    a.status, a.id, a.version, a.file, a.sha256
                ))?;
            }
            for d in &report.differences {
                let line = match d.actual {
                    Some(actual) => format!(
                        "differs   {}: expected sha256 {} found {actual}",
                        d.file, d.expected
                    ),
                    None => format!(
                        "missing   {}: expected sha256 {}, not in OUT",
                        d.file, d.expected
                    ),
                };
                printer.data(&printable(&line))?;
            }
        }
    }
    if o.check {
        if report.differences.is_empty() && !report.fails_verify.is_empty() {
            printer.message(&printable(&format!(
                "{} holds what the sources produce, but its index fails `catalog verify` (see \
                 the warnings above: {}); fix the index, then run `hookpack pack` without \
                 --check",
                o.out_dir.display(),
                report.fails_verify.join(", ")
            )));
            Ok(ExitCode::Invalid)
        } else if report.differences.is_empty() {
            printer.message(&printable(&format!(
                "{} is up to date",
                o.out_dir.display()
            )));
            Ok(ExitCode::Success)
        } else {
            // An archive of a published version is no build output: pack cannot make it.
            let gone = report.differences.iter().any(|d| {
                d.actual.is_none()
                    && d.file != crate::catalog::INDEX_FILE
                    && d.file != crate::catalog::SUMS_FILE
                    && !report.archives.iter().any(|a| a.file == d.file)
            });
            let fix = if gone {
                "copy the published archives it lacks back from where the catalog is served \
                 (pack cannot build them again), then run `hookpack pack` without --check"
            } else {
                "run `hookpack pack` without --check"
            };
            printer.message(&printable(&format!(
                "{} is not what the sources produce; {fix}",
                o.out_dir.display()
            )));
            Ok(ExitCode::Invalid)
        }
    } else {
        let lists = if report.index_changed {
            String::new()
        } else if report.rewritten.is_empty() {
            " (index unchanged)".to_string()
        } else {
            // Entries the same, bytes not (a hand edit): said so, not "unchanged".
            format!(
                " (no index entry changed; rewrote {}, whose bytes differed)",
                report.rewritten.join(" and ")
            )
        };
        printer.message(&printable(&format!(
            "packed {} recipe(s) into {}{lists}",
            report.archives.len(),
            o.out_dir.display(),
        )));
        Ok(ExitCode::Success)
    }
}

/// Seconds from one of the [`ENV_SECONDS`] variables, such as `HOOKPACK_HTTP_TIMEOUT=2.5`,
/// if it is set and in range ([`check_environment`] refused it at the start otherwise).
pub(crate) fn env_seconds(name: &str) -> Option<std::time::Duration> {
    let (_, least) = ENV_SECONDS.iter().find(|(n, _)| *n == name)?;
    seconds_in_range(&std::env::var(name).ok()?, *least)
}

fn fetcher(ca_cert: Option<PathBuf>) -> Result<crate::fetch::Fetcher, Error> {
    let mut options = crate::fetch::Options {
        ca_certs: ca_cert.into_iter().collect(),
        ..Default::default()
    };
    if let Some(t) = env_seconds("HOOKPACK_HTTP_TIMEOUT") {
        options.read_timeout = t;
        options.connect_timeout = t;
    }
    if let Some(t) = env_seconds("HOOKPACK_HTTP_DEADLINE") {
        options.deadline = t;
    }
    let fetcher = crate::fetch::Fetcher::new(options);
    fetcher.check_ca_certs()?;
    Ok(fetcher)
}

fn run_catalog_list(a: &CatalogArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let loc = index_of(a, printer)?;
    let index = install::load_index(&fetcher(a.ca_cert.clone())?, &loc).map_err(|e| match e {
        Error::IndexInvalid { diagnostics } => Error::IndexInvalidReadOnly { diagnostics },
        other => other,
    })?;
    match printer.format {
        Format::Json => printer.json(&index)?,
        _ => {
            for r in &index.recipes {
                let versions: Vec<String> =
                    r.versions.iter().map(|v| v.version.to_string()).collect();
                // One line per recipe: a newline in the summary is shown escaped.
                printer.data(&format!(
                    "{}\t{}\tmin_cli {}\t{}\t(versions: {})",
                    r.id,
                    r.latest,
                    r.min_cli,
                    printable(&r.summary),
                    versions.join(", ")
                ))?;
            }
            printer.message(&printable(&format!(
                "{} recipe(s) in {} (updated {})",
                index.recipes.len(),
                loc,
                index.updated_at
            )));
        }
    }
    Ok(ExitCode::Success)
}

/// The index `catalog list` or `verify` reads: INDEX as given, else the one `install` would
/// use, said on stderr with where it came from.
fn index_of(a: &CatalogArgs, printer: &Printer) -> Result<crate::fetch::Location, Error> {
    if let Some(index) = &a.index {
        return catalog::verify::index_argument("INDEX", index);
    }
    let profile = profile_of(&ProfileArgs {
        profile: a.profile.clone(),
    })?;
    // A profile named that is not there (misspelt) has no index of its own: the built-in
    // catalog would be listed as if it were its.
    if a.profile.is_some() {
        profile.require_folder()?;
    }
    let (index, source) = profile.resolve_index(None)?;
    let from = match source {
        crate::profile::IndexSource::Env => "from $HOOKPACK_INDEX_URL".to_string(),
        crate::profile::IndexSource::Config => format!(
            "from extra.hooks.index_url in {}",
            profile.root.join("config.yaml").display()
        ),
        crate::profile::IndexSource::Builtin | crate::profile::IndexSource::Flag => {
            "the catalog built into hookpack".to_string()
        }
    };
    printer.message(&printable(&format!(
        "index: {} ({from}, as install reads it; give INDEX to read another)",
        crate::fetch::shown_url(&index.to_string()),
    )));
    Ok(index)
}

fn run_catalog_verify(v: &VerifyArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let a = &v.catalog;
    let loc = index_of(a, printer)?;
    if let Some(dir) = &v.assets_dir {
        let is_dir = std::fs::metadata(dir)
            .map_err(|e| crate::fs::FsError::new("inspect the --assets-dir folder", dir, e))?
            .is_dir();
        if !is_dir {
            return Err(Error::FlagNotFolder {
                what: "--assets-dir",
                path: dir.clone(),
                fix: "give the folder `hookpack pack` wrote the archives to",
            });
        }
    }
    let jobs = v.jobs.map_or_else(crate::parallel::cores, usize::from);
    let fetcher = fetcher(a.ca_cert.clone())?;
    let report = catalog::verify::verify(
        &loc,
        &fetcher,
        v.assets_dir.as_deref(),
        v.allow_outside,
        jobs,
    );
    match printer.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                ok: bool,
                errors: usize,
                #[serde(flatten)]
                report: &'a catalog::verify::Report,
            }
            printer.json(&Out {
                ok: report.errors() == 0,
                errors: report.errors(),
                report: &report,
            })?;
        }
        Format::Github => {
            for d in &report.diagnostics {
                printer.data(&github_annotation(d))?;
            }
        }
        Format::Text => {
            for c in &report.archives {
                let status = if c.ok { "ok" } else { "FAILED" };
                printer.data(&printable(&format!(
                    "{status:<6} {} {} {}",
                    c.id, c.version, c.location
                )))?;
            }
            for d in &report.diagnostics {
                printer.diagnostic(d)?;
            }
        }
    }
    let warnings = report.diagnostics.len() - report.errors();
    // An archive that failed was checked, not verified: count the two apart.
    let passed = report.archives.iter().filter(|c| c.ok).count();
    printer.message(&format!(
        "checked {} archive(s): {passed} verified, {} failed; {} error(s){}",
        report.archives.len(),
        report.archives.len() - passed,
        report.errors(),
        match warnings {
            0 => String::new(),
            n => format!(", {n} warning(s)"),
        }
    ));
    Ok(if report.environment_failed {
        ExitCode::Environment
    } else if report.errors() > 0 {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}

/// Expands the `test` arguments into recipe folders.
fn test_dirs(dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>, Error> {
    let dirs = if dirs.is_empty() {
        if std::path::Path::new("recipe.json").is_file() {
            vec![PathBuf::from(".")]
        } else if std::path::Path::new("recipes").is_dir() {
            vec![PathBuf::from("recipes")]
        } else if crate::validate::holds_recipe_folders(std::path::Path::new(".")) {
            // A maintainer in `recipes/` itself means its recipes, as `recipes` from above.
            vec![PathBuf::from(".")]
        } else {
            // Run from a recipe's `src/` or deeper: name the recipe folder above.
            let above = (1..=4)
                .map(|n| vec![".."; n].join("/"))
                .find(|up| std::path::Path::new(up).join("recipe.json").is_file());
            let hint = match above {
                Some(up) => format!(
                    "; this folder is inside the recipe folder `{up}`: run `hookpack test {up}`"
                ),
                None => "; name a recipe folder or a folder of recipes".into(),
            };
            return Err(Error::ArgInvalid {
                what: "RECIPE_DIR",
                value: String::new(),
                why: format!(
                    "none given, and neither ./recipe.json nor ./recipes exists here{hint}"
                ),
            });
        }
    } else {
        dirs
    };
    let mut out = Vec::new();
    for d in dirs {
        // A case file, `tests/` or `recipe.json` of a recipe: `test` runs a recipe's cases.
        if !d.join("recipe.json").is_file() {
            // Folders the path really lies in (`.` is none of `../x`'s).
            let real =
                |p: &std::path::Path| std::path::absolute(p).ok().map(|p| assemble::normalize(&p));
            let holds_d = |a: &std::path::Path| matches!((real(&d), real(a)), (Some(d), Some(a)) if d.starts_with(&a) && d != a);
            let inside = (d.ancestors().skip(1).take(3))
                .map(|a| match a.as_os_str().is_empty() {
                    true => std::path::Path::new("."),
                    false => a,
                })
                .find(|a| holds_d(a) && a.join("recipe.json").is_file());
            if let Some(recipe) = inside {
                return Err(Error::TestPathInsideRecipe {
                    recipe: recipe.to_path_buf(),
                    path: d,
                });
            }
        }
        if std::fs::symlink_metadata(&d).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Err(Error::FlagPathMissing {
                what: "RECIPE_DIR",
                path: d,
                fix: "give a recipe folder (holding recipe.json) or a folder of recipes",
            });
        }
        if std::fs::metadata(&d).is_ok_and(|m| !m.is_dir()) {
            return Err(Error::RecipesDirNotFolder {
                path: d,
                fix: "give a recipe folder (holding recipe.json) or a folder of recipes",
            });
        }
        if d.join("recipe.json").is_file() {
            // `.` or `..` names no folder: the recipe's folder name (its id) and the folder
            // holding it (with the helpers) come from the path it stands for.
            let d = if d.file_name().is_none() {
                let abs = std::path::absolute(&d)
                    .map_err(|e| crate::fs::FsError::new("find the folder", &d, e))?;
                assemble::normalize(&abs)
            } else {
                d
            };
            out.push(d);
        } else {
            // A FinClaw hooks folder holds its recipes in `recipes/`.
            let recipes = d.join("recipes");
            let searched = if recipes.is_dir() && !recipes.join("recipe.json").exists() {
                &recipes
            } else {
                &d
            };
            let found = pack::discover(searched, None)?;
            if found.is_empty() {
                return Err(pack::no_recipes(searched));
            }
            out.extend(found);
        }
    }
    Ok(out)
}

fn run_test(dirs: Vec<PathBuf>, printer: &Printer) -> Result<ExitCode, Error> {
    let dirs = test_dirs(dirs)?;
    let mut results = Vec::new();
    // Recipes that have no case: nothing of them is tested, and the run's outcome cannot
    // say so.
    let mut without_cases = Vec::new();
    // A Ctrl-C between handlers (while assembling, between cases) stops at the next check,
    // so the temporary folders go too; printing the report is outside, so a stuck stdout
    // cannot hold it.
    #[cfg(unix)]
    let deferred = crate::run::interrupt::defer();
    // Recipes whose sources have errors: their cases cannot run, the other recipes' still
    // do. `test` writes nothing of its own, so what such a problem stops is the cases.
    let mut untested: Vec<String> = Vec::new();
    let mut source_errors: Vec<crate::diagnostic::Diagnostic> = Vec::new();
    let mut typescript_only = true;
    for dir in &dirs {
        crate::run::check_interrupted()?;
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let loaded = assemble::assemble_to_temp(parent, std::slice::from_ref(dir), true).and_then(
            |assembled| match crate::recipe::load(&assembled.dirs[0], false) {
                Ok(loaded) => Ok((assembled, loaded)),
                Err(diagnostics) => Err(Error::RecipesInvalid { diagnostics }),
            },
        );
        // What `validate` reports as the recipe's own problems stops its cases only.
        let problems = match loaded {
            Ok(ok) => Ok(ok),
            Err(Error::TypeScript { diagnostics }) => Err(diagnostics),
            Err(Error::RecipesInvalid { diagnostics }) => {
                typescript_only = false;
                Err(diagnostics)
            }
            Err(Error::PackRefused { path, reason }) => {
                typescript_only = false;
                Err(vec![assemble::path_refused(&path, reason)])
            }
            Err(other) => return Err(other),
        };
        let (assembled, loaded) = match problems {
            Ok(ok) => ok,
            Err(diagnostics) => {
                untested.push(dir.display().to_string());
                source_errors.extend(diagnostics);
                continue;
            }
        };
        let built = &assembled.dirs[0];
        let ran = crate::fixture::run_recipe(dir, built, &loaded.recipe)?;
        if ran.is_empty() {
            without_cases.push(loaded.recipe.id.to_string());
        }
        results.extend(ran);
    }
    // A shared helper's problem is every importing recipe's: said once.
    let source_errors = assemble::once_each(source_errors);
    // A signal from here on ends the process at once: no temporary folder is left.
    #[cfg(unix)]
    drop(deferred);
    crate::run::check_interrupted()?;
    if untested.len() == dirs.len() {
        // No recipe could be tested: the error alone says it.
        return Err(if typescript_only {
            Error::TypeScriptUntested {
                diagnostics: source_errors,
            }
        } else {
            Error::RecipesInvalidUntested {
                diagnostics: source_errors,
            }
        });
    }
    let passed = results.iter().filter(|r| r.passed).count();
    let failed = results.len() - passed;
    match printer.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                passed: usize,
                failed: usize,
                cases: &'a [crate::fixture::CaseResult],
                without_cases: &'a [String],
                /// Recipe folders whose sources have errors, so none of their cases ran.
                untested: &'a [String],
                /// Those errors.
                diagnostics: &'a [crate::diagnostic::Diagnostic],
            }
            printer.json(&Out {
                passed,
                failed,
                cases: &results,
                without_cases: &without_cases,
                untested: &untested,
                diagnostics: &source_errors,
            })?;
        }
        _ => {
            for d in &source_errors {
                printer.diagnostic_to_stderr(d);
            }
            for r in &results {
                let ms: u128 = r.handlers.iter().map(|h| h.ms).sum();
                let status = if r.passed { "ok  " } else { "FAIL" };
                // One line per case: its file and name are read from disk. A case that
                // could not be read has no name.
                let name = if r.name.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.name)
                };
                printer.data(&printable(&format!(
                    "{status} {}/{}{name} ({ms} ms)",
                    r.recipe, r.file
                )))?;
                for m in &r.mismatches {
                    printer.data(&format!("       {m}"))?;
                }
                if !r.passed {
                    for h in &r.handlers {
                        let stderr = h.stderr.trim_start_matches(['\n', '\r']).trim_end();
                        if stderr.is_empty() {
                            continue;
                        }
                        // Line by line, as the handler wrote it, so node's caret stays under
                        // the spot it marks; each line escaped for the terminal.
                        printer.data(&printable(&format!("       stderr of {}:", h.id)))?;
                        for line in stderr.lines() {
                            let line = printable(line.strip_suffix('\r').unwrap_or(line));
                            if line.is_empty() {
                                printer.data("         |")?;
                            } else {
                                printer.data(&format!("         | {line}"))?;
                            }
                        }
                    }
                }
            }
            printer.data(&format!("{passed} passed, {failed} failed"))?;
        }
    }
    if !untested.is_empty() {
        printer.error_line(&printable(&format!(
            "error: the sources of {} have errors (above), so none of {} cases ran; fix \
             them (`hookpack validate` lists them all) and test again",
            untested.join(", "),
            if untested.len() == 1 { "its" } else { "their" },
        )));
    }
    if results.is_empty() {
        printer.message(&printable(&format!(
            "warning: no fixture cases found (tests/*.json) in {}, so nothing was tested; add \
             one (see the cases `hookpack new` writes)",
            without_cases.join(", ")
        )));
    } else {
        for id in &without_cases {
            printer.message(&format!(
                "warning: recipe `{id}` has no fixture cases (tests/*.json), so nothing of it \
                 was tested; add one (see the cases `hookpack new` writes)"
            ));
        }
    }
    // A program the handlers' shell could not find (node missing, or off the PATH of the
    // login shell): said once, with the fix, besides each failed case's stderr.
    let mut not_found: Vec<String> = Vec::new();
    let exited_127 = (results.iter())
        .flat_map(|r| &r.handlers)
        .filter(|h| h.exit == Some(127));
    for line in exited_127.flat_map(|h| h.stderr.lines()) {
        let line = line.trim_end();
        let head =
            (line.strip_suffix(": not found")).or_else(|| line.strip_suffix(": command not found"));
        if let Some(program) = head.and_then(|h| h.rsplit(": ").next()) {
            if !not_found.iter().any(|p| p == program) {
                not_found.push(program.to_string());
            }
        }
    }
    if !not_found.is_empty() {
        let names: Vec<String> = not_found.iter().map(|p| format!("`{p}`")).collect();
        printer.message(&printable(&format!(
            "note: handlers exited 127, as a shell does for a command it cannot find: {}; \
             install it, or put it on the PATH that `$SHELL -lc` sets",
            names.join(", ")
        )));
    }
    Ok(if failed > 0 || !untested.is_empty() {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}

/// Whether `path` is a pipe (a fifo, or `/dev/fd/N` of a shell's process substitution).
fn is_pipe(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

fn cli_version(flag: Option<String>) -> Result<Option<crate::version::Version>, Error> {
    let raw = flag.or_else(|| {
        std::env::var("HOOKPACK_CLI_VERSION")
            .ok()
            .filter(|s| !s.trim().is_empty())
    });
    raw.map(|s| {
        crate::version::Version::parse(s.trim()).map_err(|e| Error::ArgInvalid {
            what: "--cli-version (or $HOOKPACK_CLI_VERSION)",
            value: s.clone(),
            why: e.to_string(),
        })
    })
    .transpose()
}

fn print_outcome(o: &install::Outcome, printer: &Printer) -> Result<(), Error> {
    if o.action == "left" {
        // `update` said why on stderr when it found it.
        return Ok(());
    }
    let what = match (o.action, &o.from, &o.to) {
        ("install", _, Some(to)) => format!("install {} {to}", o.id),
        ("update", Some(from), Some(to)) => {
            let older = crate::version::Version::parse(from)
                .ok()
                .zip(crate::version::Version::parse(to).ok())
                .is_some_and(|(from, to)| to < from);
            let what = if older { "downgrade" } else { "update " };
            format!("{what} {} {from} -> {to}", o.id)
        }
        ("unchanged", _, Some(to)) if o.dry_run => {
            let what = match (o.reason, &o.pin) {
                (Some("pin-recorded"), Some(pin)) => format!("would be pinned {pin}"),
                (Some("pin-lifted"), _) => "its pin would be lifted".to_string(),
                _ => "nothing to do".to_string(),
            };
            format!("leave   {} {to} (already installed; {what})", o.id)
        }
        ("unchanged", _, Some(to)) => {
            let what = match (o.reason, &o.pin) {
                (Some("pin-recorded"), Some(pin)) => format!("; pinned {pin}"),
                (Some("pin-lifted"), _) => "; pin lifted".to_string(),
                _ => String::new(),
            };
            format!("ok      {} {to} (already installed{what})", o.id)
        }
        ("repair", _, Some(to)) => {
            let what = match o.reason {
                Some("entries-differ") => "its hooks.json entries differed from the recipe's",
                _ => "its installed files differed from the archive",
            };
            format!("repair  {} {to} ({what})", o.id)
        }
        // No receipt, no version known: none is shown.
        ("remove", from, _) => match from {
            Some(v) => format!("remove  {} {v}", o.id),
            None => format!("remove  {}", o.id),
        },
        _ => format!("{} {}", o.action, o.id),
    };
    let prefix = if o.dry_run { "would " } else { "" };
    // One line each: a line break in the profile path or a file name is shown escaped.
    printer.data(&printable(&format!(
        "{prefix}{what}  ({})",
        o.path.display()
    )))?;
    if o.dry_run {
        for f in &o.files {
            printer.data_as_written(&printable(&format!("  file {f}")))?;
        }
        if !o.hooks_json_diff.is_empty() {
            printer.data("  hooks.json:")?;
            if o.hooks_json_relaid {
                printer.data(
                    "    (the whole file is rewritten as hookpack writes JSON, indented by two \
                     spaces; the lines below show the change in that layout)",
                )?;
            }
            for l in &o.hooks_json_diff {
                let line = crate::output::json_line_safe(&format!("    {l}"));
                printer.data_as_written(&line)?;
            }
        }
    }
    Ok(())
}

fn finish_outcomes(
    results: Vec<Result<install::Outcome, Error>>,
    profile: &crate::profile::Profile,
    printer: &Printer,
) -> Result<ExitCode, Error> {
    let mut worst = ExitCode::Success;
    let mut outcomes = Vec::new();
    // The first error of the worst exit code: JSON gives it when no recipe has an outcome.
    let mut worst_error: Option<Error> = None;
    for r in results {
        match r {
            Ok(o) => {
                if printer.format != Format::Json {
                    print_outcome(&o, printer)?;
                }
                for w in &o.warnings {
                    printer.message(&printable(&format!("warning: {w}")));
                }
                notes_after_install(&o, profile, printer);
                outcomes.push(o);
            }
            Err(e) => {
                let code = e.exit_code();
                report_failure(&e, printer);
                if code as i32 > worst as i32 {
                    worst = code;
                    worst_error = Some(e);
                }
            }
        }
    }
    if printer.format == Format::Json {
        match worst_error.filter(|_| outcomes.is_empty()) {
            // Every recipe failed: an empty list would not say so.
            Some(e) => printer.json(&error_report(&e))?,
            None => printer.json(&outcomes)?,
        }
    }
    Ok(worst)
}

/// After an install or update, warns of the recipe's handlers hosts will skip (an id another
/// handler of the event already has), and says which were trusted and have changed: a host
/// skips them until they are trusted again. Either way a gate that was on is off.
fn notes_after_install(o: &install::Outcome, profile: &crate::profile::Profile, printer: &Printer) {
    if o.dry_run || !matches!(o.action, "install" | "update" | "repair") {
        return;
    }
    let Ok(trust) = crate::trust::TrustFile::read(&profile.trust_file()) else {
        return;
    };
    let here = std::env::current_dir().unwrap_or_default();
    let env = crate::list::env_of(profile, &here);
    let Ok(handlers) = crate::list::handlers_of(&profile.hooks_json(), "profile", &env, &trust)
    else {
        return;
    };
    let ours = || {
        handlers
            .iter()
            .filter(|h| h.recipe.as_deref() == Some(o.id.as_str()))
    };
    for h in ours().filter(|h| !h.problems.is_empty()) {
        printer.message(&printable(&format!(
            "warning: {} handler `{}` of {} will not run (hosts skip it, `trust` refuses it): {}",
            h.event,
            h.id.as_deref().unwrap_or("-"),
            o.id,
            h.problems.join("; ")
        )));
    }
    let gone: Vec<&str> = (o.gone.iter())
        .filter(|(_, key)| trust.handlers.contains_key(key))
        .map(|(shown, _)| shown.as_str())
        .collect();
    if !gone.is_empty() {
        printer.message(&printable(&format!(
            "note: {} handler(s) of {} that you trusted are gone with this version ({}), and \
             its handlers in their place will not run until trusted; review them (`hookpack \
             list`), then run `hookpack trust --recipe {}` (`hookpack doctor --fix` drops the \
             trust entries left)",
            gone.len(),
            o.id,
            gone.join(", "),
            o.id
        )));
    }
    let changed = ours()
        .filter(|h| h.status == crate::trust::Status::Modified)
        .count();
    if changed > 0 {
        printer.message(&format!(
            "note: {changed} handler(s) of {} that you trusted changed with this {} and \
             will not run until trusted again; review them (`hookpack list`), then run \
             `hookpack trust --recipe {}`",
            o.id,
            // A repair writes the installed version again.
            if o.action == "repair" {
                "repair"
            } else {
                "version"
            },
            o.id
        ));
    }
}

/// The profile `--profile` (or the environment) names. One that exists but is not a folder
/// (`--profile demo/hooks.json`) is said to be the problem here: every verb would otherwise
/// fail on a path under it, or find no handlers in it.
fn profile_of(a: &ProfileArgs) -> Result<crate::profile::Profile, Error> {
    let profile = crate::profile::Profile::resolve(a.profile.as_deref())?;
    match std::fs::metadata(&profile.root) {
        Ok(m) if !m.is_dir() => Err(Error::ConfigInvalid {
            why: format!(
                "the profile is not a folder; name the folder that holds hooks.json{}",
                profile
                    .root
                    .parent()
                    .filter(|_| profile.root.file_name().is_some_and(|n| n == "hooks.json"))
                    .map(|p| format!(" (--profile {})", p.display()))
                    .unwrap_or_default()
            ),
            path: profile.root,
        }),
        // Found by review: a path that runs through a file (`hooks.json/sub`) failed later,
        // naming `config.yaml` and "Not a directory": name the file in the way.
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            let file = profile
                .root
                .ancestors()
                .skip(1)
                .find(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()))
                .map(std::path::Path::to_path_buf)
                .unwrap_or_else(|| profile.root.clone());
            Err(Error::ConfigInvalid {
                why: format!(
                    "the profile {} cannot be a folder, as its path runs through this file; \
                     give --profile a folder (or a path to make one at)",
                    profile.root.display()
                ),
                path: file,
            })
        }
        _ => Ok(profile),
    }
}

fn run_install(a: InstallArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let opts = install::Options {
        cli_version: cli_version(a.source.cli_version)?,
        dry_run: a.dry_run,
        absolute_paths: a.absolute_paths,
        allow_outside: a.source.allow_outside,
        progress: printer.format == Format::Text
            && !printer.quiet
            && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        preview: install::Preview::default(),
    };
    let fetcher = fetcher(a.source.ca_cert)?;
    if let (None, Some(sha)) = (&a.archive, &a.sha256) {
        return Err(Error::ArgInvalid {
            what: "--sha256",
            value: sha.clone(),
            why: "it applies only with --archive; an index carries each archive's digest".into(),
        });
    }
    if let Some(archive) = a.archive {
        let sha = a
            .sha256
            .map(|s| {
                // Capitals too, as Windows tools print a digest; the index's stay lowercase.
                let lower = s.trim().to_ascii_lowercase();
                crate::sha256::Sha256::parse(&lower).map_err(|_| Error::ArgInvalid {
                    what: "--sha256",
                    value: s.clone(),
                    why: "it is not a sha256: write its 64 hex characters (either case), as the \
                          archive's publisher gives them"
                        .into(),
                })
            })
            .transpose()?;
        let loc = crate::fetch::Location::parse(&archive)?;
        // Said only of bytes that will be read: a path that is no file (missing, a folder)
        // is refused, and the warning would only precede the error.
        let readable = !matches!(&loc, crate::fetch::Location::Path(p) if !p.is_file());
        if sha.is_none() && readable {
            printer.message(&printable(&format!(
                "warning: installing {archive} without --sha256: nothing vouches for these bytes; pass the digest the publisher gives"
            )));
        }
        // Once the arguments are sound: a usage error writes nothing.
        recover_first(&profile, a.dry_run, printer)?;
        return finish_outcomes(
            vec![install::install_archive(
                &profile, &fetcher, &loc, sha, &opts,
            )],
            &profile,
            printer,
        );
    }
    // An archive's path or URL given where an id goes: say which flag takes it.
    if let Some(s) = (a.specs.iter()).find(|s| {
        let name = s.to_ascii_lowercase();
        [".tar.gz", ".tar.zst", ".tgz"]
            .iter()
            .any(|ext| name.ends_with(ext))
    }) {
        return Err(Error::ArgInvalid {
            what: "ID",
            value: s.clone(),
            why: format!(
                "it names an archive, not a recipe id; install an archive with `hookpack install --archive {s} --sha256 HEX`"
            ),
        });
    }
    let specs: Vec<install::Spec> = a
        .specs
        .iter()
        .map(|s| install::Spec::parse(s))
        .collect::<Result<_, _>>()?;
    let specs = named_once(&a.specs, specs, |s| (s.id.as_str(), s.pin.as_deref()))?;
    let (index, source) = profile.resolve_index(a.source.index.as_deref())?;
    printer.message(&printable(&format!(
        "index: {} ({}); profile: {}",
        crate::fetch::shown_url(&index.to_string()),
        serde_json::to_value(source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        profile.root.display()
    )));
    if let Some(warning) = crate::fetch::plain_http_warning(&index) {
        printer.message(&printable(&warning));
    }
    // Fetched once: every recipe named comes from one snapshot of it.
    let loaded = install::load_index_from(&fetcher, &index)?;
    recover_first(&profile, a.dry_run, printer)?;
    // A signal deferred through a commit stops the command before the next recipe.
    let results = specs
        .iter()
        .take_while(|_| crate::run::check_interrupted().is_ok())
        .map(|s| install::install_from(&profile, &fetcher, &index, &loaded, s, &opts))
        .collect();
    finish_outcomes(results, &profile, printer)
}

/// `--merge INDEX`: a local index file or catalog folder (its `hooks-index.json`, as
/// `catalog verify` reads it), as a path or a `file://` URL. Its archives' URLs are kept as
/// they are, so merging a published index takes a copy of it, not its URL.
fn merge_argument(index: PathBuf) -> Result<PathBuf, Error> {
    use crate::fetch::Location;
    // A name that is not UTF-8 is no URL: a path.
    let location = match index.to_str() {
        Some(text) => Location::parse(text),
        None => Ok(Location::Path(index.clone())),
    };
    let text = index.to_string_lossy();
    match location {
        Ok(Location::Http(_)) => Err(Error::ArgInvalid {
            what: "--merge",
            value: text.to_string(),
            why: "it takes a local index file; download the published index first (`curl -fo \
                  published-index.json URL`) and merge that file"
                .into(),
        }),
        Ok(Location::Path(path)) => {
            let path = crate::catalog::verify::index_file(path);
            if std::fs::symlink_metadata(&path)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                return Err(Error::FlagPathMissing {
                    what: "--merge",
                    path,
                    fix: "give the published index, downloaded (a hooks-index.json file)",
                });
            }
            Ok(path)
        }
        // `builtin:` names the catalog in the binary, which is no file: here it is a path.
        Ok(Location::Builtin(_)) => Ok(index),
        // Another scheme, a `file://` URL of another host.
        Err(_) => Err(Error::ArgInvalid {
            what: "--merge",
            value: text.to_string(),
            why: "it takes a local index file, as a path or a `file://` URL of this machine".into(),
        }),
    }
}

/// `parsed` (each of `given` parsed, in order) with the repeats of one left out, so that a
/// recipe named twice the same way (`install x x`) is done once, by a real run and a dry
/// run alike. `key` gives an item's id and version wanted; a recipe named twice with two
/// versions (`x@0.1.0 x`) is refused, as which one is meant is not for hookpack to guess.
fn named_once<T>(
    given: &[String],
    parsed: Vec<T>,
    key: impl Fn(&T) -> (&str, Option<&str>),
) -> Result<Vec<T>, Error> {
    let mut kept: Vec<(&String, T)> = Vec::with_capacity(parsed.len());
    for (text, item) in given.iter().zip(parsed) {
        let (id, want) = key(&item);
        match kept.iter().find(|(_, k)| key(k).0 == id) {
            None => kept.push((text, item)),
            Some((_, k)) if key(k).1 == want => {}
            Some((first, _)) => {
                return Err(Error::ArgInvalid {
                    what: "ID",
                    value: String::new(),
                    why: format!(
                        "`{id}` is named twice, as `{first}` and as `{text}`; name it once, as \
                         the version you want"
                    ),
                })
            }
        }
    }
    Ok(kept.into_iter().map(|(_, item)| item).collect())
}

fn run_remove(a: RemoveArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let ids: Vec<crate::id::Id> = a
        .ids
        .iter()
        .map(|s| Id::parse(s))
        .collect::<Result<_, _>>()?;
    let ids = named_once(&a.ids, ids, |id| (id.as_str(), None))?;
    recover_first(&profile, a.dry_run, printer)?;
    let preview = install::Preview::default();
    let results = ids
        .iter()
        .take_while(|_| crate::run::check_interrupted().is_ok())
        .map(|id| install::remove(&profile, id.as_str(), a.dry_run, &preview))
        .collect();
    finish_outcomes(results, &profile, printer)
}

fn run_update(mut a: UpdateArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let cli = cli_version(a.source.cli_version)?;
    for id in &a.ids {
        Id::parse(id)?;
    }
    a.ids = named_once(&a.ids, a.ids.clone(), |id| (id.as_str(), None))?;
    let fetcher = fetcher(a.source.ca_cert)?;
    let flag = match a.source.index.as_deref() {
        Some(f) => Some(catalog::verify::index_argument("--index", f.as_ref())?),
        None => None,
    };
    recover_first(&profile, a.dry_run, printer)?;
    // After recovery, or (a dry run) as recovery will leave them.
    let receipts = || install::receipts_after_recovery(&profile).map(|(r, _)| r);
    if a.ids.is_empty() && receipts()?.is_empty() {
        // Not "up to date": most likely the wrong profile.
        printer.message(&printable(&format!(
            "no recipes are installed in {}{}",
            profile.root.display(),
            if profile.root.exists() {
                String::new()
            } else {
                format!("; {}", crate::error::MISSING_PROFILE)
            }
        )));
        // An empty list either way: no recipe compared (dry run), none changed (a real run).
        if printer.format == Format::Json {
            printer.json(&Vec::<install::Outdated>::new())?;
        }
        return Ok(ExitCode::Success);
    }
    let mut report = Vec::new();
    // Each index read, and which of them each recipe is compared with.
    let mut loaded_indexes = Vec::new();
    let mut source_of = std::collections::HashMap::new();
    let from_receipts = flag.is_none();
    // One index that cannot be read stops only the recipes compared with it; a real run
    // lists them as left, `failed`, with the error.
    let mut failed: Option<Error> = None;
    let mut unread = Vec::new();
    for (index, ids) in install::update_sources(&profile, flag, &a.ids)? {
        if let Some(warning) = crate::fetch::plain_http_warning(&index) {
            printer.message(&printable(&warning));
        }
        // Fetched once: the updates below install from the snapshot compared with.
        let compared = match install::load_index_from(&fetcher, &index).and_then(|loaded| {
            let compared = install::outdated_in(&profile, &index, &loaded.0, &ids, cli.as_ref())?;
            Ok((loaded, compared))
        }) {
            Ok((loaded, compared)) => {
                loaded_indexes.push((index.clone(), loaded));
                compared
            }
            Err(e) => {
                report_failure(&e, printer);
                if from_receipts {
                    printer.message(&printable(&format!(
                        "note: {} came from the index {index} (as recorded when installed); `--index` compares with another",
                        ids.join(", ")
                    )));
                }
                let error = error_lines(&e).join("; caused by: ");
                for r in receipts()? {
                    if !ids.contains(&r.id) {
                        continue;
                    }
                    if a.dry_run {
                        report.push(install::Outdated {
                            id: r.id,
                            installed: r.version,
                            available: None,
                            latest: None,
                            state: install::UpdateState::Failed,
                            local_changes: Vec::new(),
                            pin: r.pin,
                            newest: None,
                            bytes_changed: None,
                            installed_sha256: r.sha256.to_string(),
                            error: Some(error.clone()),
                        });
                    } else {
                        let mut o = left(&profile, r.id, r.version, r.pin, "failed", Vec::new());
                        o.error = Some(error.clone());
                        unread.push(Ok(o));
                    }
                }
                failed.get_or_insert(e);
                continue;
            }
        };
        for o in compared {
            source_of.insert(o.id.clone(), loaded_indexes.len() - 1);
            report.push(o);
        }
    }
    for o in &report {
        if let Some(listed) = &o.bytes_changed {
            printer.message(&printable(&format!(
                "warning: {}; the installed files stay as they are",
                install::other_bytes(&o.id, &o.installed, listed, &o.installed_sha256)
            )));
        }
    }
    if a.dry_run {
        match printer.format {
            Format::Json => printer.json(&report)?,
            _ => {
                for o in &report {
                    let blocked = if o.state == install::UpdateState::Pinned {
                        format!(
                            " (pinned {}; newest {})",
                            o.pin.clone().unwrap_or_default(),
                            o.newest.clone().unwrap_or_default()
                        )
                    } else if o.state == install::UpdateState::Current
                        && o.available.as_ref().is_some_and(|a| *a != o.installed)
                    {
                        " (newer than the index offers; kept)".to_string()
                    } else if o.local_changes.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (blocked by files you changed or added: {}; move them out first)",
                            o.local_changes.join(", ")
                        )
                    };
                    printer.data(&printable(&format!(
                        "{:<12} {} installed {} available {}{blocked}",
                        o.state.label(),
                        o.id,
                        o.installed,
                        o.available.clone().unwrap_or_else(|| "-".into())
                    )))?;
                }
            }
        }
        // As the real run ends: it leaves a recipe blocked by the user's files, exit 1.
        let blocked = report.iter().any(|o| !o.local_changes.is_empty());
        return Ok(match failed {
            Some(e) => e.exit_code(),
            None if blocked => ExitCode::Invalid,
            None => ExitCode::Success,
        });
    }
    let opts = install::Options {
        cli_version: cli,
        dry_run: false,
        absolute_paths: a.absolute_paths,
        allow_outside: a.source.allow_outside,
        progress: printer.format == Format::Text
            && !printer.quiet
            && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        preview: install::Preview::default(),
    };
    // Commands keep the path style each recipe was installed with (--absolute-paths).
    let absolute: std::collections::HashSet<String> = crate::receipt::all(&profile)?
        .into_iter()
        .filter(|r| r.absolute_paths)
        .map(|r| r.id)
        .collect();
    let mut results = Vec::new();
    for o in report {
        // A signal deferred through a commit stops the command before the next recipe.
        if crate::run::check_interrupted().is_err() {
            break;
        }
        let Some(v) = (o.available.as_ref()).filter(|_| o.state == install::UpdateState::Outdated)
        else {
            // Say why a recipe is left as it is, unless it is current; JSON gets it as data.
            if let Some(reason) = o.state.reason() {
                let index = source_of
                    .get(&o.id)
                    .map(|&i| loaded_indexes[i].0.to_string())
                    .unwrap_or_default();
                printer.message(&printable(&match o.state {
                    install::UpdateState::CliTooOld => format!(
                        "{} {}: no version in {index} runs on this CLI; left as it is",
                        o.id, o.installed
                    ),
                    install::UpdateState::Pinned => {
                        let pin = o.pin.clone().unwrap_or_default();
                        // The index compared with, named when `install` would read another.
                        let flag = source_of.get(&o.id).map_or(String::new(), |&i| {
                            crate::doctor::index_flag(
                                &profile,
                                &install::recorded_index(&loaded_indexes[i].0),
                            )
                        });
                        format!(
                            "{id} {installed}: pinned to {pin} (installed as `{id}@{pin}`), \
                             newest {newest}; left as it is. `hookpack install {id}{flag}` takes \
                             the newest and lifts the pin, `hookpack install {id}@REQ{flag}` pins \
                             another",
                            id = o.id,
                            installed = o.installed,
                            newest = o.newest.clone().unwrap_or_default(),
                        )
                    }
                    _ => format!("{} {}: not in {index}; left as it is", o.id, o.installed),
                }));
                results.push(Ok(left(
                    &profile,
                    o.id,
                    o.installed,
                    o.pin,
                    reason,
                    Vec::new(),
                )));
            }
            continue;
        };
        let opts = install::Options {
            absolute_paths: opts.absolute_paths || absolute.contains(&o.id),
            ..opts.clone()
        };
        // The version chosen, with the pin it was chosen within kept in the receipt.
        let spec = install::Spec {
            pin: o.pin.clone(),
            ..install::Spec::parse(&format!("{}@{v}", o.id))?
        };
        let Some((index, loaded)) = source_of.get(&o.id).map(|&i| &loaded_indexes[i]) else {
            continue;
        };
        let result = install::install_from(&profile, &fetcher, index, loaded, &spec, &opts);
        // JSON lists a recipe left over the user's files too, with them, and one whose
        // update failed, with the error; the error also goes to stderr and sets the exit
        // code.
        match &result {
            Err(Error::LocalChanges { files, .. }) => {
                let files = files.clone();
                results.push(Ok(left(
                    &profile,
                    o.id,
                    o.installed,
                    o.pin,
                    "local-changes",
                    files,
                )));
            }
            Err(e) => {
                let mut failed = left(&profile, o.id, o.installed, o.pin, "failed", Vec::new());
                failed.error = Some(error_lines(e).join("; caused by: "));
                results.push(Ok(failed));
            }
            Ok(_) => {}
        }
        results.push(result);
    }
    results.extend(unread);
    if results.is_empty() && failed.is_none() && printer.format != Format::Json {
        printer.message("everything is up to date");
    }
    let code = finish_outcomes(results, &profile, printer)?;
    Ok(match failed {
        Some(e) if (e.exit_code() as i32) > (code as i32) => e.exit_code(),
        _ => code,
    })
}

/// What `update` reports for a recipe `id` it leaves as it is at `installed`, and why.
fn left(
    profile: &crate::profile::Profile,
    id: String,
    installed: String,
    pin: Option<String>,
    reason: &'static str,
    files: Vec<String>,
) -> install::Outcome {
    install::Outcome {
        action: "left",
        path: profile.recipe_dir(&id),
        from: Some(installed.clone()),
        to: Some(installed),
        id,
        files,
        hooks_json_diff: Vec::new(),
        hooks_json_relaid: false,
        dry_run: false,
        reason: Some(reason),
        warnings: Vec::new(),
        error: None,
        pin,
        gone: Vec::new(),
    }
}

/// The workspace `--workspace` names, else the current folder. One that is not a folder
/// (misspelt, or a file) has no handlers to list, trust or check: said, so that its
/// handlers are not taken for absent. (`run` refuses it.)
fn workspace_of(flag: Option<PathBuf>, printer: &Printer) -> PathBuf {
    let workspace = flag.unwrap_or_else(|| PathBuf::from("."));
    if !workspace.is_dir() {
        // One line: a line break in the path is shown escaped.
        printer.message(&format!(
            "warning: the workspace {} is not a folder, so only the profile's handlers are \
             taken; check --workspace",
            printable(&crate::fs::absolute(&workspace).display().to_string())
        ));
    }
    workspace
}

/// What `list` and the dry runs of `install`, `remove` and `update`, which show a change a
/// crash interrupted as recovery will leave it, say of it (`list`, `for_list`, shows the
/// recipe so, and its handlers as their files are now).
fn interrupted_note(c: &install::Interrupted, for_list: bool) -> String {
    let (will, shown) = if c.committed {
        ("finish", "finished")
    } else {
        ("undo", "undone")
    };
    let shown = match for_list {
        false => format!("shown here as {shown}"),
        true => {
            format!("its recipe is shown here as {shown}, its handlers as their files are now")
        }
    };
    format!(
        "note: a change of `{}` was interrupted; the next command that writes the profile, or \
         `hookpack doctor --fix`, will {will} it ({shown})",
        c.id
    )
}

/// Found by review: root changing a profile that another user owns (`sudo hookpack install
/// … --profile ~user/.finclaw`) leaves the recipe folders and receipts it makes owned by
/// root, which that user can then neither update nor remove. Said before the change.
fn root_in_another_users_profile(profile: &crate::profile::Profile) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        let euid = unsafe { libc::geteuid() };
        let owner = std::fs::metadata(&profile.root).ok()?.uid();
        (euid == 0 && owner != 0).then(|| {
            format!(
                "running as root in {}, which user {owner} owns: the files made now will be \
                 root's, and that user will not be able to update or remove the recipe; run \
                 the command as that user instead",
                profile.root.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = profile;
        None
    }
}

/// Before `install`, `update` or `remove`: finishes or undoes a change a crash interrupted,
/// saying so; or, for a dry run (which recovers nothing), says that it is planned from as
/// recovery will leave it.
fn recover_first(
    profile: &crate::profile::Profile,
    dry_run: bool,
    printer: &Printer,
) -> Result<(), Error> {
    if dry_run {
        if let Some(c) = install::interrupted_change(profile) {
            printer.message(&printable(&interrupted_note(&c, false)));
        }
        return Ok(());
    }
    if let Some(w) = root_in_another_users_profile(profile) {
        printer.message(&printable(&format!("warning: {w}")));
    }
    for note in install::recover_interrupted(profile)? {
        printer.message(&printable(&format!("note: {note}")));
    }
    Ok(())
}

fn run_list(a: ListArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let workspace = workspace_of(a.workspace, printer);
    let listing = crate::list::collect(&profile, &workspace)?;
    if let Some(c) = &listing.interrupted {
        printer.message(&printable(&interrupted_note(c, true)));
    }
    match printer.format {
        Format::Json => printer.json(&listing)?,
        _ => {
            // One line per entry: a line break (or any control character) in a path, a
            // command or a name read from the profile is shown escaped, so none can start a
            // line that reads as another entry.
            printer.data(&format!(
                "profile {}",
                printable(&listing.profile.display().to_string())
            ))?;
            for r in &listing.recipes {
                let missing = if r.folder_present {
                    ""
                } else {
                    "  (folder missing; run `hookpack doctor`)"
                };
                let pin = (r.pin.as_ref())
                    .map(|p| format!("  pinned {p}"))
                    .unwrap_or_default();
                printer.data(&printable(&format!(
                    "recipe  {} {}{pin}{missing}",
                    r.id, r.version
                )))?;
            }
            for h in &listing.handlers {
                let status = if h.problems.is_empty() {
                    h.status.word().to_string()
                } else {
                    format!("invalid: {}", h.problems.join("; "))
                };
                printer.data_as_written(&printable(&format!(
                    "{:<9} {:<17} {:<24} {:<20} {:<14} {}  [{status}]",
                    h.source,
                    h.event,
                    h.matcher.clone().unwrap_or_else(|| "*".into()),
                    h.id.clone().unwrap_or_else(|| "-".into()),
                    h.recipe.clone().unwrap_or_else(|| "(hand-written)".into()),
                    h.command
                )))?;
                for note in &h.group_notes {
                    printer.message(&printable(&format!(
                        "warning: {} {}: {note}",
                        h.event,
                        h.id.as_deref().unwrap_or(&h.key)
                    )));
                }
            }
            if !listing.profile_exists {
                printer.message(&printable(&format!(
                    "note: {}",
                    crate::doctor::profile_missing(&profile)
                )));
            } else if listing.handlers.is_empty() {
                printer.message("no handlers in the profile or workspace hooks.json");
            }
        }
    }
    Ok(ExitCode::Success)
}

fn run_trust(a: TrustArgs, revoke: bool, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let sel = if a.all {
        crate::trust::Selection::All
    } else if let Some(r) = a.recipe {
        crate::trust::Selection::Recipe(Id::parse(&r)?.to_string())
    } else if !a.key.is_empty() {
        crate::trust::Selection::Keys(
            a.key
                .iter()
                .map(|k| crate::trust::key_as_given(k))
                .collect(),
        )
    } else {
        crate::trust::Selection::Ids(a.ids)
    };
    let workspace = workspace_of(a.workspace, printer);
    let changes = crate::trust::apply(&profile, &workspace, &sel, revoke)?;
    match printer.format {
        Format::Json => printer.json(&changes)?,
        _ => {
            for c in &changes {
                // One line per handler: the key holds the hooks.json path, which may hold
                // a line break; the result may quote a command. A refusal's reason, of any
                // length, goes at the end, so the handler stays in its columns. The id and
                // key are the hooks.json's, shown as written; only the reason holds advice.
                let (word, why) = match c.result.strip_prefix("refused: ") {
                    Some(why) => ("refused", format!(": {}", printer.advice(why))),
                    None => (c.result.as_str(), String::new()),
                };
                printer.data_as_written(&printable(&format!(
                    "{word:<10} {} {} {}  ({}){why}",
                    c.event,
                    c.id.clone().unwrap_or_else(|| "-".into()),
                    c.hash,
                    c.key
                )))?;
                if let Some(w) = &c.warning {
                    printer.message(&printable(&format!(
                        "warning: {} {}: {}",
                        c.event,
                        c.id.as_deref().unwrap_or(&c.key),
                        printer.advice(w)
                    )));
                }
            }
        }
    }
    if changes.is_empty() {
        printer.message("no handler matched");
    }
    let refused = changes.iter().any(|c| c.result.starts_with("refused"));
    Ok(if refused {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}

fn run_run(a: RunArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let cli = cli_version(a.cli_version)?;
    let event = crate::event::Event::parse(&a.event).ok_or_else(|| Error::ArgInvalid {
        what: "EVENT",
        value: a.event.clone(),
        why: match crate::event::Event::suggest(&a.event) {
            Some(e) => format!("did you mean `{e}`?"),
            None => format!(
                "not an event; known events: {}",
                crate::event::Event::ALL.map(|e| e.name()).join(", ")
            ),
        },
    })?;
    let payload = match a.payload.as_deref() {
        None => serde_json::Map::new(),
        Some(src) => {
            const LIMIT: u64 = 16 * 1024 * 1024;
            let read_stream = |r: &mut dyn std::io::Read| -> Result<Vec<u8>, Error> {
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut r.take(LIMIT + 1), &mut b)
                    .map_err(Error::Output)?;
                if b.len() as u64 > LIMIT {
                    return Err(Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: format!("larger than the {LIMIT}-byte limit"),
                    });
                }
                Ok(b)
            };
            let path = std::path::Path::new(src);
            let bytes = if src == "-" {
                read_stream(&mut std::io::stdin())?
            } else if is_pipe(path) {
                // A pipe named on the command line (`--payload <(jq …)`) is read as stdin
                // is: its writer is the user's.
                let mut f = std::fs::File::open(path)
                    .map_err(|e| Error::Fs(crate::fs::FsError::new("open", path, e)))?;
                read_stream(&mut f)?
            } else if src.trim_start().starts_with(['{', '[']) && !path.exists() {
                // The JSON itself where a file goes.
                return Err(Error::PayloadInvalid {
                    source_name: src.to_string(),
                    why: "no file has that name; --payload takes a file, or - to read the JSON \
                          from stdin (echo '{…}' | hookpack run EVENT --payload -)"
                        .into(),
                });
            } else {
                crate::fs::read_limited(path, LIMIT).map_err(|e| match e.source.kind() {
                    std::io::ErrorKind::NotFound => Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: "no file has that name; --payload takes a file holding the JSON \
                              object, or - to read it from stdin"
                            .into(),
                    },
                    std::io::ErrorKind::IsADirectory => Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: "is a folder; --payload takes a file holding the JSON object, or \
                              - to read it from stdin"
                            .into(),
                    },
                    _ => e.into(),
                })?
            };
            if bytes.starts_with(b"\xEF\xBB\xBF") {
                // A host's JSON.parse refuses it too, so it stays refused, but said as such.
                return Err(Error::PayloadInvalid {
                    source_name: src.to_string(),
                    why: "not JSON: it starts with a UTF-8 byte-order mark (bytes EF BB BF), \
                          which a host's JSON.parse refuses too; save it as UTF-8 without BOM, \
                          or drop those 3 bytes (`tail -c +4 FILE`)"
                        .into(),
                });
            }
            match crate::json::parse(&bytes) {
                // Readers keep the last of a key given twice: the first would vanish unsaid.
                Ok(p) if !p.duplicates.is_empty() => {
                    let d = &p.duplicates[0];
                    return Err(Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: format!(
                            "key `{}` appears twice, {}, and only the last would \
                             be sent; keep one",
                            d.key,
                            d.spots()
                        ),
                    });
                }
                Ok(crate::json::Parsed {
                    value: serde_json::Value::Object(m),
                    ..
                }) => m,
                Ok(_) => {
                    return Err(Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: "must be a JSON object, e.g. {\"tool_name\": \"exec\", \"tool_input\": {\"command\": \"ls\"}}".into(),
                    })
                }
                Err(e) => {
                    // Nesting or size past hookpack's limits, or a lone surrogate escape, is
                    // valid JSON that a host may well send.
                    let what = e.valid_but_refused().unwrap_or("not JSON");
                    return Err(Error::PayloadInvalid {
                        source_name: src.to_string(),
                        why: format!(
                            "{what} ({}:{}: {})",
                            e.position.line, e.position.column, e.message
                        ),
                    });
                }
            }
        }
    };
    let profile = profile_of(&a.profile)?;
    let workspace = a.workspace.unwrap_or_else(|| PathBuf::from("."));
    let d = crate::run::dispatch(
        &profile,
        &workspace,
        event,
        &payload,
        &crate::run::DispatchOptions {
            include_untrusted: a.include_untrusted,
            cli_version: cli,
        },
    )?;
    // Its handlers were taken as the crash left their files, as a host's would be, which
    // recovery will change; their trust waits for it.
    let taken = |id: &str| {
        (d.handlers.iter()).any(|t| t.source == "profile" && t.recipe.as_deref() == Some(id))
    };
    if !d.turn_cut.is_empty() {
        printer.message(&format!(
            "note: the payload's `turn` was cut as hosts cut it before sending: {}",
            d.turn_cut.join(", ")
        ));
    }
    if let Some(c) = install::interrupted_change(&profile).filter(|c| taken(&c.id)) {
        printer.message(&printable(&format!(
            "note: a change of `{}` was interrupted, so its handlers here are as their files \
             are now, half way; the next command that writes the profile, or `hookpack doctor \
             --fix`, will {} it (trust them after that)",
            c.id,
            c.recovery()
        )));
    }
    match printer.format {
        Format::Json => printer.json(&d)?,
        _ => {
            let o = &d.outcome;
            let verdict = o
                .verdict
                .map(|v| {
                    serde_json::to_value(v)
                        .ok()
                        .and_then(|x| x.as_str().map(String::from))
                        .unwrap_or_default()
                })
                .unwrap_or_else(|| {
                    // A route or rewrite is not "no decision": say the changes follow.
                    let changed = o.updated_model.is_some()
                        || o.updated_prompt.is_some()
                        || o.updated_input.is_some()
                        || o.additional_context.is_some();
                    if changed {
                        "no verdict; the handlers changed:".into()
                    } else {
                        "no decision".into()
                    }
                });
            // One line each: a line break in a command, a reason or a handler's output is
            // shown escaped, so none can start a line that reads as another handler's.
            let host = d
                .cli_version
                .as_ref()
                .map(|v| format!(" (as a {v} host)"))
                .unwrap_or_default();
            printer.data_as_written(&printable(&format!(
                "{event}{host}: {verdict}{}",
                // An empty reason would print as `deny ()`.
                o.reason
                    .as_ref()
                    .filter(|r| !r.trim().is_empty())
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            )))?;
            if let Some(m) = &o.updated_model {
                printer.data_as_written(&printable(&format!("  updatedModel: {m}")))?;
            }
            if let Some(p) = &o.updated_prompt {
                printer.data_as_written(&printable(&format!("  prompt rewritten: {p}")))?;
            }
            if let Some(i) = &o.updated_input {
                printer.data_as_written(&printable(&format!("  updatedInput: {i}")))?;
            }
            if let Some(c) = &o.additional_context {
                printer.data_as_written(&printable(&format!("  additionalContext: {c}")))?;
            }
            for t in &d.handlers {
                let ended = match (t.exit, &t.signal) {
                    (Some(code), _) => format!("exit {code}"),
                    (None, Some(signal)) => format!("killed by {signal}"),
                    (None, None) => "killed".into(),
                };
                let timing =
                    t.ms.map(|m| format!(" {ended} in {m} ms"))
                        .unwrap_or_default();
                let decision = t
                    .decision
                    .as_ref()
                    .and_then(|x| {
                        let said = x
                            .failure
                            .clone()
                            .map(|f| format!(" failure: {f}"))
                            .or(x.verdict.map(|v| format!(" {v:?}").to_lowercase()));
                        let warning = x.warning.as_ref().map(|w| format!(" warning: {w}"));
                        match (said, warning) {
                            (Some(s), Some(w)) => Some(s + &w),
                            (s, w) => s.or(w),
                        }
                    })
                    .unwrap_or_default();
                printer.data_as_written(&printable(&format!(
                    "  {} {} [{}]{timing}{decision}",
                    t.source,
                    t.id.clone().unwrap_or_else(|| t.command.clone()),
                    printer.advice(&t.state)
                )))?;
                // Line by line, each escaped: a stack trace stays readable, and no line of
                // the handler's can drive the terminal or pass for one of hookpack's.
                for (i, line) in t.stderr.trim().lines().enumerate() {
                    let label = if i == 0 { "stderr:" } else { "       " };
                    printer.data_as_written(&format!("    {label} {}", printable(line)))?;
                }
            }
            if d.handlers.is_empty() {
                printer.message(&format!("no {event} handlers in the profile or workspace"));
            }
        }
    }
    Ok(ExitCode::Success)
}

fn run_doctor(a: DoctorArgs, printer: &Printer) -> Result<ExitCode, Error> {
    let profile = profile_of(&a.profile)?;
    let workspace = workspace_of(a.workspace, printer);
    let report = crate::doctor::check(&profile, &workspace, a.fix)?;
    let has_errors = (report.problems.iter()).any(|d| d.severity == Severity::Error);
    match printer.format {
        Format::Json => printer.json(&report)?,
        Format::Github => {
            for d in &report.problems {
                printer.data(&github_annotation(d))?;
            }
        }
        Format::Text => {
            // One line per finding: its file is shown escaped already, and so is a path,
            // trust key or command its message quotes.
            for f in &report.fixed {
                printer.data(&printable(&format!("fixed: {f}")))?;
            }
            for d in &report.problems {
                printer.diagnostic(&crate::diagnostic::Diagnostic {
                    message: printable(&d.message),
                    ..d.clone()
                })?;
            }
            if report.problems.is_empty() {
                printer.message(&printable(&format!(
                    "no problems in {}",
                    profile.root.display()
                )));
            } else if !has_errors {
                printer.message(&printable(&format!(
                    "no errors in {}, {} warning(s)",
                    profile.root.display(),
                    report.problems.len()
                )));
            } else if a.fix {
                printer.message(
                    "note: --fix removes only what is safe to remove (staging leftovers, trust \
                     entries of handlers that are gone); each problem above says how to fix it",
                );
            }
        }
    }
    if let Some(note) = report.awaiting_trust_note() {
        printer.message(&format!("note: {note}"));
    }
    // Warnings alone (a matcher hosts ignore, a recipe folder linked in) break nothing.
    Ok(if has_errors {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}
