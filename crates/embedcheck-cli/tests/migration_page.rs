//! A migration's `report.html`, end to end through the command line: the study's pair
//! of personas (the old FastAPI server → Dynamo + vLLM) with a small `--load`, so the
//! page has every chart. The page's text holds one dot per compared document, as
//! sent and with the fixes applied, a box per latency phase, both servers and every
//! clause; in headless Chromium a failing cell opens on its evidence, the charts have
//! a size on screen, and screenshots are taken at desktop and phone widths.

use crate::common;

use common::{out_dir, read, run};
use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migrations_page_draws_its_cosines_and_latencies() {
    let old = personas::old_fastapi().start().await;
    let new = personas::dynamo_vllm().start().await;
    let scratch = out_dir("migration-page");
    let dir = scratch.path();
    let words: Vec<String> = [
        "--endpoint",
        &new.base_url(),
        "--label",
        "dynamo",
        "--baseline",
        &old.base_url(),
        "--baseline-label",
        "fastapi",
        "--load",
        "--load-requests",
        "6,8",
        "--seed",
        "7",
        "--report-dir",
        &dir.display().to_string(),
    ]
    .map(str::to_owned)
    .into();
    tokio::task::spawn_blocking(move || run(&words))
        .await
        .unwrap();

    let report = read(&dir.join("report.json"));
    let migration = &report["migration"];
    let compared = migration["vector_equivalence"]["cosines"]
        .as_array()
        .expect("per-document cosines")
        .len();
    let fixed = migration["fixes_applied"]["cosines"]
        .as_array()
        .expect("the fixes' cosines")
        .len();
    assert!(compared > 0 && fixed > 0, "{compared} / {fixed}");
    let page_path = dir.join("report.html");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let charts: Vec<&str> = page.split("<svg class=\"chart cosines\"").skip(1).collect();
    assert_eq!(charts.len(), 2, "as sent and with the fixes applied");
    for (chart, points) in charts.iter().zip([compared, fixed]) {
        let chart = &chart[..chart.find("</svg>").unwrap()];
        assert!(chart.contains(&format!("data-points=\"{points}\"")));
        assert_eq!(chart.matches("<circle").count(), points);
    }
    assert!(
        page.contains("data-boxes=\"4\""),
        "two servers × two phases"
    );
    for label in ["fastapi", "dynamo"] {
        assert!(
            page.contains(&format!("data-server=\"{label}\"")),
            "{label}"
        );
    }
    for clause in &embedcheck_core::catalogue::Catalogue::shipped().clauses {
        assert!(page.contains(&clause.id), "{}", clause.id);
    }
    for loads in ["src=", "<link", "url(", "@import", "href="] {
        assert!(!page.contains(loads), "the page must load nothing: {loads}");
    }
    browser_checks(&page_path);
}

/// After opening a failing cell: measure the charts as laid out.
const CHECKS: &str = r#"
  var charts=document.querySelectorAll('svg.chart');
  out.charts=charts.length===3&&[].every.call(charts,function(c){var r=c.getBoundingClientRect();return r.width>200&&r.height>40;});
"#;

fn browser_checks(page: &Path) {
    let Some(browser) = common::chromium() else {
        return;
    };
    let dom = common::dom(&browser, page);
    assert!(dom.contains("Migration audit: fastapi → dynamo"));
    let found = common::findings(&browser, page, CHECKS);
    for check in ["opened", "charts"] {
        assert_eq!(found[check], true, "{check}: {found}");
    }
    common::screenshots(&browser, page, "migration");
}
