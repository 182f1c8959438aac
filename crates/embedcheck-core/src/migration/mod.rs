//! Migration audit: `--endpoint NEW --baseline OLD` reproduces the migration study
//! for any pair of servers, and answers the questions it left open.
//!
//! Both servers get the normal clause run (same seed, so the same requests), then,
//! through each server's own session (so budgets and the cache apply):
//! - [`contract`]: what an existing client relies on, read from the baseline's
//!   facts, with the old client's requests replayed to the candidate;
//! - [`vectors`]: the fixture corpus ([`corpus`]) embedded 8 documents per request
//!   on both, compared per document;
//! - [`retrieval`]: the fixture queries ranked under each server, and query vectors
//!   with and without the instruction;
//! - [`behaviour`]: every logged request side by side, every clause's verdict for both;
//! - [`latency`] (only with `--load`): the study's load, alternating servers;
//! - [`remediation`]: the client-side changes the findings imply;
//! - [`fixed`]: the corpus and queries sent again with those changes applied.
//!
//! A migration is two audits plus a comparison, each with its own counts: the audits'
//! counters stop where their clause runs end, and [`Migration::requests`] and
//! [`Migration::tokens`] count what the comparison sent on top.

pub(crate) mod behaviour;
pub mod contract;
pub mod corpus;
pub mod fingerprint;
pub mod fixed;
pub mod latency;
mod load;
pub mod recording;
pub(crate) mod remediation;
pub mod replay;
pub mod retrieval;
pub mod sample;
pub(crate) mod vectors;

use crate::audit;
use crate::audit::ServerAudit;
use crate::catalogue::Clause;
use crate::contracts::embeddings::facts::EmbeddingsFacts;
use crate::http::Transport;
use crate::session::{Interrupt, Session, Settings};
use behaviour::BehaviourDiff;
use contract::Expectation;
use corpus::{Corpus, CorpusSummary};
use fixed::FixesApplied;
use latency::{Latency, LoadPlan};
use recording::Recording;
use remediation::Remedy;
use replay::Replay;
use retrieval::{Instruction, QueryVectors, Retrieval};
use serde::Serialize;
use std::time::{Duration, Instant};
use vectors::{Embedded, VectorEquivalence};

pub use load::load_alone;

/// One server of the pair, before its audit.
pub struct Server {
    pub transport: Transport,
    pub settings: Settings,
    pub label: String,
}

/// What the migration audit does besides the clause runs.
#[derive(Clone, Debug)]
pub struct Plan {
    pub corpus: Corpus,
    pub instruction: Instruction,
    /// k of top-k and overlap@k.
    pub top_k: usize,
    /// The load to measure, with `--load`.
    pub load: Option<LoadPlan>,
    /// Per-request timeout of the load generator.
    pub timeout: Duration,
}

/// A count for each server of the pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub baseline: u64,
    pub candidate: u64,
}

/// The comparison of two audited servers: the `migration` object of a report.
#[derive(Clone, Debug, Serialize)]
pub struct Migration {
    /// Requests the comparison sent to each server after its clause run (the load
    /// counts its own).
    pub requests: Pair,
    /// Tokens the comparison spent on each server after its clause run.
    pub tokens: Pair,
    /// Wall time of the whole pair: both audits, the comparison and the load.
    pub wall_seconds: f64,
    pub corpus: CorpusSummary,
    pub behaviour_diff: BehaviourDiff,
    /// What the existing client relies on, and whether the candidate keeps it.
    pub contract: Vec<Expectation>,
    pub vector_equivalence: VectorEquivalence,
    pub retrieval: Retrieval,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// Why `--load` was asked for but not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_skipped: Option<String>,
    pub remediation: Vec<Remedy>,
    /// The re-run with the remediation applied on the client side; absent when
    /// nothing needed fixing or the servers could not be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixes_applied: Option<FixesApplied>,
}

