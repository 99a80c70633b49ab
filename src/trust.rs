//! Trust: a host runs a handler only while the hash it was trusted with still matches.
//!
//! The hash covers what decides the handler's behaviour: its event, matcher, command,
//! effective timeout, `async`, `failurePolicy` when set, `stop:v1` on Stop, and the bytes of
//! the script the command runs (resolved as the host would: interpreter and flags skipped,
//! shell words, `${FINCLAW_PROFILE_ROOT}` expanded). Editing the script or any of those
//! fields flips the handler to `modified`. Entries are keyed by source file + event +
//! handler id, not by position, so adding a handler elsewhere re-prompts nothing.
//!
//! Canonical encoding (so another host can reproduce it): the SHA-256, in lowercase hex, of
//! the compact JSON object with keys sorted bytewise and no insignificant whitespace
//! (`json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` in Python):
//! `{"async": bool, "command": str, "event": str, "failurePolicy": str (only when set),
//! "matcher": str or null, "script": str or null, "stop": "stop:v1" (only on Stop),
//! "timeout": int, "v": 1}` where `script` is the lowercase hex SHA-256 of the script file's
//! bytes, or null when the command runs no script file.

use crate::command::{self, Target};
use crate::error::Error;
use crate::event::Event;
use crate::hooks_json::DEFAULT_TIMEOUT;
use crate::sha256::Sha256;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The trust file schema string.
pub const SCHEMA: &str = "hookpack.trust.v1";

/// The largest trust file hookpack reads, and so the largest it writes; also the largest
/// handler script it hashes (a bigger one, say a sparse file of 20 GB, would hold up every
/// `list`, `run` and `doctor` while it is read, and is never trusted).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What the hash covers, read from a handler as written.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    /// Event name.
    pub event: &'a str,
    /// Matcher, if any.
    pub matcher: Option<&'a str>,
    /// The handler object.
    pub handler: &'a Value,
}

/// Where a command's script is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "path")]
pub enum Script {
    /// A file that exists.
    File(#[serde(serialize_with = "crate::output::path_text")] PathBuf),
    /// A path the command names that does not exist.
    Missing(#[serde(serialize_with = "crate::output::path_text")] PathBuf),
    /// A path holding a shell expansion hookpack does not make (`$PWD`, `$(…)`): only the
    /// shell knows the file, so it cannot be hashed. The path as written, quotes removed;
    /// or, when a word before it holds one (`-X *.py x.py`), the words from the first one
    /// after the interpreter to the script, as written in the command.
    Unresolved(String),
    /// The command runs no script file (inline code, a plain program).
    None,
}

/// What a host resolves paths against.
#[derive(Debug, Clone)]
pub struct Env {
    /// `FINCLAW_PROFILE_ROOT`.
    pub profile_root: PathBuf,
    /// The workspace: the handler's working directory.
    pub workspace: PathBuf,
}

/// `path` as the host resolves it from the folder `base`: `${FINCLAW_PROFILE_ROOT}` (and a
/// leading `$FINCLAW_PROFILE_ROOT`) replaced by the profile root where `expands` says the
/// shell expands the `$` at that byte offset (not in single quotes, not escaped), a leading
/// `~/` by `$HOME` when `tilde` (the shell expands only an unquoted one: `"~/x.sh"` is a
/// folder named `~`). Both are put in as the paths they are, not as text: a root that is
/// not UTF-8 would otherwise come out with U+FFFD for its bad bytes, naming a file that is
/// not there.
fn expand(
    path: &str,
    env: &Env,
    base: &Path,
    tilde: bool,
    expands: &dyn Fn(usize) -> bool,
) -> PathBuf {
    const ROOT: &str = "${FINCLAW_PROFILE_ROOT}";
    const ROOT_BARE: &str = "$FINCLAW_PROFILE_ROOT";
    let root = env.profile_root.as_os_str();
    let bare = path.strip_prefix(ROOT_BARE).filter(|_| expands(0));
    let (mut p, rest) = if let Some(rest) = bare {
        (root.to_os_string(), rest)
    } else if let (Some(rest), Some(mut home), true) = (
        path.strip_prefix("~/"),
        // As the shell takes it: `$HOME` as set (even empty), else the user database's.
        std::env::var_os("HOME").or_else(|| std::env::home_dir().map(PathBuf::into_os_string)),
        tilde,
    ) {
        home.push("/");
        (home, rest)
    } else {
        (OsString::new(), path)
    };
    let mut at = path.len() - rest.len();
    for (i, part) in rest.split(ROOT).enumerate() {
        if i > 0 {
            if expands(at) {
                p.push(root);
            } else {
                p.push(ROOT);
            }
            at += ROOT.len();
        }
        p.push(part);
        at += part.len();
    }
    let pb = PathBuf::from(p);
    if pb.is_absolute() {
        pb
    } else {
        base.join(pb)
    }
}

/// Whether the `$` at byte `at` of a script path is one [`expand`] puts the profile root
/// in for: `${FINCLAW_PROFILE_ROOT}`, or a leading `$FINCLAW_PROFILE_ROOT` that no other
/// name character follows.
fn expands_root(path: &str, at: usize) -> bool {
    let rest = &path[at..];
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    rest.starts_with("${FINCLAW_PROFILE_ROOT}")
        || (at == 0
            && rest
                .strip_prefix("$FINCLAW_PROFILE_ROOT")
                .is_some_and(|after| !after.starts_with(name_char)))
}

/// Whether the shell would split a path put in unquoted (at a blank of the default `IFS`)
/// or take it for a file name pattern (`*`, `?`, `[`).
/// Whether `path` leads through a path each process reads as its own (`/proc/self/cwd`,
/// `/dev/fd/3`, `/dev/stdin`; any of `/proc`), as written or through symbolic links to one.
fn through_process_link(path: &Path) -> bool {
    let own = |p: &Path| {
        p.starts_with("/proc")
            || p.starts_with("/dev/fd")
            || ["stdin", "stdout", "stderr"]
                .iter()
                .any(|n| p.starts_with(Path::new("/dev").join(n)))
    };
    let mut path = lexically_normal(path);
    // Each link in turn, the first along the path (none before it, so `..` after it may be
    // taken lexically); a chain longer than the kernel follows leads nowhere.
    for _ in 0..40 {
        if own(&path) {
            return true;
        }
        let mut prefix = PathBuf::new();
        let link = path.components().find_map(|c| {
            prefix.push(c);
            let is_link = std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.is_symlink());
            is_link.then(|| prefix.clone())
        });
        let Some(link) = link else {
            return false;
        };
        let Ok(target) = std::fs::read_link(&link) else {
            return false;
        };
        let rest = path.strip_prefix(&link).unwrap_or(Path::new(""));
        let parent = link.parent().unwrap_or(Path::new("/"));
        path = lexically_normal(&parent.join(target).join(rest));
    }
    false
}

/// `path` with `.` gone and each `..` taking the part before it, without reading the disk.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn splits_in_shell(path: &Path) -> bool {
    (path.as_os_str().as_encoded_bytes().iter())
        .any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'*' | b'?' | b'['))
}

/// Programs that run a command given to them (`nice -n 5 node x.js`, `sudo node x.js`):
/// where that command starts depends on each one's own flags, so it is not looked for. The
/// shell's builtins that run their words as a command or a file of commands (`eval node
/// x.js`, `builtin exec …`, `. ./x.sh`) are such programs too, and so are the compound
/// commands whose first command is not the word after them (`case … in x) node x.js;;`).
const WRAPPERS: [&str; 34] = [
    "eval",
    "builtin",
    "coproc",
    ".",
    "source",
    "trap",
    "case",
    "for",
    "select",
    "function",
    "env",
    "exec",
    "command",
    "nohup",
    "setsid",
    "nice",
    "timeout",
    "stdbuf",
    "ionice",
    "chrt",
    "taskset",
    "sudo",
    "doas",
    "su",
    "runuser",
    "xargs",
    "time",
    "flock",
    "chroot",
    "unbuffer",
    "nsenter",
    "unshare",
    "systemd-run",
    "watch",
];

/// `uv run`'s flags that take no value and leave the folder as it is: passed over. Any
/// other (`--with X`, `--project DIR`, `--directory DIR`, `--python 3.12`) makes the
/// script unknown.
const UV_RUN_PLAIN_FLAGS: [&str; 5] = ["-q", "--quiet", "--frozen", "--locked", "--no-sync"];

/// The program a command runs, as [`program`] finds it.
struct Program {
    /// Its index in the command's words.
    at: usize,
    /// The launcher that runs the word at `at` as a script file itself (`uv run x.py`, `go
    /// run x.go`), if one does.
    launcher: Option<&'static str>,
}

/// The index in `words` (of `cmd`) of the program that runs: past `NAME=value` assignments,
/// which only set its environment, and past `exec`, `command`, `nohup` and `setsid` without
/// flags and `env` with assignments only, which run the words after them. `Err` with the
/// index of another of [`WRAPPERS`] (or of one of those with flags): the program it runs
/// cannot be told.
fn program_word(cmd: &str, words: &[command::Word]) -> Result<usize, usize> {
    program(cmd, words).map(|p| p.at)
}

