//! The library's error type and the process exit codes it maps to (SPEC §4).

use crate::fs::FsError;
use std::path::PathBuf;

/// How a command ended, as a process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success.
    Success = 0,
    /// The input is invalid or the operation was refused.
    Invalid = 1,
    /// Command-line usage.
    Usage = 2,
    /// The environment failed: I/O, network, lock.
    Environment = 3,
}

/// Everything a library operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A filesystem call failed.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// An id given on the command line is not valid.
    #[error("invalid recipe id")]
    IdInvalid(#[from] crate::id::IdError),
    /// `new` would overwrite something.
    #[error(
        "{path} already exists; hookpack never overwrites a folder, so choose another id or --dir"
    )]
    ScaffoldTargetExists {
        /// The folder that exists.
        path: PathBuf,
    },
    /// Writing to stdout failed because the reader went away (`| head`).
    #[error("broken pipe")]
    BrokenPipe,
    /// Writing output failed.
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
}

impl Error {
    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Fs(e) if e.is_input_problem() => ExitCode::Invalid,
            Error::Fs(_) | Error::Output(_) => ExitCode::Environment,
            Error::IdInvalid(_) | Error::ScaffoldTargetExists { .. } => ExitCode::Invalid,
            Error::BrokenPipe => ExitCode::Success,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::Output(e)
        }
    }
}
