//! Quirks that decide where a hosted API answers and how it reads the key: a vendor's
//! own path, a required query parameter, a key in a header of its own.
//!
//! They run first, before any quirk that reads the request: a request a vendor routes
//! elsewhere, or refuses for its URL, never reaches the engine, and one it serves
//! continues at `/v1/embeddings` or `/v1/models`, where the other quirks and the
//! engine expect it.

use crate::wire::{Answer, Incoming};
use reference_server::Config;

/// The engine's paths for a vendor's leaf under its prefix.
const LEAVES: [(&str, &str); 2] = [("/embeddings", "/v1/embeddings"), ("/models", "/v1/models")];

/// Moves a request for `{prefix}/embeddings` or `{prefix}/models` to the engine's
/// path; anything else, the engine's own paths included, is answered 404.
pub(super) fn serve_at(request: &mut Incoming, prefix: &str) -> Option<Answer> {
    let leaf = request.path.strip_prefix(prefix).and_then(|rest| {
        LEAVES
            .iter()
            .find(|(vendor, _)| *vendor == rest)
            .map(|(_, engine)| *engine)
    });
    match leaf {
        Some(path) => {
            request.path = path.to_owned();
            None
        }
        None => Some(not_found(request)),
    }
}

/// 404 for the models listing, at the engine's path or its alias.
pub(super) fn no_models_route(request: &Incoming) -> Option<Answer> {
    matches!(request.path.as_str(), "/v1/models" | "/models").then(|| not_found(request))
}

/// 404 with an empty body for the models listing, at the engine's path or its alias.
pub(super) fn models_listing_empty_404(request: &Incoming) -> Option<Answer> {
    let listing = matches!(request.path.as_str(), "/v1/models" | "/models");
    listing.then(|| Answer {
        status: 404,
        content_type: String::new(),
        headers: Vec::new(),
        body: Vec::new(),
    })
}

/// TEI's `GET /info`: the fields a client reads to learn what is served.
pub(super) fn tei_info(request: &Incoming, config: &Config) -> Option<Answer> {
    (request.method == "GET" && request.path == "/info").then(|| {
        Answer::json_body(
            200,
            &serde_json::json!({
                "model_id": config.model_id,
                "max_input_length": config.max_input_tokens,
                "max_client_batch_size": 32,
                "auto_truncate": true,
                "version": "1.9.3",
            }),
        )
    })
}

/// 404 "Resource not found" unless the URL carries a non-empty `name` parameter.
pub(super) fn require_query(request: &Incoming, name: &str) -> Option<Answer> {
    let present = request.query_value(name).is_some_and(|v| !v.is_empty());
    (!present).then(|| Answer::openai_error(404, "Resource not found"))
}

/// Presents the key of header `name` to the engine as a bearer token, and nothing
/// else: an `Authorization` header is not read.
pub(super) fn key_in_header(request: &mut Incoming, name: &str) {
    request.authorization = request.header(name).map(|key| format!("Bearer {key}"));
}

/// `307 Temporary Redirect` to `url`, with no body.
pub(super) fn redirect(url: &str) -> Answer {
    Answer {
        status: 307,
        content_type: String::new(),
        headers: vec![("location", url.to_owned())],
        body: Vec::new(),
    }
}

fn not_found(request: &Incoming) -> Answer {
    let message = format!("Invalid URL ({} {})", request.method, request.path);
    Answer::openai_error(404, &message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(path: &str) -> Incoming {
        Incoming {
            path: path.to_owned(),
            ..Incoming::embed_post(&json!({"input": "a"}))
        }
    }

    #[test]
    fn a_vendor_prefix_serves_both_leaves_at_the_engine_paths() {
        for (vendor, engine) in [
            ("/v1beta/openai/embeddings", "/v1/embeddings"),
            ("/v1beta/openai/models", "/v1/models"),
        ] {
            let mut request = at(vendor);
            assert_eq!(serve_at(&mut request, "/v1beta/openai"), None, "{vendor}");
            assert_eq!(request.path, engine);
        }
    }

    #[test]
    fn other_paths_are_not_found_the_engine_alias_included() {
        for path in [
            "/v1/embeddings",
            "/embeddings",
            "/v1beta/openai/embeddings/x",
        ] {
            let answer = serve_at(&mut at(path), "/v1beta/openai").map(|a| a.status);
            assert_eq!(answer, Some(404), "{path}");
        }
        assert_eq!(serve_at(&mut at("/v1/embeddings"), "/v1"), None);
    }

    #[test]
    fn the_models_route_is_gone_and_embeddings_stay() {
        assert_eq!(
            no_models_route(&at("/v1/models")).map(|a| a.status),
            Some(404)
        );
        assert_eq!(no_models_route(&at("/v1/embeddings")), None);
    }

    #[test]
    fn the_query_parameter_must_be_present_and_not_empty() {
        let with = |query: Option<&str>| Incoming {
            query: query.map(str::to_owned),
            ..at("/v1/embeddings")
        };
        for query in [None, Some("api-version="), Some("other=1")] {
            let answer = require_query(&with(query), "api-version");
            assert_eq!(answer.map(|a| a.status), Some(404), "{query:?}");
        }
        let served = with(Some("x=1&api-version=2024-10-21"));
        assert_eq!(require_query(&served, "api-version"), None);
    }

    #[test]
    fn the_key_comes_from_its_header_and_authorization_is_ignored() {
        let mut request = Incoming {
            authorization: Some("Bearer sk-elsewhere".to_owned()),
            headers: vec![("api-key".to_owned(), "sk-here".to_owned())],
            ..at("/v1/embeddings")
        };
        key_in_header(&mut request, "api-key");
        assert_eq!(request.authorization.as_deref(), Some("Bearer sk-here"));
        let mut bearer_only = Incoming {
            authorization: Some("Bearer sk-elsewhere".to_owned()),
            ..at("/v1/embeddings")
        };
        key_in_header(&mut bearer_only, "api-key");
        assert_eq!(bearer_only.authorization, None);
    }
}
