//! Arbitrary bytes through hookpack's JSON reader and the three document validators.
//!
//! Properties:
//! 1. Nothing panics: `json::parse`, `recipe::validate_manifest_bytes`,
//!    `hooks_json::validate_bytes`, `catalog::validate_bytes`.
//! 2. `json::parse` agrees with `serde_json::from_slice::<Value>`: both accept or both refuse
//!    (hookpack accepting what serde_json refuses is tolerated only at 128 levels deep, its
//!    `MAX_DEPTH`, where serde_json's recursion limit lies; hookpack refusing what serde_json
//!    accepts, only past its `MAX_POINTER_BYTES` and `MAX_VALUES`, which it says), and when both accept, the values are equal *including key order* (compared as their
//!    serialisations, since `Map`'s `==` ignores order). Duplicate keys are compared too: both
//!    keep the first key's place and the last value.
//! 3. The position tree has the document's shape, every duplicate names a key that exists,
//!    and every diagnostic's line:column lies inside the document.
//! 4. What the validator passes, the typed reader takes: when `validate_manifest_bytes` /
//!    `catalog::validate_bytes` report no error, `serde_json::from_slice::<Recipe>` /
//!    `::<Catalog>` succeed (install and `recipe::load` run exactly that sequence, and a
//!    typed failure there would be an error without a JSON pointer).
//!
//! Found so far: `-0` (hookpack read the integer 0, serde_json the float -0.0; fixed in
//! adc09de, kept in fuzz/regressions/validate_documents/); a number past f64's range in a
//! hooks.json field no check reads (this target's own property was out of date: hooks.json
//! has read such numbers as JSON.parse does since 286fb59; `huge-number-in-hooks-json.json`).
#![no_main]

use hookpack::diagnostic::{Diagnostic, Severity};
use hookpack::json::{self, Locations};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::path::Path;

/// Nesting depth: 0 for a scalar, 1 for `[]`.
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn same_shape(v: &Value, loc: &Locations, has_duplicates: bool) {
    match (v, loc) {
        (Value::Array(items), Locations::Array(_, locs)) => {
            assert_eq!(items.len(), locs.len(), "array locations out of step");
            for (i, l) in items.iter().zip(locs) {
                same_shape(i, l, has_duplicates);
            }
        }
        (Value::Object(map), Locations::Object(_, members)) => {
            assert_eq!(map.len(), members.len(), "object locations out of step");
            if !has_duplicates {
                let a: Vec<&String> = map.keys().collect();
                let b: Vec<&String> = members.iter().map(|(k, _, _)| k).collect();
                assert_eq!(a, b, "object locations in another order");
            }
            for (k, _, l) in members {
                let child = map.get(k).expect("a located key that is not in the object");
                same_shape(child, l, has_duplicates);
            }
        }
        (Value::Array(_) | Value::Object(_), _)
        | (_, Locations::Array(..) | Locations::Object(..)) => {
            panic!("locations do not have the value's shape")
        }
        _ => {}
    }
}

/// Lines of the document as hookpack counts them (split on `\n`), in characters.
fn line_lengths(data: &[u8]) -> Vec<usize> {
    String::from_utf8_lossy(data)
        .split('\n')
        .map(|l| l.chars().count())
        .collect()
}

fn check_located(data: &[u8], diags: &[Diagnostic]) {
    if diags.is_empty() {
        return;
    }
    // Positions count characters of the valid UTF-8 prefix; lossy decoding of the rest can
    // only add characters, so the bound below holds either way.
    let lines = line_lengths(data);
    for d in diags {
        if let (Some(line), Some(column)) = (d.line, d.column) {
            assert!(
                line >= 1 && column >= 1,
                "diagnostic at {line}:{column}: {d:?}"
            );
            let len = lines.get(line as usize - 1).unwrap_or_else(|| {
                panic!(
                    "diagnostic on line {line} of a {}-line document: {d:?}",
                    lines.len()
                )
            });
            assert!(
                column as usize <= len + 1,
                "diagnostic at column {column} of a {len}-character line: {d:?}"
            );
        }
    }
}

