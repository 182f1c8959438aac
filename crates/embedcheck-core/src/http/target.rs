//! Where the audited endpoint lives, derived once from the user's `--endpoint`.
//!
//! Users paste whatever they have: a base URL (`http://host:8000/v1`), the full URL
//! of a contract's route, or a URL with credentials in it. All of these resolve to one
//! base, under which every route and the models listing hang, each keeping the query
//! string the user gave
//! (Azure OpenAI answers 404 without its `api-version`), and the form shown in reports
//! never carries credentials: a query value is shown only for names known to be
//! harmless ([`HARMLESS_QUERY`]), any other (`?key=…`) as [`REDACTED`].

use super::route::{Anchor, Route};
use thiserror::Error;
use url::Url;

/// A parsed, checked endpoint.
#[derive(Clone, Debug)]
pub struct Target {
    /// Up to and including the API version segment (`…/v1`).
    base: Url,
    /// The base without its `/v1` segment.
    root: Url,
    /// The query the user gave, kept on every request.
    query: Option<String>,
    /// The endpoint as reports show it, with the query: the route the user pasted
    /// whole (`{base}/audio/transcriptions`), else the first route's URL
    /// (`{base}/embeddings`, as every report and published table named servers before
    /// speech): its host, password and query are the endpoint's whatever route a
    /// request takes.
    shown: Url,
    models: Url,
    /// The pages where engines describe themselves.
    identity: [(IdentityPage, Url); 3],
}

/// A page where an engine describes itself, beside the models listing: vLLM's
/// `/version`, TEI's `/info` (model id, revision, dtype, version), llama.cpp's
/// `/props` (build, model file, context). Read for a recording's fingerprint: what a
/// server says of itself is reported, never judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentityPage {
    Version,
    Info,
    Props,
}

impl IdentityPage {
    pub const ALL: [IdentityPage; 3] = [
        IdentityPage::Version,
        IdentityPage::Info,
        IdentityPage::Props,
    ];

    pub fn path(self) -> &'static str {
        match self {
            IdentityPage::Version => "/version",
            IdentityPage::Info => "/info",
            IdentityPage::Props => "/props",
        }
    }
}

/// Why an `--endpoint` value cannot be used.
#[derive(Debug, Error, PartialEq)]
pub enum TargetError {
    #[error("invalid endpoint URL {0:?}: {1}")]
    Unparsable(String, String),
    #[error("endpoint must be an http:// or https:// URL, got scheme {0:?}")]
    Scheme(String),
    #[error("endpoint {0:?} has no host")]
    NoHost(String),
}

/// Query parameters whose values reports may show: versions, not credentials.
const HARMLESS_QUERY: [&str; 2] = ["api-version", "api_version"];

/// What reports show for any other query value.
pub(crate) const REDACTED: &str = "REDACTED";

