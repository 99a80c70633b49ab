//! Where a FinClaw profile is, where the index comes from, and the profile lock.
//!
//! Resolution follows FinClaw: `--profile DIR`, else `$FINCLAW_HOME` (default `~/.finclaw`)
//! `/profiles/<name>`, the name from `$FINCLAW_PROFILE`, else the file `active-profile`,
//! else `default`. Such a name is one folder name, never a path: one that could lead out
//! of `profiles/` is refused. The index: `--index`, else `$HOOKPACK_INDEX_URL`, else
//! `extra.hooks.index_url` in `<profile>/config.yaml`, else the catalog built into this
//! binary.

use crate::error::Error;
use crate::fetch::Location;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A resolved profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Profile {
    /// The profile root (`FINCLAW_PROFILE_ROOT` for handlers).
    #[serde(serialize_with = "crate::output::path_text")]
    pub root: PathBuf,
    /// `$FINCLAW_HOME`.
    #[serde(serialize_with = "crate::output::path_text")]
    pub home: PathBuf,
    /// The profile name, when it came from FinClaw's resolution.
    pub name: Option<String>,
}

/// Largest `config.yaml` or `active-profile` read.
const MAX_PROFILE_FILE_BYTES: u64 = 1024 * 1024;

/// Most values a `config.yaml` may hold with its aliases expanded. The YAML loader copies
/// an anchor's value at each alias, so aliases of aliases (a "billion laughs") would build
/// billions of values from a few hundred bytes. Each value written out takes two bytes or
/// more, so a file within [`MAX_PROFILE_FILE_BYTES`] reaches this only through aliases.
const MAX_CONFIG_VALUES: u64 = 1_000_000;

/// How many values the YAML `text` holds once its aliases are expanded, as the loader
/// builds them, counted from the parser's events without building any.
fn expanded_values(text: &str) -> Result<u64, yaml_rust2::ScanError> {
    use yaml_rust2::parser::{Event, EventReceiver, Parser};
    #[derive(Default)]
    struct Count {
        /// Collections being read: their anchor and values so far.
        open: Vec<(usize, u64)>,
        /// Values of each anchored node.
        anchors: std::collections::HashMap<usize, u64>,
        total: u64,
    }
    impl EventReceiver for Count {
        fn on_event(&mut self, ev: Event) {
            let done = match ev {
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    self.open.push((anchor, 1));
                    None
                }
                Event::SequenceEnd | Event::MappingEnd => self.open.pop(),
                Event::Scalar(_, _, anchor, _) => Some((anchor, 1)),
                Event::Alias(anchor) => Some((0, self.anchors.get(&anchor).copied().unwrap_or(1))),
                _ => None,
            };
            if let Some((anchor, n)) = done {
                if anchor > 0 {
                    self.anchors.insert(anchor, n);
                }
                let into = match self.open.last_mut() {
                    Some((_, values)) => values,
                    None => &mut self.total,
                };
                *into = into.saturating_add(n);
            }
        }
    }
    let mut count = Count::default();
    Parser::new(text.chars()).load(&mut count, true)?;
    Ok(count.total)
}

/// Where the index came from, for messages and receipts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexSource {
    /// `--index`.
    Flag,
    /// `$HOOKPACK_INDEX_URL`.
    Env,
    /// `extra.hooks.index_url` in config.yaml.
    Config,
    /// The catalog built into the binary.
    Builtin,
}

/// `$FINCLAW_HOME`, or `~/.finclaw`. The home folder is `$HOME`, or the user database's
/// when `$HOME` is unset or empty; never one relative to the current folder, which in a
/// checked-out repository is the workspace, whose `.finclaw` would then hold the trust file
/// (a repository could ship one trusting its own handlers).
pub fn finclaw_home() -> Result<PathBuf, Error> {
    if let Some(h) = std::env::var_os("FINCLAW_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    match std::env::home_dir() {
        Some(home) if home.is_absolute() => Ok(home.join(".finclaw")),
        found => Err(Error::HomeUnknown {
            why: match found {
                Some(home) => format!("$HOME is the relative path `{}`", home.display()),
                None => "$HOME is unset and the user database names no home folder".into(),
            },
        }),
    }
}

