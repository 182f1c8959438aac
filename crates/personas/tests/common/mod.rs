//! Audits a persona the way `cargo test -- --endpoint URL --api-key-env …` audits a
//! server: every catalogued clause, the personas' key, a small large-batch size (fast)
//! and a fixed seed (reproducible).
//!
//! What a client relies on is declared as the study's client did: the Qwen3 query
//! instruction behind `input_type: "query"` (`--query-instruction`), and the
//! over-length policy the persona is configured with (`--overlength`), so a server
//! that does not apply its own policy is caught. `audit_with` takes other settings and
//! a few clauses instead, for tests of one hazard.

use embedcheck_core::audit::ServerAudit;
use embedcheck_core::audit::audit_server;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::declared::{Overlength, QueryTemplate};
use embedcheck_core::http::{Secret, Target, Transport};
use embedcheck_core::reference::Reference;
use embedcheck_core::session::{Interrupt, Settings};
use personas::{API_KEY, Persona};
use reference_server::{DEFAULT_QUERY_INSTRUCTION, OverlengthPolicy};
use std::sync::Arc;
use std::time::Duration;

/// Audits `persona` on every catalogued clause with the run's settings. `aggressive`
/// also sends the probes that may take a server down.
#[allow(dead_code, reason = "hazards.rs audits with settings of its own")]
pub async fn audit(persona: &Persona, aggressive: bool) -> ServerAudit {
    let settings = Settings {
        large_batch: 64,
        seed: 7,
        aggressive,
        query_instruction: Some(qwen3_query_template()),
        overlength: match persona.config.overlength {
            OverlengthPolicy::Reject => Overlength::Reject,
            OverlengthPolicy::Truncate => Overlength::Truncate,
            OverlengthPolicy::Aggregate => Overlength::Aggregate,
        },
        // A client of an aggregating server knows the limit it chunks to.
        max_input_tokens: (persona.config.overlength == OverlengthPolicy::Aggregate)
            .then_some(persona.config.max_input_tokens as u64),
        reference: Some(known_answers(persona)),
        ..Settings::default()
    };
    let clauses: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    audit_with(persona, settings, &clauses).await
}

/// Starts `persona`, audits it on `clauses` with `settings` and the personas' key, and
/// stops it. The server's address is redacted from reasons, so results can be compared
/// across runs.
pub async fn audit_with(persona: &Persona, settings: Settings, clauses: &[&Clause]) -> ServerAudit {
    let server = persona.start().await;
    let target = Target::parse(&server.base_url()).expect("a persona URL is valid");
    let transport = Transport::new(
        target,
        Some(Secret::new(API_KEY.to_owned())),
        Duration::from_secs(10),
    );
    let mut audit = audit_server(
        transport,
        settings,
        persona.name.to_owned(),
        clauses,
        Interrupt::default(),
    )
    .await;
    let redact = |text: &mut String| *text = text.replace(&server.addr().to_string(), "[addr]");
    audit.results.iter_mut().for_each(|r| redact(&mut r.reason));
    audit
}

/// The model's own vectors for the probe texts, as `--reference` would read them.
pub fn known_answers(persona: &Persona) -> Arc<Reference> {
    let file = personas::known_answers(&persona.config);
    Arc::new(Reference::parse(&file, "the persona's known answers").expect("a valid reference"))
}

/// `Instruct: {task}\nQuery: {text}`, which the default task fills to the reference
/// server's own query instruction.
fn qwen3_query_template() -> QueryTemplate {
    format!("{DEFAULT_QUERY_INSTRUCTION}{{text}}")
        .parse()
        .expect("the template has a {text} placeholder")
}
