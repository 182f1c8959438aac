//! Latency and throughput, measured the study's way (`--load`).
//!
//! Requests carry a batch of 8 fixture documents, as the study's client sent them.
//! Each server gets `sequential` requests one at a time and `concurrent` requests
//! from `concurrency` closed-loop workers; the whole measurement is repeated
//! (3 times by default) and the median of each figure reported beside the per-run
//! values. Each server's sequential and concurrent phases run as one block of its
//! own, and the blocks alternate (A B, then B A, …) as whole-process benchmark
//! tools alternate runs: alternating single requests between two servers that share
//! a machine measured their interference (after each request to one, the other was
//! starved for about a second), not the servers. That interference is measured once,
//! by a short request-by-request alternation, and reported beside the figures.
//!
//! Latencies go into an HDR histogram (3 significant digits, microseconds): the
//! percentiles are the histogram's, not hand-computed. Only the exchange is timed
//! (send, then read the whole body); parsing and evidence are left out, since they
//! are the suite's cost, not the server's.
//!
//! ```text
//! | server   | seq p50 | seq p99 | conc. 4 p50 | conc. 4 p99 | conc. 4 throughput |
//! | old      | 54.3 ms | 76.0 ms | 225.9 ms    | 245.9 ms    | 141.0 docs/s       |
//! ```

use super::vectors::Spread;
use crate::http::Access;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How much load to send: the study's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    pub concurrency: usize,
    pub sequential: usize,
    pub concurrent: usize,
    pub repeats: usize,
}

impl Default for LoadPlan {
    fn default() -> Self {
        LoadPlan {
            concurrency: 4,
            sequential: 30,
            concurrent: 40,
            repeats: 3,
        }
    }
}

impl LoadPlan {
    /// Requests each server receives over the whole measurement.
    pub(crate) fn requests_per_server(&self) -> u64 {
        ((self.sequential + self.concurrent) * self.repeats) as u64
    }
}

/// One server as the load generator sees it: a lean client and the bodies to send.
pub struct Loaded {
    pub label: String,
    http: reqwest::Client,
    url: url::Url,
    access: Access,
    bodies: Vec<Vec<u8>>,
    docs_per_request: usize,
}

impl Loaded {
    /// `bodies` are sent in turn; each holds `docs_per_request` inputs. The client
    /// is built as the audit's is ([`Access::client`]), headers and key included.
    pub fn new(
        label: String,
        url: url::Url,
        access: Access,
        timeout: Duration,
        bodies: Vec<Vec<u8>>,
        docs_per_request: usize,
    ) -> Loaded {
        let http = access
            .client(timeout, crate::http::access::Pool::Keep)
            .unwrap_or_default();
        Loaded {
            label,
            http,
            url,
            access,
            bodies,
            docs_per_request,
        }
    }

    /// Sends body `i` (modulo the number of bodies) and times the whole exchange.
    async fn once(&self, i: usize) -> Result<Duration, String> {
        let body = self.bodies[i % self.bodies.len().max(1)].clone();
        let started = Instant::now();
        let request = self
            .http
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let response = self
            .access
            .apply(request, crate::http::Credentials::Run)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        response.bytes().await.map_err(|e| e.to_string())?;
        let elapsed = started.elapsed();
        if status.is_success() {
            Ok(elapsed)
        } else {
            Err(format!("answered {status}"))
        }
    }
}

/// One measurement run of one phase on one server.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub docs_per_second: f64,
    pub requests: usize,
    pub errors: usize,
    /// The run's latencies, kept so a phase can report the distribution of all its
    /// runs together.
    #[serde(skip)]
    histogram: Option<Histogram<u64>>,
}

/// A phase's runs and their medians.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub docs_per_second: f64,
    pub errors: usize,
    /// Every answered request of every run together, as quantiles: what the HTML
    /// report draws. `None` when no request was answered.
    pub distribution: Option<Distribution>,
    pub runs: Vec<Run>,
}

/// Quantiles of a set of latencies, from the HDR histogram, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Distribution {
    pub requests: u64,
    pub min_ms: f64,
    pub p10_ms: f64,
    pub p25_ms: f64,
    pub p50_ms: f64,
    pub p75_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Distribution {
    fn of(histogram: &Histogram<u64>) -> Option<Distribution> {
        if histogram.is_empty() {
            return None;
        }
        let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
        Some(Distribution {
            requests: histogram.len(),
            min_ms: histogram.min() as f64 / 1000.0,
            p10_ms: ms(0.10),
            p25_ms: ms(0.25),
            p50_ms: ms(0.50),
            p75_ms: ms(0.75),
            p90_ms: ms(0.90),
            p99_ms: ms(0.99),
            max_ms: histogram.max() as f64 / 1000.0,
        })
    }
}

/// Both phases for one server.
#[derive(Clone, Debug, Serialize)]
pub struct ServerLatency {
    pub label: String,
    pub sequential: Phase,
    pub concurrent: Phase,
}

