//! Retrieval impact: does switching servers change what a query finds?
//!
//! The study measured per-document cosines (0.9996 and up) but left open whether
//! that moves rankings. Each query ranks every fixture document under four
//! scenarios; the first (the baseline, queried as the old client does, with
//! `input_type: "query"`) is the reference the others are compared with:
//!
//! | scenario | documents | queries |
//! |---|---|---|
//! | `baseline` | baseline | baseline, `input_type: "query"` |
//! | `candidate_prefixed` | candidate | candidate, instruction prefixed by the client |
//! | `candidate_bare` | candidate | candidate, bare string (the address swap) |
//! | `baseline_index_candidate_queries` | baseline | candidate, as the migrated client sends them (keep the old index) |
//!
//! The migrated client prefixes the instruction itself only when the old server
//! applied one (its `instruction_fields` fact says `input_type` was honoured); a client
//! of a server that ignored `input_type` never had an instruction to move, so its
//! migrated queries are the bare ones. [`Retrieval::migrated`] names the scenario that
//! is the migrated client, and every summary reads that one.
//!
//! Against the reference: overlap@k, Spearman's ρ and Kendall's τ-b over the full
//! ranking, and whether the top hit changed; against the relevance judgements:
//! recall@k and reciprocal rank. The query vectors themselves are compared too, so
//! a dropped instruction shows as a number (the study's 0.82).

use super::corpus::Corpus;
use super::vectors::{Embedded, Fields, Spread, embed};
use crate::contracts::embeddings::requests;
use crate::declared::QueryTemplate;
use crate::session::Session;
use crate::vectors::cosine;
use serde::Serialize;
use std::collections::BTreeSet;

/// How the client prefixes the query instruction itself once the server stops doing
/// it: a template such as `Instruct: {task}\nQuery: {text}` and its task.
#[derive(Clone, Debug)]
pub struct Instruction {
    pub template: QueryTemplate,
    pub task: String,
}

impl Instruction {
    /// Qwen3-Embedding's documented form. With the default task it is exactly the
    /// reference server's `DEFAULT_QUERY_INSTRUCTION` followed by the text.
    pub const QWEN3_TEMPLATE: &'static str = r"Instruct: {task}\nQuery: {text}";

    pub(crate) fn prefixed(&self, text: &str) -> String {
        self.template.fill(&self.task, text)
    }
}

/// One set of query vectors, or why it is missing.
pub(crate) type QueryResult = Result<Vec<Vec<f64>>, String>;

/// Query vectors from both servers: each `Err` says why that set is missing.
#[derive(Clone, Debug)]
pub(crate) struct QueryVectors {
    pub baseline_instructed: QueryResult,
    pub baseline_bare: QueryResult,
    pub candidate_bare: QueryResult,
    pub candidate_prefixed: QueryResult,
}

/// Three requests: the baseline's queries with `input_type: "query"` and bare, and
/// one candidate batch holding the bare queries followed by the prefixed ones (two
/// batches when the prefixed ones go with `prefixed_fields`, on a candidate that would
/// put its own instruction on top of a bare one).
pub(crate) async fn embed_queries(
    baseline: &Session,
    candidate: &Session,
    corpus: &Corpus,
    instruction: &Instruction,
    prefixed_fields: &Fields,
) -> QueryVectors {
    let bare: Vec<&str> = corpus.queries.iter().map(|q| q.text.as_str()).collect();
    let prefixed: Vec<String> = bare.iter().map(|t| instruction.prefixed(t)).collect();
    let vectors = |r: Result<(Vec<Vec<f64>>, Option<u64>), String>| r.map(|(v, _)| v);
    let baseline_instructed = vectors(embed(baseline, &bare, &[requests::as_query()]).await);
    let baseline_bare = vectors(embed(baseline, &bare, &[]).await);
    let prefixed: Vec<&str> = prefixed.iter().map(String::as_str).collect();
    let (candidate_bare, candidate_prefixed) = if prefixed_fields.is_empty() {
        let both: Vec<&str> = bare.iter().chain(&prefixed).copied().collect();
        match vectors(embed(candidate, &both, &[]).await) {
            Ok(mut all) => {
                let prefixed = all.split_off(bare.len());
                (Ok(all), Ok(prefixed))
            }
            Err(why) => (Err(why.clone()), Err(why)),
        }
    } else {
        (
            vectors(embed(candidate, &bare, &[]).await),
            vectors(embed(candidate, &prefixed, prefixed_fields).await),
        )
    };
    QueryVectors {
        baseline_instructed,
        baseline_bare,
        candidate_bare,
        candidate_prefixed,
    }
}

