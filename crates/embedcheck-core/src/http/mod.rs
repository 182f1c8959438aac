//! Talking to the endpoint: targets, probes, bounded transport, replies, evidence text.

pub(crate) mod curl;
pub(crate) mod embeddings;
pub(crate) mod excerpt;
mod exchange;
pub(crate) mod probe;
pub(crate) mod reply;
pub(crate) mod secret;
pub mod target;
pub(crate) mod transport;

pub use embeddings::Encoding;
pub(crate) use exchange::Exchange;
pub(crate) use probe::{Body, Probe, Validity};
pub(crate) use reply::{AskedWait, Reply};
pub use secret::Secret;
pub use target::{Target, TargetError};
pub use transport::{Transport, TransportError};
