//! Getting index and archive bytes from `https://`, `http://`, `file://` or a plain path.
//!
//! Bounded in every direction: connect and read timeouts, a floor on the download speed and
//! a deadline for each download, a few retries with backoff on connection failures and 5xx
//! answers only, a redirect limit, and a size cap enforced both from `Content-Length` and
//! while reading, so a server cannot make hookpack hold or write more than it asked for, or
//! wait longer than it allows. Private CAs come from `--ca-cert` or `SSL_CERT_FILE`.

use crate::sha256::Sha256;
use sha2::Digest as _;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local file (plain path or `file://` URL).
    Path(PathBuf),
    /// An `http(s)://` URL.
    Http(reqwest::Url),
    /// A file of the catalog built into the binary.
    Builtin(String),
}

/// The catalog built into the binary (this repo's `catalog/`).
pub mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));

    /// The bytes of a built-in catalog file.
    pub fn get(name: &str) -> Option<&'static [u8]> {
        FILES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Path(p) => write!(f, "{}", p.display()),
            Location::Http(u) => write!(f, "{}", shown_url(u.as_str())),
            Location::Builtin(n) => write!(f, "builtin:{n}"),
        }
    }
}

/// The certificates of the `--ca-cert` file `path`: at least one, in PEM.
fn ca_certificates(path: &Path) -> Result<Vec<reqwest::Certificate>, FetchError> {
    let unusable = |why: String| FetchError::CaCert {
        path: path.to_path_buf(),
        why,
    };
    let pem =
        crate::fs::read_limited(path, 1024 * 1024).map_err(|e| unusable(e.source.to_string()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| unusable(e.to_string()))?;
    if certs.is_empty() {
        return Err(unusable("no PEM certificate in the file".into()));
    }
    Ok(certs)
}

/// What an error status says beyond its number: a redirect status reaches the caller only
/// when it names no place to go (a `Location` is followed, or refused as such).
fn status_note(status: u16) -> &'static str {
    match status {
        300..=399 => ", a redirect with no Location to follow; the server's redirect is broken",
        401 | 403 => {
            ", which refuses a request without the right credentials: for a private catalog, \
             give them in the URL (`https://USER:TOKEN@host/…`; hookpack hides the password \
             in what it prints and sends it only to that host)"
        }
        _ => "",
    }
}

/// What to do about a failed connection, where the cause tells: a server silent past the
/// timeout, or a certificate this machine does not trust.
fn network_hint(e: &reqwest::Error) -> &'static str {
    if is_certificate_error(e) {
        "; its TLS certificate is not one this machine trusts: give the certificate of the \
         authority that signed it with --ca-cert FILE (PEM)"
    } else if e.is_timeout() {
        "; the server did not answer in time (HOOKPACK_HTTP_TIMEOUT=SECONDS waits longer)"
    } else {
        ""
    }
}

/// The warning for an index fetched over plain HTTP from another machine: anyone on the
/// way may change it, and with it the sha256s every archive is checked against, so
/// nothing vouches for what gets installed. None for HTTPS, a file, the built-in catalog
/// and this machine's own addresses (`localhost`, 127.0.0.0/8, also as `::ffff:127.x.y.z`,
/// and `::1`), where no one is on the way.
pub fn plain_http_warning(index: &Location) -> Option<String> {
    let Location::Http(url) = index else {
        return None;
    };
    if url.scheme() != "http" {
        return None;
    }
    // An IPv6 address is written in brackets.
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let this_machine = match host.parse::<std::net::IpAddr>() {
        // `::ffff:127.0.0.1` is the IPv4 loopback; a connection to the unspecified address
        // (`0.0.0.0`, `::`) goes to this machine on Linux and macOS.
        Ok(ip) => ip.to_canonical().is_loopback() || ip.to_canonical().is_unspecified(),
        // `localhost` alone: a name below it (`hooks.localhost`) is asked of DNS by a
        // resolver that does not know it (glibc's, with `hosts: files dns`), and whoever
        // answers picks the machine.
        Err(_) => host
            .strip_suffix('.')
            .unwrap_or(host)
            .eq_ignore_ascii_case("localhost"),
    };
    (!this_machine).then(|| {
        format!(
            "warning: the index {} is fetched over plain HTTP: anyone on the way can change it, \
             and the sha256s it gives are what every archive is checked against; use its \
             https:// URL",
            shown_url(url.as_str())
        )
    })
}

