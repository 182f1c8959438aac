//! A matrix of three personas, end to end through the command line: its
//! `matrix.json` holds each server's results exactly as that server's single audit
//! with the same seed, and its `matrix.html` renders in headless Chromium with every
//! server and clause, cells that open on their evidence and filters that hide rows.

use personas::{Persona, PersonaServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed every audit here uses, so a matrix and single audits send the same requests.
const SEED: &str = "7";

fn run(words: &[String]) {
    // Exit statuses differ by persona (the breakers fail); the reports are the subject.
    let _ = embedcheck_cli::main_with(words.iter().cloned());
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

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
    let dir = out_dir("matrix");
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
        let single = out_dir(&format!("single-{label}"));
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
    browser_checks(&dir);
}

/// Chromium, where the machine has it (CI installs Debian's `chromium`).
fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from);
    named
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.exists())
}

fn headless(browser: &Path, extra: &[&str], page: &Path) -> String {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The checks a reader's clicks would make, run in the page after its own script;
/// their findings land in `data-selftest` for `--dump-dom`.
const CHECKS: &str = r#"<script>
(function(){
  var out={};
  var failing=document.querySelector('#matrix td.cell.fail details');
  failing.querySelector('summary').click();
  var detail=failing.querySelector('.detail');
  out.opened=failing.open&&detail.offsetHeight>0&&detail.querySelectorAll('pre.evidence').length>0;
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
  document.body.setAttribute('data-selftest',JSON.stringify(out));
})();
</script></body>"#;

fn browser_checks(dir: &Path) {
    let Some(browser) = chromium() else {
        eprintln!(
            "chromium not found (set CHROMIUM or install Debian's chromium): browser checks skipped"
        );
        return;
    };
    let page = dir.join("matrix.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let catalogue = embedcheck_core::catalogue::Catalogue::shipped();
    let dom = headless(&browser, &["--dump-dom"], &page);
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
    let checked = dir.join("matrix-checks.html");
    std::fs::write(&checked, html.replace("</body>", CHECKS)).unwrap();
    let dom = headless(&browser, &["--dump-dom"], &checked);
    let found = dom
        .split("data-selftest=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(|s| s.replace("&quot;", "\""))
        .expect("the checks ran");
    let found: Value = serde_json::from_str(&found).expect("the checks' findings");
    for check in ["opened", "family", "differ"] {
        assert_eq!(found[check], true, "{check}: {found}");
    }
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("..")
        .join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for (name, size) in [("desktop", "1280,900"), ("phone", "390,844")] {
        let png = shots.join(format!("matrix-{name}.png"));
        let _ = std::fs::remove_file(&png);
        headless(
            &browser,
            &[
                &format!("--window-size={size}"),
                &format!("--screenshot={}", png.display()),
            ],
            &page,
        );
        let bytes = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        // A blank page compresses to a few kilobytes; the matrix is far more.
        assert!(bytes > 20_000, "{name} screenshot is {bytes} bytes: blank?");
    }
}
