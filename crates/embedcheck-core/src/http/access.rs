//! How the suite reaches an endpoint beyond its URL: the key and the header that
//! carries it, other headers, a proxy, a private CA, and how request bodies name
//! their fields. Every client of the suite (the audit's transport, the migration's
//! load generator) builds its HTTP client and its requests here, so a header or a
//! proxy the user named reaches every request, and nothing else does.
//!
//! Hosted APIs differ in exactly these ways: Azure OpenAI wants the key in an
//! `api-key` header and no `model` in the body, OpenRouter asks for `HTTP-Referer`,
//! Mistral and Voyage call `dimensions` `output_dimension`, a company network has a
//! proxy and its own CA.

use super::curl::ShownHeader;
use super::probe::Credentials;
use super::secret::{Secret, Secrets};
use super::target::Target;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use thiserror::Error;

/// Why the suite cannot address the endpoint as asked.
#[derive(Debug, Error, PartialEq)]
pub enum AccessError {
    #[error("invalid header {0:?}: expected 'Name: value' with a valid HTTP header name and value")]
    Header(String),
    #[error("invalid --proxy {0:?}: {1}")]
    Proxy(String, String),
    #[error("invalid --ca-cert {0}: {1}")]
    CaCert(String, String),
    #[error("could not build the HTTP client: {0}")]
    Client(String),
}

/// What a probe with wrong credentials sends in place of each: a key no server issued.
const WRONG_CREDENTIAL: &str = "embedcheck-wrong-credential";

/// Which header carries the key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY`, as OpenAI and most vendors document.
    #[default]
    Bearer,
    /// The bare key in a header of this name (Azure OpenAI's `api-key`).
    Named(HeaderName),
}

impl KeyHeader {
    /// `authorization` (any case) means Bearer; any other valid name carries the bare key.
    pub fn parse(name: &str) -> Result<Self, AccessError> {
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| AccessError::Header(name.to_owned()))?;
        Ok(if name == AUTHORIZATION {
            KeyHeader::Bearer
        } else {
            KeyHeader::Named(name)
        })
    }
}

/// A header sent on every request, plain or secret.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    name: HeaderName,
    value: HeaderText,
}

#[derive(Clone, Debug, PartialEq)]
enum HeaderText {
    Plain(HeaderValue),
    /// Read from the environment variable `variable`; shown as `$variable`.
    Secret {
        value: Secret,
        variable: String,
    },
}

impl Header {
    /// `Name: value` from `--header`: shown as given in reports and reproducers.
    pub fn plain(line: &str) -> Result<Self, AccessError> {
        let invalid = || AccessError::Header(line.to_owned());
        let (name, value) = line.split_once(':').ok_or_else(invalid)?;
        Ok(Header {
            name: HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| invalid())?,
            value: HeaderText::Plain(HeaderValue::from_str(value.trim()).map_err(|_| invalid())?),
        })
    }

    /// A header whose value is a secret read from `variable` (`--header-env`).
    pub fn secret(name: &str, variable: &str, value: Secret) -> Result<Self, AccessError> {
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| AccessError::Header(format!("{name}=${variable}")))?;
        HeaderValue::from_str(value.expose())
            .map_err(|_| AccessError::Header(format!("{name}=${variable}")))?;
        Ok(Header {
            name,
            value: HeaderText::Secret {
                value,
                variable: variable.to_owned(),
            },
        })
    }

    fn is_secret(&self) -> bool {
        matches!(self.value, HeaderText::Secret { .. })
    }

    fn value(&self) -> HeaderValue {
        match &self.value {
            HeaderText::Plain(value) => value.clone(),
            // Checked in `secret`.
            HeaderText::Secret { value, .. } => {
                HeaderValue::from_str(value.expose()).unwrap_or(HeaderValue::from_static(""))
            }
        }
    }

    /// The header as a reproducer shows it: a secret as its variable.
    fn shown(&self) -> ShownHeader {
        match &self.value {
            HeaderText::Plain(value) => ShownHeader::Plain(format!(
                "{}: {}",
                self.name,
                String::from_utf8_lossy(value.as_bytes())
            )),
            HeaderText::Secret { variable, .. } => {
                ShownHeader::Secret(format!("{}: ${variable}", self.name))
            }
        }
    }
}

/// How request bodies name things for this vendor: whether `model` is sent, the
/// vendor's names for some fields and its words for some of their values (Jina's
/// `task: "retrieval.query"` for `input_type: "query"`). A body is rewritten just
/// before it is sent, so every clause asks for the same thing in the vendor's words
/// and the evidence shows what was really sent. Which fields a vendor renames is the
/// vendor profile's to say; nothing here knows a contract's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    pub send_model: bool,
    /// A field's name in the vendor's words, by its name in OpenAI's.
    pub names: BTreeMap<String, String>,
    /// A value in the vendor's words, by its field's name in OpenAI's and the value.
    pub values: BTreeMap<(String, String), String>,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            send_model: true,
            names: BTreeMap::new(),
            values: BTreeMap::new(),
        }
    }
}

