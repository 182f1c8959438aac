//! A persona and the in-process server that plays it.

use crate::crash::{Front, Switch};
use crate::http::{Request, Response, Server};
use crate::python_http;
use crate::quirks::Quirk;
use crate::wire::{Answer, Incoming};
use reference_server::{Config, Engine};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The key every persona that requires one expects, and every audit of a persona
/// sends. Fake on purpose: personas never leave 127.0.0.1.
pub const API_KEY: &str = "sk-embedcheck-persona";

/// A server to audit: the reference engine under `config`, with `quirks` applied in
/// order.
#[derive(Clone, Debug)]
pub struct Persona {
    pub name: &'static str,
    pub config: Config,
    pub quirks: Vec<Quirk>,
}

impl Persona {
    /// Serves this persona on a free port of 127.0.0.1 until the returned server is
    /// dropped.
    pub async fn start(&self) -> PersonaServer {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        self.start_on(listener).await
    }

    /// Serves the persona on `listener` (a fixed port, for the `serve` example); a
    /// crashing persona behind a [`Front`] (see [`crate::crash`]).
    pub async fn start_on(&self, listener: std::net::TcpListener) -> PersonaServer {
        let switch = Switch::new();
        let responder = Responder::new(self, switch.clone());
        let compute = responder.compute.clone();
        if self.on_python_http() {
            let habits = python_http::Habits {
                unread_404_bodies: self.quirks.contains(&Quirk::LeavesRefusedBodyUnread),
            };
            let respond = move |request: &Request| responder.respond_or_raise(request);
            let server = python_http::Server::start(listener, Arc::new(respond), habits);
            return PersonaServer {
                server: Serving::PythonHttp(server),
                front: None,
                endpoint: self.endpoint(),
                compute,
            };
        }
        let respond = move |request: &Request| responder.respond(request);
        let (server, front) = if self.crashes() {
            listener
                .set_nonblocking(true)
                .expect("a listener can be made non-blocking");
            let listener =
                tokio::net::TcpListener::from_std(listener).expect("a listener for the runtime");
            let server = Server::start(respond).await;
            let front = Front::start(listener, server.addr(), &switch);
            (server, Some(front))
        } else {
            (Server::start_on(listener, respond).await, None)
        };
        PersonaServer {
            server: Serving::Axum(server),
            front,
            endpoint: self.endpoint(),
            compute,
        }
    }

    /// Whether the persona is a Python `http.server` application (see
    /// [`crate::python_http`]).
    fn on_python_http(&self) -> bool {
        self.quirks.iter().any(|q| {
            matches!(
                q,
                Quirk::LeavesRefusedBodyUnread | Quirk::HandlerRaisesOn(_)
            )
        })
    }

    /// Whether a [`Quirk::CrashOn`] can take this persona down.
    fn crashes(&self) -> bool {
        self.quirks.iter().any(|q| matches!(q, Quirk::CrashOn(_)))
    }

    /// The path and query of this persona's embeddings endpoint, as its vendor
    /// documents it: `/v1/embeddings` unless a [`Quirk::ServedAt`] moves it, with
    /// every [`Quirk::RequireQuery`] parameter.
    pub fn endpoint(&self) -> String {
        let prefix = self
            .quirks
            .iter()
            .find_map(|q| match q {
                Quirk::ServedAt(prefix) => Some(*prefix),
                _ => None,
            })
            .unwrap_or("/v1");
        let query: Vec<String> = self
            .quirks
            .iter()
            .filter_map(|q| match q {
                Quirk::RequireQuery { name, value } => Some(format!("{name}={value}")),
                _ => None,
            })
            .collect();
        match query.as_slice() {
            [] => format!("{prefix}/embeddings"),
            _ => format!("{prefix}/embeddings?{}", query.join("&")),
        }
    }
}

/// A running persona.
pub struct PersonaServer {
    server: Serving,
    /// Where a crashing persona listens (see [`crate::crash`]).
    front: Option<Front>,
    endpoint: String,
    compute: Arc<Mutex<Duration>>,
}

impl PersonaServer {
    /// The compute a [`Quirk::Serial`] persona has spent on the requests it received so
    /// far, abandoned ones included: the least time a client of a one-at-a-time server
    /// can take for them.
    pub fn compute_time(&self) -> Duration {
        *self.compute.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr())
    }

    /// The full embeddings URL the vendor documents, query included: for a persona
    /// without a vendor path `http://127.0.0.1:PORT/v1/embeddings`, for Azure
    /// `http://127.0.0.1:PORT/openai/deployments/NAME/embeddings?api-version=…`.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}{}", self.addr(), self.endpoint)
    }

    pub fn addr(&self) -> SocketAddr {
        match &self.front {
            Some(front) => front.addr(),
            None => self.server.addr(),
        }
    }
}

