//! `report.md`: the report a person pastes into a design doc or an issue.
//!
//! Settings and observations first, so a reader knows what was audited; then one
//! verdict row per clause in catalogue order; then, for each failure only, the evidence
//! and a curl command that reproduces it. Passing clauses carry no evidence here:
//! `report.json` has it for whoever needs it.
//!
//! ```markdown
//! # embedcheck report: staging
//! | Setting | Value |
//! …
//! | ID | Family | Level | Outcome | Reason |
//! | IN-003 | input | MUST | **fail** | token-id input rejected with 422 |
//! ## Failures
//! ### IN-003 (MUST): Token-id input
//! ```

mod audit;
mod fixed;
pub(crate) mod migration;
mod rankings;
mod replay;
pub(crate) mod table;

use crate::report::Report;

/// The whole Markdown document: the migration or the replay against a recorded
/// baseline (when there is one), then the audited server's own report.
pub fn render(report: &Report) -> String {
    let mut doc = report
        .migration()
        .map_or_else(String::new, migration::render);
    if let Some(r) = &report.replay {
        doc.push_str(&replay::render(r));
    }
    doc.push_str(&audit::render(report));
    doc
}