/// Old-server vs new-server query vectors, with and without the instruction.
#[derive(Clone, Debug, Serialize)]
pub struct InstructionEffect {
    /// The instruction the client prefixes, `{text}` standing for the query.
    pub client_prefix: String,
    /// Baseline with `input_type: "query"` vs candidate given the bare query: what an
    /// address swap does to a query.
    pub dropped: Option<Spread>,
    /// Baseline with `input_type: "query"` vs candidate given the client-prefixed
    /// query: whether the client-side fix restores the vectors.
    pub client_prefixed: Option<Spread>,
    /// Both servers given the bare query: the runtimes' own difference.
    pub both_bare: Option<Spread>,
}

/// One scenario's rankings.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    /// Mean over queries of the share of relevant documents in the top k.
    pub recall_at_k: f64,
    /// Mean reciprocal rank of the first relevant document.
    pub mrr: f64,
    /// Agreement with the reference scenario (absent for the reference itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versus_reference: Option<Agreement>,
    pub queries: Vec<QueryRanking>,
}

/// How far a scenario's rankings agree with the reference's, averaged over queries.
#[derive(Clone, Debug, Serialize)]
pub struct Agreement {
    pub overlap_at_k: f64,
    pub spearman: f64,
    pub kendall: f64,
    /// Queries whose first hit differs from the reference's.
    pub top_hit_changed: Vec<String>,
}

/// One query's ranking in one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct QueryRanking {
    pub query: String,
    pub top_k: Vec<String>,
    pub recall_at_k: f64,
    pub reciprocal_rank: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlap_at_k: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spearman: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kendall: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_hit_changed: Option<bool>,
}

/// Everything the retrieval section reports.
#[derive(Clone, Debug, Serialize)]
pub struct Retrieval {
    pub k: usize,
    /// Documents ranked: those both servers embedded, so every scenario ranks the same
    /// index and a document one server failed moves no ranking.
    pub documents: usize,
    /// Queries ranked: those with a relevant document among the ranked ones.
    pub queries: usize,
    pub instruction: InstructionEffect,
    /// The first scenario is the reference.
    pub scenarios: Vec<Scenario>,
    /// Scenarios that could not be ranked, and why.
    pub not_ranked: Vec<String>,
    /// The scenario that is the migrated client: `candidate_prefixed` when the old
    /// server applied the query instruction, else `candidate_bare`.
    pub migrated: &'static str,
}

impl Retrieval {
    pub fn scenario(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.iter().find(|s| s.name == name)
    }
}

/// A scenario to rank: which documents, which queries.
struct Plan<'a> {
    name: &'static str,
    description: &'static str,
    documents: &'a Embedded,
    queries: &'a QueryResult,
}

