//! What a handler's `command` runs: shell words, the interpreter, and the script file.
//!
//! Hosts run commands with `$SHELL -lc`, so a command is split here the way a POSIX shell
//! splits words (quotes and backslashes), never with `split(' ')`: `node "my dir/x.js"` runs
//! one script, not two. The script a command resolves to is what `validate` checks for
//! existence, what `install` rewrites to the installed path, and whose bytes the trust hash
//! covers.

/// Interpreters that take a script path after their flags, by bare name only: those a
/// recipe may name (the contract's list).
pub const INTERPRETERS: [&str; 9] = [
    "node", "python3", "python", "bash", "sh", "deno", "bun", "ruby", "perl",
];

/// Interpreters whose flags hookpack does not read, by bare name (a version after it
/// too: `lua5.4`, `pypy3`). Which word of a command such a one runs as its script is not
/// known, so a handler's trust hash cannot cover it.
pub const UNREAD_INTERPRETERS: [&str; 23] = [
    "pypy",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "fish",
    "csh",
    "tcsh",
    "pwsh",
    "Rscript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "busybox",
    "julia",
    "elixir",
    "escript",
    "groovy",
    "guile",
    "racket",
    "osascript",
];

/// `name` without a version written after it (`python3.11` → `python`, `node20` →
/// `node`), if it has one.
fn unversioned(name: &str) -> Option<&str> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let version = &name[base.len()..];
    (!base.is_empty() && version.starts_with(|c: char| c.is_ascii_digit())).then_some(base)
}

/// Whether `program` is one of [`UNREAD_INTERPRETERS`], a version after it or not.
pub fn unread_interpreter(program: &str) -> bool {
    UNREAD_INTERPRETERS.contains(&program)
        || unversioned(program).is_some_and(|base| UNREAD_INTERPRETERS.contains(&base))
}

/// One word of a command and where it starts in the command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal.
    pub text: String,
    /// Byte offset of the word's first character in the command.
    pub start: usize,
    /// Byte offset just past the word's last character.
    pub end: usize,
    /// True when any part of the word was quoted or escaped.
    pub quoted: bool,
    /// Byte offsets in `text` of each `$` and backquote the shell expands (unquoted or in
    /// double quotes; a single-quoted or escaped one is a plain character), and of each
    /// unquoted `*`, `?`, `[`, and `{` opening a brace expansion (`{a,b}`, `{1..3}`; not the
    /// `{` of `${`): pathname expansion, and bash's brace expansion, put other file names in
    /// the word's place.
    pub expansions: Vec<usize>,
    /// True when one of `expansions` is outside double quotes, so the shell may split the
    /// word into several (or none) or replace it with file names.
    pub splits: bool,
}

/// A command split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// The words, in order.
    pub words: Vec<Word>,
    /// Unquoted shell syntax beyond plain words: `;`, a line break, `|`, `&`, `<`, `>`, `(`,
    /// `)`, `$`, or a backquote (the first one met, as written: the whole operator, `&&`,
    /// `2>&1`; [`describe`] names it). Such a command is more than "run this script", so
    /// only its first simple command is understood.
    pub shell_syntax: Option<String>,
}

/// Names a [`Words::shell_syntax`] character for a diagnostic, quoted; a line break is
/// written `\n`, as a raw one would split the message in two.
pub fn describe(syntax: &str) -> String {
    match syntax {
        "\n" => "`\\n`, a line break".to_string(),
        s => format!("`{s}`"),
    }
}

/// The operator that starts at byte `i` of `command` (one of `;|&<>()$` or a backquote), as
/// written: `&&`, not `&`. A redirection takes the file descriptor written against it
/// (`before`, the word just before, when it is all digits and unquoted) and the one it
/// duplicates: `2>&1`.
fn operator_at(command: &str, i: usize, before: Option<&Word>) -> String {
    const LONGER: [&str; 15] = [
        "&>>", "<<<", "<<-", "&&", "||", "|&", ";;", ";&", ">>", ">&", ">|", "<<", "<&", "<>", "&>",
    ];
    let rest = &command[i..];
    let op = LONGER
        .into_iter()
        .find(|op| rest.starts_with(op))
        .unwrap_or(&rest[..1]);
    let mut text = String::new();
    let redirects = op.starts_with(['<', '>']);
    if let Some(fd) = before.filter(|w| {
        redirects
            && !w.quoted
            && w.end == i
            && !w.text.is_empty()
            && w.text.bytes().all(|b| b.is_ascii_digit())
    }) {
        text.push_str(&fd.text);
    }
    text.push_str(op);
    if redirects && op.ends_with('&') {
        let to = rest[op.len()..]
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len() - op.len());
        text.push_str(&rest[op.len()..op.len() + to]);
    }
    text
}

/// Why a command cannot be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// A quote is opened and never closed.
    #[error("unterminated {0} quote in the command")]
    Unterminated(&'static str),
    /// The command ends in a lone backslash.
    #[error("the command ends with a lone backslash")]
    TrailingBackslash,
}

