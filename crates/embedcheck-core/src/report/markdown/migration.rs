//! The migration part of `report.md`, written to read like the study it reproduces:
//! setting, vectors, behaviour differences, what the client relies on, retrieval,
//! latency, and what to change. The candidate's own clause report follows it.
//!
//! ```markdown
//! # Migration audit: old → new
//! ## The vectors
//! | item | old | new |
//! | dimensions | 1024 | 1024 |
//! ## Same request, different answer
//! | request | old | new | the client relies on | verdict |
//! ## What to change
//! 1. **stop sending `dimensions`** — dimensions: 512 → 500 …
//! ```

use super::rankings::scenario_row;
use super::table::{cell, code, table_row};
use crate::audit::ServerAudit;
use crate::migration::Migration;
use crate::migration::behaviour::ProbeRow;
use crate::migration::contract::Judgement;
use crate::migration::latency::{Latency, Phase};
use crate::migration::retrieval::{Retrieval, Scenario};
use crate::migration::vectors::VectorEquivalence;
use crate::report::MigrationView;
use crate::report::text;
use crate::verdict::Outcome;
use std::fmt::Write;

/// The migration document.
pub(super) fn render(view: MigrationView<'_>) -> String {
    let (m, b, c) = (view.migration, view.baseline, view.candidate);
    let mut doc = format!(
        "# Migration audit: {} → {}\n",
        text::flat(&b.label),
        text::flat(&c.label)
    );
    setting(&mut doc, view);
    vectors(&mut doc, &m.vector_equivalence, b, c);
    differences(&mut doc, m, b, c);
    retrieval(&mut doc, &m.retrieval);
    latency(&mut doc, m);
    remediation(&mut doc, m);
    if let Some(f) = &m.fixes_applied {
        super::fixed::render(&mut doc, f, &c.label);
    }
    doc.push('\n');
    doc
}

/// `120 + 31`: what the clause run and the comparison each sent to one server.
fn spent(audit: u64, comparison: u64) -> String {
    format!(
        "{} + {}",
        text::thousands(audit),
        text::thousands(comparison)
    )
}

fn header(doc: &mut String, first: &str, b: &ServerAudit, c: &ServerAudit) {
    table_row(doc, &[first, &b.label, &c.label]);
    doc.push_str("|---|---|---|\n");
}

fn clause_counts(a: &ServerAudit) -> String {
    format!(
        "{} pass, {} fail, {} skip, {} inconclusive",
        a.count(Outcome::Pass),
        a.count(Outcome::Fail),
        a.count(Outcome::Skip),
        a.count(Outcome::Inconclusive)
    )
}

fn setting(doc: &mut String, view: MigrationView<'_>) {
    let (m, b, c) = (view.migration, view.baseline, view.candidate);
    doc.push_str("\n## Setting\n\n");
    header(doc, "", b, c);
    let model = |a: &ServerAudit| {
        a.model
            .as_deref()
            .map_or("(server default)".to_owned(), code)
    };
    let rows = [
        (
            "role",
            "baseline (the old server)".to_owned(),
            "candidate (the new server)".to_owned(),
        ),
        ("endpoint", code(&b.endpoint), code(&c.endpoint)),
        ("model", model(b), model(c)),
        ("clauses", clause_counts(b), clause_counts(c)),
        (
            "requests sent (audit + comparison)",
            spent(b.requests_sent, m.requests.baseline),
            spent(c.requests_sent, m.requests.candidate),
        ),
        (
            "tokens used (audit + comparison)",
            spent(b.tokens_used, m.tokens.baseline),
            spent(c.tokens_used, m.tokens.candidate),
        ),
    ];
    for (name, x, y) in rows {
        table_row(doc, &[name, &x, &y]);
    }
    let corpus = &m.corpus;
    let languages: Vec<String> = corpus
        .languages
        .iter()
        .map(|(l, n)| format!("{n} {l}"))
        .collect();
    let _ = writeln!(
        doc,
        "\nWorkload: {} documents ({}) sent {} per request, {} queries with relevance judgements, from {}. \
         Both servers were sent the same requests (same seed); the whole run sent {} requests in {}.",
        corpus.documents,
        languages.join(", "),
        corpus.batch_size,
        corpus.queries,
        corpus.origin,
        text::thousands(view.requests_sent()),
        text::seconds(m.wall_seconds)
    );
    for (label, aborted) in [(&b.label, &b.aborted), (&c.label, &c.aborted)] {
        if let Some(why) = aborted {
            let _ = writeln!(
                doc,
                "\n> **{label} could not be audited:** {}",
                text::flat(why)
            );
        }
    }
}

