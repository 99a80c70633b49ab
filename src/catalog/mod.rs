//! `hooks-index.json` (schema `hooks.catalog.v1`): the list of published recipe versions.
//!
//! The index is what users trust when they install by id, so its checks are strict: ids
//! unique and sorted, `latest` among `versions` and the recipe's `min_cli` equal to the
//! latest version's, every sha256 64 lowercase hex, URLs absolute (`https`, `http`, `file`)
//! or relative to the index. Readers ignore fields they do not know, so unknown fields are
//! not reported.

pub mod verify;

use crate::diagnostic::{Diagnostic, Findings};
use crate::id::Id;
use crate::json::pointer_push;
use crate::sha256::Sha256;
use crate::version::Version;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The exact schema string.
pub const SCHEMA: &str = "hooks.catalog.v1";

/// File name of the index in a catalog folder.
pub const INDEX_FILE: &str = "hooks-index.json";

/// Name of the checksum file written beside the index.
pub const SUMS_FILE: &str = "SHA256SUMS";

/// The rule for a `latest` older than a listed version: a warning here and in `pack`, an
/// error in `catalog verify` and `pack --check`.
pub(crate) const LATEST_NOT_NEWEST: &str = "latest-not-newest";

/// A whole index. Field order here is the order written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// RFC 3339 UTC time of the last change.
    pub updated_at: String,
    /// Recipes sorted by id.
    pub recipes: Vec<CatalogRecipe>,
}

/// One recipe and all its published versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogRecipe {
    /// Recipe id.
    pub id: Id,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One-line description.
    #[serde(default)]
    pub summary: String,
    /// The version `install ID` takes when the host is new enough.
    pub latest: Version,
    /// `latest`'s `min_cli`.
    pub min_cli: Version,
    /// Every published version, newest first.
    pub versions: Vec<CatalogVersion>,
}

/// One published archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogVersion {
    /// Recipe version.
    pub version: Version,
    /// Absolute URL, or relative to the index's own URL.
    pub url: String,
    /// Digest of the archive bytes.
    pub sha256: Sha256,
    /// Archive size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Oldest host CLI that runs this version.
    pub min_cli: Version,
}

/// Checks an RFC 3339 timestamp such as `2026-11-29T00:00:00Z`.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    let (year, month) = (num(0..4), num(5..7));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month)
        || !(1..=days).contains(&num(8..10))
        || num(11..13) > 23
        || num(14..16) > 59
        || num(17..19) > 60
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && num(s.len() - 5..s.len() - 3) <= 23
                && num(s.len() - 2..s.len()) <= 59
        }
        _ => false,
    }
}

/// Why an archive URL in an index is unusable, if it is.
pub fn check_url(url: &str) -> Result<(), String> {
    check_url_with(
        url,
        &["https", "http", "file"],
        "only https, http and file URLs (or paths relative to the index) are fetched",
    )
}