impl Fields {
    /// The vendor's name for `field`: its own where it renames it.
    pub fn name<'a>(&'a self, field: &'a str) -> &'a str {
        self.names.get(field).map_or(field, String::as_str)
    }

    /// The vendor's word for `value` of `field`: its own where it has one.
    pub fn value<'a>(&'a self, field: &str, value: &'a str) -> &'a str {
        self.values
            .get(&(field.to_owned(), value.to_owned()))
            .map_or(value, String::as_str)
    }

    /// `body` in the vendor's words; unchanged for OpenAI's.
    pub(crate) fn rewrite(&self, body: &Value) -> Value {
        let Value::Object(map) = body else {
            return body.clone();
        };
        let mut out = serde_json::Map::with_capacity(map.len());
        for (name, value) in map {
            if name == "model" && !self.send_model {
                continue;
            }
            let mapped = match value.as_str() {
                Some(word) => Value::String(self.value(name, word).to_owned()),
                None => value.clone(),
            };
            out.insert(self.name(name).to_owned(), mapped);
        }
        Value::Object(out)
    }
}

/// Everything about reaching the endpoint that is not its URL.
/// Whether a client keeps connections open for later requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pool {
    /// Reuses a connection the server kept open, as every pooled client does.
    Keep,
    /// Opens a connection per request and closes it after the answer.
    None,
}

#[derive(Clone, Debug, Default)]
pub struct Access {
    pub key: Option<Secret>,
    pub key_header: KeyHeader,
    pub headers: Vec<Header>,
    /// Only a proxy the user named: environment proxies are never used, so a key
    /// never travels through a proxy nobody chose.
    pub proxy: Option<String>,
    /// PEM certificates of a private CA, trusted beside the platform's store, and
    /// the file they came from.
    pub ca_cert: Option<(String, Vec<u8>)>,
    pub fields: Fields,
}

impl Access {
    /// The key as a Bearer token and nothing else: the common case.
    pub fn bearer(key: Option<Secret>) -> Self {
        Access {
            key,
            ..Access::default()
        }
    }

    /// Whether any credential is sent (the key, or a secret header): AUTH-001 then
    /// checks a request without them.
    pub(crate) fn has_credentials(&self) -> bool {
        self.key.is_some() || self.headers.iter().any(Header::is_secret)
    }

