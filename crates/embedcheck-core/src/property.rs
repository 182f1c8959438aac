//! Property tests inside the audit: proptest strategies driven by hand.
//!
//! proptest's own `TestRunner::run` wants a synchronous test function; our cases send
//! requests through the async [`Session`](crate::session::Session). So this module
//! uses proptest only for what it is best at, generating and shrinking values, and
//! drives the loop itself:
//!
//! 1. draw `cases` values from the strategy with a runner seeded from `--seed` and the
//!    property's label (the same seed draws the same values, whichever clauses run);
//! 2. await the property on each; on the first failure,
//! 3. shrink with `simplify()` / `complicate()`, at most [`MAX_SHRINK_STEPS`] probes,
//!    keeping the smallest input that still fails.
//!
//! A failing clause then reads, for example:
//!
//! ```text
//! case 1 of 8 failed (seed 42); shrunk in 9 steps to d=1: 200 with 256 values
//! ```

use crate::session::Settings;
use crate::verdict::Verdict;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::fmt;
use std::future::Future;
use thiserror::Error;

/// Most shrink steps after a failure: each may cost a request, and budgets must hold.
/// proptest halves ranges and lengths, so 32 steps reach the minimum of most inputs.
pub(crate) const MAX_SHRINK_STEPS: u32 = 32;

/// What one generated case showed.
#[derive(Debug)]
pub(crate) enum Case<F> {
    /// The property holds for this input.
    Holds,
    /// The input does not exercise the property (say, the server refused it and
    /// another clause judges refusals).
    Inapplicable,
    /// The property fails for this input, with what went wrong.
    Fails(F),
}

/// The strategy rejected a draw (only strategies with filters do).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub(crate) struct GenerationError(pub String);

impl From<GenerationError> for crate::session::ProbeError {
    fn from(error: GenerationError) -> Self {
        crate::session::ProbeError::Generation(error.0)
    }
}

/// The outcome of a whole property.
#[derive(Debug)]
pub(crate) enum Finding<T, F> {
    /// No case failed; `applicable` of `cases` exercised the property.
    Held { cases: u32, applicable: u32 },
    /// A case failed; the smallest failing input found.
    Failed(Counterexample<T, F>),
}

/// The smallest failing input found, and how it was found.
#[derive(Debug)]
pub(crate) struct Counterexample<T, F> {
    /// The shrunk input.
    pub input: T,
    /// What failed on the shrunk input.
    pub failure: F,
    /// The first failing case (1-based) and the number of cases planned.
    pub case: u32,
    pub cases: u32,
    /// Shrink steps spent, and why shrinking ended.
    pub steps: u32,
    pub shrinking: Shrinking,
    pub seed: u64,
}

/// Why shrinking ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shrinking {
    /// No simpler input fails: the input is minimal for the strategy.
    Complete,
    /// [`MAX_SHRINK_STEPS`] were spent.
    Capped,
    /// A probe failed while shrinking (budget, network); the input is the smallest
    /// failing one seen before that.
    Stopped(String),
}

impl<T, F> Counterexample<T, F> {
    /// "case 3 of 8 failed (seed 42); shrunk in 5 steps to d=1".
    pub(crate) fn describe(&self, show: impl Fn(&T) -> String) -> String {
        let input = show(&self.input);
        let how = match &self.shrinking {
            Shrinking::Complete if self.steps == 0 => format!("minimal input {input}"),
            Shrinking::Complete => format!("shrunk in {} steps to {input}", self.steps),
            Shrinking::Capped => format!("shrunk in {} steps (the cap) to {input}", self.steps),
            Shrinking::Stopped(why) => {
                format!("shrunk in {} steps to {input} (then: {why})", self.steps)
            }
        };
        format!(
            "case {} of {} failed (seed {}); {how}",
            self.case, self.cases, self.seed
        )
    }
}

impl<T> Finding<T, Verdict> {
    /// The clause's verdict: the failing case's own verdict prefixed with how it was
    /// found (its evidence is the shrunk input's exchanges), or `held` otherwise.
    pub(crate) fn into_verdict(
        self,
        show: impl Fn(&T) -> String,
        held: impl FnOnce(u32, u32) -> Verdict,
    ) -> Verdict {
        match self.held(show) {
            Ok((cases, applicable)) => held(cases, applicable),
            Err(failed) => failed,
        }
    }