/// `url` as it may be shown: a password in it (`https://user:password@host/…`, for a
/// private index) becomes `***`, and so do a user name given alone (a token) and the value
/// of a query parameter named like a secret (`?token=…`, a signed URL's
/// `X-Amz-Signature=…`), so that none reaches a terminal or a CI log. Receipts keep the URL
/// as given, since `update` fetches with it.
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let mut hidden = false;
            if u.password().is_some() {
                hidden = u.set_password(Some("***")).is_ok();
            } else if !u.username().is_empty() {
                // A user name alone is as often a token (`https://TOKEN@host/…`).
                hidden = u.set_username("***").is_ok();
            }
            if let Some(query) = u.query().and_then(hide_query_secrets) {
                u.set_query(Some(&query));
                hidden = true;
            }
            if hidden {
                u.to_string()
            } else {
                url.to_string()
            }
        }
        // Text the parser refuses (a bad port, a space in the host) is still echoed in the
        // error: its password goes all the same, found by where URLs spell it.
        Err(_) => {
            let hidden = url.split_once("://").and_then(|(scheme, rest)| {
                let authority = rest.find(['/', '?', '#']).map_or(rest, |end| &rest[..end]);
                let at = authority.rfind('@')?;
                Some(match authority[..at].split_once(':') {
                    Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
                    None => format!("{scheme}://***{}", &rest[at..]),
                })
            });
            hidden.unwrap_or_else(|| url.to_string())
        }
    }
}

/// Whether `url` carries a credential [`shown_url`] hides: a user name or password, or a
/// query parameter named like a secret. A file keeping such a URL is for its owner's eyes
/// alone.
pub fn holds_secret(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        !u.username().is_empty()
            || u.password().is_some()
            || u.query().and_then(hide_query_secrets).is_some()
    })
}

/// `query` with the value of each parameter named like a secret (its name holds `token`,
/// `sig`, `secret`, `key`, `pass`, `auth`, `cred` or `session`, in any case) as `***`; `None`
/// when it has none.
fn hide_query_secrets(query: &str) -> Option<String> {
    const SECRET: [&str; 8] = [
        "token", "sig", "secret", "key", "pass", "auth", "cred", "session",
    ];
    let mut hidden = false;
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() => {
                let lower = percent_decode(name).to_ascii_lowercase();
                if SECRET.iter().any(|s| lower.contains(s)) {
                    hidden = true;
                    format!("{name}=***")
                } else {
                    pair.to_string()
                }
            }
            _ => pair.to_string(),
        })
        .collect();
    hidden.then(|| pairs.join("&"))
}

/// The URL a request for `asked` was answered from, when a redirect moved it: relative
/// archive URLs resolve against it. The HTTP client drops `user:password@` from the URL
/// it sends (they become a header), so that alone is no move; and on the same origin the
/// credentials go on with the answer, or a private index's archives would be fetched
/// without them.
fn answered_url(asked: &reqwest::Url, answered: &reqwest::Url) -> Option<reqwest::Url> {
    let mut answered = answered.clone();
    if answered.origin() == asked.origin() {
        let _ = answered.set_username(asked.username());
        let _ = answered.set_password(asked.password());
    }
    (&answered != asked).then_some(answered)
}

