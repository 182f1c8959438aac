//! `report.html`: a report as one self-contained page, built from the matrix
//! page's components.
//!
//! One server: its column of the matrix. A migration: what a person wants to look
//! at first, drawn rather than tabulated (each document's cosine between the two
//! servers, as sent and with the fixes applied; the latency distributions), then the
//! old client's expectations, what to change, both servers' clauses side by side,
//! and the whole `report.md` as text, so the page holds everything the report says.
//!
//! ```text
//! Migration audit: old → new
//! • On every one of the 40 documents the cosine is at least 0.9990 …
//! [cosine per document]  [with the fixes applied]  [latency boxes]
//! Same request, different answer · What to change · Clauses, side by side
//! ```

use super::markdown::{self, migration::nothing_broken, migration::vector_verdict};
use super::matrix::{self, Document};
use super::page::chart::{self, LatencyBox};
use super::page::{self, escape, inline};
use super::{MigrationView, Report};
use crate::migration::Migration;
use crate::migration::contract::Judgement;
use crate::migration::latency::{Latency, Phase};
use std::fmt::Write;

/// The page of `report`: a migration's when it has one, else its server's.
pub(crate) fn render(report: &Report) -> String {
    let matrix = Document::of(report, None);
    match report.migration() {
        Some(view) => migration_page(report, view, &matrix),
        None => server_page(report, &matrix),
    }
}

fn server_page(report: &Report, matrix: &Document) -> String {
    let audit = report.subject();
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>embedcheck report: {}</h1>\n<p><code>{}</code> · {} · {} requests, {} tokens</p>",
        escape(&audit.label),
        escape(&audit.endpoint),
        run_line(report),
        audit.requests_sent,
        audit.tokens_used
    );
    body.push_str(&matrix::html::sections(matrix));
    page::document(&format!("embedcheck report: {}", audit.label), &body)
}

/// The seed and the build: what reproduces the page's requests.
fn run_line(report: &Report) -> String {
    format!(
        "seed {} · {} {} · {}",
        report.seed,
        escape(report.tool.name),
        escape(report.tool.version),
        escape(&report.contract.line())
    )
}

fn migration_page(report: &Report, view: MigrationView<'_>, matrix: &Document) -> String {
    let (m, b, c) = (view.migration, view.baseline, view.candidate);
    let title = format!("Migration audit: {} → {}", b.label, c.label);
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    let _ = writeln!(
        body,
        "<p>baseline <code>{}</code> → candidate <code>{}</code> · {} · {} requests in {:.1} s</p>",
        escape(&b.endpoint),
        escape(&c.endpoint),
        run_line(report),
        view.requests_sent(),
        m.wall_seconds
    );
    glance(&mut body, m);
    vectors(&mut body, m);
    fixes(&mut body, m);
    latency(&mut body, m);
    expectations(&mut body, view);
    remedies(&mut body, m);
    body.push_str("<h2>Clauses, side by side</h2>\n");
    body.push_str(&matrix::html::sections(matrix));
    let _ = writeln!(
        body,
        "<details class=\"text\"><summary>The whole report as text (report.md)</summary><pre>{}</pre></details>",
        escape(&markdown::render(report))
    );
    page::document(&title, &body)
}

/// The findings in a few lines, each with its number.
fn glance(body: &mut String, m: &Migration) {
    body.push_str("<ul class=\"glance\">\n");
    let mut line = |text: &str| {
        let _ = writeln!(body, "<li>{}</li>", inline(text));
    };
    line(&vector_verdict(&m.vector_equivalence));
    let broken = m.broken_reliances();
    if let Some(sentence) = nothing_broken(m) {
        line(sentence);
    }
    line(&rankings_line(m));
    if let Some(f) = &m.fixes_applied {
        line(&format!(
            "With the fixes applied: {} of {} documents embedded, {} compared; {}.",
            f.embedded,
            f.documents,
            f.compared,
            if f.restored {
                "the migrated client gets what the old one got"
            } else {
                "differences remain (below)"
            }
        ));
    }
    let diff = &m.behaviour_diff;
    line(&format!(
        "{} of {} clauses ended differently on the two servers.",
        diff.verdicts_changed,
        diff.verdicts.len()
    ));
    if !broken.is_empty() {
        let _ = write!(
            body,
            "<li>What the existing client relies on that the candidate breaks ({}):<ul>",
            broken.len()
        );
        for item in broken {
            let _ = write!(body, "<li>{}</li>", inline(item));
        }
        body.push_str("</ul></li>\n");
    }
    body.push_str("</ul>\n");
}