impl Target {
    /// The endpoint the user gave, among the routes a user may paste whole (the
    /// contracts' routes under the base; the one pasted, else the first, is the
    /// endpoint as shown).
    pub fn parse(raw: &str, routes: &[Route]) -> Result<Self, TargetError> {
        let url = Url::parse(raw.trim())
            .map_err(|e| TargetError::Unparsable(raw.to_owned(), e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(TargetError::Scheme(url.scheme().to_owned()));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(TargetError::NoHost(raw.to_owned()));
        }
        let pasted: Vec<&str> = routes
            .iter()
            .filter(|r| r.anchor == Anchor::Base)
            .map(|r| r.path)
            .collect();
        let base = base_of(&url, &pasted);
        // The route the user pasted is the one shown; a base URL shows the first
        // contract's route.
        let shown_route = pasted
            .iter()
            .find(|route| join(&base, route).path() == url.path().trim_end_matches('/'))
            .or(pasted.first());
        let with_query = |mut leaf: Url| {
            leaf.set_query(url.query());
            leaf
        };
        let root = root_of(&base);
        let identity = IdentityPage::ALL.map(|page| (page, with_query(join(&root, page.path()))));
        Ok(Target {
            shown: with_query(shown_route.map_or(base.clone(), |p| join(&base, p))),
            models: with_query(join(&base, "models")),
            base,
            root,
            query: url.query().map(str::to_owned),
            identity,
        })
    }

    /// A contract route's URL: `http://host:8000/v1/embeddings` and
    /// `http://host:8000/rerank` for `--endpoint http://host:8000/v1`, with the query
    /// the user gave.
    pub fn url(&self, route: &Route) -> Url {
        let from = match route.anchor {
            Anchor::Base => &self.base,
            Anchor::Root => &self.root,
        };
        let mut url = join(from, route.path);
        url.set_query(self.query.as_deref());
        url
    }

    pub(crate) fn identity_url(&self, page: IdentityPage) -> &Url {
        self.identity
            .iter()
            .find(|(p, _)| *p == page)
            .map(|(_, url)| url)
            .expect("every identity page has a URL")
    }

    /// The endpoint's URL as reports show it (before redaction), against which a
    /// redirect's relative `Location` is resolved.
    pub(crate) fn endpoint_url(&self) -> &Url {
        &self.shown
    }

    pub(crate) fn models_url(&self) -> &Url {
        &self.models
    }

    /// The endpoint as reports show it: no user or password, and only harmless query
    /// values.
    pub fn display(&self) -> String {
        without_secrets(&self.shown)
    }

    /// Any URL of this target as reports show it (curl reproducers use it).
    pub(crate) fn shown(url: &Url) -> String {
        without_secrets(url)
    }

    /// Values in the URL that may be credentials (a password, a query value not known
    /// to be harmless), for the list of secrets every output redacts.
    pub(crate) fn secret_values(&self) -> Vec<String> {
        let url = &self.shown;
        let query = url
            .query_pairs()
            .filter(|(name, _)| !HARMLESS_QUERY.contains(&name.as_ref()))
            .map(|(_, value)| value.into_owned());
        url.password()
            .map(str::to_owned)
            .into_iter()
            .chain(query)
            .collect()
    }

    /// A name for reports and folders: `127.0.0.1-8000`, `api.example.com`.
    pub fn label(&self) -> String {
        let url = &self.shown;
        let host = url.host_str().unwrap_or("endpoint");
        let shown = match url.port() {
            Some(port) => format!("{host}-{port}"),
            None => host.to_owned(),
        };
        shown
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    }

    /// Whether the endpoint is on this machine, where load and fault tests may run.
    pub fn is_loopback(&self) -> bool {
        match self.shown.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        }
    }
}

/// The URL up to and including the API version segment (`…/v1`), without a trailing
/// slash, or the route `pasted` names after it.
fn base_of(url: &Url, pasted: &[&str]) -> Url {
    let mut base = url.clone();
    base.set_query(None);
    base.set_fragment(None);
    let path = base.path().trim_end_matches('/').to_owned();
    let trimmed = pasted
        .iter()
        .find_map(|route| path.strip_suffix(&format!("/{}", route.trim_matches('/'))))
        .unwrap_or(&path)
        .to_owned();
    base.set_path(&trimmed);
    base
}

/// The server's root: the base without its `/v1` segment, under which the rerank
/// routes of one server sit (`http://host/api/v1` → `http://host/api`).
fn root_of(base: &Url) -> Url {
    let mut root = base.clone();
    let path = root.path().trim_end_matches('/').to_owned();
    root.set_path(path.strip_suffix("/v1").unwrap_or(&path));
    root
}

fn join(base: &Url, leaf: &str) -> Url {
    let mut url = base.clone();
    let path = format!(
        "{}/{}",
        url.path().trim_end_matches('/'),
        leaf.trim_start_matches('/')
    );
    url.set_path(&path);
    url
}

