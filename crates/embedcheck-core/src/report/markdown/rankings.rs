//! One ranking scenario as a table row, shared by the migration's retrieval section
//! and its "with the fixes applied" section.

use super::table::table_row;
use crate::migration::retrieval::Scenario;

/// `| scenario | recall@k | MRR | overlap@k | Spearman | Kendall | top hit changed |`
pub(super) fn scenario_row(doc: &mut String, s: &Scenario) {
    let (overlap, rho, tau, changed) = match &s.versus_reference {
        Some(a) => (
            format!("{:.2}", a.overlap_at_k),
            format!("{:.3}", a.spearman),
            format!("{:.3}", a.kendall),
            if a.top_hit_changed.is_empty() {
                "none".to_owned()
            } else {
                format!(
                    "{} of {}: {}",
                    a.top_hit_changed.len(),
                    s.queries.len(),
                    a.top_hit_changed.join(", ")
                )
            },
        ),
        None => (
            "(reference)".to_owned(),
            String::new(),
            String::new(),
            String::new(),
        ),
    };
    let name = format!("`{}`: {}", s.name, s.description);
    table_row(
        doc,
        &[
            &name,
            &format!("{:.2}", s.recall_at_k),
            &format!("{:.2}", s.mrr),
            &overlap,
            &rho,
            &tau,
            &changed,
        ],
    );
}