/// Refuses a FinClaw home (`$FINCLAW_HOME`, default `~/.finclaw`) that is a file, or that
/// lies under one: the user's setup is wrong, which the `Not a directory` or `File exists`
/// of the call that meets it would hide (and the second as a failing disk, exit 3). Every
/// verb that reads or writes the trust file, or reads `active-profile`, checks it first.
pub fn require_home_folder(home: &Path) -> Result<(), Error> {
    // The nearest part of the path that exists: a folder (or a link to one) is fine, and
    // one that cannot be inspected is left to the call that needs it to say so.
    let found = home
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find_map(|a| std::fs::metadata(a).ok().map(|m| (a, m.is_dir())));
    let Some((file, false)) = found else {
        return Ok(());
    };
    let named = if std::env::var_os("FINCLAW_HOME").is_some_and(|h| !h.is_empty()) {
        "$FINCLAW_HOME"
    } else {
        "the FinClaw home (~/.finclaw, as $FINCLAW_HOME is unset)"
    };
    let what = if file == home {
        format!("{named} is a file, not a folder")
    } else {
        format!(
            "{named} names {}, which lies under this file, not under a folder",
            home.display()
        )
    };
    Err(Error::ConfigInvalid {
        path: file.to_path_buf(),
        why: format!(
            "{what}; hookpack keeps the trust file (hooks-trust.json) there and FinClaw its \
             profiles and active-profile: move the file aside and make it a folder, or point \
             FINCLAW_HOME at a folder"
        ),
    })
}

impl Profile {
    /// Resolves the profile; `flag` is `--profile`, a folder taken as it is. A name from
    /// `$FINCLAW_PROFILE` or `active-profile` must be one folder name (see [`check_name`]),
    /// so that it cannot lead outside `$FINCLAW_HOME/profiles`. An empty one counts as unset.
    pub fn resolve(flag: Option<&Path>) -> Result<Profile, Error> {
        let home = finclaw_home()?;
        if let Some(dir) = flag {
            return Ok(Profile {
                root: crate::fs::absolute(dir),
                home,
                name: None,
            });
        }
        let from_env = match std::env::var("FINCLAW_PROFILE") {
            Ok(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(v)) => {
                return Err(Error::ProfileNameInvalid {
                    name: v.to_string_lossy().into_owned(),
                    from: "$FINCLAW_PROFILE".into(),
                    why: "it is not UTF-8".into(),
                })
            }
        };
        let (name, from) = match from_env {
            Some(n) => (n, "$FINCLAW_PROFILE".to_string()),
            None => {
                require_home_folder(&home)?;
                let file = home.join("active-profile");
                // Read as a regular file only: a fifo would wait for a writer for good, and
                // one that cannot be read would leave the `default` profile used in silence.
                let named = match crate::fs::read_limited(&file, MAX_PROFILE_FILE_BYTES)
                    .map(String::from_utf8)
                {
                    Ok(Ok(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
                    Ok(Err(e)) => {
                        return Err(Error::ProfileNameInvalid {
                            name: String::from_utf8_lossy(e.as_bytes()).trim().to_string(),
                            from: file.display().to_string(),
                            why: "it is not UTF-8".into(),
                        })
                    }
                    Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) if not_a_file(&e) => {
                        return Err(Error::ConfigInvalid {
                            path: file,
                            why: format!(
                                "{}; it is to name the active profile in a line of text: \
                                 remove it (the profile `default` is then used) or write a \
                                 profile's name into a file there, or give one with \
                                 $FINCLAW_PROFILE or --profile",
                                e.source
                            ),
                        })
                    }
                    Err(e) => return Err(e.into()),
                };
                match named {
                    Some(n) => (n, file.display().to_string()),
                    None => ("default".to_string(), String::new()),
                }
            }
        };
        if let Err(why) = check_name(&name) {
            return Err(Error::ProfileNameInvalid { name, from, why });
        }
        Ok(Profile {
            root: crate::fs::absolute(&home.join("profiles").join(&name)),
            home,
            name: Some(name),
        })
    }

    /// Refuses a profile folder that does not exist, for the verbs that would otherwise
    /// find nothing there and say only that (`trust`, `revoke`, `run`).
    pub fn require_folder(&self) -> Result<(), Error> {
        if self.root.exists() {
            Ok(())
        } else {
            Err(Error::ProfileMissing {
                path: self.root.clone(),
            })
        }
    }

    /// `<profile>/hooks.json`.
    pub fn hooks_json(&self) -> PathBuf {
        self.root.join("hooks.json")
    }

    /// `<profile>/hooks.json.bak`, `hooks.json` before the last change.
    pub fn backup(&self) -> PathBuf {
        self.root.join("hooks.json.bak")
    }

    /// `<profile>/hooks/`, where recipe trees live.
    pub fn hooks_dir(&self) -> PathBuf {
        self.root.join("hooks")
    }

    /// `<profile>/hooks/<id>/`.
    pub fn recipe_dir(&self, id: &str) -> PathBuf {
        self.hooks_dir().join(id)
    }

    /// Install receipts.
    pub fn receipts_dir(&self) -> PathBuf {
        self.hooks_dir().join(".receipts")
    }

    /// Staging folders of installs in progress.
    pub fn staging_dir(&self) -> PathBuf {
        self.root.join(".hookpack-staging")
    }

    /// The file every change to the profile locks ([`Lock`]).
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(".hookpack.lock")
    }