/// The path, relative to the catalog folder, of the archive an index names by `url`: a
/// relative URL as the file it resolves to (beside the index, or in a folder beside it:
/// `old/x.tar.gz`, whose last part alone would be another file, `a/../x.tar.gz` that is
/// `x.tar.gz`), an absolute one (`--asset-base-url`) by its last part, the file uploaded
/// there. A relative URL's `?query` and `#fragment` are no part of the file, as reading it
/// beside an index on disk drops them, and a static server serves the file without them.
/// `None` when that could name something else than a file in the folder (a folder, one
/// above it, an absolute path, an absolute URL's `?query`, which may pick what a server
/// sends, escapes, text no URL holds).
pub(crate) fn archive_file(url: &str) -> Option<String> {
    check_url(url).ok()?;
    let path = if url.contains("://") {
        url.rsplit('/').next().unwrap_or(url)
    } else {
        url.split(['?', '#']).next().unwrap_or(url)
    };
    let last = path.rsplit('/').next().unwrap_or(path);
    if matches!(last, "" | "." | "..")
        || path.starts_with('/')
        || path.contains(['\\', ':', '?', '#', '%'])
    {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// What a relative archive URL resolves to that is no archive, if it does: the catalog's
/// own files (no archive has those names beside the index; a reference with no path,
/// `#a` or `?x`, is the index itself, RFC 3986 5.2.2), or a folder (`.`, `old/`).
fn names_catalog_file(url: &str) -> Option<&'static str> {
    // Percent-decoded, as the path is read (`%2e` is `.`, `old%2F` is `old/`).
    let path = crate::fetch::relative_path(url)?;
    if path.is_empty() {
        return Some("the catalog's index");
    }
    let last = path.rsplit('/').next().unwrap_or(&path);
    if matches!(last, "" | "." | "..") {
        return Some("a folder");
    }
    match crate::fetch::without_dot_segments(&path).as_str() {
        INDEX_FILE => Some("the catalog's index"),
        SUMS_FILE => Some("the catalog's SHA256SUMS"),
        _ => None,
    }
}

/// Why the archive URL `url` of an index on disk names a file outside the index's folder,
/// if it does: a path from `/`, or one whose `..` climb above the folder (read as
/// [`crate::fetch::Location::join`] reads it, so `%2e%2e/` is `../`), or a `file://` URL.
/// SPEC 1.5 allows both, and `install` and `catalog verify` read such an archive (a regular
/// file only, checked against the index's size and sha256 before it is opened), but the
/// folder alone no longer holds its catalog: each reader warns of it (`url-outside`), and
/// [`PUBLISH_INSIDE`] is the maintainer's fix.
pub(crate) fn local_url_outside(url: &str) -> Option<&'static str> {
    let Some(path) = crate::fetch::relative_path(url) else {
        let file = (url.split_once(':')).is_some_and(|(s, _)| s.eq_ignore_ascii_case("file"));
        return file.then_some(
            "is a file:// URL, a file of this machine that no other machine reads, so the \
             catalog folder alone does not hold it",
        );
    };
    let mut depth = 0usize;
    let climbs = path.split('/').any(|part| match part {
        "" | "." => false,
        ".." => match depth.checked_sub(1) {
            Some(d) => {
                depth = d;
                false
            }
            None => true,
        },
        _ => {
            depth += 1;
            false
        }
    });
    (path.starts_with('/') || climbs).then_some(
        "leads out of the catalog folder (the index's folder), so the folder alone does not \
         hold it: uploaded on its own, its index names an archive that is not there",
    )
}

/// Why the archive `archive`, which the index on disk `index` names by `url`, is no file
/// of the index's folder, if it is not: its URL leads out ([`local_url_outside`]), or a
/// symbolic link on its way (the archive, or a folder of its path) may lead anywhere on
/// this machine. A pull request's catalog could hold a link to any file, and what `install`
/// and `catalog verify` read they report (its size, its sha256, its first entry). None for
/// an index that is not on disk.
pub(crate) fn local_archive_outside(
    index: &crate::fetch::Location,
    archive: &crate::fetch::Location,
    url: &str,
) -> Option<&'static str> {
    let (crate::fetch::Location::Path(index), crate::fetch::Location::Path(archive)) =
        (index, archive)
    else {
        return None;
    };
    if let Some(why) = local_url_outside(url) {
        return Some(why);
    }
    let dir = index.parent().unwrap_or(Path::new("."));
    let mut at = dir.to_path_buf();
    for part in archive.strip_prefix(dir).ok()?.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_symlink()) {
            return Some(
                "leads through a symbolic link in the catalog folder, which may point at any \
                 file of this machine, so the folder alone does not hold it",
            );
        }
    }
    None
}

/// How a maintainer keeps a catalog folder whole, for a [`local_url_outside`] warning.
pub(crate) const PUBLISH_INSIDE: &str = "`hookpack pack` writes archive names only: move the \
     archive into the catalog folder and give its name there as the `url` (or pack into the \
     folder again)";