/// Ranks every scenario and compares it with the reference.
pub(crate) fn analyse(
    corpus: &Corpus,
    documents: (&Embedded, &Embedded),
    queries: &QueryVectors,
    instruction: &Instruction,
    baseline_applied_instruction: bool,
    k: usize,
) -> Retrieval {
    let (corpus, b, c, kept) = common(corpus, documents);
    let (b, c) = (&b, &c);
    let all_queries = queries;
    let queries = &QueryVectors {
        baseline_instructed: kept_queries(&all_queries.baseline_instructed, &kept),
        baseline_bare: kept_queries(&all_queries.baseline_bare, &kept),
        candidate_bare: kept_queries(&all_queries.candidate_bare, &kept),
        candidate_prefixed: kept_queries(&all_queries.candidate_prefixed, &kept),
    };
    let plans = [
        Plan {
            name: "baseline",
            description: "baseline index, baseline queries with input_type \"query\" (the old client)",
            documents: b,
            queries: &queries.baseline_instructed,
        },
        Plan {
            name: "candidate_prefixed",
            description: "candidate index, candidate queries with the instruction prefixed by the client",
            documents: c,
            queries: &queries.candidate_prefixed,
        },
        Plan {
            name: "candidate_bare",
            description: "candidate index, candidate queries as bare strings (address swap)",
            documents: c,
            queries: &queries.candidate_bare,
        },
        Plan {
            name: "baseline_index_candidate_queries",
            description: if baseline_applied_instruction {
                "baseline index kept, candidate queries with the instruction prefixed"
            } else {
                "baseline index kept, candidate queries as bare strings (the old server applied no instruction)"
            },
            documents: b,
            queries: if baseline_applied_instruction {
                &queries.candidate_prefixed
            } else {
                &queries.candidate_bare
            },
        },
    ];
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut not_ranked = Vec::new();
    // The first plan is the reference; when it cannot be ranked, nothing is compared.
    let mut reference: Option<Vec<Vec<f64>>> = None;
    for (i, plan) in plans.iter().enumerate() {
        match scores(plan) {
            Ok(scores) => {
                scenarios.push(rank(&corpus, plan, &scores, reference.as_deref(), k));
                if i == 0 {
                    reference = Some(scores);
                }
            }
            Err(why) => not_ranked.push(format!("{}: {why}", plan.name)),
        }
    }
    Retrieval {
        k,
        documents: corpus.documents.len(),
        queries: corpus.queries.len(),
        instruction: instruction_effect(queries, instruction),
        scenarios,
        not_ranked,
        migrated: if baseline_applied_instruction {
            "candidate_prefixed"
        } else {
            "candidate_bare"
        },
    }
}

/// The old client's rankings and the migrated client's once the fixes are applied
/// (its documents and queries as the fixed re-run sent them), compared, over the
/// documents both embedded.
pub(crate) fn against_reference(
    corpus: &Corpus,
    documents: (&Embedded, &Embedded),
    (old, fixed): (&QueryResult, &QueryResult),
    k: usize,
) -> Result<[Scenario; 2], String> {
    let (corpus, b, c, kept) = common(corpus, documents);
    let (old, fixed) = (kept_queries(old, &kept), kept_queries(fixed, &kept));
    let reference = Plan {
        name: "baseline",
        description: "baseline index, baseline queries with input_type \"query\" (the old client)",
        documents: &b,
        queries: &old,
    };
    let migrated = Plan {
        name: "candidate_fixed",
        description: "candidate index and queries, sent with the fixes applied",
        documents: &c,
        queries: &fixed,
    };
    let reference_scores = scores(&reference).map_err(|why| format!("baseline: {why}"))?;
    let migrated_scores = scores(&migrated)?;
    Ok([
        rank(&corpus, &reference, &reference_scores, None, k),
        rank(
            &corpus,
            &migrated,
            &migrated_scores,
            Some(&reference_scores),
            k,
        ),
    ])
}

/// The vectors of the queries kept (by index).
fn kept_queries(q: &QueryResult, kept: &[usize]) -> QueryResult {
    q.as_ref()
        .map(|v| kept.iter().filter_map(|&i| v.get(i).cloned()).collect())
        .map_err(Clone::clone)
}

/// The documents both servers embedded, as a corpus of their own (with the queries
/// that have a relevant document among them), each server's vectors of them, and the
/// indices of the queries kept.
fn common(
    corpus: &Corpus,
    (b, c): (&Embedded, &Embedded),
) -> (Corpus, Embedded, Embedded, Vec<usize>) {
    let kept: Vec<usize> = (0..corpus.documents.len())
        .filter(|&i| {
            matches!(
                (b.vectors.get(i), c.vectors.get(i)),
                (Some(Some(_)), Some(Some(_)))
            )
        })
        .collect();
    // With no document in common, rank each side on its own: nothing is hidden,
    // and the scenarios say which failed.
    if kept.is_empty() {
        let every_query = (0..corpus.queries.len()).collect();
        return (corpus.clone(), b.clone(), c.clone(), every_query);
    }
    let only = |e: &Embedded| Embedded {
        vectors: kept.iter().map(|&i| e.vectors[i].clone()).collect(),
        batch_tokens: Vec::new(),
        failures: e.failures.clone(),
    };
    let documents: Vec<_> = kept.iter().map(|&i| corpus.documents[i].clone()).collect();
    let ids: BTreeSet<&str> = documents.iter().map(|d| d.id.as_str()).collect();
    let (kept_queries, queries): (Vec<usize>, Vec<_>) = corpus
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let mut q = q.clone();
            q.relevant.retain(|id| ids.contains(id.as_str()));
            (i, q)
        })
        .filter(|(_, q)| !q.relevant.is_empty())
        .unzip();
    let corpus = Corpus {
        documents,
        queries,
        origin: corpus.origin.clone(),
    };
    (corpus, only(b), only(c), kept_queries)
}

