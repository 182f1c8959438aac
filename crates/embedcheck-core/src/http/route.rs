//! A contract's route as data: where it hangs under the endpoint, and what a request
//! to it costs. Each contract's folder declares its routes; the session, transport and
//! budgets send to them, cache, pace and charge them without knowing the contract.

use super::Work;
use crate::catalogue::ContractId;
use serde_json::Value;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Which URL a route's path continues: the base the user gave (`http://host/v1`, so
/// `embeddings` is `http://host/v1/embeddings`), or the server's root without its
/// `/v1` (`/rerank` is `http://host/rerank`, where TEI and llama.cpp serve it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    Base,
    Root,
}

/// One route a contract is served at.
#[derive(Clone, Copy)]
pub struct Route {
    pub contract: ContractId,
    pub path: &'static str,
    pub anchor: Anchor,
    /// The work a JSON body carries (its inputs and their estimated tokens), by the
    /// contract's own fields: what the request's deadline grows with, and what the
    /// token budget is charged before an answer says.
    pub work: fn(&Value) -> Work,
    /// Whether the budget is charged the answer's `usage.total_tokens` (where the
    /// contract's clauses check what it counts), or always the estimate.
    pub charges_usage: bool,
    /// Whether a vendor's names for the request's fields (`--vendor`: Gemini's
    /// `output_dimension` for `dimensions`) are put in its bodies as they are sent.
    pub vendor_fields: bool,
}

impl Route {
    /// Whether the two routes belong to one contract: a request to one stands in for
    /// the other as the control of a 429 (a client's own route on a server serving
    /// the contract at another).
    pub(crate) fn same_contract(&self, other: &Route) -> bool {
        self.contract == other.contract
    }
}

/// Two routes are one when they address one URL for one contract; how they are
/// costed follows from that.
impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        (self.contract, self.path, self.anchor) == (other.contract, other.path, other.anchor)
    }
}

impl Eq for Route {}

impl Hash for Route {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.contract, self.path, self.anchor).hash(state);
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}({:?} {})", self.contract, self.anchor, self.path)
    }
}

/// About four characters per token for ASCII text and one per other character (a
/// WordPiece or byte-level vocabulary cuts Hangul or Chinese at least that finely),
/// one per token id: the estimate every contract's `work` counts its texts with.
pub(crate) fn estimate(input: &Value) -> u64 {
    match input {
        Value::String(s) => {
            let other = s.chars().filter(|c| !c.is_ascii()).count() as u64;
            let ascii = s.chars().count() as u64 - other;
            (ascii.div_ceil(4) + other).max(1)
        }
        Value::Array(items) => items.iter().map(estimate).sum(),
        Value::Number(_) => 1,
        _ => 0,
    }
}

/// A route for the shared engine's own tests, which send requests of no contract:
/// `POST {base}/embeddings`, each item of `input` an input.
#[cfg(test)]
pub(crate) const TESTING: Route = Route {
    contract: ContractId::of_catalogue("testing"),
    path: "embeddings",
    anchor: Anchor::Base,
    work: |body| {
        let input = body.get("input").unwrap_or(&Value::Null);
        Work {
            inputs: input.as_array().map_or(1, |items| items.len() as u64),
            tokens: estimate(input),
        }
    },
    charges_usage: true,
    vendor_fields: true,
};