/// [`program_word`], also passing over the launchers that run the command after them
/// (`npx`, `bunx`, `pnpm exec`, `npm exec`, `uv run`) and telling a script file a launcher
/// runs itself (`uv run x.py`, `go run x.go`). Their flags are not read: with any (but
/// [`UV_RUN_PLAIN_FLAGS`], and `--` where they take it) the program is unknown (`Err`),
/// and so is what `npm`, `pnpm` and `yarn` run otherwise (`npm run NAME` runs a command
/// package.json holds, which can change after trust).
fn program(cmd: &str, words: &[command::Word]) -> Result<Program, usize> {
    // As written: a quoted `"FOO=1"` is a program's name. Bash also takes `a[0]=1` and
    // `FOO+=1` for assignments.
    let assignment = |w: &command::Word| {
        cmd[w.start..w.end]
            .split_once('=')
            .is_some_and(|(name, _)| {
                let name = name.strip_suffix('+').unwrap_or(name);
                let name = match name.split_once('[') {
                    Some((name, subscript)) if subscript.ends_with(']') => name,
                    _ => name,
                };
                name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    // The index of the word after the assignment at `i`. The splitter ends a word at a
    // parenthesis, so a value holding one (`FOO=$(date)`, `N=$((1+1))`, bash's `A=(a b)`)
    // goes on over the words up to the parenthesis that closes it, counted between words
    // (a quoted one is inside a word).
    let past_assignment = |mut i: usize| {
        let mut depth = 0i64;
        let mut prev_end = words[i].end;
        i += 1;
        while let Some(w) = words.get(i) {
            let gap = cmd.get(prev_end.min(w.start)..w.start).unwrap_or_default();
            depth += gap.matches('(').count() as i64 - gap.matches(')').count() as i64;
            if depth <= 0 {
                break;
            }
            prev_end = w.end;
            i += 1;
        }
        i
    };
    let flag_at = |i: usize| words.get(i).is_some_and(|w| w.text.starts_with('-'));
    let text = |i: usize| words.get(i).map(|w| w.text.as_str());
    let mut i = 0;
    while words.get(i).is_some_and(assignment) {
        i = past_assignment(i);
    }
    while let Some(w) = words.get(i) {
        match w.text.as_str() {
            "exec" | "command" | "nohup" | "setsid" if !flag_at(i + 1) => i += 1,
            // Reserved words that run the command after them (`! node x.js`, `{ node x.js;
            // }`, `if node x.js; then …`): unquoted only, as the shell reads them.
            // The command after them may set variables first (`! FOO=1 node x.js`).
            "!" | "{" | "if" | "while" | "until" | "then" | "do" | "else" | "elif" if !w.quoted => {
                i += 1;
                while words.get(i).is_some_and(assignment) {
                    i = past_assignment(i);
                }
            }
            "env" => {
                let at = i;
                i += 1;
                while words.get(i).is_some_and(assignment) {
                    i = past_assignment(i);
                }
                if flag_at(i) {
                    return Err(at);
                }
            }
            name if WRAPPERS.contains(&name) => return Err(i),
            "npx" | "bunx" => {
                let at = i;
                i += 1;
                if w.text == "npx" && text(i) == Some("--") {
                    i += 1;
                } else if flag_at(i) {
                    return Err(at);
                }
            }
            // `bun x CMD` is bun's spelling of `bunx CMD`.
            "bun" if text(i + 1) == Some("x") => {
                let at = i;
                i += 2;
                if flag_at(i) {
                    return Err(at);
                }
            }
            // `pnpm exec CMD`; `npm exec -- CMD`, or `npm exec CMD` with no flag after it
            // (npm reads those as its own: `-w DIR` runs CMD in another folder).
            "npm" | "pnpm" if text(i + 1) == Some("exec") => {
                let at = i;
                i += 2;
                if w.text == "npm" && text(i) == Some("--") {
                    i += 1;
                } else if (i..words.len()).any(flag_at) {
                    return Err(at);
                }
            }
            "npm" | "pnpm" | "yarn" => return Err(i),
            // Launchers of an environment that run the command after them as their own
            // flags say (`poetry run python x.py`, `bundle exec ruby x.rb`, `dotenv --
            // node x.js`).
            "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "pixi" | "conda" | "mamba"
            | "micromamba" | "volta"
                if text(i + 1) == Some("run") =>
            {
                return Err(i)
            }
            "bundle" | "mise" | "direnv" | "fnm" if text(i + 1) == Some("exec") => return Err(i),
            "dotenv" => return Err(i),
            // `uv run x.py` runs `x.py` with python; `uv run CMD` runs CMD.
            "uv" if text(i + 1) == Some("run") => {
                let at = i;
                i += 2;
                while let Some(flag) = text(i).filter(|_| flag_at(i)) {
                    i += 1;
                    if flag == "--" {
                        break;
                    }
                    if !UV_RUN_PLAIN_FLAGS.contains(&flag) {
                        return Err(at);
                    }
                }
                let script = Path::new(text(i).unwrap_or_default()).extension();
                if script
                    .is_some_and(|e| e.eq_ignore_ascii_case("py") || e.eq_ignore_ascii_case("pyw"))
                {
                    return Ok(Program {
                        at: i,
                        launcher: Some("uv run"),
                    });
                }
            }
            "uv" if flag_at(i + 1) => return Err(i),
            // `go run x.go` builds and runs `x.go`; with flags, several files or a package,
            // what it builds is not one file.
            "go" if text(i + 1) == Some("run") => {
                let one_file = |t: Option<&str>| t.is_some_and(|t| t.ends_with(".go"));
                if one_file(text(i + 2)) && !one_file(text(i + 3)) && !flag_at(i + 2) {
                    return Ok(Program {
                        at: i + 2,
                        launcher: Some("go run"),
                    });
                }
                return Err(i);
            }
            _ => break,
        }
    }
    Ok(Program {
        at: i,
        launcher: None,
    })
}

/// `words` (of `cmd`) without its redirections, which the shell takes out wherever they
/// stand before it runs the command (`2>/dev/null node x.js` runs `node x.js`): a file
/// descriptor number written against its operator (`2>`) and the word an operator takes
/// (`>/dev/null`, `2>&1`, `<in.txt`). A process substitution (`<(…)`) is no redirection.
/// Also what stdin is last redirected from (`< x.sh`, `0<x.sh`, `<> x.sh`; not a
/// here-document or here-string), which an interpreter given no script runs.
fn without_redirections(
    cmd: &str,
    words: Vec<command::Word>,
) -> (Vec<command::Word>, Option<Stdin>) {
    let starts: Vec<usize> = words.iter().map(|w| w.start).collect();
    let mut kept = Vec::with_capacity(words.len());
    let mut stdin = None;
    let mut prev_end = 0;
    // The descriptor number written against the operator before the next word, if any.
    let mut fd_before: Option<String> = None;
    for (i, w) in words.into_iter().enumerate() {
        let gap = cmd.get(prev_end.min(w.start)..w.start).unwrap_or_default();
        let target = gap.contains(['<', '>']) && !gap.contains('(');
        let next = starts.get(i + 1).copied().unwrap_or(cmd.len());
        let after = cmd.get(w.end.min(next)..next).unwrap_or_default();
        let fd = !w.quoted
            && !w.text.is_empty()
            && w.text.bytes().all(|b| b.is_ascii_digit())
            && after.starts_with(['<', '>']);
        prev_end = w.end;
        let fd_of_this = fd_before.take();
        if fd {
            fd_before = Some(w.text.clone());
        } else if target {
            let op = gap.trim();
            // `<>` opens the file on stdin too (for reading and writing).
            let on_stdin = fd_of_this.as_deref().is_none_or(|n| n == "0");
            // `<&3` (and `0>&3`) makes stdin a copy of descriptor 3; `<&0` keeps it, `<&-`
            // closes it.
            let copy = (op.ends_with("<&") || (op.ends_with(">&") && fd_of_this.is_some()))
                && !matches!(w.text.as_str(), "0" | "-");
            if copy && on_stdin {
                stdin = Some(Stdin::Copy);
            } else if ((op.ends_with('<') && !op.ends_with("<<")) || op.ends_with("<>")) && on_stdin
            {
                stdin = Some(Stdin::File(w));
            }
        } else {
            kept.push(w);
        }
    }
    (kept, stdin)
}

/// What a command's stdin is redirected from, last.
enum Stdin {
    /// A file (`< x.sh`).
    File(command::Word),
    /// Another file descriptor (`3<x.sh <&3`), whose file is not followed.
    Copy,
}

/// Resolves the script a command runs.
pub fn resolve_script(cmd: &str, env: &Env) -> Script {
    match resolve_first(cmd, env) {
        // The hash covers the first simple command's script: with none there, a later
        // command's script (`cd sub && node x.js`) would run outside it.
        Script::None => match later_command_with_script(cmd, env) {
            Some(later) => Script::Unresolved(later),
            None => Script::None,
        },
        script => script,
    }
}

/// The simple commands of `cmd` after its first, as written: the words between `;`, `&`,
/// `|`, line breaks (a `&&`, `||` too) and parentheses (a subshell, a `$(…)` command
/// substitution). The shell's other syntax is not followed, so a command may be cut where
/// the shell would not cut it; that only finds more commands to look at. (A backquoted
/// substitution is inside its words: [`backquoted`] finds it.)
fn later_commands(cmd: &str) -> Vec<&str> {
    let Ok(words) = command::split(cmd) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    for (i, w) in words.words.iter().enumerate() {
        let gap = if i == 0 {
            ""
        } else {
            cmd.get(end..w.start).unwrap_or_default()
        };
        if gap.contains([';', '&', '|', '\n', '(', ')']) {
            if let Some(s) = start.take() {
                commands.push(&cmd[s..end]);
            }
        }
        start.get_or_insert(w.start);
        end = w.end;
    }
    if let Some(s) = start {
        commands.push(&cmd[s..end]);
    }
    commands.into_iter().skip(1).collect()
}

/// The commands of `cmd`'s backquoted substitutions (`` `sh x.sh` ``, in double quotes
/// too; not in single quotes, where a backquote is a character), as written.
fn backquoted(cmd: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let (mut single, mut open, mut escaped) = (false, None, false);
    for (i, c) in cmd.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if open.is_none() => single = !single,
            '`' if !single => match open.take() {
                Some(start) => found.push(&cmd[start..i]),
                None => open = Some(i + 1),
            },
            _ => {}
        }
    }
    found
}

/// The first simple command after the first of `cmd` (or in a backquoted substitution)
/// that runs a script (or may), as written.
fn later_command_with_script(cmd: &str, env: &Env) -> Option<String> {
    (later_commands(cmd).into_iter())
        .chain(backquoted(cmd))
        .find(|later| !matches!(resolve_first(later, env), Script::None))
        .map(|later| later.trim().to_string())
}

/// The script the first simple command of `cmd` runs.
fn resolve_first(cmd: &str, env: &Env) -> Script {
    let Ok(mut words) = command::split(cmd) else {
        return Script::None;
    };
    let (kept, stdin) = without_redirections(cmd, std::mem::take(&mut words.words));
    words.words = kept;
    if words.words.is_empty() {
        return Script::None;
    }
    // From the program on: what comes before it only sets its environment, or runs it.
    let launcher = match program(cmd, &words.words) {
        Ok(Program { at, launcher }) => {
            words.words.drain(..at);
            launcher
        }
        Err(at) => return Script::Unresolved(cmd[words.words[at].start..].trim_end().into()),
    };
    // Which word such an interpreter runs as its script depends on flags hookpack does not
    // read: hashing a guess could cover another file than the one that runs.
    if let Some(w) = (words.words.first()).filter(|w| command::unread_interpreter(&w.text)) {
        return Script::Unresolved(cmd[w.start..].trim_end().into());
    }
    let mut target = match launcher {
        Some(launcher) => Target::Script {
            interpreter: Some(launcher.to_string()),
            word: 0,
            path: words.words[0].text.clone(),
            loads: None,
            chdir: Vec::new(),
        },
        None => command::host_target(&words),
    };
    // An interpreter given no script, `-` for one (`node -`, `sh - ARG`) or `sh -s` reads
    // it from stdin: `sh < x.sh` runs `x.sh`, as if named after the interpreter. Without
    // such a redirection, stdin is the payload, no file.
    let reads_stdin = matches!(target, Target::Nothing | Target::Inline { flag: "-s" });
    let stdin = match stdin {
        // Which file the copied descriptor is open on is not followed.
        Some(Stdin::Copy) if reads_stdin => return Script::Unresolved(cmd.trim().into()),
        Some(Stdin::File(file)) => Some(file),
        _ => None,
    };
    if let (true, Some(file)) = (reads_stdin && !words.words.is_empty(), stdin) {
        let keep = match target {
            Target::Inline { .. } => 1,
            _ => (words.words.iter().skip(1))
                .position(|w| w.text == "-")
                .map_or(words.words.len(), |at| at + 1),
        };
        words.words.truncate(keep);
        words.words.push(file);
        target = command::host_target(&words);
    }
    match target {
        // `perl -S x.pl`, `ruby -S x.rb`: the interpreter looks the name up on PATH, so the
        // file of that name here need not be the one that runs.
        Target::Script {
            loads: Some("-S"), ..
        } => Script::Unresolved(cmd[words.words[0].start..].trim_end().into()),
        Target::Script {
            interpreter,
            word,
            path,
            chdir,
            ..
        } => {
            // A bare program name (`echo`, `true`) is looked up on PATH: not a script file.
            // One the shell makes (`$(cat cmd.txt)`, a backquote, `$X`) runs whatever a
            // file or the environment says then: only the shell knows it.
            if interpreter.is_none() && !path.contains('/') {
                let first = &words.words[word];
                let made = (first.expansions.iter())
                    .any(|&at| matches!(first.text.as_bytes().get(at), Some(b'$' | b'`')));
                if made {
                    return Script::Unresolved(cmd[first.start..].trim_end().to_string());
                }
                return Script::None;
            }
            // `ruby -C DIR x.rb` runs DIR/x.rb: each directory change is taken in turn. Its
            // value may be attached to the flag (`--cwd=DIR`), where quoting is not known:
            // one the shell may expand at all names a folder only the shell knows.
            if let Some((_, dir)) = (chdir.iter()).find(|(_, dir)| {
                dir.contains(['$', '`', '*', '?', '[', '{']) || dir.starts_with('~')
            }) {
                return Script::Unresolved(dir.clone());
            }
            // The rest are plain paths: each taken from the one before (an absolute one
            // replaces it).
            let base = (chdir.iter()).fold(env.workspace.clone(), |base, (_, dir)| base.join(dir));
            let written = &words.words[word];
            // An unquoted expansion in a word before the script (a flag's value: `-X *.py`,
            // `-o $OPTS`) may split into several words, so the script may be another word.
            let before = words.words.get(1..word).unwrap_or_default();
            if let (Some(first), true) = (before.first(), before.iter().any(|w| w.splits)) {
                return Script::Unresolved(cmd[first.start..written.end].to_string());
            }
            // Any other expansion (`$PWD`, `$(pwd)`, a backquote, a glob such as `[x].sh`)
            // names a file only the shell knows: hashing the file of that literal name
            // would cover another one.
            if (written.expansions.iter()).any(|&at| !expands_root(&written.text, at)) {
                return Script::Unresolved(written.text.clone());
            }
            // An unquoted profile root is split at blanks and globbed: with one of those
            // characters in the root, the script is not the file the path names.
            if written.splits && splits_in_shell(&env.profile_root) {
                return Script::Unresolved(written.text.clone());
            }
            // As written, the word starts `~/` only when its tilde is unquoted. Any other
            // unquoted leading `~` is a tilde prefix too (`~+` is the working folder in bash,
            // `~NAME` that user's home): a folder only the shell knows.
            let as_written = &cmd[written.start..];
            if as_written.starts_with('~') && !as_written.starts_with("~/") {
                return Script::Unresolved(written.text.clone());
            }
            let tilde = as_written.starts_with("~/");
            let p = expand(&path, env, &base, tilde, &|at| {
                written.expansions.contains(&at)
            });
            // Read by hookpack, `/proc/self/cwd/x.sh` is a file of hookpack's working folder;
            // run by the handler's shell, one of the workspace.
            if through_process_link(&p) {
                return Script::Unresolved(written.text.clone());
            }
            if p.is_file() {
                Script::File(p)
            } else {
                Script::Missing(p)
            }
        }
        // `python3 -m NAME`: a module python finds from the working folder first, which
        // may change after trust like any script; which file it is only python knows.
        Target::Module { .. } => Script::Unresolved(cmd[words.words[0].start..].trim_end().into()),
        _ => Script::None,
    }
}

/// The module `words` (from the program on) runs with `-m NAME` (or `-mNAME`, `-um NAME`).
fn module_name(words: &[command::Word]) -> Option<&str> {
    let mut rest = words.iter().skip(1);
    while let Some(w) = rest.next() {
        let Some(flags) = w.text.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
            continue;
        };
        if let Some((_, attached)) = flags.split_once('m') {
            return match attached {
                "" => rest.next().map(|w| w.text.as_str()),
                name => Some(name),
            };
        }
    }
    None
}