/// What serves a persona's HTTP: axum, as real Rust servers, or Python's
/// `http.server` for a persona with its habits ([`Quirk::LeavesRefusedBodyUnread`],
/// [`Quirk::HandlerRaisesOn`]).
enum Serving {
    Axum(Server),
    PythonHttp(python_http::Server),
}

impl Serving {
    fn addr(&self) -> SocketAddr {
        match self {
            Serving::Axum(server) => server.addr(),
            Serving::PythonHttp(server) => server.addr(),
        }
    }
}

/// Computes every answer from the request: quirks before, the engine, quirks after.
struct Responder {
    engine: Engine,
    quirks: Vec<Quirk>,
    memory: Mutex<Memory>,
    /// The compute a serial persona has spent, shared with its [`PersonaServer`].
    compute: Arc<Mutex<Duration>>,
    /// Thrown when a `Quirk::CrashOn` fires: the persona's front goes down.
    switch: Switch,
}

/// What the server remembers between requests, for quirks that depend on history.
#[derive(Default)]
struct Memory {
    answered: u64,
    /// Requests answered so far, by [`Incoming::identity`].
    seen: HashMap<u64, u64>,
    /// The largest request body received so far, in bytes.
    longest: usize,
    /// Set once a `Quirk::CrashOn` fired: the server answers nothing from then on.
    crashed: bool,
    /// When a `Quirk::Serial` server's lock is next free.
    free_at: Option<Instant>,
    /// Until when a `Quirk::Cooldown` server's backend is cooling down.
    cool_until: Option<Instant>,
    /// Set once a `Quirk::VariesOnce` has turned an answer.
    varied: bool,
}

impl Memory {
    /// Numbers `request` and counts the identical ones before it.
    fn note(&mut self, request: &mut Incoming) {
        let seen = self.seen.entry(request.identity()).or_default();
        (request.number, request.repeat) = (self.answered, *seen);
        *seen += 1;
        self.answered += 1;
        request.longest_before = self.longest;
        self.longest = self.longest.max(request.body.len());
    }
}

impl Responder {
    fn new(persona: &Persona, switch: Switch) -> Self {
        Responder {
            engine: Engine::new(persona.config.clone()),
            quirks: persona.quirks.clone(),
            memory: Mutex::default(),
            compute: Arc::default(),
            switch,
        }
    }

    fn answer(&self, sent: Incoming) -> Answer {
        let config = self.engine.config();
        let mut request = sent.clone();
        let early = self
            .quirks
            .iter()
            .find_map(|quirk| quirk.before(&mut request, config));
        let mut answer =
            early.unwrap_or_else(|| Answer::from(self.engine.handle(&request.as_engine_request())));
        // The answer is to what the client sent, at the route a vendor's path resolved
        // to (`Quirk::ServedAt`), so that quirks after the engine know an embeddings
        // request under any vendor's path.
        let sent = Incoming {
            path: request.path,
            ..sent
        };
        for quirk in &self.quirks {
            quirk.after(&sent, &mut answer, config);
        }
        answer
    }
}

impl Responder {
    /// The answer, or none where a [`Quirk::HandlerRaisesOn`] fires: the handler
    /// raised, and the server closes the connection without answering.
    fn respond_or_raise(&self, request: &Request) -> Option<Response> {
        let incoming = Incoming::from_request(request);
        let raises = self
            .quirks
            .iter()
            .any(|q| matches!(q, Quirk::HandlerRaisesOn(trigger) if trigger.fires(&incoming)));
        (!raises).then(|| self.respond(request))
    }