    /// The one HTTP client builder: a total timeout, no redirects (a redirect could
    /// carry the key elsewhere, and is itself a finding), only the named proxy, the
    /// platform's CAs plus the named one.
    pub(crate) fn client(
        &self,
        timeout: Duration,
        pool: Pool,
    ) -> Result<reqwest::Client, AccessError> {
        // reqwest needs one process-wide rustls provider; Err means it is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("embedcheck/", env!("CARGO_PKG_VERSION")));
        if pool == Pool::None {
            builder = builder.pool_max_idle_per_host(0);
        }
        if let Some(url) = &self.proxy {
            let proxy = reqwest::Proxy::all(url)
                .map_err(|e| AccessError::Proxy(url.clone(), e.to_string()))?;
            builder = builder.proxy(proxy);
        }
        if let Some((path, pem)) = &self.ca_cert {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| AccessError::CaCert(path.clone(), e.to_string()))?;
            if certs.is_empty() {
                return Err(AccessError::CaCert(
                    path.clone(),
                    "no PEM certificate in the file".into(),
                ));
            }
            builder = builder.tls_certs_merge(certs);
        }
        builder
            .build()
            .map_err(|e| AccessError::Client(e.to_string()))
    }

    /// Adds this access's headers to `request`: with the run's credentials, without
    /// any (no key, no secret header), or with a wrong one in each place.
    pub(crate) fn apply(
        &self,
        mut request: reqwest::RequestBuilder,
        credentials: Credentials,
    ) -> reqwest::RequestBuilder {
        for header in &self.headers {
            let value = match (&header.value, credentials) {
                (HeaderText::Plain(value), _) => Some(value.clone()),
                (HeaderText::Secret { .. }, Credentials::Run) => Some(header.value()),
                (HeaderText::Secret { .. }, Credentials::Withheld) => None,
                (HeaderText::Secret { .. }, Credentials::Wrong) => {
                    Some(HeaderValue::from_static(WRONG_CREDENTIAL))
                }
            };
            if let Some(value) = value {
                request = request.header(header.name.clone(), value);
            }
        }
        let key = match (&self.key, credentials) {
            (Some(key), Credentials::Run) => key.expose(),
            (Some(_), Credentials::Wrong) => WRONG_CREDENTIAL,
            _ => return request,
        };
        match &self.key_header {
            KeyHeader::Bearer => request.bearer_auth(key),
            KeyHeader::Named(name) => request.header(name.clone(), key),
        }
    }

    /// The headers a curl reproducer shows, secrets as shell variables (`$KEY`); a
    /// wrong credential is shown as the one sent.
    pub(crate) fn shown_headers(&self, credentials: Credentials) -> Vec<ShownHeader> {
        if credentials == Credentials::Wrong {
            return self.wrong_headers_shown();
        }
        let authenticated = credentials == Credentials::Run;
        let mut shown: Vec<ShownHeader> = self
            .headers
            .iter()
            .filter(|h| authenticated || !h.is_secret())
            .map(Header::shown)
            .collect();
        match (&self.key, &self.key_header, authenticated) {
            (Some(_), KeyHeader::Bearer, true) => {
                shown.push(ShownHeader::Secret("Authorization: Bearer $KEY".into()));
            }
            (Some(_), KeyHeader::Named(name), true) => {
                shown.push(ShownHeader::Secret(format!("{name}: $KEY")));
            }
            _ => {}
        }
        shown
    }

    fn wrong_headers_shown(&self) -> Vec<ShownHeader> {
        let mut shown: Vec<ShownHeader> = self
            .headers
            .iter()
            .map(|h| match &h.value {
                HeaderText::Plain(_) => h.shown(),
                HeaderText::Secret { .. } => {
                    ShownHeader::Plain(format!("{}: {WRONG_CREDENTIAL}", h.name))
                }
            })
            .collect();
        match (&self.key, &self.key_header) {
            (Some(_), KeyHeader::Bearer) => shown.push(ShownHeader::Plain(format!(
                "Authorization: Bearer {WRONG_CREDENTIAL}"
            ))),
            (Some(_), KeyHeader::Named(name)) => {
                shown.push(ShownHeader::Plain(format!("{name}: {WRONG_CREDENTIAL}")));
            }
            _ => {}
        }
        shown
    }

    /// Every secret of this access and `target`, for every output to redact.
    pub(crate) fn secrets(&self, target: &Target) -> Secrets {
        let mut secrets = Secrets::default();
        if let Some(key) = &self.key {
            secrets.add(key.expose(), "$KEY");
        }
        for header in &self.headers {
            if let HeaderText::Secret { value, variable } = &header.value {
                secrets.add(value.expose(), &format!("${variable}"));
            }
        }
        for value in target.secret_values() {
            secrets.add_guessed(&value, super::target::REDACTED);
        }
        secrets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_parse_or_say_what_is_wrong() {
        assert!(Header::plain("X-Title: embedcheck").is_ok());
        let err = Header::plain("no colon").unwrap_err().to_string();
        assert!(err.contains("'Name: value'"), "{err}");
        assert!(Header::plain("bad name: x").is_err());
    }

    #[test]
    fn authorization_means_bearer() {
        assert_eq!(
            KeyHeader::parse("Authorization").unwrap(),
            KeyHeader::Bearer
        );
        assert_eq!(
            KeyHeader::parse("api-key").unwrap(),
            KeyHeader::Named(HeaderName::from_static("api-key"))
        );
    }

    #[test]
    fn reproducers_show_variables_never_secrets() {
        let access = Access {
            key: Some(Secret::new("sk-1234567".into())),
            key_header: KeyHeader::parse("api-key").unwrap(),
            headers: vec![
                Header::plain("X-Title: embedcheck").unwrap(),
                Header::secret("x-gw-key", "GW_KEY", Secret::new("gw-secret".into())).unwrap(),
            ],
            ..Access::default()
        };
        let plain = ShownHeader::Plain("x-title: embedcheck".into());
        assert_eq!(
            access.shown_headers(Credentials::Run),
            [
                plain.clone(),
                ShownHeader::Secret("x-gw-key: $GW_KEY".into()),
                ShownHeader::Secret("api-key: $KEY".into())
            ]
        );
        assert_eq!(access.shown_headers(Credentials::Withheld), [plain]);
        assert!(access.has_credentials());
    }

    #[test]
    fn bodies_are_rewritten_in_the_vendor_words() {
        let fields = Fields {
            send_model: false,
            names: [("size", "output_size"), ("kind", "task")]
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .into(),
            values: [(("kind", "question"), "retrieval.question")]
                .map(|((f, v), w)| ((f.to_owned(), v.to_owned()), w.to_owned()))
                .into(),
        };
        let body = json!({"model": "m", "text": "question", "size": 8, "kind": "question"});
        assert_eq!(
            fields.rewrite(&body),
            json!({"text": "question", "output_size": 8, "task": "retrieval.question"})
        );
        assert_eq!(Fields::default().rewrite(&body), body);
        assert_eq!(
            fields.rewrite(&json!("not an object")),
            json!("not an object")
        );
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let access = Access {
            ca_cert: Some(("ca.pem".into(), b"not a certificate".to_vec())),
            ..Access::default()
        };
        let err = access
            .client(Duration::from_secs(1), Pool::Keep)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ca.pem"), "{err}");
    }
}
