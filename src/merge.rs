//! Merging a recipe's handlers into a user's `hooks.json`, and taking them out again.
//!
//! Pure functions on [`serde_json::Value`] (which keeps key order), so everything hookpack
//! does not own keeps its order, fields and values. A recipe's handlers are stamped
//! `"recipe": "<id>"` and added as new groups at the end of each event; `unmerge` removes
//! exactly the handlers stamped with the id, then the groups and events that this left empty.
//! Installing again replaces, never duplicates. A document whose shape does not allow a safe
//! edit (hooks not an object, an event not an array, a group not an object with a `hooks`
//! array) is refused, never rewritten.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::hooks_json::Group;

/// Why a document cannot be edited safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hooks.json has an unexpected shape{}: {why}; fix it by hand (`hookpack validate` of the file shows every problem), hookpack will not rewrite it", at(pointer))]
pub struct ShapeError {
    /// Where.
    pub pointer: String,
    /// What.
    pub why: String,
}

/// ` at POINTER`, or nothing for the whole document (the empty pointer names no spot).
fn at(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!(" at {pointer}")
    }
}

fn shape(pointer: impl Into<String>, why: &str) -> ShapeError {
    ShapeError {
        pointer: pointer.into(),
        why: why.into(),
    }
}

/// Checks the parts of the document that merge and unmerge walk (and hosts: a part of
/// another shape is skipped by them, and refused by every edit).
pub fn check_shape(doc: &Value) -> Result<(), ShapeError> {
    let obj = doc
        .as_object()
        .ok_or_else(|| shape("", "the document is not an object"))?;
    // Its `hooks` wrapper forgotten, or beside it: no host reads it, and a merge would leave
    // it where it is.
    if let Some(event) = obj.keys().find(|k| crate::event::Event::parse(k).is_some()) {
        return Err(shape(
            crate::json::pointer_push("", event),
            &format!("an event (`{event}`) is at the top level, outside `hooks`, where hosts look for none"),
        ));
    }
    let Some(hooks) = obj.get("hooks") else {
        return Ok(());
    };
    let events = hooks
        .as_object()
        .ok_or_else(|| shape("/hooks", "`hooks` is not an object"))?;
    for (event, groups) in events {
        let ep = crate::json::pointer_push("/hooks", event);
        let groups = groups
            .as_array()
            .ok_or_else(|| shape(ep.clone(), "the event is not an array of groups"))?;
        for (i, g) in groups.iter().enumerate() {
            let gp = format!("{ep}/{i}");
            let g = g
                .as_object()
                .ok_or_else(|| shape(gp.clone(), "the group is not an object"))?;
            match g.get("hooks") {
                Some(Value::Array(_)) => {}
                _ => return Err(shape(gp, "the group has no `hooks` array")),
            }
        }
    }
    Ok(())
}

fn stamped(handler: &Value, id: &str) -> bool {
    handler.get("recipe").and_then(Value::as_str) == Some(id)
}

/// What a merge added to the document's structure (beyond its own groups), so that removing
/// the recipe can take exactly that away again: a `hooks` key the document lacked, and event
/// keys it did not have. Kept in the install receipt.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Created {
    /// The document had no `hooks` key.
    #[serde(default)]
    pub hooks_key: bool,
    /// Event keys the recipe's handlers brought in.
    #[serde(default)]
    pub events: Vec<String>,
    /// Events where a group of the user's was split in two around the recipe's groups (the
    /// user had handlers there both before and after the recipe's): removing the recipe
    /// joins the halves again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub split: Vec<String>,
}

impl Created {
    /// Adds what `other` records.
    pub fn absorb(&mut self, other: &Created) {
        self.hooks_key |= other.hooks_key;
        for e in &other.events {
            if !self.events.contains(e) {
                self.events.push(e.clone());
            }
        }
        for e in &other.split {
            if !self.split.contains(e) {
                self.split.push(e.clone());
            }
        }
    }
}

