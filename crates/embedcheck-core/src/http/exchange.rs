//! One request the suite sent and what came back, as evidence shows it: the wire
//! record every layer above the transport hands around.

use serde::Serialize;

/// One request the suite sent and what came back, as shown in evidence.
///
/// Bodies are excerpts: long strings and arrays are cut and vectors are summarised,
/// so evidence stays readable and small. The API key never appears here.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// HTTP status, absent when no answer arrived.
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    pub millis: u64,
    /// What went wrong on the wire, when no complete answer arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<String>,
    /// A shell command that sends the same request, with the key as `$KEY`.
    #[serde(skip)]
    pub curl: String,
}
