//! A matrix of three personas, end to end through the command line: its
//! `matrix.json` holds each server's results exactly as that server's single audit
//! with the same seed, and its `matrix.html` renders in headless Chromium with every
//! server and clause, cells that open on their evidence and filters that hide rows.

use crate::common;

use common::{out_dir, read, run};
use personas::{Persona, PersonaServer};
use serde_json::Value;
use std::path::Path;

/// The seed every audit here uses, so a matrix and single audits send the same requests.
const SEED: &str = "7";

/// What must agree between two audits of one server: every clause's outcome and reason.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (field("id"), field("outcome"), field("reason"))
        })
        .collect()
}

async fn three() -> Vec<(&'static str, PersonaServer)> {
    let personas: [(&str, Persona); 3] = [
        ("reference", personas::reference()),
        ("vllm", personas::vllm()),
        ("dynamo", personas::dynamo_vllm()),
    ];
    let mut running = Vec::new();
    for (label, persona) in personas {
        running.push((label, persona.start().await));
    }
    running
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_equals_single_audits_and_renders_in_a_browser() {
    let servers = three().await;
    let scratch = out_dir("matrix");
    let dir = scratch.path();
    let mut words: Vec<String> = Vec::new();
    for (label, server) in &servers {
        words.extend([
            "--endpoint".to_owned(),
            format!("{label}={}", server.base_url()),
        ]);
    }
    words.extend(["--seed", SEED, "--report-dir"].map(str::to_owned));
    words.push(dir.display().to_string());
    let matrix_words = words.clone();
    tokio::task::spawn_blocking(move || run(&matrix_words))
        .await
        .unwrap();
    let matrix = read(&dir.join("matrix.json"));
    let columns = matrix["servers"].as_array().expect("servers");
    assert_eq!(columns.len(), 3);

    for (i, (label, server)) in servers.iter().enumerate() {
        let single_scratch = out_dir(&format!("single-{label}"));
        let single = single_scratch.path();
        let words: Vec<String> = [
            "--endpoint".to_owned(),
            server.base_url(),
            "--label".to_owned(),
            (*label).to_owned(),
            "--seed".to_owned(),
            SEED.to_owned(),
            "--report-dir".to_owned(),
            single.display().to_string(),
        ]
        .into();
        tokio::task::spawn_blocking(move || run(&words))
            .await
            .unwrap();
        let alone = read(&single.join("report.json"));
        assert_eq!(columns[i]["label"], *label);
        assert_eq!(verdicts(&columns[i]["report"]), verdicts(&alone), "{label}");
    }
    browser_checks(dir);
}

/// Three servers of one model, one of them with vectors turned away from the model's
/// (the REF-002 breaker): the matrix compares them on the probe texts and names it,
/// in `matrix.json` and `matrix.md`; the two that agree are named by no one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_of_one_model_are_compared_and_the_outlier_named() {
    let personas = [
        ("reference", personas::reference()),
        ("drifted", personas::breaker("REF-002").expect("a breaker")),
        ("plain", personas::breaker("RESP-006").expect("a breaker")),
    ];
    let mut running = Vec::new();
    for (label, persona) in personas {
        running.push((label, persona.start().await));
    }
    let scratch = out_dir("agreement");
    let dir = scratch.path();
    let mut words: Vec<String> = Vec::new();
    for (label, server) in &running {
        words.extend([
            "--endpoint".to_owned(),
            format!("{label}={}", server.base_url()),
        ]);
    }
    words.extend(["--seed", SEED, "--report-dir"].map(str::to_owned));
    words.push(dir.display().to_string());
    words.extend(["RESP-001", "--exact"].map(str::to_owned));
    tokio::task::spawn_blocking(move || run(&words))
        .await
        .unwrap();
    let matrix = read(&dir.join("matrix.json"));
    let group = &matrix["agreement"][0];
    assert_eq!(
        group["servers"],
        serde_json::json!(["reference", "drifted", "plain"])
    );
    let outliers = group["outliers"].as_array().expect("outliers");
    assert_eq!(outliers.len(), 1, "{group}");
    assert_eq!(outliers[0]["server"], "drifted");
    let texts = outliers[0]["texts"].as_array().expect("texts");
    assert_eq!(texts.len(), group["texts"].as_u64().unwrap() as usize);
    assert!((texts[0]["cosine"].as_f64().unwrap() - 0.6).abs() < 1e-6);
    let markdown = std::fs::read_to_string(dir.join("matrix.md")).unwrap();
    assert!(markdown.contains("## Vectors across servers: embedcheck-reference"));
    assert!(
        markdown.contains("**drifted disagrees with the 2 servers that agree on"),
        "{markdown}"
    );
}

/// After opening a failing cell: filter by family, show only the rows where servers
/// differ.
const CHECKS: &str = r#"
  var rows=document.querySelectorAll('#matrix tbody tr');
  var family=document.getElementById('family');
  family.value='dimensions';family.dispatchEvent(new Event('change'));
  var shown=[].filter.call(rows,function(r){return !r.hidden;});
  out.family=shown.length>0&&shown.every(function(r){return r.dataset.family==='dimensions';})&&shown.length<rows.length;
  family.value='';family.dispatchEvent(new Event('change'));
  var differ=document.getElementById('differ');
  differ.checked=true;differ.dispatchEvent(new Event('change'));
  shown=[].filter.call(rows,function(r){return !r.hidden;});
  out.differ=shown.length>0&&shown.length<rows.length&&shown.every(function(r){return r.dataset.differs==='true';});
"#;

fn browser_checks(dir: &Path) {
    let Some(browser) = common::chromium() else {
        return;
    };
    let page = dir.join("matrix.html");
    let catalogue = embedcheck_core::catalogue::Catalogue::shipped();
    let dom = common::dom(&browser, &page);
    for label in ["reference", "vllm", "dynamo"] {
        assert!(
            dom.contains(&format!("data-server=\"{label}\"")),
            "{label} missing from the DOM"
        );
    }
    for clause in &catalogue.clauses {
        assert!(
            dom.contains(&clause.id),
            "{} missing from the DOM",
            clause.id
        );
    }
    let found = common::findings(&browser, &page, CHECKS);
    for check in ["opened", "family", "differ"] {
        assert_eq!(found[check], true, "{check}: {found}");
    }
    common::screenshots(&browser, &page, "matrix");
}
