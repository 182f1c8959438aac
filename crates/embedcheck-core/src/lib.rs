//! embedcheck: a contract-conformance suite for OpenAI-compatible `POST /v1/embeddings`.
//!
//! The engine behind `cargo test -- --endpoint URL` and the `embedcheck` binary:
//! - [`catalogue`]: the clauses as data (`specs/clauses.json`),
//! - [`http`] and [`session`]: bounded, budgeted, polite probing of one server,
//! - [`clauses`]: one module per clause family, each check returning a verdict with
//!   its evidence,
//! - [`property`]: seeded, shrinking property tests driven inside the audit,
//! - [`declared`]: what the user declares about the server instead of detecting it,
//! - [`audit`]: runs the selected clauses,
//! - [`migration`]: two servers compared as the migration study compared them
//!   (`--baseline`),
//! - [`model`] and [`report`]: one result model rendered as terminal, JSON, Markdown
//!   and JUnit reports,
//! - [`cli`]: options, the libtest-compatible harness and exit statuses.

pub mod audit;
pub mod catalogue;
pub mod clauses;
pub mod cli;
pub mod declared;
pub mod expectations;
pub mod http;
pub mod migration;
pub mod model;
pub mod property;
pub mod report;
pub mod schemas;
pub mod session;
pub mod snapshot;
pub mod vectors;
