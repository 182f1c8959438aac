//! One audit's connection to one server: budgets, cache, log, interruption.
//!
//! Clauses never talk to the transport directly. They send probes through the
//! session, which
//! - refuses to send once the request or token budget is spent,
//! - answers a probe another clause already sent from its cache (shared evidence,
//!   fewer requests),
//! - waits out 429 answers per `Retry-After` within a bounded wait,
//! - stops at once when the user presses Ctrl-C,
//! - and logs every exchange, so cross-cutting clauses (the retry hazard, error bodies)
//!   can judge everything the run sent.

use super::facts::{Fact, Facts, Learned, describe_request};
use super::reuse::{Desync, Reuse};
use super::settings::Settings;
use crate::catalogue::ContractId;
use crate::http::Exchange;
use crate::http::probe::{Resource, Script};
use crate::http::{AskedWait, Deadline, Pace, Probe, Reply, Transport, TransportError, Validity};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use thiserror::Error;

use tokio::sync::watch;

/// Why a probe got no usable answer; the clause ends inconclusive with this reason.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ProbeError {
    #[error("request budget spent ({0} requests, --max-requests)")]
    RequestBudget(u64),
    /// The request would take the run past `--max-tokens`, on its estimate.
    #[error(
        "token budget (--max-tokens {max}): this request would need about {needed} tokens, and {spent} are spent"
    )]
    TokenBudget { needed: u64, spent: u64, max: u64 },
    /// The request's files would take the run's uploads past `--max-upload-mb`.
    #[error(
        "upload budget (--max-upload-mb {}): this request uploads {needed} bytes, and {spent} are uploaded",
        max / 1_000_000
    )]
    UploadBudget { needed: u64, spent: u64, max: u64 },
    #[error("{0}")]
    Transport(TransportError),
    #[error("still rate limited (429); the run already waited {0} s of --max-retry-wait")]
    RateLimited(u64),
    #[error("interrupted")]
    Interrupted,
    /// The server stopped answering after an earlier probe (see ERR-010); nothing
    /// more is sent to it.
    #[error("the server stopped answering after an earlier probe ({0}); nothing more was sent")]
    ServerDown(String),
    /// Requests stopped getting answers (timeouts, or 429 past the retry wait); the
    /// rest of the run sends nothing to this server.
    #[error("{0}; nothing more was sent")]
    Stalled(String),
    /// A property clause could not build its inputs (a strategy rejected every draw).
    #[error("could not generate a test case: {0}")]
    Generation(String),
    /// `--dry-run`: the request was recorded, not sent.
    #[error("dry run: nothing was sent")]
    DryRun,
    /// The server closed the connection without answering the request, and again
    /// when it was sent on a new connection, while it answers other requests: that is
    /// its answer to this request, and the clause that sent it fails on it.
    #[error(
        "the server closed the connection without a complete answer to {request}, again on a new connection, while it answers other requests: a client gets a connection error (which the OpenAI SDKs retry twice), never an answer ({error})"
    )]
    Unanswered { request: String, error: String },
    /// The request has no meaning in the dialect the server speaks (TEI's rerank has
    /// no top_n): nothing was sent, and the clause that asked it does not apply.
    #[error("{0}")]
    NotInDialect(String),
}

/// Ctrl-C, shared between the signal handler and every waiting probe.
#[derive(Clone)]
pub struct Interrupt {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt {
            sender: Arc::new(watch::channel(false).0),
        }
    }
}

impl Interrupt {
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once `trigger` was called.
    pub(crate) async fn triggered(&self) {
        let mut receiver = self.sender.subscribe();
        // An error means the sender is gone, which cannot happen while self lives.
        let _ = receiver.wait_for(|fired| *fired).await;
    }
}

/// One logged exchange and whether its request was valid under the contract.
#[derive(Clone, Debug)]
pub struct Logged {
    pub validity: Validity,
    /// What the request addressed: each contract's clauses judge their own requests.
    pub(crate) resource: Resource,
    pub exchange: Exchange,
    /// The answer, when one arrived.
    pub reply: Option<Arc<Reply>>,
    /// The clause that sent it (None before the first clause: the model look-up).
    pub clause: Option<&'static str>,
    /// The request body as sent, for behaviour snapshots; a form as its excerpt.
    pub request_body: Option<Vec<u8>>,
    /// How long the answer was waited for, and why (none for a dry run's record).
    pub deadline: Option<Deadline>,
}

impl Logged {
    /// The contract whose route the request went to (none for the models listing).
    pub(crate) fn contract(&self) -> Option<ContractId> {
        self.resource.route().map(|r| r.contract)
    }
}