    fn respond(&self, request: &Request) -> Response {
        let mut incoming = Incoming::from_request(request);
        // Counts from a poisoned lock are still fine for varying answers.
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        memory.note(&mut incoming);
        memory.crashed |= self.crashes_on(&incoming);
        if memory.crashed {
            self.switch.crash();
            return hung();
        }
        let wait = self.serial_cost(&incoming).map(|cost| {
            let now = Instant::now();
            let start = memory.free_at.map_or(now, |free| free.max(now));
            memory.free_at = Some(start + cost);
            *self.compute.lock().unwrap_or_else(|e| e.into_inner()) += cost;
            start + cost - now
        });
        let cooldown = self.cooldown();
        if let Some(until) = memory.cool_until.filter(|until| Instant::now() < *until)
            && incoming.method == "POST"
        {
            let left = until.saturating_duration_since(Instant::now()).as_secs() + 1;
            return Answer::openai_error(
                429,
                &format!("No deployments available for selected model, Try again in {left} seconds. cooldown_list=['all_deployments_in_cooldown']"),
            )
            .into_response();
        }
        let varies = self.varies_now(&incoming, &mut memory);
        drop(memory);
        let post = incoming.method == "POST";
        let mut answer = self.answer(incoming);
        if let Some(cosine) = varies.filter(|_| answer.status == 200) {
            crate::quirks::success::turn_last_item(&mut answer, cosine);
        }
        if let Some(cooldown) = cooldown.filter(|_| post && cools_down(&answer)) {
            let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
            memory.cool_until = Some(Instant::now() + cooldown);
        }
        let response = answer.into_response();
        match wait {
            Some(wait) => response.delay(wait),
            None => response,
        }
    }
}

impl Responder {
    /// The compute a `Quirk::Serial` server spends on `request`: its fixed cost, and
    /// its inputs' and their tokens' (token ids count one each).
    fn serial_cost(&self, request: &Incoming) -> Option<Duration> {
        let (per_request_ms, per_input_ms, per_token_us) =
            self.quirks.iter().find_map(|q| match *q {
                Quirk::Serial {
                    per_request_ms,
                    per_input_ms,
                    per_token_us,
                } => Some((per_request_ms, per_input_ms, per_token_us)),
                _ => None,
            })?;
        let vocab = self.engine.config().vocab_size;
        let (inputs, tokens) = match request.input() {
            Some(serde_json::Value::String(text)) => {
                (1, reference_server::tokenize(&text, vocab).len())
            }
            Some(serde_json::Value::Array(items)) => {
                let tokens = items
                    .iter()
                    .map(|item| match item {
                        serde_json::Value::String(text) => {
                            reference_server::tokenize(text, vocab).len()
                        }
                        serde_json::Value::Array(ids) => ids.len(),
                        _ => 1,
                    })
                    .sum();
                (items.len(), tokens)
            }
            _ => (0, 0),
        };
        Some(
            Duration::from_millis(per_request_ms + per_input_ms * inputs as u64)
                + Duration::from_micros(per_token_us * tokens as u64),
        )
    }

    /// The cosine a [`Quirk::VariesOnce`] turns this request's last item to: the
    /// first float request with a batch large enough, once.
    fn varies_now(&self, request: &Incoming, memory: &mut Memory) -> Option<f64> {
        let (batch_at_least, cosine) = self.quirks.iter().find_map(|q| match *q {
            Quirk::VariesOnce {
                batch_at_least,
                cosine,
            } => Some((batch_at_least, cosine)),
            _ => None,
        })?;
        let fields = request.fields()?;
        let float = fields.get("encoding_format").is_none_or(|f| f == "float");
        let batch = request
            .input()
            .and_then(|i| i.as_array().map(Vec::len))
            .unwrap_or(0);
        let due = request.is_embed_post() && float && batch >= batch_at_least && !memory.varied;
        memory.varied |= due;
        due.then_some(cosine)
    }

    /// How long a `Quirk::Cooldown` server's backend cools down after a failure.
    fn cooldown(&self) -> Option<Duration> {
        self.quirks.iter().find_map(|q| match *q {
            Quirk::Cooldown { millis } => Some(Duration::from_millis(millis)),
            _ => None,
        })
    }

    fn crashes_on(&self, request: &Incoming) -> bool {
        self.quirks
            .iter()
            .any(|q| matches!(q, Quirk::CrashOn(trigger) if trigger.fires(request)))
    }
}

/// Whether LiteLLM's router cools its deployment down after this answer: a backend
/// 401, 402, 404, 408, 429 or 5xx, except a connection error.
fn cools_down(answer: &Answer) -> bool {
    let connection_error = String::from_utf8_lossy(&answer.body).contains("APIConnectionError");
    (matches!(answer.status, 401 | 402 | 404 | 408 | 429) || answer.status >= 500)
        && !connection_error
}

/// A crashed server's answer: none. The persona's [`Front`] resets the connection it
/// was asked on; until then, the answer is held back.
fn hung() -> Response {
    Response::new(503).delay(Duration::from_secs(120))
}
