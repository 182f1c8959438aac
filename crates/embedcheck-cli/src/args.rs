//! Splitting the command line between embedcheck and libtest.
//!
//! `cargo test -- --endpoint URL dimensions --exact` hands every word to the test
//! binary. Our options are recognised by name from the clap definition itself (so the
//! two cannot drift apart); everything else is libtest's.

use super::options::Options;
use clap::CommandFactory;

/// The words for embedcheck and the words for libtest, in their original order.
#[derive(Debug, Default, PartialEq)]
pub struct Split {
    pub ours: Vec<String>,
    pub libtest: Vec<String>,
}

/// Splits `args` (without the program name).
pub fn split(args: impl IntoIterator<Item = String>) -> Split {
    let command = Options::command();
    let mut split = Split::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match our_option(&command, &arg) {
            Some(takes_value) => {
                let inline_value = arg.contains('=');
                split.ours.push(arg);
                if takes_value && !inline_value {
                    split.ours.extend(args.next());
                }
            }
            None => split.libtest.push(arg),
        }
    }
    split
}

/// Whether `arg` is one of our options, and if so whether it takes a value.
fn our_option(command: &clap::Command, arg: &str) -> Option<bool> {
    let name = arg
        .strip_prefix("--")
        .map(|a| a.split('=').next().unwrap_or(a));
    let short = arg
        .strip_prefix('-')
        .filter(|a| a.len() == 1)
        .and_then(|a| a.chars().next());
    command
        .get_arguments()
        .find(|a| {
            name.is_some_and(|n| a.get_long() == Some(n))
                || short.is_some_and(|s| a.get_short() == Some(s))
        })
        .map(|a| a.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn options_and_filters_are_separated_in_any_order() {
        let split = split(words(
            "dimensions --endpoint http://x/v1 --exact --strict --seed=7 --nocapture",
        ));
        assert_eq!(
            split.ours,
            words("--endpoint http://x/v1 --strict --seed=7")
        );
        assert_eq!(split.libtest, words("dimensions --exact --nocapture"));
    }

    #[test]
    fn help_is_ours() {
        assert_eq!(split(words("--help")).ours, words("--help"));
        assert_eq!(split(words("-h")).ours, words("-h"));
    }

    #[test]
    fn libtest_list_and_skip_pass_through() {
        let split = split(words("--list --skip RESP-001"));
        assert!(split.ours.is_empty());
        assert_eq!(split.libtest, words("--list --skip RESP-001"));
    }
}
