//! The documentation's excerpts are real runs' output, and stay so. Every block of
//! program output in `README.md` and the manual (`docs/manual/src/`) is a fenced
//! `console` block under a `<!-- held: NAME -->` line, NAME one of [`RUNS`]: each run
//! is made here, through the command line, and each of its excerpts must be what it
//! printed (its `summary.txt`, kept under `target/excerpts/`). An excerpt may leave lines out with a line `…`;
//! durations (`29.7 s`, `12 ms`) are the only figures free to differ. When the
//! reference audit gains a clause, the README's summary line fails here until it says
//! so. Figures quoted in prose from the lab's runs (`cosine 0.6042`) are held to the
//! evidence their paragraph names, and links to the files they name.

use crate::common;
use personas::Persona;
use std::path::{Path, PathBuf};

/// Who a run audits.
enum Server {
    /// The bundled reference server (no `--endpoint`).
    Bundled,
    /// A persona of a real server.
    Persona(fn() -> Persona),
    /// The persona that breaks this clause.
    Breaker(&'static str),
}

/// A run an excerpt may quote: its name, whom it audits and with which words.
struct Run {
    name: &'static str,
    server: Server,
    words: &'static [&'static str],
    /// Words of a run made first, into the same scratch folder (`DIR` stands for it):
    /// a recording the quoted run replays.
    before: &'static [&'static str],
}

const RUNS: [Run; 5] = [
    Run {
        name: "reference",
        server: Server::Bundled,
        words: &["--seed", "7"],
        before: &[],
    },
    Run {
        name: "dynamo_vllm",
        server: Server::Persona(personas::dynamo_vllm),
        words: &["--seed", "7"],
        before: &[],
    },
    Run {
        name: "infinity_reranker",
        server: Server::Persona(personas::infinity_reranker),
        words: &["--seed", "7", "rerank"],
        before: &[],
    },
    Run {
        name: "SPE-001",
        server: Server::Breaker("SPE-001"),
        words: &["--seed", "7", "speech"],
        before: &[],
    },
    Run {
        name: "reference-replay",
        server: Server::Bundled,
        words: &["--seed", "7", "--baseline", "DIR/recording"],
        before: &["--seed", "7", "--record-baseline", "DIR/recording"],
    },
];

/// One quoted block: where it is, the run it names and its lines.
struct Excerpt {
    place: String,
    run: String,
    lines: Vec<String>,
}

/// README.md and every page of the manual, each with its path from the repository.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = vec![PathBuf::from("README.md")];
    let manual = root.join("docs/manual/src");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&manual)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(&root).unwrap().to_owned())
        .collect();
    pages.sort();
    paths.extend(pages);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root.join(&p)).unwrap();
            (p.display().to_string(), text)
        })
        .collect()
}

/// Every `console` block of every document, with the run its marker names, or why a
/// block or a marker is out of place.
fn excerpts() -> Result<Vec<Excerpt>, String> {
    let mut found = Vec::new();
    for (path, text) in documents() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let place = format!("{path}:{}", i + 1);
            let marker = line
                .strip_prefix("<!-- held: ")
                .and_then(|rest| rest.strip_suffix(" -->"));
            let console = *line == "```console";
            let held_above = i > 0 && lines[i - 1].starts_with("<!-- held: ");
            match (marker, console) {
                (Some(_), _) if lines.get(i + 1) != Some(&"```console") => {
                    return Err(format!("{place}: a held marker not over a console block"));
                }
                (None, true) if !held_above => {
                    return Err(format!(
                        "{place}: a console block no run holds (put <!-- held: NAME --> over it)"
                    ));
                }
                (Some(run), _) => {
                    let body = lines[i + 2..]
                        .iter()
                        .take_while(|l| **l != "```")
                        .map(|l| (*l).to_owned())
                        .collect();
                    found.push(Excerpt {
                        place,
                        run: run.to_owned(),
                        lines: body,
                    });
                }
                _ => {}
            }
        }
    }
    Ok(found)
}