/// Structure a recipe created that it gives up (removed, or upgraded to a version that no
/// longer uses it) while another recipe's handlers still live in it: that recipe takes the
/// record over, so whichever leaves last removes it.
pub type Handover = Vec<(String, Created)>;

/// A merged document and what the merge created.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The new document.
    pub doc: Value,
    /// Structure the merge created (previous installs' included).
    pub created: Created,
    /// What the replaced install created and this one gives up to other recipes.
    pub handover: Handover,
}

/// Every handler object of a document: (event, handler), in document order; parts of the
/// wrong shape are skipped.
pub(crate) fn handlers(doc: &Value) -> impl Iterator<Item = (&String, &Value)> {
    in_groups(doc).map(|(event, _, h)| (event, h))
}

/// Every handler of the document with its event and the group holding it.
fn in_groups(doc: &Value) -> impl Iterator<Item = (&String, &Value, &Value)> {
    doc.get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .flat_map(|(event, groups)| {
            groups.as_array().into_iter().flatten().flat_map(move |g| {
                (g.get("hooks").and_then(Value::as_array).into_iter())
                    .flatten()
                    .map(move |h| (event, g, h))
            })
        })
}

/// The first recipe other than `id` with a handler under `event` (or anywhere, for `None`).
fn other_owner(doc: &Value, id: &str, event: Option<&str>) -> Option<String> {
    handlers(doc)
        .filter(|(e, _)| event.is_none_or(|want| want == e.as_str()))
        .filter_map(|(_, h)| h.get("recipe").and_then(Value::as_str))
        .find(|r| *r != id)
        .map(String::from)
}

/// Hands what `previous` recorded, and `kept` no longer claims, to the recipes still using
/// it in `doc`.
fn handover(doc: &Value, id: &str, previous: Option<&Created>, kept: &Created) -> Handover {
    let mut out: Handover = Vec::new();
    let mut give = |to: String, c: Created| match out.iter_mut().find(|(r, _)| *r == to) {
        Some((_, have)) => have.absorb(&c),
        None => out.push((to, c)),
    };
    let Some(previous) = previous else {
        return Vec::new();
    };
    let events = doc.get("hooks").and_then(Value::as_object);
    for e in &previous.events {
        if kept.events.contains(e) || !events.is_some_and(|m| m.contains_key(e)) {
            continue;
        }
        if let Some(to) = other_owner(doc, id, Some(e)) {
            give(
                to,
                Created {
                    events: vec![e.clone()],
                    ..Created::default()
                },
            );
        }
    }
    if previous.hooks_key && !kept.hooks_key && events.is_some() {
        if let Some(to) = other_owner(doc, id, None) {
            give(
                to,
                Created {
                    hooks_key: true,
                    ..Created::default()
                },
            );
        }
    }
    out
}

/// A document with one recipe's handlers taken out.
struct Stripped {
    doc: Value,
    /// Handlers removed.
    removed: usize,
    /// Events left empty by the removal (not yet deleted).
    emptied: Vec<String>,
    /// Per event, where the recipe's first group was, counted in the groups left: a
    /// re-install puts its groups back there, so that it keeps its place among the others.
    places: IndexMap<String, Place>,
}

/// Where the group holding a recipe's first handler of an event was, and what of the
/// user's stays in it.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// Its index among the groups left.
    group: usize,
    /// Whether it stays (it holds handlers of the user's).
    kept: bool,
    /// How many of the handlers left there came before the recipe's first: those still
    /// run before the recipe's new groups, the rest after them.
    before: usize,
}

impl Place {
    /// Splits the kept group around the recipe's first handler when the user has handlers
    /// on both sides of it there (the new groups go between the halves, so each handler
    /// runs on the side it did). Says where the new groups go, and whether it split.
    fn make_room(self, groups: &mut Vec<Value>) -> (usize, bool) {
        let at = self.group.min(groups.len());
        if !self.kept || self.before == 0 {
            return (at, false);
        }
        let Some(handlers) = groups
            .get(at)
            .and_then(|g| g.get("hooks"))
            .and_then(Value::as_array)
        else {
            return (at, false);
        };
        if handlers.len() <= self.before {
            return (at + 1, false);
        }
        let mut rest = groups[at].clone();
        rest["hooks"] = Value::Array(handlers[self.before..].to_vec());
        if let Some(Value::Array(hs)) = groups[at].get_mut("hooks") {
            hs.truncate(self.before);
        }
        groups.insert(at + 1, rest);
        (at + 1, true)
    }