/// The audit's connection to one server.
pub struct Session {
    transport: Transport,
    settings: Settings,
    interrupt: Interrupt,
    requests: AtomicU64,
    tokens: AtomicU64,
    /// Bytes of the files uploaded so far, against `max_upload_bytes`.
    uploaded: AtomicU64,
    cache: Mutex<HashMap<String, Arc<Reply>>>,
    /// Every exchange with the number it was sent under, in sending order: requests
    /// sent concurrently are logged in the order they were sent, not answered, so a
    /// run's log (and everything read from it) does not depend on which answer came
    /// back first.
    log: Mutex<Vec<(u64, Logged)>>,
    /// Exchanges touched by the clause now running, for its evidence on error.
    pending: Mutex<Vec<Exchange>>,
    facts: Mutex<Facts>,
    /// What the contracts audited ask of the session (none until an audit installs
    /// them).
    hooks: Hooks,
    /// Time spent so far waiting out 429 answers, against `max_retry_wait`.
    waited_for_429: Mutex<Duration>,
    /// Every 429 and 503 answer, waited out or not, with the request's validity:
    /// what ERR-011 and ERR-012 judge.
    throttled: Mutex<Vec<Throttled>>,
    /// The exchange after which the server stopped answering, once it has.
    down_after: Mutex<Option<Exchange>>,
    /// The clause now running, recorded with each exchange it sends.
    current_clause: Mutex<Option<&'static str>>,
    /// Requests in a row that got no answer in time, or a 429 past the retry wait.
    unanswered_in_a_row: AtomicU64,
    /// Why the session stopped sending, once it has.
    stalled: Mutex<Option<String>>,
    /// The last valid request that succeeded, per resource: the control that tells
    /// throttling from a refusal dressed as a 429. Per resource, because a gateway
    /// throttles one backend while it answers another (LiteLLM answers `GET /models`
    /// itself while its only rerank deployment cools down after failed requests).
    last_valid_success: Mutex<Vec<(Resource, Probe)>>,
    /// What requests that followed a refusal on one connection were answered.
    reuse: Mutex<Reuse>,
    /// Requests the server closed the connection on without an answer, twice: the
    /// server's answer to them, by cache key.
    unanswered: Mutex<HashMap<String, ProbeError>>,
    /// Which budget refused a request, once one has.
    budget_spent: Mutex<Option<ProbeError>>,
    /// When the next request may leave under `--rate`.
    next_slot: tokio::sync::Mutex<Option<tokio::time::Instant>>,
    /// The most a server counted over the suite's estimate for one request, per
    /// resource and script (at least 1): later estimates of the same kind are scaled
    /// by it, so the token budget (and `--max-cost`) is not overrun by texts that cost
    /// more tokens than their length suggests. Per kind, because what Korean cost a
    /// WordPiece vocabulary (nine times its estimate) says nothing of English, nor
    /// what embeddings cost of rerank.
    overrun: Mutex<HashMap<(Resource, Script), f64>>,
    /// The slowest pace the server has answered at: each request's deadline grows
    /// with its work at this pace.
    pace: Mutex<Pace>,
    /// Requests in flight, so a timeout on an idle server can be told from one behind
    /// other requests.
    in_flight: AtomicU64,
    /// Held for reading while a request is out, for writing while the session waits
    /// for a server to finish work it gave up on: nothing new goes out meanwhile.
    gate: tokio::sync::RwLock<()>,
}

/// How waiting for a server to finish abandoned work ended.
enum Drained {
    /// A small request was answered: the server is idle again.
    Answered,
    /// No answer within the patience, or the connection failed: it stopped answering.
    Silent,
    /// Ctrl-C, or a budget, ended the wait.
    Interrupted,
}

/// A 429 or 503 answer and the request it answered.
#[derive(Clone, Debug)]
pub(crate) struct Throttled {
    pub validity: Validity,
    pub resource: Resource,
    pub reply: Arc<Reply>,
    pub persisted: Persisted,
}

impl Throttled {
    /// The contract whose route the throttled request went to.
    pub(crate) fn contract(&self) -> Option<ContractId> {
        self.resource.route().map(|r| r.contract)
    }
}

/// Whether a 429 went away when waited out or retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Persisted {
    /// Waited out, or not a 429.
    No,
    /// Still answered after the run's retry wait was spent: the request was given up.
    PastRetryWait,
    /// Answered again at once while a valid request sent in between succeeded: a
    /// refusal, not throttling.
    WhileValidSucceeded,
}