/// `asked` as an error names it: with the URL a redirect led to, `to`, when it led
/// elsewhere, as the one that answered or failed.
fn shown_via(asked: &reqwest::Url, to: Option<&reqwest::Url>) -> String {
    match to.and_then(|to| answered_url(asked, to)) {
        Some(to) => format!(
            "{} (where {} redirected)",
            shown_url(to.as_str()),
            shown_url(asked.as_str())
        ),
        None => shown_url(asked.as_str()),
    }
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The location is not usable.
    #[error("`{location}` is not a usable location: {why}")]
    LocationInvalid {
        /// What was given.
        location: String,
        /// What is wrong.
        why: String,
    },
    /// The server answered with an error status (a 5xx after retries).
    #[error("{url} answered HTTP {status}{}{}", status_note(*status), if *attempts > 1 { format!(" (tried {attempts} times)") } else { String::new() })]
    HttpStatus {
        /// The URL, and the one it was redirected from, if any.
        url: String,
        /// The status code.
        status: u16,
        /// How many attempts were made.
        attempts: u32,
    },
    /// A redirect hookpack does not follow: from https to plain http, or to a scheme other
    /// than those two.
    #[error("{url} redirected to {to}, {why}")]
    RedirectRefused {
        /// The URL asked for.
        url: String,
        /// Where the server sent hookpack.
        to: String,
        /// Why it is not followed, and what to do.
        why: &'static str,
    },
    /// The connection failed or timed out, after retries.
    #[error(
        "cannot fetch {url} (tried {attempts} time(s)){}",
        network_hint(source)
    )]
    Network {
        /// The URL.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last failure.
        source: reqwest::Error,
    },
    /// Reading the body failed midway (truncated, reset, timed out).
    #[error("reading {location} failed midway")]
    Body {
        /// Where from.
        location: String,
        /// The failure.
        source: io::Error,
    },
    /// The body arrived too slowly: under the speed floor, or past the deadline.
    #[error("gave up on {location}: {why}")]
    TooSlow {
        /// Where from.
        location: String,
        /// Which bound was hit, with the setting that changes it.
        why: String,
    },
    /// More bytes than allowed: announced so before the body (`Content-Length`), or found
    /// while reading it.
    #[error("{location} {}", match announced {
        Some(n) => format!("is announced as {n} bytes (its Content-Length), more than the {limit}-byte limit; nothing was read"),
        None => format!("is larger than the {limit}-byte limit"),
    })]
    TooLarge {
        /// Where from.
        location: String,
        /// The cap.
        limit: u64,
        /// The length the server announced, when that is what went past the cap.
        announced: Option<u64>,
    },
    /// A local file could not be read or written.
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    /// The CA certificate file is unusable.
    #[error("cannot use the CA certificate {path} (--ca-cert): {why}")]
    CaCert {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl FetchError {
    /// True when the failure is the input's (a bad location, a body over the cap, a URL the
    /// server refuses) rather than the network's or the machine's.
    pub fn is_input_problem(&self) -> bool {
        match self {
            FetchError::LocationInvalid { .. }
            | FetchError::RedirectRefused { .. }
            | FetchError::TooLarge { .. }
            | FetchError::CaCert { .. } => true,
            FetchError::Fs(e) => e.is_input_problem(),
            FetchError::HttpStatus { .. } => self.is_refused_by_server(),
            _ => false,
        }
    }

    /// True when a server was reached and answered that it will not serve the file (a 4xx
    /// status other than 408 and 429, which ask for a retry): the URL names nothing there,
    /// as a path on disk may name no file. A 5xx, retried already, is the server failing.
    fn is_refused_by_server(&self) -> bool {
        matches!(self, FetchError::HttpStatus { status, .. }
            if (400..500).contains(status) && !matches!(status, 408 | 429))
    }
}

/// Whether `reference` (an index's `url`) is absolute, with a scheme of its own.
fn has_scheme(reference: &str) -> bool {
    reference
        .split_once(':')
        .is_some_and(|(s, _)| !s.contains('/') && s.len() > 1)
}

/// The path a relative `reference` names beside an index on disk: without its `?query`
/// and `#fragment`, percent-decoded (`%2e%2e/` is `../`).
fn local_path(reference: &str) -> String {
    percent_decode(reference.split(['?', '#']).next().unwrap_or(reference))
}

/// The path, relative to an index on disk's folder (or from `/`), that `reference` names
/// there, as [`Location::join`] reads it; `None` for a URL with a scheme of its own.
pub(crate) fn relative_path(reference: &str) -> Option<String> {
    (!has_scheme(reference)).then(|| local_path(reference))
}

/// A relative path with its `.` segments gone and each `..` taking the segment before it,
/// as a URL's are resolved (RFC 3986 5.2.4), so `old/../x` is `x` whether or not a folder
/// `old` exists; a `..` with nothing before it to take stays (`../x`).
pub(crate) fn without_dot_segments(rel: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." if kept.last().is_some_and(|p| *p != "..") => {
                kept.pop();
            }
            _ => kept.push(part),
        }
    }
    kept.join("/")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Location {
    /// Reads a command-line or configured location: an `http(s)://` or `file://` URL, or
    /// a path.
    pub fn parse(s: &str) -> Result<Location, FetchError> {
        let lower = s.to_ascii_lowercase();
        let invalid = |why: String| FetchError::LocationInvalid {
            location: shown_url(s),
            why,
        };
        if lower.starts_with("http://") || lower.starts_with("https://") {
            let url = reqwest::Url::parse(s).map_err(|e| invalid(e.to_string()))?;
            Ok(Location::Http(url))
        } else if lower.starts_with("file://") {
            let url = reqwest::Url::parse(s).map_err(|e| invalid(e.to_string()))?;
            let path = url
                .to_file_path()
                .map_err(|()| invalid("not a local file URL".into()))?;
            Ok(Location::Path(path))
        } else if let Some(name) = s.strip_prefix("builtin:") {
            Ok(Location::Builtin(if name.is_empty() {
                crate::catalog::INDEX_FILE.to_string()
            } else {
                name.to_string()
            }))
        } else if let Some(scheme) = s.split_once("://").map(|(a, _)| a) {
            Err(invalid(format!(
                "the `{scheme}` scheme is not supported; use https, http, file or a path"
            )))
        } else if s.is_empty() {
            Err(invalid("it is empty".into()))
        } else {
            Ok(Location::Path(PathBuf::from(s)))
        }
    }

    /// `loc`, an absolute URL a document at this location names, with this location's
    /// `user:password@` when it names none of its own and is on the same origin: a private
    /// index packed with `--asset-base-url` names its archives so, and its server asks for
    /// the credentials there too. Another origin never gets them.
    fn lend_credentials(&self, loc: Location) -> Location {
        match (self, loc) {
            (Location::Http(base), Location::Http(mut url))
                if url.origin() == base.origin()
                    && url.username().is_empty()
                    && url.password().is_none() =>
            {
                let _ = url.set_username(base.username());
                let _ = url.set_password(base.password());
                Location::Http(url)
            }
            (_, loc) => loc,
        }
    }

    /// Resolves `reference` (absolute, or relative as in an index's `url`) against this
    /// location.
    pub fn join(&self, reference: &str) -> Result<Location, FetchError> {
        if let Err(why) = crate::catalog::check_url(reference) {
            return Err(FetchError::LocationInvalid {
                location: reference.to_string(),
                why,
            });
        }
        if has_scheme(reference) {
            return Location::parse(reference).map(|loc| self.lend_credentials(loc));
        }
        match self {
            Location::Http(base) => {
                base.join(reference)
                    .map(Location::Http)
                    .map_err(|e| FetchError::LocationInvalid {
                        location: reference.to_string(),
                        why: e.to_string(),
                    })
            }
            Location::Builtin(_) => Ok(Location::Builtin(percent_decode(reference))),
            Location::Path(base) => {
                let rel = local_path(reference);
                let dir = base.parent().unwrap_or(Path::new("."));
                Ok(Location::Path(if rel.starts_with('/') {
                    PathBuf::from(rel)
                } else {
                    dir.join(without_dot_segments(&rel))
                }))
            }
        }
    }
}

