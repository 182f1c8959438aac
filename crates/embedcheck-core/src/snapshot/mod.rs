//! Behaviour snapshots of a live server (`--snapshot`): every probe's exchange, in
//! normalised form, under `snapshots/<label>/`, one file per clause.
//!
//! The workflow is insta's: the first run writes `.snap.new` files to accept with
//! `cargo insta review` (or `cargo insta accept`); a later run against a new version
//! of the same server leaves `.snap.new` files exactly where behaviour changed, with
//! the diff printed. Runs are comparable only with the same `--seed`, since generated
//! inputs depend on it.

mod normalise;

use crate::session::Logged;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
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
pub fn record(log: &[Logged], dir: &Path) -> Summary {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let mut summary = Summary {
        dir: dir.to_owned(),
        ..Summary::default()
    };
    // insta reports a difference by panicking after writing the `.snap.new` file and
    // printing the diff; the panic itself says nothing more, so it is silenced.
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    for (name, content) in by_clause(log) {
        let matched = panic::catch_unwind(AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(name.as_str(), content));
        }));
        match matched {
            Ok(()) => summary.unchanged += 1,
            Err(_) => summary.pending.push(name),
        }
    }
    panic::set_hook(previous_hook);
    summary
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
            exchange: reply.exchange.clone(),
            reply: Some(Arc::new(reply)),
            clause,
            request_body: Some(br#"{"input":"hello","model":"m"}"#.to_vec()),
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
        let dir = std::env::temp_dir().join(format!("embedcheck-snap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let answer = |tokens: u64| {
            [logged(
                Some("IN-001"),
                json!({"usage": {"prompt_tokens": tokens}}),
            )]
        };
        // An accepted snapshot, as `cargo insta accept` leaves it.
        let accepted = format!(
            "---\nsource: accepted\n---\n{}\n",
            by_clause(&answer(3))["IN-001"]
        );
        std::fs::write(dir.join("IN-001.snap"), accepted).expect("write snapshot");
        let same = record(&answer(3), &dir);
        assert_eq!((same.unchanged, same.pending.len()), (1, 0));
        let changed = record(&answer(9), &dir);
        assert_eq!(
            (changed.unchanged, changed.pending),
            (0, vec!["IN-001".to_owned()])
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
