//! The migration audit against servers shaped like the study's: an old server that
//! honours `dimensions` and `input_type`, truncates and ignores `encoding_format`,
//! and a Dynamo-like one that answers 500 for `dimensions` and over-length input,
//! drops `input_type`, flattens errors and differs in the fourth decimal. Then two
//! identical servers, which must come out equivalent. Everything is on 127.0.0.1.

use embedcheck_core::audit::audit_server;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::declared::DEFAULT_QUERY_TASK;
use embedcheck_core::http::{Target, Transport};
use embedcheck_core::migration::contract::{Judgement, Topic};
use embedcheck_core::migration::corpus::Corpus;
use embedcheck_core::migration::retrieval::Instruction;
use embedcheck_core::migration::{Migration, PairAudit, Plan, Server, audit_pair};
use embedcheck_core::report::{Comparison, Report, Tool};
use embedcheck_core::schemas::Schemas;
use embedcheck_core::session::{Interrupt, Settings};
use reference_server::{Config, Engine, HttpRequest, OverlengthPolicy};
use serde_json::{Value, json};
use std::time::Duration;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const MODEL: &str = "Qwen/Qwen3-Embedding-0.6B";
const SEED: u64 = 7;

/// The study's model: 1,024 dimensions, inputs limited to 1,024 tokens.
fn qwen3(overlength: OverlengthPolicy, matryoshka: bool) -> Config {
    Config {
        model_id: MODEL.to_owned(),
        native_dimensions: 1024,
        max_input_tokens: 1024,
        matryoshka,
        overlength,
        ..Config::default()
    }
}

/// Which of the study's servers a responder imitates.
#[derive(Clone, Copy)]
enum Kind {
    /// The reference behaviour, untouched.
    Plain,
    /// The home-made FastAPI server: unknown fields and `encoding_format` ignored.
    OldFastapi,
    /// Dynamo 1.6.2 + vLLM: see the module doc.
    DynamoVllm,
}

struct Imitation {
    engine: Engine,
    kind: Kind,
}

impl Respond for Imitation {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut body: Option<Value> = serde_json::from_slice(&request.body).ok();
        if let (Kind::DynamoVllm, Some(b)) = (self.kind, &body)
            && b.get("dimensions").is_some()
        {
            return flat(500, "Internal server error");
        }
        if let Some(Value::Object(fields)) = &mut body {
            let keep: &[&str] = match self.kind {
                Kind::Plain => &reference_server::KNOWN_FIELDS,
                Kind::OldFastapi => &["model", "input", "dimensions", "user", "input_type"],
                Kind::DynamoVllm => &["model", "input", "encoding_format", "user"],
            };
            fields.retain(|k, _| keep.contains(&k.as_str()));
        }
        let bytes = body.map_or(request.body.clone(), |b| b.to_string().into_bytes());
        let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok());
        let answer = self.engine.handle(&HttpRequest {
            method: request.method.as_str(),
            path: request.url.path(),
            authorization: header("authorization"),
            content_type: header("content-type"),
            body: &bytes,
        });
        let mut json: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
        match self.kind {
            Kind::DynamoVllm
                if answer.status == 400
                    && json.pointer("/error/code") == Some(&json!("context_length_exceeded")) =>
            {
                flat(500, "Internal server error")
            }
            Kind::DynamoVllm if answer.status >= 400 => flat(
                answer.status,
                json.pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            Kind::DynamoVllm => {
                perturb(&mut json);
                ResponseTemplate::new(answer.status).set_body_json(json)
            }
            _ => {
                ResponseTemplate::new(answer.status).set_body_raw(answer.body, answer.content_type)
            }
        }
    }
}

/// Dynamo's frontend writes errors flat, and client mistakes it did not catch as 500.
fn flat(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"message": message, "type": "Internal Server Error", "code": status}))
}