fn rankings_line(m: &Migration) -> String {
    let r = &m.retrieval;
    let agreement = r
        .scenario(r.migrated)
        .and_then(|s| s.versus_reference.as_ref());
    match agreement {
        Some(a) => format!(
            "Rankings of the migrated client against the old one, {} documents × {} queries: overlap@{} {:.2}, Spearman {:.3}; top hit changed for {} of {} queries.",
            r.documents,
            r.queries,
            r.k,
            a.overlap_at_k,
            a.spearman,
            a.top_hit_changed.len(),
            r.queries
        ),
        None => match r.not_ranked.as_slice() {
            [] => "Rankings not compared: no scenario could be ranked.".to_owned(),
            [why] => format!("Rankings not compared: {why}."),
            [why, rest @ ..] => format!(
                "Rankings not compared: {why} (and {} more scenarios, in report.md).",
                rest.len()
            ),
        },
    }
}

fn vectors(body: &mut String, m: &Migration) {
    let v = &m.vector_equivalence;
    body.push_str("<h2>Vectors, document by document</h2>\n");
    if v.cosines.is_empty() {
        let _ = writeln!(body, "<p>{}</p>", escape(&vector_verdict(v)));
        return;
    }
    let _ = writeln!(
        body,
        "<figure>{}<figcaption>Cosine between the two servers' vectors of each document, the same request sent to both: \
         {} of {} documents compared; min {:.4} ({}), median {:.4}, max {:.4}.</figcaption></figure>",
        chart::cosines(&v.cosines, v.same_at),
        v.common,
        v.documents,
        v.cosine_min.unwrap_or(f64::NAN),
        escape(v.least_similar.as_deref().unwrap_or("?")),
        v.cosine_median.unwrap_or(f64::NAN),
        v.cosine_max.unwrap_or(f64::NAN)
    );
    not_embedded(body, &v.failures_baseline, &v.failures_candidate);
}

/// The batches a server failed, so the chart's missing documents are accounted for.
fn not_embedded(body: &mut String, baseline: &[String], candidate: &[String]) {
    if baseline.is_empty() && candidate.is_empty() {
        return;
    }
    body.push_str("<p>Not compared (the batch failed on a server):</p>\n<ul>\n");
    for (side, why) in baseline
        .iter()
        .map(|w| ("baseline", w))
        .chain(candidate.iter().map(|w| ("candidate", w)))
    {
        let _ = writeln!(body, "<li>{side}: {}</li>", escape(why));
    }
    body.push_str("</ul>\n");
}

fn fixes(body: &mut String, m: &Migration) {
    let Some(f) = &m.fixes_applied else {
        return;
    };
    body.push_str("<h2>With the fixes applied</h2>\n<ul>\n");
    for change in &f.applied {
        let _ = writeln!(body, "<li>{}</li>", inline(change));
    }
    body.push_str("</ul>\n");
    let Some(spread) = f.cosine else {
        body.push_str("<p>No document could be compared with the old client's vector.</p>\n");
        return;
    };
    let reaching = f.compared - f.below.len();
    let _ = writeln!(
        body,
        "<figure>{}<figcaption>Cosine of each document sent as the migrated client sends it, against the old client's vector: \
         {} of {} documents compared ({} cut before sending); min {:.4}, median {:.4}, max {:.4}; {reaching} at or above {:.4}.</figcaption></figure>",
        chart::cosines(&f.cosines, f.same_at),
        f.compared,
        f.documents,
        f.cut.len() + f.old_client_cut.len(),
        spread.min,
        spread.median,
        spread.max,
        f.same_at
    );
    if !f.below.is_empty() {
        let named: Vec<String> = f
            .below
            .iter()
            .map(|d| format!("{} {:.4}", d.id, d.cosine))
            .collect();
        let _ = writeln!(
            body,
            "<p>Below {:.4}: {}.</p>",
            f.same_at,
            escape(&named.join(", "))
        );
    }
    for why in &f.not_embedded {
        let _ = writeln!(body, "<p>Not embedded: {}</p>", escape(why));
    }
}