/// The canonical document the hash is taken over.
pub fn canonical(subject: &Subject, script: Option<&Sha256>) -> String {
    let h = subject.handler;
    let mut m: BTreeMap<&str, Value> = BTreeMap::new();
    m.insert("v", json!(1));
    m.insert("event", json!(subject.event));
    m.insert(
        "matcher",
        subject.matcher.map(Value::from).unwrap_or(Value::Null),
    );
    m.insert("command", h.get("command").cloned().unwrap_or(Value::Null));
    m.insert(
        "timeout",
        json!(h
            .get("timeout")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT)),
    );
    m.insert(
        "async",
        json!(h.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(fp) = h.get("failurePolicy") {
        m.insert("failurePolicy", fp.clone());
    }
    if subject.event == Event::Stop.name() {
        m.insert("stop", json!("stop:v1"));
    }
    m.insert(
        "script",
        script
            .map(|s| Value::String(s.to_string()))
            .unwrap_or(Value::Null),
    );
    // BTreeMap iterates in bytewise key order; serde_json writes it compactly.
    serde_json::to_string(&m).unwrap_or_default()
}

/// The trust hash of a handler, reading its script from disk. A script over
/// [`MAX_FILE_BYTES`] is not read: [`Error::ScriptTooLarge`].
pub fn hash(subject: &Subject, env: &Env) -> Result<(Sha256, Script), Error> {
    let cmd = subject
        .handler
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let script = resolve_script(cmd, env);
    let digest = match &script {
        Script::File(p) => Some(script_digest(p)?),
        _ => None,
    };
    Ok((
        Sha256::of(canonical(subject, digest.as_ref()).as_bytes()),
        script,
    ))
}

/// The SHA-256 of the script at `path`, refused unread when it is over [`MAX_FILE_BYTES`]
/// (by its size as opened, and as read: it may grow in between).
fn script_digest(path: &Path) -> Result<Sha256, Error> {
    use std::io::Read as _;
    let too_large = |size| Error::ScriptTooLarge {
        path: path.to_path_buf(),
        size,
        limit: MAX_FILE_BYTES,
    };
    let file = std::fs::File::open(path).map_err(|e| crate::fs::FsError::new("open", path, e))?;
    let size = (file.metadata())
        .map_err(|e| crate::fs::FsError::new("inspect", path, e))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(too_large(size));
    }
    let (digest, read) = Sha256::of_reader(file.take(MAX_FILE_BYTES + 1))
        .map_err(|e| crate::fs::FsError::new("read", path, e))?;
    if read > MAX_FILE_BYTES {
        return Err(too_large(read));
    }
    Ok(digest)
}

/// The key of a handler in the trust file: source file, event and handler id (or, for a
/// handler without an id, a digest of its command).
pub fn key(file: &Path, event: &str, handler: &Value) -> String {
    let who = match handler.get("id").and_then(Value::as_str) {
        Some(id) => format!("id:{id}"),
        None => format!(
            "command:{}",
            Sha256::of(
                handler
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .as_bytes()
            )
        ),
    };
    format!("{}#{event}#{who}", file.display())
}

/// The file part of a [`key`] (`FILE#EVENT#WHO`, FILE a `hooks.json`, EVENT a known
/// event) and the rest from its `#`; `None` for anything else. A path may hold `#` and even
/// `hooks.json#`: the file part ends where an event follows.
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    const FILE_END: &str = "hooks.json#";
    let at = key.match_indices(FILE_END).map(|(at, _)| at).find(|&at| {
        let after = &key[at + FILE_END.len()..];
        after
            .split_once('#')
            .is_some_and(|(event, _)| crate::event::Event::ALL.iter().any(|e| e.name() == event))
    })?;
    Some(key.split_at(at + FILE_END.len() - 1))
}

/// A key as given on the command line (`trust --key`), its file part made absolute with
/// `..` folded as [`key`] gives it, so that `/w/p/../p/hooks.json#Stop#id:a` names the
/// handler the listing shows as `/w/p/hooks.json#Stop#id:a`; as given when it is no key.
pub fn key_as_given(given: &str) -> String {
    folded_key(given).map_or_else(|| given.to_string(), |(folded, _)| folded)
}

/// `key` with `..` folded in its file part, as [`key`] gives it now, and whether the two
/// file parts name one existing file; `None` when [`split_key`] cannot read it.
fn folded_key(key: &str) -> Option<(String, bool)> {
    let (file, rest) = split_key(key)?;
    let folded = crate::fs::absolute(Path::new(file));
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let same_file = real(Path::new(file)).is_some_and(|r| Some(r) == real(&folded));
    Some((format!("{}{rest}", folded.display()), same_file))
}