/// Why `url` is unusable where only the (lowercase) `schemes` are, if it is; a URL with
/// another scheme is told `accepted`, what the place it was given takes.
pub(crate) fn check_url_with(url: &str, schemes: &[&str], accepted: &str) -> Result<(), String> {
    if url.trim().is_empty() {
        return Err("is empty".into());
    }
    check_url_text(url)?;
    if let Some(colon) = url.find(':') {
        let scheme = &url[..colon];
        let is_scheme = !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !url[..colon].contains('/');
        if is_scheme {
            let lower = scheme.to_ascii_lowercase();
            let port = url[colon + 1..].starts_with(|c: char| c.is_ascii_digit());
            let known = schemes.contains(&lower.as_str());
            if port && !known {
                // `localhost:8080/hooks`: a host and port, which URL parsers read as the
                // scheme `localhost:`.
                return Err(format!("has no scheme (`{scheme}:` reads as one, but is a host and port); write `https://{url}` (or `http://{url}`)"));
            }
            if !known {
                return Err(format!("uses the `{scheme}:` scheme; {accepted}"));
            }
            if !url[colon + 1..].starts_with("//") {
                return Err(format!("must be written `{lower}://…`"));
            }
        }
    }
    Ok(())
}

/// Refuses the characters URL text may not hold as they are (RFC 3986; WHATWG parsers
/// escape some of them and reject others, so what a reader fetches depends on the reader):
/// white space, control characters, bidirectional controls, zero-width characters, `"`,
/// `<`, `>`, `\\`, `^`, `` ` ``, `{`, `|`, `}`, and a `%` that does not start an escape of
/// two hex digits. The first one is named, with its place (counted in characters from 1)
/// and its escape.
fn check_url_text(url: &str) -> Result<(), String> {
    let chars: Vec<char> = url.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let name = match c {
            '%' if chars
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(char::is_ascii_hexdigit)) =>
            {
                continue
            }
            '%' => "a `%` not followed by two hex digits".to_string(),
            ' ' => "a space".to_string(),
            '"' => "a double quote".to_string(),
            '`' => "a backtick".to_string(),
            '\\' => "a backslash".to_string(),
            '<' | '>' | '^' | '{' | '|' | '}' => format!("`{c}`"),
            c if c.is_control() => format!("the control character U+{:04X}", u32::from(c)),
            c if c.is_whitespace() => format!("the white space U+{:04X}", u32::from(c)),
            // Shown as nothing, or reordering what is around them: a URL that holds one
            // is not the URL it shows.
            c if crate::output::is_unsafe(c) => {
                format!("the bidirectional control U+{:04X}", u32::from(c))
            }
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => {
                format!("the invisible character U+{:04X}", u32::from(c))
            }
            _ => continue,
        };
        let mut utf8 = [0; 4];
        let escaped: String = c
            .encode_utf8(&mut utf8)
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect();
        return Err(format!(
            "holds {name} at character {}, which URL text may not hold as it is; \
             percent-encode it (as `{escaped}`)",
            i + 1
        ));
    }
    Ok(())
}

fn str_field<'v>(
    obj: &'v serde_json::Map<String, Value>,
    key: &str,
    at: &str,
    f: &mut Findings,
) -> Option<&'v str> {
    match obj.get(key) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            f.error(
                &pointer_push(at, key),
                "field-type",
                format!("`{key}` must be a string, found {other}"),
            );
            None
        }
        None => {
            f.error(at, "field-missing", format!("`{key}` is missing"));
            None
        }
    }
}

fn version_field(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    at: &str,
    f: &mut Findings,
) -> Option<Version> {
    let s = str_field(obj, key, at, f)?;
    match Version::parse(s) {
        Ok(v) => Some(v),
        Err(e) => {
            f.error(
                &pointer_push(at, key),
                "version-invalid",
                format!("`{key}`: {e}"),
            );
            None
        }
    }
}

