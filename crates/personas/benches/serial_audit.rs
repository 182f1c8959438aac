//! How close an audit of a one-request-at-a-time server comes to that server's own
//! compute: the serial persona (`personas::serial_cpu`, a batch of 2048 short inputs
//! takes about 45 s) audited with the default options, its wall time over the compute
//! the persona spent on the requests it received. A serial server cannot answer faster
//! than the sum of its requests' compute, so 1.0 is the limit; time lost to requests
//! given up on and sent again, or to waits that were not needed, shows above it. The
//! target is at most 1.2. Also prints the deadlines of the largest requests.
//!
//! `cargo bench -p personas --bench serial_audit` (about two minutes). Not part of CI.

use embedcheck_core::audit::audit_session;
use embedcheck_core::catalogue::Catalogue;
use embedcheck_core::contracts;
use embedcheck_core::http::{Secret, Transport};
use embedcheck_core::session::{Interrupt, Session, Settings};
use std::time::{Duration, Instant};

/// The command line's default `--timeout`.
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let persona = personas::serial_cpu();
    let server = persona.start().await;
    let target = contracts::target(&server.base_url()).expect("a persona URL is valid");
    let key = Some(Secret::new(personas::API_KEY.to_owned()));
    let transport = Transport::new(target, key, TIMEOUT);
    let mut session = Session::new(transport, Settings::default(), Interrupt::default());
    let clauses: Vec<_> = Catalogue::shipped().clauses.iter().collect();
    let started = Instant::now();
    let audit = audit_session(&mut session, persona.name.to_owned(), &clauses).await;
    let wall = started.elapsed();
    let compute = server.compute_time();
    let inconclusive = audit
        .results
        .iter()
        .filter(|r| r.outcome == embedcheck_core::verdict::Outcome::Inconclusive)
        .count();
    println!(
        "serial_cpu, default options: {} requests, {} clauses inconclusive",
        audit.requests_sent, inconclusive
    );
    println!(
        "wall {:.1} s, the server's compute {:.1} s: ratio {:.3} (target at most 1.2)",
        wall.as_secs_f64(),
        compute.as_secs_f64(),
        wall.as_secs_f64() / compute.as_secs_f64()
    );
    let mut log = session.log();
    log.sort_by_key(|l| std::cmp::Reverse(l.exchange.millis));
    println!("the largest requests, their answer time and deadline:");
    for logged in log.iter().take(5) {
        let deadline = logged
            .deadline
            .as_ref()
            .map_or("none".to_owned(), ToString::to_string);
        println!(
            "  {:>6.1} s  {:<9} deadline {deadline}",
            logged.exchange.millis as f64 / 1000.0,
            logged.clause.unwrap_or("-"),
        );
    }
}