impl Migration {
    /// What the existing client relies on that the candidate breaks, in topic order.
    pub fn broken_reliances(&self) -> Vec<&str> {
        self.contract
            .iter()
            .filter(|e| e.judgement == contract::Judgement::Broken)
            .filter_map(|e| e.relies_on.as_deref())
            .collect()
    }

    /// Why the report has no latency: `--load` was not given, or what stopped it.
    pub fn latency_not_measured(&self) -> &str {
        self.latency_skipped
            .as_deref()
            .unwrap_or("not measured; pass --load to measure it")
            .trim_end_matches('.')
    }
}

/// Both audits and their comparison.
pub struct PairAudit {
    pub baseline: ServerAudit,
    pub candidate: ServerAudit,
    pub migration: Migration,
    /// The corpus as the baseline embeds it, recorded after its audit: what
    /// `--record-baseline` writes beside `--baseline URL`, so a later run can replay it
    /// with the old server gone. `Err` says why nothing was recorded.
    pub recording: Result<Recording, String>,
    /// The candidate replayed against that recording: the comparison `--baseline DIR`
    /// makes, so a live and a recorded baseline give the same verdict.
    pub replay: Option<Replay>,
}

/// Audits both servers and compares them.
pub async fn audit_pair(
    baseline: Server,
    candidate: Server,
    plan: &Plan,
    selected: &[&Clause],
    interrupt: Interrupt,
) -> PairAudit {
    let started = Instant::now();
    let mut b = Session::new(baseline.transport, baseline.settings, interrupt.clone());
    let mut c = Session::new(candidate.transport, candidate.settings, interrupt);
    let (b_audit, c_audit) = tokio::join!(
        audit::audit_session(&mut b, baseline.label, selected),
        audit::audit_session(&mut c, candidate.label, selected)
    );
    let unreachable = b_audit.aborted.clone().or_else(|| c_audit.aborted.clone());
    let (b_embeddings, c_embeddings) = (
        EmbeddingsFacts::of(&b_audit.facts),
        EmbeddingsFacts::of(&c_audit.facts),
    );
    let judged = vectors::Judged {
        baseline: &b_audit.facts,
        candidate: &c_audit.facts,
        baseline_embeddings: &b_embeddings,
        candidate_embeddings: &c_embeddings,
    };
    // The corpus goes only to a baseline that embeds: a speech-only pair compares its
    // speech and nothing else.
    let no_corpus = unreachable.clone().or_else(|| {
        b_audit
            .facts
            .not_offered(crate::contracts::embeddings::ID)
            .map(|why| format!("the baseline offers no embeddings ({why})"))
    });
    let work = match &no_corpus {
        None => compare(&b, &c, plan, judged).await,
        Some(why) => Work::unavailable(plan, why, judged),
    };
    let behaviour_diff = behaviour::diff(&b, &c, &b_audit, &c_audit);
    let contract = match &unreachable {
        None => {
            let b_side = contract::Side {
                session: &b,
                facts: &b_audit.facts,
                embeddings: &b_embeddings,
            };
            let c_side = contract::Side {
                session: &c,
                facts: &c_audit.facts,
                embeddings: &c_embeddings,
            };
            contract::judge(b_side, c_side, &behaviour_diff).await
        }
        Some(why) => contract::unavailable(why),
    };
    let (latency, latency_skipped) = match (plan.load, &no_corpus) {
        (Some(load), None) => {
            let labels = (b_audit.label.as_str(), c_audit.label.as_str());
            load::measure_load((&b, &c), labels, plan, load, &work.documents).await
        }
        (Some(_), Some(why)) => (None, Some(format!("not measured: {why}"))),
        (None, _) => (None, None),
    };
    let remediation = remediation::derive(&contract, &work.equivalence, &work.retrieval);
    let fixes_applied = match &no_corpus {
        None => {
            let findings = fixed::Findings {
                corpus: &plan.corpus,
                documents: &work.documents,
                queries: &work.queries,
                contract: &contract,
                judged,
                k: plan.top_k,
            };
            fixed::run(&b, &c, findings).await
        }
        Some(_) => None,
    };
    let (recording, replay) = match &no_corpus {
        None => record_and_replay(&b, &c, plan, &b_audit.label).await,
        Some(why) => (Err(format!("not recorded: {why}")), None),
    };
    let requests = Pair {
        baseline: b.requests_sent() - b_audit.requests_sent,
        candidate: c.requests_sent() - c_audit.requests_sent,
    };
    let tokens = Pair {
        baseline: b.tokens_used() - b_audit.tokens_used,
        candidate: c.tokens_used() - c_audit.tokens_used,
    };
    PairAudit {
        baseline: b_audit,
        candidate: c_audit,
        migration: Migration {
            requests,
            tokens,
            wall_seconds: started.elapsed().as_secs_f64(),
            corpus: plan.corpus.summary(),
            behaviour_diff,
            contract,
            vector_equivalence: work.equivalence,
            retrieval: work.retrieval,
            latency,
            latency_skipped,
            remediation,
            fixes_applied,
        },
        recording,
        replay,
    }
}

