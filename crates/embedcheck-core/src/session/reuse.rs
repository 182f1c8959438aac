//! Whether a server keeps a connection in step after refusing a request on it.
//!
//! A server that refuses a request without reading its body (a 404 before the body
//! parser ran, say) leaves that body on the connection, and if it keeps the
//! connection open the body is read as the start of the next request, which is then
//! answered `400 Bad request syntax` whatever it was. RFC 9112 §9.3: "A server MUST
//! read the entire request message body or close the connection after sending its
//! response". An answer to a request that followed a refusal on the same connection is
//! therefore taken as the server's own only once it is known the server keeps its
//! connections in step after refusals of that kind: a refusal there is sent again on
//! a new connection, and a different answer shows the first was the connection's
//! artefact (ERR-014), never an answer to the request.

use crate::http::{Exchange, Probe, Reply};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// A connection a server desynchronised: the refused request whose body it left on
/// the connection, the answer the next request got there, and the same request's
/// answer on a new connection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Desync {
    pub unread: Exchange,
    pub artefact: Exchange,
    pub repeated: Exchange,
}

/// What the run has seen of requests that followed a refusal on one connection.
#[derive(Debug, Default)]
pub(crate) struct Reuse {
    /// Per open connection (the suite's address), the refused request with a body it
    /// carried last, while no other request has followed it there.
    refused_on: HashMap<SocketAddr, Exchange>,
    /// Per status of a refusal, the answer that showed the connection in step after
    /// it: the next request on it answered as a new connection answers it.
    in_step_after: BTreeMap<u16, Exchange>,
    /// The first connection the server desynchronised, once one has been.
    desync: Option<Desync>,
}

impl Reuse {
    /// Notes `reply`, the answer to `probe`; the refusal before it on its connection
    /// when the answer must be confirmed on a new connection before it is believed:
    /// it is a refusal too, and the server has not yet shown that it keeps
    /// connections in step after refusals of that kind.
    pub(crate) fn note(&mut self, probe: &Probe, reply: &Reply) -> Option<Exchange> {
        let connection = reply.connection?;
        let before = self.refused_on.remove(&connection);
        if refused(reply) && probe.payload().is_some() {
            self.refused_on.insert(connection, reply.exchange.clone());
        }
        let before = before.filter(|b| !self.in_step_after.contains_key(&status(b)))?;
        if refused(reply) {
            return Some(before);
        }
        self.in_step_after
            .insert(status(&before), reply.exchange.clone());
        None
    }

    /// A refusal's repetition on a new connection was answered alike: the server
    /// keeps connections in step after refusals like `before`.
    pub(crate) fn in_step(&mut self, before: &Exchange, repeated: &Reply) {
        self.in_step_after
            .insert(status(before), repeated.exchange.clone());
    }

    /// The answer on the reused connection differed from the new connection's.
    pub(crate) fn desynchronised(&mut self, desync: Desync) {
        self.desync.get_or_insert(desync);
    }

    /// Whether requests must go on new connections: the server has desynchronised one.
    pub(crate) fn is_desynchronised(&self) -> bool {
        self.desync.is_some()
    }

    pub(crate) fn desync(&self) -> Option<&Desync> {
        self.desync.as_ref()
    }

    /// The answers that showed a connection in step after a refusal, by its status.
    pub(crate) fn in_step_after(&self) -> &BTreeMap<u16, Exchange> {
        &self.in_step_after
    }
}

fn refused(reply: &Reply) -> bool {
    reply.status >= 400
}

fn status(exchange: &Exchange) -> u16 {
    exchange.status.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn on(port: u16, status: u16) -> Reply {
        let mut reply = Reply::json_for_test(status, json!({}));
        reply.connection = Some(SocketAddr::from(([127, 0, 0, 1], port)));
        reply
    }

    #[test]
    fn a_refusal_after_a_refusal_on_one_connection_is_confirmed_until_one_is_in_step() {
        let post = Probe::post(crate::http::route::TESTING, json!({"input": "x"}));
        let mut reuse = Reuse::default();
        assert_eq!(reuse.note(&post, &on(1, 404)), None);
        let before = reuse
            .note(&post, &on(1, 400))
            .expect("a refusal after a refusal");
        assert_eq!(before.status, Some(404));
        reuse.in_step(&before, &on(2, 400));
        assert_eq!(reuse.note(&post, &on(5, 404)), None);
        assert_eq!(
            reuse.note(&post, &on(5, 400)),
            None,
            "404s leave it in step"
        );
    }

    #[test]
    fn a_success_after_a_refusal_shows_the_connection_in_step() {
        let post = Probe::post(crate::http::route::TESTING, json!({"input": "x"}));
        let mut reuse = Reuse::default();
        reuse.note(&post, &on(1, 422));
        assert_eq!(reuse.note(&post, &on(1, 200)), None);
        assert!(reuse.in_step_after().contains_key(&422));
        reuse.note(&post, &on(1, 422));
        assert_eq!(reuse.note(&post, &on(1, 422)), None);
    }

    #[test]
    fn only_a_refusal_on_the_same_connection_of_a_request_with_a_body_counts() {
        let post = Probe::post(crate::http::route::TESTING, json!({"input": "x"}));
        let get = Probe::list_models();
        let mut reuse = Reuse::default();
        reuse.note(&post, &on(1, 404));
        assert_eq!(reuse.note(&post, &on(2, 400)), None, "another connection");
        reuse.note(&get, &on(3, 404));
        assert_eq!(reuse.note(&post, &on(3, 400)), None, "no body left unread");
        let mut unknown = on(4, 400);
        unknown.connection = None;
        assert_eq!(reuse.note(&post, &unknown), None, "connection unknown");
    }
}
