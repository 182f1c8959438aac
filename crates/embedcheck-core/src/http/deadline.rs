//! How long the suite waits for each answer.
//!
//! One timeout for every request, "hello" and 2048 inputs alike, gives up on a slow
//! server's large batch while the server is still computing it, and every request
//! after it then queues behind the abandoned work. So a request's deadline grows with
//! the work it carries, at the pace the server's own answers have shown so far (the
//! most time an input, and a token, any answered request took), never shorter than
//! `--timeout` and never longer than [`CEILING`]:
//!
//! ```text
//! no answer within 112 s (2048 inputs at 27 ms an input, the slowest pace this
//! server has answered at so far, ×2; --timeout 30 s is the floor)
//! ```

use std::fmt;
use std::time::Duration;

/// The longest any request is waited for, however much work it carries.
pub const CEILING: Duration = Duration::from_secs(600);

/// How many times the predicted time a request is given.
const MARGIN: f64 = 2.0;

/// The work a request carries: its inputs and their estimated tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub inputs: u64,
    pub tokens: u64,
}

/// The slowest pace the server has answered at: milliseconds an input and a token.
/// Whole request times are divided, fixed costs included, so the pace errs slow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pace {
    per_input_ms: f64,
    per_token_ms: f64,
}

impl Pace {
    /// Learns from a request of `work` answered in `elapsed`.
    pub(crate) fn learn(&mut self, work: Work, elapsed: Duration) {
        let millis = elapsed.as_secs_f64() * 1000.0;
        if work.inputs > 0 {
            self.per_input_ms = self.per_input_ms.max(millis / work.inputs as f64);
        }
        if work.tokens > 0 {
            self.per_token_ms = self.per_token_ms.max(millis / work.tokens as f64);
        }
    }

    /// The deadline of a request of `work`: `floor` unless the pace predicts more.
    pub(crate) fn deadline(&self, work: Work, floor: Duration) -> Deadline {
        let by_input = self.per_input_ms * work.inputs as f64;
        let by_token = self.per_token_ms * work.tokens as f64;
        let (predicted, basis) = if by_input >= by_token {
            (by_input, Basis::Inputs(work.inputs, self.per_input_ms))
        } else {
            (by_token, Basis::Tokens(work.tokens, self.per_token_ms))
        };
        let wanted = Duration::from_secs_f64(MARGIN * predicted / 1000.0);
        let ceiling = CEILING.max(floor);
        if wanted <= floor {
            return Deadline {
                after: floor,
                because: Because::Floor,
            };
        }
        Deadline {
            after: wanted.min(ceiling),
            because: Because::Pace {
                basis,
                floor,
                capped: wanted > ceiling,
            },
        }
    }
}

/// A request's deadline and why it is that long.
#[derive(Clone, Debug, PartialEq)]
pub struct Deadline {
    pub after: Duration,
    pub because: Because,
}

/// Why a deadline is what it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Because {
    /// `--timeout`: the pace predicts no more.
    Floor,
    /// The server's pace times the work, ×[`MARGIN`].
    Pace {
        basis: Basis,
        floor: Duration,
        capped: bool,
    },
}

/// Which part of the work predicted the time: inputs or tokens, with the pace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    Inputs(u64, f64),
    Tokens(u64, f64),
}

impl fmt::Display for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.after.as_secs_f64();
        match &self.because {
            Because::Floor => write!(f, "{secs:.0} s, the --timeout"),
            Because::Pace {
                basis,
                floor,
                capped,
            } => {
                let (count, article, unit, pace) = match *basis {
                    Basis::Inputs(n, pace) => (n, "an", "input", pace),
                    Basis::Tokens(n, pace) => (n, "a", "token", pace),
                };
                write!(
                    f,
                    "{secs:.0} s: {count} {unit}s at {pace:.1} ms {article} {unit}, the slowest pace this server has answered at so far, ×{MARGIN}{}; --timeout {} s is the floor",
                    if *capped {
                        format!(", capped at {} s", CEILING.as_secs())
                    } else {
                        String::new()
                    },
                    floor.as_secs()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: Duration = Duration::from_secs(30);

    fn work(inputs: u64, tokens: u64) -> Work {
        Work { inputs, tokens }
    }

    #[test]
    fn a_request_like_those_answered_gets_the_floor() {
        let mut pace = Pace::default();
        pace.learn(work(1, 10), Duration::from_millis(40));
        let deadline = pace.deadline(work(4, 40), FLOOR);
        assert_eq!(deadline.after, FLOOR);
        assert_eq!(deadline.to_string(), "30 s, the --timeout");
    }

    /// A serial CPU server: 27 ms an input seen on small requests makes a batch of
    /// 2048 worth waiting for, twice as long as predicted.
    #[test]
    fn a_large_batch_waits_as_long_as_the_servers_pace_predicts() {
        let mut pace = Pace::default();
        pace.learn(work(1, 10), Duration::from_millis(27));
        pace.learn(work(4, 40), Duration::from_millis(80));
        let deadline = pace.deadline(work(2048, 12_000), FLOOR);
        assert_eq!(deadline.after.as_secs(), 110);
        let reason = deadline.to_string();
        assert!(
            reason.starts_with("111 s: 2048 inputs at 27.0 ms an input"),
            "{reason}"
        );
        assert!(reason.ends_with("--timeout 30 s is the floor"), "{reason}");
    }

    #[test]
    fn no_deadline_passes_the_ceiling() {
        let mut pace = Pace::default();
        pace.learn(work(1, 1), Duration::from_secs(2));
        let deadline = pace.deadline(work(1, 50_000), FLOOR);
        assert_eq!(deadline.after, CEILING);
        assert!(deadline.to_string().contains("capped at 600 s"));
    }

    #[test]
    fn before_any_answer_every_request_gets_the_floor() {
        let deadline = Pace::default().deadline(work(2048, 20_000), FLOOR);
        assert_eq!(deadline.after, FLOOR);
    }
}
