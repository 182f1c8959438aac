//! The rerank contract's canonical requests, and where the server serves it.
//!
//! Every rerank clause sends through these builders, so that two clauses asking the
//! same question send the same bytes and the session cache answers the second. The
//! route is found once ([`route`]): the portable request is sent to `/v1/rerank`,
//! `/rerank` and `/v2/rerank`, and the clauses use the first that answers 200 (else the
//! first that is served at all). A server serving none is "not offered": every rerank
//! clause skips, nothing fails.

use crate::contracts::contract::Presence;
use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::{RerankRoutes, RouteAnswer};
use crate::contracts::rerank::reply::{RerankDialect, RerankShape};
use crate::contracts::rerank::{learn, learned};
use crate::http::excerpt::{self, array_len};
use crate::http::{Body, Probe, Reply};
use crate::session::{ProbeError, Session};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub(crate) use crate::contracts::rerank::reference::{
    RERANK_DOCUMENTS as DOCUMENTS, RERANK_QUERY as QUERY,
};

/// Which of [`DOCUMENTS`] answers [`QUERY`].
pub(crate) const ANSWER: usize = 1;

/// A rerank body: the model, the query, the documents and `extra` fields, in the
/// portable form every Cohere-shaped server takes. The model is `--rerank-model`, else
/// the run's, and none where requests carry no model.
pub(crate) fn body(s: &Session, query: &str, documents: Value, extra: &[(&str, Value)]) -> Value {
    let mut body = json!({"query": query, "documents": documents});
    let model = model(s);
    if !model.is_empty() {
        body["model"] = json!(model);
    }
    for (name, value) in extra {
        body[*name] = value.clone();
    }
    body
}

/// The model rerank requests name: `--rerank-model`, else the run's.
pub(crate) fn model(s: &Session) -> String {
    super::settings::of(s)
        .model
        .unwrap_or_else(|| s.model().to_owned())
}

/// A rerank request said in the dialect the server's rerank route speaks, once the
/// route search found it (the clauses write Cohere's); one with no meaning there is
/// not sent. The rerank contract's [`crate::session::Dialect`].
pub(crate) fn in_dialect(s: &Session, mut probe: Probe) -> Result<Probe, ProbeError> {
    if probe
        .resource
        .route()
        .is_none_or(|r| r.contract != crate::contracts::rerank::ID)
    {
        return Ok(probe);
    }
    let dialect = dialect(s);
    if dialect == RerankDialect::Cohere {
        return Ok(probe);
    }
    if let Body::Json(body) = &probe.body {
        let said = dialect
            .translate(body, &model(s))
            .map_err(ProbeError::NotInDialect)?;
        probe.body = Body::Json(said);
    }
    Ok(probe)
}

/// A valid rerank request to the route the clauses use.
pub(crate) fn probe(route: RerankRoute, body: Value) -> Probe {
    Probe::post(route.route(), body)
}

/// A rerank request the contract does not allow (a client mistake), with why.
pub(crate) fn invalid(route: RerankRoute, body: Body, why: impl Into<String>) -> Probe {
    Probe::invalid(route.route(), body, why)
}

/// A rerank request a server may refuse or answer, with why.
pub(crate) fn either(route: RerankRoute, body: Value, why: impl Into<String>) -> Probe {
    Probe::either(route.route(), body, why)
}

/// The portable request: the canonical query and documents.
pub(crate) fn plain_body(s: &Session) -> Value {
    body(s, QUERY, json!(DOCUMENTS), &[])
}

