//! Property tests (proptest).
//!
//! - `merge` / `unmerge` laws on generated `hooks.json` documents (unknown fields at every
//!   level, several events, matchers, non-object handlers, other recipes' stamps, odd
//!   `recipe` values) and generated recipe hooks, through the library directly.
//!   256 cases each (proptest's default): these are pure functions on small documents.
//! - Reproducible packing: a generated recipe tree packed as written, and again after a
//!   random mix of file-creation order, mtimes, extra group/other write bits and a copy to
//!   another folder, gives byte-identical output. 16 cases (each runs `hookpack pack`
//!   twice), a few seconds in all.
//!
//! Documents are compared as serialized text: `serde_json::Value` equality ignores key
//! order, and key order is part of the contract.

use crate::common::*;
use crate::pack::snapshot;
use hookpack::hooks_json::Group;
use hookpack::merge::{merge, unmerge, unmerge_handing_over, Created, Handover};
use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The recipe being merged.
const ID: &str = "demo";

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        "[a-z ]{0,6}".prop_map(Value::from),
        Just(json!("demo")),
    ]
}

/// Any small JSON value (unknown fields' values).
fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,4}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Fields no level of the format knows (`Recipe` differs from `recipe` only by case).
fn unknown_fields() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("x-[a-z]{1,3}|zeta|_meta|Recipe|note", any_json()), 0..3)
}

/// Builds an object from `pairs` in a random order (a repeated key keeps its first place).
fn object(pairs: Vec<(String, Value)>) -> impl Strategy<Value = Value> {
    Just(pairs)
        .prop_shuffle()
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()))
}

fn opt_pair(
    key: &'static str,
    v: impl Strategy<Value = Value> + 'static,
) -> BoxedStrategy<Vec<(String, Value)>> {
    prop::option::of(v)
        .prop_map(move |v| v.map(|v| (key.to_string(), v)).into_iter().collect())
        .boxed()
}

/// What a generated user document may hold.
#[derive(Clone, Copy, Debug)]
struct DocShape {
    /// Handlers stamped with [`ID`].
    own_stamps: bool,
    /// Events whose array of groups is empty.
    empty_events: bool,
    /// Documents without a `hooks` key.
    no_hooks_key: bool,
}

/// The `recipe` field of a user handler: absent, another recipe's, ours (when allowed), or
/// a value that is not a stamp at all.
fn stamp(shape: DocShape) -> BoxedStrategy<Option<Value>> {
    let others = prop_oneof![
        Just(None),
        Just(None),
        prop::sample::select(vec!["other", "audit-log", "demo-2", "dem", "Demo"])
            .prop_map(|s| Some(json!(s))),
        prop::sample::select(vec![
            json!(["demo"]),
            json!({"id": "demo"}),
            json!(7),
            json!(null)
        ])
        .prop_map(Some),
    ];
    if shape.own_stamps {
        prop_oneof![3 => others, 1 => Just(Some(json!(ID)))].boxed()
    } else {
        others.boxed()
    }
}

fn user_handler(shape: DocShape) -> BoxedStrategy<Value> {
    let obj = (
        "[a-z /.]{1,12}",
        opt_pair("timeout", (1u64..100).prop_map(Value::from)),
        opt_pair("id", "[a-z]{1,5}".prop_map(Value::from)),
        opt_pair("async", any::<bool>().prop_map(Value::from)),
        stamp(shape),
        unknown_fields(),
    )
        .prop_flat_map(|(command, t, id, asy, stamp, unknown)| {
            let mut pairs = vec![
                ("type".to_string(), json!("command")),
                ("command".to_string(), json!(command)),
            ];
            pairs.extend(t);
            pairs.extend(id);
            pairs.extend(asy);
            pairs.extend(stamp.map(|s| ("recipe".to_string(), s)));
            pairs.extend(unknown);
            object(pairs)
        });
    // Hosts skip handlers that are not objects; merge must carry them along all the same.
    prop_oneof![9 => obj, 1 => any_json()].boxed()
}

fn user_group(shape: DocShape) -> impl Strategy<Value = Value> {
    (
        opt_pair(
            "matcher",
            prop_oneof!["[a-z_|*]{0,10}".prop_map(Value::from), Just(json!(42)),],
        ),
        prop::collection::vec(user_handler(shape), 0..4),
        unknown_fields(),
    )
        .prop_flat_map(|(matcher, handlers, unknown)| {
            let mut pairs = matcher;
            pairs.push(("hooks".to_string(), Value::Array(handlers)));
            pairs.extend(unknown);
            object(pairs)
        })
}

