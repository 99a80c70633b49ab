//! The commands hookpack's messages advise, completed with what the command printing them
//! was given: its `--profile DIR` and `--workspace DIR`.
//!
//! Advice is a command in backquotes (`hookpack doctor --fix`, `hookpack install
//! ID@VERSION`), written for the profile and workspace hookpack finds by itself
//! (`$FINCLAW_PROFILE`, the `active-profile` file, `default`; the current folder). Run as
//! printed after a command given `--profile DIR`, it would act on another profile than DIR
//! (restore nothing there, remove a recipe from another); after `--workspace DIR`, on the
//! handlers of the folder it is typed in. Each such command gets the options it lacks,
//! absolute and quoted for a shell, where messages leave (the printer and the error
//! report), so no piece of advice can miss them. Lines and JSON values that show what
//! handlers and hooks.json files wrote (commands, answers, stderr, trust keys) are left as
//! written. The completion goes by form: text a user wrote in advice's form that a message
//! quotes (a handler id given as `hookpack list x`) is completed too, on display only.

use serde_json::Value;
use std::path::Path;

/// The verbs whose commands act on a profile, and so take `--profile`.
const PROFILE_VERBS: [&str; 8] = [
    "install", "update", "remove", "list", "trust", "revoke", "run", "doctor",
];

/// The verbs whose commands read a workspace's `.finclaw/hooks.json`, and so take
/// `--workspace`.
const WORKSPACE_VERBS: [&str; 5] = ["list", "trust", "revoke", "run", "doctor"];

/// The keys of report objects whose strings are messages for people (and may hold advice),
/// not data: `state` is why `run` skipped a handler, `result` why `trust` refused one.
const MESSAGE_KEYS: [&str; 7] = [
    "message", "causes", "warnings", "notes", "error", "state", "result",
];

/// The keys of report objects whose values a handler wrote (`run`'s rewritten tool input):
/// shown as written, whatever keys they hold.
const HANDLER_KEYS: [&str; 1] = ["updated_input"];

/// The options advice must carry: empty for a command given neither `--profile` nor
/// `--workspace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Advice {
    /// ` --profile DIR`, or empty.
    profile: String,
    /// ` --workspace DIR`, or empty.
    workspace: String,
}

impl Advice {
    /// Advice for a command given these `--profile` and `--workspace` folders.
    pub fn new(profile: Option<&Path>, workspace: Option<&Path>) -> Advice {
        Advice {
            profile: profile.map(|d| option("--profile", d)).unwrap_or_default(),
            workspace: workspace
                .map(|d| option("--workspace", d))
                .unwrap_or_default(),
        }
    }

    /// Whether there is nothing to add.
    pub fn is_empty(&self) -> bool {
        self.profile.is_empty() && self.workspace.is_empty()
    }

