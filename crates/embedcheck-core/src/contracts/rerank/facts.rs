//! What the rerank side of an audit learns about a server: where and in which dialect
//! it reranks, its scores' scale and noise, and its policies where documented contracts
//! differ. The session keeps them among each contract's facts.

use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::reply::{RerankDialect, RerankShape};
use crate::session::facts::{Fact, Facts, UnknownField};
use serde::Serialize;
use std::fmt;

/// How one rerank route answered the portable request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RouteAnswer {
    pub route: RerankRoute,
    pub status: u16,
    /// Whether the answer shows the route is served (anything but 404, 405, 501 or a
    /// refusal saying the model cannot rerank).
    pub served: bool,
    /// The dialect the route answered 200 in, if any: Cohere's portable request, else
    /// TEI's.
    pub answered_in: Option<RerankDialect>,
}

/// Where the server serves rerank: every route tried and the one the clauses use.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RerankRoutes {
    pub tried: Vec<RouteAnswer>,
    /// The first route answering 200 (in Cohere's dialect before TEI's), else the first
    /// served: `None` when rerank is not offered at all.
    pub used: Option<RerankRoute>,
    /// The dialect the clauses speak on the used route: the one it answered 200 in,
    /// Cohere's where it answered neither.
    pub dialect: RerankDialect,
}

impl RerankRoutes {
    /// Each route tried with its answer's status: `/v1/rerank 404, /rerank 200, …`.
    pub(crate) fn statuses(&self) -> String {
        let tried: Vec<String> = self
            .tried
            .iter()
            .map(|a| format!("{} {}", a.route.path(), a.status))
            .collect();
        tried.join(", ")
    }
}

/// What the server does with a rerank document over the model's limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", content = "status", rename_all = "snake_case")]
pub enum LongInputPolicy {
    /// Answered 200: truncated, or read whole.
    Scored,
    /// Refused with this 4xx.
    Refused(u16),
}

/// What the rerank side of an audit learned about the server.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RerankFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routes: Option<Fact<RerankRoutes>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Fact<RerankShape>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<Fact<ScoreScale>>,
    /// The largest difference of one score between identical requests, relative to the
    /// larger of 1 and the score (RRQ-003): what "the same score" is judged against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<Fact<f64>>,
    /// The order copies of one document came back in (RRQ-004).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tie_order: Option<Fact<Vec<usize>>>,
    /// What the server did with `top_k` (RRS-008).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<Fact<UnknownField>>,
    /// What the server did with a document over the model's limit (RRL-004).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_document: Option<Fact<LongInputPolicy>>,
    /// What the server did with `top_n: 0` (RRL-003).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_n_zero: Option<Fact<TopNZero>>,
    /// What the server did with a model name it does not serve (RRS-014).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_model: Option<Fact<UnknownModel>>,
}

/// How a server answers a rerank request naming a model it does not serve: servers
/// differ by design (vLLM answers 404 as OpenAI does, Infinity and llama-server serve
/// their one model whatever the name), so this is its policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownModel {
    Refused(u16),
    Served,
}

impl fmt::Display for UnknownModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownModel::Refused(status) => write!(f, "refused with {status}"),
            UnknownModel::Served => f.write_str("served by the model the server has"),
        }
    }
}

/// How a server reads `top_n: 0`: the documented contracts differ (Cohere's
/// `minimum: 1`, vLLM's "all", Dify's literal zero), so this is its policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TopNZero {
    Refused(u16),
    All,
    None,
    Some(usize),
}

impl fmt::Display for TopNZero {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopNZero::Refused(status) => write!(f, "refused with {status}"),
            TopNZero::All => f.write_str("read as all documents"),
            TopNZero::None => f.write_str("read literally: 200 with no results"),
            TopNZero::Some(n) => write!(f, "answered 200 with {n} results"),
        }
    }
}

impl RerankFacts {
    /// What the rerank side of an audit learned (nothing where its clauses did not run).
    pub(crate) fn of(facts: &Facts) -> RerankFacts {
        facts.contracts.get().cloned().unwrap_or_default()
    }

    /// Whether the rerank side learned nothing (the report then shows no `rerank`).
    pub(crate) fn is_empty(&self) -> bool {
        *self == RerankFacts::default()
    }
}

impl RerankFacts {
    /// Each fact as one line, under the names of the report's `observations`.
    pub(crate) fn observations(&self, put: &mut dyn FnMut(&str, Option<String>)) {
        put(
            "rerank_routes",
            self.routes.as_ref().map(|f| {
                let tried = f.value.statuses();
                match (f.value.used, f.value.dialect) {
                    (Some(route), RerankDialect::Cohere) => {
                        format!("{} used ({tried})", route.path())
                    }
                    (Some(route), dialect) => format!(
                        "{} used, in {} dialect {} ({tried})",
                        route.path(),
                        dialect.described(),
                        dialect.request()
                    ),
                    (None, _) => format!("not offered ({tried})"),
                }
            }),
        );
        put(
            "rerank_shape",
            self.shape.as_ref().map(|f| f.value.described().to_owned()),
        );
        put(
            "rerank_scale",
            self.scale.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "rerank_noise",
            self.noise.as_ref().map(|f| {
                format!(
                    "identical requests' scores differ by at most {:.2e}",
                    f.value
                )
            }),
        );
        put(
            "rerank_ties",
            self.tie_order.as_ref().map(|f| {
                format!(
                    "copies of one document come back in the order {:?}",
                    f.value
                )
            }),
        );
        put(
            "rerank_top_k",
            self.top_k.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "rerank_long_document",
            self.long_document.as_ref().map(|f| match f.value {
                LongInputPolicy::Scored => "scored (200)".to_owned(),
                LongInputPolicy::Refused(status) => format!("refused ({status})"),
            }),
        );
        put(
            "rerank_top_n_zero",
            self.top_n_zero.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "rerank_unknown_model",
            self.unknown_model.as_ref().map(|f| f.value.to_string()),
        );
    }
}

/// The scale a reranker's scores are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreScale {
    /// In [0, 1], spread out: Cohere's documented scale.
    Probability,
    /// Raw classifier outputs: some outside [-1, 1], or below 0 beside others above 1.
    Logit,
    /// Cosine similarities: all in [-1, 1], some negative.
    Cosine,
    /// Every score within [0.5, 0.74]: a sigmoid applied to probabilities again.
    Squeezed,
}

impl fmt::Display for ScoreScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScoreScale::Probability => "probabilities in [0, 1]",
            ScoreScale::Logit => "raw logits (scores outside [0, 1])",
            ScoreScale::Cosine => "cosine similarities in [-1, 1]",
            ScoreScale::Squeezed => {
                "probabilities squeezed into [0.5, 0.74] (a sigmoid applied twice)"
            }
        })
    }
}