/// Why the redirect policy stopped at a URL (see [`redirect_policy`]).
#[derive(Debug)]
struct RedirectStop {
    to: String,
    why: &'static str,
}

impl std::fmt::Display for RedirectStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "redirected to {}, {}", self.to, self.why)
    }
}

impl std::error::Error for RedirectStop {}

/// Where the redirects of each request led last, by the URL asked for (without its
/// `user:password@`, which the HTTP client moves into a header): an error reaching that
/// host names it, not the URL whose server answered.
type Followed = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, reqwest::Url>>>;

/// `url` as a key of [`Followed`].
fn followed_key(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.into()
}

/// At most `max` redirects, none from https to plain http (the index's sha256s are what
/// every archive is checked against, and over plain HTTP anyone on the way may change
/// them), and none to a scheme other than https and http. Each one followed is noted in
/// `followed`.
fn redirect_policy(max: usize, followed: Followed) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let from_https = attempt
            .previous()
            .last()
            .is_some_and(|u| u.scheme() == "https");
        let why = match attempt.url().scheme() {
            "http" if from_https => Some(
                "plain HTTP, which hookpack does not follow from https:// (anyone on the way \
                 could change what it serves); fix the server's redirect, or give the http:// \
                 URL yourself if plain HTTP is what you mean",
            ),
            "http" | "https" => None,
            _ => Some("which hookpack does not follow (only https:// and http://)"),
        };
        if let Some(why) = why {
            let to = shown_url(attempt.url().as_str());
            attempt.error(RedirectStop { to, why })
        } else if attempt.previous().len() > max {
            attempt.error(format!("too many redirects (more than {max})"))
        } else {
            if let (Some(first), Ok(mut followed)) = (attempt.previous().first(), followed.lock()) {
                followed.insert(followed_key(first), attempt.url().clone());
            }
            attempt.follow()
        }
    })
}

/// A redirect the HTTP client answered with rather than follow, because its `Location` is
/// no URL or one of a scheme it does not fetch (`file:`, `data:`): refused as a redirect
/// elsewhere is (see [`redirect_policy`]), naming where it led.
fn unfollowed_redirect(
    url: &reqwest::Url,
    resp: &reqwest::blocking::Response,
) -> Option<FetchError> {
    if !resp.status().is_redirection() {
        return None;
    }
    let location = resp.headers().get(reqwest::header::LOCATION)?;
    let location = String::from_utf8_lossy(location.as_bytes());
    let (to, why) = match resp.url().join(&location) {
        Ok(to) if matches!(to.scheme(), "http" | "https") => return None,
        Ok(to) => (
            shown_url(to.as_str()),
            "which hookpack does not follow (only https:// and http://)",
        ),
        Err(_) => (format!("`{location}`"), "which is not a URL"),
    };
    Some(FetchError::RedirectRefused {
        url: shown_url(url.as_str()),
        to,
        why,
    })
}

/// The redirect `e` stopped at, if that is why it failed.
fn redirect_stop(e: &reqwest::Error) -> Option<&RedirectStop> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(stop) = s.downcast_ref::<RedirectStop>() {
            return Some(stop);
        }
        source = s.source();
    }
    None
}

/// Whether the connection was closed or reset before the answer came: a proxy restarting,
/// an idle connection dropped. An answer that is no HTTP is not that, and is not retried.
fn is_dropped(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ) {
                return true;
            }
        }
        if s.to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        source = s.source();
    }
    false
}

/// A TLS trust failure will not go away on retry.
fn is_certificate_error(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.to_string().to_ascii_lowercase().contains("certificate") {
            return true;
        }
        source = s.source();
    }
    false
}

