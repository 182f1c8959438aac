//! Test the tester: every catalogued clause fails on its breaker persona, and the
//! reference server passes (or skips, with a reason) every clause.
//!
//! All audits run once, concurrently, and are shared by the tests below. Why each
//! breaker's clause failed, and which other clauses it also fails, is recorded in
//! `snapshots/personas/breakers.snap`, so a breaker that fails for another reason, or
//! starts to break more than it should, shows up in review.

use crate::common;

use embedcheck_core::audit::{ClauseResult, ServerAudit};
use embedcheck_core::catalogue::{Catalogue, LevelEvidence};
use embedcheck_core::profiles::{ClientProfile, Severity};
use embedcheck_core::session::Logged;
use embedcheck_core::verdict::Outcome;
use personas::Persona;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::OnceLock;
use std::time::Duration;

/// The reference server's audit and each breaker's, by clause ID, with each run's log.
struct Audits {
    reference: ServerAudit,
    breakers: BTreeMap<String, ServerAudit>,
    logs: BTreeMap<String, Vec<Logged>>,
}

/// Audits the reference server and every catalogued clause's breaker, all at once, on
/// a runtime of their own (each test has its own, and audits outlive none of them).
fn audits() -> &'static Audits {
    static AUDITS: OnceLock<Audits> = OnceLock::new();
    AUDITS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        runtime.block_on(audit_all())
    })
}

async fn audit_all() -> Audits {
    let breakers: Vec<Persona> = Catalogue::shipped()
        .clauses
        .iter()
        .filter_map(|c| personas::breaker(&c.id))
        .collect();
    let mut tasks = tokio::task::JoinSet::new();
    for persona in breakers.into_iter().chain([personas::reference()]) {
        tasks.spawn(async move {
            let settings = common::settings(&persona, true);
            let clauses = common::every_clause();
            let timeout = Duration::from_secs(10);
            (
                persona.name,
                common::audit_logged(&persona, settings, &clauses, timeout).await,
            )
        });
    }
    let mut audits = BTreeMap::new();
    let mut logs = BTreeMap::new();
    for (name, (audit, log)) in tasks.join_all().await {
        audits.insert(name.to_owned(), audit);
        logs.insert(name.to_owned(), log);
    }
    let reference = audits
        .remove("reference")
        .expect("the reference was audited");
    Audits {
        reference,
        breakers: audits,
        logs,
    }
}

/// No reason says what its own run's answers contradict (see
/// `common::contradictions`), on the reference server or any breaker.
#[test]
fn no_reason_contradicts_its_own_run_log() {
    let audits = audits();
    let all = audits
        .breakers
        .iter()
        .map(|(name, audit)| (name.as_str(), audit))
        .chain([("reference", &audits.reference)]);
    let found: Vec<String> = all
        .flat_map(|(name, audit)| {
            common::contradictions(audit, &audits.logs[name])
                .into_iter()
                .map(move |c| format!("{name}: {c}"))
        })
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

fn result<'a>(audit: &'a ServerAudit, id: &str) -> &'a ClauseResult {
    audit
        .results
        .iter()
        .find(|r| r.id == id)
        .expect("every catalogued clause has a result")
}

#[test]
fn reference_server_passes_or_skips_every_clause() {
    let audit = &audits().reference;
    assert_eq!(audit.aborted, None);
    let wrong: Vec<String> = audit
        .results
        .iter()
        .filter(|r| match r.outcome {
            Outcome::Pass => false,
            Outcome::Skip => r.reason.trim().is_empty(),
            Outcome::Fail | Outcome::Inconclusive => true,
        })
        .map(|r| format!("{} {}: {}", r.id, r.outcome.as_str(), r.reason))
        .collect();
    assert!(
        wrong.is_empty(),
        "the reference server should keep every clause: {wrong:#?}"
    );
}

#[test]
fn no_clause_lacks_a_breaker() {
    let audits = audits();
    let unbroken: Vec<String> = Catalogue::shipped()
        .clauses
        .iter()
        .filter_map(|clause| match audits.breakers.get(&clause.id) {
            None => Some(format!("{}: no breaker in personas::breaker", clause.id)),
            Some(audit) => {
                let r = result(audit, &clause.id);
                (r.outcome != Outcome::Fail).then(|| {
                    format!(
                        "{}: its breaker got {}: {}",
                        clause.id,
                        r.outcome.as_str(),
                        r.reason
                    )
                })
            }
        })
        .collect();
    assert!(
        unbroken.is_empty(),
        "clauses no persona fails: {unbroken:#?}"
    );
}