fn number(x: Option<f64>, digits: usize) -> String {
    x.map_or("—".to_owned(), |x| format!("{x:.digits$}"))
}

fn vectors(doc: &mut String, v: &VectorEquivalence, b: &ServerAudit, c: &ServerAudit) {
    let title = if v.equivalent {
        "The vectors matched"
    } else {
        "The vectors"
    };
    let _ = writeln!(doc, "\n## {title}\n");
    header(doc, "item", b, c);
    let dims = |d: Option<usize>| d.map_or("—".to_owned(), |d| d.to_string());
    let cosines = format!(
        "min {} · median {} · max {}",
        number(v.cosine_min, 4),
        number(v.cosine_median, 4),
        number(v.cosine_max, 4)
    );
    table_row(
        doc,
        &[
            "dimensions",
            &dims(v.dimensions_baseline),
            &dims(v.dimensions_candidate),
        ],
    );
    table_row(
        doc,
        &[
            "L2 norm of first vector",
            &number(v.norm_baseline, 4),
            &number(v.norm_candidate, 4),
        ],
    );
    let both = format!(
        "documents embedded by both: {} of {}",
        v.common, v.documents
    );
    table_row(doc, &[&both, "", ""]);
    match &v.tokens_not_comparable {
        None => {
            let tokens = format!("total tokens over the {} documents both embedded", v.common);
            table_row(
                doc,
                &[
                    &tokens,
                    &text::thousands(v.tokens_baseline),
                    &text::thousands(v.tokens_candidate),
                ],
            );
        }
        Some(why) => table_row(doc, &["token counts", &format!("not compared: {why}"), ""]),
    }
    table_row(
        doc,
        &["per-document cosine, baseline vs candidate", &cosines, ""],
    );
    doc.push('\n');
    if v.tokens_not_comparable.is_none() {
        if v.token_differences.is_empty() {
            doc.push_str("Token counts matched for every document both embedded. ");
        } else {
            let shown: Vec<String> = v
                .token_differences
                .iter()
                .map(|d| format!("{} ({} vs {})", d.id, opt(d.baseline), opt(d.candidate)))
                .collect();
            let _ = write!(
                doc,
                "Token counts differ for {} documents: {}. ",
                shown.len(),
                shown.join(", ")
            );
        }
    }
    let _ = writeln!(doc, "{}", vector_verdict(v));
    for failure in v
        .failures_baseline
        .iter()
        .map(|f| (&b.label, f))
        .chain(v.failures_candidate.iter().map(|f| (&c.label, f)))
    {
        let _ = writeln!(doc, "- {}: {}", failure.0, text::flat(failure.1));
    }
    if let Some(why) = overlength_cause(v, b, c) {
        let _ = writeln!(doc, "\n{why}");
    }
}