    /// Joins the two halves of a group that an earlier merge split around the recipe's
    /// groups, now that those are gone from between them: the groups just before and just
    /// after where they were, when both are there and alike in everything but handlers.
    fn rejoin(self, groups: &mut Vec<Value>) {
        if self.kept || self.group == 0 || self.group >= groups.len() {
            return;
        }
        let fields = |g: &Value| {
            g.as_object().map(|o| {
                let mut o = o.clone();
                o.shift_remove("hooks");
                o
            })
        };
        let (first, second) = (&groups[self.group - 1], &groups[self.group]);
        if fields(first).is_none() || fields(first) != fields(second) {
            return;
        }
        let rest = groups.remove(self.group);
        if let (Some(Value::Array(hs)), Some(Value::Array(more))) =
            (groups[self.group - 1].get_mut("hooks"), rest.get("hooks"))
        {
            hs.extend(more.iter().cloned());
        }
    }
}

/// Takes `id`'s handlers out, and the groups this leaves empty.
fn strip(doc: &Value, id: &str) -> Result<Stripped, ShapeError> {
    check_shape(doc)?;
    let mut out = doc.clone();
    let mut removed = 0;
    let mut emptied = Vec::new();
    let mut places = IndexMap::new();
    if let Some(events) = out.get_mut("hooks").and_then(Value::as_object_mut) {
        for (event, groups) in events.iter_mut() {
            let Some(groups) = groups.as_array_mut() else {
                continue;
            };
            let mut left = 0;
            let mut first = None;
            groups.retain_mut(|g| {
                let Some(handlers) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                    left += 1;
                    return true;
                };
                let count = handlers.len();
                let before = handlers.iter().take_while(|h| !stamped(h, id)).count();
                handlers.retain(|h| !stamped(h, id));
                let gone = count - handlers.len();
                if gone > 0 {
                    first.get_or_insert(Place {
                        group: left,
                        kept: !handlers.is_empty(),
                        before,
                    });
                    removed += gone;
                    if handlers.is_empty() {
                        return false;
                    }
                }
                left += 1;
                true
            });
            if let Some(at) = first {
                places.insert(event.clone(), at);
                if groups.is_empty() {
                    emptied.push(event.clone());
                }
            }
        }
    }
    Ok(Stripped {
        doc: out,
        removed,
        emptied,
        places,
    })
}

/// Whether an event (or the `hooks` key) left empty by a removal goes too: what an earlier
/// merge created does; without that record, every emptied event does.
fn goes(previous: Option<&Created>, event: &str) -> bool {
    previous.is_none_or(|c| c.events.iter().any(|e| e == event))
}

/// Joins again the groups `previous` records it split, in the events the recipe's groups
/// left (other than `staying`, where new ones take their place between the halves).
fn rejoin_split(
    events: &mut Map<String, Value>,
    places: &IndexMap<String, Place>,
    previous: Option<&Created>,
    staying: &[&String],
) {
    for e in previous.into_iter().flat_map(|c| &c.split) {
        if staying.contains(&e) {
            continue;
        }
        if let (Some(place), Some(Value::Array(groups))) = (places.get(e), events.get_mut(e)) {
            place.rejoin(groups);
        }
    }
}

/// Removes every handler stamped with `id`, the groups this leaves empty, and the events
/// (and `hooks` key) that `previous` — the record of the merge that added them — says the
/// merge created. Without a record, every event left empty by the removal is deleted.
/// Returns the new document and how many handlers were removed.
pub fn unmerge(
    doc: &Value,
    id: &str,
    previous: Option<&Created>,
) -> Result<(Value, usize), ShapeError> {
    unmerge_handing_over(doc, id, previous).map(|(doc, removed, _)| (doc, removed))
}

