//! The migration audit against the study's servers as personas: the old FastAPI server
//! (honours `dimensions` and `input_type`, truncates, ignores `encoding_format`) and
//! Dynamo + vLLM (500 for `dimensions` and over-length input, `input_type` dropped,
//! flat errors, vectors off in the fourth decimal). Then two identical servers, which
//! must come out equivalent. The study's `report.md` is reviewed as the snapshot
//! `snapshots/report/migration.snap`. Everything is on 127.0.0.1.

use embedcheck_core::audit::audit_server;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::declared::DEFAULT_QUERY_TASK;
use embedcheck_core::http::Transport;
use embedcheck_core::migration::contract::{Judgement, Topic};
use embedcheck_core::migration::corpus::Corpus;
use embedcheck_core::migration::retrieval::Instruction;
use embedcheck_core::migration::{Migration, PairAudit, Plan, Server, audit_pair};
use embedcheck_core::report::{Comparison, Report, Tool};
use embedcheck_core::schemas::Schemas;
use embedcheck_core::session::{Interrupt, Settings};
use personas::{Persona, PersonaServer, Quirk};
use reference_server::{Config, OverlengthPolicy};
use serde_json::Value;
use std::time::Duration;

const SEED: u64 = 7;

/// A running persona and the model it serves.
struct Running {
    server: PersonaServer,
    model: String,
}

async fn start(persona: &Persona) -> Running {
    Running {
        server: persona.start().await,
        model: persona.config.model_id.clone(),
    }
}