/// Cosine of every query with every document: `scores[query][document]`.
fn scores(plan: &Plan<'_>) -> Result<Vec<Vec<f64>>, String> {
    let queries = plan
        .queries
        .as_ref()
        .map_err(|e| format!("queries failed: {e}"))?;
    let documents: Vec<&Vec<f64>> = plan
        .documents
        .vectors
        .iter()
        .map(|v| v.as_ref().ok_or("documents failed to embed"))
        .collect::<Result<_, _>>()?;
    if let (Some(q), Some(d)) = (queries.first(), documents.first())
        && q.len() != d.len()
    {
        return Err(format!(
            "{}-value queries cannot search {}-value documents",
            q.len(),
            d.len()
        ));
    }
    Ok(queries
        .iter()
        .map(|q| documents.iter().map(|d| cosine(q, d)).collect())
        .collect())
}

fn rank(
    corpus: &Corpus,
    plan: &Plan<'_>,
    scores: &[Vec<f64>],
    reference: Option<&[Vec<f64>]>,
    k: usize,
) -> Scenario {
    let ids: Vec<&str> = corpus.documents.iter().map(|d| d.id.as_str()).collect();
    let queries: Vec<QueryRanking> = corpus
        .queries
        .iter()
        .zip(scores)
        .enumerate()
        .map(|(i, (query, row))| {
            let order = ranking(row);
            let top_k: Vec<String> = order.iter().take(k).map(|&d| ids[d].to_owned()).collect();
            let relevant: BTreeSet<&str> = query.relevant.iter().map(String::as_str).collect();
            let mut ranked = QueryRanking {
                query: query.id.clone(),
                recall_at_k: top_k
                    .iter()
                    .filter(|id| relevant.contains(id.as_str()))
                    .count() as f64
                    / relevant.len() as f64,
                reciprocal_rank: order
                    .iter()
                    .position(|&d| relevant.contains(ids[d]))
                    .map_or(0.0, |p| 1.0 / (p + 1) as f64),
                top_k,
                overlap_at_k: None,
                spearman: None,
                kendall: None,
                top_hit_changed: None,
            };
            if let Some(reference) = reference {
                compare(&mut ranked, &reference[i], row, k);
            }
            ranked
        })
        .collect();
    Scenario {
        name: plan.name,
        description: plan.description,
        recall_at_k: mean(queries.iter().map(|q| q.recall_at_k)),
        mrr: mean(queries.iter().map(|q| q.reciprocal_rank)),
        versus_reference: reference.map(|_| agreement(&queries)),
        queries,
    }
}

fn compare(ranked: &mut QueryRanking, reference: &[f64], row: &[f64], k: usize) {
    let (ours, theirs) = (ranking(row), ranking(reference));
    let k = k.min(ours.len());
    let top: BTreeSet<usize> = theirs.iter().take(k).copied().collect();
    let shared = ours.iter().take(k).filter(|d| top.contains(d)).count();
    ranked.overlap_at_k = Some(if k == 0 {
        1.0
    } else {
        shared as f64 / k as f64
    });
    ranked.spearman = Some(spearman(reference, row));
    ranked.kendall = Some(kendall_tau_b(reference, row));
    ranked.top_hit_changed = Some(ours.first() != theirs.first());
}

fn agreement(queries: &[QueryRanking]) -> Agreement {
    Agreement {
        overlap_at_k: mean(queries.iter().filter_map(|q| q.overlap_at_k)),
        spearman: mean(queries.iter().filter_map(|q| q.spearman)),
        kendall: mean(queries.iter().filter_map(|q| q.kendall)),
        top_hit_changed: queries
            .iter()
            .filter(|q| q.top_hit_changed == Some(true))
            .map(|q| q.query.clone())
            .collect(),
    }
}