fn latency(body: &mut String, m: &Migration) {
    body.push_str("<h2>Latency</h2>\n");
    let Some(l) = &m.latency else {
        let _ = writeln!(body, "<p>{}.</p>", escape(m.latency_not_measured()));
        return;
    };
    let phases = latency_phases(l);
    let boxes: Vec<LatencyBox<'_>> = phases
        .iter()
        .filter_map(|(name, phase)| {
            phase.distribution.as_ref().map(|d| LatencyBox {
                name,
                distribution: d,
            })
        })
        .collect();
    let _ = writeln!(
        body,
        "<figure>{}<figcaption>Each request carries {} documents; {} sequential and {} concurrent ({} workers) requests per server and run, {} runs, \
         every run's answered requests pooled (report.md's table gives the median of the runs' own p50 and p99). Whisker: fastest to p99; box: p25 to p75; line: p50.</figcaption></figure>",
        chart::latency(&boxes),
        l.documents_per_request,
        l.sequential_requests,
        l.concurrent_requests,
        l.concurrency,
        l.repeats
    );
    body.push_str("<div class=\"scroll short\"><table class=\"figures\"><thead><tr><th>requests to</th><th>answered</th><th>errors</th><th>p50 pooled</th><th>p90 pooled</th><th>p99 pooled</th><th>max</th><th>docs/s (median run)</th></tr></thead><tbody>\n");
    for (name, phase) in &phases {
        let cells = phase.distribution.map_or_else(
            || "<td>—</td><td>—</td><td>—</td><td>—</td>".to_owned(),
            |d| {
                format!(
                    "<td>{:.1} ms</td><td>{:.1} ms</td><td>{:.1} ms</td><td>{:.1} ms</td>",
                    d.p50_ms, d.p90_ms, d.p99_ms, d.max_ms
                )
            },
        );
        let _ = writeln!(
            body,
            "<tr><th>{}</th><td>{}</td><td>{}</td>{cells}<td>{:.1}</td></tr>",
            escape(name),
            phase.distribution.map_or(0, |d| d.requests),
            phase.errors,
            phase.docs_per_second
        );
    }
    body.push_str("</tbody></table></div>\n");
}

/// Both servers' phases, sequential first, each named as the chart labels it.
fn latency_phases(l: &Latency) -> Vec<(String, &Phase)> {
    let conc = format!("conc. {}", l.concurrency);
    vec![
        (
            format!("{} sequential", l.baseline.label),
            &l.baseline.sequential,
        ),
        (
            format!("{} sequential", l.candidate.label),
            &l.candidate.sequential,
        ),
        (
            format!("{} {conc}", l.baseline.label),
            &l.baseline.concurrent,
        ),
        (
            format!("{} {conc}", l.candidate.label),
            &l.candidate.concurrent,
        ),
    ]
}

fn expectations(body: &mut String, view: MigrationView<'_>) {
    let (m, b, c) = (view.migration, view.baseline, view.candidate);
    let _ = writeln!(
        body,
        "<h2>Same request, different answer</h2>\n<div class=\"scroll short\"><table id=\"expectations\"><thead><tr>\
         <th>topic</th><th>{}</th><th>{}</th><th>the existing client relies on</th><th>verdict</th></tr></thead><tbody>",
        escape(&b.label),
        escape(&c.label)
    );
    for e in &m.contract {
        let class = match e.judgement {
            Judgement::Kept => "pass",
            Judgement::Broken => "fail",
            Judgement::NotRelied => "skip",
        };
        let word = e.judgement.word();
        let _ = writeln!(
            body,
            "<tr><th class=\"clause\">{}</th><td>{}</td><td>{}</td><td>{}</td><td class=\"cell {class}\">{word}</td></tr>",
            e.topic.name(),
            inline(&e.baseline),
            inline(&e.candidate),
            inline(e.relies_on.as_deref().unwrap_or("—"))
        );
    }
    body.push_str("</tbody></table></div>\n");
}

fn remedies(body: &mut String, m: &Migration) {
    body.push_str("<h2>What to change</h2>\n");
    if m.remediation.is_empty() {
        body.push_str("<p>Nothing: no finding calls for a client-side change.</p>\n");
        return;
    }
    body.push_str("<ol>\n");
    for r in &m.remediation {
        let _ = writeln!(
            body,
            "<li><strong>{}</strong> — {}</li>",
            inline(&r.action),
            inline(&r.evidence)
        );
    }
    body.push_str("</ol>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn a_single_servers_page_is_its_matrix_column() {
        let report = sample::report();
        let page = render(&report);
        assert!(page.contains("<h1>embedcheck report: "), "{page}");
        for result in &report.servers[0].results {
            assert!(page.contains(&result.id), "{}", result.id);
        }
        for loads in ["src=", "<link", "url(", "@import", "href="] {
            assert!(!page.contains(loads), "the page must load nothing: {loads}");
        }
    }
}