/// When only the candidate failed documents and the two servers' over-length facts
/// differ as the study's did (the baseline truncates, the candidate does not), the
/// likely cause in one sentence, from those facts alone.
fn overlength_cause(v: &VectorEquivalence, b: &ServerAudit, c: &ServerAudit) -> Option<String> {
    use crate::contracts::embeddings::facts::EmbeddingsFacts;
    use crate::contracts::embeddings::facts::OverlengthPolicy;
    if v.failures_candidate.is_empty() || !v.failures_baseline.is_empty() {
        return None;
    }
    let policy = |a: &ServerAudit| {
        let facts = EmbeddingsFacts::of(&a.facts);
        facts.overlength_policy.map(|f| f.value)
    };
    let (Some(OverlengthPolicy::Truncate), Some(candidate)) = (policy(b), policy(c)) else {
        return None;
    };
    let answer = match candidate {
        OverlengthPolicy::Reject(status) | OverlengthPolicy::Neither(status) => status,
        OverlengthPolicy::Truncate => return None,
    };
    let limit = |a: &ServerAudit| EmbeddingsFacts::of(&a.facts).known_limit();
    let (b_limit, c_limit) = (limit(b)?.0, limit(c)?.0);
    Some(format!(
        "{} answers input over its {c_limit}-token limit with {answer}, and {} truncated input over {b_limit} tokens silently: documents longer than that embed (cut) on the old server and fail on the new one. Truncate them before sending (see What to change).",
        text::flat(&c.label),
        text::flat(&b.label)
    ))
}

/// One sentence that agrees with the numbers above it: over how many documents, and
/// whether the lowest cosine is above the same-vector line.
/// One sentence: whether the servers give the same vectors, over which documents.
pub(crate) fn vector_verdict(v: &VectorEquivalence) -> String {
    let over = if v.common == v.documents {
        format!("every one of the {} documents", v.documents)
    } else {
        format!(
            "the {} of {} documents both servers embedded ({} failed on a server, listed below)",
            v.common,
            v.documents,
            v.documents - v.common
        )
    };
    match (v.equivalent, v.cosine_min) {
        (true, _) => format!(
            "On {over} the cosine is at least {:.4}: the servers give the same vectors.",
            v.same_at
        ),
        (false, Some(min)) => format!(
            "On {over} the lowest cosine is {min:.4} ({}), below {:.4}: the servers do not give the same vectors.",
            v.least_similar.as_deref().unwrap_or("?"),
            v.same_at
        ),
        (false, None) => {
            "No document was embedded by both servers: nothing could be compared.".to_owned()
        }
    }
}

/// The contract's verdict when nothing is listed as broken: kept, or nothing judged at
/// all (a baseline offering nothing to rely on, or a server not probed: "keeps
/// everything" would claim what was never checked). `None` when something broke.
pub(crate) fn nothing_broken(m: &Migration) -> Option<&'static str> {
    if m.contract
        .iter()
        .all(|e| e.judgement == Judgement::NotRelied)
    {
        Some(
            "No expectation of the existing client was judged: on every topic the baseline offered nothing to rely on, or was not probed.",
        )
    } else if m.broken_reliances().is_empty() {
        Some("The candidate keeps everything the existing client relies on.")
    } else {
        None
    }
}

fn opt(n: Option<u64>) -> String {
    n.map_or("—".to_owned(), |n| n.to_string())
}

/// A broken expectation stands out in bold.
fn verdict_word(j: Judgement) -> String {
    match j {
        Judgement::Broken => format!("**{}**", j.word()),
        _ => j.word().to_owned(),
    }
}

fn differences(doc: &mut String, m: &Migration, b: &ServerAudit, c: &ServerAudit) {
    doc.push_str("\n## Same request, different answer\n\n");
    table_row(
        doc,
        &[
            "topic",
            &b.label,
            &c.label,
            "the existing client relies on",
            "verdict",
        ],
    );
    doc.push_str("|---|---|---|---|---|\n");
    for e in &m.contract {
        table_row(
            doc,
            &[
                e.topic.name(),
                &e.baseline,
                &e.candidate,
                e.relies_on.as_deref().unwrap_or("—"),
                &verdict_word(e.judgement),
            ],
        );
    }
    let broken = m.broken_reliances();
    if let Some(sentence) = nothing_broken(m) {
        let _ = writeln!(doc, "\n{sentence}");
    } else {
        let _ = writeln!(
            doc,
            "\nWhat the existing client relies on that the candidate breaks:\n"
        );
        for item in broken {
            let _ = writeln!(doc, "- {}", text::flat(item));
        }
    }
    probe_table(
        doc,
        &m.behaviour_diff.probes,
        m.behaviour_diff.differing,
        b,
        c,
    );
    verdict_table(doc, m, b, c);
}

