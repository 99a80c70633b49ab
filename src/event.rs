//! The lifecycle events hosts know, and what each one allows.

use std::fmt;

/// A hook event, as named in `hooks.json`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Event {
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    UserPromptSubmit,
    SessionStart,
    SessionEnd,
    SubagentStart,
    SubagentStop,
    Stop,
    PreCompact,
    PostCompact,
    Interrupt,
}

impl Event {
    /// Every event, in the order hosts document them.
    pub const ALL: [Event; 12] = [
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PostToolUse,
        Event::UserPromptSubmit,
        Event::SessionStart,
        Event::SessionEnd,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::Stop,
        Event::PreCompact,
        Event::PostCompact,
        Event::Interrupt,
    ];

    /// The event's name in `hooks.json`.
    pub fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PostToolUse => "PostToolUse",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::SessionStart => "SessionStart",
            Event::SessionEnd => "SessionEnd",
            Event::SubagentStart => "SubagentStart",
            Event::SubagentStop => "SubagentStop",
            Event::Stop => "Stop",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
            Event::Interrupt => "Interrupt",
        }
    }

    /// Looks an event up by its exact name.
    pub fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The event `name` most likely meant, for "did you mean" hints: one that differs only
    /// in case or punctuation, else the closest within two edits (`PreToolUs`).
    pub fn suggest(name: &str) -> Option<Event> {
        let folded: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        nearest(&folded, Event::ALL, |e| e.name().to_ascii_lowercase())
    }

    /// Tool events: the matcher is tested against the tool name.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            Event::PreToolUse | Event::PermissionRequest | Event::PostToolUse
        )
    }

    /// Events a handler can block (exit 2 with a reason, or `"decision": "block"`).
    pub fn can_block(self) -> bool {
        self.is_tool_event() || self == Event::UserPromptSubmit
    }

    /// Events a handler can allow, deny or ask on (`permissionDecision`), and that a failed
    /// handler under `failurePolicy: deny` denies.
    pub fn takes_permission(self) -> bool {
        matches!(self, Event::PreToolUse | Event::PermissionRequest)
    }

    /// Events whose `additionalContext` hosts read (seeds/004: SessionStart's on the first
    /// infer, PostToolUse's appended to the result); the others' is not read.
    pub fn takes_context(self) -> bool {
        matches!(self, Event::SessionStart | Event::PostToolUse)
    }

    /// Events whose stdin holds the bounded `turn` object (seeds/004).
    pub fn has_turn(self) -> bool {
        matches!(
            self,
            Event::UserPromptSubmit | Event::PreToolUse | Event::PostToolUse | Event::Stop
        )
    }

    /// Hosts list and hash these, but never spawn their handlers.
    pub fn is_spawned(self) -> bool {
        !matches!(
            self,
            Event::PreCompact | Event::PostCompact | Event::Interrupt
        )
    }

    /// `async: true` is rejected on events whose outcome the host waits for.
    pub fn allows_async(self) -> bool {
        !matches!(
            self,
            Event::PreToolUse
                | Event::PermissionRequest
                | Event::UserPromptSubmit
                | Event::SessionStart
        )
    }

    /// `failurePolicy` is accepted on this event only.
    pub fn allows_failure_policy(self) -> bool {
        self == Event::PreToolUse
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The first of `candidates` closest to `word` within two edits, each compared as `name`
/// spells it. Names are short: a word over 64 bytes is no near miss (and would cost time).
pub(crate) fn nearest<T>(
    word: &str,
    candidates: impl IntoIterator<Item = T>,
    name: impl Fn(&T) -> String,
) -> Option<T> {
    if word.len() > 64 {
        return None;
    }
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name(&c), word), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` (did you mean `NEAR`?)` when one of `known` is within two edits of `word`, else
/// nothing: for the messages about a misspelt field.
pub(crate) fn did_you_mean(word: &str, known: &[&str]) -> String {
    match nearest(word, known.iter().copied(), |k| k.to_string()) {
        // Two edits turn any two-letter word into `id`: a short word is near with one.
        Some(k) if word.chars().count() > 4 || edit_distance(k, word) <= 1 => {
            format!(" (did you mean `{k}`?)")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance between two short strings, in chars.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::Event;

    #[test]
    fn near_misses_are_suggested_and_far_ones_are_not() {
        assert_eq!(Event::suggest("pretooluse"), Some(Event::PreToolUse));
        assert_eq!(Event::suggest("PreToolUs"), Some(Event::PreToolUse));
        assert_eq!(Event::suggest("SesionEnd"), Some(Event::SessionEnd));
        assert_eq!(Event::suggest("Deploy"), None);
    }
}