/// Checks an index document.
pub fn check_document(value: &Value, f: &mut Findings) {
    let Some(obj) = value.as_object() else {
        f.error(
            "",
            "document-not-object",
            "a hooks-index.json must be a JSON object",
        );
        return;
    };
    match obj.get("schema") {
        Some(Value::String(s)) if s == SCHEMA => {}
        Some(other) => f.error(
            "/schema",
            "schema-mismatch",
            format!("`schema` must be exactly \"{SCHEMA}\", found {other}"),
        ),
        None => f.error(
            "",
            "schema-missing",
            format!("no `schema`; add \"schema\": \"{SCHEMA}\""),
        ),
    }
    if let Some(ts) = str_field(obj, "updated_at", "", f) {
        if !is_rfc3339(ts) {
            f.error("/updated_at", "timestamp-invalid", format!("`updated_at` must be an RFC 3339 time such as 2026-11-29T00:00:00Z, found `{ts}`"));
        }
    }
    let recipes = match obj.get("recipes") {
        Some(Value::Array(r)) => r,
        Some(other) => {
            f.error(
                "/recipes",
                "field-type",
                format!("`recipes` must be an array, found {other}"),
            );
            return;
        }
        None => {
            f.error(
                "",
                "field-missing",
                "`recipes` is missing; add \"recipes\": []",
            );
            return;
        }
    };
    let mut ids: HashMap<String, String> = HashMap::new();
    // Each version is an archive of its own (its one top folder is `<id>-<version>/`).
    let mut urls: HashMap<String, String> = HashMap::new();
    let mut previous: Option<String> = None;
    for (i, r) in recipes.iter().enumerate() {
        let rp = format!("/recipes/{i}");
        let Some(robj) = r.as_object() else {
            f.error(&rp, "field-type", "each recipe entry must be an object");
            continue;
        };
        if let Some(id) = str_field(robj, "id", &rp, f) {
            match Id::parse(id) {
                Err(e) => f.error(&pointer_push(&rp, "id"), "recipe-id-invalid", e.to_string()),
                Ok(_) => {
                    if let Some(first) = ids.get(id) {
                        f.error(&pointer_push(&rp, "id"), "recipe-id-duplicate", format!("recipe id `{id}` is listed twice (first at {first}); merge the entries' versions into one"));
                    } else {
                        ids.insert(id.to_string(), rp.clone());
                    }
                    if previous.as_deref().is_some_and(|p| p > id) {
                        f.error(
                            &pointer_push(&rp, "id"),
                            "recipes-unsorted",
                            format!(
                                "recipes must be sorted by id; `{id}` comes after `{}`",
                                previous.as_deref().unwrap_or("")
                            ),
                        );
                    }
                    previous = Some(id.to_string());
                }
            }
        }
        crate::recipe::check_one_line_text(robj, &rp, f);
        if let Some(s) = robj.get("summary") {
            if !s.is_string() {
                f.error(
                    &pointer_push(&rp, "summary"),
                    "field-type",
                    "`summary` must be a string",
                );
            }
        }
        if let Some(n) = robj.get("name") {
            if !n.is_string() {
                f.error(
                    &pointer_push(&rp, "name"),
                    "field-type",
                    "`name` must be a string",
                );
            }
        }
        let latest = version_field(robj, "latest", &rp, f);
        let min_cli = version_field(robj, "min_cli", &rp, f);
        let versions = match robj.get("versions") {
            Some(Value::Array(v)) if !v.is_empty() => v,
            Some(Value::Array(_)) => {
                f.error(
                    &pointer_push(&rp, "versions"),
                    "versions-empty",
                    "`versions` is empty; list at least the latest version",
                );
                continue;
            }
            Some(other) => {
                f.error(
                    &pointer_push(&rp, "versions"),
                    "field-type",
                    format!("`versions` must be an array, found {other}"),
                );
                continue;
            }
            None => {
                f.error(&rp, "field-missing", "`versions` is missing");
                continue;
            }
        };
        let mut seen: HashMap<Version, String> = HashMap::new();
        let mut newest: Option<Version> = None;
        let mut latest_min_cli: Option<Option<Version>> = None;
        for (j, v) in versions.iter().enumerate() {
            let vp = format!("{rp}/versions/{j}");
            let Some(vobj) = v.as_object() else {
                f.error(&vp, "field-type", "each version entry must be an object");
                continue;
            };
            let version = version_field(vobj, "version", &vp, f);
            if let Some(url) = str_field(vobj, "url", &vp, f) {
                if let Err(why) = check_url(url) {
                    f.error(
                        &pointer_push(&vp, "url"),
                        "url-invalid",
                        format!("url `{url}` {why}"),
                    );
                } else if let Some(what) = names_catalog_file(url) {
                    f.error(
                        &pointer_push(&vp, "url"),
                        "url-not-archive",
                        format!(
                            "url `{url}` names {what}, not an archive; give the URL of the \
                             version's archive"
                        ),
                    );
                } else if let Some(first) = urls.get(url) {
                    f.error(
                        &pointer_push(&vp, "url"),
                        "url-duplicate",
                        format!("url `{url}` is listed already (at {first}); each version is an archive of its own, so give this one the URL of its archive"),
                    );
                } else {
                    urls.insert(url.to_string(), pointer_push(&vp, "url"));
                }
            }
            if let Some(sha) = str_field(vobj, "sha256", &vp, f) {
                if let Err(e) = Sha256::parse(sha) {
                    f.error(
                        &pointer_push(&vp, "sha256"),
                        "sha256-invalid",
                        e.to_string(),
                    );
                }
            }
            if let Some(size) = vobj.get("size") {
                if size.as_u64().is_none() {
                    f.error(
                        &pointer_push(&vp, "size"),
                        "size-invalid",
                        format!(
                            "`size` must be a whole number of bytes, found {}",
                            crate::json::shown_value(size)
                        ),
                    );
                }
            }
            let vmin = version_field(vobj, "min_cli", &vp, f);
            if let Some(version) = version {
                if let Some(first) = seen.get(&version) {
                    f.error(&pointer_push(&vp, "version"), "version-duplicate", format!("version {version} is listed twice (first at {first}); a published version is immutable"));
                } else {
                    seen.insert(version.clone(), vp.clone());
                }
                if latest.as_ref() == Some(&version) {
                    latest_min_cli = Some(vmin);
                }
                if newest.as_ref().is_none_or(|n| version > *n) {
                    newest = Some(version);
                }
            }
        }
        if let Some(latest) = &latest {
            match &latest_min_cli {
                None if !seen.is_empty() => f.error(
                    &pointer_push(&rp, "latest"),
                    "latest-not-listed",
                    format!("`latest` is {latest}, which is not among `versions`; list it or point `latest` at a listed version"),
                ),
                Some(Some(vmin)) => {
                    if let Some(min_cli) = &min_cli {
                        if min_cli != vmin {
                            f.error(
                                &pointer_push(&rp, "min_cli"),
                                "min-cli-mismatch",
                                format!("the recipe's `min_cli` is {min_cli} but its latest version {latest} needs {vmin}; they must be equal"),
                            );
                        }
                    }
                }
                _ => {}
            }
            // A warning: the format asks only that `latest` be listed, and an older
            // `latest` is how a catalog holds a published version back (every version
            // stays listed). `catalog verify` makes it an error.
            if let Some(newest) = newest.filter(|n| n > latest) {
                f.warn(
                    &pointer_push(&rp, "latest"),
                    LATEST_NOT_NEWEST,
                    format!("`latest` is {latest} but {newest} is listed too, so `install` without a version will not take {newest}; set `latest` to {newest}, unless it is held back on purpose"),
                );
            }
        }
    }
}