fn without_secrets(url: &Url) -> String {
    let mut clean = url.clone();
    // Setting these cannot fail for http(s) URLs, which `parse` guarantees.
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    clean.set_query(None);
    if !pairs.is_empty() {
        let mut query = clean.query_pairs_mut();
        for (name, value) in &pairs {
            let shown = if HARMLESS_QUERY.contains(&name.as_str()) {
                value.as_str()
            } else {
                REDACTED
            };
            query.append_pair(name, shown);
        }
    }
    clean.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    cases! { base_and_full_urls_resolve_alike:
        base_url_resolves => ("http://127.0.0.1:8000/v1"),
        base_url_with_slash_resolves => ("http://127.0.0.1:8000/v1/"),
        full_url_resolves => ("http://127.0.0.1:8000/v1/embeddings"),
        full_url_with_spaces_and_slash_resolves => ("  http://127.0.0.1:8000/v1/embeddings/ "),
    }

    fn base_and_full_urls_resolve_alike(raw: &str) {
        let target = Target::parse(raw, &ROUTES).unwrap();
        let url = |path, anchor| target.url(&route(path, anchor)).as_str().to_owned();
        assert_eq!(
            url("embeddings", Anchor::Base),
            "http://127.0.0.1:8000/v1/embeddings"
        );
        assert_eq!(
            target.models_url().as_str(),
            "http://127.0.0.1:8000/v1/models"
        );
        assert_eq!(
            url("/v1/rerank", Anchor::Root),
            "http://127.0.0.1:8000/v1/rerank"
        );
        assert_eq!(url("/rerank", Anchor::Root), "http://127.0.0.1:8000/rerank");
    }

    /// A contract served under the base, as embeddings is.
    const ROUTES: [Route; 1] = [Route {
        path: "embeddings",
        anchor: Anchor::Base,
        ..crate::http::route::TESTING
    }];

    fn route(path: &'static str, anchor: Anchor) -> Route {
        Route {
            path,
            anchor,
            ..crate::http::route::TESTING
        }
    }

    /// A server mounted under a prefix keeps it on every route.
    #[test]
    fn root_routes_sit_under_the_servers_root() {
        let target = Target::parse("https://h.example/api/v1?api-version=1", &ROUTES).unwrap();
        assert_eq!(
            target.url(&route("/rerank", Anchor::Root)).as_str(),
            "https://h.example/api/rerank?api-version=1"
        );
        let bare = Target::parse("http://h:9/", &ROUTES).unwrap();
        assert_eq!(
            bare.url(&route("/v1/rerank", Anchor::Root)).as_str(),
            "http://h:9/v1/rerank"
        );
    }

    #[test]
    fn credentials_and_query_values_never_shown() {
        let target =
            Target::parse("https://user:hunter2@example.com/v1?api_key=abc", &ROUTES).unwrap();
        let shown = target.display();
        assert!(!shown.contains("hunter2") && !shown.contains("abc") && !shown.contains("user"));
        assert!(
            shown.ends_with("/v1/embeddings?api_key=REDACTED"),
            "{shown}"
        );
    }

    #[test]
    fn the_query_is_kept_on_every_request_and_a_version_shown() {
        let raw = "https://r.openai.azure.com/openai/deployments/d/embeddings?api-version=2024-10-21&key=s3cret";
        let target = Target::parse(raw, &ROUTES).unwrap();
        assert_eq!(target.url(&route("embeddings", Anchor::Base)).as_str(), raw);
        assert_eq!(
            target.models_url().as_str(),
            "https://r.openai.azure.com/openai/deployments/d/models?api-version=2024-10-21&key=s3cret"
        );
        assert_eq!(
            target.display(),
            "https://r.openai.azure.com/openai/deployments/d/embeddings?api-version=2024-10-21&key=REDACTED"
        );
    }

    cases! { bad_urls_are_one_line_errors:
        a_url_without_scheme_is_refused => ("127.0.0.1:8000", "invalid endpoint URL"),
        an_ftp_url_is_refused_for_its_scheme => ("ftp://example.com/v1", "scheme"),
        words_are_refused => ("not a url", "invalid endpoint URL"),
    }

    fn bad_urls_are_one_line_errors(raw: &str, says: &str) {
        let err = Target::parse(raw, &ROUTES).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    }

    cases! { labels_are_safe_folder_names:
        an_address_and_port_label_a_folder => ("http://127.0.0.1:8000/v1", "127.0.0.1-8000"),
        a_host_name_labels_a_folder => ("https://api.example.com/v1", "api.example.com"),
        an_ipv6_address_labels_a_folder => ("http://[::1]:9/v1", "---1--9"),
    }

    fn labels_are_safe_folder_names(raw: &str, label: &str) {
        assert_eq!(Target::parse(raw, &ROUTES).unwrap().label(), label);
    }

    cases! { loopback_is_recognised:
        ipv4_loopback_is_loopback => ("http://127.0.0.1:1/v1", true),
        localhost_is_loopback => ("http://localhost:1/v1", true),
        ipv6_loopback_is_loopback => ("http://[::1]:1/v1", true),
        a_private_address_is_not_loopback => ("http://10.0.0.1:1/v1", false),
        a_public_host_is_not_loopback => ("https://api.openai.com/v1", false),
    }

    fn loopback_is_recognised(raw: &str, loopback: bool) {
        assert_eq!(Target::parse(raw, &ROUTES).unwrap().is_loopback(), loopback);
    }
}
