//! Runtime trouble, kept apart from clause failures, with documented exit statuses.

use embedcheck_core::expectations::ExpectationsError;
use embedcheck_core::http::TargetError;
use embedcheck_core::migration::recording::RecordingError;
use embedcheck_core::report::ReportError;
use std::process::ExitCode;
use thiserror::Error;

/// No failing clause.
pub const EXIT_CONFORMANT: u8 = 0;
/// Bad options or values.
pub const EXIT_USAGE: u8 = 2;
/// The endpoint could not be audited (unreachable, no model, reports unwritable).
pub const EXIT_RUNTIME: u8 = 3;
/// The filter selected no clause: nothing was audited, which must not read as a pass.
pub const EXIT_NOTHING_SELECTED: u8 = 4;
/// A clause failed: libtest's own status for failed tests, so `cargo test` agrees.
pub const EXIT_CLAUSE_FAILED: u8 = 101;
/// Interrupted by Ctrl-C; a partial report was written.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Why a run could not produce verdicts.
#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Endpoint(#[from] TargetError),
    #[error("environment variable {variable} (named by {flag}) is not set or empty")]
    MissingKey {
        variable: String,
        flag: &'static str,
    },
    #[error(
        "--load sends load only to servers on this machine (127.0.0.1, localhost, [::1]); {0} is not one"
    )]
    LoadOffLoopback(String),
    #[error("failed to start the reference server: {0}")]
    ReferenceServer(std::io::Error),
    #[error("failed to start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Expectations(#[from] ExpectationsError),
    #[error(transparent)]
    Corpus(#[from] embedcheck_core::migration::corpus::CorpusError),
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error(transparent)]
    Reference(#[from] embedcheck_core::reference::ReferenceError),
    #[error(
        "no clause matches {0:?}: a filter is a clause ID (RESP-003) or a family name (dimensions); --list shows them"
    )]
    NothingSelected(String),
    #[error(transparent)]
    Access(#[from] embedcheck_core::http::AccessError),
    #[error(transparent)]
    Vendor(#[from] embedcheck_core::vendor::VendorError),
}

impl RunError {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            RunError::Usage(_)
            | RunError::Endpoint(_)
            | RunError::MissingKey { .. }
            | RunError::LoadOffLoopback(_)
            | RunError::Expectations(_)
            | RunError::Corpus(_)
            | RunError::Reference(_)
            | RunError::Access(_)
            | RunError::Vendor(_) => EXIT_USAGE,
            RunError::ReferenceServer(_) | RunError::Runtime(_) | RunError::Report(_) => {
                EXIT_RUNTIME
            }
            RunError::NothingSelected(_) => EXIT_NOTHING_SELECTED,
            RunError::Recording(e) => match e {
                RecordingError::NotABaseline { .. } | RecordingError::Line { .. } => EXIT_USAGE,
                RecordingError::Io { .. } | RecordingError::Server(_) => EXIT_RUNTIME,
            },
        })
    }
}