fn event_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd",
            "UserPromptSubmit",
            "Notification",
        ])
        .prop_map(String::from),
        "x-[a-z]{1,3}",
    ]
}

fn user_doc(shape: DocShape) -> impl Strategy<Value = Value> {
    let min_groups = if shape.empty_events { 0 } else { 1 };
    let events = prop::collection::vec(
        (
            event_name(),
            prop::collection::vec(user_group(shape), min_groups..4),
        ),
        0..5,
    )
    .prop_map(|evs| {
        Value::Object(
            evs.into_iter()
                .map(|(e, g)| (e, Value::Array(g)))
                .collect::<Map<String, Value>>(),
        )
    });
    let hooks = if shape.no_hooks_key {
        prop::option::of(events).boxed()
    } else {
        events.prop_map(Some).boxed()
    };
    (
        opt_pair("description", "[a-z ]{0,8}".prop_map(Value::from)),
        hooks,
        unknown_fields(),
    )
        .prop_flat_map(|(desc, hooks, unknown)| {
            let mut pairs = desc;
            pairs.extend(hooks.map(|h| ("hooks".to_string(), h)));
            pairs.extend(unknown);
            object(pairs)
        })
}

/// A recipe's `hooks` as install passes them to `merge`: events → groups → handlers, with
/// at least `min_groups` groups per event and `min_handlers` handlers per group.
fn recipe_hooks_with(
    min_groups: usize,
    min_handlers: usize,
) -> impl Strategy<Value = IndexMap<String, Vec<Group>>> {
    let handler = (
        "[a-z]{1,6}",
        opt_pair("timeout", (1u64..100).prop_map(Value::from)),
        opt_pair("async", any::<bool>().prop_map(Value::from)),
        opt_pair("statusMessage", "[a-z ]{0,8}".prop_map(Value::from)),
        opt_pair("failurePolicy", Just(json!("deny"))),
        prop::collection::vec(("x-[a-z]{1,3}", any_json()), 0..2),
    )
        .prop_map(|(script, t, a, s, f, unknown)| {
            let mut o = Map::new();
            o.insert("id".into(), json!(format!("h-{script}")));
            o.insert("type".into(), json!("command"));
            o.insert(
                "command".into(),
                json!(format!(
                    "node \"${{FINCLAW_PROFILE_ROOT}}/hooks/demo/scripts/{script}.js\""
                )),
            );
            for (k, v) in t.into_iter().chain(a).chain(s).chain(f).chain(unknown) {
                o.insert(k, v);
            }
            Value::Object(o)
        });
    let group = (
        opt_pair("matcher", "[a-z_|*]{1,10}".prop_map(Value::from)),
        prop::collection::vec(handler, min_handlers..3),
        prop::collection::vec(("x-[a-z]{1,3}", any_json()), 0..2),
    )
        .prop_map(|(m, hs, unknown)| {
            let mut o: Map<String, Value> = m.into_iter().collect();
            o.insert("hooks".into(), Value::Array(hs));
            o.extend(unknown);
            Value::Object(o)
        });
    prop::collection::vec(
        (
            prop::sample::select(vec![
                "PreToolUse",
                "PostToolUse",
                "Stop",
                "SessionEnd",
                "UserPromptSubmit",
            ]),
            prop::collection::vec(group, min_groups..3),
        ),
        0..4,
    )
    .prop_map(|evs| {
        let v = Value::Object(
            evs.into_iter()
                .map(|(e, g)| (e.to_string(), Value::Array(g)))
                .collect(),
        );
        serde_json::from_value(v).expect("generated recipe hooks deserialize")
    })
}

/// Recipe hooks without empty events or groups (see the `BUG` tests below for those).
fn recipe_hooks() -> impl Strategy<Value = IndexMap<String, Vec<Group>>> {
    recipe_hooks_with(1, 1)
}

// ---------------------------------------------------------------------------------------
// Observations
// ---------------------------------------------------------------------------------------

fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

fn stamped_with(h: &Value, id: &str) -> bool {
    h.get("recipe").and_then(Value::as_str) == Some(id)
}

fn groups_of(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    if let Some(events) = doc.get("hooks").and_then(Value::as_object) {
        for (e, gs) in events {
            for g in gs.as_array().unwrap() {
                out.push((e.clone(), g));
            }
        }
    }
    out
}

