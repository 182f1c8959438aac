//! The compatibility index in a real browser: `embedcheck site` builds it from the four
//! published tables and the rerank table's earlier versions, then headless Chromium opens
//! every page, follows every link, works the home's filters, and keeps screenshots under
//! `target/screenshots/`.

use crate::common;
use std::path::{Path, PathBuf};

/// The published tables, as the manual's command names them (docs/manual/src/matrix.md).
const TABLES: [(&str, &str); 6] = [
    ("embeddings", "docs/compatibility/matrix.json"),
    (
        "qwen3-embedding-tiny",
        "docs/compatibility/qwen3-embedding-tiny/matrix.json",
    ),
    ("rerank", "docs/compatibility/rerank/matrix.json"),
    ("speech", "docs/compatibility/speech/matrix.json"),
    (
        "rerank@1.0",
        "crates/embedcheck-core/fixtures/tables/rerank-1.0.json",
    ),
    (
        "rerank@1.1",
        "crates/embedcheck-core/fixtures/tables/rerank-1.1.json",
    ),
];

/// Builds the site under `out` with the command line, as a user would.
fn build(out: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut words = vec!["site".to_owned(), out.display().to_string()];
    for (name, path) in TABLES {
        words.push(format!("{name}={}", root.join(path).display()));
    }
    common::run(&words);
}

/// Every page under `site`, as paths relative to it.
fn pages(site: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(site.join(&folder)).unwrap().flatten() {
            let relative = folder.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                folders.push(relative);
            } else if relative.extension().is_some_and(|e| e == "html") {
                found.push(relative.display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// Opens each page in a frame, one after another: each must show its heading, and each
/// of its links must name a page of the site (the browser's own resolution).
const EVERY_PAGE: &str = r#"
  var base=location.href.replace(/[^\/]*$/,''), known={}, i=0;
  PAGES.forEach(function(p){known[base+p]=true;});
  out.opened=0;out.headless=[];out.broken=[];
  function next(){
    if(i>=PAGES.length){done();return;}
    var frame=document.createElement('iframe');frame.src=PAGES[i];
    frame.onload=function(){
      var page=frame.contentDocument;
      if(page&&page.querySelector('h1'))out.opened++;else out.headless.push(PAGES[i]);
      [].forEach.call(page?page.querySelectorAll('a[href]'):[],function(a){
        if(!known[a.href.split('#')[0]])out.broken.push(PAGES[i]+' → '+a.getAttribute('href'));
      });
      frame.remove();i++;next();
    };
    document.body.appendChild(frame);
  }
  next();
"#;

/// A reader's use of the home's filters: each one hides exactly the rows (and, for the
/// contract, the columns) it does not pick.
const FILTERS: &str = r#"
  var rows=[].slice.call(document.querySelectorAll('tr[data-level]'));
  function shown(){return rows.filter(function(r){return !r.hidden;});}
  function pick(id,value){
    var e=document.getElementById(id);
    if(e.type==='checkbox')e.checked=value;else e.value=value;
    e.dispatchEvent(new Event('change'));
  }
  function only(key,value){
    var s=shown();
    return s.length>0&&s.length<rows.length&&s.length===rows.filter(function(r){return r.dataset[key]===value;}).length;
  }
  out.rows=rows.length;
  out.visible=!document.getElementById('filters').hidden;
  pick('contract','rerank');
  out.contract=only('contract','rerank');
  var columns=[].slice.call(document.querySelectorAll('td[data-contract],th[data-contract]'));
  out.columns=columns.length>0&&columns.every(function(c){
    return (getComputedStyle(c).display==='none')===(c.dataset.contract!=='rerank');
  });
  pick('contract','');
  pick('level','MUST');
  out.level=only('level','MUST');
  pick('level','');
  pick('family','dimensions');
  out.family=only('family','dimensions');
  pick('family','');
  pick('differ',true);
  out.differ=only('differs','true');
  pick('differ',false);
  out.reset=shown().length===rows.length;
  done();
"#;

#[test]
fn the_index_opens_links_and_filters_in_a_browser() {
    let out = common::out_dir("site");
    let site = out.path().join("site");
    build(&site);
    let pages = pages(&site);
    let catalogue = embedcheck_core::catalogue::Catalogue::shipped();
    assert!(
        pages.len() > catalogue.clauses.len() + 2,
        "the site has a page per clause, an index, a home and the servers: {}",
        pages.len()
    );
    let Some(browser) = common::chromium() else {
        return;
    };
    let home = site.join("index.html");
    let list = serde_json::to_string(&pages).unwrap();
    let found = common::checks(&browser, &home, &EVERY_PAGE.replace("PAGES", &list));
    assert_eq!(found["opened"], pages.len(), "{found}");
    assert_eq!(found["broken"], serde_json::json!([]), "{found}");
    let found = common::checks(&browser, &home, FILTERS);
    for check in [
        "visible", "contract", "columns", "level", "family", "differ", "reset",
    ] {
        assert_eq!(found[check], true, "{check}: {found}");
    }
    common::screenshots(&browser, &home, "site-home");
    common::screenshots(&browser, &site.join("clauses/DIM-001.html"), "site-clause");
    common::screenshots(
        &browser,
        &site.join("servers/embeddings--dynamo.html"),
        "site-server",
    );
}