    /// The journal of a commit in progress.
    pub fn journal(&self) -> PathBuf {
        self.root.join(".hookpack-journal.json")
    }

    /// The trust file, `$FINCLAW_HOME/hooks-trust.json`.
    pub fn trust_file(&self) -> PathBuf {
        self.home.join("hooks-trust.json")
    }

    /// `extra.hooks.index_url` from `<profile>/config.yaml`, if set.
    pub fn configured_index(&self) -> Result<Option<String>, Error> {
        let path = self.root.join("config.yaml");
        // A regular file only: a fifo would wait for a writer for good.
        let text = match crate::fs::read_limited(&path, MAX_PROFILE_FILE_BYTES) {
            Ok(b) => String::from_utf8(b).map_err(|_| Error::ConfigInvalid {
                path: path.clone(),
                why: "not UTF-8".into(),
            })?,
            Err(e) if e.source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if not_a_file(&e) => {
                return Err(Error::ConfigInvalid {
                    why: format!(
                        "{}; it is to hold the profile's settings as YAML text: move it \
                         aside (hookpack then reads no settings there), or put a file there",
                        e.source
                    ),
                    path,
                })
            }
            Err(e) => return Err(e.into()),
        };
        // YAML allows a byte-order mark at the start (some editors save one); the parser
        // would read it as part of the first key, and `extra` would go unseen.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let invalid = |why: String| Error::ConfigInvalid {
            path: path.clone(),
            why,
        };
        if expanded_values(text).map_err(|e| invalid(yaml_why(&e, text)))? > MAX_CONFIG_VALUES {
            return Err(invalid(format!(
                "its aliases expand to more than {MAX_CONFIG_VALUES} values (each alias is a \
                 copy of its anchor's value); write the values out instead"
            )));
        }
        let docs =
            yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| invalid(yaml_why(&e, text)))?;
        let Some(doc) = docs.first() else {
            return Ok(None);
        };
        check_index_url_shape(doc).map_err(invalid)?;
        let v = &doc["extra"]["hooks"]["index_url"];
        match v {
            yaml_rust2::Yaml::String(s) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            yaml_rust2::Yaml::BadValue | yaml_rust2::Yaml::Null => Ok(None),
            other => Err(Error::ConfigInvalid {
                path,
                why: format!(
                    "extra.hooks.index_url must be a string, found {}; write the index URL or \
                     path, in quotes if YAML would read it as something else",
                    yaml_kind(other)
                ),
            }),
        }
    }

    /// The index to use and where that choice came from.
    pub fn resolve_index(&self, flag: Option<&str>) -> Result<(Location, IndexSource), Error> {
        if let Some(f) = flag {
            return Ok((
                crate::catalog::verify::index_argument("--index", f.as_ref())?,
                IndexSource::Flag,
            ));
        }
        if let Some(e) = std::env::var("HOOKPACK_INDEX_URL")
            .ok()
            .filter(|s| !s.trim().is_empty())
        {
            // Named, and a usage error as for the other HOOKPACK_* settings.
            let loc = crate::catalog::verify::index_location(e.trim()).map_err(|e| {
                Error::ArgInvalid {
                    what: "HOOKPACK_INDEX_URL",
                    value: String::new(),
                    why: format!("{e}; or unset it"),
                }
            })?;
            return Ok((loc, IndexSource::Env));
        }
        if let Some(c) = self.configured_index()? {
            let loc = Location::parse(&c).map_err(|e| Error::ConfigInvalid {
                path: self.root.join("config.yaml"),
                why: format!("extra.hooks.index_url: {e}"),
            })?;
            // A relative path is the config file's, not the folder hookpack runs in.
            let loc = match loc {
                Location::Path(p) => crate::catalog::verify::index_at(self.root.join(p)),
                other => other,
            };
            return Ok((loc, IndexSource::Config));
        }
        Ok((
            Location::Builtin(crate::catalog::INDEX_FILE.to_string()),
            IndexSource::Builtin,
        ))
    }
}