/// The route the rerank clauses use, found once (the `routes` fact); `None` when no
/// route serves rerank.
pub(crate) async fn route(s: &Session) -> Result<Option<RerankRoute>, ProbeError> {
    if let Some(known) = &learned(s).routes {
        return Ok(known.value.used);
    }
    let before = s.requests_sent();
    let mut tried = Vec::new();
    for route in RerankRoute::ALL {
        let reply = s.send(probe(route, plain_body(s))).await?;
        let (served, answered_in) = served_at(s, route, &reply).await?;
        tried.push(RouteAnswer {
            route,
            status: reply.status,
            served,
            answered_in,
        });
    }
    if !tried.iter().any(|a| a.answered_in.is_some()) {
        tried.push(ranking(s).await?);
    }
    let answered = |dialect| tried.iter().find(|a| a.answered_in == Some(dialect));
    let used = answered(RerankDialect::Cohere)
        .or_else(|| answered(RerankDialect::Voyage))
        .or_else(|| answered(RerankDialect::Tei))
        .or_else(|| answered(RerankDialect::Nim))
        .or_else(|| tried.iter().find(|a| a.served));
    let dialect = used
        .and_then(|a| a.answered_in)
        .unwrap_or(RerankDialect::Cohere);
    let used = used.map(|a| a.route);
    let requests = (s.requests_sent() - before) as u32;
    let fact = s.searched(
        RerankRoutes {
            tried,
            used,
            dialect,
        },
        requests,
    );
    learn(s, |facts| facts.routes = Some(fact));
    Ok(used)
}

/// Why the route search sends TEI's dialect to a route that refuses the portable body.
const IN_TEI_DIALECT: &str = "TEI's rerank dialect ({query, texts}): a route that refuses the Cohere body alike whatever it carries is asked in TEI's before it is called not served";

/// Whether `route` serves rerank, from the pattern of its answers, in no language:
/// absent (404, 405, 501) is not; an answer that is no refusal is. A refusal of the
/// portable request says nothing yet: the route serves rerank when another content
/// is refused otherwise (it reads what it is sent) or when TEI's dialect is not
/// refused (the route parses another shape). A route that refuses both the portable
/// request, whatever it carries, and TEI's dialect does not serve rerank: TEI with an
/// embedding model (422 to the Cohere body, 424 to its own), Infinity and llama.cpp
/// with a model that does not rerank.
///
/// Returns whether it is served, and the dialect it answered 200 in.
async fn served_at(
    s: &Session,
    route: RerankRoute,
    first: &Reply,
) -> Result<(bool, Option<RerankDialect>), ProbeError> {
    if first.is_absent() {
        return Ok((false, None));
    }
    if first.status == 200 {
        // Voyage reads Cohere's request and answers under data[]: its own dialect
        // (top_k for top_n) from there on.
        let voyage = first.rerank().is_ok_and(|a| a.shape == RerankShape::Data);
        let dialect = if voyage {
            RerankDialect::Voyage
        } else {
            RerankDialect::Cohere
        };
        return Ok((true, Some(dialect)));
    }
    if !first.is_refusal() {
        // Served, but not in Cohere's dialect: a server may answer a body it cannot
        // parse with a 5xx as well as a 4xx, so TEI's is tried too.
        let tei = s.send(either(route, tei_body(), IN_TEI_DIALECT)).await?;
        return Ok((true, answered_in_tei(&tei)));
    }
    let other = s.send(probe(route, other_body(s))).await?;
    if !first.refused_alike(&other) {
        return Ok((true, None));
    }
    let tei = s.send(either(route, tei_body(), IN_TEI_DIALECT)).await?;
    Ok((!tei.is_refusal() && !tei.is_absent(), answered_in_tei(&tei)))
}

/// Why the route search asks NIM's route in NIM's dialect.
const IN_NIM_DIALECT: &str = "NVIDIA NIM's rerank dialect ({query: {text}, passages: [{text}]}) at /v1/ranking, asked where no route answered Cohere's or TEI's";

/// NIM's route, asked in NIM's dialect only (a route of its own, which no other
/// dialect's client calls): served when it answers anything but absent or a refusal.
async fn ranking(s: &Session) -> Result<RouteAnswer, ProbeError> {
    let route = RerankRoute::Ranking;
    let body = RerankDialect::Nim
        .translate(&plain_body(s), &model(s))
        .expect("the portable request has a meaning in NIM's dialect");
    let reply = s
        .send(either(route, body, IN_NIM_DIALECT).verbatim())
        .await?;
    let ranked = reply.status == 200 && reply.rerank().is_ok();
    Ok(RouteAnswer {
        route,
        status: reply.status,
        served: !reply.is_absent() && !reply.is_refusal(),
        answered_in: ranked.then_some(RerankDialect::Nim),
    })
}