/// Durations are the only figures a run may change: `29.7 s` and `12 ms` read alike.
fn without_durations(line: &str) -> String {
    let mut out = String::new();
    let mut number = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) {
            number.push(c);
            continue;
        }
        let rest: String = std::iter::once(c).chain(chars.clone().take(3)).collect();
        let unit = [" s", " ms"].into_iter().find(|u| {
            rest.starts_with(u)
                && rest[u.len()..]
                    .chars()
                    .next()
                    .is_none_or(|n| !n.is_alphanumeric())
        });
        match unit {
            Some(unit) if !number.is_empty() => {
                out.push_str("<duration>");
                out.push_str(unit);
                for _ in 1..unit.len() {
                    chars.next();
                }
            }
            _ => {
                out.push_str(&number);
                out.push(c);
            }
        }
        number.clear();
    }
    out.push_str(&number);
    out
}

/// Whether `excerpt` is what `printed` says: its lines in order, consecutive except
/// where a line `…` leaves some out; else the first line that is not.
fn holds(excerpt: &[String], printed: &str) -> Result<(), String> {
    let printed: Vec<String> = printed.lines().map(without_durations).collect();
    let mut at = 0;
    let mut gap = true;
    for line in excerpt {
        if line == "…" {
            gap = true;
            continue;
        }
        let wanted = without_durations(line);
        let next = match gap {
            true => printed[at..]
                .iter()
                .position(|p| *p == wanted)
                .map(|i| at + i),
            false => (printed.get(at) == Some(&wanted)).then_some(at),
        };
        match next {
            Some(i) => at = i + 1,
            None => return Err(line.clone()),
        }
        gap = false;
    }
    Ok(())
}

/// Makes `run` through the command line and returns what it printed.
async fn printed(run: &Run) -> String {
    let scratch = common::out_dir(run.name);
    let dir = scratch.path().to_owned();
    let persona = match &run.server {
        Server::Bundled => None,
        Server::Persona(make) => Some(make()),
        Server::Breaker(clause) => Some(personas::breaker(clause).expect("a breaker")),
    };
    let server = match &persona {
        Some(p) => Some(p.start().await),
        None => None,
    };
    let words = |words: &[&str], reports: &str| {
        let mut all: Vec<String> = words
            .iter()
            .map(|w| w.replace("DIR", &dir.display().to_string()))
            .collect();
        if let Some(server) = &server {
            all.extend(["--endpoint".to_owned(), server.base_url()]);
        }
        all.extend([
            "--report-dir".to_owned(),
            dir.join(reports).display().to_string(),
        ]);
        all
    };
    if !run.before.is_empty() {
        let first = words(run.before, "before");
        tokio::task::spawn_blocking(move || common::run(&first))
            .await
            .unwrap();
    }
    let quoted = words(run.words, "reports");
    tokio::task::spawn_blocking(move || common::run(&quoted))
        .await
        .unwrap();
    std::fs::read_to_string(dir.join("reports/summary.txt")).expect("the run's summary.txt")
}

/// Holds every excerpt of the run named `name` to what it printed.
async fn check(name: &str) {
    let run = RUNS.iter().find(|r| r.name == name).unwrap();
    let printed = printed(run).await;
    let all = excerpts().expect("the documents' excerpts are in place");
    let mine: Vec<&Excerpt> = all.iter().filter(|e| e.run == name).collect();
    assert!(!mine.is_empty(), "no excerpt quotes the run {name}");
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("../excerpts")
        .join(format!("{name}.txt"));
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    std::fs::write(&kept, &printed).unwrap();
    for excerpt in mine {
        if let Err(line) = holds(&excerpt.lines, &printed) {
            panic!(
                "{}: the excerpt of {name} is not what it printed now, at:\n{line}\n\n\
                 What it printed is in {}",
                excerpt.place,
                kept.display()
            );
        }
    }
}

/// Every console block is held, by a run this test makes.
#[test]
fn every_excerpt_names_a_run() {
    let excerpts = excerpts().unwrap_or_else(|why| panic!("{why}"));
    for excerpt in &excerpts {
        assert!(
            RUNS.iter().any(|r| r.name == excerpt.run),
            "{}: no run named {}",
            excerpt.place,
            excerpt.run
        );
    }
}