#[test]
fn every_breaker_failure_has_a_reason_and_evidence() {
    for (id, audit) in &audits().breakers {
        let r = result(audit, id);
        if r.outcome == Outcome::Fail {
            assert!(!r.reason.trim().is_empty(), "{id} failed without a reason");
            assert!(
                !r.evidence.is_empty(),
                "{id} failed without evidence: {}",
                r.reason
            );
        }
    }
}

#[test]
fn every_breaker_names_a_catalogued_clause() {
    let catalogue = Catalogue::shipped();
    let stale: Vec<&str> = personas::broken_clauses()
        .filter(|id| catalogue.get(id).is_none())
        .collect();
    assert!(
        stale.is_empty(),
        "breakers for clauses not in the catalogue: {stale:?}"
    );
}

#[test]
fn paced_counts_are_replaced_and_nothing_else() {
    assert_eq!(
        common::paced("6 of 6 throttling answers do not say when to come back; 429"),
        "[n] of [n] throttling answers do not say when to come back; 429"
    );
    assert_eq!(
        common::paced("top_n -1 answered 500"),
        "top_n -1 answered 500"
    );
    assert_eq!(
        counts_masked("46 of 46 error answers say nothing"),
        "[n] of [n] error answers say nothing"
    );
    assert_eq!(counts_masked("3 of the 5"), "3 of the 5");
}

/// `reason` with a leading "N of M" count replaced. Every breaker's audit runs at once,
/// beside the other test binaries, and how many answers a clause of the whole run's log
/// reads depends on that pace (ERR-007's breaker: 46 error answers alone, 40 beside the
/// rest; RRL-007's: 4 throttling answers one run, 6 the next), while the reason's point
/// does not.
fn counts_masked(reason: &str) -> String {
    let mut words = reason.splitn(4, ' ');
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(n), Some("of"), Some(m), Some(rest))
            if n.parse::<u32>().is_ok() && m.parse::<u32>().is_ok() =>
        {
            format!("[n] of [n] {rest}")
        }
        _ => reason.to_owned(),
    }
}

/// Records, per breaker, why its clause failed and which other clauses it fails, so a
/// review sees each breaker fail for the intended reason.
#[test]
fn breakers_fail_for_the_intended_reason() {
    let mut table = String::new();
    for (id, audit) in &audits().breakers {
        let others: Vec<&str> = audit
            .results
            .iter()
            .filter(|r| r.outcome == Outcome::Fail && r.id != *id)
            .map(|r| r.id.as_str())
            .collect();
        let shown = if others.is_empty() {
            "none".to_owned()
        } else {
            others.join(", ")
        };
        let reason = counts_masked(&result(audit, id).reason);
        let _ = writeln!(table, "{id:<9} {reason}\n          also fails: {shown}");
    }
    insta::with_settings!({
        snapshot_path => "../../../snapshots/personas",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!("breakers", table);
    });
}

/// A level grounded on a client holds only if that client's profile says so on the
/// clause's breaker and not on the reference server: `client-breaks` where the profile
/// breaks with a finding the reference does not give, `client-warns` where it warns (or
/// breaks) so. The finding's difference is the clause's quirk, whichever request the
/// client itself sent. Levels and profiles never disagree.
#[test]
fn every_client_a_level_names_reports_it_on_the_breaker() {
    let audits = audits();
    let mut wrong = Vec::new();
    for clause in &Catalogue::shipped().clauses {
        let Some(audit) = audits.breakers.get(&clause.id) else {
            continue;
        };
        for evidence in &clause.level_evidence.0 {
            let Some(name) = evidence.client() else {
                continue;
            };
            let profile = |audit: &'static ServerAudit| {
                audit.clients.iter().find(|p| p.client.name() == name)
            };
            if let Some(why) = disagreement(evidence, profile(audit), profile(&audits.reference)) {
                wrong.push(format!("{} names {name}: {why}", clause.id));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Why the breaker's `profile` does not bear out `evidence`, beside the same client's
/// profile on the reference server, if it does not.
fn disagreement(
    evidence: &LevelEvidence,
    profile: Option<&ClientProfile>,
    reference: Option<&ClientProfile>,
) -> Option<String> {
    let Some(profile) = profile else {
        return Some("no profile of it on the breaker".to_owned());
    };
    let weighs = |severity: Severity| match evidence {
        LevelEvidence::ClientBreaks { .. } => severity == Severity::Breaks,
        _ => matches!(severity, Severity::Breaks | Severity::Warning),
    };
    let on_the_reference: Vec<String> = reference.map(|r| r.because.clone()).unwrap_or_default();
    let new_finding = profile
        .findings
        .iter()
        .any(|f| weighs(f.severity()) && !on_the_reference.contains(&f.describe(profile.client)));
    (!new_finding).then(|| {
        format!(
            "its profile reports no such finding that the reference server's lacks: {}",
            profile.because.join("; ")
        )
    })
}