/// A different runtime's numerics: every component moved by a deterministic amount
/// around 0.001, then re-normalised (cosine ≈ 0.9998 to the original).
fn perturb(body: &mut Value) {
    let Some(items) = body.get_mut("data").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items {
        let Some(values) = item.get_mut("embedding").and_then(Value::as_array_mut) else {
            continue;
        };
        let moved: Vec<f64> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let x = v.as_f64().unwrap_or(0.0);
                let h = (x.to_bits() ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                x + 0.002 * (h as f64 / (1u64 << 24) as f64 - 0.5)
            })
            .collect();
        let norm = moved.iter().map(|x| x * x).sum::<f64>().sqrt();
        *values = moved.iter().map(|x| json!(x / norm)).collect();
    }
}

async fn start(config: Config, kind: Kind) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(Imitation {
            engine: Engine::new(config),
            kind,
        })
        .mount(&server)
        .await;
    server
}

fn server(base: &str, label: &str) -> Server {
    Server {
        transport: Transport::new(
            Target::parse(&format!("{base}/v1")).unwrap(),
            None,
            Duration::from_secs(30),
        ),
        settings: Settings {
            model: Some(MODEL.to_owned()),
            large_batch: 64,
            seed: SEED,
            ..Settings::default()
        },
        label: label.to_owned(),
    }
}

fn plan() -> Plan {
    Plan {
        corpus: Corpus::shipped(),
        instruction: Instruction {
            template: Instruction::QWEN3_TEMPLATE.parse().unwrap(),
            task: DEFAULT_QUERY_TASK.to_owned(),
        },
        top_k: 5,
        load: None,
        timeout: Duration::from_secs(30),
    }
}

fn every_clause() -> Vec<&'static Clause> {
    Catalogue::shipped().clauses.iter().collect()
}

async fn migrate(old: &MockServer, new: &MockServer) -> PairAudit {
    audit_pair(
        server(&old.uri(), "old"),
        server(&new.uri(), "new"),
        &plan(),
        &every_clause(),
        Interrupt::default(),
    )
    .await
}