/// Says a request in the dialect the session's server speaks, once the contract has
/// learned which: rerank's clauses write Cohere's, and TEI's servers read another.
/// A contract whose servers speak several installs one, so that its clauses write each
/// request once; it returns a request that is not its contract's as it is, and
/// [`ProbeError::NotInDialect`] for one that has no meaning in the server's dialect.
pub(crate) type Dialect = fn(&Session, Probe) -> Result<Probe, ProbeError>;

/// What the session asks of the contracts it carries, installed by the audit.
pub(crate) struct Hooks {
    /// How each contract says a request in the server's dialect.
    pub dialects: Vec<Dialect>,
    /// A small request of the contract audited first, sent after requests timed out
    /// until the server answers one: what tells a busy server from a dead one.
    pub small_request: fn(&Session) -> Probe,
}

/// Keeps `probe` as the last valid request to its resource that succeeded, each
/// resource where it first succeeded in the list.
fn remember_success(successes: &mut Vec<(Resource, Probe)>, probe: &Probe) {
    match successes.iter_mut().find(|(r, _)| *r == probe.resource) {
        Some((_, kept)) => *kept = probe.clone(),
        None => successes.push((probe.resource, probe.clone())),
    }
}

/// Before an audit installs its contracts': no dialects, and `GET /models` as the
/// small request.
impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            dialects: Vec::new(),
            small_request: |_| Probe::list_models(),
        }
    }
}

/// Requests in a row without an answer after which a server is taken to have stopped
/// answering embeddings requests: a few, so a dead server costs seconds, not a run.
const STALL_AFTER: u64 = 3;

impl Session {
    pub fn new(transport: Transport, settings: Settings, interrupt: Interrupt) -> Self {
        Session {
            transport,
            settings,
            interrupt,
            requests: AtomicU64::new(0),
            tokens: AtomicU64::new(0),
            uploaded: AtomicU64::new(0),
            cache: Mutex::default(),
            log: Mutex::default(),
            pending: Mutex::default(),
            facts: Mutex::default(),
            hooks: Hooks::default(),
            waited_for_429: Mutex::default(),
            throttled: Mutex::default(),
            down_after: Mutex::default(),
            current_clause: Mutex::default(),
            unanswered_in_a_row: AtomicU64::new(0),
            stalled: Mutex::default(),
            last_valid_success: Mutex::default(),
            budget_spent: Mutex::default(),
            reuse: Mutex::default(),
            unanswered: Mutex::default(),
            next_slot: tokio::sync::Mutex::default(),
            overrun: Mutex::default(),
            pace: Mutex::default(),
            in_flight: AtomicU64::new(0),
            gate: tokio::sync::RwLock::new(()),
        }
    }

    /// Why the session stopped sending to the server, if it did.
    pub(crate) fn stalled(&self) -> Option<String> {
        lock(&self.stalled).clone()
    }

