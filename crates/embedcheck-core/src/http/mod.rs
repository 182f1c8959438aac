//! Talking to the endpoint: targets, probes, bounded transport, replies, evidence text.

pub mod curl;
pub mod embeddings;
pub mod excerpt;
mod exchange;
pub mod probe;
pub mod reply;
pub mod secret;
pub mod target;
pub mod transport;

pub use embeddings::{Embeddings, Encoding};
pub use exchange::Exchange;
pub use probe::{Body, Probe, Resource, Validity};
pub use reply::Reply;
pub use secret::Secret;
pub use target::{Target, TargetError};
pub use transport::{Transport, TransportError};
