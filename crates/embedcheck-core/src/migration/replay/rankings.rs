//! "Can I keep my index?": the new server's queries searched against the recorded
//! documents (an index built before the change, queried after it) and against its own
//! new documents (an index rebuilt), each compared with the recorded rankings; and,
//! where the corpus judges which documents answer a query, both rankings' quality.
//!
//! Two servers whose spaces differ entirely (a rotation, another model) cannot share an
//! index, yet one may rank as well as the other: telling "re-index required" from
//! "broken" takes the fresh rankings, and with labels their quality.

use super::super::recording::Recording;
use super::super::retrieval::kendall_tau_b;
use crate::vectors::cosine;
use serde::Serialize;
use std::collections::BTreeMap;

/// The rank depth of the overlaps and of nDCG, recall and MRR.
pub const K: usize = 10;

/// Mean overlap@10 of the fresh rankings with the recorded ones at or above which they
/// agree, as under a rotation of the space (which keeps every ranking): nine of ten top
/// documents kept on average. The suite's own line, stated in the reason it decides.
pub const AGREE: f64 = 0.9;

/// The equivalence margin of nDCG@10: a fresh ranking whose interval lies above
/// −0.05 ranks as well. Spärck Jones's rule of thumb, which Voorhees and Buckley
/// ("The effect of topic set size on retrieval experiment error", SIGIR 2002) take up:
/// a difference under 5 % is not noticeable, 5 to 10 % noticeable, over 10 % material.
pub const MARGIN: f64 = 0.05;

/// Judged queries below which a percentile bootstrap understates its own interval's
/// width (it resamples what few values there are): no gate on fewer.
pub const FLOOR_QUERIES: usize = 20;

/// Resamples of the paired bootstrap.
const RESAMPLES: usize = 2000;

/// nDCG@10, recall@10, recall@100 and MRR@10 of one set of rankings, means over queries.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Metrics {
    pub ndcg_10: f64,
    pub recall_10: f64,
    pub recall_100: f64,
    pub mrr_10: f64,
}

/// What the labels say of the fresh rankings against the recorded ones, read from the
/// paired bootstrap interval of the difference in nDCG@10 (which already accounts for
/// how many queries were judged).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityGate {
    /// The interval lies above −[`MARGIN`]: the fresh rankings rank as well, or better.
    NotLower,
    /// The whole interval is below zero: the fresh rankings rank worse.
    Lower,
    /// The interval reaches below −[`MARGIN`] and above zero: it cannot tell.
    Undecided,
    /// Fewer than [`FLOOR_QUERIES`] judged queries: no interval to read.
    TooFewQueries,
}

impl QualityGate {
    /// The gate of a difference whose interval is `(low, high)` over `queries`.
    fn of(queries: usize, (low, high): (f64, f64)) -> Self {
        if queries < FLOOR_QUERIES {
            QualityGate::TooFewQueries
        } else if high < 0.0 {
            QualityGate::Lower
        } else if low >= -MARGIN {
            QualityGate::NotLower
        } else {
            QualityGate::Undecided
        }
    }

    /// What the gate says, as reports print it.
    pub fn sentence(self) -> String {
        match self {
            QualityGate::NotLower => {
                format!("as well: the interval lies above the margin of -{MARGIN}")
            }
            QualityGate::Lower => "lower: the whole interval is below zero".to_owned(),
            QualityGate::Undecided => {
                format!("undecided: the interval reaches below -{MARGIN} and above zero")
            }
            QualityGate::TooFewQueries => {
                format!("too few judged queries for an interval: at least {FLOOR_QUERIES} needed")
            }
        }
    }
}

/// Labelled quality before and after, with the paired bootstrap interval of the
/// difference in nDCG@10.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quality {
    pub queries: usize,
    pub recorded: Metrics,
    pub fresh: Metrics,
    /// Fresh minus recorded nDCG@10, and its 95 % interval.
    pub ndcg_delta: f64,
    pub interval: (f64, f64),
    pub gate: QualityGate,
}