/// Checks that `name` is a profile name: one folder name under `$FINCLAW_HOME/profiles`, not
/// empty, `.` or `..`, without `/`, `\\` or NUL, and without other control characters (C0,
/// DEL, C1) or zero-width characters: an ESC or a line break in a folder name would reach
/// every message that shows the profile, and is most likely a stray byte pasted into the
/// variable. Says why not.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if name == "." || name == ".." {
        return Err(format!("`{name}` names a folder, not a profile in it"));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, '/' | '\\' | '\0')) {
        return Err(format!(
            "it holds {}, and a profile name is one folder name",
            match c {
                '/' => "`/`",
                '\\' => "`\\`",
                _ => "a NUL byte",
            }
        ));
    }
    if let Some(c) = name.chars().find(|&c| crate::output::is_unsafe(c)) {
        return Err(format!(
            "it holds the control character U+{:04X}, which a profile name may not",
            u32::from(c)
        ));
    }
    // Invisible: `\u{feff}work` (an editor's byte-order mark) reads as `work` wherever it
    // is shown, but names another folder beside it.
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}'))
    {
        return Err(format!(
            "it holds the zero-width character U+{:04X}{}, which a profile name may not: it \
             would name another folder than the one it reads as",
            u32::from(c),
            if c == '\u{FEFF}' {
                " (a byte-order mark, which some editors put at the start of a file: save it as UTF-8 without one)"
            } else {
                ""
            }
        ));
    }
    Ok(())
}

/// A lock on a profile (or another file or folder), held until dropped.
pub struct Lock {
    _file: std::fs::File,
}

/// How long a second process waits for the profile lock: `HOOKPACK_LOCK_TIMEOUT` seconds,
/// or 60.
pub fn lock_wait() -> Duration {
    crate::cli::env_seconds("HOOKPACK_LOCK_TIMEOUT").unwrap_or(Duration::from_secs(60))
}

/// What is in the lock file's place, when its open failed for that: ENXIO, a fifo no one
/// reads opened without blocking; ELOOP, a link under O_NOFOLLOW; EISDIR, a folder.
#[cfg(unix)]
fn lock_file_refusal(e: &std::io::Error) -> Option<&'static str> {
    match e.raw_os_error() {
        Some(libc::ENXIO) => Some("a fifo, socket or device"),
        Some(libc::ELOOP) => Some("a symbolic link"),
        Some(libc::EISDIR) => Some("a folder"),
        _ => None,
    }
}

#[cfg(not(unix))]
fn lock_file_refusal(_: &std::io::Error) -> Option<&'static str> {
    None
}

/// The error for a lock file that is `what` (a folder, a link, …), not a regular file.
fn lock_file_refused(path: &Path, what: &str) -> Error {
    crate::fs::FsError::new(
        "open the lock file",
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "is {what}, expected a regular file; remove it (hookpack makes the lock file \
                 anew)"
            ),
        ),
    )
    .into()
}

impl Lock {
    /// Takes the profile's lock, waiting up to `wait` for another process to let go.
    pub fn acquire(profile: &Profile, wait: Duration) -> Result<Lock, Error> {
        Lock::acquire_file(&profile.lock_file(), wait)
    }

