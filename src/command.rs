//! What a handler's `command` runs: shell words, the interpreter, and the script file.
//!
//! Hosts run commands with `$SHELL -lc`, so a command is split here the way a POSIX shell
//! splits words (quotes and backslashes), never with `split(' ')`: `node "my dir/x.js"` runs
//! one script, not two. The script a command resolves to is what `validate` checks for
//! existence, what `install` rewrites to the installed path, and whose bytes the trust hash
//! covers.

/// Interpreters that take a script path after their flags, by bare name only.
pub const INTERPRETERS: [&str; 9] = [
    "node", "python3", "python", "bash", "sh", "deno", "bun", "ruby", "perl",
];

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
}

/// A command split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// The words, in order.
    pub words: Vec<Word>,
    /// Unquoted shell syntax beyond plain words: `;`, a line break, `|`, `&`, `<`, `>`, `(`,
    /// `)`, `$`, or a backquote (the first one met; [`describe`] names it). Such a command is
    /// more than "run this script", so only its first simple command is understood.
    pub shell_syntax: Option<char>,
}

/// Names a [`Words::shell_syntax`] character for a diagnostic, quoted; a line break is
/// written `\n`, as a raw one would split the message in two.
pub fn describe(c: char) -> String {
    match c {
        '\n' => "`\\n`, a line break".to_string(),
        c => format!("`{c}`"),
    }
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
            })
        }
        match c {
            ' ' | '\t' | '\n' => {
                // A line break ends the command as `;` does: `sh -lc` runs the next line too.
                if c == '\n' {
                    shell_syntax.get_or_insert(c);
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
                            shell_syntax.get_or_insert(c);
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
                shell_syntax.get_or_insert(c);
                if matches!(c, '$' | '`') {
                    let w = word(&mut current, i);
                    w.text.push(c);
                    w.end = i + 1;
                } else if let Some(w) = current.take() {
                    words.push(w);
                }
            }
            c => {
                let w = word(&mut current, i);
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
    },
    /// Code given inline (`node -e …`, `bash -c …`): there is no script file.
    Inline,
    /// An interpreter with no script argument, or an empty command.
    Nothing,
}

/// Finds the script a split command runs: after an optional interpreter and its flags (and
/// the `run` subcommand of `deno` and `bun`), the first word.
pub fn target(words: &Words) -> Target {
    let w = &words.words;
    let Some(first) = w.first() else {
        return Target::Nothing;
    };
    // Only a bare name, looked up on the host's PATH, is an interpreter. `bin/node` is
    // found from the working directory and `/tmp/x/python3` can be any program: either is
    // the file the command runs, so it is the script, held to the script rules.
    let base = first.text.as_str();
    if !INTERPRETERS.contains(&base) {
        return Target::Script {
            interpreter: None,
            word: 0,
            path: first.text.clone(),
        };
    }
    let mut i = 1;
    if matches!(base, "deno" | "bun") && w.get(1).is_some_and(|x| x.text == "run") {
        i = 2;
    }
    while let Some(word) = w.get(i) {
        let t = word.text.as_str();
        if matches!(t, "-e" | "--eval" | "-p" | "--print" | "-c")
            || (base == "perl" && t.starts_with("-e"))
        {
            return Target::Inline;
        }
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += 1;
    }
    match w.get(i) {
        Some(word) if word.text != "-" => Target::Script {
            interpreter: Some(first.text.clone()),
            word: i,
            path: word.text.clone(),
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
            split("node a.js | tee log").unwrap().shell_syntax,
            Some('|')
        );
        assert_eq!(split("node $HOME/a.js").unwrap().shell_syntax, Some('$'));
        assert_eq!(split("node 'a;b.js'").unwrap().shell_syntax, None);
    }

    #[test]
    fn an_unquoted_line_break_is_shell_syntax() {
        // `sh -lc` runs each line as its own command, exactly as after `;`.
        let w = split("node scripts/main.js\ntouch /tmp/PWNED").unwrap();
        assert_eq!(w.shell_syntax, Some('\n'));
        assert_eq!(texts("node a.js\nb"), ["node", "a.js", "b"]);
        assert_eq!(describe('\n'), "`\\n`, a line break");
        assert_eq!(describe(';'), "`;`");
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
        assert_eq!(t("node -e 'console.log(1)'"), Target::Inline);
        assert_eq!(t("bash -c 'echo hi'"), Target::Inline);
        assert_eq!(t("node"), Target::Nothing);
        assert_eq!(t(""), Target::Nothing);
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