fn has_error(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}

fuzz_target!(|data: &[u8]| {
    let ours = json::parse(data);
    let theirs = serde_json::from_slice::<Value>(data);

    match (&ours, &theirs) {
        (Ok(p), Ok(v)) => {
            let a = serde_json::to_string(&p.value).unwrap();
            let b = serde_json::to_string(v).unwrap();
            assert_eq!(a, b, "json::parse and serde_json read different values");
        }
        (Ok(p), Err(e)) => {
            // serde_json's recursion limit sits at hookpack's MAX_DEPTH (128 levels); allow
            // an off-by-one there.
            assert!(
                depth(&p.value) >= 128,
                "hookpack accepts what serde_json refuses ({e}): {}",
                serde_json::to_string(&p.value).unwrap()
            );
        }
        // Past its limits (more than 16 KiB of keys on one path, more than a million
        // values) hookpack refuses valid JSON, saying so.
        (Err(e), Ok(_)) if e.is_too_deep() || e.is_too_large() => {}
        (Err(e), Ok(v)) => {
            panic!(
                "hookpack refuses ({e}) what serde_json accepts: {}",
                serde_json::to_string(v).unwrap()
            );
        }
        (Err(_), Err(_)) => {}
    }

    if let Ok(p) = &ours {
        same_shape(&p.value, &p.locations, !p.duplicates.is_empty());
        // A duplicate inside a value that a later duplicate replaced points into nothing.
        let replaced: Vec<String> = p
            .duplicates
            .iter()
            .map(|d| json::pointer_push(&d.object_pointer, &d.key))
            .collect();
        for d in &p.duplicates {
            let inside_replaced = replaced
                .iter()
                .any(|r| d.object_pointer == *r || d.object_pointer.starts_with(&format!("{r}/")));
            if inside_replaced {
                continue;
            }
            let obj = p
                .value
                .pointer(&d.object_pointer)
                .and_then(Value::as_object)
                .unwrap_or_else(|| {
                    panic!(
                        "duplicate reported in a non-object at {:?}",
                        d.object_pointer
                    )
                });
            assert!(
                obj.contains_key(&d.key),
                "duplicate of a key that is not there"
            );
            assert!(d.first < d.again, "duplicate before its first appearance");
        }
    }

    let recipe = hookpack::recipe::validate_manifest_bytes(Path::new("recipe.json"), data, None);
    let hooks = hookpack::hooks_json::validate_bytes(Path::new("hooks.json"), data);
    let catalog = hookpack::catalog::validate_bytes(Path::new("hooks-index.json"), data);
    check_located(data, &recipe);
    check_located(data, &hooks);
    check_located(data, &catalog);

    // A document the reader refuses is an error in each validator; but a hooks.json reads
    // a number past f64's range as hosts' JSON.parse does (the field holding it is the
    // problem, if any: `timeout: 1e400`), so for it only what that reader refuses counts.
    if ours.is_err() {
        assert!(has_error(&recipe) && has_error(&catalog));
    }
    if json::parse_reading_huge_numbers(data).is_err() {
        assert!(has_error(&hooks), "hooks.json the reader refuses has no error");
    }

    // serde_json's typed readers stop at 128 levels; hookpack's parser allows one more.
    let shallow = matches!(&ours, Ok(p) if depth(&p.value) < 127);
    if shallow && !has_error(&recipe) {
        if let Err(e) = serde_json::from_slice::<hookpack::recipe::Recipe>(data) {
            panic!("recipe.json validates without errors but the typed reader refuses it: {e}");
        }
    }
    if shallow && !has_error(&catalog) {
        if let Err(e) = serde_json::from_slice::<hookpack::catalog::Catalog>(data) {
            panic!("the index validates without errors but the typed reader refuses it: {e}");
        }
    }
});