/// How to fetch.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time to establish a connection.
    pub connect_timeout: Duration,
    /// Longest silence while reading.
    pub read_timeout: Duration,
    /// Fewest bytes that must arrive in each `read_timeout` of an HTTP body, so a server
    /// that trickles a byte at a time cannot keep a download going.
    pub min_bytes_per_window: u64,
    /// Longest an HTTP download may take, from its first request to its last byte.
    pub deadline: Duration,
    /// Attempts on connection errors and 5xx (at least 1).
    pub attempts: u32,
    /// First backoff; doubled after each failed attempt.
    pub backoff: Duration,
    /// Most redirects followed.
    pub max_redirects: usize,
    /// Extra trusted CA certificates (PEM).
    pub ca_certs: Vec<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            min_bytes_per_window: 1024,
            deadline: Duration::from_secs(600),
            attempts: 3,
            backoff: Duration::from_millis(250),
            max_redirects: 5,
            ca_certs: Vec::new(),
        }
    }
}

/// The longest URL the HTTP client sends (hyper's limit on a request's URI).
const MAX_URL_BYTES: usize = u16::MAX as usize - 1;

/// An opened source: its reader, the length announced, and the URL that answered when a
/// redirect led elsewhere.
type Opened = (Box<dyn Read + Send>, Option<u64>, Option<reqwest::Url>);

/// Fetches with one shared HTTP client, built on first use.
pub struct Fetcher {
    options: Options,
    client: std::sync::OnceLock<reqwest::blocking::Client>,
    followed: Followed,
}

impl Fetcher {
    /// A fetcher with `options`.
    pub fn new(options: Options) -> Self {
        Fetcher {
            options,
            client: std::sync::OnceLock::new(),
            followed: Followed::default(),
        }
    }

    /// Reads and parses every `--ca-cert` file now, whether or not anything is fetched over
    /// HTTPS later: a misspelt file is the user's mistake either way.
    pub fn check_ca_certs(&self) -> Result<(), FetchError> {
        for path in &self.options.ca_certs {
            ca_certificates(path)?;
        }
        Ok(())
    }

    fn client(&self) -> Result<&reqwest::blocking::Client, FetchError> {
        if let Some(c) = self.client.get() {
            return Ok(c);
        }
        let mut b = reqwest::blocking::Client::builder()
            .connect_timeout(self.options.connect_timeout)
            // The blocking client applies this to each wait (send, and every body read), so
            // it bounds silence, not the length of a large download.
            .timeout(self.options.read_timeout)
            .redirect(redirect_policy(
                self.options.max_redirects,
                self.followed.clone(),
            ))
            // A redirect would send the URL it came from, a private index's `?token=…`
            // included, to wherever it leads.
            .referer(false)
            .user_agent(concat!("hookpack/", env!("CARGO_PKG_VERSION")));
        for path in &self.options.ca_certs {
            for c in ca_certificates(path)? {
                b = b.add_root_certificate(c);
            }
        }
        let client = b.build().map_err(|e| FetchError::Network {
            url: String::new(),
            attempts: 0,
            source: e,
        })?;
        Ok(self.client.get_or_init(|| client))
    }

