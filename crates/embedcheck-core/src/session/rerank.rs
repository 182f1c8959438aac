//! The rerank contract's canonical requests, and where the server serves it.
//!
//! Every rerank clause sends through these builders, so that two clauses asking the
//! same question send the same bytes and the session cache answers the second. The
//! route is found once ([`route`]): the portable request is sent to `/v1/rerank`,
//! `/rerank` and `/v2/rerank`, and the clauses use the first that answers 200 (else the
//! first that is served at all). A server serving none is "not offered": every rerank
//! clause skips, nothing fails.

use super::connection::{ProbeError, Session};
use super::facts::{RerankRoutes, RouteAnswer};
use crate::http::probe::Resource;
use crate::http::{Body, Probe, Reply, RerankRoute};
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) use crate::reference::{RERANK_DOCUMENTS as DOCUMENTS, RERANK_QUERY as QUERY};

/// Which of [`DOCUMENTS`] answers [`QUERY`].
pub(crate) const ANSWER: usize = 1;

/// A rerank body: the model, the query, the documents and `extra` fields, in the
/// portable form every Cohere-shaped server takes. The model is `--rerank-model`, else
/// the run's, and none where requests carry no model.
pub(crate) fn body(s: &Session, query: &str, documents: Value, extra: &[(&str, Value)]) -> Value {
    let mut body = json!({"query": query, "documents": documents});
    let model = s
        .settings()
        .rerank_model
        .clone()
        .unwrap_or_else(|| s.model().to_owned());
    if !model.is_empty() {
        body["model"] = json!(model);
    }
    for (name, value) in extra {
        body[*name] = value.clone();
    }
    body
}

/// A valid rerank request to the route the clauses use.
pub(crate) fn probe(route: RerankRoute, body: Value) -> Probe {
    Probe::rerank(route, body)
}

/// A rerank request the contract does not allow (a client mistake), with why.
pub(crate) fn invalid(route: RerankRoute, body: Body, why: impl Into<String>) -> Probe {
    Probe::invalid(body, why).at(Resource::Rerank(route))
}

/// A rerank request a server may refuse or answer, with why.
pub(crate) fn either(route: RerankRoute, body: Value, why: impl Into<String>) -> Probe {
    Probe::either(body, why).at(Resource::Rerank(route))
}

/// The portable request: the canonical query and documents.
pub(crate) fn plain_body(s: &Session) -> Value {
    body(s, QUERY, json!(DOCUMENTS), &[])
}

/// The route the rerank clauses use, found once (the `routes` fact); `None` when no
/// route serves rerank.
pub(crate) async fn route(s: &Session) -> Result<Option<RerankRoute>, ProbeError> {
    if let Some(known) = &s.facts().rerank.routes {
        return Ok(known.value.used);
    }
    let mut tried = Vec::new();
    for route in RerankRoute::ALL {
        let reply = s.send(probe(route, plain_body(s))).await?;
        tried.push(RouteAnswer {
            route,
            status: reply.status,
            served: serves(&reply),
        });
    }
    let used = tried
        .iter()
        .find(|a| a.status == 200)
        .or_else(|| tried.iter().find(|a| a.served))
        .map(|a| a.route);
    let fact = s.searched(RerankRoutes { tried, used }, RerankRoute::ALL.len() as u32);
    s.learn(|facts| facts.rerank.routes = Some(fact));
    Ok(used)
}

/// The portable request's answer on the route the clauses use.
pub(crate) async fn plain(s: &Session) -> Result<Option<(RerankRoute, Arc<Reply>)>, ProbeError> {
    let Some(route) = route(s).await? else {
        return Ok(None);
    };
    Ok(Some((route, s.send(probe(route, plain_body(s))).await?)))
}

/// What the route search got at each route, with what the server said where it
/// refused to rerank (a 404 says nothing more than its status), so the user reads
/// the fix the server names:
/// `/v1/rerank 501, /rerank 501, /v2/rerank 404; the server says: "This server does
/// not support reranking. Start it with `--reranking`"`.
pub(crate) fn tried(s: &Session) -> String {
    let Some(routes) = s.facts().rerank.routes else {
        return "not tried".to_owned();
    };
    let statuses = routes.value.statuses();
    let mut said: Vec<String> = Vec::new();
    for logged in s.log() {
        let rerank = logged.is_rerank();
        let refusal = logged
            .reply
            .filter(|r| rerank && !serves(r) && !matches!(r.status, 404 | 405))
            .and_then(|r| r.error_message());
        if let Some(message) = refusal.filter(|m| !said.contains(m)) {
            said.push(message);
        }
    }
    let said: Vec<String> = said
        .iter()
        .map(|m| format!("{:?}", crate::http::excerpt::cut(m, 160)))
        .collect();
    match said.as_slice() {
        [] => statuses,
        _ => format!("{statuses}; the server says: {}", said.join(", ")),
    }
}

/// Words of a refusal that says the route exists but the model cannot rerank
/// (Infinity and vLLM serving an embedding model, llama.cpp without `--reranking`).
const CANNOT_RERANK: [&str; 5] = [
    "not support",
    "not a re-rank",
    "not a rerank",
    "--reranking",
    "no rerank",
];

/// Whether an answer shows that rerank is served at its route.
pub(crate) fn serves(reply: &Reply) -> bool {
    if matches!(reply.status, 404 | 405 | 501) {
        return false;
    }
    if reply.is_client_error() || reply.is_server_error() {
        let text = reply.error_text();
        return !CANNOT_RERANK.iter().any(|w| text.contains(w));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_served_unless_its_answer_says_otherwise() {
        let answer = |status, body| Reply::json_for_test(status, body);
        assert!(serves(&answer(200, json!({"results": []}))));
        assert!(serves(&answer(422, json!({"detail": "field required"}))));
        assert!(!serves(&answer(404, json!({"detail": "Not Found"}))));
        assert!(!serves(&answer(
            501,
            json!({"error": {"message": "This server does not support reranking. Start it with `--reranking`"}})
        )));
        assert!(!serves(&answer(
            400,
            json!({"error": {"message": "The model does not support Rerank (Score) API"}})
        )));
    }
}