    /// The cases and applicable cases of a property that held, or the failing verdict,
    /// for clauses that judge more after the property.
    pub(crate) fn held(self, show: impl Fn(&T) -> String) -> Result<(u32, u32), Verdict> {
        match self {
            Finding::Held { cases, applicable } => Ok((cases, applicable)),
            Finding::Failed(example) => {
                let mut verdict = Verdict::fail(format!(
                    "{}: {}",
                    example.describe(show),
                    example.failure.reason
                ));
                verdict.evidence = example.failure.evidence;
                Err(verdict)
            }
        }
    }
}

/// One property of one clause: a seeded runner and the number of cases to draw.
pub(crate) struct Property {
    runner: TestRunner,
    cases: u32,
    seed: u64,
}

impl Property {
    /// A property named `label`, drawing `settings.cases` values. Clauses that pass
    /// the same label draw the same values, so they share cached answers.
    pub fn new(settings: &Settings, label: &str) -> Self {
        Property {
            runner: TestRunner::new_with_rng(Config::default(), rng(settings.seed, label)),
            cases: settings.cases,
            seed: settings.seed,
        }
    }

    /// Runs `property` on `cases` values of `strategy`, shrinking the first failure.
    /// An error from the property ends the run, except while shrinking, where the
    /// failure already found is kept.
    pub(crate) async fn check<S, F, E, P, Fut>(
        mut self,
        strategy: &S,
        mut property: P,
    ) -> Result<Finding<S::Value, F>, E>
    where
        S: Strategy,
        E: From<GenerationError> + fmt::Display,
        P: FnMut(S::Value) -> Fut,
        Fut: Future<Output = Result<Case<F>, E>>,
    {
        let mut applicable = 0;
        for case in 1..=self.cases {
            let mut tree = strategy
                .new_tree(&mut self.runner)
                .map_err(|reason| GenerationError(reason.message().to_owned()))?;
            match property(tree.current()).await? {
                Case::Holds => applicable += 1,
                Case::Inapplicable => {}
                Case::Fails(failure) => {
                    let shrunk = shrink(&mut tree, failure, &mut property).await;
                    return Ok(Finding::Failed(Counterexample {
                        case,
                        cases: self.cases,
                        seed: self.seed,
                        ..shrunk
                    }));
                }
            }
        }
        Ok(Finding::Held {
            cases: self.cases,
            applicable,
        })
    }
}

/// proptest's shrinking loop: simplify while the input still fails, complicate
/// (back off) when a simpler one passes, until the tree is exhausted or the cap is hit.
async fn shrink<V, F, E, P, Fut>(
    tree: &mut V,
    failure: F,
    property: &mut P,
) -> Counterexample<V::Value, F>
where
    V: ValueTree,
    E: fmt::Display,
    P: FnMut(V::Value) -> Fut,
    Fut: Future<Output = Result<Case<F>, E>>,
{
    let mut best = Counterexample {
        input: tree.current(),
        failure,
        case: 0,
        cases: 0,
        steps: 0,
        shrinking: Shrinking::Complete,
        seed: 0,
    };
    let mut more = tree.simplify();
    while more {
        if best.steps == MAX_SHRINK_STEPS {
            best.shrinking = Shrinking::Capped;
            break;
        }
        best.steps += 1;
        let input = tree.current();
        match property(input).await {
            Ok(Case::Fails(failure)) => {
                best.input = tree.current();
                best.failure = failure;
                more = tree.simplify();
            }
            Ok(Case::Holds | Case::Inapplicable) => more = tree.complicate(),
            Err(error) => {
                best.shrinking = Shrinking::Stopped(error.to_string());
                break;
            }
        }
    }
    best
}