/// Every group that holds something not stamped with `id` (or nothing at all), with its
/// `id` handlers left out, in document order: event order, group order, handler order,
/// and every field and value of everything the user owns.
fn foreign(doc: &Value, id: &str) -> Vec<(String, String)> {
    groups_of(doc)
        .into_iter()
        .filter_map(|(e, g)| {
            let hs = g["hooks"].as_array().unwrap();
            if !hs.is_empty() && hs.iter().all(|h| stamped_with(h, id)) {
                return None;
            }
            let mut g = g.clone();
            g["hooks"]
                .as_array_mut()
                .unwrap()
                .retain(|h| !stamped_with(h, id));
            Some((e, text(&g)))
        })
        .collect()
}

/// Handlers stamped with `id`, in order, as text.
fn stamps(doc: &Value, id: &str) -> Vec<String> {
    groups_of(doc)
        .into_iter()
        .flat_map(|(_, g)| g["hooks"].as_array().unwrap().iter())
        .filter(|h| stamped_with(h, id))
        .map(text)
        .collect()
}

/// Top-level keys other than `hooks`, with their values, in order.
fn top_level(doc: &Value) -> String {
    let mut o = doc.as_object().unwrap().clone();
    o.shift_remove("hooks");
    text(&Value::Object(o))
}

fn handler_count(hooks: &IndexMap<String, Vec<Group>>) -> usize {
    hooks.values().flatten().map(|g| g.hooks.len()).sum()
}

/// The groups `merge` must append for `hooks`, per event, as text.
fn expected_own_groups(hooks: &IndexMap<String, Vec<Group>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (e, gs) in hooks {
        for g in gs {
            let mut o = Map::new();
            if let Some(m) = &g.matcher {
                o.insert("matcher".into(), json!(m));
            }
            let hs: Vec<Value> = g
                .hooks
                .iter()
                .map(|h| {
                    let mut v = serde_json::to_value(h).unwrap();
                    v["recipe"] = json!(ID);
                    v
                })
                .collect();
            o.insert("hooks".into(), Value::Array(hs));
            out.push((e.clone(), text(&Value::Object(o))));
        }
    }
    out
}

/// Where the first group of `event` holding a handler stamped with [`ID`] is, counted in
/// the groups that stay when those handlers are taken out; just after it when it stays
/// because a handler of the user comes before [`ID`]'s first there.
fn first_own_group(doc: &Value, event: &str) -> Option<usize> {
    // Groups before the first one are never taken out: they hold no handler of ID.
    let groups = doc.get("hooks")?.get(event)?.as_array()?;
    let handlers = |g: &Value| g["hooks"].as_array().cloned().unwrap_or_default();
    let at = groups
        .iter()
        .position(|g| handlers(g).iter().any(|h| stamped_with(h, ID)))?;
    let user_first = handlers(&groups[at])
        .first()
        .is_some_and(|h| !stamped_with(h, ID));
    Some(at + usize::from(user_first))
}

/// `doc` with, in each event `hooks` adds groups to, the first group holding a handler
/// stamped with [`ID`] split in two when the user has handlers there both before and after
/// [`ID`]'s first one: the same fields, the handlers before it, then the handlers from it
/// on. The recipe's new groups go between the two, so each of the user's handlers runs on
/// the side of the recipe's where it ran.
fn split_first_own(doc: &Value, hooks: &IndexMap<String, Vec<Group>>) -> Value {
    let mut out = doc.clone();
    let Some(events) = out.get_mut("hooks").and_then(Value::as_object_mut) else {
        return out;
    };
    for (e, groups) in events.iter_mut() {
        if !hooks
            .get(e)
            .is_some_and(|gs| gs.iter().any(|g| !g.hooks.is_empty()))
        {
            continue;
        }
        let groups = groups.as_array_mut().unwrap();
        let handlers = |g: &Value| g["hooks"].as_array().cloned().unwrap_or_default();
        let Some(at) = groups
            .iter()
            .position(|g| handlers(g).iter().any(|h| stamped_with(h, ID)))
        else {
            continue;
        };
        let hs = handlers(&groups[at]);
        let first = hs.iter().position(|h| stamped_with(h, ID)).unwrap();
        let users_after = hs[first..].iter().any(|h| !stamped_with(h, ID));
        if first > 0 && users_after {
            let mut rest = groups[at].clone();
            rest["hooks"] = Value::Array(hs[first..].to_vec());
            groups[at]["hooks"] = Value::Array(hs[..first].to_vec());
            groups.insert(at + 1, rest);
        }
    }
    out
}

