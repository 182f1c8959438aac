//! One audit's conversation with one server: the budgeted, cached, interruptible
//! connection ([`connection`]), the run's settings, the canonical embeddings requests
//! clauses share ([`requests`]; rerank's are in `contracts/rerank/requests.rs`), and the
//! typed facts learned on the way ([`facts`]).

mod connection;
pub mod facts;
pub(crate) mod requests;
pub mod reuse;
mod settings;

pub use connection::{Interrupt, Logged, ProbeError, Session};
pub(crate) use connection::{Persisted, Throttled};
pub(crate) use facts::Fact;
pub use facts::Facts;
pub use settings::{DEFAULT_CASES, Settings};