/// A ChaCha generator seeded from the run's seed and the property's label, so each
/// property has its own reproducible stream.
fn rng(seed: u64, label: &str) -> TestRng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&fnv1a64(label.as_bytes()).to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// 64-bit FNV-1a: a stable hash (std's hashers may change between releases).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;
    use std::sync::Mutex;

    fn settings(seed: u64, cases: u32) -> Settings {
        Settings {
            seed,
            cases,
            ..Settings::default()
        }
    }

    /// A stand-in for a server: fails for any value above `threshold`.
    async fn above(threshold: u32, value: u32) -> Result<Case<String>, GenerationError> {
        tokio::task::yield_now().await;
        Ok(if value > threshold {
            Case::Fails(format!("{value} is too big"))
        } else {
            Case::Holds
        })
    }

    #[tokio::test]
    async fn a_failure_above_a_threshold_shrinks_to_just_above_it() {
        let finding = Property::new(&settings(7, 64), "threshold")
            .check(&(0u32..100_000), |v| above(500, v))
            .await
            .unwrap();
        let Finding::Failed(example) = finding else {
            panic!("64 cases in 0..100000 must find a value above 500");
        };
        assert_eq!(example.input, 501);
        assert_eq!(example.failure, "501 is too big");
        assert_eq!(example.shrinking, Shrinking::Complete);
        assert!(example.steps <= MAX_SHRINK_STEPS);
    }

    #[tokio::test]
    async fn a_property_that_holds_reports_its_cases() {
        let finding = Property::new(&settings(7, 10), "holds")
            .check(&(0u32..100), |v| above(1000, v))
            .await
            .unwrap();
        assert!(matches!(
            finding,
            Finding::Held {
                cases: 10,
                applicable: 10
            }
        ));
    }

    /// Every value a property was called with, in order.
    async fn drawn(seed: u64, label: &str) -> Vec<u32> {
        let seen = Mutex::new(Vec::new());
        let _ = Property::new(&settings(seed, 8), label)
            .check(&(0u32..1_000_000), |v| {
                seen.lock().unwrap().push(v);
                async { Ok::<_, GenerationError>(Case::<()>::Holds) }
            })
            .await;
        seen.into_inner().unwrap()
    }

    #[tokio::test]
    async fn the_same_seed_and_label_draw_the_same_cases() {
        assert_eq!(drawn(42, "a").await, drawn(42, "a").await);
        assert_ne!(drawn(42, "a").await, drawn(43, "a").await);
        assert_ne!(drawn(42, "a").await, drawn(42, "b").await);
    }

    #[tokio::test]
    async fn shrinking_stops_at_the_cap() {
        // Every value fails, and a vector shrinks one element at a time: more
        // steps than the cap.
        let strategy = proptest::collection::vec(0u32..10, 200..=200);
        let finding = Property::new(&settings(1, 1), "cap")
            .check(&strategy, |_| async {
                Ok::<_, GenerationError>(Case::Fails("always"))
            })
            .await
            .unwrap();
        let Finding::Failed(example) = finding else {
            panic!("an always-failing property fails");
        };
        assert_eq!(example.shrinking, Shrinking::Capped);
        assert_eq!(example.steps, MAX_SHRINK_STEPS);
    }

    #[tokio::test]
    async fn an_error_while_shrinking_keeps_the_failure_found() {
        let calls = Mutex::new(0);
        let finding = Property::new(&settings(3, 1), "stopped")
            .check(&(10u32..1000), |v| {
                let call = {
                    let mut calls = calls.lock().unwrap();
                    *calls += 1;
                    *calls
                };
                async move {
                    match call {
                        1 => Ok(Case::Fails(v)),
                        _ => Err(GenerationError("budget spent".into())),
                    }
                }
            })
            .await
            .unwrap();
        let Finding::Failed(example) = finding else {
            panic!("the first case fails");
        };
        assert_eq!(example.shrinking, Shrinking::Stopped("budget spent".into()));
        assert_eq!(example.failure, example.input);
    }

    #[tokio::test]
    async fn a_strategy_that_rejects_every_draw_is_a_generation_error() {
        let nothing = (0u32..10).prop_filter("never", |_| false);
        let result = Property::new(&settings(1, 1), "rejects")
            .check(&nothing, |_| async {
                Ok::<_, GenerationError>(Case::<()>::Holds)
            })
            .await;
        assert!(matches!(result, Err(GenerationError(_))));
    }

    #[test]
    fn a_counterexample_says_how_it_was_found() {
        let example = Counterexample {
            input: 1u32,
            failure: (),
            case: 3,
            cases: 8,
            steps: 5,
            shrinking: Shrinking::Complete,
            seed: 42,
        };
        assert_eq!(
            example.describe(|d| format!("d={d}")),
            "case 3 of 8 failed (seed 42); shrunk in 5 steps to d=1"
        );
    }
}