fn server(running: &Running, label: &str) -> Server {
    Server {
        transport: Transport::new(
            contracts::target(&running.server.base_url()).unwrap(),
            None,
            Duration::from_secs(30),
        ),
        settings: Settings {
            model: Some(running.model.clone()),
            seed: SEED,
            ..Settings::default()
        }
        .with(EmbeddingsSettings {
            large_batch: 64,
            ..EmbeddingsSettings::default()
        }),
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

async fn migrate(old: &Running, new: &Running) -> PairAudit {
    audit_pair(
        server(old, "old"),
        server(new, "new"),
        &plan(),
        &every_clause(),
        Interrupt::default(),
    )
    .await
}

/// The report of `pair`, with every format written (kept under the temp dir for a
/// reader) and `report.json` checked against the published schema. The tool's version
/// is fixed, so a version bump does not churn the snapshot.
/// The pair's report, written (and checked against the schema) into a directory of
/// its own that is removed when the returned handle drops.
fn written(pair: &PairAudit, name: &str) -> (Report, tempfile::TempDir) {
    let comparison = Comparison {
        baseline: 0,
        candidate: 1,
        migration: pair.migration.clone(),
    };
    let servers = vec![pair.baseline.clone(), pair.candidate.clone()];
    let tool = Tool {
        name: "embedcheck",
        version: "0.0.0-sample",
    };
    let mut report = Report::new(tool, false, SEED, servers, vec![comparison], false);
    report.replay = pair.replay.clone();
    let dir = tempfile::Builder::new()
        .prefix(&format!("embedcheck-migration-{name}-"))
        .tempdir()
        .expect("a temp dir");
    let files =
        embedcheck_core::report::write_all(&report, dir.path()).expect("reports are written");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(files.json).unwrap()).unwrap();
    let problems = schema_problems(Schemas::report_schema_text(), &json);
    assert!(problems.is_empty(), "{problems:#?}");
    (report, dir)
}

/// What a complete JSON Schema implementation finds wrong with `instance`, one line
/// per error; empty when it is valid.
fn schema_problems(schema_text: &str, instance: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(schema_text).expect("the schema is JSON");
    let (mut schemas, mut compiler) = (boon::Schemas::new(), boon::Compiler::new());
    let location = "urn:embedcheck:report-schema";
    compiler
        .add_resource(location, schema)
        .expect("the schema is a resource");
    let index = compiler
        .compile(location, &mut schemas)
        .expect("the report schema compiles");
    match schemas.validate(instance, index) {
        Ok(()) => Vec::new(),
        Err(error) => vec![format!("{error:#}")],
    }
}

fn judgement(m: &Migration, topic: Topic) -> Judgement {
    m.contract
        .iter()
        .find(|e| e.topic == topic)
        .expect("every topic is judged")
        .judgement
}

/// `text` with what changes from run to run replaced by fixed placeholders: the
/// loopback ports, wall times (`2.1 s`) and exchange times (`7 ms`), and the audits'
/// request counts, which vary by a request or two with which pooled connection carries
/// which refusal (a refusal after a refusal on one connection is confirmed on a new one;
/// the test bounds the total instead).
fn redacted(text: &str) -> String {
    let text = after_each(text, "127.0.0.1:", |rest| {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        (digits > 0).then_some((digits, "[port]"))
    });
    let text = before_each(&text, " ms", false, "[ms]");
    let text = before_each(&text, " s", true, "[wall]");
    let text = after_each(&text, "the whole run sent ", |rest| {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        (digits > 0).then_some((digits, "[n]"))
    });
    text.lines()
        .map(|line| match line.strip_prefix(REQUESTS_ROW) {
            Some(counts) => format!("{REQUESTS_ROW}{}", audit_counts_redacted(counts)),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}

/// The migration report's row of request counts, `audit + comparison` per server.
const REQUESTS_ROW: &str = "| requests sent (audit + comparison) |";

/// ` 219 + 7 | 147 + 6 |` as ` [n] + 7 | [n] + 6 |`.
fn audit_counts_redacted(cells: &str) -> String {
    cells
        .split('|')
        .map(|cell| match cell.split_once(" + ") {
            Some((_, comparison)) => format!(" [n] + {comparison}"),
            None => cell.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// Rewrites what follows each `marker`: `replace` gets the rest of the text and says
/// how many bytes of it to replace, and with what.
fn after_each(
    text: &str,
    marker: &str,
    replace: impl Fn(&str) -> Option<(usize, &'static str)>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        rest = match replace(tail) {
            Some((len, placeholder)) => {
                out.push_str(placeholder);
                &tail[len..]
            }
            None => tail,
        };
    }
    out.push_str(rest);
    out
}

/// Replaces the number right before each `unit` (a whole word: `7 ms`, not `3 msgs`)
/// with `placeholder`; with `decimal`, only numbers with a point (`2.1 s`, as wall
/// times are written, not a `30 s` timeout).
fn before_each(text: &str, unit: &str, decimal: bool, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(unit) {
        let end = at + unit.len();
        let (head, tail) = (&rest[..at], &rest[end..]);
        let kept = head.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        let number = &head[kept.len()..];
        let is_number = number.starts_with(|c: char| c.is_ascii_digit())
            && (!decimal || number.contains('.'))
            && !tail.starts_with(|c: char| c.is_alphanumeric());
        out.push_str(if is_number { kept } else { head });
        if is_number {
            out.push_str(placeholder);
        }
        out.push_str(unit);
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[test]
fn redaction_replaces_the_audits_request_counts_only() {
    let text = "| requests sent (audit + comparison) | 219 + 7 | 147 + 6 |\nthe whole run sent 379 requests in 1.5 s\n";
    assert_eq!(
        redacted(text),
        "| requests sent (audit + comparison) | [n] + 7 | [n] + 6 |\nthe whole run sent [n] requests in [wall] s\n"
    );
}

#[test]
fn redaction_replaces_ports_and_times_only() {
    let text = "`http://127.0.0.1:41234/v1` → 200 (7 ms), 1,234 requests in 12.5 s; 3 msgs, 30 s timeout, 0.9 ms.";
    assert_eq!(
        redacted(text),
        "`http://127.0.0.1:[port]/v1` → 200 ([ms] ms), 1,234 requests in [wall] s; 3 msgs, 30 s timeout, [ms] ms."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studys_servers_reproduce_the_studys_findings() {
    let old = start(&personas::old_fastapi()).await;
    let new = start(&personas::dynamo_vllm()).await;
    let pair = migrate(&old, &new).await;
    let (report, _dir) = written(&pair, "study");
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
    for topic in Topic::all() {
        assert_eq!(
            judgement(m, topic),
            Judgement::Broken,
            "{topic:?}: {:#?}",
            m.contract
        );
    }
    // The study's third endpoint: the old server transcribed, Dynamo 1.6.1 has no
    // batch transcription route.
    let speech = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::SPEECH)
        .unwrap();
    assert!(
        speech.candidate.starts_with("404") && speech.baseline.contains("answers text"),
        "{speech:#?}"
    );
    assert!(
        m.remediation
            .iter()
            .any(|r| r.action.starts_with("keep speech-to-text on the baseline")),
        "{:#?}",
        m.remediation
    );
    let instruction = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::INSTRUCTION)
        .unwrap();
    assert!(
        instruction.candidate.contains("field ignored"),
        "{}",
        instruction.candidate
    );
    let overlength = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::OVERLENGTH)
        .unwrap();
    assert!(
        overlength
            .baseline
            .starts_with("200, truncated to 1024 tokens (found: "),
        "{}",
        overlength.baseline
    );
    // The study's old server reranked; Dynamo's vLLM backend has no rerank handler.
    let rerank = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::RERANK)
        .unwrap();
    assert!(
        rerank
            .baseline
            .starts_with("served at /v1/rerank: probabilities in [0, 1]")
            && rerank.candidate.contains(
                "not served (/v1/rerank 404, /rerank 404, /v2/rerank 404, /v1/ranking 404)"
            ),
        "{rerank:#?}"
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
        "truncate inputs to 1024 tokens with the model's tokenizer before sending",
        "do not retry 5xx",
        "decode base64",
    ] {
        assert!(
            actions.iter().any(|a| a.starts_with(expected)),
            "{expected}: {actions:#?}"
        );
    }
    assert!(m.remediation.iter().all(|r| !r.evidence.is_empty()));

    // Cost: reusing cached probes keeps the run near the two servers' audits alone.
    let alone = |running| async move {
        let Server {
            transport,
            settings,
            label,
        } = server(running, "alone");
        audit_server(
            transport,
            settings,
            label,
            &every_clause(),
            Interrupt::default(),
        )
        .await
    };
    let (old_alone, new_alone) = (alone(&old).await, alone(&new).await);
    let singles = old_alone.requests_sent + new_alone.requests_sent;
    let total = report.migration().expect("a migration").requests_sent();
    eprintln!(
        "requests: migration {total} (baseline {}, candidate {}, comparison {} + {}), single audits {} + {}",
        pair.baseline.requests_sent,
        candidate.requests_sent,
        m.requests.baseline,
        m.requests.candidate,
        old_alone.requests_sent,
        new_alone.requests_sent
    );
    // The comparison on top of two audits: the corpus embedded 8 a request on each side
    // (13 requests), recorded from the baseline and replayed on the candidate (12 more).
    assert!(total <= singles + 32, "{total} vs {singles}");

    let markdown = embedcheck_core::report::markdown::render(&report);
    insta::with_settings!({
        snapshot_path => "../../../snapshots/report",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!("migration", redacted(&markdown));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_servers_are_equivalent_and_rank_alike() {
    let a = start(&personas::reference()).await;
    let b = start(&personas::reference()).await;
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
    let speech = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::SPEECH)
        .unwrap();
    assert_eq!(speech.judgement, Judgement::Kept);
    assert!(
        speech
            .candidate
            .contains("the same words as the baseline's"),
        "{}",
        speech.candidate
    );
    assert!(m.remediation.is_empty(), "{:#?}", m.remediation);
}

/// The study's over-length hazard in small: both servers cut input at 64 tokens, the
/// old one silently, the new one with a refusal.
fn limited(overlength: OverlengthPolicy, quirks: Vec<Quirk>) -> Persona {
    Persona {
        name: "limited",
        config: Config {
            max_input_tokens: 64,
            overlength,
            ..Config::default()
        },
        quirks,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cutting_refused_documents_restores_the_old_vectors() {
    let old = start(&limited(OverlengthPolicy::Truncate, Vec::new())).await;
    let new = start(&limited(OverlengthPolicy::Reject, Vec::new())).await;
    let pair = migrate(&old, &new).await;
    let (report, _dir) = written(&pair, "fixes");
    let m = &pair.migration;
    assert!(!m.vector_equivalence.failures_candidate.is_empty());
    let f = m.fixes_applied.as_ref().expect("documents to cut");
    assert_eq!(f.embedded, f.documents, "{f:#?}");
    assert!(!f.cut.is_empty() && f.cut.iter().all(|c| c.kept < c.chars));
    assert!(f.restored, "{f:#?}");
    let markdown = embedcheck_core::report::markdown::render(&report);
    assert!(
        markdown.contains("the migrated client gets what the old one got"),
        "{markdown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_fixes_do_not_restore_is_named() {
    let drifted = vec![Quirk::DriftedVectors { cosine: 0.99 }];
    let old = start(&limited(OverlengthPolicy::Truncate, Vec::new())).await;
    let new = start(&limited(OverlengthPolicy::Reject, drifted)).await;
    let pair = migrate(&old, &new).await;
    let (report, _dir) = written(&pair, "fixes-drifted");
    let f = pair
        .migration
        .fixes_applied
        .as_ref()
        .expect("documents to cut");
    assert_eq!(f.embedded, f.documents, "{f:#?}");
    assert!(!f.restored && f.below.len() == f.compared, "{f:#?}");
    let markdown = embedcheck_core::report::markdown::render(&report);
    assert!(
        markdown.contains(&format!(
            "{} of {} documents are below",
            f.compared, f.compared
        )),
        "{markdown}"
    );
    assert!(!markdown.contains("the migrated client gets what the old one got"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_client_that_already_cuts_keeps_its_vectors() {
    let old = start(&limited(OverlengthPolicy::Reject, Vec::new())).await;
    let new = start(&limited(OverlengthPolicy::Reject, Vec::new())).await;
    let pair = migrate(&old, &new).await;
    let f = pair
        .migration
        .fixes_applied
        .as_ref()
        .expect("documents to cut");
    assert!(!f.old_client_cut.is_empty() && f.cut.is_empty(), "{f:#?}");
    assert_eq!((f.embedded, f.compared), (f.documents, f.documents));
    assert!(f.restored, "{f:#?}");
}

/// A candidate that never answers keeps nothing: neither report may say it keeps
/// everything the old client relies on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_candidate_is_not_said_to_keep_anything() {
    let old = start(&personas::old_fastapi()).await;
    let mut gone = server(&old, "gone");
    gone.transport = Transport::new(
        contracts::target("http://127.0.0.1:1/v1").unwrap(),
        None,
        Duration::from_secs(5),
    );
    let pair = audit_pair(
        server(&old, "old"),
        gone,
        &plan(),
        &every_clause(),
        Interrupt::default(),
    )
    .await;
    let (report, dir) = written(&pair, "unreachable");
    let markdown = embedcheck_core::report::markdown::render(&report);
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for text in [&markdown, &page] {
        assert!(text.contains("No expectation of the existing client was judged"));
        assert!(!text.contains("keeps everything"));
    }
}

/// Two servers of speech-to-text alone (faster-whisper-server's kind): the corpus is
/// not sent to a baseline that offers no embeddings, so the comparison is the speech
/// topic's few requests, and no vectors, fixes or recording are claimed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speech_only_pair_compares_speech_alone() {
    let speech_only = || {
        let mut persona = personas::reference();
        persona
            .quirks
            .push(Quirk::Speech(personas::SpeechQuirk::SpeechOnly));
        persona
    };
    let (old, new) = (start(&speech_only()).await, start(&speech_only()).await);
    let pair = migrate(&old, &new).await;
    let m = &pair.migration;
    assert_eq!(judgement(m, Topic::SPEECH), Judgement::Kept);
    assert!(m.requests.baseline < 20, "{} requests", m.requests.baseline);
    assert!(m.fixes_applied.is_none());
    let not_recorded = pair.recording.as_ref().map(|_| ()).unwrap_err();
    assert!(
        not_recorded.contains("offers no embeddings"),
        "{not_recorded}"
    );
}

/// An old server whose bare input is a query, so that its client sends every document
/// with `input_type: "document"`, migrated to one that ignores `input_type`: the old
/// client's document requests go to both, the documents' vectors stay the same, the
/// query instruction is lost, and sending it as text (the fix) restores the old query
/// vectors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_bare_input_is_a_query_migrates_with_each_side_kept() {
    let old = start(&personas::asymmetric_cpu()).await;
    let ignoring = Persona {
        name: "ignores_input_type",
        quirks: vec![Quirk::IgnoreUnknownFields { keep: &[] }],
        ..personas::asymmetric_cpu()
    };
    let new = start(&ignoring).await;
    let plan = Plan {
        instruction: Instruction {
            template: "query: {text}".parse().unwrap(),
            task: DEFAULT_QUERY_TASK.to_owned(),
        },
        ..plan()
    };
    let pair = audit_pair(
        server(&old, "old"),
        server(&new, "new"),
        &plan,
        &every_clause(),
        Interrupt::default(),
    )
    .await;
    let m = &pair.migration;
    let v = &m.vector_equivalence;
    assert!(v.equivalent && v.cosine_min.unwrap() > 0.999_999, "{v:?}");
    let instruction = m
        .contract
        .iter()
        .find(|e| e.topic == Topic::INSTRUCTION)
        .unwrap();
    assert_eq!(instruction.judgement, Judgement::Broken, "{instruction:#?}");
    assert!(
        instruction
            .relies_on
            .as_deref()
            .is_some_and(|r| r.contains("bare requests and `input_type: \"query\"` as queries")),
        "{instruction:#?}"
    );
    let fixed = m.fixes_applied.as_ref().expect("the instruction to move");
    assert!(fixed.restored, "{fixed:#?}");
}

/// A TEI reranker migrated to a server of Cohere's dialect at the same route: the old
/// clients send TEI's {query, texts}, the candidate does not read it, and the remedy
/// says which dialect the clients must change to. Back the other way, the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_between_rerank_dialects_names_the_client_change() {
    let tei = start(&personas::tei_reranker()).await;
    let cohere = start(&personas::vllm_reranker()).await;
    for (old, new, from, to) in [
        (
            &tei,
            &cohere,
            "TEI's dialect {query, texts}",
            "Cohere's {query, documents}",
        ),
        (
            &cohere,
            &tei,
            "Cohere's dialect {query, documents}",
            "TEI's {query, texts}",
        ),
    ] {
        let pair = migrate(old, new).await;
        let m = &pair.migration;
        let rerank = m
            .contract
            .iter()
            .find(|e| e.topic == Topic::RERANK)
            .expect("the rerank expectation");
        assert_eq!(rerank.judgement, Judgement::Broken, "{rerank:#?}");
        let remedy = m
            .remediation
            .iter()
            .find(|r| r.finding == "rerank")
            .expect("a rerank remedy");
        assert!(
            remedy.action.contains(from) && remedy.action.contains(to),
            "{}",
            remedy.action
        );
    }
}