/// Splits `command` into words as a POSIX shell would (without expansions).
pub fn split(command: &str) -> Result<Words, SplitError> {
    let mut words = Vec::new();
    let mut shell_syntax = None;
    let mut chars = command.char_indices().peekable();
    let mut current: Option<Word> = None;
    while let Some((i, c)) = chars.next() {
        fn word(current: &mut Option<Word>, i: usize) -> &mut Word {
            current.get_or_insert_with(|| Word {
                text: String::new(),
                start: i,
                end: i,
                quoted: false,
                expansions: Vec::new(),
                splits: false,
            })
        }
        match c {
            ' ' | '\t' | '\n' => {
                // A line break ends the command as `;` does: `sh -lc` runs the next line too.
                if c == '\n' {
                    shell_syntax.get_or_insert_with(|| c.to_string());
                }
                if let Some(w) = current.take() {
                    words.push(w);
                }
            }
            // A backslash-newline is removed before words are split: a continuation, which
            // neither starts a word nor ends one.
            '\\' if chars.peek().is_some_and(|&(_, n)| n == '\n') => {
                chars.next();
            }
            '\'' => {
                let w = word(&mut current, i);
                w.quoted = true;
                loop {
                    match chars.next() {
                        Some((j, '\'')) => {
                            w.end = j + 1;
                            break;
                        }
                        Some((_, c)) => w.text.push(c),
                        None => return Err(SplitError::Unterminated("single")),
                    }
                }
            }
            '"' => {
                let w = word(&mut current, i);
                w.quoted = true;
                loop {
                    match chars.next() {
                        Some((j, '"')) => {
                            w.end = j + 1;
                            break;
                        }
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c @ ('"' | '\\' | '$' | '`'))) => w.text.push(c),
                            Some((_, '\n')) => {}
                            Some((_, c)) => {
                                w.text.push('\\');
                                w.text.push(c);
                            }
                            None => return Err(SplitError::Unterminated("double")),
                        },
                        Some((_, c @ ('$' | '`'))) => {
                            shell_syntax.get_or_insert_with(|| c.to_string());
                            w.expansions.push(w.text.len());
                            w.text.push(c);
                        }
                        Some((_, c)) => w.text.push(c),
                        None => return Err(SplitError::Unterminated("double")),
                    }
                }
            }
            '\\' => {
                let w = word(&mut current, i);
                w.quoted = true;
                match chars.next() {
                    Some((j, c)) => {
                        w.text.push(c);
                        w.end = j + c.len_utf8();
                    }
                    None => return Err(SplitError::TrailingBackslash),
                }
            }
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '$' | '`' => {
                shell_syntax.get_or_insert_with(|| operator_at(command, i, current.as_ref()));
                if matches!(c, '$' | '`') {
                    let w = word(&mut current, i);
                    w.expansions.push(w.text.len());
                    w.splits = true;
                    w.text.push(c);
                    w.end = i + 1;
                } else if let Some(w) = current.take() {
                    words.push(w);
                }
            }
            c => {
                let w = word(&mut current, i);
                let after_dollar =
                    w.text.ends_with('$') && w.expansions.last() == Some(&(w.text.len() - 1));
                if matches!(c, '*' | '?' | '[')
                    || (c == '{' && !after_dollar && braces(&command[i..]))
                {
                    w.expansions.push(w.text.len());
                    w.splits = true;
                }
                w.text.push(c);
                w.end = i + c.len_utf8();
            }
        }
    }
    if let Some(w) = current.take() {
        words.push(w);
    }
    Ok(Words {
        words,
        shell_syntax,
    })
}

/// Whether the `{` that `rest` starts with opens a brace expansion (bash): a `}` closes it
/// in the same word, with a `,` or `..` between. Quotes in between are not looked at, so a
/// quoted comma counts too, which only makes more scripts unknown.
fn braces(rest: &str) -> bool {
    let word = rest
        .split([' ', '\t', '\n', ';', '|', '&', '<', '>', '(', ')'])
        .next()
        .unwrap_or_default();
    word.find('}')
        .is_some_and(|end| word[..end].contains(',') || word[..end].contains(".."))
}

/// How to run the script `path` with an interpreter, for a fix: `node scripts/main.js`
/// for a `.js` file, `python3 x.py`, `sh x.sh`; `INTERPRETER x` when its extension does
/// not tell.
pub fn with_interpreter(path: &str) -> String {
    let ext = path.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    let interpreter = match ext {
        "js" | "mjs" | "cjs" => "node",
        "py" => "python3",
        "sh" => "sh",
        "bash" => "bash",
        "rb" => "ruby",
        _ => "INTERPRETER",
    };
    format!("{interpreter} {path}")
}

/// What a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A script file, run by `interpreter` or directly.
    Script {
        /// The interpreter word, if the command's first word is one of [`INTERPRETERS`]
        /// (a path to one, `/usr/bin/node`, is the script itself).
        interpreter: Option<String>,
        /// Index into [`Words::words`] of the script path.
        word: usize,
        /// The script path as written.
        path: String,
        /// The first interpreter flag before the script that loads other code (`node -r
        /// X`, `ruby -rX`), by its name: code the script's hash does not cover.
        loads: Option<&'static str>,
        /// Directories the interpreter changes to, in order, before it resolves `path`
        /// (`ruby -C DIR`, `bun --cwd DIR`), each with the flag that names it.
        chdir: Vec<(&'static str, String)>,
    },
    /// Code given inline (`node -e …`, `bash -c …`) or read from stdin (`bash -s`): there
    /// is no script file.
    Inline {
        /// The flag (or subcommand, deno's `eval`) that gives the code.
        flag: &'static str,
    },
    /// A module found on the interpreter's search path (`python3 -m NAME`), not a file.
    Module {
        /// The flag that names it.
        flag: &'static str,
    },
    /// An interpreter with no script argument, or an empty command.
    Nothing,
}