/// The user's handlers of `event` (everything not stamped with [`ID`]), as text: those
/// before [`ID`]'s first handler, those after its last, and all of them in order; `None`
/// when the event holds none of [`ID`]'s.
fn sides(doc: &Value, event: &str) -> Option<(Vec<String>, Vec<String>, Vec<String>)> {
    let all: Vec<&Value> = doc
        .get("hooks")?
        .get(event)?
        .as_array()?
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().iter())
        .collect();
    let first = all.iter().position(|h| stamped_with(h, ID))?;
    let last = all.iter().rposition(|h| stamped_with(h, ID))?;
    let users = |hs: &[&Value]| -> Vec<String> {
        hs.iter()
            .filter(|h| !stamped_with(h, ID))
            .map(|h| text(h))
            .collect()
    };
    Some((users(&all[..first]), users(&all[last..]), users(&all)))
}

/// Checks what `merge(doc)` must be, whatever `doc` held.
fn check_merged(doc: &Value, hooks: &IndexMap<String, Vec<Group>>, merged: &Value) {
    let doc = &split_first_own(doc, hooks);
    // The user's things: unchanged, in order; other recipes' stamps untouched.
    assert_eq!(
        foreign(merged, ID),
        foreign(doc, ID),
        "foreign entries changed"
    );
    for other in ["other", "audit-log", "demo-2", "dem", "Demo"] {
        assert_eq!(
            stamps(merged, other),
            stamps(doc, other),
            "stamps of {other}"
        );
    }
    assert_eq!(
        top_level(merged),
        top_level(doc),
        "top-level fields changed"
    );
    // `hooks` keeps its place, or comes last when the document had none.
    let keys: Vec<&String> = merged.as_object().unwrap().keys().collect();
    match doc.as_object().unwrap().keys().position(|k| k == "hooks") {
        Some(i) => assert_eq!(keys[i], "hooks"),
        None => assert_eq!(keys.last().map(|k| k.as_str()), Some("hooks")),
    }
    // Ours: exactly the recipe's groups, stamped, together: where the first group holding
    // one of its handlers was (counted in the groups left when they are taken out), or at
    // the end of an event that held none.
    let mut own: Vec<(String, String)> = Vec::new();
    for (e, gs) in merged["hooks"].as_object().unwrap() {
        let gs = gs.as_array().unwrap();
        let n = hooks.get(e).map_or(0, Vec::len);
        let others = gs.len() - n;
        let at = first_own_group(doc, e).map_or(others, |at| at.min(others));
        for (i, g) in gs.iter().enumerate() {
            let hs = g["hooks"].as_array().unwrap();
            let is_own = !hs.is_empty() && hs.iter().all(|h| stamped_with(h, ID));
            assert_eq!(
                is_own,
                (at..at + n).contains(&i),
                "own groups of {e} are not the {n} at {at}"
            );
            if is_own {
                own.push((e.clone(), text(g)));
            }
        }
    }
    own.sort();
    let mut expected = expected_own_groups(hooks);
    expected.sort();
    assert_eq!(own, expected, "the recipe's groups");
    assert_eq!(stamps(merged, ID).len(), handler_count(hooks));
}

// ---------------------------------------------------------------------------------------
// merge / unmerge laws
// ---------------------------------------------------------------------------------------

const PLAIN: DocShape = DocShape {
    own_stamps: false,
    empty_events: false,
    no_hooks_key: false,
};

