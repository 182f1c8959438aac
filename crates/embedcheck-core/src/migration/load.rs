//! The study's load on the servers compared, once their audits and the corpus are
//! done: whether the run's budgets leave room for it, which corpus batches it sends
//! (those every measured server embedded whole), and the load generator's view of each
//! server; `latency.rs` measures it.

use super::Plan;
use super::corpus::{self, Corpus};
use super::latency::{self, Latency, LoadPlan, Loaded};
use super::vectors::Embedded;
use crate::contracts::embeddings::requests;
use crate::session::Session;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Runs the load when both budgets leave room for it.
pub(super) async fn measure_load(
    (b, c): (&Session, &Session),
    (b_label, c_label): (&str, &str),
    plan: &Plan,
    load: LoadPlan,
    documents: &(Embedded, Embedded),
) -> (Option<Latency>, Option<String>) {
    let room = room_for_load(b, &documents.0, &plan.corpus, load).and(room_for_load(
        c,
        &documents.1,
        &plan.corpus,
        load,
    ));
    if let Err(why) = room {
        return (None, Some(why));
    }
    let answered = answered_by_both(&plan.corpus, documents);
    if answered.is_empty() {
        let why = "not measured: no full batch of the corpus was answered 200 by both servers";
        return (None, Some(why.to_owned()));
    }
    let loaded = |s: &Session, label: &str| {
        Arc::new(loaded(s, label, &plan.corpus, &answered, plan.timeout))
    };
    let latency = latency::measure_pair(loaded(b, b_label), loaded(c, c_label), load).await;
    (Some(latency), None)
}

/// The load must fit in what the run's budgets have left, by the corpus batches'
/// own token counts.
fn room_for_load(
    s: &Session,
    documents: &Embedded,
    corpus: &Corpus,
    load: LoadPlan,
) -> Result<(), String> {
    // The server's counts where they are tokens, else the suite's own estimate: a
    // server counting characters must not spend a budget the user never set.
    let counted: Vec<u64> = if s.facts().usage_counts_tokens() {
        documents.batch_tokens.iter().flatten().copied().collect()
    } else {
        corpus.batches().map(|batch| estimated(s, batch)).collect()
    };
    let per_request = counted.iter().sum::<u64>() / counted.len().max(1) as u64;
    room_for_requests_of(s, per_request, load)
}

/// The load of `load` in requests of about `per_request` tokens each fits in what
/// the run's budgets have left.
fn room_for_requests_of(s: &Session, per_request: u64, load: LoadPlan) -> Result<(), String> {
    let settings = s.settings();
    let requests = load.requests_per_server();
    if s.requests_sent() + requests > settings.max_requests {
        return Err(format!(
            "not measured: {requests} load requests would exceed --max-requests {} ({} already sent)",
            settings.max_requests,
            s.requests_sent()
        ));
    }
    let tokens = per_request * requests;
    if s.tokens_used() + tokens > settings.max_tokens {
        return Err(format!(
            "not measured: about {tokens} load tokens would exceed --max-tokens {} ({} already used)",
            settings.max_tokens,
            s.tokens_used()
        ));
    }
    Ok(())
}

/// One server under the study's load on its own, sending the corpus batches
/// `answered` (indices of [`Corpus::batches`]): a matrix measures its servers one after
/// another, each alone on the machine, on the batches every one of them embedded.
pub async fn load_alone(
    s: &Session,
    label: &str,
    corpus: &Corpus,
    answered: &[usize],
    timeout: Duration,
    load: LoadPlan,
) -> Result<latency::ServerLatency, String> {
    if answered.is_empty() {
        return Err(
            "not measured: no full batch of the corpus was embedded by every server".into(),
        );
    }
    let sent: Vec<u64> = corpus
        .batches()
        .enumerate()
        .filter(|(i, _)| answered.contains(i))
        .map(|(_, batch)| estimated(s, batch))
        .collect();
    room_for_requests_of(s, sent.iter().sum::<u64>() / sent.len() as u64, load)?;
    let server = Arc::new(loaded(s, label, corpus, answered, timeout));
    Ok(latency::measure_one(server, load).await)
}

/// The suite's own token estimate of one corpus batch.
fn estimated(s: &Session, batch: &[corpus::Document]) -> u64 {
    let texts: Vec<&str> = batch.iter().map(|d| d.text.as_str()).collect();
    requests::probe(requests::body(s, json!(texts), &[])).estimated_tokens()
}

/// The full corpus batches both servers embedded: a load of requests one server
/// refuses would time refusals against real work, so only these are sent.
fn answered_by_both(corpus: &Corpus, (b, c): &(Embedded, Embedded)) -> Vec<usize> {
    let mut start = 0;
    let mut answered = Vec::new();
    for (i, batch) in corpus.batches().enumerate() {
        let range = start..start + batch.len();
        start += batch.len();
        let embedded = |e: &Embedded| {
            e.vectors
                .get(range.clone())
                .is_some_and(|v| v.iter().all(Option::is_some))
        };
        if batch.len() == corpus::BATCH_SIZE && embedded(b) && embedded(c) {
            answered.push(i);
        }
    }
    answered
}

/// The load generator's view of a session's server: its URL, key and the corpus's
/// full batches as request bodies (a short last batch would lower docs per request).
fn loaded(
    s: &Session,
    label: &str,
    corpus: &Corpus,
    answered: &[usize],
    timeout: Duration,
) -> Loaded {
    let transport = s.transport();
    let bodies = corpus
        .batches()
        .enumerate()
        .filter(|(i, _)| answered.contains(i))
        .map(|(_, batch)| {
            let texts: Vec<&str> = batch.iter().map(|d| d.text.as_str()).collect();
            let body = requests::body(s, json!(texts), &[]);
            transport
                .access()
                .fields
                .rewrite(&body)
                .to_string()
                .into_bytes()
        })
        .collect();
    Loaded::new(
        label.to_owned(),
        transport.target().url(&requests::ROUTE),
        transport.access().clone(),
        timeout,
        bodies,
        corpus::BATCH_SIZE,
    )
}