/// How an interpreter reads the flags before its script. Flags are named as written,
/// `-x` or `--long`; a flag in no list takes no value (or only an attached `=value`).
struct Flags {
    /// Short flags group getopt style: `-uc CODE` is `-u -c CODE`, `-Wignore` is `-W ignore`.
    grouped: bool,
    /// Words starting with `+` are flags too (`bash +o posix`).
    plus: bool,
    /// Subcommands that may come first: `run` is skipped, `eval` is inline code.
    subcommands: bool,
    /// A long flag's name (before any `=`) is read with `_` as `-`: node takes
    /// `--disable_warning` for `--disable-warning`.
    underscores: bool,
    /// The value is code to run: there is no script file.
    inline: &'static [&'static str],
    /// The value is a module to run instead of a script.
    module: &'static [&'static str],
    /// The value is code (or a file that can bring code in) loaded before the script.
    loads: &'static [&'static str],
    /// The value is a directory the interpreter changes to before it resolves the script.
    chdir: &'static [&'static str],
    /// Other flags whose value may be the next word.
    value: &'static [&'static str],
    /// Flags without a value that run files besides the script.
    runs: &'static [&'static str],
    /// Short flags whose optional value is the rest of their word, never the next word.
    attached: &'static [&'static str],
}

const NODE: Flags = Flags {
    grouped: false,
    plus: false,
    subcommands: false,
    underscores: true,
    inline: &["-e", "--eval", "-p", "--print", "-pe"],
    module: &[],
    // `--env-file` counts: a NODE_OPTIONS line in it is applied, `--require` included.
    loads: &[
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "--env-file",
        "--env-file-if-exists",
        // Node runs the snapshot's main function, or the config's `builder`, not the script.
        "--snapshot-blob",
        "--build-snapshot-config",
        // A test reporter is a module node loads; an OpenSSL config can load engines and
        // providers (shared libraries).
        "--test-reporter",
        "--openssl-config",
    ],
    chdir: &[],
    // `--tsconfig` is tsx's (which takes node's flags too; node refuses it, so listing it
    // is harmless).
    // Node 20's long options that take a value (string, list, number or host:port in its
    // option table, `internalBinding('options')`), each also read as `--flag=value`; V8's
    // own options never take the next word (node refuses `--stack-trace-limit 5`, so listing
    // that one is harmless). `--test-skip-pattern` is node 22's.
    value: &[
        "--tsconfig",
        "-C",
        "--conditions",
        "--title",
        "--input-type",
        "--inspect-port",
        "--debug-port",
        "--inspect-publish-uid",
        "--icu-data-dir",
        "--redirect-warnings",
        "--report-dir",
        "--report-directory",
        "--report-filename",
        "--report-signal",
        "--diagnostic-dir",
        "--cpu-prof-dir",
        "--cpu-prof-name",
        "--cpu-prof-interval",
        "--heap-prof-dir",
        "--heap-prof-name",
        "--heap-prof-interval",
        "--heapsnapshot-near-heap-limit",
        "--heapsnapshot-signal",
        "--disable-warning",
        "--disable-proto",
        "--watch-path",
        "--unhandled-rejections",
        "--dns-result-order",
        "--network-family-autoselection-attempt-timeout",
        "--experimental-default-type",
        "--experimental-policy",
        "--policy-integrity",
        "--experimental-sea-config",
        "--allow-fs-read",
        "--allow-fs-write",
        "--security-revert",
        "--security-reverts",
        "--secure-heap",
        "--secure-heap-min",
        "--max-http-header-size",
        "--tls-cipher-list",
        "--tls-keylog",
        "--use-largepages",
        "--v8-pool-size",
        "--trace-event-categories",
        "--trace-event-file-pattern",
        "--trace-require-module",
        "--stack-trace-limit",
        "--test-reporter-destination",
        "--test-name-pattern",
        "--test-skip-pattern",
        "--test-shard",
        "--test-concurrency",
        "--test-timeout",
    ],
    // `--test` runs every file named (the script's arguments too) and, with none, every
    // test file it finds. The inspector lets whoever connects run code (`--inspect-brk`
    // also waits for them); `=host:port` may follow each.
    runs: &[
        "--test",
        "--inspect",
        "--inspect-brk",
        "--inspect-brk-node",
        "--inspect-wait",
        "--debug",
        "--debug-brk",
    ],
    attached: &[],
};

const PYTHON: Flags = Flags {
    grouped: true,
    plus: false,
    subcommands: false,
    underscores: false,
    inline: &["-c"],
    module: &["-m"],
    loads: &[],
    chdir: &[],
    value: &["-W", "-X", "--check-hash-based-pycs"],
    // `-i` runs what stdin (the hook's payload) holds as code once the script is done.
    runs: &["-i"],
    attached: &[],
};

const SHELL: Flags = Flags {
    grouped: true,
    plus: true,
    subcommands: false,
    underscores: false,
    // `-s` reads the commands from stdin (the hook's payload): the words after it are
    // arguments.
    inline: &["-c", "-s"],
    module: &[],
    loads: &["--rcfile", "--init-file"],
    chdir: &[],
    value: &["-o", "-O"],
    runs: &[],
    attached: &[],
};

const RUBY: Flags = Flags {
    grouped: true,
    plus: false,
    subcommands: false,
    underscores: false,
    inline: &["-e"],
    module: &[],
    loads: &["-r"],
    // `-X DIR` is `-C DIR`'s synonym, and `-xDIR` also changes to DIR first.
    chdir: &["-C", "-X", "-x"],
    value: &[
        "-I",
        "-E",
        "--encoding",
        "--external-encoding",
        "--internal-encoding",
        "--enable",
        "--disable",
    ],
    // `-S` looks the script up on PATH: another file than the one named may run.
    runs: &["-S"],
    attached: &["-0", "-F", "-i", "-K", "-T", "-W", "-x"],
};