/// One trusted handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The hash trusted.
    pub hash: Sha256,
    /// When, RFC 3339.
    pub trusted_at: String,
    /// Fields hookpack does not know, kept (a new trust decision replaces them).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The trust file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustFile {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Key → entry.
    pub handlers: BTreeMap<String, Entry>,
    /// Fields hookpack does not know, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TrustFile {
    /// Reads the trust file; absent means empty.
    pub fn read(path: &Path) -> Result<TrustFile, Error> {
        if let Some(home) = path.parent() {
            crate::profile::require_home_folder(home)?;
        }
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustFile {
                    schema: SCHEMA.into(),
                    ..Default::default()
                });
            }
            Err(e) => return Err(crate::fs::FsError::new("inspect", path, e).into()),
            // Refused for reading as much as for writing: said so that it is right for
            // `list` and `run`, which only read it, as for `trust` and `revoke`.
            Ok(m) if m.file_type().is_symlink() => {
                return Err(Error::ConfigInvalid {
                    path: path.to_path_buf(),
                    why: format!(
                        "the trust file is a symbolic link{}, which hookpack neither reads nor \
                         writes: it is the record of what may run, and a link could point it at \
                         a file someone else controls, or carry trust's writes through to \
                         wherever it points; replace the link with the file it points to (move \
                         that file here in its place), or remove the link to start with no \
                         handler trusted",
                        crate::fs::link_shown(path).unwrap_or_default()
                    ),
                });
            }
            Ok(m) if !m.is_file() => {
                return Err(Error::ConfigInvalid {
                    path: path.to_path_buf(),
                    why: format!(
                        "the trust file is {}, where hookpack reads and writes a file; move it \
                         away (`trust` then writes a new file, and no handler is trusted until \
                         then)",
                        crate::fs::kind_of(&m.file_type())
                    ),
                });
            }
            // Refused for reading too, as a link is: what `list` shows would not be what
            // the next write leaves under the other names.
            Ok(m) if crate::fs::link_count(&m) > 1 => {
                let names = crate::fs::link_count(&m);
                return Err(Error::ConfigInvalid {
                    path: path.to_path_buf(),
                    why: format!(
                        "the trust file has {names} names (hard links, as some dotfiles tools \
                         make), and hookpack writes a new file in its place, which would leave \
                         the other{s} with the old entries: a trust revoked here would still be \
                         granted there; give it one name, or make the other{s} a copy",
                        s = if names > 2 { "s" } else { "" }
                    ),
                });
            }
            Ok(m) => {
                #[cfg(unix)]
                refuse_if_others_can_change(path, Some(&m))?;
                #[cfg(not(unix))]
                let _ = m;
            }
        }
        // Read from a descriptor whose own metadata is checked again: a file renamed into
        // the path after the checks above is the one read, and checked.
        let (bytes, opened) = crate::fs::read_limited_no_follow(path, MAX_FILE_BYTES)?;
        #[cfg(unix)]
        refuse_if_others_can_change(path, Some(&opened))?;
        if crate::fs::link_count(&opened) > 1 {
            return Err(Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: "the trust file got a second name (a hard link) while it was read; give \
                      it one name"
                    .into(),
            });
        }
        if bytes.starts_with(b"\xEF\xBB\xBF") {
            return Err(Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: "the trust file starts with a UTF-8 byte-order mark, which JSON does not \
                      allow; save it as UTF-8 without BOM (`tail -c +4 FILE > NEW`, then move \
                      NEW over it)"
                    .into(),
            });
        }
        // serde keeps the last of a key given twice in silence, and the next write would
        // drop the first. (What else does not parse, serde says below.)
        if let Some(d) = crate::json::parse(&bytes)
            .ok()
            .and_then(|p| p.duplicates.into_iter().next())
        {
            return Err(Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: format!(
                    "key `{}` appears twice, {}, and only the last would be \
                     read, the first dropped unsaid; delete the entry that is wrong (or both, \
                     and trust again)",
                    d.key,
                    d.spots()
                ),
            });
        }
        let mut file: TrustFile =
            serde_json::from_slice(&bytes).map_err(|e| Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: format!(
                    "it cannot be read as a hookpack trust file, {}: {} (at {}:{}); fix it, or \
                     put back a copy you kept; removing it drops every trust it records, and \
                     each handler must be trusted again",
                    match e.classify() {
                        serde_json::error::Category::Eof => "as it is cut short",
                        serde_json::error::Category::Syntax => "as it is not valid JSON",
                        _ => "as its entries are not shaped as hookpack writes them",
                    },
                    crate::json::serde_message(&e),
                    e.line().max(1),
                    e.column().max(1)
                ),
            })?;
        // Another schema's entries may mean something else under the same names: reading
        // them as ours could call a handler trusted, and writing would relabel the file.
        if !file.schema.is_empty() && file.schema != SCHEMA {
            return Err(Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: format!(
                    "its schema is {:?}, and hookpack reads and writes only {SCHEMA} trust \
                     files; left as it is. If another program owns this file, hookpack cannot \
                     share it; if it is an old copy, move it aside and trust again",
                    file.schema
                ),
            });
        }
        file.fold_key_paths();
        Ok(file)
    }

    /// Gives keys written before hookpack folded `..` in profile paths (`/w/../p/hooks.json`
    /// from `--profile ../p`) the path [`key`] gives now, so that those handlers stay
    /// trusted. Where several keys fold to one, the entry trusted last is kept and the
    /// others are dropped, so that a revoke or a removal cannot be undone by a leftover.
    fn fold_key_paths(&mut self) {
        let old: Vec<String> = (self.handlers.keys())
            .filter(|k| k.contains("/../") || k.contains("/./"))
            .cloned()
            .collect();
        for key in old {
            let Some((folded, same_file)) = folded_key(&key).filter(|(f, _)| *f != key) else {
                continue;
            };
            // Only where both name the same file now: a key whose `..` passed a link that
            // has since gone names nothing, and keeps its form.
            if !same_file {
                continue;
            }
            let Some(entry) = self.handlers.remove(&key) else {
                continue;
            };
            match self.handlers.get(&folded) {
                // RFC 3339 in UTC, as hookpack writes it: later sorts after.
                Some(kept) if kept.trusted_at >= entry.trusted_at => {}
                _ => {
                    self.handlers.insert(folded, entry);
                }
            }
        }
    }

    /// Writes it atomically (under the trust lock, which every caller holds), first removing
    /// the temporary files of writes whose process died before their rename.
    ///
    /// Refuses, writing nothing, a file [`TrustFile::read`] would refuse: one over
    /// [`MAX_FILE_BYTES`], which would stop every later command of every profile sharing
    /// the file, or one in a folder others can put a file of theirs in.
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(Error::ConfigInvalid {
                path: path.to_path_buf(),
                why: format!(
                    "as hookpack would write it, the trust file would be {} bytes, over the \
                     {MAX_FILE_BYTES} bytes hookpack reads, so every later command would \
                     refuse it; nothing was written: revoke the trust of handlers you no \
                     longer use, or give profiles with many handlers a FINCLAW_HOME of their \
                     own",
                    bytes.len()
                ),
            });
        }
        if let Some(dir) = path.parent() {
            crate::profile::require_home_folder(dir)?;
            #[cfg(unix)]
            refuse_if_others_can_change(path, None)?;
            crate::fs::create_dir_all_unshared(dir)?;
            for left in crate::pack::dead_temporary_files(dir) {
                let _ = std::fs::remove_file(left);
            }
        }
        crate::pack::write_atomic(path, &bytes)
    }
}

/// Refuses the trust file at `path` (`file`, its metadata, links not followed; `None` to
/// check only the way to it, as before the first write) when someone other than this user
/// could change it, as ssh's StrictModes refuses an `authorized_keys`: one writable by its
/// group or others, one owned by another user, or one reached through a folder (any, from
/// `/`) that others can write to without the sticky bit or that another user owns, or
/// through a symbolic link another user owns (each lets them put a file of theirs in its
/// place). Whoever can change it decides which handlers `run` and hosts run.
#[cfg(unix)]
fn refuse_if_others_can_change(path: &Path, file: Option<&std::fs::Metadata>) -> Result<(), Error> {
    use std::os::unix::fs::MetadataExt as _;
    let quoted = |p: &Path| crate::advice::quote_on_one_line(&p.display().to_string());
    let mut what = Vec::new();
    let mut fixes = Vec::new();
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    // Root with another user's FINCLAW_HOME (sudo keeping HOME): that user would decide
    // what root runs. Never advised away by handing the file to root, which locks the
    // user out of their own trust.
    let as_that_user = |owner: u32| {
        format!(
            "run hookpack as user {owner} rather than as root with their HOME (sudo keeps \
             HOME), or point FINCLAW_HOME at a folder of root's: root must not run handlers \
             another user chose"
        )
    };
    if let Some(m) = file {
        if !mine_or_roots(m.uid()) {
            what.push(format!(
                "is owned by user {}, not by you (user {me}) or root",
                m.uid()
            ));
            fixes.push(if me == 0 {
                as_that_user(m.uid())
            } else {
                format!(
                    "if what it trusts is yours, take it back with `chown {me} {}` (as root), \
                     else move it away and trust your handlers again",
                    quoted(path)
                )
            });
        }
        if m.mode() & 0o022 != 0 {
            let by = match m.mode() & 0o022 {
                0o020 => "its group",
                0o002 => "others",
                _ => "its group and others",
            };
            what.push(format!(
                "is writable by {by} (mode {:04o})",
                m.mode() & 0o7777
            ));
            fixes.push(format!("`chmod 600 {}`", quoted(path)));
        }
    }
    // Every folder from `/` and every link on the way: whoever owns one, or can write to a
    // folder without the sticky bit, can put a file of theirs in its place. Group write is
    // not refused here: the file's own group write is, and a home folder writable by a
    // user-private group is common.
    for spot in weak_spots(path) {
        match spot {
            WeakSpot::FolderOwned { dir, uid } => {
                what.push(format!(
                    "is {} {}, a folder owned by user {uid}, not by you (user {me}) or root, \
                     who can put a file of theirs in its place",
                    in_or_under(path, &dir),
                    dir.display()
                ));
                fixes.push(if me == 0 {
                    as_that_user(uid)
                } else {
                    "point FINCLAW_HOME at a folder of your own".to_string()
                });
            }
            WeakSpot::FolderWritable { dir, mode } => {
                what.push(format!(
                    "is {} {}, a folder others can write to (mode {mode:04o}) without the \
                     sticky bit, so anyone can put a file of theirs in its place",
                    in_or_under(path, &dir),
                    dir.display()
                ));
                fixes.push(format!(
                    "`chmod o-w {}` (or point FINCLAW_HOME at a folder of your own)",
                    quoted(&dir)
                ));
            }
            WeakSpot::LinkOwned { link, uid } => {
                what.push(format!(
                    "is reached through {}, a symbolic link owned by user {uid}, not by you \
                     (user {me}) or root, who can point it elsewhere",
                    link.display()
                ));
                fixes.push(if me == 0 {
                    as_that_user(uid)
                } else {
                    "point FINCLAW_HOME at the folder the link leads to, or make the link yours"
                        .to_string()
                });
            }
            WeakSpot::FolderGroupWritable { .. } => {}
        }
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(Error::ConfigInvalid {
        path: path.to_path_buf(),
        why: format!(
            "the trust file {}: a file someone else can change decides what runs (an entry \
             they add has `run` and hosts run a handler of theirs), so hookpack neither reads \
             nor writes it; {}{}",
            what.join(", and "),
            fixes.join(", and "),
            if file.is_some() {
                ", then look through its entries for any you did not trust"
            } else {
                ""
            }
        ),
    })
}

/// Whether what the user `uid` owns is safe to go by: this user's, or root's (who can
/// change any file anyway).
#[cfg(unix)]
fn mine_or_roots(uid: u32) -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    uid == unsafe { libc::geteuid() } || uid == 0
}