fn answer(a: Option<&crate::migration::behaviour::Answer>) -> String {
    a.map_or("(not sent)".to_owned(), ToString::to_string)
}

fn probe_table(
    doc: &mut String,
    rows: &[ProbeRow],
    differing: usize,
    b: &ServerAudit,
    c: &ServerAudit,
) {
    let both = rows
        .iter()
        .filter(|r| r.baseline.is_some() && r.candidate.is_some())
        .count();
    let _ = writeln!(
        doc,
        "\n### Every request side by side\n\n{differing} of the {both} requests sent to both servers were answered differently \
         (status, body shape, item count, tokens, vector length or encoding).\n"
    );
    let write_rows = |doc: &mut String, keep: &dyn Fn(&ProbeRow) -> bool| {
        table_row(doc, &["request", &b.label, &c.label]);
        doc.push_str("|---|---|---|\n");
        for row in rows.iter().filter(|r| keep(r)) {
            let request = match &row.client_mistake {
                Some(why) => format!("{} (client mistake: {why})", row.request),
                None => row.request.clone(),
            };
            table_row(
                doc,
                &[
                    &request,
                    &answer(row.baseline.as_ref()),
                    &answer(row.candidate.as_ref()),
                ],
            );
        }
    };
    if differing > 0 {
        write_rows(doc, &|r| r.differs);
    }
    doc.push_str("\n<details><summary>All requests</summary>\n\n");
    write_rows(doc, &|_| true);
    doc.push_str("\n</details>\n");
}

fn verdict_table(doc: &mut String, m: &Migration, b: &ServerAudit, c: &ServerAudit) {
    let diff = &m.behaviour_diff;
    let _ = writeln!(
        doc,
        "\n### Clause verdicts\n\n{} of {} clauses ended differently.\n",
        diff.verdicts_changed,
        diff.verdicts.len()
    );
    table_row(
        doc,
        &[
            "ID",
            "level",
            &b.label,
            &c.label,
            &format!("{} reason", c.label),
        ],
    );
    doc.push_str("|---|---|---|---|---|\n");
    let mut rows: Vec<_> = diff.verdicts.iter().collect();
    rows.sort_by_key(|r| !r.changed);
    for row in rows {
        let mark = |o: Outcome| {
            if row.changed {
                format!("**{}**", o.as_str())
            } else {
                o.as_str().to_owned()
            }
        };
        table_row(
            doc,
            &[
                &row.id,
                &row.level.to_string(),
                &mark(row.baseline),
                &mark(row.candidate),
                &text::one_line(&row.candidate_reason, 100),
            ],
        );
    }
}

fn spread_row(doc: &mut String, name: &str, s: Option<crate::migration::vectors::Spread>) {
    let cells = s.map_or(
        ["—".to_owned(), "—".to_owned(), "—".to_owned()],
        |s| {
            [
                format!("{:.4}", s.min),
                format!("{:.4}", s.median),
                format!("{:.4}", s.max),
            ]
        },
    );
    table_row(doc, &[name, &cells[0], &cells[1], &cells[2]]);
}