const PERL: Flags = Flags {
    grouped: true,
    plus: false,
    subcommands: false,
    underscores: false,
    inline: &["-e", "-E"],
    module: &[],
    // `-d`, `-dt`, `-d:NAME` load perl5db.pl or Devel::NAME (its value is attached).
    loads: &["-M", "-m", "-d"],
    chdir: &[],
    value: &["-I"],
    // `-S` looks the script up on PATH: another file than the one named may run.
    runs: &["-S"],
    attached: &["-0", "-C", "-d", "-D", "-F", "-i", "-l", "-V", "-x"],
};

const DENO: Flags = Flags {
    grouped: false,
    plus: false,
    subcommands: true,
    underscores: false,
    inline: &[],
    module: &[],
    loads: &["--preload", "--require"],
    chdir: &[],
    value: &[
        "-c",
        "--config",
        "--import-map",
        "--cert",
        "--location",
        "--seed",
        "--ext",
    ],
    runs: &[],
    attached: &[],
};

const BUN: Flags = Flags {
    grouped: false,
    plus: false,
    subcommands: true,
    underscores: false,
    inline: &["-e", "--eval", "-p", "--print"],
    module: &[],
    loads: &["-r", "--preload", "--require", "--import"],
    chdir: &["--cwd"],
    value: &[
        "-c",
        "--config",
        "--env-file",
        "--tsconfig-override",
        "--conditions",
        "--port",
        "-d",
        "--define",
        "-l",
        "--loader",
        "--main-fields",
        "--extension-order",
    ],
    runs: &[],
    attached: &[],
};

const TS_NODE: Flags = Flags {
    grouped: false,
    plus: false,
    subcommands: false,
    underscores: false,
    // `-i` reads code from stdin (the hook's payload).
    inline: &["-e", "--eval", "-p", "--print", "-i", "--interactive"],
    module: &[],
    // A compiler or transpiler module is loaded in place of TypeScript's.
    loads: &["-r", "--require", "-C", "--compiler", "--transpiler"],
    // The script is resolved from `--cwd` (`--dir` is its older name).
    chdir: &["--cwd", "--dir"],
    value: &[
        "-P",
        "--project",
        "-O",
        "--compiler-options",
        "-D",
        "--ignore-diagnostics",
        "-I",
        "--ignore",
        "--scope-dir",
        "--project-search-dir",
    ],
    runs: &[],
    attached: &[],
};

const PHP: Flags = Flags {
    grouped: false,
    plus: false,
    subcommands: false,
    underscores: false,
    // `-a` reads code from stdin (the hook's payload); `-B`, `-R` and `-E` run code given
    // inline. `-f FILE` and `-F FILE` name the script: taken as flags without a value, the
    // word after them is the script.
    inline: &[
        "-r",
        "--run",
        "-a",
        "--interactive",
        "-B",
        "--process-begin",
        "-R",
        "--process-code",
        "-E",
        "--process-end",
    ],
    module: &[],
    // An ini setting (`-d auto_prepend_file=…`), an ini file or a Zend extension loads
    // code before the script.
    loads: &[
        "-d",
        "--define",
        "-c",
        "--php-ini",
        "-z",
        "--zend-extension",
    ],
    chdir: &[],
    value: &["-t", "--docroot", "-S", "--server"],
    runs: &[],
    attached: &[],
};

/// The flags of the interpreters a recipe may name ([`INTERPRETERS`]).
fn flags_of(interpreter: &str) -> Option<&'static Flags> {
    Some(match interpreter {
        "node" => &NODE,
        "python3" | "python" => &PYTHON,
        "bash" | "sh" => &SHELL,
        "ruby" => &RUBY,
        "perl" => &PERL,
        "deno" => &DENO,
        "bun" => &BUN,
        _ => return None,
    })
}

/// The flags of the interpreters a host's handler may run its script with: those of
/// [`flags_of`], a version after the name or not (`python3.11`, `node20`), and `nodejs`,
/// `tsx`, `ts-node`, `php` and the other POSIX shells.
fn host_flags_of(interpreter: &str) -> Option<&'static Flags> {
    Some(match interpreter {
        "nodejs" | "tsx" => &NODE,
        "ts-node" => &TS_NODE,
        "php" => &PHP,
        "dash" | "ash" | "ksh" | "mksh" | "zsh" | "yash" | "posh" => &SHELL,
        _ => {
            return flags_of(interpreter)
                .or_else(|| unversioned(interpreter).and_then(host_flags_of))
        }
    })
}