/// Parses and checks an index given as bytes; `file` names it in the diagnostics.
/// `bytes` read as an index (`T`: [`Catalog`], or a `serde_json::Value` to edit), or every
/// error found in them as [`crate::error::Error::IndexInvalid`].
pub fn parse_index<T: serde::de::DeserializeOwned>(
    file: &Path,
    bytes: &[u8],
) -> Result<T, crate::error::Error> {
    let problems: Vec<Diagnostic> = validate_bytes(file, bytes)
        .into_iter()
        .filter(|d| d.severity == crate::diagnostic::Severity::Error)
        .collect();
    if !problems.is_empty() {
        return Err(crate::error::Error::IndexInvalid {
            diagnostics: problems,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| crate::error::Error::IndexInvalid {
        diagnostics: vec![Diagnostic::file_level(
            file,
            crate::diagnostic::Severity::Error,
            "index-invalid",
            e.to_string(),
        )],
    })
}

pub fn validate_bytes(file: &Path, bytes: &[u8]) -> Vec<Diagnostic> {
    // A web server's folder listing or error page, fetched where an index was expected.
    if bytes.trim_ascii_start().starts_with(b"<") {
        // Named as the index already, the page stands in its place (a login or error page
        // served with 200): naming the index file is no fix then.
        let named = file.file_name().is_some_and(|n| n == INDEX_FILE);
        let fix = if named {
            "the server sent a page where the index should be (a login page, or an error page \
             sent as a success?); check that this URL serves the index itself, as `curl` shows"
                .to_string()
        } else {
            format!("name the index file itself, e.g. …/{INDEX_FILE}")
        };
        return vec![Diagnostic::file_level(
            file,
            crate::diagnostic::Severity::Error,
            "index-is-html",
            format!(
                "this is HTML, not a catalog index (a folder listing or an error page?); {fix}"
            ),
        )];
    }
    // A catalog's SHA256SUMS or an archive, given for its index: no broken JSON whose
    // first byte is worth pointing at.
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let not_json = !crate::validate::meant_as_json(&name, bytes)
        && !bytes.trim_ascii().is_empty()
        && crate::json::parse(bytes).is_err();
    if not_json {
        let index = file.with_file_name(INDEX_FILE);
        return vec![Diagnostic::file_level(
            file,
            crate::diagnostic::Severity::Error,
            "index-not-json",
            format!("this is not JSON, so no catalog index (an archive, or SHA256SUMS?); give the catalog's index, {}", index.display()),
        )];
    }
    crate::validate::check_bytes(file, bytes, check_document)
}

/// [`validate_bytes`] of an index file on disk (`hookpack validate`), with a warning for
/// each version `url` that leaves its folder (`url-outside`): SPEC 1.5 allows it, but the
/// folder alone no longer holds its catalog.
pub fn validate_on_disk(file: &Path, bytes: &[u8]) -> Vec<Diagnostic> {
    let mut out = validate_bytes(file, bytes);
    let Ok(parsed) = crate::json::parse(bytes) else {
        return out;
    };
    let mut f = Findings::new(file, Some(&parsed.locations));
    let recipes = parsed.value["recipes"].as_array().into_iter().flatten();
    for (i, r) in recipes.enumerate() {
        for (j, v) in r["versions"].as_array().into_iter().flatten().enumerate() {
            let Some(url) = v["url"].as_str() else {
                continue;
            };
            if let Some(why) = local_url_outside(url) {
                f.warn(
                    &format!("/recipes/{i}/versions/{j}/url"),
                    "url-outside",
                    format!("url `{url}` {why}; {PUBLISH_INSIDE}"),
                );
            }
        }
    }
    out.extend(f.finish());
    out
}

/// One line of a `SHA256SUMS` file as `sha256sum -c` reads it: `None` for a line it passes
/// over (blank, or a `#` comment, behind a byte order mark too); else whether the line
/// starts with a byte order mark (which `sha256sum -c` takes for no checksum line, with a
/// warning, leaving the file it names unchecked) and, when it is `<sha256>  <file>`,
/// `<sha256> *<file>` or `sha256sum --tag`'s `SHA256 (<file>) = <sha256>`, its digest
/// (lower case) and file name (`./` dropped).
pub fn sums_line(line: &str) -> Option<(bool, Option<(String, &str)>)> {
    let (bom, line) = match line.strip_prefix('\u{FEFF}') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    if line.trim().is_empty() || line.starts_with('#') {
        return None;
    }
    let tagged = (line.strip_prefix("SHA256 ("))
        .and_then(|rest| rest.rsplit_once(") = "))
        .map(|(name, sha)| (sha, name));
    let parsed = (tagged.or_else(|| line.split_once("  ")))
        .or_else(|| line.split_once(" *"))
        .map(|(sha, name)| {
            (
                sha.to_ascii_lowercase(),
                name.strip_prefix("./").unwrap_or(name),
            )
        })
        .filter(|(sha, _)| crate::sha256::Sha256::parse(sha).is_ok());
    Some((bom, parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `size` past what hookpack reads was quoted in float form (`1e+20`), which is not
    /// what the index holds; a fraction is quoted as written.
    #[test]
    fn a_size_no_integer_is_quoted_as_the_index_holds_it() {
        for (written, shown) in [
            (
                "100000000000000000000",
                "found a whole number past 18446744073709551615",
            ),
            (
                "-100000000000000000000",
                "found a whole number below -9223372036854775808",
            ),
            ("1.5", "found 1.5"),
        ] {
            let doc = format!(
                r#"{{"schema": "hooks.catalog.v1", "updated_at": "2026-11-29T00:00:00Z", "recipes": [{{"id": "a", "name": "A", "summary": "s", "latest": "1.0.0", "versions": [{{"version": "1.0.0", "min_cli": "0.13.0", "url": "hooks-a-1.0.0.tar.gz", "sha256": "{}", "size": {written}}}]}}]}}"#,
                "0".repeat(64)
            );
            let found = validate_bytes(Path::new("hooks-index.json"), doc.as_bytes());
            let size = found.iter().find(|d| d.code == "size-invalid");
            let message = &size.unwrap_or_else(|| panic!("{found:?}")).message;
            assert!(message.ends_with(shown), "{written}: {message}");
        }
    }

    #[test]
    fn timestamps() {
        for good in [
            "2026-11-29T00:00:00Z",
            "2026-11-29T23:59:59.123Z",
            "2026-01-01T00:00:00+02:00",
            "2028-02-29T00:00:00Z",
        ] {
            assert!(is_rfc3339(good), "{good}");
        }
        for bad in [
            "2026-11-29",
            "2026-13-01T00:00:00Z",
            "2026-02-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-29T00:00:00+99:99",
            "2026-11-29 00:00:00Z",
            "2026-11-29T00:00:00",
            "x",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn urls() {
        for good in [
            "hooks-a-0.1.0.tar.gz",
            "https://x.test/a.tgz",
            "file:///tmp/a.tgz",
            "sub/a.tgz",
            "HTTP://x/a",
            "https://x/a%20b%2f%C3%A9",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "ftp://x/a",
            "javascript:alert(1)",
            "https:x",
            "a b.tgz",
            "a\\b",
            "a\"b",
            "a<b",
            "a>b",
            "a^b",
            "a`b",
            "a{b",
            "a|b",
            "a}b",
            "a\u{1}b",
            "a\u{a0}b",
            "a%",
            "a%2",
            "a%zz",
            "a%2g",
            "https://x/\u{202e}zg.tgz",
            "https://x/a\u{200b}b.tgz",
            "https://x/a\u{feff}b.tgz",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        // A host and port without a scheme is said to be one, with the URL to write.
        for (bad, scheme) in [
            ("localhost:8080/hooks", "localhost:"),
            ("127.0.0.1:8080", "127.0.0.1:"),
        ] {
            let why = check_url(bad).unwrap_err();
            assert_eq!(
                why,
                format!("has no scheme (`{scheme}` reads as one, but is a host and port); write `https://{bad}` (or `http://{bad}`)")
            );
        }
    }
}

/// Seconds since the Unix epoch now (0 if the clock is before it).
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_timestamp(secs: u64) -> String {
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The date `days` after 1970-01-01 (proleptic Gregorian), after Howard Hinnant's
/// algorithm.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Days from 1970-01-01 to the date (the inverse of [`civil_from_days`]).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The RFC 3339 time `ts` in one form per instant: in UTC, with `T` and `Z` upper case and
/// the fraction of a second without trailing zeros, so `2026-11-29T01:00:00+01:00`,
/// `2026-11-29t00:00:00.000z` and `2026-11-29T00:00:00Z` give the same index bytes. `None`
/// when `ts` is no RFC 3339 time, or falls outside the years 0000–9999 in UTC. A leap
/// second (`:60`) stays one, and is refused unless it ends a month in UTC.
pub fn utc_form(ts: &str) -> Option<String> {
    if !is_rfc3339(ts) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| ts[r].parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, &ts[17..19]);
    let rest = &ts[19..];
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(f) => {
            let n = f.bytes().take_while(u8::is_ascii_digit).count();
            (f[..n].trim_end_matches('0'), &f[n..])
        }
        None => ("", rest),
    };
    let offset = match zone.as_bytes().first() {
        Some(b'+' | b'-') => {
            let minutes = num(ts.len() - 5..ts.len() - 3)? * 60 + num(ts.len() - 2..ts.len())?;
            if zone.starts_with('-') {
                -minutes
            } else {
                minutes
            }
        }
        _ => 0,
    };
    let total = days_from_civil(year, month, day) * 1440 + hour * 60 + minute - offset;
    let (y, m, d) = civil_from_days(total.div_euclid(1440));
    if !(0..=9999).contains(&y) {
        return None;
    }
    let of_day = total.rem_euclid(1440);
    // A leap second is the last of a month's last minute, in UTC: `:60` elsewhere names
    // no instant.
    let last_day = civil_from_days(total.div_euclid(1440) + 1).2 == 1;
    if second == "60" && !(of_day == 1439 && last_day) {
        return None;
    }
    let dot = if fraction.is_empty() { "" } else { "." };
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{second}{dot}{fraction}Z",
        of_day / 60,
        of_day % 60
    ))
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn one_utc_form_per_instant() {
        for (given, utc) in [
            ("2026-11-29T00:00:00Z", Some("2026-11-29T00:00:00Z")),
            ("2026-11-29t00:00:00z", Some("2026-11-29T00:00:00Z")),
            ("2026-11-29T01:00:00+01:00", Some("2026-11-29T00:00:00Z")),
            ("2026-11-28T19:30:00-04:30", Some("2026-11-29T00:00:00Z")),
            ("2026-11-29T00:00:00-00:00", Some("2026-11-29T00:00:00Z")),
            ("2026-11-29T00:00:00.000Z", Some("2026-11-29T00:00:00Z")),
            (
                "2026-11-29T00:00:00.1230Z",
                Some("2026-11-29T00:00:00.123Z"),
            ),
            ("2024-03-01T00:30:00+01:00", Some("2024-02-29T23:30:00Z")),
            ("2016-12-31T23:59:60Z", Some("2016-12-31T23:59:60Z")),
            ("2017-01-01T00:59:60+01:00", Some("2016-12-31T23:59:60Z")),
            ("2016-12-31T23:59:60+01:00", None),
            ("2026-11-29T10:30:60Z", None),
            ("2015-06-30T23:59:60Z", Some("2015-06-30T23:59:60Z")),
            ("9999-12-31T23:59:59Z", Some("9999-12-31T23:59:59Z")),
            ("0000-01-01T00:00:00Z", Some("0000-01-01T00:00:00Z")),
            ("0000-01-01T00:00:00+01:00", None),
            ("9999-12-31T23:00:00-01:00", None),
            ("2026-11-29 00:00:00Z", None),
            ("2026-02-30T00:00:00Z", None),
        ] {
            assert_eq!(super::utc_form(given).as_deref(), utc, "{given}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(super::format_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            super::format_timestamp(1_795_910_400),
            "2026-11-29T00:00:00Z"
        );
    }
}