/// The top-1 score's spread: users with absolute thresholds break when it shifts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TopScore {
    pub p10: f64,
    pub median: f64,
    pub p90: f64,
}

/// The rankings compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rankings {
    pub queries: usize,
    /// New queries against the recorded documents: mean overlap@10 with the recording;
    /// `None` where the widths differ and no such search exists.
    pub mixed_overlap: Option<f64>,
    /// New queries against new documents: mean overlap@10 and mean Kendall's tau-b of
    /// the recorded top 10's scores.
    pub fresh_overlap: f64,
    pub fresh_tau: Option<f64>,
    pub top_score_recorded: Option<TopScore>,
    pub top_score_now: Option<TopScore>,
    pub quality: Option<Quality>,
}

impl Rankings {
    /// Whether the fresh rankings agree with the recorded ones.
    pub fn fresh_agree(&self) -> bool {
        self.fresh_overlap >= AGREE
    }
}

/// Documents by cosine with `query`, best first.
fn ranked<'a>(query: &[f64], documents: &'a BTreeMap<String, Vec<f64>>) -> Vec<(&'a str, f64)> {
    let mut scored: Vec<(&str, f64)> = documents
        .iter()
        .map(|(id, v)| (id.as_str(), cosine(query, v)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    scored
}

/// The ids of a ranking, best first.
fn ids_of<'a>(ranking: &[(&'a str, f64)]) -> Vec<&'a str> {
    ranking.iter().map(|(id, _)| *id).collect()
}

fn overlap(a: &[&str], b: &[&str]) -> f64 {
    let n = a.len().min(b.len()).min(K);
    if n == 0 {
        return 1.0;
    }
    a.iter().take(n).filter(|id| b[..n].contains(id)).count() as f64 / n as f64
}

/// nDCG@10, recall@10, recall@100 and MRR@10 of one ranking against binary labels.
fn metrics(ranking: &[&str], relevant: &[String]) -> Metrics {
    let is = |id: &&str| relevant.iter().any(|r| r == id);
    let dcg: f64 = ranking
        .iter()
        .take(K)
        .enumerate()
        .filter(|(_, id)| is(id))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(K))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let recall = |k: usize| {
        ranking.iter().take(k).filter(|id| is(id)).count() as f64 / relevant.len() as f64
    };
    let mrr = ranking
        .iter()
        .take(K)
        .position(is)
        .map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
    Metrics {
        ndcg_10: if ideal > 0.0 { dcg / ideal } else { 0.0 },
        recall_10: recall(10),
        recall_100: recall(100),
        mrr_10: mrr,
    }
}

/// One server's retrieval quality on the corpus's labels: each metric's mean over the
/// judged queries, with the bootstrap 95 % interval of the mean nDCG@10, so servers can
/// be told apart only where their intervals do not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct LabelledQuality {
    pub queries: usize,
    pub metrics: Metrics,
    pub ndcg_interval: (f64, f64),
}

impl LabelledQuality {
    /// The quality of the rankings a recording holds (bare queries against its
    /// documents); `None` without judged queries.
    pub fn of(recording: &crate::migration::recording::Recording) -> Option<LabelledQuality> {
        let per_query: Vec<Metrics> = recording
            .queries
            .iter()
            .filter(|q| !q.relevant.is_empty())
            .map(|q| {
                let ranking: Vec<&str> = q.top.iter().map(|(id, _)| id.as_str()).collect();
                metrics(&ranking, &q.relevant)
            })
            .collect();
        if per_query.is_empty() {
            return None;
        }
        let ndcg: Vec<f64> = per_query.iter().map(|m| m.ndcg_10).collect();
        Some(LabelledQuality {
            queries: per_query.len(),
            metrics: mean_metrics(&per_query),
            ndcg_interval: bootstrap(&ndcg),
        })
    }