    /// Opens `loc` for reading, with retries for HTTP; returns the reader, the announced
    /// length, if any, and the URL that answered when a redirect led elsewhere.
    fn open(&self, loc: &Location, limit: u64) -> Result<Opened, FetchError> {
        match loc {
            Location::Builtin(name) => match builtin::get(name) {
                Some(bytes) => Ok((Box::new(bytes), Some(bytes.len() as u64), None)),
                None => Err(FetchError::LocationInvalid {
                    location: loc.to_string(),
                    why: "no such file in the built-in catalog".into(),
                }),
            },
            Location::Path(p) => {
                if p.is_dir() {
                    return Err(FetchError::LocationInvalid {
                        location: p.display().to_string(),
                        why: "it is a folder".into(),
                    });
                }
                let (f, meta) = crate::fs::open_regular(p)?;
                Ok((Box::new(f), Some(meta.len()), None))
            }
            Location::Http(url) => {
                // The HTTP client refuses a longer one before sending anything, in an error
                // that reads as the network's.
                if url.as_str().len() > MAX_URL_BYTES {
                    return Err(FetchError::LocationInvalid {
                        location: crate::diagnostic::bounded(shown_url(url.as_str())),
                        why: format!(
                            "it is too long: {} bytes, where an HTTP request carries a URL of \
                             at most {MAX_URL_BYTES}",
                            url.as_str().len()
                        ),
                    });
                }
                let client = self.client()?;
                let mut delay = self.options.backoff;
                let attempts = self.options.attempts.max(1);
                for attempt in 1..=attempts {
                    let last = attempt == attempts;
                    let sent = client.get(url.clone()).send();
                    let led_to = self
                        .followed
                        .lock()
                        .ok()
                        .and_then(|mut f| f.remove(&followed_key(url)));
                    match sent {
                        Ok(resp) if resp.status().is_success() => {
                            let answered = answered_url(url, resp.url());
                            let len = resp.content_length();
                            let opened = decoded(resp, len, answered)?;
                            // The length of what is read: none is known of an encoded body.
                            if opened.1.is_some_and(|l| l > limit) {
                                return Err(FetchError::TooLarge {
                                    location: shown_url(url.as_str()),
                                    limit,
                                    announced: opened.1,
                                });
                            }
                            return Ok(opened);
                        }
                        Ok(resp) if resp.status().is_server_error() && !last => {}
                        Ok(resp) => {
                            if let Some(e) = unfollowed_redirect(url, &resp) {
                                return Err(e);
                            }
                            // After a redirect, the status is the last URL's: name it, or a
                            // 404 would seem to say the URL given is missing.
                            return Err(FetchError::HttpStatus {
                                url: shown_via(url, Some(resp.url())),
                                status: resp.status().as_u16(),
                                attempts: attempt,
                            });
                        }
                        // A connection refused, silent, or closed before the answer (a
                        // proxy restarting, an idle connection dropped): a GET is safe
                        // to send again.
                        Err(e)
                            if (e.is_connect() || e.is_timeout() || is_dropped(&e))
                                && !last
                                && !is_certificate_error(&e)
                                && redirect_stop(&e).is_none() => {}
                        Err(e) => {
                            if let Some(stop) = redirect_stop(&e) {
                                return Err(FetchError::RedirectRefused {
                                    url: shown_url(url.as_str()),
                                    to: stop.to.clone(),
                                    why: stop.why,
                                });
                            }
                            // One a redirect led to: name it, or the URL given would
                            // seem to be the one out of reach.
                            return Err(FetchError::Network {
                                url: shown_via(url, led_to.as_ref()),
                                attempts: attempt,
                                // The URL is in the message already, without its password.
                                source: e.without_url(),
                            });
                        }
                    }
                    std::thread::sleep(delay);
                    delay *= 2;
                }
                unreachable!("the last attempt always returns")
            }
        }
    }

    /// Reads all of `loc`, refusing more than `limit` bytes.
    pub fn read_to_vec(&self, loc: &Location, limit: u64) -> Result<Vec<u8>, FetchError> {
        Ok(self.read_document(loc, limit)?.0)
    }

    /// Reads all of `loc` as [`Fetcher::read_to_vec`] does, with the location the bytes came
    /// from: the URL a redirect led to, if any. References in the document (an index's
    /// relative archive URLs) are relative to it (RFC 3986, 5.1.3), as curl and browsers
    /// take them.
    pub fn read_document(
        &self,
        loc: &Location,
        limit: u64,
    ) -> Result<(Vec<u8>, Location), FetchError> {
        let mut out = Vec::new();
        let (_, _, answered) = self.copy_from(loc, limit, &mut out)?;
        Ok((out, answered.map_or_else(|| loc.clone(), Location::Http)))
    }

    /// Streams `loc` into `sink`, refusing more than `limit` bytes and a body shorter than
    /// announced; returns the digest and length of what was written.
    pub fn copy_to(
        &self,
        loc: &Location,
        limit: u64,
        sink: &mut dyn Write,
    ) -> Result<(Sha256, u64), FetchError> {
        let (digest, len, _) = self.copy_from(loc, limit, sink)?;
        Ok((digest, len))
    }

    /// [`Fetcher::copy_to`], also returning the URL that answered when a redirect led
    /// elsewhere.
    fn copy_from(
        &self,
        loc: &Location,
        limit: u64,
        sink: &mut dyn Write,
    ) -> Result<(Sha256, u64, Option<reqwest::Url>), FetchError> {
        let start = Instant::now();
        let (reader, announced, answered) = self.open(loc, limit)?;
        let mut pace =
            matches!(loc, Location::Http(_)).then(|| Pace::new(&self.options, start, announced));
        let body_err = |e: io::Error| FetchError::Body {
            location: loc.to_string(),
            source: e,
        };
        let mut reader = reader.take(limit + 1);
        let mut hasher = sha2::Sha256::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(body_err)?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if let Some(why) = pace.as_mut().and_then(|p| p.check(total)) {
                return Err(FetchError::TooSlow {
                    location: loc.to_string(),
                    why,
                });
            }
            if total > limit {
                return Err(FetchError::TooLarge {
                    location: loc.to_string(),
                    limit,
                    announced: None,
                });
            }
            hasher.update(&buf[..n]);
            sink.write_all(&buf[..n]).map_err(body_err)?;
        }
        if let Some(len) = announced {
            if len != total {
                return Err(body_err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("announced {len} bytes but {total} arrived"),
                )));
            }
        }
        Ok((
            Sha256::from(<[u8; 32]>::from(hasher.finalize())),
            total,
            answered,
        ))
    }
}