fn retrieval(doc: &mut String, r: &Retrieval) {
    let e = &r.instruction;
    let _ = writeln!(
        doc,
        "\n## Retrieval\n\n### Query vectors, old server vs new\n\nThe baseline is sent `input_type: \"query\"`, as the old client does; \
         the candidate the bare query, and the query with the instruction prefixed by the client (`{}`).\n",
        cell(&e.client_prefix.replace('\n', "\\n"))
    );
    doc.push_str(
        "| cosine between the servers' query vectors | min | median | max |\n|---|---|---|---|\n",
    );
    spread_row(
        doc,
        "instruction dropped (candidate given the bare query)",
        e.dropped,
    );
    spread_row(doc, "instruction prefixed by the client", e.client_prefixed);
    spread_row(doc, "no instruction on either side", e.both_bare);
    let _ = writeln!(
        doc,
        "\n### Rankings\n\nEach of {q} queries ranks the {d} documents both servers embedded (the queries with a relevant document among them); \
         the first scenario is the reference the others are compared with \
         (overlap@{k}, Spearman's ρ and Kendall's τ over the full ranking, averaged over queries); `{m}` is the migrated client.\n",
        k = r.k,
        q = r.queries,
        d = r.documents,
        m = r.migrated
    );
    let _ = writeln!(
        doc,
        "| scenario | recall@{k} | MRR | overlap@{k} | Spearman | Kendall | top hit changed |\n|---|---|---|---|---|---|---|",
        k = r.k
    );
    for s in &r.scenarios {
        scenario_row(doc, s);
    }
    for why in &r.not_ranked {
        let _ = writeln!(doc, "\nNot ranked: {}", text::flat(why));
    }
    top_k_table(doc, r);
}

fn top_k_table(doc: &mut String, r: &Retrieval) {
    let Some(reference) = r.scenarios.first() else {
        return;
    };
    let others: Vec<&Scenario> = r.scenarios.iter().skip(1).collect();
    let _ = writeln!(doc, "\n<details><summary>Top {} per query</summary>\n", r.k);
    let mut head = vec!["query".to_owned(), reference.name.to_owned()];
    head.extend(others.iter().map(|s| s.name.to_owned()));
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table_row(doc, &head);
    let _ = writeln!(doc, "|{}", "---|".repeat(head.len()));
    for (i, q) in reference.queries.iter().enumerate() {
        let mut cells = vec![q.query.clone(), q.top_k.join(", ")];
        for s in &others {
            let ranked = &s.queries[i];
            let mark = if ranked.top_hit_changed == Some(true) {
                " (top hit changed)"
            } else {
                ""
            };
            cells.push(format!("{}{mark}", ranked.top_k.join(", ")));
        }
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        table_row(doc, &cells);
    }
    doc.push_str("\n</details>\n");
}

fn latency(doc: &mut String, m: &Migration) {
    doc.push_str("\n## Latency and throughput\n\n");
    let Some(l) = &m.latency else {
        let _ = writeln!(doc, "{}.", text::flat(m.latency_not_measured()));
        return;
    };
    latency_table(doc, l);
}

