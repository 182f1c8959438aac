//! The replay against a recorded baseline, as `report.md` opens with it: the verdict,
//! the cosines in bands, the lowest texts, norms, usage counts and what could not be
//! compared.

use crate::migration::replay::rankings::{Metrics, Rankings};
use crate::migration::replay::{Band, Replay};
use crate::report::text;
use std::fmt::Write;

/// The section, before the audited server's own report.
pub(super) fn render(replay: &Replay) -> String {
    let r = replay;
    let mut doc = String::new();
    let _ = writeln!(
        doc,
        "# embedcheck replay: recorded from {}\n",
        text::flat(&r.recorded.server)
    );
    let _ = writeln!(doc, "**{}**: {}\n", r.verdict, text::flat(&r.reason));
    let figure = |v: Option<f64>| v.map_or("—".to_owned(), |c| format!("{c:.6}"));
    let _ = writeln!(doc, "| recorded | now |\n|---|---|");
    let _ = writeln!(
        doc,
        "| {} documents, {} queries of {} dimensions, model `{}`, embedcheck {} | {} texts compared in {} requests; cosine min {}, p1 {}, median {} |\n",
        r.recorded.documents,
        r.recorded.queries,
        r.recorded.dimensions,
        text::flat(&r.recorded.model),
        r.recorded.embedcheck,
        r.compared,
        r.requests,
        figure(r.cosine_min),
        figure(r.cosine_p1),
        figure(r.cosine_median),
    );
    let t = r.thresholds;
    let _ = writeln!(doc, "| band | edge | texts |\n|---|---|---|");
    for (band, edge) in [
        (
            Band::Identical,
            format!("1 − cosine ≤ {:.0e}", t.identical_gap),
        ),
        (Band::Equivalent, format!("cosine ≥ {}", t.equivalent)),
        (
            Band::Degraded,
            format!("{} ≤ cosine < {}", t.changed, t.equivalent),
        ),
        (Band::Changed, format!("cosine < {}", t.changed)),
    ] {
        let count = r.bands.get(&band).copied().unwrap_or(0);
        let _ = writeln!(doc, "| {band:?} | {edge} | {count} |");
    }
    doc.push('\n');
    if !r.worst.is_empty() {
        let _ = writeln!(doc, "Lowest cosines: {}.\n", lowest(r));
    }
    if let Some(rankings) = &r.rankings {
        index(&mut doc, rankings);
    }
    if let Some(norms) = r.norms {
        let _ = writeln!(
            doc,
            "L2 norms: median {:.4} recorded, {:.4} now{}.\n",
            norms.recorded_median,
            norms.now_median,
            if norms.changed() {
                " (changed: a dot-product or L2 index ranks differently)"
            } else {
                ""
            }
        );
    }
    for change in &r.tokens_changed {
        let _ = writeln!(
            doc,
            "- usage of {} ({}): {} recorded, {} now",
            change.request(),
            change.ids.join(", "),
            change.recorded,
            change.now
        );
    }
    for failure in &r.failures {
        let _ = writeln!(doc, "- not compared: {}", text::flat(failure));
    }
    if let Some((then, now)) = &r.listed_models {
        let _ = writeln!(
            doc,
            "- GET /models listed {} when recorded, {} now (what the server says of itself, not judged)",
            text::flat(&then.join(", ")),
            text::flat(&now.join(", "))
        );
    }
    for change in &r.fingerprint_changes {
        let _ = writeln!(
            doc,
            "- {} (what the server says of itself, not judged)",
            text::flat(&change.sentence())
        );
    }
    for change in &r.answers_changed {
        let _ = writeln!(doc, "- answered otherwise: {}", text::flat(change));
    }
    if r.refused_alike > 0 {
        let _ = writeln!(
            doc,
            "- {} documents refused, as when recorded",
            r.refused_alike
        );
    }
    if !r.tokens_changed.is_empty()
        || r.listed_models.is_some()
        || !r.fingerprint_changes.is_empty()
        || !r.failures.is_empty()
        || !r.answers_changed.is_empty()
        || r.refused_alike > 0
    {
        doc.push('\n');
    }
    doc
}

fn lowest(r: &Replay) -> String {
    r.worst
        .iter()
        .map(|c| format!("{} {:.6}", c.text, c.cosine))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "Can I keep my index?": the rankings against the recorded ones, and the labels' verdict.
fn index(doc: &mut String, r: &Rankings) {
    let percent = |v: f64| format!("{:.0} %", 100.0 * v);
    let mixed = r
        .mixed_overlap
        .map_or("no search (another width)".to_owned(), percent);
    let tau = r.fresh_tau.map_or("—".to_owned(), |t| format!("{t:.3}"));
    let top = |t: Option<crate::migration::replay::rankings::TopScore>| {
        t.map_or("—".to_owned(), |t| {
            format!("{:.4} ({:.4} to {:.4})", t.median, t.p10, t.p90)
        })
    };
    let _ = writeln!(
        doc,
        "Can I keep my index? Over {} queries, the recorded top 10 kept by new queries against the recorded vectors: {mixed}; against new documents: {} (Kendall's tau of the recorded top 10: {tau}). Top-1 score, median (p10 to p90): {} recorded, {} now.\n",
        r.queries,
        percent(r.fresh_overlap),
        top(r.top_score_recorded),
        top(r.top_score_now),
    );
    if let Some(q) = r.quality {
        let _ = writeln!(
            doc,
            "| on the corpus's labels | nDCG@10 | recall@10 | recall@100 | MRR@10 |\n|---|---|---|---|---|"
        );
        for (name, m) in [("recorded", q.recorded), ("now", q.fresh)] {
            let _ = writeln!(doc, "| {name} | {} |", metrics(&m));
        }
        let _ = writeln!(
            doc,
            "\nnDCG@10 difference {:+.3}, paired bootstrap 95 % interval {:+.3} to {:+.3} over {} judged queries: {}.\n",
            q.ndcg_delta,
            q.interval.0,
            q.interval.1,
            q.queries,
            q.gate.sentence()
        );
    }
}

fn metrics(m: &Metrics) -> String {
    format!(
        "{:.3} | {:.3} | {:.3} | {:.3}",
        m.ndcg_10, m.recall_10, m.recall_100, m.mrr_10
    )
}
