//! Behaviour snapshots of a live server (`--snapshot`): every probe's exchange, in
//! normalised form, under `snapshots/<label>/`, one file per clause.
//!
//! The workflow is insta's: the first run writes `.snap.new` files to accept with
//! `cargo insta review` (or `cargo insta accept`); a later run against a new version
//! of the same server leaves `.snap.new` files exactly where behaviour changed, with
//! the diff printed. Runs are comparable only with the same `--seed`, since generated
//! inputs depend on it.

mod diff;
mod normalise;

use crate::session::Logged;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The name of the snapshot holding exchanges sent before any clause ran.
const PREFLIGHT: &str = "preflight";

/// What a snapshot run found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub dir: PathBuf,
    pub unchanged: usize,
    /// Snapshots that are new or differ from the accepted ones (a `.snap.new` each).
    pub pending: Vec<String>,
}

/// Compares every clause's exchanges in `log` with the snapshots in `dir`.
///
/// The files are insta's: `NAME.snap` holds an accepted snapshot after a `---` header,
/// and a difference is written beside it as `NAME.snap.new` (with the diff printed),
/// which `cargo insta review` or `cargo insta accept` turn into the accepted one.
pub fn record(log: &[Logged], dir: &Path) -> Summary {
    let mut summary = Summary {
        dir: dir.to_owned(),
        ..Summary::default()
    };
    if let Err(why) = fs::create_dir_all(dir) {
        eprintln!(
            "embedcheck: cannot write snapshots to {}: {why}",
            dir.display()
        );
        return summary;
    }
    for (name, content) in by_clause(log) {
        let accepted = fs::read_to_string(dir.join(format!("{name}.snap")))
            .ok()
            .map(|text| body(&text).to_owned());
        let pending = dir.join(format!("{name}.snap.new"));
        if accepted.as_deref().map(normalised) == Some(normalised(&content)) {
            let _ = fs::remove_file(&pending);
            summary.unchanged += 1;
            continue;
        }
        print!(
            "{}",
            diff::render(&name, accepted.as_deref().unwrap_or(""), &content)
        );
        let file = format!(
            "---\nsource: embedcheck --snapshot\n---\n{}\n",
            normalised(&content)
        );
        if let Err(why) = fs::write(&pending, file) {
            eprintln!("embedcheck: cannot write {}: {why}", pending.display());
        }
        summary.pending.push(name);
    }
    summary
}

/// The snapshot text after its `---` header.
fn body(file: &str) -> &str {
    let Some(rest) = file.strip_prefix("---\n") else {
        return file;
    };
    rest.find("\n---\n").map_or(rest, |end| &rest[end + 5..])
}

/// Snapshots compare without trailing blank lines, as insta compares them.
fn normalised(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
}

/// Each clause's exchanges as one text, in the order they were sent.
fn by_clause(log: &[Logged]) -> BTreeMap<String, String> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for logged in log {
        let name = logged.clause.unwrap_or(PREFLIGHT).to_owned();
        groups.entry(name).or_default().push(normalise::exchange(
            &logged.exchange.method,
            &logged.exchange.path,
            logged.request_body.as_deref(),
            logged.reply.as_deref(),
            logged.exchange.transport_error.as_deref(),
        ));
    }
    groups
        .into_iter()
        .map(|(name, texts)| (name, texts.join("\n\n")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Reply, Validity};
    use serde_json::json;
    use std::sync::Arc;

    fn logged(clause: Option<&'static str>, answer: serde_json::Value) -> Logged {
        let mut reply = Reply::json_for_test(200, answer);
        reply.exchange.millis = 17;
        Logged {
            validity: Validity::Valid,
            resource: crate::http::probe::Resource::Contract(crate::http::route::TESTING),
            exchange: reply.exchange.clone(),
            reply: Some(Arc::new(reply)),
            clause,
            request_body: Some(br#"{"input":"hello","model":"m"}"#.to_vec()),
            deadline: None,
        }
    }

    #[test]
    fn exchanges_are_grouped_by_clause_in_order() {
        let log = [
            logged(None, json!({"data": []})),
            logged(Some("RESP-001"), json!({"n": 1})),
            logged(Some("RESP-001"), json!({"n": 2})),
        ];
        let groups = by_clause(&log);
        assert_eq!(groups.keys().collect::<Vec<_>>(), ["RESP-001", "preflight"]);
        let resp = &groups["RESP-001"];
        assert!(resp.find("\"n\": 1").unwrap() < resp.find("\"n\": 2").unwrap());
        assert!(!resp.contains("17"), "timings are not part of behaviour");
    }

    #[test]
    fn only_a_changed_answer_is_pending_review() {
        let scratch = tempfile::tempdir().expect("temp dir");
        let dir = scratch.path();
        let answer = |tokens: u64| {
            [logged(
                Some("IN-001"),
                json!({"usage": {"prompt_tokens": tokens}}),
            )]
        };
        // An accepted snapshot, as `cargo insta accept` leaves it.
        let accepted = format!(
            "---\nsource: accepted\nexpression: x\n---\n{}\n",
            by_clause(&answer(3))["IN-001"]
        );
        std::fs::write(dir.join("IN-001.snap"), accepted).expect("write snapshot");
        let same = record(&answer(3), dir);
        assert_eq!((same.unchanged, same.pending.len()), (1, 0));
        let changed = record(&answer(9), dir);
        assert_eq!(
            (changed.unchanged, changed.pending),
            (0, vec!["IN-001".to_owned()])
        );
        let pending = std::fs::read_to_string(dir.join("IN-001.snap.new")).unwrap();
        assert!(pending.starts_with("---\nsource: ") && pending.contains("\"prompt_tokens\": 9"));
        // Back to the accepted behaviour: the stale pending file goes.
        record(&answer(3), dir);
        assert!(!dir.join("IN-001.snap.new").exists());
    }
}