    /// The first budget refusal, if a budget ran out.
    pub(crate) fn budget_spent(&self) -> Option<ProbeError> {
        lock(&self.budget_spent).clone()
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    pub(crate) fn model(&self) -> &str {
        self.settings.model.as_deref().unwrap_or_default()
    }

    /// Sets the model once it is known (from `--model` or `GET /models`).
    pub(crate) fn set_model(&mut self, model: String) {
        self.settings.model = Some(model);
    }

    pub fn requests_sent(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub(crate) fn tokens_used(&self) -> u64 {
        self.tokens.load(Ordering::Relaxed)
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.is_triggered()
    }

    /// Records what the running clause learned about the server.
    pub(crate) fn learn(&self, write: impl FnOnce(&mut Facts)) {
        write(&mut lock(&self.facts));
    }

    /// Everything learned so far.
    pub fn facts(&self) -> Facts {
        lock(&self.facts).clone()
    }

    /// A fact the running clause learned from one exchange.
    pub(crate) fn detected<T>(&self, value: T, exchange: &Exchange) -> Fact<T> {
        Fact {
            value,
            learned: Learned::Detected {
                clause: *lock(&self.current_clause),
                request: describe_request(exchange),
            },
        }
    }

    /// A fact the running clause found over `requests` requests.
    pub(crate) fn searched<T>(&self, value: T, requests: u32) -> Fact<T> {
        Fact {
            value,
            learned: Learned::Searched {
                clause: *lock(&self.current_clause),
                requests,
            },
        }
    }

    /// Every exchange so far, in order.
    pub fn log(&self) -> Vec<Logged> {
        lock(&self.log).iter().map(|(_, l)| l.clone()).collect()
    }

    /// Starts attributing exchanges to `clause`, and clears the pending list.
    pub(crate) fn begin_clause(&self, clause: &'static str) {
        *lock(&self.current_clause) = Some(clause);
        self.take_pending();
    }

    /// The exchanges the running clause touched; clears the list for the next clause.
    pub(crate) fn take_pending(&self) -> Vec<Exchange> {
        std::mem::take(&mut *lock(&self.pending))
    }

    /// Sends a probe (or answers it from the cache) and returns the server's answer.
    pub(crate) async fn send(&self, probe: Probe) -> Result<Arc<Reply>, ProbeError> {
        let probe = self.in_dialect(probe)?;
        let key = probe.cache_key();
        let cached = (!probe.fresh)
            .then(|| lock(&self.cache).get(&key).cloned())
            .flatten();
        if let Some(reply) = cached {
            lock(&self.pending).push(reply.exchange.clone());
            return Ok(reply);
        }
        // A request the server closed the connection on twice gets that answer again
        // without being sent a third and fourth time by the next clause that needs it.
        let known = (!probe.fresh)
            .then(|| lock(&self.unanswered).get(&key).cloned())
            .flatten();
        if let Some(unanswered) = known {
            return Err(unanswered);
        }
        let sent = self.send_waiting_out_429(&probe).await;
        if let Err(error @ ProbeError::Unanswered { .. }) = &sent {
            lock(&self.unanswered).insert(key.clone(), error.clone());
        }
        let reply = Arc::new(sent?);
        lock(&self.cache).insert(key, reply.clone());
        Ok(reply)
    }

    /// The request said in the dialect the server speaks, by each contract's
    /// [`Dialect`]; unchanged where it is to be sent as written.
    fn in_dialect(&self, mut probe: Probe) -> Result<Probe, ProbeError> {
        if probe.verbatim {
            return Ok(probe);
        }
        for say in &self.hooks.dialects {
            probe = say(self, probe)?;
        }
        Ok(probe)
    }

    /// Sends every later request by these contracts' rules.
    pub(crate) fn install(&mut self, hooks: Hooks) {
        self.hooks = hooks;
    }

    async fn send_waiting_out_429(&self, probe: &Probe) -> Result<Reply, ProbeError> {
        let mut attempt = 0u32;
        loop {
            let reply = self.send_once(probe).await?;
            let throttled = self.note_throttled(probe, &reply);
            // A spent quota is not a pace: waiting cannot help, and the audit stops on
            // it as access refused.
            if reply.status != 429 || reply.says_quota_spent() {
                return Ok(reply);
            }
            if let Some(refusal) = self.refused_with_429(probe).await? {
                return Ok(refusal);
            }
            let wait = retry_delay(&reply.asked_wait(), attempt);
            let waited = *lock(&self.waited_for_429);
            if waited + wait > self.settings.max_retry_wait {
                self.mark_persisted(throttled, Persisted::PastRetryWait);
                self.count_unanswered(|in_a_row| {
                    format!(
                        "every request is answered 429: {in_a_row} in a row after --max-retry-wait ({} s) was spent",
                        self.settings.max_retry_wait.as_secs()
                    )
                });
                return Err(ProbeError::RateLimited(waited.as_secs()));
            }
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = self.interrupt.triggered() => return Err(ProbeError::Interrupted),
            }
            *lock(&self.waited_for_429) += wait;
            attempt += 1;
        }
    }

    /// Keeps a 429 or 503 answer for ERR-011 and ERR-012; where its entry is (with
    /// requests in flight, the last entry may be another request's by the time this
    /// one gives up).
    fn note_throttled(&self, probe: &Probe, reply: &Reply) -> Option<usize> {
        matches!(reply.status, 429 | 503).then(|| {
            let mut list = lock(&self.throttled);
            list.push(Throttled {
                validity: probe.validity.clone(),
                resource: probe.resource,
                reply: Arc::new(reply.clone()),
                persisted: Persisted::No,
            });
            list.len() - 1
        })
    }

    fn mark_persisted(&self, entry: Option<usize>, how: Persisted) {
        if let Some(i) = entry
            && let Some(entry) = lock(&self.throttled).get_mut(i)
        {
            entry.persisted = how;
        }
    }

    /// A 429 may be a refusal dressed as throttling (a quota answer to a request that
    /// can never succeed: a client mistake, an input too long). It is, when the last
    /// valid request to the same resource that succeeded, sent again right after it, succeeds again against
    /// the wait the 429 asked for, and the same request sent again at once is answered
    /// 429 again: that answer comes back as
    /// the request's own (kept as persisted for ERR-011), without waiting out a
    /// Retry-After the server does not mean. Anything else is throttling, waited out
    /// as usual. (A limiter that lets one request through per window would be taken for
    /// a refusal here; one that asks for the wait it enforces is not.)
    async fn refused_with_429(&self, probe: &Probe) -> Result<Option<Reply>, ProbeError> {
        // A route never answered 200 (a rerank client's own route on a server serving
        // another) is held against the same contract's route that first was.
        let control = {
            let successes = lock(&self.last_valid_success);
            let of = |wanted: &dyn Fn(&Resource) -> bool| {
                successes
                    .iter()
                    .find(|(resource, _)| wanted(resource))
                    .map(|(_, probe)| probe.clone())
            };
            of(&|r| *r == probe.resource).or_else(|| {
                let route = probe.resource.route()?;
                of(&|r| r.route().is_some_and(|other| other.same_contract(route)))
            })
        };
        let Some(control) = control.map(Probe::fresh) else {
            return Ok(None);
        };
        if probe.cache_key() == control.cache_key() {
            return Ok(None);
        }
        let control_reply = self.send_once(&control).await?;
        if !control_reply.is_success() {
            self.note_throttled(&control, &control_reply);
            return Ok(None);
        }
        let again = self.send_once(probe).await?;
        if again.status != 429 {
            return Ok(Some(again));
        }
        let entry = self.note_throttled(probe, &again);
        self.mark_persisted(entry, Persisted::WhileValidSucceeded);
        Ok(Some(again))
    }

    /// Every 429 and 503 answer so far.
    pub(crate) fn throttled(&self) -> Vec<Throttled> {
        lock(&self.throttled).clone()
    }

    /// The probe after which the server stopped answering, if it did.
    pub(crate) fn down_after(&self) -> Option<Exchange> {
        lock(&self.down_after).clone()
    }

    /// Sends `probe` once; an answer that may be an artefact of a connection an
    /// earlier refusal left out of step is confirmed on a new connection first (see
    /// [`super::reuse`]). Once the server has desynchronised a connection, every
    /// request goes on a new one.
    async fn send_once(&self, probe: &Probe) -> Result<Reply, ProbeError> {
        let on_new = lock(&self.reuse).is_desynchronised();
        let probe = match on_new {
            true => &probe.clone().on_new_connection(),
            false => probe,
        };
        let reply = match self.send_on_wire(probe).await {
            Err(ProbeError::Transport(TransportError::Broken(_))) => {
                self.repeat_unanswered(probe).await?
            }
            sent => sent?,
        };
        let Some(before) = lock(&self.reuse).note(probe, &reply) else {
            return Ok(reply);
        };
        let repeated = self
            .send_on_wire(&probe.clone().on_new_connection())
            .await?;
        if repeated.status == reply.status {
            // The same answer twice: the log keeps one, as the server gave one.
            self.forget(&repeated);
            lock(&self.reuse).in_step(&before, &repeated);
            return Ok(reply);
        }
        self.forget(&reply);
        let desync = Desync {
            unread: before,
            artefact: reply.exchange,
            repeated: repeated.exchange.clone(),
        };
        let fact = self.detected(desync.clone(), &desync.unread);
        self.learn(|facts| facts.desynchronised = Some(fact));
        lock(&self.reuse).desynchronised(desync);
        Ok(repeated)
    }

    /// A request whose connection closed without an answer, sent once more on a new
    /// connection unless the server is down (ERR-010's case): an answer there was
    /// the connection's failure, not the server's answer; a connection closed again
    /// is the server's answer ([`ProbeError::Unanswered`]).
    async fn repeat_unanswered(&self, probe: &Probe) -> Result<Reply, ProbeError> {
        let again = probe.clone().on_new_connection();
        match self.send_on_wire(&again).await {
            Err(ProbeError::Transport(TransportError::Broken(error)))
                if self.down_after().is_none() && self.answered_any() =>
            {
                Err(ProbeError::Unanswered {
                    request: describe_request(&self.transport.planned(probe)),
                    error,
                })
            }
            sent => sent,
        }
    }

    /// Whether any request of the run got a complete answer.
    fn answered_any(&self) -> bool {
        lock(&self.log).iter().any(|(_, l)| l.reply.is_some())
    }

    /// Takes an answer out of the log, so no clause judges it: a desynchronised
    /// connection's artefact, or the confirmation that repeated an answer.
    fn forget(&self, reply: &Reply) {
        lock(&self.log).retain(|(_, logged)| {
            logged
                .reply
                .as_deref()
                .is_none_or(|r| r.connection != reply.connection || r.exchange != reply.exchange)
        });
    }

    /// The connection a server desynchronised, and the answers that showed it in step
    /// after refusals, for ERR-014.
    pub(crate) fn connection_reuse(&self) -> (Option<Desync>, Vec<(u16, Exchange)>) {
        let reuse = lock(&self.reuse);
        let in_step = reuse
            .in_step_after()
            .iter()
            .map(|(status, e)| (*status, e.clone()))
            .collect();
        (reuse.desync().cloned(), in_step)
    }

    async fn send_on_wire(&self, probe: &Probe) -> Result<Reply, ProbeError> {
        if self.interrupted() {
            return Err(ProbeError::Interrupted);
        }
        if let Some(killer) = self.down_after() {
            return Err(ProbeError::ServerDown(describe_request(&killer)));
        }
        if let Some(why) = self.stalled() {
            return Err(ProbeError::Stalled(why));
        }
        let number = self.reserve(probe)?;
        if self.settings.dry_run {
            let exchange = self.transport.planned(probe);
            self.record(number, probe, exchange, None, None);
            return Err(ProbeError::DryRun);
        }
        self.wait_for_slot().await;
        let deadline = self.deadline(probe);
        let (sent, alone) = {
            let _out = self.gate.read().await;
            let alone = self.in_flight.fetch_add(1, Ordering::Relaxed) == 0;
            let sent = tokio::select! {
                sent = self.transport.send(probe, response_limit(probe), &deadline) => sent,
                () = self.interrupt.triggered() => {
                    self.in_flight.fetch_sub(1, Ordering::Relaxed);
                    return Err(ProbeError::Interrupted);
                }
            };
            self.in_flight.fetch_sub(1, Ordering::Relaxed);
            (sent, alone)
        };
        match sent {
            Ok(reply) => {
                if reply.status != 429 {
                    self.unanswered_in_a_row.store(0, Ordering::Relaxed);
                }
                if reply.is_success() {
                    let took = Duration::from_millis(reply.exchange.millis);
                    lock(&self.pace).learn(probe.work(), took);
                }
                if reply.is_success() && probe.validity == Validity::Valid {
                    remember_success(&mut lock(&self.last_valid_success), probe);
                }
                let tokens = self.tokens_spent(probe, &reply);
                self.note_overrun(probe, tokens);
                self.tokens.fetch_add(tokens, Ordering::Relaxed);
                let answer = Some(Arc::new(reply.clone()));
                self.record(
                    number,
                    probe,
                    reply.exchange.clone(),
                    answer,
                    Some(&deadline),
                );
                Ok(reply)
            }
            Err((error, exchange)) => {
                self.record(number, probe, exchange.clone(), None, Some(&deadline));
                match &error {
                    TransportError::Timeout(deadline) => {
                        self.after_timeout(deadline, alone, exchange).await;
                    }
                    _ => self.note_if_down(&error, exchange).await,
                }
                Err(ProbeError::Transport(error))
            }
        }
    }

    /// The deadline of `probe`: `--timeout`, or longer for more work than the server
    /// has shown it can do in that time.
    fn deadline(&self, probe: &Probe) -> Deadline {
        lock(&self.pace).deadline(probe.work(), self.transport.floor())
    }

    /// A request given up on may still be being computed, and every request after it
    /// would queue behind that work and time out in turn. So nothing more goes out
    /// until the server answers a small request again ([`Session::drain`]); a server
    /// that does not, in as long again as the request was given, has stopped
    /// answering (ERR-010 names the request). Only a request that passed its own
    /// deadline alone, on an idle server, counts towards the stall.
    async fn after_timeout(&self, deadline: &Deadline, alone: bool, exchange: Exchange) {
        if !self.answered_any() {
            return self.count_unanswered(|in_a_row| {
                format!("embeddings requests time out: {in_a_row} in a row got no answer within their deadlines (the last: {deadline})")
            });
        }
        match self.drain(deadline.after).await {
            Drained::Answered if alone => self.count_unanswered(|in_a_row| {
                format!(
                    "embeddings requests time out on an idle server: {in_a_row} in a row passed their own deadlines, while small requests are answered (the last: {deadline})"
                )
            }),
            Drained::Answered | Drained::Interrupted => {}
            Drained::Silent => {
                let fact = self.detected(describe_request(&exchange), &exchange);
                self.learn(|facts| facts.server_down_after = Some(fact));
                lock(&self.down_after).get_or_insert(exchange);
            }
        }
    }

    /// Waits, sending nothing else, until the server answers a small request (any
    /// status), for at most `patience`; how it ended. The small requests are logged
    /// and counted like any other.
    async fn drain(&self, patience: Duration) -> Drained {
        let _drained = self.gate.write().await;
        let started = tokio::time::Instant::now();
        let probe = (self.hooks.small_request)(self).fresh();
        loop {
            if self.interrupted() {
                return Drained::Interrupted;
            }
            let Ok(number) = self.reserve(&probe) else {
                return Drained::Interrupted;
            };
            let deadline = self.deadline(&probe);
            let sent = tokio::select! {
                sent = self.transport.send(&probe, response_limit(&probe), &deadline) => sent,
                () = self.interrupt.triggered() => return Drained::Interrupted,
            };
            match sent {
                Ok(reply) => {
                    let exchange = reply.exchange.clone();
                    let reply = Some(Arc::new(reply));
                    self.record(number, &probe, exchange, reply, Some(&deadline));
                    return Drained::Answered;
                }
                Err((error, exchange)) => {
                    self.record(number, &probe, exchange, None, Some(&deadline));
                    let timed_out = matches!(error, TransportError::Timeout(_));
                    if !timed_out || started.elapsed() >= patience {
                        return Drained::Silent;
                    }
                }
            }
        }
    }

    /// Tokens a request spent: the server's count where USE-005 found it counts tokens
    /// (or before that is known), else the suite's own estimate, so a server that counts
    /// characters does not spend the budget five times over. A route whose contract
    /// never checks its usage (rerank's: Infinity counts characters there, 358 for 92
    /// tokens) is always charged the estimate.
    fn tokens_spent(&self, probe: &Probe, reply: &Reply) -> u64 {
        if probe.resource.route().is_some_and(|r| !r.charges_usage) {
            return if reply.is_success() {
                probe.estimated_tokens()
            } else {
                0
            };
        }
        let unit = lock(&self.facts)
            .usage_unit
            .as_ref()
            .map(|f| f.value.counts_tokens());
        let counted = reply.total_tokens().filter(|_| unit != Some(false));
        counted.unwrap_or_else(|| {
            if reply.is_success() {
                probe.estimated_tokens()
            } else {
                0
            }
        })
    }

    /// Counts one more request in a row without an answer; after [`STALL_AFTER`] the
    /// session stops sending, for the reason `why` gives.
    fn count_unanswered(&self, why: impl FnOnce(u64) -> String) {
        let in_a_row = self.unanswered_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if in_a_row >= STALL_AFTER {
            lock(&self.stalled).get_or_insert_with(|| why(in_a_row));
        }
    }

    /// After a probe got no answer from a server that answered before, asks whether
    /// the server is still there: if not, that probe is the one that took it down.
    async fn note_if_down(&self, error: &TransportError, exchange: Exchange) {
        if matches!(error, TransportError::BodyTooLarge(_)) || !self.answered_any() {
            return;
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        if self.transport.ping().await {
            return;
        }
        let fact = self.detected(describe_request(&exchange), &exchange);
        self.learn(|facts| facts.server_down_after = Some(fact));
        lock(&self.down_after).get_or_insert(exchange);
    }

    /// Counts the request against the budgets, refusing when either is spent; the
    /// request's number in sending order.
    fn reserve(&self, probe: &Probe) -> Result<u64, ProbeError> {
        let max_requests = self.settings.max_requests;
        let max_tokens = self.settings.max_tokens;
        let overrun = lock(&self.overrun)
            .get(&(probe.resource, probe.script()))
            .copied()
            .unwrap_or(1.0);
        let expected = (probe.estimated_tokens() as f64 * overrun).ceil() as u64;
        let spent = self.tokens_used();
        let upload = probe.upload_bytes();
        let uploaded = self.uploaded.load(Ordering::Relaxed);
        let refusal = if self.requests_sent() >= max_requests {
            ProbeError::RequestBudget(max_requests)
        } else if spent + expected > max_tokens {
            ProbeError::TokenBudget {
                needed: expected,
                spent,
                max: max_tokens,
            }
        } else if uploaded + upload > self.settings.max_upload_bytes {
            ProbeError::UploadBudget {
                needed: upload,
                spent: uploaded,
                max: self.settings.max_upload_bytes,
            }
        } else {
            self.uploaded.fetch_add(upload, Ordering::Relaxed);
            return Ok(self.requests.fetch_add(1, Ordering::Relaxed));
        };
        lock(&self.budget_spent).get_or_insert(refusal.clone());
        Err(refusal)
    }

    /// Learns how far the server's count exceeded the estimate for `probe`, for the
    /// later probes of its resource and script.
    fn note_overrun(&self, probe: &Probe, spent: u64) {
        let estimate = probe.estimated_tokens();
        if estimate > 0 && spent > estimate {
            let mut overruns = lock(&self.overrun);
            let overrun = overruns
                .entry((probe.resource, probe.script()))
                .or_insert(1.0);
            *overrun = overrun.max(spent as f64 / estimate as f64);
        }
    }

    /// Waits until `--rate` lets the next request leave; at once without a rate.
    async fn wait_for_slot(&self) {
        let Some(rate) = self.settings.rate.filter(|r| *r > 0.0) else {
            return;
        };
        let interval = Duration::from_secs_f64(1.0 / rate);
        let mut next = self.next_slot.lock().await;
        let now = tokio::time::Instant::now();
        let at = next.map_or(now, |t| t.max(now));
        *next = Some(at + interval);
        drop(next);
        tokio::time::sleep_until(at).await;
    }

    /// Logs the exchange of request `number` in its sending place.
    fn record(
        &self,
        number: u64,
        probe: &Probe,
        exchange: Exchange,
        reply: Option<Arc<Reply>>,
        deadline: Option<&Deadline>,
    ) {
        lock(&self.pending).push(exchange.clone());
        let logged = Logged {
            validity: probe.validity.clone(),
            resource: probe.resource,
            exchange,
            reply,
            clause: *lock(&self.current_clause),
            request_body: match &probe.body {
                // A form as evidence shows it (a file by size and digest): a log of a
                // run's 26 MB uploads would hold every one of them.
                crate::http::Body::Form(form) => Some(form.excerpt().into_bytes()),
                _ => probe.payload().map(|(bytes, _)| bytes),
            },
            deadline: deadline.cloned(),
        };
        let mut log = lock(&self.log);
        let at = log.partition_point(|(n, _)| *n < number);
        log.insert(at, (number, logged));
    }
}

/// The most body a probe's answer may have: generous for the number of inputs its
/// route counts in it (a 3072-float vector is about 64 KiB of JSON), never unbounded.
fn response_limit(probe: &Probe) -> usize {
    const PER_INPUT: usize = 128 * 1024;
    const BASE: usize = 1024 * 1024;
    let inputs = match (&probe.body, probe.resource.route()) {
        (crate::http::Body::Json(v), Some(route)) => (route.work)(v).inputs as usize,
        _ => 1,
    };
    BASE + PER_INPUT * inputs.max(1)
}

/// The wait the answer asks for (`retry-after-ms`, else `Retry-After` in seconds, as
/// the OpenAI SDKs read them), else an exponential back-off of 1, 2, 4… seconds (HTTP
/// dates are treated as absent).
fn retry_delay(asked: &AskedWait, attempt: u32) -> Duration {
    match asked {
        AskedWait::Seconds(seconds) => Duration::from_secs_f64(*seconds),
        _ => Duration::from_secs(1 << attempt.min(5)),
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it: every
/// value guarded here stays consistent between statements.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_are_honoured() {
        assert_eq!(
            retry_delay(&AskedWait::Seconds(3.0), 0),
            Duration::from_secs(3)
        );
        assert_eq!(
            retry_delay(&AskedWait::Seconds(0.25), 4),
            Duration::from_millis(250)
        );
    }

    #[test]
    fn missing_or_dated_retry_after_backs_off() {
        assert_eq!(retry_delay(&AskedWait::NotSaid, 0), Duration::from_secs(1));
        assert_eq!(retry_delay(&AskedWait::HttpDate, 2), Duration::from_secs(4));
    }

    /// A refusal says what the request would cost and what is spent, not only that
    /// a budget exists.
    #[test]
    fn a_token_budget_refusal_gives_its_figures() {
        let refusal = ProbeError::TokenBudget {
            needed: 65_000,
            spent: 41_265,
            max: 500_000,
        };
        assert_eq!(
            refusal.to_string(),
            "token budget (--max-tokens 500000): this request would need about 65000 tokens, and 41265 are spent"
        );
    }

    #[test]
    fn response_limit_grows_with_the_batch() {
        use crate::http::route::TESTING;
        let one = Probe::post(TESTING, serde_json::json!({"input": "x"}));
        let many = Probe::post(TESTING, serde_json::json!({"input": vec!["x"; 100]}));
        assert!(response_limit(&many) > 50 * response_limit(&one) / 10);
    }
}
