//! hookpack: assemble, validate, pack, install and run command-hook recipes for agent CLIs
//! that read a `hooks.json` (FinClaw, Codex, Claude Code).
//!
//! The library does the work; the `hookpack` binary only parses arguments (see [`cli`]) and
//! maps errors to exit codes. A host written in Rust can depend on this crate and call the
//! validators and formats directly.

pub mod advice;
pub mod archive;
pub mod assemble;
pub mod catalog;
pub mod cli;
pub mod command;
pub mod diagnostic;
pub mod doctor;
pub mod error;
pub mod event;
pub mod fetch;
pub mod fixture;
pub mod fs;
pub mod gzip;
pub mod hooks_json;
pub mod id;
pub mod install;
pub mod json;
pub mod leftover;
pub mod list;
pub mod merge;
pub mod output;
pub mod pack;
pub mod parallel;
pub mod profile;
pub mod receipt;
pub mod recipe;
pub mod run;
pub mod scaffold;
pub mod sha256;
pub mod trust;
pub mod typescript;
pub mod validate;
pub mod version;

pub use error::{Error, ExitCode};