/// What one flag word does.
enum Flag<'a> {
    /// Takes no value from the next word and changes nothing about what runs.
    Plain,
    /// Code given inline or read from stdin: there is no script file.
    Inline(&'static str),
    /// A module to run instead of a script.
    Module(&'static str),
    /// A flag that takes a value, or loads code, or changes directory.
    Other {
        /// The next word is its value.
        next: bool,
        /// The value attached to the word (`--cwd=dir`, `-Cdir`), if any.
        attached: Option<&'a str>,
        /// What the flag does to what runs.
        effect: Effect,
    },
}

/// What a flag does besides setting an option, named by the flag as listed.
#[derive(Clone, Copy)]
enum Effect {
    None,
    /// Loads or runs code besides the script.
    Loads(&'static str),
    /// Changes directory (to its value) before the script path is resolved.
    Chdir(&'static str),
}

impl Flags {
    /// Classifies the flag `name`; `next` tells whether its value (if it takes one) is the
    /// next word, `attached` what is attached to the word instead.
    fn lookup<'a>(&self, name: &str, next: bool, attached: Option<&'a str>) -> Flag<'a> {
        let find = |list: &'static [&'static str]| list.iter().copied().find(|f| *f == name);
        let value = |effect| Flag::Other {
            next,
            attached,
            effect,
        };
        if let Some(f) = find(self.inline) {
            Flag::Inline(f)
        } else if let Some(f) = find(self.module) {
            Flag::Module(f)
        } else if let Some(f) = find(self.loads) {
            value(Effect::Loads(f))
        } else if let Some(f) = find(self.chdir) {
            value(Effect::Chdir(f))
        } else if find(self.value).is_some() {
            value(Effect::None)
        } else if let Some(f) = find(self.runs) {
            Flag::Other {
                next: false,
                attached: None,
                effect: Effect::Loads(f),
            }
        } else {
            Flag::Plain
        }
    }

    /// Classifies a flag word: `--name[=value]`, `-x`, or a getopt group `-abc`.
    fn flag<'a>(&self, word: &'a str) -> Flag<'a> {
        if word.starts_with("--") || !self.grouped {
            let (name, next, attached) = match word.split_once('=') {
                Some((name, value)) => (name, false, Some(value)),
                None => (word, true, None),
            };
            return if self.underscores && word.starts_with("--") && name.contains('_') {
                self.lookup(&name.replace('_', "-"), next, attached)
            } else {
                self.lookup(name, next, attached)
            };
        }
        let body = &word[1..];
        let mut runs = None;
        for (k, c) in body.char_indices() {
            let name = format!("-{c}");
            let rest = &body[k + c.len_utf8()..];
            let attached = (!rest.is_empty()).then_some(rest);
            if self.attached.contains(&name.as_str()) {
                // The rest of the word is its value; it may still load code (`perl -d:X`),
                // or name a directory to change to (`ruby -xdir`).
                return match self.lookup(&name, false, attached) {
                    loads @ Flag::Other {
                        effect: Effect::Loads(_),
                        ..
                    } => loads,
                    chdir @ Flag::Other {
                        effect: Effect::Chdir(_),
                        attached: Some(_),
                        ..
                    } => chdir,
                    _ => Flag::Plain,
                };
            }
            // A flag that runs other code (`-i`) leaves the rest of the group to be read:
            // `-ic CODE` is still inline code, and `-iW ignore` still takes a value.
            match self.lookup(&name, rest.is_empty(), attached) {
                Flag::Plain => {}
                Flag::Other {
                    effect: effect @ Effect::Loads(_),
                    ..
                } if self.runs.contains(&name.as_str()) => {
                    runs.get_or_insert(effect);
                }
                Flag::Other {
                    next,
                    attached,
                    effect: Effect::None,
                } if runs.is_some() => {
                    return Flag::Other {
                        next,
                        attached,
                        effect: runs.unwrap_or(Effect::None),
                    };
                }
                other => return other,
            }
        }
        match runs {
            Some(effect) => Flag::Other {
                next: false,
                attached: None,
                effect,
            },
            None => Flag::Plain,
        }
    }
}

/// Finds the script a split command runs: after an optional interpreter and its flags (and
/// the `run` subcommand of `deno` and `bun`), the first word. A flag's value is never the
/// script: flags that take one skip it. Interpreters are the [`INTERPRETERS`] recipes may
/// name.
pub fn target(words: &Words) -> Target {
    target_with(words, flags_of)
}

/// [`target`] of a command a host runs (a `hooks.json` handler's): a version after an
/// interpreter's name (`python3.11`, `node20`), `nodejs`, `tsx`, `ts-node`, `php` and the
/// other POSIX shells (`dash`, `ksh`, `zsh`, …) are read as interpreters too, so the trust
/// hash covers `dash x.sh`'s `x.sh`.
pub fn host_target(words: &Words) -> Target {
    target_with(words, host_flags_of)
}

fn target_with(words: &Words, flags_of: fn(&str) -> Option<&'static Flags>) -> Target {
    let w = &words.words;
    let Some(first) = w.first() else {
        return Target::Nothing;
    };
    // Only a bare name, looked up on the host's PATH, is an interpreter. `bin/node` is
    // found from the working directory and `/tmp/x/python3` can be any program: either is
    // the file the command runs, so it is the script, held to the script rules.
    let Some(flags) = flags_of(&first.text) else {
        return Target::Script {
            interpreter: None,
            word: 0,
            path: first.text.clone(),
            loads: None,
            chdir: Vec::new(),
        };
    };
    let mut i = 1;
    if flags.subcommands {
        match w.get(1).map(|x| x.text.as_str()) {
            Some("run") => i = 2,
            Some("eval") => return Target::Inline { flag: "eval" },
            _ => {}
        }
    }
    let mut loads = None;
    let mut chdir = Vec::new();
    while let Some(word) = w.get(i) {
        let t = word.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        let is_flag = (t.starts_with('-') || (flags.plus && t.starts_with('+'))) && t.len() > 1;
        if !is_flag {
            break;
        }
        i += 1;
        match flags.flag(t) {
            Flag::Plain => {}
            Flag::Inline(flag) => return Target::Inline { flag },
            Flag::Module(flag) => return Target::Module { flag },
            Flag::Other {
                next,
                attached,
                effect,
            } => {
                let value = if next {
                    i += 1;
                    w.get(i - 1).map(|v| v.text.as_str())
                } else {
                    attached
                };
                match effect {
                    Effect::None => {}
                    // `-S` (the script is looked up on PATH) is named first: with it,
                    // the script named is not the file that runs.
                    Effect::Loads(flag) if flag == "-S" => loads = Some(flag),
                    Effect::Loads(flag) => loads = loads.or(Some(flag)),
                    Effect::Chdir(flag) => {
                        if let Some(dir) = value {
                            chdir.push((flag, dir.to_string()));
                        }
                    }
                }
            }
        }
    }
    match w.get(i) {
        Some(word) if word.text != "-" => Target::Script {
            interpreter: Some(first.text.clone()),
            word: i,
            path: word.text.clone(),
            loads,
            chdir,
        },
        _ => Target::Nothing,
    }
}