/// The body of `resp`, as [`Fetcher::open`] gives it. hookpack asks for no encoding, but a
/// store that keeps a file gzip-compressed with `Content-Encoding: gzip` metadata (S3 can)
/// sends it so all the same: that is decoded (the length announced is then the encoded
/// one, so none is checked; an archive's sha256 still is), any other encoding refused.
fn decoded(
    resp: reqwest::blocking::Response,
    len: Option<u64>,
    answered: Option<reqwest::Url>,
) -> Result<Opened, FetchError> {
    let encoding = resp
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .trim()
                .to_ascii_lowercase()
        });
    match encoding.as_deref() {
        None | Some("" | "identity") => Ok((Box::new(resp), len, answered)),
        Some("gzip" | "x-gzip") => Ok((
            Box::new(flate2::read::MultiGzDecoder::new(resp)),
            None,
            answered,
        )),
        Some(other) => Err(FetchError::LocationInvalid {
            location: shown_url(resp.url().as_str()),
            why: format!(
                "the server sent it with `Content-Encoding: {}`, which hookpack does not \
                 decode (it asks for the file as it is, and reads gzip only); serve it without \
                 that header (an object store's Content-Encoding metadata, for one)",
                crate::diagnostic::bounded(other.to_string())
            ),
        }),
    }
}

/// The speed floor and deadline of one HTTP download. Checked whenever bytes arrive; a read
/// returns at least once per `read_timeout` or fails, so neither bound is overshot by more
/// than that.
struct Pace {
    /// When the first request was sent.
    start: Instant,
    deadline: Duration,
    window: Duration,
    min_bytes: u64,
    /// Start of the current window, and the byte count when it started.
    mark: (Instant, u64),
    /// The body's announced length: a body that is complete is never cut off, and one
    /// window need only bring what is left of it.
    announced: Option<u64>,
}

impl Pace {
    /// The bounds of a download whose first request was sent at `start`; the first speed
    /// window starts now, when the body begins.
    fn new(o: &Options, start: Instant, announced: Option<u64>) -> Pace {
        Pace {
            start,
            deadline: o.deadline,
            window: o.read_timeout,
            min_bytes: o.min_bytes_per_window,
            mark: (Instant::now(), 0),
            announced,
        }
    }

    /// Why the download must stop, now that `total` bytes have arrived.
    fn check(&mut self, total: u64) -> Option<String> {
        if self.announced == Some(total) {
            return None;
        }
        let now = Instant::now();
        if now.duration_since(self.start) > self.deadline {
            return Some(format!(
                "the download took longer than {} s, after {total} bytes \
                 (HOOKPACK_HTTP_DEADLINE=SECONDS sets the limit)",
                secs(self.deadline)
            ));
        }
        let (since, at) = self.mark;
        if now.duration_since(since) >= self.window {
            let needed = match self.announced {
                Some(len) => self.min_bytes.min(len.saturating_sub(at)),
                None => self.min_bytes,
            };
            if total - at < needed {
                return Some(format!(
                    "only {} bytes arrived in {} s, under the floor of {} bytes per {} s \
                     (HOOKPACK_HTTP_TIMEOUT=SECONDS sets the window)",
                    total - at,
                    secs(now.duration_since(since)),
                    self.min_bytes,
                    secs(self.window)
                ));
            }
            self.mark = (now, total);
        }
        None
    }
}