/// [`unmerge`], also returning what `previous` recorded that other recipes' handlers still
/// use, for their records to take over.
pub fn unmerge_handing_over(
    doc: &Value,
    id: &str,
    previous: Option<&Created>,
) -> Result<(Value, usize, Handover), ShapeError> {
    let Stripped {
        doc: mut out,
        removed,
        emptied,
        places,
    } = strip(doc, id)?;
    if let Some(events) = out.get_mut("hooks").and_then(Value::as_object_mut) {
        rejoin_split(events, &places, previous, &[]);
        for e in emptied.iter().filter(|e| goes(previous, e)) {
            events.shift_remove(e);
        }
    }
    let hooks_empty = out
        .get("hooks")
        .and_then(Value::as_object)
        .is_some_and(|m| m.is_empty());
    if previous.is_some_and(|c| c.hooks_key) && hooks_empty {
        if let Some(obj) = out.as_object_mut() {
            obj.shift_remove("hooks");
        }
    }
    let given = handover(&out, id, previous, &Created::default());
    Ok((out, removed, given))
}

/// Replaces `id`'s handlers in `doc` with `hooks` (event → groups, commands already
/// rewritten for the installed location), each handler stamped with `id`: in an event where
/// `id` had groups, where its first one was; elsewhere at the end. Groups without handlers
/// are not added. `previous` is the record of the merge being replaced, if any.
pub fn merge(
    doc: &Value,
    id: &str,
    hooks: &IndexMap<String, Vec<Group>>,
    previous: Option<&Created>,
) -> Result<Merged, ShapeError> {
    let Stripped {
        doc: mut out,
        emptied,
        places,
        ..
    } = strip(doc, id)?;
    let obj = out
        .as_object_mut()
        .ok_or_else(|| shape("", "the document is not an object"))?;
    let mut created = Created {
        hooks_key: previous.is_some_and(|c| c.hooks_key),
        ..Created::default()
    };
    if !obj.contains_key("hooks") {
        created.hooks_key = true;
    }
    let events = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape("/hooks", "`hooks` is not an object"))?;
    let staying: Vec<&String> = hooks
        .iter()
        .filter(|(_, gs)| gs.iter().any(|g| !g.hooks.is_empty()))
        .map(|(e, _)| e)
        .collect();
    rejoin_split(events, &places, previous, &staying);
    for (event, groups) in hooks {
        let groups: Vec<&Group> = groups.iter().filter(|g| !g.hooks.is_empty()).collect();
        if groups.is_empty() {
            continue;
        }
        // Ours if it is new, or if only handlers stamped with this id kept it alive (the
        // install being replaced created it, or a stale stamp without a record did).
        if !events.contains_key(event) || (emptied.contains(event) && goes(previous, event)) {
            created.events.push(event.clone());
        }
        let list = events
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| {
                shape(
                    crate::json::pointer_push("/hooks", event),
                    "the event is not an array of groups",
                )
            })?;
        // Where the replaced install had groups, the new ones take their place; elsewhere
        // they go at the end.
        let at = match places.get(event) {
            Some(place) => {
                let (at, split) = place.make_room(list);
                let was_split = previous.is_some_and(|c| c.split.contains(event));
                if split || was_split {
                    created.split.push(event.clone());
                }
                at
            }
            None => list.len(),
        };
        let mut built = Vec::with_capacity(groups.len());
        for g in groups {
            let mut group = Map::new();
            if let Some(m) = &g.matcher {
                group.insert("matcher".into(), Value::String(m.clone()));
            }
            let handlers: Vec<Value> = g
                .hooks
                .iter()
                .map(|h| {
                    let mut h = h.clone();
                    h.recipe = None;
                    let mut v = serde_json::to_value(&h).unwrap_or(Value::Null);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("recipe".into(), Value::String(id.to_string()));
                    }
                    v
                })
                .collect();
            group.insert("hooks".into(), Value::Array(handlers));
            built.push(Value::Object(group));
        }
        list.splice(at..at, built);
    }
    // Events the replaced install emptied and this one does not use go, if they were its own.
    for e in &emptied {
        let still_empty = events
            .get(e)
            .and_then(Value::as_array)
            .is_some_and(|a| a.is_empty());
        if still_empty && goes(previous, e) {
            events.shift_remove(e);
        }
    }
    let given = handover(&out, id, previous, &created);
    Ok(Merged {
        doc: out,
        created,
        handover: given,
    })
}

