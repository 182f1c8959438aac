//! Talking to the endpoint: targets, probes, bounded transport, replies, evidence text.

pub mod access;
pub(crate) mod curl;
pub mod deadline;
pub(crate) mod excerpt;
mod exchange;
pub mod form;
pub(crate) mod probe;
pub(crate) mod reply;
pub mod route;
pub(crate) mod secret;
pub mod target;
pub(crate) mod transport;

pub use crate::vectors::Encoding;
pub use access::{Access, AccessError, Fields, Header, KeyHeader};
pub(crate) use deadline::Pace;
pub use deadline::{Deadline, Work};
pub(crate) use exchange::Exchange;
pub(crate) use probe::{Body, Credentials, Probe, Validity};
pub(crate) use reply::AskedWait;
pub use reply::Reply;
pub use route::{Anchor, Route};
pub use secret::{Secret, Secrets};
pub use target::{IdentityPage, Target, TargetError};
pub use transport::{Transport, TransportError};
