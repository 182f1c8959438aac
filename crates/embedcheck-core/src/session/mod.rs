//! One audit's conversation with one server: the budgeted, cached, interruptible
//! connection ([`connection`]), the run's settings and the typed facts learned on the
//! way ([`facts`]). Each contract's canonical requests are in its folder
//! (`contracts/embeddings/requests.rs`, `contracts/rerank/requests.rs`).

mod by_contract;
mod connection;
pub mod facts;
pub mod reuse;
mod settings;

pub use by_contract::{ByContract, Part};
pub(crate) use connection::{Dialect, Hooks};
pub use connection::{Interrupt, Logged, ProbeError, Session};
pub(crate) use connection::{Persisted, Throttled};
pub(crate) use facts::Fact;
pub use facts::Facts;
pub use settings::{DEFAULT_CASES, Settings};
