//! Command-line parsing. Raw clap structs are turned into typed settings here and never
//! reach the rest of the library.

use crate::diagnostic::Severity;
use crate::error::{Error, ExitCode};
use crate::id::Id;
use crate::output::{github_annotation, Format, Printer};
use crate::{scaffold, validate};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
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
    /// Print no messages on stderr (data on stdout is unaffected).
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check recipe folders, recipe.json, hooks.json and hooks-index.json; report every problem.
    Validate(ValidateArgs),
    /// Create a recipe source tree that validates, assembles and tests as written.
    New(NewArgs),
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
    /// Recipe folders, folders of recipes, catalog folders, or JSON files.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    /// Report format: text, json, or github (Actions annotations).
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
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
}

/// Runs the command line `args` and returns the exit code; errors are printed on stderr.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::Usage
            } else {
                ExitCode::Success
            };
        }
    };
    let quiet = cli.quiet;
    let result = match cli.command {
        Command::Validate(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            let settings = ValidateSettings {
                paths: a.paths,
                strict: a.strict,
            };
            run_validate(&settings, &printer)
        }
        Command::New(a) => {
            let printer = Printer::new(a.format.into(), quiet);
            run_new(&a.id, a.dir, &printer)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = e.exit_code();
            if !matches!(e, Error::BrokenPipe) {
                report_error(&e);
            }
            code
        }
    }
}

/// Prints `error: …` and a `caused by:` line per source.
pub fn report_error(e: &(dyn std::error::Error + 'static)) {
    eprintln!("error: {e}");
    let mut source = e.source();
    while let Some(s) = source {
        eprintln!("  caused by: {s}");
        source = s.source();
    }
}

fn run_validate(s: &ValidateSettings, printer: &Printer) -> Result<ExitCode, Error> {
    let mut report = validate::validate_paths(&s.paths);
    if s.strict {
        report.make_strict();
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
                printer.data(&printer.diagnostic_line(d))?;
            }
        }
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    printer.message(&format!(
        "validated {}: {}, {}",
        plural(report.paths.len(), "path"),
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    Ok(if report.environment_failed() {
        ExitCode::Environment
    } else if errors > 0 {
        ExitCode::Invalid
    } else {
        ExitCode::Success
    })
}

fn run_new(id: &str, dir: Option<PathBuf>, printer: &Printer) -> Result<ExitCode, Error> {
    let id = Id::parse(id)?;
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
                printer.data(&made.path.join(f).display().to_string())?;
            }
            printer.message(&format!(
                "created recipe `{id}` in {}; next: hookpack validate {}",
                made.path.display(),
                made.path.display()
            ));
        }
    }
    Ok(ExitCode::Success)
}