proptest! {
    /// unmerge(merge(doc, id, hooks), id) == doc, key order included, for a document with
    /// none of the id's handlers and no empty event arrays.
    #[test]
    fn unmerge_undoes_merge(doc in user_doc(PLAIN), hooks in recipe_hooks()) {
        let merged = merge(&doc, ID, &hooks, None).unwrap();
        let (back, removed) = unmerge(&merged.doc, ID, Some(&merged.created)).unwrap();
        prop_assert_eq!(text(&back), text(&doc));
        prop_assert_eq!(removed, handler_count(&hooks));
    }

    /// merge is idempotent (a re-install changes nothing), and replaces the id's previous
    /// handlers whatever the document held of them.
    #[test]
    fn merge_is_idempotent(
        doc in user_doc(DocShape { own_stamps: true, empty_events: false, no_hooks_key: false }),
        hooks in recipe_hooks(),
    ) {
        let once = merge(&doc, ID, &hooks, None).unwrap();
        let twice = merge(&once.doc, ID, &hooks, Some(&once.created)).unwrap();
        prop_assert_eq!(text(&twice.doc), text(&once.doc));
        prop_assert_eq!(twice.created, once.created);
    }

    /// Entries not stamped with the id are never changed and keep their relative order;
    /// other recipes' stamps and the top-level fields are untouched; the id's groups are
    /// exactly the recipe's, where its first group was or at the end of their events. The
    /// one change to the user's groups: the group holding the id's first handler is split
    /// around the new groups when the user's handlers sit on both sides of it there.
    #[test]
    fn merge_leaves_everything_else_alone(
        doc in user_doc(DocShape { own_stamps: true, empty_events: true, no_hooks_key: true }),
        hooks in recipe_hooks(),
    ) {
        let merged = merge(&doc, ID, &hooks, None).unwrap();
        check_merged(&doc, &hooks, &merged.doc);
    }

    /// A re-install (or upgrade) keeps each of the user's handlers on the side of the id's
    /// handlers where it was: those before the id's first handler of an event stay before
    /// all of the new ones, in order, and those after its last stay after all of them.
    /// (Handlers the user put between two of the id's can end up only on one side.)
    /// The user's edits: handlers added inside the recipe's groups, at any place.
    #[test]
    fn reinstall_keeps_user_handlers_on_their_side(
        doc in user_doc(PLAIN),
        hooks in recipe_hooks(),
        added in prop::collection::vec((any::<usize>(), any::<usize>(), user_handler(PLAIN)), 1..6),
    ) {
        let once = merge(&doc, ID, &hooks, None).unwrap();
        let mut edited = once.doc.clone();
        let own: Vec<(String, usize)> = edited["hooks"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(e, gs)| {
                let gs = gs.as_array().unwrap();
                (0..gs.len())
                    .filter(|&i| !stamps(&json!({"hooks": {e: [gs[i].clone()]}}), ID).is_empty())
                    .map(|i| (e.clone(), i))
                    .collect::<Vec<_>>()
            })
            .collect();
        if own.is_empty() {
            return Ok(());
        }
        for (which, place, handler) in added {
            let (e, i) = &own[which % own.len()];
            let hs = edited["hooks"][e][i]["hooks"].as_array_mut().unwrap();
            hs.insert(place % (hs.len() + 1), handler);
        }
        let again = merge(&edited, ID, &hooks, Some(&once.created)).unwrap();
        for e in hooks.keys() {
            let Some((before, after, all)) = sides(&edited, e) else { continue };
            let (now_before, now_after, now_all) = sides(&again.doc, e).unwrap();
            prop_assert_eq!(&now_before, &before, "{}: handlers before the recipe's", e);
            prop_assert!(
                now_after.ends_with(&after),
                "{}: handlers after the recipe's: {:?}, now {:?}", e, after, now_after
            );
            prop_assert_eq!(&now_all, &all, "{}: the user's handlers in order", e);
        }
    }

    /// Installing over handlers already stamped with the id (a receipt lost, or the user's
    /// edits), then removing, gives what removing them gives: a group the install split
    /// around the recipe's comes back whole (the fuzz target's `stale-roundtrip`).
    #[test]
    fn install_then_remove_over_stale_stamps_is_remove(
        doc in user_doc(DocShape { own_stamps: true, empty_events: true, no_hooks_key: true }),
        hooks in recipe_hooks(),
    ) {
        let merged = merge(&doc, ID, &hooks, None).unwrap();
        let (back, _) = unmerge(&merged.doc, ID, Some(&merged.created)).unwrap();
        prop_assert_eq!(text(&back), text(&unmerge(&doc, ID, None).unwrap().0));
    }

    /// unmerge removes exactly the id's handlers (and groups/events that left empty), and
    /// changes nothing else; a document without them comes back unchanged.
    #[test]
    fn unmerge_removes_only_the_ids_handlers(
        doc in user_doc(DocShape { own_stamps: true, empty_events: true, no_hooks_key: true }),
    ) {
        let (out, removed) = unmerge(&doc, ID, None).unwrap();
        prop_assert_eq!(removed, stamps(&doc, ID).len());
        prop_assert!(stamps(&out, ID).is_empty());
        prop_assert_eq!(foreign(&out, ID), foreign(&doc, ID));
        for other in ["other", "audit-log", "demo-2", "dem", "Demo"] {
            prop_assert_eq!(stamps(&out, other), stamps(&doc, other));
        }
        prop_assert_eq!(top_level(&out), top_level(&doc));
        if removed == 0 {
            prop_assert_eq!(text(&out), text(&doc));
        }
        // Nothing the user had is dropped: an event goes only if all it held was ours.
        for (e, gs) in doc.get("hooks").and_then(Value::as_object).into_iter().flatten() {
            let gs = gs.as_array().unwrap();
            let all_ours = !gs.is_empty() && foreign(&json!({"hooks": {e: gs}}), ID).is_empty();
            prop_assert_eq!(out["hooks"].get(e).is_none(), all_ours, "event {}", e);
        }
    }

    /// Two recipes installed one after the other and removed in either order give back the
    /// document, whatever events they share or it lacked (`hooks` key included): what the
    /// first one out hands over joins the other's record, as install does with receipts.
    #[test]
    fn two_recipes_removed_in_either_order_give_back_the_document(
        doc in user_doc(DocShape { own_stamps: false, empty_events: true, no_hooks_key: true }),
        first in recipe_hooks(),
        second in recipe_hooks(),
    ) {
        const OTHER: &str = "demo-two";
        let a = merge(&doc, ID, &first, None).unwrap();
        let b = merge(&a.doc, OTHER, &second, None).unwrap();
        let with = |record: &Created, given: &Handover, to: &str| {
            let mut r = record.clone();
            for (id, c) in given {
                if id == to {
                    r.absorb(c);
                }
            }
            r
        };
        for (out, stay) in [(ID, OTHER), (OTHER, ID)] {
            let (mine, theirs) = if out == ID { (&a, &b) } else { (&b, &a) };
            let (half, _, given) = unmerge_handing_over(&b.doc, out, Some(&mine.created)).unwrap();
            let (back, _) = unmerge(&half, stay, Some(&with(&theirs.created, &given, stay))).unwrap();
            prop_assert_eq!(text(&back), text(&doc), "removing {} first", out);
        }
    }
}