/// A duration in seconds, for messages: `30`, `1.1`, `0.02`.
fn secs(d: Duration) -> String {
    let s = format!("{:.2}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod pace_tests {
    use super::*;

    /// Bounds with a 20 ms window and a 1024-byte floor; each test sleeps past the window,
    /// so they check the rules, not the clock's precision.
    fn pace(announced: Option<u64>, deadline: Duration) -> Pace {
        let options = Options {
            read_timeout: Duration::from_millis(20),
            deadline,
            ..Options::default()
        };
        Pace::new(&options, Instant::now(), announced)
    }

    fn after_a_window() {
        std::thread::sleep(Duration::from_millis(30));
    }

    #[test]
    fn a_complete_body_under_the_floor_is_kept() {
        let mut p = pace(Some(979), Duration::from_secs(60));
        assert_eq!(p.check(400), None, "inside the first window");
        after_a_window();
        assert_eq!(p.check(979), None, "the whole body arrived");
    }

    #[test]
    fn a_window_must_bring_the_floor_or_the_rest_of_the_body() {
        // Under 1 KiB left: the window must bring all of it.
        let mut p = pace(Some(979), Duration::from_secs(60));
        after_a_window();
        let why = p
            .check(700)
            .expect("279 bytes still missing after a window");
        assert!(why.contains("only 700 bytes arrived"), "{why}");
        // Over 1 KiB left: 1 KiB per window is enough, window after window.
        let mut p = pace(Some(100_000), Duration::from_secs(60));
        after_a_window();
        assert_eq!(p.check(1024), None);
        after_a_window();
        assert_eq!(p.check(2048), None);
        after_a_window();
        let why = p.check(2049).expect("1 byte in a window");
        assert!(
            why.contains("under the floor of 1024 bytes per 0.02 s"),
            "{why}"
        );
        // No length announced: the floor alone.
        let mut p = pace(None, Duration::from_secs(60));
        after_a_window();
        assert!(p.check(1023).is_some());
    }

    #[test]
    fn the_deadline_counts_from_the_request() {
        let mut p = pace(Some(1 << 20), Duration::from_millis(10));
        after_a_window();
        let why = p.check(500_000).expect("past the deadline");
        assert!(
            why.contains("took longer than 0.01 s, after 500000 bytes"),
            "{why}"
        );
        assert_eq!(p.check(1 << 20), None, "a complete body is kept");
    }
}

#[cfg(test)]
mod shown_url_tests {
    use super::*;

    #[test]
    fn plain_http_is_warned_of_unless_it_stays_on_this_machine() {
        let warned = |u: &str| plain_http_warning(&Location::parse(u).unwrap()).is_some();
        for u in [
            "http://hooks.example.com/hooks-index.json",
            "http://192.0.2.1:8080/i.json",
            "http://[2001:db8::1]/i.json",
            "HTTP://Example.COM/i.json",
            "http://localhost.example.com/i.json",
            // The system resolver may ask DNS for these (glibc does, with `hosts: files
            // dns` and no entry), and whoever answers picks the machine.
            "http://a.localhost/i.json",
            "http://hooks.LOCALHOST./i.json",
            // The host is what follows the `@`.
            "http://localhost@hooks.example.com/i.json",
            "http://127.0.0.1:80@hooks.example.com/i.json",
            // A Cyrillic `о`: another name.
            "http://l\u{43e}calhost/i.json",
            "http://[::ffff:192.0.2.1]/i.json",
        ] {
            assert!(warned(u), "{u}");
        }
        for u in [
            "https://hooks.example.com/hooks-index.json",
            "http://127.0.0.1:8080/i.json",
            "http://127.8.9.10/i.json",
            "http://[::1]:9/i.json",
            "http://localhost/i.json",
            "http://LocalHost./i.json",
            "http://127.0.0.1./i.json",
            "http://0x7f.1/i.json",
            // IPv4-mapped: the IPv4 loopback over an IPv6 socket.
            "http://[::ffff:127.0.0.1]/i.json",
            "http://[::ffff:7f00:2]:8080/i.json",
            "http://hooks.example.com@localhost/i.json",
            // Full-width letters, which IDNA maps to `localhost`, as the client does.
            "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}/i.json",
            "http://2130706433/i.json",
            // The unspecified address: Linux and macOS connect to this machine.
            "http://0.0.0.0:8080/i.json",
            "http://[::]/i.json",
            "/tmp/catalog/hooks-index.json",
            "file:///tmp/catalog/hooks-index.json",
        ] {
            assert!(!warned(u), "{u}");
        }
        let said = plain_http_warning(
            &Location::parse("http://me:pw@hooks.example.com/hooks-index.json").unwrap(),
        )
        .unwrap();
        assert!(
            said.contains("http://me:***@hooks.example.com/hooks-index.json")
                && !said.contains("pw"),
            "{said}"
        );
    }

    #[test]
    fn dot_segments_of_a_relative_path_go_as_a_urls_do() {
        for (rel, is) in [
            ("x.tar.gz", "x.tar.gz"),
            ("./old/x.tar.gz", "old/x.tar.gz"),
            ("old/../x.tar.gz", "x.tar.gz"),
            ("old/../../x.tar.gz", "../x.tar.gz"),
            ("../../x.tar.gz", "../../x.tar.gz"),
            ("a//b/./../c", "a/c"),
        ] {
            assert_eq!(without_dot_segments(rel), is, "{rel}");
        }
        let index = Location::Path(PathBuf::from("cat/hooks-index.json"));
        let joined = index.join("old/../x.tar.gz").unwrap();
        assert_eq!(joined.to_string(), "cat/x.tar.gz");
    }

    #[test]
    fn secrets_in_the_query_are_hidden_and_the_rest_kept() {
        assert_eq!(
            shown_url("https://h/i.json?v=2&%74oken=a&Sig=b&empty_key=&flag"),
            "https://h/i.json?v=2&%74oken=***&Sig=***&empty_key=&flag"
        );
        // Nothing hidden: the URL as given, not as the parser would write it.
        assert_eq!(shown_url("https://H/i.json?v=2"), "https://H/i.json?v=2");
        assert_eq!(
            shown_url("https://me:pw@h/i.json?access_token=t"),
            "https://me:***@h/i.json?access_token=***"
        );
    }
}
