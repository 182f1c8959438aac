//! Audits one server: the clause run ([`runner`]) and what it produces ([`result`]),
//! including the one place where a result's meaning for the run is decided.

mod result;
mod runner;

pub use result::{ClauseResult, Conclusion, Gate, RunSummary, ServerAudit};
pub use runner::{DRY_RUN_MODEL, PlannedRequest, audit_server, audit_session, plan_requests, run};