/// Replaces word `index` of `command` (as split by [`split`]) with `replacement`, which is
/// inserted as is (quote it first with [`shell_quote`] or [`shell_quote_expanding`]).
pub fn replace_word(command: &str, words: &Words, index: usize, replacement: &str) -> String {
    let w = &words.words[index];
    format!(
        "{}{}{}",
        &command[..w.start],
        replacement,
        &command[w.end..]
    )
}

/// Quotes `s` for a POSIX shell inside double quotes, leaving `${NAME}` references to be
/// expanded: `${FINCLAW_PROFILE_ROOT}/hooks/x/main.js` → `"${FINCLAW_PROFILE_ROOT}/hooks/x/main.js"`.
pub fn shell_quote_expanding(s: &str) -> String {
    let mut out = String::from("\"");
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("${") {
            if let Some(end) = after.find('}') {
                let name = &after[..end];
                if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    out.push_str("${");
                    out.push_str(name);
                    out.push('}');
                    rest = &after[end + 1..];
                    continue;
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.push('"');
    out
}

/// Quotes `s` for a POSIX shell so that it is read back as one word, unchanged.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(c: &str) -> Vec<String> {
        split(c)
            .unwrap()
            .words
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(texts("node scripts/main.js"), ["node", "scripts/main.js"]);
        assert_eq!(
            texts(r#"node "my dir/x.js" --flag"#),
            ["node", "my dir/x.js", "--flag"]
        );
        assert_eq!(texts(r"node my\ dir/x.js"), ["node", "my dir/x.js"]);
        assert_eq!(texts("node 'a'\"b\"c"), ["node", "abc"]);
        assert_eq!(texts("  a\t b  "), ["a", "b"]);
        assert_eq!(texts(r#"x "a\"b\\c\d""#), ["x", r#"a"b\c\d"#]);
        assert!(matches!(
            split("node 'x"),
            Err(SplitError::Unterminated("single"))
        ));
        assert!(matches!(
            split("node \"x"),
            Err(SplitError::Unterminated("double"))
        ));
        assert!(matches!(
            split("node x\\"),
            Err(SplitError::TrailingBackslash)
        ));
    }

    #[test]
    fn notices_shell_syntax() {
        assert_eq!(
            split("node a.js | tee log")
                .unwrap()
                .shell_syntax
                .as_deref(),
            Some("|")
        );
        assert_eq!(
            split("node $HOME/a.js").unwrap().shell_syntax.as_deref(),
            Some("$")
        );
        // Named as written: the whole operator, with the descriptors a redirection names.
        for (command, syntax) in [
            ("node a.js && b", "&&"),
            ("node a.js&&b", "&&"),
            ("node a.js 2>&1", "2>&1"),
            ("node a.js 2>&- x", "2>&-"),
            ("node a.js >&2", ">&2"),
            ("node a.js '2'>x", ">"),
            ("node a.js 10>x", "10>"),
            ("node a.js <<<x", "<<<"),
            ("(node a.js)", "("),
        ] {
            assert_eq!(
                split(command).unwrap().shell_syntax.as_deref(),
                Some(syntax),
                "{command}"
            );
        }
        assert_eq!(split("node 'a;b.js'").unwrap().shell_syntax, None);
    }

    #[test]
    fn an_unquoted_line_break_is_shell_syntax() {
        // `sh -lc` runs each line as its own command, exactly as after `;`.
        let w = split("node scripts/main.js\ntouch /tmp/PWNED").unwrap();
        assert_eq!(w.shell_syntax.as_deref(), Some("\n"));
        assert_eq!(texts("node a.js\nb"), ["node", "a.js", "b"]);
        assert_eq!(describe("\n"), "`\\n`, a line break");
        assert_eq!(describe(";"), "`;`");
        assert_eq!(describe("&&"), "`&&`");
        // Inside quotes it is part of the word; after a backslash it is a continuation.
        for quoted in ["node 'a\nb.js'", "node \"a\nb.js\"", "node a.js 'x\ny'"] {
            assert_eq!(split(quoted).unwrap().shell_syntax, None, "{quoted:?}");
        }
        let w = split("node \\\nscripts/main.js \\\n").unwrap();
        assert_eq!(w.shell_syntax, None);
        assert_eq!(
            texts("node \\\nscripts/main.js \\\n"),
            ["node", "scripts/main.js"]
        );
        assert_eq!(
            texts("node scripts/\\\nmain.js"),
            ["node", "scripts/main.js"]
        );
    }

    #[test]
    fn finds_the_script() {
        let t = |c: &str| target(&split(c).unwrap());
        let script = |interp: Option<&str>, word, path: &str| Target::Script {
            interpreter: interp.map(String::from),
            word,
            path: path.into(),
            loads: None,
            chdir: Vec::new(),
        };
        assert_eq!(
            t("node scripts/main.js"),
            script(Some("node"), 1, "scripts/main.js")
        );
        assert_eq!(
            t("node --no-warnings scripts/main.js a"),
            script(Some("node"), 2, "scripts/main.js")
        );
        // Only a bare name is an interpreter: a path to one is the program the command
        // runs, so it is the script (found from the working directory, or outside the
        // recipe), and the words after it are its arguments.
        assert_eq!(
            t("/usr/bin/python3 -u x.py"),
            script(None, 0, "/usr/bin/python3")
        );
        assert_eq!(t("bin/node scripts/main.js"), script(None, 0, "bin/node"));
        assert_eq!(t("./node scripts/main.js"), script(None, 0, "./node"));
        assert_eq!(
            t("/usr/bin/env node scripts/main.js"),
            script(None, 0, "/usr/bin/env")
        );
        assert_eq!(
            t("'node' scripts/main.js"),
            script(Some("node"), 1, "scripts/main.js")
        );
        assert_eq!(
            t("deno run --allow-read x.ts"),
            script(Some("deno"), 3, "x.ts")
        );
        assert_eq!(
            t("scripts/run.sh --fast"),
            script(None, 0, "scripts/run.sh")
        );
        assert_eq!(t("node -e 'console.log(1)'"), Target::Inline { flag: "-e" });
        assert_eq!(t("bash -c 'echo hi'"), Target::Inline { flag: "-c" });
        assert_eq!(t("node"), Target::Nothing);
        assert_eq!(t(""), Target::Nothing);
    }

    #[test]
    fn a_flag_value_is_never_the_script() {
        let t = |c: &str| target(&split(c).unwrap());
        let at = |c: &str| match t(c) {
            Target::Script {
                word, path, loads, ..
            } => (word, path, loads),
            other => panic!("{c}: {other:?}"),
        };
        let s = |word, path: &str, loads: Option<&'static str>| (word, path.to_string(), loads);
        // Flags that load other code: their value is consumed, and the flag is named.
        for (c, word, flag) in [
            ("node -r ./scripts/evil.js scripts/main.js", 3, "-r"),
            ("node --require ./x.js scripts/main.js", 3, "--require"),
            ("node --require=./x.js scripts/main.js", 2, "--require"),
            ("node --import ./x.js scripts/main.js", 3, "--import"),
            ("node --import=./x.js scripts/main.js", 2, "--import"),
            ("node --loader ./x.js scripts/main.js", 3, "--loader"),
            (
                "node --experimental-loader ./x.js scripts/main.js",
                3,
                "--experimental-loader",
            ),
            (
                "node --experimental-loader=./x.js scripts/main.js",
                2,
                "--experimental-loader",
            ),
            ("node --env-file .env scripts/main.js", 3, "--env-file"),
            // Node 20 runs the blob's main function, or the config's builder, instead.
            (
                "node --snapshot-blob x.blob scripts/main.js",
                3,
                "--snapshot-blob",
            ),
            (
                "node --build-snapshot-config=x.json scripts/main.js",
                2,
                "--build-snapshot-config",
            ),
            ("ruby -r ./x.rb scripts/main.js", 3, "-r"),
            ("ruby -rjson scripts/main.js", 2, "-r"),
            ("ruby -wrjson scripts/main.js", 2, "-r"),
            ("perl -Mstrict scripts/main.js", 2, "-M"),
            ("bun --preload ./x.ts scripts/main.js", 3, "--preload"),
            ("bun run -r ./x.ts scripts/main.js", 4, "-r"),
            // A test reporter is a module node loads; `--test` runs every file named (and,
            // with none, every test file it finds); an OpenSSL config can load engines.
            (
                "node --test-reporter ./x.js scripts/main.js",
                3,
                "--test-reporter",
            ),
            (
                "node --test-reporter=./x.js scripts/main.js",
                2,
                "--test-reporter",
            ),
            (
                "node --test_reporter ./x.js scripts/main.js",
                3,
                "--test-reporter",
            ),
            ("node --test scripts/main.js", 2, "--test"),
            (
                "node --openssl-config x.cnf scripts/main.js",
                3,
                "--openssl-config",
            ),
            // Perl's debugger flag loads perl5db.pl or Devel::NAME; its value is attached.
            ("perl -d scripts/main.js", 2, "-d"),
            ("perl -dt scripts/main.js", 2, "-d"),
            ("perl -d:Evil scripts/main.js", 2, "-d"),
            ("perl -dt:Evil=a,b scripts/main.js", 2, "-d"),
            ("perl -wd:Evil scripts/main.js", 2, "-d"),
            ("bash --rcfile x.sh scripts/main.js", 3, "--rcfile"),
            ("sh --init-file x.sh scripts/main.js", 3, "--init-file"),
        ] {
            assert_eq!(at(c), s(word, "scripts/main.js", Some(flag)), "{c}");
        }
        // Other flags that take a value: the value is skipped.
        for (c, word) in [
            ("node --title gate scripts/main.js", 3),
            ("node --title=gate scripts/main.js", 2),
            ("node -C custom --no-warnings scripts/main.js", 4),
            ("python3 -W ignore scripts/main.js", 3),
            ("python3 -Wignore scripts/main.js", 2),
            ("python3 -uW ignore scripts/main.js", 3),
            ("python3 -X dev -u scripts/main.js", 4),
            ("ruby -I lib scripts/main.js", 3),
            ("perl -I lib -w scripts/main.js", 4),
            ("perl -D1 -l scripts/main.js", 3),
            ("perl -0777 scripts/main.js", 2),
            ("bash -o pipefail scripts/main.js", 3),
            ("bash -eo pipefail scripts/main.js", 3),
            ("bash +o posix scripts/main.js", 3),
            ("deno run -c deno.json --allow-read scripts/main.js", 5),
            ("deno run --allow-read=. scripts/main.js", 3),
        ] {
            assert_eq!(at(c), s(word, "scripts/main.js", None), "{c}");
        }
        // A module is not a script file; code given inline, even in a group of flags.
        assert_eq!(t("python3 -m http.server"), Target::Module { flag: "-m" });
        assert_eq!(t("python3 -um http.server"), Target::Module { flag: "-m" });
        assert_eq!(t("python3 -mhttp.server"), Target::Module { flag: "-m" });
        for (c, flag) in [
            ("python3 -uc 'print(1)'", "-c"),
            ("bash -ec 'echo hi'", "-c"),
            ("perl -ne 'print'", "-e"),
            ("node --eval=1", "--eval"),
            ("node -pe 1", "-pe"),
            ("deno eval 1", "eval"),
            // `-s` reads the commands from stdin (the hook's payload); the words after it
            // are arguments, not a script.
            ("bash -s scripts/main.sh", "-s"),
            ("sh -es scripts/main.sh", "-s"),
        ] {
            assert_eq!(t(c), Target::Inline { flag }, "{c}");
        }
    }

    /// `ruby -C DIR` and `bun --cwd DIR` change directory before the script path is
    /// resolved: the script is found from there, and the flags are named.
    #[test]
    fn flags_that_change_directory_are_kept() {
        let t = |c: &str| target(&split(c).unwrap());
        for (c, word, chdir) in [
            ("ruby -C sub scripts/main.rb", 3, vec![("-C", "sub")]),
            ("ruby -Csub scripts/main.rb", 2, vec![("-C", "sub")]),
            ("ruby -wC sub scripts/main.rb", 3, vec![("-C", "sub")]),
            (
                "ruby -C a -C b scripts/main.rb",
                5,
                vec![("-C", "a"), ("-C", "b")],
            ),
            ("bun --cwd sub scripts/main.js", 3, vec![("--cwd", "sub")]),
            (
                "bun run --cwd=sub scripts/main.js",
                3,
                vec![("--cwd", "sub")],
            ),
            ("node -C sub scripts/main.js", 3, vec![]),
        ] {
            let Target::Script {
                word: w,
                path,
                chdir: got,
                ..
            } = t(c)
            else {
                panic!("{c}")
            };
            let got: Vec<(&str, &str)> = got.iter().map(|(f, d)| (*f, d.as_str())).collect();
            assert_eq!((w, got), (word, chdir), "{c}");
            assert!(path.starts_with("scripts/main."), "{c}");
        }
    }

    /// Node 20 reads `--foo_bar` as `--foo-bar` (the name before any `=`), so a flag spelt
    /// with underscores takes its value and loads code just as the dashed one does.
    #[test]
    fn node_reads_underscores_in_long_flags_as_dashes() {
        let t = |c: &str| target(&split(c).unwrap());
        let at = |c: &str| match t(c) {
            Target::Script {
                word, path, loads, ..
            } => (word, path, loads),
            other => panic!("{c}: {other:?}"),
        };
        // `node --disable_warning main.js evil.js` runs evil.js.
        assert_eq!(
            at("node --disable_warning main.js evil.js"),
            (3, "evil.js".to_string(), None)
        );
        assert_eq!(
            at("node --disable_warning=x main.js evil.js"),
            (2, "main.js".to_string(), None)
        );
        for (c, word, flag) in [
            (
                "node --experimental_loader ./scripts/evil.js scripts/main.js",
                3,
                "--experimental-loader",
            ),
            (
                "node --env_file scripts/evil.js scripts/main.js",
                3,
                "--env-file",
            ),
            (
                "node --env_file_if_exists=scripts/evil.js scripts/main.js",
                2,
                "--env-file-if-exists",
            ),
        ] {
            assert_eq!(
                at(c),
                (word, "scripts/main.js".to_string(), Some(flag)),
                "{c}"
            );
        }
        // A long flag node takes no value for stays plain; other interpreters are left alone.
        assert_eq!(
            at("node --no_warnings scripts/main.js"),
            (2, "scripts/main.js".to_string(), None)
        );
        assert_eq!(
            at("deno run --allow_read scripts/main.js"),
            (3, "scripts/main.js".to_string(), None)
        );
    }

    /// Every Node 20 long option that takes a value (string, list, number or host:port in
    /// node's own option table) skips the next word, as node does.
    #[test]
    fn every_node_value_option_skips_its_value() {
        for flag in [
            "--allow-fs-read",
            "--allow-fs-write",
            "--disable-proto",
            "--experimental-default-type",
            "--experimental-sea-config",
            "--heapsnapshot-near-heap-limit",
            "--heapsnapshot-signal",
            "--inspect-publish-uid",
            "--network-family-autoselection-attempt-timeout",
            "--security-revert",
            "--security-reverts",
            "--test-shard",
            "--trace-require-module",
            "--v8-pool-size",
        ] {
            let c = format!("node {flag} v scripts/main.js");
            match target(&split(&c).unwrap()) {
                Target::Script { word, path, .. } => {
                    assert_eq!((word, path.as_str()), (3, "scripts/main.js"), "{c}")
                }
                other => panic!("{c}: {other:?}"),
            }
        }
    }

    #[test]
    fn replaces_the_script_word() {
        let cmd = "node  --no-warnings 'scripts/main.js' --flag";
        let words = split(cmd).unwrap();
        let Target::Script { word, .. } = target(&words) else {
            panic!()
        };
        assert_eq!(
            replace_word(cmd, &words, word, "/abs/x.js"),
            "node  --no-warnings /abs/x.js --flag"
        );
        let q = shell_quote_expanding("${FINCLAW_PROFILE_ROOT}/hooks/it's \"x\"/$HOME.js");
        assert_eq!(q, r#""${FINCLAW_PROFILE_ROOT}/hooks/it's \"x\"/\$HOME.js""#);
    }

    #[test]
    fn quoting_round_trips() {
        for s in [
            "plain/path.js",
            "with space",
            "it's",
            "",
            "$HOME",
            "a\"b",
            "${FINCLAW_PROFILE_ROOT}",
        ] {
            let quoted = shell_quote(s);
            assert_eq!(texts(&format!("x {quoted}")), ["x", s], "{s} -> {quoted}");
        }
    }
}
