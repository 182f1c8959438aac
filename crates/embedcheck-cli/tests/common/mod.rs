//! What the page tests share: running the command line, and headless Chromium.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command line with `words`; the exit status differs by persona (breakers fail),
/// and the reports are the subject.
pub fn run(words: &[String]) {
    let _ = embedcheck_cli::main_without_trials(words.iter().cloned());
}

/// A directory of this test's own under the tests' temp dir, removed when it drops:
/// tests run on parallel threads, and a shared directory is one's to remove while
/// another writes into it.
pub fn out_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temp dir")
}

pub fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// Chromium, where the machine has it (CI installs Debian's `chromium`).
pub fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from);
    let found = named
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.exists());
    if found.is_none() {
        eprintln!(
            "chromium not found (set CHROMIUM or install Debian's chromium): browser checks skipped"
        );
    }
    found
}

fn headless(browser: &Path, extra: &[&str], page: &Path) -> String {
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The page's DOM after its own script ran.
pub fn dom(browser: &Path, page: &Path) -> String {
    headless(browser, &["--dump-dom"], page)
}

/// A reader's click on the first failing cell of `#matrix`: `out.opened` says whether
/// it opened on its evidence. For the start of a [`findings`] script.
pub const OPEN_A_FAILING_CELL: &str = r#"
  var out={};
  var failing=document.querySelector('#matrix td.cell.fail details');
  failing.querySelector('summary').click();
  var detail=failing.querySelector('.detail');
  out.opened=failing.open&&detail.offsetHeight>0&&detail.querySelectorAll('pre.evidence').length>0;
"#;

/// Runs `script` in a copy of `page` after the page's own script, as a reader's clicks
/// would, after [`OPEN_A_FAILING_CELL`]; the script adds its findings to `out`, which
/// lands as JSON in `body[data-selftest]`.
pub fn findings(browser: &Path, page: &Path, script: &str) -> Value {
    checks(
        browser,
        page,
        &format!("{OPEN_A_FAILING_CELL}{script}done();"),
    )
}

/// Runs `script` in a copy of `page` after the page's own script; the script fills
/// `out` and calls `done()`, which lands `out` as JSON in `body[data-selftest]`. The
/// script may open the site's other pages in frames and read them (file access from
/// files is allowed), and the browser waits for it in virtual time.
pub fn checks(browser: &Path, page: &Path, script: &str) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let checked = page.with_extension("checks.html");
    let injected = format!(
        "<script>(function(){{var out={{}};\
         function done(){{document.body.setAttribute('data-selftest',JSON.stringify(out));}}\
         {script}}})();</script></body>"
    );
    std::fs::write(&checked, html.replace("</body>", &injected)).unwrap();
    let dom = headless(
        browser,
        &[
            "--dump-dom",
            "--allow-file-access-from-files",
            "--virtual-time-budget=120000",
        ],
        &checked,
    );
    let _ = std::fs::remove_file(&checked);
    let found = dom
        .split("data-selftest=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(|s| s.replace("&quot;", "\"").replace("&amp;", "&"))
        .expect("the checks ran");
    serde_json::from_str(&found).expect("the checks' findings")
}

/// Screenshots of `page` at desktop and phone widths under `target/screenshots/`
/// (kept as CI artifacts), each checked not to be blank.
pub fn screenshots(browser: &Path, page: &Path, name: &str) {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("..")
        .join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for (width, size) in [("desktop", "1280,900"), ("phone", "390,844")] {
        let png = shots.join(format!("{name}-{width}.png"));
        let _ = std::fs::remove_file(&png);
        headless(
            browser,
            &[
                &format!("--window-size={size}"),
                &format!("--screenshot={}", png.display()),
            ],
            page,
        );
        let bytes = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        // A blank page compresses to a few kilobytes; these pages are far more.
        assert!(
            bytes > 20_000,
            "{name} {width} screenshot is {bytes} bytes: blank?"
        );
    }
}