#[test]
fn an_excerpt_holds_lines_in_order_and_durations_only_may_move() {
    let printed = "a 1.0 s\nb\nc 12 ms\nd";
    let lines = |ls: &[&str]| ls.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert_eq!(holds(&lines(&["a 29.7 s", "b"]), printed), Ok(()));
    assert_eq!(holds(&lines(&["b", "…", "d"]), printed), Ok(()));
    assert!(holds(&lines(&["b", "d"]), printed).is_err());
    assert!(holds(&lines(&["c 12 s"]), printed).is_err());
    assert_eq!(
        without_durations("137 requests, 3.9 s; x"),
        "137 requests, <duration> s; x"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_audit_is_as_quoted() {
    check("reference").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dynamo_vllm_audit_is_as_quoted() {
    check("dynamo_vllm").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_infinity_reranker_audit_is_as_quoted() {
    check("infinity_reranker").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_speech_breaker_audit_is_as_quoted() {
    check("SPE-001").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_is_as_quoted() {
    check("reference-replay").await;
}

/// Every relative link of README.md and the manual names a file or folder of the
/// repository, so moving a page or a table cannot leave a link behind.
#[test]
fn every_link_of_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (path, text) in documents() {
        let folder = root.join(&path).parent().unwrap().to_owned();
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap().split('#').next().unwrap();
            if target.is_empty() || target.contains("://") {
                continue;
            }
            assert!(
                folder.join(target).exists(),
                "{path}: the link {target} names nothing"
            );
        }
    }
}

/// The pages written from the code and the catalogue, whose figures their own tests hold.
const GENERATED: [&str; 2] = ["docs/manual/src/options.md", "docs/manual/src/clauses.md"];

/// The decimals of `text` with at least `places` digits after the point (`0.6042`).
fn decimals(text: &str, places: usize) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_digit());
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && chars[end].is_ascii_digit() {
            end += 1;
        }
        let point = end;
        if point + 1 < chars.len() && chars[point] == '.' && chars[point + 1].is_ascii_digit() {
            end += 1;
            while end < chars.len() && chars[end].is_ascii_digit() {
                end += 1;
            }
            if end - point > places {
                found.push(chars[i..end].iter().collect());
            }
        }
        i = end.max(i + 1);
    }
    found
}

/// Figures quoted in prose are the evidence's: a paragraph under `<!-- figures: PATH -->`
/// quotes only decimals that PATH holds (a published table, which its own tests hold to
/// its JSON; the lab's log; the catalogue), and a decimal of four places or more anywhere
/// else in prose is a figure nothing holds.
#[test]
fn every_figure_in_prose_is_in_the_evidence_its_marker_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (path, text) in documents() {
        if GENERATED.contains(&path.as_str()) {
            continue;
        }
        let mut held: Option<(String, String)> = None;
        let mut fenced = false;
        for (number, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if let Some(file) = line
                .strip_prefix("<!-- figures: ")
                .and_then(|rest| rest.strip_suffix(" -->"))
            {
                let evidence = std::fs::read_to_string(root.join(file))
                    .unwrap_or_else(|e| panic!("{path}:{}: {file}: {e}", number + 1));
                held = Some((file.to_owned(), evidence));
                continue;
            }
            if line.trim().is_empty() {
                held = None;
            }
            if fenced {
                continue;
            }
            match &held {
                Some((file, evidence)) => {
                    for figure in decimals(line, 3) {
                        assert!(
                            evidence.contains(&figure),
                            "{path}:{}: {figure} is not in {file}",
                            number + 1
                        );
                    }
                }
                None => {
                    let loose = decimals(line, 4);
                    assert!(
                        loose.is_empty(),
                        "{path}:{}: {loose:?}: a figure nothing holds (put <!-- figures: PATH --> over its paragraph)",
                        number + 1
                    );
                }
            }
        }
    }
}

#[test]
fn decimals_are_read_with_their_places() {
    assert_eq!(
        decimals("cosine 0.6042, 0.99 and 12.34567.", 3),
        ["0.6042", "12.34567"]
    );
    assert!(decimals("1e-5, 20 tokens. 3.", 1).is_empty());
}