    /// Whether this server's interval overlaps `other`'s: the labels cannot tell them
    /// apart.
    pub fn overlaps(&self, other: &LabelledQuality) -> bool {
        self.ndcg_interval.0 <= other.ndcg_interval.1
            && other.ndcg_interval.0 <= self.ndcg_interval.1
    }
}

fn mean_metrics(all: &[Metrics]) -> Metrics {
    let n = all.len().max(1) as f64;
    let sum = |f: fn(&Metrics) -> f64| all.iter().map(f).sum::<f64>() / n;
    Metrics {
        ndcg_10: sum(|m| m.ndcg_10),
        recall_10: sum(|m| m.recall_10),
        recall_100: sum(|m| m.recall_100),
        mrr_10: sum(|m| m.mrr_10),
    }
}

/// The 95 % interval of the mean of `deltas` (paired differences, or one server's
/// per-query values) by a bootstrap, from a fixed seed so that the same replay gives the
/// same interval.
fn bootstrap(deltas: &[f64]) -> (f64, f64) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        // SplitMix64.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let n = deltas.len();
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            (0..n)
                .map(|_| deltas[(next() % n as u64) as usize])
                .sum::<f64>()
                / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((RESAMPLES - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

fn top_score(mut scores: Vec<f64>) -> Option<TopScore> {
    scores.sort_by(f64::total_cmp);
    let last = scores.len().checked_sub(1)?;
    let at = |q: f64| scores[(last as f64 * q).round() as usize];
    Some(TopScore {
        p10: at(0.1),
        median: at(0.5),
        p90: at(0.9),
    })
}

/// The rankings of the new server's vectors (`documents` by id, `queries` by id, bare
/// form) against the recording's; `None` when there is no query to rank with.
pub fn compare(
    recording: &Recording,
    documents: &BTreeMap<String, Vec<f64>>,
    queries: &BTreeMap<String, Vec<f64>>,
) -> Option<Rankings> {
    let recorded_documents: BTreeMap<String, Vec<f64>> = recording
        .documents
        .iter()
        .filter_map(|d| Some((d.id.clone(), d.recorded.values().ok()?)))
        .collect();
    let (mut mixed, mut fresh, mut taus) = (Vec::new(), Vec::new(), Vec::new());
    let (mut top_then, mut top_now) = (Vec::new(), Vec::new());
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for query in &recording.queries {
        let Some(vector) = queries.get(&query.id) else {
            continue;
        };
        let recorded: Vec<&str> = query.top.iter().map(|(id, _)| id.as_str()).collect();
        let same_width = recorded_documents
            .values()
            .next()
            .is_some_and(|d| d.len() == vector.len());
        let mixed_ranking = if same_width {
            ranked(vector, &recorded_documents)
        } else {
            Vec::new()
        };
        let fresh_ranking = ranked(vector, documents);
        let (mixed_ids, fresh_ids) = (ids_of(&mixed_ranking), ids_of(&fresh_ranking));
        if same_width {
            mixed.push(overlap(&mixed_ids, &recorded));
        }
        fresh.push(overlap(&fresh_ids, &recorded));
        let fresh_scores: BTreeMap<&str, f64> = fresh_ranking.iter().copied().collect();
        let (then, now): (Vec<f64>, Vec<f64>) = query
            .top
            .iter()
            .take(K)
            .filter_map(|(id, score)| Some((*score, *fresh_scores.get(id.as_str())?)))
            .unzip();
        if then.len() >= 2 {
            taus.push(kendall_tau_b(&then, &now));
        }
        top_then.extend(query.top.first().map(|(_, s)| *s));
        top_now.extend(fresh_ranking.first().map(|(_, s)| *s));
        if !query.relevant.is_empty() {
            before.push(metrics(&recorded, &query.relevant));
            after.push(metrics(&fresh_ids, &query.relevant));
        }
    }
    let n = fresh.len();
    if n == 0 {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    Some(Rankings {
        queries: n,
        mixed_overlap: (!mixed.is_empty()).then(|| mean(&mixed)),
        fresh_overlap: mean(&fresh),
        fresh_tau: (!taus.is_empty()).then(|| mean(&taus)),
        top_score_recorded: top_score(top_then),
        top_score_now: top_score(top_now),
        quality: quality(&before, &after),
    })
}

/// Labelled quality before and after, gated on the interval of the difference.
fn quality(before: &[Metrics], after: &[Metrics]) -> Option<Quality> {
    if before.is_empty() {
        return None;
    }
    let deltas: Vec<f64> = before
        .iter()
        .zip(after)
        .map(|(b, a)| a.ndcg_10 - b.ndcg_10)
        .collect();
    let interval = bootstrap(&deltas);
    let gate = QualityGate::of(before.len(), interval);
    Some(Quality {
        queries: before.len(),
        recorded: mean_metrics(before),
        fresh: mean_metrics(after),
        ndcg_delta: deltas.iter().sum::<f64>() / deltas.len() as f64,
        interval,
        gate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndcg_recall_and_mrr_follow_their_definitions() {
        let relevant = vec!["a".to_owned(), "b".to_owned()];
        let perfect = metrics(&["a", "b", "c"], &relevant);
        assert!((perfect.ndcg_10 - 1.0).abs() < 1e-12);
        assert_eq!((perfect.recall_10, perfect.mrr_10), (1.0, 1.0));
        let second = metrics(&["c", "a", "d"], &relevant);
        assert_eq!((second.recall_10, second.mrr_10), (0.5, 0.5));
        let expected = (1.0 / 3f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((second.ndcg_10 - expected).abs() < 1e-12);
    }

    #[test]
    fn the_bootstrap_interval_holds_the_mean_and_is_repeatable() {
        let deltas: Vec<f64> = (0..120)
            .map(|i| if i % 3 == 0 { -0.2 } else { 0.05 })
            .collect();
        let (low, high) = bootstrap(&deltas);
        let mean = deltas.iter().sum::<f64>() / 120.0;
        assert!(low < mean && mean < high, "{low} {mean} {high}");
        assert_eq!(bootstrap(&deltas), (low, high));
        let worse = vec![-0.3; 120];
        assert!(bootstrap(&worse).1 < 0.0);
    }

    #[test]
    fn few_queries_are_not_gated_and_a_clear_drop_is_lower() {
        let good = Metrics {
            ndcg_10: 1.0,
            recall_10: 1.0,
            recall_100: 1.0,
            mrr_10: 1.0,
        };
        let bad = Metrics {
            ndcg_10: 0.2,
            recall_10: 0.2,
            recall_100: 0.5,
            mrr_10: 0.2,
        };
        let few = quality(&[good; 14], &[bad; 14]).unwrap();
        assert_eq!(few.gate, QualityGate::TooFewQueries);
        let many = quality(&[good; 150], &[bad; 150]).unwrap();
        assert_eq!(many.gate, QualityGate::Lower);
        let same = quality(&[good; 150], &[good; 150]).unwrap();
        assert_eq!(same.gate, QualityGate::NotLower);
    }

    /// The interval accounts for the number of queries: 40 judged queries whose
    /// interval lies below zero rank worse, and one inside the margin ranks as well;
    /// only an interval across the margin and zero cannot tell.
    #[test]
    fn forty_queries_gate_on_their_interval() {
        assert_eq!(QualityGate::of(40, (-0.376, -0.135)), QualityGate::Lower);
        assert_eq!(QualityGate::of(40, (-0.043, 0.045)), QualityGate::NotLower);
        assert_eq!(QualityGate::of(40, (0.01, 0.08)), QualityGate::NotLower);
        assert_eq!(QualityGate::of(40, (-0.12, 0.03)), QualityGate::Undecided);
        assert_eq!(
            QualityGate::of(19, (-0.3, -0.2)),
            QualityGate::TooFewQueries
        );
    }
}