/// Document indices by descending score; ties keep corpus order, so equal scores
/// rank the same on both sides.
fn ranking(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Ranks from 1, tied values sharing the mean of the ranks they span.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let shared = (start + end + 1) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

/// Spearman's ρ: the Pearson correlation of the average ranks, which handles ties.
/// Two constant score lists (no ranking at all) agree perfectly: 1.
pub(crate) fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let (rx, ry) = (average_ranks(x), average_ranks(y));
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum();
    if vx == 0.0 || vy == 0.0 {
        return if vx == vy { 1.0 } else { 0.0 };
    }
    cov / (vx * vy).sqrt()
}

/// Kendall's τ-b over all pairs, O(n²): 40 documents are 780 pairs. τ-b rather than
/// τ-a so tied scores (identical vectors) neither agree nor disagree.
pub(crate) fn kendall_tau_b(x: &[f64], y: &[f64]) -> f64 {
    let (mut concordant, mut discordant, mut ties_x, mut ties_y, mut pairs) =
        (0i64, 0i64, 0i64, 0i64, 0i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            pairs += 1;
            let (dx, dy) = (x[i].total_cmp(&x[j]), y[i].total_cmp(&y[j]));
            match (dx.is_eq(), dy.is_eq()) {
                (true, true) => {
                    ties_x += 1;
                    ties_y += 1;
                }
                (true, false) => ties_x += 1,
                (false, true) => ties_y += 1,
                (false, false) if dx == dy => concordant += 1,
                (false, false) => discordant += 1,
            }
        }
    }
    let denominator = (((pairs - ties_x) * (pairs - ties_y)) as f64).sqrt();
    if denominator == 0.0 {
        return if ties_x == ties_y { 1.0 } else { 0.0 };
    }
    (concordant - discordant) as f64 / denominator
}

fn instruction_effect(queries: &QueryVectors, instruction: &Instruction) -> InstructionEffect {
    let pairwise = |a: &QueryResult, b: &QueryResult| {
        let (a, b) = (a.as_ref().ok()?, b.as_ref().ok()?);
        Spread::of(a.iter().zip(b).map(|(x, y)| cosine(x, y)).collect())
    };
    InstructionEffect {
        client_prefix: instruction.prefixed("{text}"),
        dropped: pairwise(&queries.baseline_instructed, &queries.candidate_bare),
        client_prefixed: pairwise(&queries.baseline_instructed, &queries.candidate_prefixed),
        both_bare: pairwise(&queries.baseline_bare, &queries.candidate_bare),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_scores_correlate_perfectly() {
        let x = [0.9, 0.1, 0.5, 0.3];
        assert!((spearman(&x, &x) - 1.0).abs() < 1e-12);
        assert!((kendall_tau_b(&x, &x) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn reversed_scores_correlate_negatively() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [4.0, 3.0, 2.0, 1.0];
        assert!((spearman(&x, &y) + 1.0).abs() < 1e-12);
        assert!((kendall_tau_b(&x, &y) + 1.0).abs() < 1e-12);
    }

    /// Worked example: one swapped adjacent pair among four items gives
    /// ρ = 1 − 6·2/(4·15) = 0.8 and τ = (5 − 1)/6.
    #[test]
    fn one_adjacent_swap_matches_the_textbook_values() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 2.0, 4.0, 3.0];
        assert!((spearman(&x, &y) - 0.8).abs() < 1e-12);
        assert!((kendall_tau_b(&x, &y) - 4.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn ties_share_their_mean_rank() {
        assert_eq!(average_ranks(&[0.5, 0.1, 0.5]), vec![2.5, 1.0, 2.5]);
    }

    #[test]
    fn rankings_break_ties_by_corpus_order() {
        assert_eq!(ranking(&[0.2, 0.9, 0.2, 0.5]), vec![1, 3, 0, 2]);
    }

    #[test]
    fn the_default_prefix_is_the_reference_servers_instruction() {
        let instruction = Instruction {
            template: Instruction::QWEN3_TEMPLATE.parse().unwrap(),
            task: crate::declared::DEFAULT_QUERY_TASK.to_owned(),
        };
        assert_eq!(
            instruction.prefixed("q"),
            format!("{}q", reference_server::DEFAULT_QUERY_INSTRUCTION)
        );
    }
}