/// The corpus recorded from the baseline as `--record-baseline` records it, and the
/// candidate replayed against the recording as `--baseline DIR` replays it.
async fn record_and_replay(
    b: &Session,
    c: &Session,
    plan: &Plan,
    label: &str,
) -> (Result<Recording, String>, Option<Replay>) {
    match recording::record(b, &plan.corpus, &plan.instruction, label).await {
        Ok(recorded) => {
            let replayed = replay::replay(c, &recorded).await;
            (Ok(recorded), Some(replayed))
        }
        Err(why) => (Err(why.to_string()), None),
    }
}

/// The corpus and query part of the comparison, before it is judged.
struct Work {
    documents: (Embedded, Embedded),
    queries: QueryVectors,
    equivalence: VectorEquivalence,
    retrieval: Retrieval,
}

impl Work {
    /// Nothing could be probed: every section says why instead of spending requests
    /// (and timeouts) on a server that did not answer its audit.
    fn unavailable(plan: &Plan, why: &str, judged: vectors::Judged<'_>) -> Work {
        let none = || Embedded {
            vectors: vec![None; plan.corpus.documents.len()],
            batch_tokens: vec![None; plan.corpus.batches().count()],
            failures: vec![format!("not embedded: {why}")],
        };
        let documents = (none(), none());
        let missing = || Err(format!("not embedded: {why}"));
        let queries = QueryVectors {
            baseline_instructed: missing(),
            baseline_bare: missing(),
            candidate_bare: missing(),
            candidate_prefixed: missing(),
        };
        Work {
            equivalence: vectors::equivalence(
                &plan.corpus,
                (&documents.0, &documents.1),
                Vec::new(),
                judged,
            ),
            retrieval: retrieval::analyse(
                &plan.corpus,
                (&documents.0, &documents.1),
                &queries,
                &plan.instruction,
                judged.baseline_applied_instruction(),
                plan.top_k,
            ),
            documents,
            queries,
        }
    }
}

async fn compare(b: &Session, c: &Session, plan: &Plan, judged: vectors::Judged<'_>) -> Work {
    let documents = judged.document_fields();
    let (b_docs, c_docs) = tokio::join!(
        vectors::embed_documents(b, &plan.corpus, &documents),
        vectors::embed_documents(c, &plan.corpus, &documents)
    );
    let queries = retrieval::embed_queries(
        b,
        c,
        &plan.corpus,
        &plan.instruction,
        &judged.prefixed_query_fields(),
    )
    .await;
    let equivalence = vectors::compare(b, c, &plan.corpus, (&b_docs, &c_docs), judged).await;
    let retrieval = retrieval::analyse(
        &plan.corpus,
        (&b_docs, &c_docs),
        &queries,
        &plan.instruction,
        judged.baseline_applied_instruction(),
        plan.top_k,
    );
    Work {
        documents: (b_docs, c_docs),
        queries,
        equivalence,
        retrieval,
    }
}