// The same laws on the inputs that once broke them (empty groups and events in a recipe,
// a user's empty event arrays, a document without `hooks`); each plain test below is the
// smallest input proptest found then, kept as a regression test.

proptest! {
    /// A recipe may hold an empty group (`group-empty` is only a warning) or an event with
    /// no groups (no finding at all), and install passes them to merge as they are.
    #[test]
    fn merge_laws_hold_for_recipes_with_empty_groups(
        doc in user_doc(PLAIN),
        hooks in recipe_hooks_with(0, 0),
    ) {
        let once = merge(&doc, ID, &hooks, None).unwrap();
        prop_assert_eq!(text(&merge(&once.doc, ID, &hooks, Some(&once.created)).unwrap().doc), text(&once.doc));
        prop_assert_eq!(text(&unmerge(&once.doc, ID, Some(&once.created)).unwrap().0), text(&doc));
    }

    /// A user's empty event array (`"Stop": []`) that the recipe also uses.
    #[test]
    fn merge_laws_hold_with_empty_event_arrays(
        doc in user_doc(DocShape { own_stamps: false, empty_events: true, no_hooks_key: false }),
        hooks in recipe_hooks(),
    ) {
        let once = merge(&doc, ID, &hooks, None).unwrap();
        prop_assert_eq!(text(&merge(&once.doc, ID, &hooks, Some(&once.created)).unwrap().doc), text(&once.doc));
        prop_assert_eq!(text(&unmerge(&once.doc, ID, Some(&once.created)).unwrap().0), text(&doc));
    }

    /// A user document with no `hooks` key at all.
    #[test]
    fn unmerge_undoes_merge_without_a_hooks_key(
        doc in user_doc(DocShape { own_stamps: false, empty_events: false, no_hooks_key: true }),
        hooks in recipe_hooks(),
    ) {
        let merged = merge(&doc, ID, &hooks, None).unwrap();
        prop_assert_eq!(text(&unmerge(&merged.doc, ID, Some(&merged.created)).unwrap().0), text(&doc));
    }
}

fn hooks_of(v: Value) -> IndexMap<String, Vec<Group>> {
    serde_json::from_value(v).unwrap()
}