/// Writes every report format (kept under the temp dir for a reader) and checks
/// `report.json` against the published schema.
fn written(pair: &PairAudit, name: &str) -> Report {
    let comparison = Comparison {
        baseline: 0,
        candidate: 1,
        migration: pair.migration.clone(),
    };
    let servers = vec![pair.baseline.clone(), pair.candidate.clone()];
    let report = Report::new(Tool::this(), false, SEED, servers, vec![comparison], false);
    let dir = std::env::temp_dir().join(format!("embedcheck-migration-{name}"));
    let files = embedcheck_core::report::write_all(&report, &dir).expect("reports are written");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(files.json).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(Schemas::report_schema_text()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the report schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    report
}

fn judgement(m: &Migration, topic: Topic) -> Judgement {
    m.contract
        .iter()
        .find(|e| e.topic == topic)
        .expect("every topic is judged")
        .judgement
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studys_servers_reproduce_the_studys_findings() {
    let old = start(qwen3(OverlengthPolicy::Truncate, true), Kind::OldFastapi).await;
    let new = start(qwen3(OverlengthPolicy::Reject, false), Kind::DynamoVllm).await;
    let pair = migrate(&old, &new).await;
    let report = written(&pair, "study");
    let (m, candidate) = (&pair.migration, &pair.candidate);

    // The vectors matched.
    let v = &m.vector_equivalence;
    assert_eq!(
        (v.dimensions_baseline, v.dimensions_candidate),
        (Some(1024), Some(1024))
    );
    assert_eq!(v.tokens_baseline, v.tokens_candidate);
    assert!(v.token_differences.is_empty());
    assert!((v.norm_candidate.unwrap() - 1.0).abs() < 1e-6);
    let (min, max) = (v.cosine_min.unwrap(), v.cosine_max.unwrap());
    assert!(min >= 0.999 && max < 1.0, "{v:?}");
    assert!(v.equivalent);

    // Same request, different answer.
    for topic in [
        Topic::Matryoshka,
        Topic::Instruction,
        Topic::Overlength,
        Topic::Encoding,
        Topic::ErrorShape,
        Topic::ServerErrors,
    ] {
        assert_eq!(
            judgement(m, topic),
            Judgement::Broken,
            "{topic:?}: {:#?}",
            m.contract
        );
    }
    let instruction = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::Instruction)
        .unwrap();
    assert!(
        instruction.candidate.contains("field ignored"),
        "{}",
        instruction.candidate
    );
    let overlength = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::Overlength)
        .unwrap();
    assert!(
        overlength
            .baseline
            .starts_with("200, truncated to 1024 tokens (found: "),
        "{}",
        overlength.baseline
    );
    assert!(m.behaviour_diff.differing > 0 && m.behaviour_diff.verdicts_changed > 0);

    // The dropped instruction is a number, and the client-side fix works.
    let effect = &m.retrieval.instruction;
    assert!(effect.dropped.unwrap().median < 0.9, "{effect:?}");
    assert!(effect.client_prefixed.unwrap().min > 0.999, "{effect:?}");
    assert!(effect.both_bare.unwrap().min > 0.999, "{effect:?}");

    // What to change, each from a finding.
    let actions: Vec<&str> = m.remediation.iter().map(|r| r.action.as_str()).collect();
    for expected in [
        "stop sending `dimensions`",
        "prepend the query instruction yourself",
        "truncate inputs to 1024 tokens before sending",
        "do not retry 5xx",
        "decode base64",
    ] {
        assert!(
            actions.iter().any(|a| a.starts_with(expected)),
            "{expected}: {actions:#?}"
        );
    }
    assert!(m.remediation.iter().all(|r| !r.evidence.is_empty()));

    // Cost: reusing cached probes keeps the run near two audits.
    let single = audit_server(
        server(&new.uri(), "alone").transport,
        server(&new.uri(), "alone").settings,
        "alone".into(),
        &every_clause(),
        Interrupt::default(),
    )
    .await;
    let total = report.migration().expect("a migration").requests_sent();
    eprintln!(
        "requests: migration {total} (baseline {}, candidate {}, comparison {} + {}), single audit {}",
        pair.baseline.requests_sent,
        candidate.requests_sent,
        m.requests.baseline,
        m.requests.candidate,
        single.requests_sent
    );
    assert!(
        total <= 2 * single.requests_sent + 20,
        "{total} vs {}",
        single.requests_sent
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_servers_are_equivalent_and_rank_alike() {
    let a = start(qwen3(OverlengthPolicy::Truncate, true), Kind::Plain).await;
    let b = start(qwen3(OverlengthPolicy::Truncate, true), Kind::Plain).await;
    let pair = migrate(&a, &b).await;
    written(&pair, "identical");
    let m = &pair.migration;
    let v = &m.vector_equivalence;
    assert!(v.equivalent && v.cosine_min.unwrap() > 0.999_999, "{v:?}");
    assert_eq!(
        m.behaviour_diff.differing,
        0,
        "{:#?}",
        m.behaviour_diff
            .probes
            .iter()
            .filter(|r| r.differs)
            .collect::<Vec<_>>()
    );
    assert_eq!(m.behaviour_diff.verdicts_changed, 0);
    for scenario in &m.retrieval.scenarios[1..2] {
        let agreement = scenario.versus_reference.as_ref().unwrap();
        assert!(agreement.top_hit_changed.is_empty(), "{}", scenario.name);
        assert!(
            (agreement.overlap_at_k - 1.0).abs() < 1e-12 && (agreement.kendall - 1.0).abs() < 1e-9
        );
    }
    let mixed = m
        .retrieval
        .scenario("baseline_index_candidate_queries")
        .unwrap();
    assert!(
        mixed
            .versus_reference
            .as_ref()
            .unwrap()
            .top_hit_changed
            .is_empty()
    );
    assert!(
        m.contract.iter().all(|e| e.judgement != Judgement::Broken),
        "{:#?}",
        m.contract
    );
    assert!(m.remediation.is_empty(), "{:#?}", m.remediation);
}