/// The latency section of a migration report.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub concurrency: usize,
    pub sequential_requests: usize,
    pub concurrent_requests: usize,
    pub repeats: usize,
    pub documents_per_request: usize,
    /// Requests the measurement sent, both servers together.
    pub requests_sent: u64,
    pub baseline: ServerLatency,
    pub candidate: ServerLatency,
    /// Sequential p50 with requests alternating one by one between the servers,
    /// beside the blocks' own: how much co-located servers slow each other down.
    pub interference: Interference,
}

/// The interference probe: sequential p50 per server, alternating request by request.
#[derive(Clone, Debug, Serialize)]
pub struct Interference {
    pub requests: usize,
    pub baseline_p50_ms: f64,
    pub candidate_p50_ms: f64,
}

/// Requests per server of the interference probe: enough for a median.
const INTERFERENCE_REQUESTS: usize = 10;

/// What one run collects before it becomes a [`Run`].
struct Tally {
    histogram: Histogram<u64>,
    errors: usize,
    busy: Duration,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            // Microseconds from 1 µs to one hour at 3 significant digits: constant
            // bounds the crate accepts.
            histogram: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("constant histogram bounds are valid"),
            errors: 0,
            busy: Duration::ZERO,
        }
    }

    fn record(&mut self, outcome: Result<Duration, String>) {
        match outcome {
            Ok(elapsed) => {
                self.histogram
                    .saturating_record(elapsed.as_micros().max(1) as u64);
                self.busy += elapsed;
            }
            Err(_) => self.errors += 1,
        }
    }

    fn merge(&mut self, other: Tally) {
        // Both histograms share bounds, so adding cannot fail.
        let _ = self.histogram.add(&other.histogram);
        self.errors += other.errors;
        self.busy += other.busy;
    }

    /// Throughput over `wall` (a concurrent phase) or, without it, over the time
    /// spent waiting for this server (a sequential phase that alternates servers).
    fn run(&self, docs_per_request: usize, wall: Option<Duration>) -> Run {
        let ok = self.histogram.len() as usize;
        let seconds = wall.unwrap_or(self.busy).as_secs_f64();
        let ms = |q: f64| self.histogram.value_at_quantile(q) as f64 / 1000.0;
        Run {
            p50_ms: if ok > 0 { ms(0.5) } else { 0.0 },
            p99_ms: if ok > 0 { ms(0.99) } else { 0.0 },
            docs_per_second: if seconds > 0.0 {
                (ok * docs_per_request) as f64 / seconds
            } else {
                0.0
            },
            requests: ok + self.errors,
            errors: self.errors,
            histogram: Some(self.histogram.clone()),
        }
    }
}

/// Measures both servers, alternating between them.
pub(crate) async fn measure_pair(
    baseline: Arc<Loaded>,
    candidate: Arc<Loaded>,
    plan: LoadPlan,
) -> Latency {
    let mut runs: [(Vec<Run>, Vec<Run>); 2] = Default::default();
    for repeat in 0..plan.repeats {
        let order = if repeat % 2 == 0 {
            [(0, &baseline), (1, &candidate)]
        } else {
            [(1, &candidate), (0, &baseline)]
        };
        for (side, server) in order {
            runs[side]
                .0
                .push(sequential(server.clone(), plan.sequential).await);
            let run = concurrent(server.clone(), plan.concurrent, plan.concurrency).await;
            runs[side].1.push(run);
        }
    }
    let probe = INTERFERENCE_REQUESTS.min(plan.sequential);
    let (b_alt, c_alt) = sequential_alternating(baseline.clone(), candidate.clone(), probe).await;
    let [(b_seq, b_conc), (c_seq, c_conc)] = runs;
    Latency {
        concurrency: plan.concurrency,
        sequential_requests: plan.sequential,
        concurrent_requests: plan.concurrent,
        repeats: plan.repeats,
        documents_per_request: baseline.docs_per_request,
        requests_sent: 2 * (plan.requests_per_server() + probe as u64),
        baseline: server_latency(&baseline.label, b_seq, b_conc),
        candidate: server_latency(&candidate.label, c_seq, c_conc),
        interference: Interference {
            requests: probe,
            baseline_p50_ms: b_alt.p50_ms,
            candidate_p50_ms: c_alt.p50_ms,
        },
    }
}

/// `n` requests to one server, one at a time.
async fn sequential(server: Arc<Loaded>, n: usize) -> Run {
    on_worker(async move {
        let started = Instant::now();
        let mut tally = Tally::new();
        for i in 0..n {
            tally.record(server.once(i).await);
        }
        tally.run(server.docs_per_request, Some(started.elapsed()))
    })
    .await
}

/// Measures one server alone (the oha comparison in `benches/`).
pub async fn measure_one(server: Arc<Loaded>, plan: LoadPlan) -> ServerLatency {
    let (mut sequential_runs, mut concurrent_runs) = (Vec::new(), Vec::new());
    for _ in 0..plan.repeats {
        sequential_runs.push(sequential(server.clone(), plan.sequential).await);
        concurrent_runs.push(concurrent(server.clone(), plan.concurrent, plan.concurrency).await);
    }
    server_latency(&server.label, sequential_runs, concurrent_runs)
}