/// Each handler stamped with `id` as a group of its own (its group's `matcher`, if any, and
/// the handler): (event, group), for a user to put one back by hand.
pub fn stamped_groups(doc: &Value, id: &str) -> Vec<(String, Value)> {
    in_groups(doc)
        .filter(|(_, _, h)| stamped(h, id))
        .map(|(event, g, h)| {
            let mut group = Map::new();
            if let Some(m) = g.get("matcher") {
                group.insert("matcher".into(), m.clone());
            }
            group.insert("hooks".into(), Value::Array(vec![h.clone()]));
            (event.clone(), Value::Object(group))
        })
        .collect()
}

/// Handlers stamped with `id`: (event, handler id, command).
pub fn stamped_handlers(doc: &Value, id: &str) -> Vec<(String, Option<String>, String)> {
    handlers(doc)
        .filter(|(_, h)| stamped(h, id))
        .map(|(event, h)| {
            (
                event.clone(),
                h.get("id").and_then(Value::as_str).map(String::from),
                h.get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recipe_hooks() -> IndexMap<String, Vec<Group>> {
        serde_json::from_value(json!({
            "PreToolUse": [{"matcher": "exec", "hooks": [{"id": "gate", "type": "command", "command": "node x.js", "timeout": 10}]}],
            "Stop": [{"hooks": [{"id": "review", "type": "command", "command": "node y.js"}]}]
        }))
        .unwrap()
    }

    fn user_doc() -> Value {
        json!({
            "description": "mine",
            "zeta": {"keep": [1, 2]},
            "hooks": {
                "PreToolUse": [{"matcher": "write_file", "x-note": "hand", "hooks": [{"type": "command", "command": "guard", "custom": true}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": "bye", "recipe": "other"}]}]
            },
            "alpha": 1
        })
    }

    #[test]
    fn table() {
        let user = user_doc();
        // (name, document, then: merge or unmerge, expected)
        let m = merge(&user, "tool-gate", &recipe_hooks(), None).unwrap();
        let merged = m.doc.clone();
        assert_eq!(
            merged,
            json!({
                "description": "mine",
                "zeta": {"keep": [1, 2]},
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "write_file", "x-note": "hand", "hooks": [{"type": "command", "command": "guard", "custom": true}]},
                        {"matcher": "exec", "hooks": [{"type": "command", "command": "node x.js", "timeout": 10, "id": "gate", "recipe": "tool-gate"}]}
                    ],
                    "SessionEnd": [{"hooks": [{"type": "command", "command": "bye", "recipe": "other"}]}],
                    "Stop": [{"hooks": [{"type": "command", "command": "node y.js", "id": "review", "recipe": "tool-gate"}]}]
                },
                "alpha": 1
            })
        );
        // Key order of everything the user had is unchanged.
        let keys: Vec<&String> = merged.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["description", "zeta", "hooks", "alpha"]);
        // Installing again replaces.
        assert_eq!(
            merge(&merged, "tool-gate", &recipe_hooks(), Some(&m.created))
                .unwrap()
                .doc,
            merged
        );
        // Removing gives back the original exactly.
        let (back, n) = unmerge(&merged, "tool-gate", Some(&m.created)).unwrap();
        assert_eq!(n, 2);
        assert_eq!(back, user);
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&user).unwrap()
        );
        // Another recipe's stamps are left alone.
        assert_eq!(
            unmerge(&user, "tool-gate", None).unwrap(),
            (user.clone(), 0)
        );
    }

    #[test]
    fn a_user_handler_added_to_our_group_survives_removal() {
        let m = merge(&json!({}), "tool-gate", &recipe_hooks(), None).unwrap();
        let mut merged = m.doc;
        merged["hooks"]["Stop"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "command", "command": "mine"}));
        let (back, _) = unmerge(&merged, "tool-gate", Some(&m.created)).unwrap();
        assert_eq!(
            back,
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}})
        );
    }

    #[test]
    fn a_user_handler_in_our_group_keeps_its_side_of_ours_on_reinstall() {
        // Found by a new-user walk-through: a handler the user put before the gate in its
        // group ran after it once the recipe was installed again.
        let m = merge(&json!({}), "tool-gate", &recipe_hooks(), None).unwrap();
        let mine = json!({"type": "command", "command": "mine"});
        let ids = |doc: &Value| -> Vec<Vec<String>> {
            (doc["hooks"]["PreToolUse"].as_array().unwrap().iter())
                .map(|g| {
                    (g["hooks"].as_array().unwrap().iter())
                        .map(|h| h.get("id").map_or("mine", |i| i.as_str().unwrap()).into())
                        .collect()
                })
                .collect()
        };
        for (user_first, expected) in [(true, [["mine"], ["gate"]]), (false, [["gate"], ["mine"]])]
        {
            let mut doc = m.doc.clone();
            let group = doc["hooks"]["PreToolUse"][0]["hooks"]
                .as_array_mut()
                .unwrap();
            group.insert(usize::from(!user_first), mine.clone());
            let again = merge(&doc, "tool-gate", &recipe_hooks(), Some(&m.created)).unwrap();
            assert_eq!(ids(&again.doc), expected, "user first: {user_first}");
        }
    }

    #[test]
    fn empty_arrays_and_a_missing_hooks_key_come_back_exactly() {
        let doc = json!({"description": "x", "hooks": {"Stop": [], "SessionEnd": []}});
        let m = merge(&doc, "r", &recipe_hooks(), None).unwrap();
        assert_eq!(m.created.events, ["PreToolUse"]);
        let again = merge(&m.doc, "r", &recipe_hooks(), Some(&m.created)).unwrap();
        // A stale stamp without a record: its event is taken for ours.
        let stale = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "old", "recipe": "r"}]}]}});
        let fresh = merge(&stale, "r", &recipe_hooks(), None).unwrap();
        assert_eq!(
            unmerge(&fresh.doc, "r", Some(&fresh.created)).unwrap().0,
            json!({"hooks": {}})
        );
        assert_eq!(again, m, "re-install must not move or change anything");
        assert_eq!(unmerge(&m.doc, "r", Some(&m.created)).unwrap().0, doc);
        let bare = json!({"description": "x"});
        let m = merge(&bare, "r", &recipe_hooks(), None).unwrap();
        assert_eq!(unmerge(&m.doc, "r", Some(&m.created)).unwrap().0, bare);
        // A recipe's empty groups and events add nothing.
        let empty: IndexMap<String, Vec<Group>> =
            serde_json::from_value(json!({"Stop": [{"hooks": []}], "SessionEnd": []})).unwrap();
        assert_eq!(
            merge(&bare, "r", &empty, None).unwrap().doc,
            json!({"description": "x", "hooks": {}})
        );
    }

    #[test]
    fn odd_shapes_are_refused() {
        for doc in [
            json!([]),
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
            json!({"hooks": {"Stop": [1]}}),
            json!({"hooks": {"Stop": [{"matcher": "x"}]}}),
            json!({"hooks": {"Stop": [{"hooks": {}}]}}),
        ] {
            assert!(merge(&doc, "x", &recipe_hooks(), None).is_err(), "{doc}");
            assert!(unmerge(&doc, "x", None).is_err(), "{doc}");
        }
    }
}