/// Who besides this user can change a handler's script: each finding with its fix.
///
/// The hash is taken just before a handler starts, but its shell opens the script later,
/// as a host's does; whoever can write the file (or put another in its place) in that
/// window has their code run as this user. That is refused for another user (`others`);
/// the file's group is only warned of (`group`), since with a user-private group (umask
/// 002 setups) the group is this user alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposure {
    /// What lets another user change it: writable by others, owned by another user (not
    /// root), in a folder others can write to without the sticky bit or owned by another
    /// user. Each with its fix.
    pub others: Vec<(String, String)>,
    /// What lets the members of its group change it: writable by the group, in a folder
    /// the group can write to without the sticky bit. Each with its fix.
    pub group: Vec<(String, String)>,
}

/// Why another user running the handler's script would be a problem, said once for all.
const EXPOSED_WHY: &str =
    "another user can change it, and a handler runs whatever the file holds when it starts";

impl Exposure {
    /// Why `trust` refuses the script at `path`, and the fix; `None` when no other user
    /// can change it.
    pub fn refusal(&self, path: &Path) -> Option<String> {
        Self::said(&self.others, path, EXPOSED_WHY, "")
    }

    /// The warning for a script at `path` its group can change; `None` when it cannot.
    pub fn group_warning(&self, path: &Path) -> Option<String> {
        Self::said(
            &self.group,
            path,
            "a member of its group other than you could change it, and a handler runs \
             whatever the file holds when it starts",
            " (no need when the group is yours alone, as with umask 002 and a group per user)",
        )
    }

    fn said(found: &[(String, String)], path: &Path, why: &str, after: &str) -> Option<String> {
        if found.is_empty() {
            return None;
        }
        let (what, fixes): (Vec<&str>, Vec<&str>) =
            found.iter().map(|(w, f)| (w.as_str(), f.as_str())).unzip();
        Some(format!(
            "its script {} {}: {why}; {}{after}",
            path.display(),
            what.join(", and "),
            fixes.join(", and ")
        ))
    }
}

/// Who besides this user can change the script at `path` (see [`Exposure`]): the file the
/// shell opens (links followed), every folder on the way to it from `/` and every symbolic
/// link followed. Nothing is found on systems other than Unix, or for a path that cannot
/// be inspected (hashing it then says why).
pub fn script_exposure(path: &Path) -> Exposure {
    #[cfg(unix)]
    {
        exposure_on_unix(path)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Exposure::default()
    }
}

#[cfg(unix)]
fn exposure_on_unix(path: &Path) -> Exposure {
    use std::os::unix::fs::MetadataExt as _;
    let mut e = Exposure::default();
    let Ok(file) = std::fs::metadata(path) else {
        return e;
    };
    let quoted = |p: &Path| crate::advice::quote_on_one_line(&p.display().to_string());
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    let mode = |m: &std::fs::Metadata| m.mode() & 0o7777;
    // Root can change any file anyway.
    if !mine_or_roots(file.uid()) {
        e.others.push((
            format!(
                "is owned by user {}, not by you (user {me}) or root",
                file.uid()
            ),
            format!(
                "make it yours (copy it to a file of your own and name that in the command, \
                 or `chown {me} {}` as root)",
                quoted(path)
            ),
        ));
    }
    if file.mode() & 0o002 != 0 {
        e.others.push((
            format!("is writable by others (mode {:04o})", mode(&file)),
            format!("`chmod go-w {}`", quoted(path)),
        ));
    } else if file.mode() & 0o020 != 0 && !group_is_mine_alone(file.gid()) {
        e.group.push((
            format!("is writable by its group (mode {:04o})", mode(&file)),
            format!("`chmod g-w {}`", quoted(path)),
        ));
    }
    for spot in weak_spots(path) {
        match spot {
            WeakSpot::LinkOwned { link, uid } => e.others.push((
                format!(
                    "is reached through {}, a symbolic link owned by user {uid}, who can point \
                     it elsewhere",
                    link.display()
                ),
                "name the path the link leads to in the command, or make the link yours".into(),
            )),
            WeakSpot::FolderOwned { dir, uid } => e.others.push((
                format!(
                    "is {} {}, a folder owned by user {uid}, who can put a file of theirs in its \
                     place",
                    in_or_under(path, &dir),
                    dir.display()
                ),
                "move it to a folder of your own and name that in the command".into(),
            )),
            WeakSpot::FolderWritable { dir, mode } => e.others.push((
                format!(
                    "is {} {}, a folder others can write to (mode {mode:04o}) without the sticky \
                     bit, so anyone can put a file of theirs in its place",
                    in_or_under(path, &dir),
                    dir.display()
                ),
                format!("`chmod o-w {}`", quoted(&dir)),
            )),
            WeakSpot::FolderGroupWritable { dir, mode } => e.group.push((
                format!(
                    "is {} {}, a folder its group can write to (mode {mode:04o})",
                    in_or_under(path, &dir),
                    dir.display()
                ),
                format!("`chmod g-w {}`", quoted(&dir)),
            )),
        }
    }
    e
}

/// How a message places `path` in the folder `dir`: `in` the one holding it, `under` one
/// further up.
#[cfg(unix)]
fn in_or_under(path: &Path, dir: &Path) -> &'static str {
    if crate::fs::absolute(path).parent() == Some(dir) {
        "in"
    } else {
        "under"
    }
}

/// Something on the way to a file that lets someone other than this user (and root)
/// change what the path leads to: see [`weak_spots`].
#[cfg(unix)]
enum WeakSpot {
    /// A folder another user owns: they can rename the entry away and put theirs there.
    FolderOwned { dir: PathBuf, uid: u32 },
    /// A folder others can write to without the sticky bit.
    FolderWritable { dir: PathBuf, mode: u32 },
    /// A folder its group can write to without the sticky bit, the group not being this
    /// user's private one.
    FolderGroupWritable { dir: PathBuf, mode: u32 },
    /// A symbolic link on the way that another user owns: they can point it elsewhere.
    LinkOwned { link: PathBuf, uid: u32 },
}

/// The weak spots on the way to `path` ([`way_to`]): each folder from `/` (once, however
/// often the way passes it) and each symbolic link followed. A folder's worst spot only.
#[cfg(unix)]
fn weak_spots(path: &Path) -> Vec<WeakSpot> {
    use std::os::unix::fs::MetadataExt as _;
    let way = way_to(path);
    // A link's owner may point it elsewhere whatever its folder (in a sticky folder such
    // as `/tmp`, the owner of an entry may replace it).
    let mut out: Vec<WeakSpot> = (way.links.into_iter())
        .filter(|(_, uid)| !mine_or_roots(*uid))
        .map(|(link, uid)| WeakSpot::LinkOwned { link, uid })
        .collect();
    let mut seen: Vec<(u64, u64)> = Vec::new();
    for dir in way.folders {
        let Ok(m) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if seen.contains(&(m.dev(), m.ino())) {
            continue;
        }
        seen.push((m.dev(), m.ino()));
        // With the sticky bit only a file's owner may rename or delete it (`/tmp`).
        let sticky = m.mode() & 0o1000 != 0;
        let mode = m.mode() & 0o7777;
        if !mine_or_roots(m.uid()) {
            out.push(WeakSpot::FolderOwned { dir, uid: m.uid() });
        } else if m.mode() & 0o002 != 0 && !sticky {
            out.push(WeakSpot::FolderWritable { dir, mode });
        } else if m.mode() & 0o020 != 0 && !sticky && !group_is_mine_alone(m.gid()) {
            out.push(WeakSpot::FolderGroupWritable { dir, mode });
        }
    }
    out
}

/// Whether the group `gid` is this user's private group (the user-private-group scheme of
/// Debian, Ubuntu and Fedora, where umask 002 is usual): this user's primary group, of
/// this user's name, listing no member but this user, and no other user's primary group
/// in `/etc/passwd`. Group write then lets no one else in, and is not warned of. Anything
/// that cannot be told keeps the warning.
#[cfg(unix)]
fn group_is_mine_alone(gid: u32) -> bool {
    use std::ffi::CStr;
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let my_uid = unsafe { libc::geteuid() };
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: getpwuid_r(3) and getgrgid_r(3) write only into `pw`/`gr` and `buf` (whose
    // length is passed), and set `found` to null or to that record; the strings read below
    // point into `buf`, alive and unmoved until the end of this function.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwuid_r(
            my_uid,
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        ) != 0
            || found.is_null()
            || pw.pw_name.is_null()
            || pw.pw_gid != gid
        {
            return false;
        }
        let me = CStr::from_ptr(pw.pw_name).to_owned();
        let mut gbuf = vec![0u8; 64 * 1024];
        let mut gr: libc::group = std::mem::zeroed();
        let mut gfound: *mut libc::group = std::ptr::null_mut();
        if libc::getgrgid_r(
            gid,
            &mut gr,
            gbuf.as_mut_ptr().cast(),
            gbuf.len(),
            &mut gfound,
        ) != 0
            || gfound.is_null()
            || gr.gr_name.is_null()
            || CStr::from_ptr(gr.gr_name) != me.as_c_str()
        {
            return false;
        }
        let mut member = gr.gr_mem;
        while !member.is_null() && !(*member).is_null() {
            if CStr::from_ptr(*member) != me.as_c_str() {
                return false;
            }
            member = member.add(1);
        }
    }
    // Another user whose primary group it is (not listed as a member) could write too.
    let Ok(passwd) = std::fs::read_to_string("/etc/passwd") else {
        return false;
    };
    !passwd.lines().any(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        fields.len() > 3
            && fields[3].parse::<u32>() == Ok(gid)
            && fields[2].parse::<u32>() != Ok(my_uid)
    })
}

/// What a path passes through on its way to a file: see [`way_to`].
#[cfg(unix)]
struct Way {
    /// Each folder, from `/`.
    folders: Vec<PathBuf>,
    /// Each symbolic link followed, with its owner.
    links: Vec<(PathBuf, u32)>,
}