/// The smallest case of the law above: one handler of the user before the recipe's in its
/// group and one after. A re-install put the recipe's group after both.
#[test]
fn regression_user_handlers_on_both_sides_of_the_recipe_s() {
    let hooks = hooks_of(json!({"PreToolUse": [{"matcher": "exec", "hooks": [
        {"id": "gate", "type": "command", "command": "node gate.js"}
    ]}]}));
    let once = merge(&json!({}), ID, &hooks, None).unwrap();
    let mut doc = once.doc.clone();
    let group = doc["hooks"]["PreToolUse"][0]["hooks"]
        .as_array_mut()
        .unwrap();
    group.insert(0, json!({"type": "command", "command": "before"}));
    group.push(json!({"type": "command", "command": "after"}));
    let again = merge(&doc, ID, &hooks, Some(&once.created)).unwrap();
    let commands: Vec<Vec<&str>> = again.doc["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["matcher"], "exec", "{g}");
            g["hooks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["command"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(commands, [["before"], ["node gate.js"], ["after"]]);
    // A third install changes nothing more, and removing the recipe gives the group back
    // whole, as the user had it.
    let third = merge(&again.doc, ID, &hooks, Some(&again.created)).unwrap();
    assert_eq!(text(&third.doc), text(&again.doc));
    assert_eq!(third.created, again.created);
    let (back, _) = unmerge(&third.doc, ID, Some(&third.created)).unwrap();
    assert_eq!(
        text(&back),
        text(
            &json!({"hooks": {"PreToolUse": [{"matcher": "exec", "hooks": [
                {"type": "command", "command": "before"},
                {"type": "command", "command": "after"}
            ]}]}})
        )
    );
}

#[test]
fn regression_recipe_empty_group() {
    let doc = json!({"hooks": {}});
    let hooks = hooks_of(json!({"Stop": [{"hooks": []}]}));
    let once = merge(&doc, ID, &hooks, None).unwrap();
    // Was {"hooks":{"Stop":[{"hooks":[]},{"hooks":[]}]}} after the second merge.
    assert_eq!(
        text(
            &merge(&once.doc, ID, &hooks, Some(&once.created))
                .unwrap()
                .doc
        ),
        text(&once.doc)
    );
    // Was {"hooks":{"Stop":[{"hooks":[]}]}}.
    assert_eq!(
        text(&unmerge(&once.doc, ID, Some(&once.created)).unwrap().0),
        text(&doc)
    );
}

#[test]
fn regression_recipe_empty_event() {
    let doc = json!({"hooks": {}});
    let hooks = hooks_of(json!({"Stop": []}));
    let once = merge(&doc, ID, &hooks, None).unwrap();
    // Was {"hooks":{"Stop":[]}}.
    assert_eq!(
        text(&unmerge(&once.doc, ID, Some(&once.created)).unwrap().0),
        text(&doc)
    );
}

#[test]
fn regression_user_empty_event_array() {
    let doc = json!({"hooks": {"Stop": [], "PreToolUse": [{"hooks": [{"type": "command", "command": "mine"}]}]}});
    let hooks = hooks_of(
        json!({"Stop": [{"hooks": [{"id": "h", "type": "command", "command": "node x.js"}]}]}),
    );
    let once = merge(&doc, ID, &hooks, None).unwrap();
    // The second merge gave {"hooks":{"PreToolUse":[…],"Stop":[…]}}: Stop moved.
    assert_eq!(
        text(
            &merge(&once.doc, ID, &hooks, Some(&once.created))
                .unwrap()
                .doc
        ),
        text(&once.doc)
    );
    // Remove gave {"hooks":{"PreToolUse":[…]}}: the user's `"Stop": []` was gone.
    assert_eq!(
        text(&unmerge(&once.doc, ID, Some(&once.created)).unwrap().0),
        text(&doc)
    );
}

#[test]
fn regression_document_without_hooks_key() {
    let doc = json!({});
    let hooks = hooks_of(json!({}));
    let merged = merge(&doc, ID, &hooks, None).unwrap();
    // Was {"hooks":{}}.
    assert_eq!(
        text(&unmerge(&merged.doc, ID, Some(&merged.created)).unwrap().0),
        text(&doc)
    );
}

// ---------------------------------------------------------------------------------------
// Reproducible packing
// ---------------------------------------------------------------------------------------

/// A file of the generated recipe tree.
#[derive(Clone, Debug)]
struct TreeFile {
    rel: String,
    body: Vec<u8>,
    exec: bool,
}

/// The recipe `demo` (assembled layout) plus a few files with random bytes in nested
/// folders, some executable. Folder names start with `d-` and file names with `f-`, so no
/// path is both.
fn recipe_tree() -> impl Strategy<Value = Vec<TreeFile>> {
    let file = (
        prop::collection::vec("d-[a-z]{1,2}", 0..3),
        "f-[a-z0-9]{1,5}\\.(txt|dat|sh)",
        prop::collection::vec(any::<u8>(), 0..1500),
        any::<bool>(),
    )
        .prop_map(|(dirs, name, body, exec)| {
            let mut rel = dirs.join("/");
            if !rel.is_empty() {
                rel.push('/');
            }
            rel.push_str(&name);
            TreeFile { rel, body, exec }
        });
    prop::collection::vec(file, 1..7).prop_map(|files| {
        let mut m = manifest(ID);
        m["version"] = json!("1.2.3");
        let mut all = vec![
            TreeFile {
                rel: "recipe.json".into(),
                body: serde_json::to_vec_pretty(&m).unwrap(),
                exec: false,
            },
            TreeFile {
                rel: "README.md".into(),
                body: b"# demo\n".to_vec(),
                exec: false,
            },
            TreeFile {
                rel: "scripts/main.js".into(),
                body: b"process.exit(0);\n".to_vec(),
                exec: false,
            },
        ];
        let mut seen = std::collections::BTreeSet::new();
        for f in files {
            if seen.insert(f.rel.clone()) {
                all.push(f);
            }
        }
        all
    })
}

/// How the second copy of the tree differs from the first.
#[derive(Clone, Debug)]
struct Disorder {
    /// Order in which the files are created.
    order: Vec<usize>,
    /// mtimes (seconds, nanoseconds) for files and folders, used round-robin.
    mtimes: Option<Vec<(i64, u32)>>,
    /// Add g+w,o+w to files and folders.
    group_other_write: bool,
    /// Build the tree elsewhere, then copy it (new inodes, another creation order).
    copy: bool,
}

fn disorder(n: usize) -> impl Strategy<Value = Disorder> {
    (
        Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        prop::option::of(prop::collection::vec(
            (0i64..4_000_000_000, 0u32..1_000_000_000),
            1..8,
        )),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(order, mtimes, group_other_write, copy)| Disorder {
            order,
            mtimes,
            group_other_write,
            copy,
        })
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn write_tree(root: &Path, files: &[TreeFile], order: &[usize]) {
    for &i in order {
        let f = &files[i];
        let p = root.join(&f.rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &f.body).unwrap();
        set_mode(&p, if f.exec { 0o755 } else { 0o644 });
    }
}

/// Every path under `root` (folders included), deepest first when `rev`.
fn all_paths(root: &Path, rev: bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect();
    if rev {
        v.reverse();
    }
    v
}

/// Copies `from` to `to`, creating entries in reverse name order, keeping modes.
fn copy_tree(from: &Path, to: &Path) {
    let paths = all_paths(from, true);
    for p in &paths {
        let dest = to.join(p.strip_prefix(from).unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(p, &dest).unwrap();
        }
    }
    for p in &paths {
        set_mode(&to.join(p.strip_prefix(from).unwrap()), mode_of(p));
    }
}

fn pack_dir(sb: &Sandbox, recipes: &str, out: &str) -> std::process::Output {
    sb.cmd()
        .args(["pack", "--recipes-dir", recipes, "--out-dir", out])
        .args(["--updated-at", "2026-11-29T00:00:00Z"])
        .output()
        .unwrap()
}

fn packed_ok(o: &std::process::Output) -> Result<(), TestCaseError> {
    prop_assert!(
        o.status.success(),
        "pack failed ({:?}): {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Same tree, same bytes: creation order, mtimes, extra write bits and a copy to
    /// another folder change nothing in the archive, the index or SHA256SUMS.
    #[test]
    fn packing_is_reproducible(
        (files, d) in recipe_tree().prop_flat_map(|files| {
            let n = files.len();
            (Just(files), disorder(n))
        })
    ) {
        let sb = Sandbox::new();
        // Reference: written in order, default modes, fresh mtimes.
        let canonical: Vec<usize> = (0..files.len()).collect();
        write_tree(&sb.join("a/demo"), &files, &canonical);
        let o = pack_dir(&sb, "a", "out-a");
        packed_ok(&o)?;
        let reference = snapshot(&sb.join("out-a"));
        prop_assert_eq!(reference.len(), 3, "{:?}", reference.keys().collect::<Vec<_>>());

        // The same tree, disordered.
        let built = if d.copy { "staging/demo" } else { "b/demo" };
        write_tree(&sb.join(built), &files, &d.order);
        if d.group_other_write {
            for p in all_paths(&sb.join(built), false) {
                set_mode(&p, mode_of(&p) | 0o022);
            }
        }
        if d.copy {
            copy_tree(&sb.join("staging"), &sb.join("b"));
        }
        if let Some(times) = &d.mtimes {
            for (i, p) in all_paths(&sb.join("b/demo"), true).iter().enumerate() {
                let (s, ns) = times[i % times.len()];
                let t = filetime::FileTime::from_unix_time(s, ns);
                filetime::set_file_times(p, t, t).unwrap();
            }
        }
        let o = pack_dir(&sb, "b", "out-b");
        packed_ok(&o)?;
        let again = snapshot(&sb.join("out-b"));
        prop_assert!(reference == again, "the archives differ for {:?}", d);
    }
}