    /// Takes an exclusive lock on the file `path` (created if needed, and its folder, 0755
    /// at most: the trust lock's is `$FINCLAW_HOME`, see [`crate::fs::create_dir_all_unshared`]).
    pub fn acquire_file(path: &Path, wait: Duration) -> Result<Lock, Error> {
        let path = path.to_path_buf();
        if let Some(dir) = path.parent() {
            crate::fs::create_dir_all_unshared(dir)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        // Only the open of a fifo would block (for good: no one reads it); the lock of a
        // regular file ignores the flag. O_NOFOLLOW: a link there would have the lock file
        // made wherever it points.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_NONBLOCK | libc::O_NOFOLLOW,
        );
        let open_error = |e| crate::fs::FsError::new("open the lock file", &path, e);
        let file = match options.open(&path) {
            Err(e) => match lock_file_refusal(&e) {
                Some(what) => return Err(lock_file_refused(&path, what)),
                // The commands that write here take this lock first: one that may not be
                // written stops them all, so say what to do.
                None if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    let why = format!(
                        "{e}; the commands that write here take this lock first, and this user \
                         may not write it: give this user write permission on the file (or, \
                         while there is none, on {}), or run the command as its owner",
                        path.parent().unwrap_or(Path::new(".")).display()
                    );
                    return Err(open_error(std::io::Error::new(e.kind(), why)).into());
                }
                None if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
                    let why = format!(
                        "{e}; the commands that write here take this lock first, and the file \
                         system is mounted read-only: nothing here can be changed"
                    );
                    return Err(open_error(std::io::Error::new(e.kind(), why)).into());
                }
                None => return Err(open_error(e).into()),
            },
            Ok(file) => file,
        };
        if !file.metadata().map_err(open_error)?.is_file() {
            return Err(lock_file_refused(&path, "a fifo, socket or device"));
        }
        Lock::wait_for(file, path, wait, false)
    }

    /// Takes the profile's lock shared, for a command that reads the profile's handlers
    /// and writes elsewhere (`trust`, `doctor --fix`'s trust entries): it waits out an
    /// install's swap, and never runs beside one. Only an existing lock file is opened, and
    /// for reading, so a read-only profile is no obstacle. None when no regular file there
    /// can be opened: every change locks that file first (making it, and refusing anything
    /// else there), so none is under way but maybe a first install, which replaces no
    /// entry; or it may not be read, and then no process of this user holds it.
    pub fn acquire_shared(profile: &Profile, wait: Duration) -> Result<Option<Lock>, Error> {
        let path = profile.lock_file();
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_NONBLOCK | libc::O_NOFOLLOW,
        );
        match options.open(&path) {
            Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => {
                Lock::wait_for(file, path, wait, true).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Takes an exclusive lock on the folder `dir` itself, creating no file in it.
    pub fn acquire_dir(dir: &Path, wait: Duration) -> Result<Lock, Error> {
        let file = std::fs::File::open(dir)
            .map_err(|e| crate::fs::FsError::new("open the folder to lock", dir, e))?;
        Lock::wait_for(file, dir.to_path_buf(), wait, false)
    }

    fn wait_for(
        file: std::fs::File,
        path: PathBuf,
        wait: Duration,
        shared: bool,
    ) -> Result<Lock, Error> {
        let start = Instant::now();
        loop {
            let taken = if shared {
                file.try_lock_shared()
            } else {
                file.try_lock()
            };
            match taken {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                    // A command that defers signals (`pack`, `assemble`) stops waiting.
                    crate::run::check_interrupted()?;
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::LockTimeout { path, waited: wait });
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(crate::fs::FsError::new("lock", &path, e).into())
                }
            }
        }
    }
}

/// Whether reading a profile file failed because it is a folder, fifo, socket or device
/// (the input's fault, with a fix), not because it could not be read.
fn not_a_file(e: &crate::fs::FsError) -> bool {
    matches!(
        e.source.kind(),
        std::io::ErrorKind::IsADirectory | std::io::ErrorKind::InvalidInput
    )
}