/// Everything whose owner or writers could change what `path` leads to, as ssh checks the
/// folders of an `authorized_keys`: each folder the path passes through, from `/`, and
/// each symbolic link on the way, followed as the kernel follows it (the folder holding a
/// link, and the link's owner, can swap it; the folders its target passes through count as
/// well). At most 40 links are followed, the kernel's limit; a path that cannot be walked
/// further gives what was walked so far (hashing the script then says what is wrong).
#[cfg(unix)]
fn way_to(path: &Path) -> Way {
    use std::os::unix::fs::MetadataExt as _;
    use std::path::Component;
    let start = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        match std::env::current_dir().and_then(std::fs::canonicalize) {
            Ok(cwd) => cwd,
            Err(_) => {
                return Way {
                    folders: Vec::new(),
                    links: Vec::new(),
                }
            }
        }
    };
    // A path's names and `..`, in order (`/` and `.` lead nowhere new).
    let names = |p: &Path| -> Vec<std::ffi::OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut out: Vec<PathBuf> = start.ancestors().map(Path::to_path_buf).collect();
    let mut followed: Vec<(PathBuf, u32)> = Vec::new();
    // `at` never holds a link: each name is looked at before it is added.
    let mut at = start;
    let mut rest: std::collections::VecDeque<std::ffi::OsString> = names(path).into();
    let mut links = 0;
    while let Some(name) = rest.pop_front() {
        if name == ".." {
            at.pop();
            continue;
        }
        let next = at.join(&name);
        let Ok(m) = std::fs::symlink_metadata(&next) else {
            break;
        };
        if m.file_type().is_symlink() {
            links += 1;
            followed.push((next.clone(), m.uid()));
            let Ok(target) = std::fs::read_link(&next) else {
                break;
            };
            if links > 40 {
                break;
            }
            if target.is_absolute() {
                at = PathBuf::from("/");
            }
            for (i, part) in names(&target).into_iter().enumerate() {
                rest.insert(i, part);
            }
        } else if m.is_dir() {
            at = next;
            out.push(at.clone());
        } else {
            break;
        }
    }
    Way {
        folders: out,
        links: followed,
    }
}

/// A handler's trust status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The trusted hash matches.
    Trusted,
    /// Never trusted.
    Untrusted,
    /// Trusted once; something it covers has changed since.
    Modified,
    /// The script it runs does not exist.
    ScriptMissing,
    /// The script's path holds a shell expansion, so the file it runs cannot be known.
    ScriptUnknown,
    /// Another user can change the script (see [`script_exposure`]): never trusted, and a
    /// trusted one is not run while it stays so.
    #[serde(rename = "script-writable-by-others")]
    ScriptWritableByOthers,
    /// A host would skip it (invalid fields, a matcher that does not compile).
    Invalid,
}

impl Status {
    /// The word `list` prints.
    pub fn word(self) -> &'static str {
        match self {
            Status::Trusted => "trusted",
            Status::Untrusted => "untrusted",
            Status::Modified => "modified",
            Status::ScriptMissing => "script missing",
            Status::ScriptUnknown => "script unknown",
            Status::ScriptWritableByOthers => "script writable by others",
            Status::Invalid => "invalid",
        }
    }
}

/// What is said of a handler running `cmd` whose script is [`Script::Unresolved`] as `path`
/// under `env`, and the fix (`trust` refuses it, `doctor` reports it).
pub fn unresolved_why(path: &str, cmd: &str, env: &Env) -> (String, &'static str) {
    if matches!(resolve_first(cmd, env), Script::None) {
        if let Some(later) = later_command_with_script(cmd, env) {
            return (
                format!(
                    "its first command runs no script, and another of its commands, `{later}`, runs one, \
                     which the trust hash (over the first command's script) cannot cover"
                ),
                "start the command with the script (`node x.js`), and do the rest in it (a \
                 `cd` there too)",
            );
        }
    }
    let words = command::split(cmd).map(|w| w.words).unwrap_or_default();
    let (words, stdin) = without_redirections(cmd, words);
    if let Err(at) = program_word(cmd, &words) {
        let name = words[at].text.as_str();
        let then = |sub: &str| words.get(at + 1).is_some_and(|w| w.text == sub);
        if matches!(name, "uv" | "go" | "npx" | "bunx")
            || (matches!(name, "npm" | "pnpm") && then("exec"))
            || (name == "bun" && then("x"))
        {
            return (
                format!(
                    "its command runs `{name}`, a launcher whose flags (or, for `go run`, \
                     several files or a package) hookpack does not read, so the script it runs \
                     cannot be known or hashed"
                ),
                "drop the launcher's flags (`uv run x.py`, `npx tsx x.ts`, `go run x.go`) or \
                 run the interpreter itself (`python3 x.py`)",
            );
        }
        if matches!(name, "npm" | "pnpm" | "yarn") {
            return (
                format!(
                    "its command runs `{name}`, which runs a command package.json names (or \
                     another program, as its own flags say), so the script it runs cannot be \
                     known or hashed"
                ),
                "run the script with its interpreter (`node x.js`, `npx tsx x.ts`)",
            );
        }
        return (
            format!(
                "its command runs `{}`, which runs another program (as its own flags or \
                 words say), so the script that program runs cannot be known or hashed",
                words[at].text
            ),
            "run the interpreter itself (`node x.js`; set a variable with `NAME=value node x.js`)",
        );
    }
    if let Some(program) = (program_word(cmd, &words).ok())
        .and_then(|at| words.get(at))
        .filter(|w| command::unread_interpreter(&w.text))
    {
        return (
            format!(
                "its command runs `{}`, an interpreter whose flags hookpack does not read, \
                 so the script it runs cannot be known or hashed",
                program.text
            ),
            "run the script with an interpreter hookpack reads (`node`, `python3`, `sh`, …; \
             see `Commands` in the README)",
        );
    }
    let from_program = (program_word(cmd, &words).ok()).map(|at| command::Words {
        words: words[at..].to_vec(),
        shell_syntax: None,
    });
    if let Some(from_program) = &from_program {
        if let Target::Script {
            loads: Some("-S"), ..
        } = command::host_target(from_program)
        {
            return (
                format!(
                    "its command runs `{}` with `-S`, which looks the script up on PATH, so \
                     the file it runs cannot be known or hashed",
                    from_program.words[0].text
                ),
                "name the script by its path, without `-S`",
            );
        }
    }
    if through_process_link(&env.workspace.join(path)) {
        return (
            format!(
                "its command names its script with `{path}`, which leads through `/proc` or \
                 `/dev/fd` (a path each process reads as its own: hookpack would hash another \
                 file than the one the handler runs)"
            ),
            "write the script's own path",
        );
    }
    let runs_module = |at: usize| {
        let from_program = command::Words {
            words: words[at..].to_vec(),
            shell_syntax: None,
        };
        matches!(command::host_target(&from_program), Target::Module { .. })
    };
    if let Some((at, name)) = (program_word(cmd, &words).ok())
        .filter(|&at| runs_module(at))
        .and_then(|at| Some((at, module_name(&words[at..])?)))
    {
        return (
            format!(
                "its command runs the module `{name}` (`-m`), which {} finds by name, from the \
                 working folder first, so the file it runs cannot be known or hashed",
                words[at].text
            ),
            "run the module's file as a script (`python3 path/to/module.py`)",
        );
    }
    let reads_copy = matches!(stdin, Some(Stdin::Copy))
        && (program_word(cmd, &words).ok()).is_some_and(|at| {
            let from_program = command::Words {
                words: words[at..].to_vec(),
                shell_syntax: None,
            };
            matches!(
                command::host_target(&from_program),
                Target::Nothing | Target::Inline { flag: "-s" }
            )
        });
    if reads_copy {
        return (
            "its command gives the interpreter no script, and its stdin is a copy of another \
             file descriptor (`<&N`), whose file hookpack does not follow, so the script it \
             runs cannot be known or hashed"
                .into(),
            "redirect the file itself (`sh < x.sh`), or name the script (`sh x.sh`)",
        );
    }
    // Unknown only because the shell splits the profile root: with a root it leaves whole,
    // the script would be known. (A `-C` folder or a flag's value, `-r …`, stays unknown
    // whatever the root holds, and quoting the script path would not change that.)
    let whole = Env {
        profile_root: PathBuf::from("/"),
        workspace: env.workspace.clone(),
    };
    let split = splits_in_shell(&env.profile_root)
        && !matches!(resolve_script(cmd, &whole), Script::Unresolved(_));
    if split {
        return (
            format!(
                "its command leaves `$FINCLAW_PROFILE_ROOT` unquoted in `{path}`, and the \
                 profile's path holds a blank or a glob character, so the shell splits it \
                 into other words and the file it runs cannot be known or hashed"
            ),
            "put the path in double quotes (`\"${FINCLAW_PROFILE_ROOT}/…\"`)",
        );
    }
    (
        format!(
            "its command names its script with `{path}`, which holds a shell expansion \
             hookpack does not make, so the file it runs cannot be known or hashed"
        ),
        "write the path out (only `${FINCLAW_PROFILE_ROOT}` and a leading `~/` are expanded)",
    )
}

/// Why a handler running `cmd`, whose script path holds a shell expansion, is not trusted.
pub fn unresolved_script(script: &Script, cmd: &str, env: &Env) -> String {
    let path = match script {
        Script::Unresolved(p) => p.as_str(),
        _ => "",
    };
    let (why, fix) = unresolved_why(path, cmd, env);
    format!("refused: {why}; {fix}")
}

