//! Where a server may serve rerank, and what a rerank request costs.

use crate::http::route::estimate;
use crate::http::{Anchor, Route, Work};
use serde_json::Value;

/// Where a server may serve rerank. The Cohere SDK v1 and clients with a `/v1` base
/// URL call `/v1/rerank`; llama.cpp, TEI and Dify's plugin `/rerank`; the Cohere SDK
/// v2, LangChain and LlamaIndex `/v2/rerank`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RerankRoute {
    /// `{root}/v1/rerank`.
    V1,
    /// `{root}/rerank`.
    Bare,
    /// `{root}/v2/rerank`.
    V2,
    /// `{root}/v1/ranking`: NVIDIA NIM's text reranking, in its own dialect only.
    Ranking,
}

impl RerankRoute {
    /// The routes of Cohere's and TEI's dialects, in the order they are tried.
    pub const ALL: [RerankRoute; 3] = [RerankRoute::V1, RerankRoute::Bare, RerankRoute::V2];

    /// Every route a server may rerank at.
    pub const EVERY: [RerankRoute; 4] = [
        RerankRoute::V1,
        RerankRoute::Bare,
        RerankRoute::V2,
        RerankRoute::Ranking,
    ];

    /// The path under the server's root.
    pub fn path(self) -> &'static str {
        match self {
            RerankRoute::V1 => "/v1/rerank",
            RerankRoute::Bare => "/rerank",
            RerankRoute::V2 => "/v2/rerank",
            RerankRoute::Ranking => "/v1/ranking",
        }
    }

    /// The route as the shared engine sends to it.
    pub(crate) fn route(self) -> Route {
        Route {
            contract: crate::contracts::rerank::ID,
            path: self.path(),
            anchor: Anchor::Root,
            work,
            charges_usage: false,
            vendor_fields: false,
        }
    }
}

/// A rerank request's work: one input a document, and the query paid for once per
/// document (a body in no rerank dialect is counted as an embeddings body).
fn work(body: &Value) -> Work {
    let inputs = match (body.get("documents"), body.get("input")) {
        (Some(Value::Array(documents)), _) => documents.len() as u64,
        (_, Some(Value::Array(items))) if items.iter().all(Value::is_number) => 1,
        (_, Some(Value::Array(items))) => items.len() as u64,
        (_, Some(_)) => 1,
        (_, None) => 0,
    };
    let tokens = match (body.get("query"), body.get("documents")) {
        (Some(query), Some(Value::Array(documents))) => {
            let query = estimate(query);
            documents
                .iter()
                .map(|d| query + estimate(d.get("text").unwrap_or(d)))
                .sum::<u64>()
                .max(query)
        }
        _ => estimate(body.get("input").unwrap_or(&Value::Null)),
    };
    Work { inputs, tokens }
}