/// What is wrong with a config.yaml the YAML loader refused, read in `text`. A key given
/// twice is named as written, with the lines that give it and the fix: the loader says
/// `String("extra"): duplicated key in mapping` at the end of the mapping, in Rust's
/// notation and past the lines that hold the key (found by review).
fn yaml_why(e: &yaml_rust2::ScanError, text: &str) -> String {
    let Some(key) = e.info().strip_suffix(": duplicated key in mapping") else {
        let at = e.marker();
        return format!(
            "line {}, column {}: {}; it is not YAML as written, so its settings cannot be \
             read: fix the syntax there (hookpack reads only `extra.hooks.index_url` from it)",
            at.line(),
            at.col() + 1,
            e.info()
        );
    };
    // The loader's notation of a scalar key: `String("x")`, `Integer(1)`, `Real("1.5")`,
    // `Boolean(true)`; a key of another kind (a list, a mapping) is not named.
    let scalar = ["String(", "Integer(", "Real(", "Boolean("]
        .iter()
        .find_map(|kind| key.strip_prefix(kind)?.strip_suffix(')'))
        .map(|k| {
            k.strip_prefix('"')
                .and_then(|k| k.strip_suffix('"'))
                .unwrap_or(k)
        });
    let Some(key) = scalar else {
        return "a key is given twice in one mapping, and YAML allows each key once there; \
                keep one of them"
            .to_string();
    };
    // The lines a block mapping gives it on (`key:` first on its line), when they tell.
    let lines: Vec<String> = (text.lines().enumerate())
        .filter(|(_, l)| {
            let l = l.trim_start().trim_start_matches("- ");
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    let at = match lines.len() {
        0 | 1 => String::new(),
        _ => format!(" (lines {})", lines.join(", ")),
    };
    format!(
        "the key `{}` is given twice in one mapping{at}, and YAML allows each key once \
         there; keep one, merging what each holds when they are mappings",
        crate::diagnostic::bounded(key.to_string())
    )
}

/// Refuses a config.yaml shaped so that it cannot hold `extra.hooks.index_url` where it
/// plainly means to (a dotted key, an `extra` or `hooks` that is no mapping): reading no
/// index there would install from the built-in catalog in silence.
fn check_index_url_shape(doc: &yaml_rust2::Yaml) -> Result<(), String> {
    use yaml_rust2::Yaml;
    const NEST: &str = "nest it: `extra: {hooks: {index_url: URL}}` (or the same on three \
                        lines, each indented under the one before)";
    let dotted = |map: &Yaml, key: &str| {
        map.as_hash().is_some_and(|h| {
            h.keys()
                .any(|k| k.as_str().is_some_and(|k| k.trim() == key))
        })
    };
    for (map, key, shown) in [
        (doc, "extra.hooks.index_url", "`extra.hooks.index_url`"),
        (doc, "extra.hooks", "`extra.hooks`"),
        (
            &doc["extra"],
            "hooks.index_url",
            "`hooks.index_url` in extra",
        ),
    ] {
        if dotted(map, key) {
            return Err(format!(
                "extra.hooks.index_url is written with a dotted key ({shown}), which YAML \
                 reads as one name, not a path, so hookpack finds no index there; {NEST}"
            ));
        }
    }
    for (name, v) in [
        ("extra", &doc["extra"]),
        ("extra.hooks", &doc["extra"]["hooks"]),
    ] {
        let kind = match v {
            Yaml::Hash(_) | Yaml::Null | Yaml::BadValue => continue,
            Yaml::String(_) => "a string".to_string(),
            other => yaml_kind(other),
        };
        return Err(format!(
            "{name} is {kind}, not a mapping, so it holds no index_url and hookpack finds no \
             index there; {NEST}"
        ));
    }
    Ok(())
}

/// What a YAML value is, for a message: `a list`, `the number 12`.
fn yaml_kind(v: &yaml_rust2::Yaml) -> String {
    use yaml_rust2::Yaml;
    match v {
        Yaml::Real(r) => format!("the number {r}"),
        Yaml::Integer(i) => format!("the number {i}"),
        Yaml::String(_) => "an empty string".into(),
        Yaml::Boolean(b) => format!("the boolean {b}"),
        Yaml::Array(_) => "a list".into(),
        Yaml::Hash(_) => "a mapping".into(),
        Yaml::Alias(_) => "an alias".into(),
        Yaml::Null | Yaml::BadValue => "nothing".into(),
    }
}