/// `n` requests to each server, one at a time, alternating a, b, a, b…
async fn sequential_alternating(a: Arc<Loaded>, b: Arc<Loaded>, n: usize) -> (Run, Run) {
    on_worker(async move {
        let (mut ta, mut tb) = (Tally::new(), Tally::new());
        for i in 0..n {
            ta.record(a.once(i).await);
            tb.record(b.once(i).await);
        }
        (
            ta.run(a.docs_per_request, None),
            tb.run(b.docs_per_request, None),
        )
    })
    .await
}

/// Runs a measuring loop as a task of the runtime's workers, where the I/O driver
/// wakes it directly: polled from `block_on`'s thread instead, every answer costs a
/// cross-thread wake-up, which showed as 7 % on sub-millisecond requests beside oha.
async fn on_worker<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    match tokio::spawn(work).await {
        Ok(value) => value,
        // The loop only records outcomes; a panic there is a bug worth surfacing.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// `n` requests from `workers` closed-loop workers, each sending its next request
/// as soon as its previous answer is read (as oha does).
async fn concurrent(server: Arc<Loaded>, n: usize, workers: usize) -> Run {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers.max(1))
        .map(|_| {
            let (server, next) = (server.clone(), next.clone());
            tokio::spawn(async move {
                let mut tally = Tally::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return tally;
                    }
                    tally.record(server.once(i).await);
                }
            })
        })
        .collect();
    let mut total = Tally::new();
    for task in futures::future::join_all(tasks).await {
        match task {
            Ok(tally) => total.merge(tally),
            // A worker that panicked lost its requests: count them as errors.
            Err(_) => total.errors += 1,
        }
    }
    total.run(server.docs_per_request, Some(started.elapsed()))
}

fn server_latency(label: &str, sequential: Vec<Run>, concurrent: Vec<Run>) -> ServerLatency {
    ServerLatency {
        label: label.to_owned(),
        sequential: phase(sequential),
        concurrent: phase(concurrent),
    }
}

fn phase(runs: Vec<Run>) -> Phase {
    let median =
        |f: fn(&Run) -> f64| Spread::of(runs.iter().map(f).collect()).map_or(0.0, |s| s.median);
    let mut all = Tally::new().histogram;
    for histogram in runs.iter().filter_map(|r| r.histogram.as_ref()) {
        // Every run's histogram has the same bounds, so adding cannot fail.
        let _ = all.add(histogram);
    }
    Phase {
        p50_ms: median(|r| r.p50_ms),
        p99_ms: median(|r| r.p99_ms),
        docs_per_second: median(|r| r.docs_per_second),
        errors: runs.iter().map(|r| r.errors).sum(),
        distribution: Distribution::of(&all),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut tally = Tally::new();
        for ms in 1..=100u64 {
            tally.record(Ok(Duration::from_millis(ms)));
        }
        tally.record(Err("500".into()));
        let run = tally.run(8, Some(Duration::from_secs(1)));
        assert!((run.p50_ms - 50.0).abs() < 0.1, "{run:?}");
        assert!((run.p99_ms - 99.0).abs() < 0.1, "{run:?}");
        assert_eq!((run.requests, run.errors), (101, 1));
        assert!((run.docs_per_second - 800.0).abs() < 1e-9);
    }

    #[test]
    fn a_phase_distribution_pools_every_run() {
        let run = |from: u64| {
            let mut tally = Tally::new();
            for ms in from..from + 50 {
                tally.record(Ok(Duration::from_millis(ms)));
            }
            tally.run(8, None)
        };
        let d = phase(vec![run(1), run(51)]).distribution.unwrap();
        assert_eq!(d.requests, 100);
        assert!(
            (d.min_ms - 1.0).abs() < 0.01 && (d.max_ms - 100.0).abs() < 0.1,
            "{d:?}"
        );
        assert!(
            (d.p25_ms - 25.0).abs() < 0.1 && (d.p75_ms - 75.0).abs() < 0.1,
            "{d:?}"
        );
        assert!(phase(Vec::new()).distribution.is_none());
    }

    #[test]
    fn the_phase_reports_the_median_run() {
        let run = |tp: f64| Run {
            p50_ms: tp / 10.0,
            p99_ms: tp / 5.0,
            docs_per_second: tp,
            requests: 40,
            errors: 0,
            histogram: None,
        };
        let phase = phase(vec![run(139.4), run(141.2), run(141.0)]);
        assert_eq!(phase.docs_per_second, 141.0);
        assert_eq!(phase.runs.len(), 3);
    }

    #[test]
    fn the_default_plan_is_the_studys() {
        let plan = LoadPlan::default();
        assert_eq!(
            (
                plan.sequential,
                plan.concurrent,
                plan.concurrency,
                plan.repeats
            ),
            (30, 40, 4, 3)
        );
        assert_eq!(plan.requests_per_server(), 210);
    }
}