fn latency_table(doc: &mut String, l: &Latency) {
    let n = l.concurrency;
    let _ = writeln!(
        doc,
        "Batch of {} documents per request (only batches both servers embedded); {} sequential requests and {} at concurrency {n} \
         per server, each server's phases as one block, the blocks alternating; median of {} runs.\n",
        l.documents_per_request, l.sequential_requests, l.concurrent_requests, l.repeats
    );
    let _ = writeln!(
        doc,
        "| server | sequential p50 | sequential p99 | conc. {n} p50 | conc. {n} p99 | conc. {n} throughput | errors |\n|---|---|---|---|---|---|---|"
    );
    for s in [&l.baseline, &l.candidate] {
        let (q, c) = (&s.sequential, &s.concurrent);
        let errors = q.errors + c.errors;
        // A figure built on errors times refusals against real work: not printed.
        let shown = |x: String| if errors == 0 { x } else { "—".to_owned() };
        table_row(
            doc,
            &[
                &s.label,
                &shown(ms(q.p50_ms)),
                &shown(ms(q.p99_ms)),
                &shown(ms(c.p50_ms)),
                &shown(ms(c.p99_ms)),
                &shown(format!("{:.1} docs/s", c.docs_per_second)),
                &errors.to_string(),
            ],
        );
    }
    let i = &l.interference;
    let _ = writeln!(
        doc,
        "\nInterference, measured apart: with {} requests alternating one by one between the servers, sequential p50 is {} on {} and {} on {} (against {} and {} in blocks).",
        i.requests,
        ms(i.baseline_p50_ms),
        l.baseline.label,
        ms(i.candidate_p50_ms),
        l.candidate.label,
        ms(l.baseline.sequential.p50_ms),
        ms(l.candidate.sequential.p50_ms)
    );
    let runs = |p: &Phase| {
        p.runs
            .iter()
            .map(|r| format!("{:.1}", r.docs_per_second))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let _ = writeln!(
        doc,
        "\nPer-run throughput: {} {}; {} {} docs/s.",
        l.baseline.label,
        runs(&l.baseline.concurrent),
        l.candidate.label,
        runs(&l.candidate.concurrent)
    );
}

fn ms(x: f64) -> String {
    format!("{x:.1} ms")
}

fn remediation(doc: &mut String, m: &Migration) {
    doc.push_str("\n## What to change\n\n");
    if m.remediation.is_empty() {
        doc.push_str("Nothing: no finding calls for a client-side change.\n");
        return;
    }
    for (i, r) in m.remediation.iter().enumerate() {
        let _ = writeln!(
            doc,
            "{}. **{}** — {}",
            i + 1,
            text::flat(&r.action),
            text::flat(&r.evidence)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::embeddings::facts::OverlengthPolicy;
    use crate::contracts::embeddings::facts::{EmbeddingsFacts, InputLimit, LimitEvidence};
    use crate::report::sample;
    use crate::session::facts::Fact;

    fn with_overlength(policy: OverlengthPolicy) -> ServerAudit {
        let mut audit = sample::audit();
        let embeddings = audit.facts.contracts.get_mut::<EmbeddingsFacts>();
        embeddings.overlength_policy = Some(Fact::declared(policy, "--overlength"));
        let limit = InputLimit::Known {
            tokens: 256,
            over_words: 257,
            because: LimitEvidence::Declared,
        };
        embeddings.input_limit = Some(Fact::declared(limit, "--max-input-tokens"));
        audit
    }

    #[test]
    fn failed_documents_are_tied_to_the_over_length_facts() {
        let (old, new) = (
            with_overlength(OverlengthPolicy::Truncate),
            with_overlength(OverlengthPolicy::Neither(500)),
        );
        let mut v = sample_equivalence();
        v.failures_candidate = vec!["batch 3 (ko-01…ko-08): 500".to_owned()];
        let why = overlength_cause(&v, &old, &new).expect("the study's case");
        assert!(why.contains("over its 256-token limit with 500"), "{why}");
        assert_eq!(overlength_cause(&v, &old, &old), None, "both truncate");
        v.failures_candidate.clear();
        assert_eq!(overlength_cause(&v, &old, &new), None, "nothing failed");
    }

    fn sample_equivalence() -> VectorEquivalence {
        VectorEquivalence {
            documents: 40,
            common: 16,
            dimensions_baseline: Some(384),
            dimensions_candidate: Some(384),
            norm_baseline: Some(1.0),
            norm_candidate: Some(1.0),
            tokens_baseline: 0,
            tokens_candidate: 0,
            tokens_not_comparable: None,
            cosine_min: Some(1.0),
            cosine_median: Some(1.0),
            cosine_max: Some(1.0),
            least_similar: None,
            cosines: Vec::new(),
            token_differences: Vec::new(),
            failures_baseline: Vec::new(),
            failures_candidate: Vec::new(),
            same_at: 0.999,
            equivalent: true,
        }
    }
}
