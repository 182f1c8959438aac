//! One audit's conversation with one server: the budgeted, cached, interruptible
//! connection ([`connection`]), the run's settings, the canonical requests clauses
//! share ([`requests`]) and the typed facts learned on the way ([`facts`]).

mod connection;
pub mod facts;
pub mod requests;
mod settings;

pub use connection::{Interrupt, Logged, ProbeError, Session};
pub use facts::{Fact, Facts, Learned};
pub use settings::{DEFAULT_CASES, Settings};