    /// `text` with each command it quotes in backquotes given the options it lacks. A command
    /// is found by a backquote opening `hookpack `, not by pairing every backquote: a path the
    /// text names before it (the profile's own) may hold one. Only a backquote at the start
    /// of the text or after a blank or `(` opens one, as in all of hookpack's advice: a path
    /// or a handler's command that a message quotes (`…/`hookpack list x`/hooks.json`,
    /// `s/`hookpack doctor`.js`) is the user's, and shown as written. A command ends at the
    /// first backquote outside the single quotes a path or a pin in it is quoted in (an
    /// archive `'/a`b/x.tar.gz'`).
    pub fn complete(&self, text: &str) -> String {
        if self.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len() + self.profile.len());
        // `text[..copied]` is in `out`; the next command is looked for from `from`.
        let (mut copied, mut from) = (0, 0);
        while let Some(found) = text[from..].find("`hookpack ") {
            let open = from + found;
            from = open + 1;
            let opens =
                (text[..open].chars().next_back()).is_none_or(|c| c.is_whitespace() || c == '(');
            if !opens {
                continue;
            }
            let Some(len) = command_len(&text[open + 1..]) else {
                break;
            };
            let end = open + 1 + len;
            let quoted = &text[open + 1..end];
            out.push_str(&text[copied..end]);
            if let Some(verb) = hookpack_verb(quoted) {
                if PROFILE_VERBS.contains(&verb) && !names(quoted, "--profile") {
                    out.push_str(&self.profile);
                }
                if WORKSPACE_VERBS.contains(&verb) && !names(quoted, "--workspace") {
                    out.push_str(&self.workspace);
                }
            }
            copied = end;
            from = end + 1;
        }
        out.push_str(&text[copied..]);
        out
    }

    /// [`Advice::complete`] over every string under a message key of `value` (`message`, `causes`, …: the
    /// key's own string, or the strings of its list); an object under such a key is walked
    /// as any other, and what a handler wrote (`updated_input`) not at all.
    pub fn complete_json(&self, value: &mut Value) {
        self.complete_in(value, false);
    }

    fn complete_in(&self, value: &mut Value, in_message: bool) {
        match value {
            Value::String(s) if in_message => *s = self.complete(s),
            Value::Array(items) => {
                for v in items {
                    let message = in_message && v.is_string();
                    self.complete_in(v, message);
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if !HANDLER_KEYS.contains(&k.as_str()) {
                        self.complete_in(v, MESSAGE_KEYS.contains(&k.as_str()));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The length of the command `s` starts with, up to the backquote that closes it: the first
/// one outside single quotes (`'…'`, `$'…'`, as [`crate::command::shell_quote`] and
/// [`option`] write a path), or, where those quotes never close, the first one.
fn command_len(s: &str) -> Option<usize> {
    // `Some(escapes)`: inside single quotes, `$'…'` ones when `escapes`.
    let mut quote: Option<bool> = None;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (None, '`') => return Some(i),
            (None | Some(true), '\\') => {
                chars.next();
            }
            (None, '$') if chars.peek().is_some_and(|&(_, q)| q == '\'') => {
                chars.next();
                quote = Some(true);
            }
            (None, '\'') => quote = Some(false),
            (Some(_), '\'') => quote = None,
            _ => {}
        }
    }
    s.find('`')
}

/// The verb of `command` when it is a hookpack command (`hookpack VERB …`).
fn hookpack_verb(command: &str) -> Option<&str> {
    let mut words = command.split_whitespace();
    (words.next() == Some("hookpack"))
        .then(|| words.next())
        .flatten()
}

/// Whether `command` gives the option `name` already: as a word of its own, not inside a
/// quoted path that happens to hold it (a folder named `a --profile b`).
fn names(command: &str, name: &str) -> bool {
    let given = |w: &str| w == name || w.strip_prefix(name).is_some_and(|v| v.starts_with('='));
    match crate::command::split(command) {
        Ok(words) => words.words.iter().any(|w| !w.quoted && given(&w.text)),
        Err(_) => command.split_whitespace().any(given),
    }
}

/// ` NAME DIR`, DIR absolute and quoted for a shell (see [`quote_on_one_line`]).
fn option(name: &str, dir: &Path) -> String {
    let abs = crate::fs::absolute(dir);
    format!(" {name} {}", quote_on_one_line(&abs.to_string_lossy()))
}

/// `s` quoted for a shell, to be printed inside a line of advice: as
/// [`crate::command::shell_quote`] does, but a text holding control characters (a line
/// break) is written `$'…'`, with them escaped, so that the advice stays on its line and
/// reads back as `s` (in bash, zsh and ksh).
pub fn quote_on_one_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return crate::command::shell_quote(s);
    }
    let mut quoted = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' | '\'' => {
                quoted.push('\\');
                quoted.push(c);
            }
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => {
                let mut utf8 = [0u8; 4];
                for b in c.encode_utf8(&mut utf8).bytes() {
                    quoted.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => quoted.push(c),
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_names_the_profile_and_workspace_it_was_given_for() {
        let a = Advice::new(Some(Path::new("/p/my demo")), None);
        for (text, want) in [
            // Each command acting on a profile, wherever it stands in the text.
            (
                "interrupted; `hookpack doctor --fix` finishes it",
                "interrupted; `hookpack doctor --fix --profile '/p/my demo'` finishes it",
            ),
            (
                "`hookpack remove a`, then `hookpack install a@0.1.0 --index x`",
                "`hookpack remove a --profile '/p/my demo'`, then \
                 `hookpack install a@0.1.0 --index x --profile '/p/my demo'`",
            ),
            // Commands that take no profile, one naming its own, and other quotes: as they are.
            (
                "`hookpack catalog verify` finds it; `hookpack test dir` runs it",
                "`hookpack catalog verify` finds it; `hookpack test dir` runs it",
            ),
            (
                "`hookpack install a --profile q` and `hookpack run X --profile=q`",
                "`hookpack install a --profile q` and `hookpack run X --profile=q`",
            ),
            (
                "the handler `node main.js` failed",
                "the handler `node main.js` failed",
            ),
            // An unclosed quote is left alone.
            ("odd `hookpack doctor", "odd `hookpack doctor"),
            // A backquote in a path before the advice does not hide it.
            (
                "/p/a`b is gone; `hookpack doctor` finds why",
                "/p/a`b is gone; `hookpack doctor --profile '/p/my demo'` finds why",
            ),
            // A command quoted inside a path or a word is the user's, not advice.
            (
                "/w/`hookpack list x`/hooks.json: `s/`hookpack doctor`.js` (`hookpack doctor`)",
                "/w/`hookpack list x`/hooks.json: `s/`hookpack doctor`.js` \
                 (`hookpack doctor --profile '/p/my demo'`)",
            ),
            // A backquote in a quoted path is the path's; the option goes after the command.
            (
                "`hookpack install --archive '/a`b/x.tar.gz' --sha256 0` restores it",
                "`hookpack install --archive '/a`b/x.tar.gz' --sha256 0 --profile '/p/my demo'` \
                 restores it",
            ),
            (
                "`hookpack install --archive $'/a\\'`b' --index 'it'\\''s`'`",
                "`hookpack install --archive $'/a\\'`b' --index 'it'\\''s`' --profile '/p/my demo'`",
            ),
            // An option inside a quoted path is the path's: the command still lacks it.
            (
                "`hookpack trust --key '/w/a --profile b/hooks.json#Stop#id:x'`",
                "`hookpack trust --key '/w/a --profile b/hooks.json#Stop#id:x' \
                 --profile '/p/my demo'`",
            ),
            ("", ""),
        ] {
            assert_eq!(a.complete(text), want, "{text}");
        }
        // The workspace goes to the verbs that read one.
        let a = Advice::new(Some(Path::new("/p")), Some(Path::new("/w")));
        assert_eq!(
            a.complete(
                "`hookpack trust --all`, `hookpack install a`, `hookpack list --workspace v`"
            ),
            "`hookpack trust --all --profile /p --workspace /w`, \
             `hookpack install a --profile /p`, `hookpack list --workspace v --profile /p`"
        );
        let a = Advice::new(None, Some(Path::new("/w")));
        assert_eq!(
            a.complete("`hookpack run X` or `hookpack remove a`"),
            "`hookpack run X --workspace /w` or `hookpack remove a`"
        );
        // Control characters are escaped, so the advice stays on one line.
        assert_eq!(
            Advice::new(Some(Path::new("/p/a\nb'c\\d\u{1b}")), None).profile,
            r" --profile $'/p/a\nb\'c\\d\x1b'"
        );
        // Given neither, advice is left as it is.
        assert!(Advice::new(None, None).is_empty());
        assert_eq!(
            Advice::default().complete("`hookpack doctor`"),
            "`hookpack doctor`"
        );
    }

    #[test]
    fn json_reports_are_completed_in_messages_only() {
        let mut v = serde_json::json!({
            "message": "run `hookpack doctor`",
            "causes": ["`hookpack list` shows them"],
            "command": "`hookpack list`",
            "diagnostics": [{"message": "`hookpack remove a` drops it", "file": "`hookpack run`"}],
            "warnings": ["`hookpack update a`"],
            "error": {"message": "`hookpack doctor`", "kind": "`hookpack list`"},
            "outdated": [{"error": "`hookpack install a`"}],
        });
        Advice::new(Some(Path::new("/p")), None).complete_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({
                "message": "run `hookpack doctor --profile /p`",
                "causes": ["`hookpack list --profile /p` shows them"],
                "command": "`hookpack list`",
                "diagnostics": [{"message": "`hookpack remove a --profile /p` drops it", "file": "`hookpack run`"}],
                "warnings": ["`hookpack update a --profile /p`"],
                "error": {"message": "`hookpack doctor --profile /p`", "kind": "`hookpack list`"},
                "outdated": [{"error": "`hookpack install a --profile /p`"}],
            })
        );
    }
}
