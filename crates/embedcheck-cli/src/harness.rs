//! The libtest face of a run: one test line per clause.
//!
//! Verdicts are reached before libtest-mimic starts (the audit is one sequential,
//! budgeted conversation with the server); each trial then reports its stored verdict,
//! so `cargo test` prints `test RESP-003 ... ok | FAILED | ignored` and its usual
//! closing line.

use embedcheck_core::audit::{ClauseResult, Gate, ServerAudit};
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::verdict::Outcome;
use libtest_mimic::{Arguments, Failed, Trial};

/// The clauses a libtest filter selects: by ID or by family name, honouring
/// `--exact` and `--skip`.
pub fn select<'a>(catalogue: &'a Catalogue, args: &Arguments) -> Vec<&'a Clause> {
    catalogue
        .clauses
        .iter()
        .filter(|c| {
            args.filter
                .as_deref()
                .is_none_or(|f| matches(c, f, args.exact))
        })
        .filter(|c| !args.skip.iter().any(|s| matches(c, s, args.exact)))
        .collect()
}

fn matches(clause: &Clause, filter: &str, exact: bool) -> bool {
    let names = [clause.id.as_str(), clause.family.as_str()];
    if exact {
        names.contains(&filter)
    } else {
        names.iter().any(|n| n.contains(filter))
    }
}

/// The filter and skips as the user gave them, for the message when they select nothing.
pub fn filter_words(args: &Arguments) -> String {
    let mut words: Vec<String> = args.filter.iter().cloned().collect();
    words.extend(args.skip.iter().map(|s| format!("--skip {s}")));
    if args.exact {
        words.push("--exact".to_owned());
    }
    words.join(" ")
}

/// Arguments for libtest-mimic once we applied the filter ourselves.
pub fn without_filters(mut args: Arguments) -> Arguments {
    args.filter = None;
    args.skip.clear();
    args.exact = false;
    args
}

/// Trials that only list the selected clauses (`--list`).
pub fn listing(selected: &[&Clause]) -> Vec<Trial> {
    selected
        .iter()
        .map(|c| Trial::test(c.id.clone(), || Ok(())))
        .collect()
}

/// One trial per result, failing exactly when the result's gate fails the run.
/// Skipped and inconclusive clauses, tolerated SHOULD/MAY failures and known failures
/// are `ignored`: the summary table above libtest's lines says why each was ignored.
pub fn trials(results: &[ClauseResult]) -> Vec<Trial> {
    named_trials(results, "")
}

/// A matrix's trials: one per (server, clause), named `label::ID` so that filters
/// still select clauses on every server.
pub fn matrix_trials(servers: &[ServerAudit]) -> Vec<Trial> {
    servers
        .iter()
        .flat_map(|s| named_trials(&s.results, &format!("{}::", s.label)))
        .collect()
}

fn named_trials(results: &[ClauseResult], prefix: &str) -> Vec<Trial> {
    results
        .iter()
        .map(|result| {
            let fails = matches!(result.gate, Gate::FailsRun | Gate::NotAsExpected);
            let ignored = !fails && result.outcome != Outcome::Pass;
            let message = match result.gate {
                Gate::NotAsExpected => format!(
                    "{} is {}, but the known-failures file expects {}: update the file (or pass --allow-fixed)",
                    result.id,
                    result.outcome.as_str(),
                    result
                        .expectation
                        .as_ref()
                        .map_or("another outcome", |m| m.expectation.expect.as_str())
                ),
                _ => embedcheck_core::report::terminal::failure_detail(result),
            };
            Trial::test(format!("{prefix}{}", result.id), move || match fails {
                true => Err(Failed::from(message)),
                false => Ok(()),
            })
            .with_ignored_flag(ignored)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Arguments {
        Arguments::from_iter(std::iter::once("t").chain(words.split_whitespace()))
    }

    fn ids(selected: Vec<&Clause>) -> Vec<String> {
        selected.into_iter().map(|c| c.id.clone()).collect()
    }

    #[test]
    fn a_family_name_selects_its_clauses() {
        let chosen = ids(select(Catalogue::shipped(), &args("consistency")));
        assert_eq!(
            chosen,
            [
                "CONS-001", "CONS-002", "CONS-003", "CONS-004", "CONS-005", "CONS-006"
            ]
        );
    }

    #[test]
    fn an_exact_id_selects_one_clause() {
        assert_eq!(
            ids(select(Catalogue::shipped(), &args("RESP-003 --exact"))),
            ["RESP-003"]
        );
    }

    #[test]
    fn skip_removes_clauses() {
        let chosen = ids(select(Catalogue::shipped(), &args("usage --skip USE-003")));
        assert_eq!(chosen, ["USE-001", "USE-002", "USE-004", "USE-005"]);
    }
}