/// The status of a handler given the trust file (and, for a script file, who can change
/// it, read from the disk).
pub fn status(trust: &TrustFile, key: &str, hash: &Sha256, script: &Script, valid: bool) -> Status {
    if !valid {
        return Status::Invalid;
    }
    match script {
        Script::Missing(_) => return Status::ScriptMissing,
        Script::Unresolved(_) => return Status::ScriptUnknown,
        Script::File(p) if !script_exposure(p).others.is_empty() => {
            return Status::ScriptWritableByOthers
        }
        Script::File(_) | Script::None => {}
    }
    match trust.handlers.get(key) {
        None => Status::Untrusted,
        Some(e) if e.hash == *hash => Status::Trusted,
        Some(_) => Status::Modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_profile_root_is_expanded_in_a_script_path() {
        let env = Env {
            profile_root: PathBuf::from("/prof"),
            workspace: PathBuf::from("/nonexistent-ws"),
        };
        for (cmd, unresolved) in [
            ("node ${FINCLAW_PROFILE_ROOT}/x.js", false),
            ("node $FINCLAW_PROFILE_ROOT/x.js", false),
            ("node '$HOME/x.js'", false),
            ("node $FINCLAW_PROFILE_ROOTX/x.js", true),
            ("node a$FINCLAW_PROFILE_ROOT/x.js", true),
            ("node \"$HOME/x.js\"", true),
            ("node `pwd`/x.js", true),
            ("node $(pwd)/x.js", true),
            ("ruby -C sub x.rb", false),
            ("ruby -C '~/sub' x.rb", true),
            ("ruby -C \"$HOME\" x.rb", true),
            ("bun --cwd=${FINCLAW_PROFILE_ROOT} x.ts", true),
            ("node [x].js", true),
            ("node x*.js", true),
            ("node x?.js", true),
            ("node {x,y}.js", true),
            ("node {x.js,}", true),
            ("node x{1..2}.js", true),
            ("node {x}.js", false),
            ("node \\${FINCLAW_PROFILE_ROOT}/x.js", false),
            ("node '[x]*?{a,b}.js'", false),
            ("node \\[x].js", false),
            ("node \"x*.js\"", false),
            ("ruby -C s* x.rb", true),
            ("node ~+/x.js", true),
            ("node ~nobody/x.js", true),
            ("node ~/x.js", false),
            ("./x.sh", false),
            ("$(cat cmd.txt)", true),
            ("`cat cmd.txt`", true),
            ("echo $HOME", false),
            ("[ -f x ] && echo y", false),
            ("$X/x.sh", true),
            ("python3 -X *.py x.py", true),
            ("python3 -X '*.py' x.py", false),
            // Double-quoted, an expansion stays one word: the script stays where it is.
            ("python3 -X \"$HOME\" x.py", false),
            ("python3 -X $HOME x.py", true),
            ("node '~+/x.js'", false),
        ] {
            let script = resolve_script(cmd, &env);
            assert_eq!(
                matches!(script, Script::Unresolved(_)),
                unresolved,
                "{cmd}: {script:?}"
            );
        }
        // Unquoted, a root with a blank or a glob character is split or globbed.
        for root in ["/my prof", "/p*", "/p?", "/[p]", "/a\tb"] {
            let env = Env {
                profile_root: PathBuf::from(root),
                workspace: PathBuf::from("/nonexistent-ws"),
            };
            for (cmd, unresolved) in [
                ("node ${FINCLAW_PROFILE_ROOT}/x.js", true),
                ("node $FINCLAW_PROFILE_ROOT/x.js", true),
                ("node \"${FINCLAW_PROFILE_ROOT}/x.js\"", false),
                ("node \"$FINCLAW_PROFILE_ROOT\"/x.js", false),
                ("node '$FINCLAW_PROFILE_ROOT'/x.js", false),
                ("node x.js", false),
            ] {
                let script = resolve_script(cmd, &env);
                assert_eq!(
                    matches!(script, Script::Unresolved(_)),
                    unresolved,
                    "{root}: {cmd}: {script:?}"
                );
            }
        }
    }

    #[test]
    fn the_split_root_is_blamed_only_when_the_root_splits_and_the_script_word_holds_it() {
        let blames_split = |root: &str, cmd: &str| {
            let env = Env {
                profile_root: PathBuf::from(root),
                workspace: PathBuf::from("/nonexistent-ws"),
            };
            let Script::Unresolved(path) = resolve_script(cmd, &env) else {
                panic!("{root}: {cmd}: not unresolved");
            };
            unresolved_why(&path, cmd, &env)
                .0
                .contains("leaves `$FINCLAW_PROFILE_ROOT` unquoted")
        };
        assert!(blames_split(
            "/my prof",
            "node ${FINCLAW_PROFILE_ROOT}/x.js"
        ));
        assert!(blames_split("/p*", "$FINCLAW_PROFILE_ROOT/x.sh"));
        assert!(blames_split(
            "/my prof",
            "sh ${FINCLAW_PROFILE_ROOT}/hooks/${FINCLAW_PROFILE_ROOT}.sh"
        ));
        // A quoted `-C` folder and a flag's value are unknown whatever the root holds: the
        // profile's path is not to blame, and quoting the script path changes nothing.
        for (root, cmd) in [
            ("/p", "ruby -C \"${FINCLAW_PROFILE_ROOT}/lib\" x.rb"),
            ("/p", "ruby -C ${FINCLAW_PROFILE_ROOT} x.rb"),
            ("/p", "node -r ${FINCLAW_PROFILE_ROOT}/pre.js x.js"),
            ("/my prof", "node -r ${FINCLAW_PROFILE_ROOT}/pre.js x.js"),
            ("/my prof", "ruby -C \"${FINCLAW_PROFILE_ROOT}/lib\" x.rb"),
            // Another expansion, or a glob, is unknown whatever the root holds.
            ("/my prof", "sh a$FINCLAW_PROFILE_ROOT/x.sh"),
            ("/my prof", "sh $FINCLAW_PROFILE_ROOTX/x.sh"),
            ("/my prof", "sh ${FINCLAW_PROFILE_ROOT}/$PWD/x.sh"),
            ("/my prof", "sh ${FINCLAW_PROFILE_ROOT}/*.sh"),
            ("/my prof", "sh $PWD/x.sh"),
        ] {
            assert!(!blames_split(root, cmd), "{root}: {cmd}");
        }
    }

    /// `NAME=value` before the program, and `env`, `exec`, `command`, `nohup`, `setsid`
    /// that run the words after them, leave the script the one the program runs (it was
    /// taken as no script at all, so its bytes were outside the hash); other programs that
    /// run a command given to them make the script unknown.
    #[test]
    fn assignments_and_wrappers_before_the_program_are_seen_through() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.js"), "process.exit(0);\n").unwrap();
        let env = Env {
            profile_root: PathBuf::from("/nonexistent-prof"),
            workspace: dir.path().to_path_buf(),
        };
        let file = Script::File(dir.path().join("x.js"));
        for cmd in [
            "FOO=1 node x.js",
            "FOO='a b' BAR=\"$HOME\" node x.js",
            "env node x.js",
            "env A=1 B=2 node x.js",
            "exec node x.js",
            "command node x.js",
            "nohup node x.js",
            "setsid node x.js",
            "A=1 exec env B=2 node x.js",
        ] {
            assert_eq!(resolve_script(cmd, &env), file, "{cmd}");
        }
        for cmd in [
            "env -i node x.js",
            "exec -a name node x.js",
            "nice -n 5 node x.js",
            "timeout 5 node x.js",
            "sudo node x.js",
            "xargs node x.js",
            "A=1 stdbuf -oL node x.js",
        ] {
            let script = resolve_script(cmd, &env);
            assert!(matches!(script, Script::Unresolved(_)), "{cmd}: {script:?}");
            let (why, fix) = unresolved_why("", cmd, &env);
            assert!(why.contains("which runs another program"), "{cmd}: {why}");
            assert!(fix.contains("NAME=value node x.js"), "{cmd}: {fix}");
        }
        // Quoted, `FOO=1` is a program's name, not an assignment; alone, there is no program.
        for cmd in ["\"FOO=1\" node x.js", "FOO=1", "env", "env A=1"] {
            assert_eq!(resolve_script(cmd, &env), Script::None, "{cmd}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_profile_root_is_expanded_as_the_path_it_is() {
        use std::os::unix::ffi::OsStrExt as _;
        let root = PathBuf::from(std::ffi::OsStr::from_bytes(b"/p\xff\xfeq"));
        let env = Env {
            profile_root: root.clone(),
            workspace: PathBuf::from("/ws"),
        };
        let base = Path::new("/ws");
        assert_eq!(
            expand(
                "${FINCLAW_PROFILE_ROOT}/hooks/x/main.js",
                &env,
                base,
                true,
                &|_| true
            ),
            root.join("hooks/x/main.js")
        );
        assert_eq!(
            expand(
                "$FINCLAW_PROFILE_ROOT/a${FINCLAW_PROFILE_ROOT}",
                &env,
                base,
                true,
                &|_| true
            ),
            PathBuf::from(std::ffi::OsStr::from_bytes(b"/p\xff\xfeq/a/p\xff\xfeq"))
        );
        assert_eq!(
            expand("scripts/main.js", &env, base, true, &|_| true),
            PathBuf::from("/ws/scripts/main.js")
        );
    }

    #[cfg(unix)]
    #[test]
    fn old_keys_fold_only_onto_the_file_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for folder in ["w/p", "w/x", "other/sub", "other/p"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        for file in ["w/p/hooks.json", "other/p/hooks.json"] {
            std::fs::write(root.join(file), "{}").unwrap();
        }
        let key = |file: &str| format!("{}/{file}#PreToolUse#id:gate", root.display());
        let entry = |at: &str| Entry {
            hash: Sha256::of(b"x"),
            trusted_at: at.into(),
            extra: Map::new(),
        };
        let fold = |keys: &[(&str, &str)]| {
            let mut file = TrustFile::default();
            for (k, at) in keys {
                file.handlers.insert(key(k), entry(at));
            }
            file.fold_key_paths();
            file.handlers
                .into_iter()
                .map(|(k, e)| (k, e.trusted_at))
                .collect::<Vec<_>>()
        };
        // An old key folds; beside a new one, the entry trusted last stays, alone.
        assert_eq!(
            fold(&[("w/x/../p/hooks.json", "1")]),
            [(key("w/p/hooks.json"), "1".into())]
        );
        assert_eq!(
            fold(&[("w/x/../p/hooks.json", "2"), ("w/p/hooks.json", "1")]),
            [(key("w/p/hooks.json"), "2".into())]
        );
        assert_eq!(
            fold(&[("w/x/../p/hooks.json", "1"), ("w/p/hooks.json", "2")]),
            [(key("w/p/hooks.json"), "2".into())]
        );
        // A key whose folder is gone names nothing (the kernel cannot walk it): it stays.
        std::fs::remove_dir(root.join("w/x")).unwrap();
        assert_eq!(
            fold(&[("w/x/../p/hooks.json", "1")]),
            [(key("w/x/../p/hooks.json"), "1".into())]
        );
        // Through a link, `..` leaves the link's target: the key stays as it is, and once
        // the link is gone it names nothing, so it never folds onto `w/p` (found by review).
        std::os::unix::fs::symlink(root.join("other/sub"), root.join("w/lnk")).unwrap();
        let linked = [("w/lnk/../p/hooks.json", "1")];
        assert_eq!(fold(&linked), [(key("w/lnk/../p/hooks.json"), "1".into())]);
        std::fs::remove_file(root.join("w/lnk")).unwrap();
        assert_eq!(fold(&linked), [(key("w/lnk/../p/hooks.json"), "1".into())]);
    }

    #[test]
    fn canonical_form_is_stable_and_documented() {
        let h =
            json!({"type": "command", "command": "node x.js", "failurePolicy": "deny", "id": "a"});
        let s = Subject {
            event: "PreToolUse",
            matcher: Some("exec"),
            handler: &h,
        };
        assert_eq!(
            canonical(&s, None),
            r#"{"async":false,"command":"node x.js","event":"PreToolUse","failurePolicy":"deny","matcher":"exec","script":null,"timeout":30,"v":1}"#
        );
        let stop = Subject {
            event: "Stop",
            matcher: None,
            handler: &json!({"command": "x", "timeout": 5, "async": true}),
        };
        assert_eq!(
            canonical(&stop, None),
            r#"{"async":true,"command":"x","event":"Stop","matcher":null,"script":null,"stop":"stop:v1","timeout":5,"v":1}"#
        );
    }

    #[test]
    fn every_covered_field_changes_the_hash() {
        let base = json!({"type": "command", "command": "node x.js", "timeout": 10});
        let s = |h: &Value, m: Option<&str>, e: &str| {
            Sha256::of(
                canonical(
                    &Subject {
                        event: e,
                        matcher: m,
                        handler: h,
                    },
                    None,
                )
                .as_bytes(),
            )
        };
        let h0 = s(&base, Some("exec"), "PreToolUse");
        let mut variants = vec![
            s(&base, Some("write"), "PreToolUse"),
            s(&base, None, "PreToolUse"),
            s(&base, Some("exec"), "PostToolUse"),
        ];
        for (k, v) in [
            ("command", json!("node y.js")),
            ("timeout", json!(11)),
            ("async", json!(true)),
            ("failurePolicy", json!("deny")),
        ] {
            let mut h = base.clone();
            h[k] = v;
            variants.push(s(&h, Some("exec"), "PreToolUse"));
        }
        for v in variants {
            assert_ne!(v, h0);
        }
        // Fields outside the hash (statusMessage, id) do not change it.
        let mut h = base.clone();
        h["statusMessage"] = json!("x");
        assert_eq!(s(&h, Some("exec"), "PreToolUse"), h0);
    }
}

/// The selection `trust` and `revoke` act on.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Handlers with these ids.
    Ids(Vec<String>),
    /// Handlers with these trust keys (see [`key`]): the way to name one without an id, or
    /// a workspace handler whose id the profile has too.
    Keys(Vec<String>),
    /// The profile's handlers stamped with this recipe id.
    Recipe(String),
    /// Every handler.
    All,
}

/// What `trust` or `revoke` did to one handler.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The trust key.
    pub key: String,
    /// Handler id, if any.
    pub id: Option<String>,
    /// Event.
    pub event: String,
    /// The hash recorded (`trust`) or forgotten (`revoke`: the one the trust file held,
    /// not the handler's now); for a handler left as it was, its hash now.
    pub hash: Sha256,
    /// `trusted`, `revoked`, `unchanged`, or why it was refused.
    pub result: String,
    /// What to look at in a handler trusted all the same: a script its group can change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

fn selected(h: &crate::list::Listed, sel: &Selection) -> bool {
    match sel {
        Selection::All => true,
        // Install puts a recipe's handlers in the profile only: one stamped so in a
        // workspace (a repository's) is not the recipe's, and is trusted by its id.
        Selection::Recipe(r) => h.source == "profile" && h.recipe.as_deref() == Some(r.as_str()),
        Selection::Ids(ids) => h.id.as_ref().is_some_and(|id| ids.contains(id)),
        Selection::Keys(keys) => keys.contains(&h.key),
    }
}

/// The command that trusts the one handler with trust key `key` (see [`key`]), on one line
/// whatever the key's path holds.
pub fn trust_command(key: &str) -> String {
    format!(
        "hookpack trust --key {}",
        crate::advice::quote_on_one_line(key)
    )
}

/// Whether `h` is a workspace handler whose id a profile handler has too. A handler id
/// trusts the profile's handler then, never the workspace's: a cloned repository could
/// otherwise name its handler after one the user trusts by id (as `run` advises), and be
/// trusted with it. `--all` takes it.
pub fn shadowed(h: &crate::list::Listed, handlers: &[crate::list::Listed]) -> bool {
    h.source != "profile"
        && h.id.as_ref().is_some_and(|id| {
            (handlers.iter()).any(|o| o.source == "profile" && o.id.as_ref() == Some(id))
        })
}

/// The lock every change to the trust file holds.
fn lock(profile: &crate::profile::Profile) -> Result<crate::profile::Lock, Error> {
    crate::profile::require_home_folder(&profile.home)?;
    crate::profile::Lock::acquire_file(&lock_file(profile), crate::profile::lock_wait())
}

/// The file [`lock`] locks, made by the first change to the trust file.
pub(crate) fn lock_file(profile: &crate::profile::Profile) -> std::path::PathBuf {
    profile.home.join(".hookpack-trust.lock")
}

/// Drops the trust entries `keys` (see [`key`]), for handlers that no longer exist: those of
/// a removed recipe. Trust is never carried over to whatever later takes their place.
pub fn forget(profile: &crate::profile::Profile, keys: &[String]) -> Result<(), Error> {
    let path = profile.trust_file();
    // A `trust` holding the lock may be about to write the first trust file, with entries
    // of handlers it read before they went: its lock file tells, and the lock waits for it.
    if keys.is_empty() || !(path.exists() || lock_file(profile).exists()) {
        return Ok(());
    }
    let _lock = lock(profile)?;
    if !path.exists() {
        return Ok(());
    }
    let mut file = TrustFile::read(&path)?;
    let before = file.handlers.len();
    for k in keys {
        file.handlers.remove(k);
    }
    if file.handlers.len() != before {
        file.write(&path)?;
    }
    Ok(())
}

/// Trusts (or, with `revoke`, forgets) the selected handlers of the profile and workspace.
/// Invalid handlers and handlers whose script is missing are never trusted.
pub fn apply(
    profile: &crate::profile::Profile,
    workspace: &Path,
    sel: &Selection,
    revoke: bool,
) -> Result<Vec<Change>, Error> {
    // Most likely a misspelt name: "no handler matched" would hide that.
    profile.require_folder()?;
    let path = profile.trust_file();
    // The profile's first (install, update and remove take it, then this one): an install
    // swapping a recipe's files in is waited out, so no hash takes the new script beside
    // the old entry.
    let _profile_lock = crate::profile::Lock::acquire_shared(profile, crate::profile::lock_wait())?;
    let _lock = lock(profile)?;
    let mut file = TrustFile::read(&path)?;
    if file.schema.is_empty() {
        file.schema = SCHEMA.into();
    }
    let workspace = crate::fs::absolute(workspace);
    let handlers = crate::list::all_handlers(profile, &workspace, &file)?;
    let env = crate::list::env_of(profile, &workspace);
    // A change a crash interrupted has its recipe's files half way: a hash taken now could
    // be of files recovery replaces, leaving the handler changed since trusted after it.
    let pending = crate::install::interrupted_change(profile);
    let mut changes = Vec::new();
    for h in handlers.iter().filter(|h| selected(h, sel)) {
        let mut c = Change {
            key: h.key.clone(),
            id: h.id.clone(),
            event: h.event.clone(),
            hash: h.hash,
            result: String::new(),
            warning: None,
        };
        if revoke {
            // The hash it forgets, which the script's since an edit is not.
            c.result = match file.handlers.remove(&h.key) {
                Some(forgotten) => {
                    c.hash = forgotten.hash;
                    "revoked".into()
                }
                None => "not trusted".into(),
            };
        } else {
            // Handlers without an `id` are keyed by their command: two that run one command
            // in one event share a key, and its one entry cannot hold both their hashes.
            let clash = handlers.iter().find(|o| {
                o.key == h.key
                    && o.pointer != h.pointer
                    && o.status != Status::Invalid
                    && o.hash != h.hash
            });
            let by_id = matches!(sel, Selection::Ids(_));
            let interrupted = (pending.as_ref())
                .filter(|p| h.source == "profile" && h.recipe.as_deref() == Some(p.id.as_str()));
            c.result = match (h.status, clash) {
                // Nothing is written for it: no hash of half-way files is taken.
                (Status::Trusted, _) if interrupted.is_some() => "unchanged".into(),
                _ if interrupted.is_some() => format!(
                    "refused: a change of `{}` was interrupted, and its files are not yet those \
                     recovery leaves; run `hookpack doctor --fix` (it finishes or undoes the \
                     change), then trust it",
                    h.recipe.as_deref().unwrap_or_default()
                ),
                _ if by_id && shadowed(h, &handlers) => format!(
                    "refused: the profile has a handler with id `{}` too, and a handler id \
                     takes the profile's; trust this workspace handler with `{}`, or give it an \
                     id of its own",
                    h.id.as_deref().unwrap_or_default(),
                    trust_command(&h.key)
                ),
                (Status::Invalid, _) => format!("refused: invalid ({})", h.problems.join("; ")),
                (Status::ScriptMissing, _) => "refused: its script is missing".into(),
                (Status::ScriptUnknown, _) => unresolved_script(&h.script, &h.command, &env),
                (Status::ScriptWritableByOthers, _) => match &h.script {
                    Script::File(p) => {
                        let why = script_exposure(p).refusal(p);
                        format!("refused: {}", why.unwrap_or_else(|| EXPOSED_WHY.into()))
                    }
                    _ => format!("refused: {EXPOSED_WHY}"),
                },
                (Status::Trusted, _) => "unchanged".into(),
                (_, Some(o)) => format!(
                    "refused: its trust key is also that of the handler at {} (one event, one \
                     command, no `id`), whose hash differs, and a trust entry holds one hash; \
                     give each an `id`",
                    o.pointer
                ),
                (Status::Untrusted | Status::Modified, None) => {
                    let secs = crate::catalog::now_secs();
                    file.handlers.insert(
                        h.key.clone(),
                        Entry {
                            hash: h.hash,
                            trusted_at: crate::catalog::format_timestamp(secs),
                            extra: Map::new(),
                        },
                    );
                    if let Script::File(p) = &h.script {
                        c.warning = script_exposure(p).group_warning(p);
                    }
                    // What the user trusts may run more often than its group seems to say.
                    for note in &h.group_notes {
                        c.warning = Some(match c.warning.take() {
                            Some(w) => format!("{w}; {note}"),
                            None => note.clone(),
                        });
                    }
                    "trusted".into()
                }
            };
        }
        changes.push(c);
    }
    if let Selection::Recipe(r) = sel {
        if changes.is_empty() {
            return Err(Error::RecipeHandlersNotFound {
                id: r.clone(),
                near: crate::event::nearest(
                    r,
                    (handlers.iter())
                        .filter(|h| h.source == "profile")
                        .filter_map(|h| h.recipe.as_deref()),
                    |h| h.to_string(),
                )
                .map(String::from),
            });
        }
    }
    if let Selection::Keys(keys) = sel {
        if let Some(key) = keys.iter().find(|k| !handlers.iter().any(|h| &&h.key == k)) {
            return Err(Error::HandlerKeyNotFound { key: key.clone() });
        }
    }
    if let Selection::Ids(ids) = sel {
        for id in ids {
            if !handlers
                .iter()
                .any(|h| h.id.as_deref() == Some(id.as_str()))
            {
                let meant = if handlers.iter().any(|h| h.recipe.as_deref() == Some(id)) {
                    Some(crate::error::HandlerMeant::Recipe)
                } else {
                    crate::event::nearest(
                        id,
                        handlers.iter().filter_map(|h| h.id.as_deref()),
                        |h| h.to_string(),
                    )
                    .map(|h| crate::error::HandlerMeant::Near(h.to_string()))
                };
                return Err(Error::HandlerNotFound {
                    id: id.clone(),
                    meant,
                });
            }
        }
    }
    if changes
        .iter()
        .any(|c| c.result == "trusted" || c.result == "revoked")
    {
        file.write(&path)?;
    }
    Ok(changes)
}
