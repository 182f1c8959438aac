//! embedcheck: a contract-conformance suite for OpenAI-compatible `POST /v1/embeddings`.
//!
//! The engine behind `cargo test -- --endpoint URL` and the `embedcheck` binary, usable
//! as a library without either (the command line lives in the root package):
//! - [`catalogue`]: the clauses as data (`specs/<contract>/clauses.json`),
//! - [`http`] and [`session`]: bounded, budgeted, polite probing of one server,
//! - [`clauses`]: one module per clause family, each check returning a verdict with
//!   its evidence,
//! - [`json`]: JSON bodies parsed by serde_json's own, optimised code,
//! - [`property`]: seeded, shrinking property tests driven inside the audit,
//! - [`declared`]: what the user declares about the server instead of detecting it,
//! - [`reference`]: known answers, the model's own vectors for a set of texts,
//! - [`vendor`]: hosted APIs' documented facts, and how a run addresses each,
//! - [`profiles`]: whether the OpenAI SDKs and LangChain, with their defaults, work
//!   against the server,
//! - [`audit`]: runs the selected clauses, then the client profiles,
//! - [`agreement`]: the servers of one model in a matrix compared on the probe texts,
//! - [`migration`]: two servers compared as the migration study compared them
//!   (`--baseline`),
//! - [`verdict`], [`audit`] and [`report`]: one result model rendered as terminal, JSON, Markdown
//!   and JUnit reports,

/// `cases!(check: name => (args), …)`: one `#[test]` per case, named after it, each
/// calling `check(args)`, so a failing case is named on its own line of the run.
#[cfg(test)]
macro_rules! cases {
    ($check:ident: $($name:ident => ($($arg:expr),* $(,)?)),* $(,)?) => {
        $(#[test] fn $name() { $check($($arg),*) })*
    };
}

pub mod agreement;
pub mod audit;
pub mod catalogue;
pub mod clauses;
pub mod contracts;
pub mod declared;
pub mod expectations;
pub mod http;
pub mod json;
pub mod migration;
pub mod profiles;
pub mod property;
pub mod reference;
pub mod report;
pub mod schemas;
pub mod session;
pub mod sha256;
pub mod snapshot;
pub mod vectors;
pub mod vendor;
pub mod verdict;