/// TEI's dialect, when TEI's request got a rerank answer.
fn answered_in_tei(tei: &Reply) -> Option<RerankDialect> {
    (tei.status == 200 && tei.rerank().is_ok()).then_some(RerankDialect::Tei)
}

/// The dialect the rerank clauses speak, once the route search found it (the
/// `routes` fact); Cohere's before.
pub(crate) fn dialect(s: &Session) -> RerankDialect {
    learned(s)
        .routes
        .as_ref()
        .map_or(RerankDialect::Cohere, |f| f.value.dialect)
}

/// A portable request with another query and documents than [`plain_body`].
fn other_body(s: &Session) -> Value {
    body(
        s,
        "Which city is the capital of Italy?",
        json!(["Rome is the capital of Italy.", "Lyon is a city in France."]),
        &[],
    )
}

/// The canonical query and documents in TEI's dialect, as TEI's own clients send it.
fn tei_body() -> Value {
    json!({"query": QUERY, "texts": DOCUMENTS})
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
    let Some(routes) = learned(s).routes else {
        return "not tried".to_owned();
    };
    let statuses = routes.value.statuses();
    let mut said: Vec<String> = Vec::new();
    for logged in s.log() {
        let rerank = logged.contract() == Some(crate::contracts::rerank::ID);
        let refusal = logged
            .reply
            .filter(|r| rerank && !r.is_success() && !matches!(r.status, 404 | 405))
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

/// A short description of a rerank request for the migration audit's side-by-side
/// view, when `path` is a rerank route (NIM's `/v1/ranking` among them): `rerank at
/// /rerank: 5 documents, query "What is the capital…"`, then every other field but the
/// run's model.
pub(crate) fn describe(path: &str, fields: &Map<String, Value>, model: &str) -> Option<String> {
    let rerank_route = path.ends_with("/rerank") || path.ends_with(RerankRoute::Ranking.path());
    rerank_route.then(|| format!("rerank at {path}: {}", describe_fields(fields, model)))
}

fn describe_fields(fields: &Map<String, Value>, model: &str) -> String {
    let mut parts = vec![match fields.get("documents") {
        Some(Value::Array(documents)) => format!("{} documents", array_len(documents)),
        Some(other) => format!("documents: {}", excerpt::cut(&other.to_string(), 40)),
        None => "no documents".to_owned(),
    }];
    match fields.get("query") {
        Some(Value::String(q)) => parts.push(format!("query \"{}\"", excerpt::cut(q, 32))),
        Some(other) => parts.push(format!("query: {}", excerpt::cut(&other.to_string(), 40))),
        None => parts.push("no query".to_owned()),
    }
    for (name, value) in fields {
        let shown = match name.as_str() {
            "documents" | "query" => false,
            "model" => value.as_str() != Some(model),
            _ => true,
        };
        if shown {
            parts.push(format!("{name}: {}", excerpt::cut(&value.to_string(), 40)));
        }
    }
    parts.join(", ")
}

/// Whether the server reranks, asked up front only where the embeddings route does
/// not answer: a route serving the portable request. Its model is rerank's own
/// (`--rerank-model`), so it says nothing of the run's.
pub(crate) async fn presence(s: &Session) -> Presence {
    match route(s).await {
        Ok(Some(_)) => Presence::Answered {
            served_the_model: None,
        },
        Ok(None) => Presence::Absent(format!(
            "no rerank route serves the portable request ({}): check --endpoint",
            tried(s)
        )),
        Err(e) => Presence::Absent(format!("the rerank routes: {e}")),
    }
}
