//! Whether the server offers each contract, decided from the pattern of its answers
//! before any clause runs: a contract it does not offer is skipped, never failed.
//!
//! Each contract says what its own requests found (`Contract::presence`); the rule
//! here joins them and names no contract. A contract that finds its route for itself
//! (rerank's route search) is another way to read the server of the contract before
//! it, the two making one group: it is asked up front only when that contract's plain
//! request is not answered (TEI serving a cross-encoder refuses every embeddings
//! request and reranks), and otherwise its clauses search. A group is absent when
//! none of its members answers and its first one's route is absent; an absent group
//! is not offered where another is offered, and a server where every group is absent
//! is not audited.

use super::contract::{Contract, Presence};
use crate::catalogue::ContractId;
use crate::session::Session;

/// Which contracts the server offers: every one but those named, each with why not.
#[derive(Debug, Default)]
pub(crate) struct Offered {
    not_offered: Vec<(ContractId, String)>,
}

impl Offered {
    pub(crate) fn offers(&self, contract: ContractId) -> bool {
        self.why_not(contract).is_none()
    }

    /// Why the server does not offer `contract`, where it does not.
    pub(crate) fn why_not(&self, contract: ContractId) -> Option<&str> {
        self.not_offered
            .iter()
            .find(|(c, _)| *c == contract)
            .map(|(_, why)| why.as_str())
    }

    /// Each contract not offered, with why.
    pub(crate) fn not_offered(&self) -> &[(ContractId, String)] {
        &self.not_offered
    }
}

/// Which of `contracts` the server offers, each group asked in their order; an error
/// where it offers none.
pub(crate) async fn offered(
    session: &Session,
    contracts: &[&'static dyn Contract],
) -> Result<Offered, String> {
    let mut groups: Vec<Group> = Vec::new();
    let mut model_served = None;
    for &contract in contracts {
        let group = match groups.last_mut() {
            Some(group) if contract.finds_its_route() => group,
            _ => {
                groups.push(Group::default());
                groups.last_mut().expect("just pushed")
            }
        };
        let presence = match group.answered() {
            true => None,
            false => Some(contract.presence(session, model_served).await),
        };
        if let Some(Presence::Answered { served_the_model }) = &presence {
            model_served = model_served.or(*served_the_model);
        }
        group.members.push((contract, presence));
    }
    decide(groups, contracts)
}

/// Contracts read from one server the same way, each with what its requests found
/// (`None`: not asked, as the one before it answered; its clauses decide).
#[derive(Default)]
struct Group {
    members: Vec<(&'static dyn Contract, Option<Presence>)>,
}

/// What a group comes to.
enum Outcome {
    /// Offered, but for these members.
    Offered(Vec<(ContractId, String)>),
    /// Absent, with why.
    Absent(String),
}

impl Group {
    /// Whether a member is answered (or was not asked): the rest need not be.
    fn answered(&self) -> bool {
        self.members
            .iter()
            .any(|(_, p)| matches!(p, None | Some(Presence::Answered { .. })))
    }

    /// Offered where a member answered, the members before it that did not being
    /// the ones not offered; where none answered, offered whole (audited on its
    /// refusals) if its first member's route refuses, else absent.
    fn outcome(self) -> Outcome {
        let why = |p: &Option<Presence>| match p {
            Some(Presence::RefusesAll(why) | Presence::Absent(why)) => Some(why.clone()),
            _ => None,
        };
        if self.answered() {
            let not_offered = self
                .members
                .iter()
                .take_while(|(_, p)| !matches!(p, None | Some(Presence::Answered { .. })))
                .filter_map(|(c, p)| Some((c.id(), why(p)?)))
                .collect();
            return Outcome::Offered(not_offered);
        }
        if matches!(
            self.members.first(),
            Some((_, Some(Presence::RefusesAll(_))))
        ) {
            return Outcome::Offered(Vec::new());
        }
        let whys: Vec<String> = self.members.iter().filter_map(|(_, p)| why(p)).collect();
        Outcome::Absent(whys.join(", and "))
    }
}

/// The groups joined: an absent group's members not offered, each with the group's
/// why, where another group is offered; an error where none is.
fn decide(groups: Vec<Group>, contracts: &[&dyn Contract]) -> Result<Offered, String> {
    let mut not_offered = Vec::new();
    let mut absent = Vec::new();
    let mut any_offered = false;
    for group in groups {
        let ids: Vec<ContractId> = group.members.iter().map(|(c, _)| c.id()).collect();
        match group.outcome() {
            Outcome::Offered(members) => {
                any_offered = true;
                not_offered.extend(members);
            }
            Outcome::Absent(why) => absent.push((ids, why)),
        }
    }
    if !any_offered {
        let whys: Vec<String> = absent.into_iter().map(|(_, why)| why).collect();
        return Err(whys.join("; "));
    }
    for (ids, why) in absent {
        not_offered.extend(ids.into_iter().map(|id| (id, why.clone())));
    }
    not_offered.sort_by_key(|(id, _)| contracts.iter().position(|c| c.id() == *id));
    Ok(Offered { not_offered })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::ALL;

    fn absent(why: &str) -> Option<Presence> {
        Some(Presence::Absent(why.to_owned()))
    }

    fn answered() -> Option<Presence> {
        Some(Presence::Answered {
            served_the_model: None,
        })
    }

    /// The registry's contracts in groups as `offered` forms them, with these
    /// presences: the first two read one server two ways, the third its own.
    fn groups(presences: [Option<Presence>; 3]) -> Vec<Group> {
        let [first, second, third] = presences;
        vec![
            Group {
                members: vec![(ALL[0], first), (ALL[1], second)],
            },
            Group {
                members: vec![(ALL[2], third)],
            },
        ]
    }

    fn not_offered(offered: &Offered) -> Vec<(&str, &str)> {
        offered
            .not_offered()
            .iter()
            .map(|(id, why)| (id.as_str(), why.as_str()))
            .collect()
    }

    #[test]
    fn a_group_answered_by_its_second_way_is_offered_but_for_the_first() {
        let refuses = Some(Presence::RefusesAll("refuses".to_owned()));
        let offered = decide(groups([refuses, answered(), answered()]), &ALL).unwrap();
        assert_eq!(not_offered(&offered), [(ALL[0].id().as_str(), "refuses")]);
    }

    #[test]
    fn a_group_whose_first_way_refuses_and_none_answers_is_audited_on_its_refusals() {
        let refuses = Some(Presence::RefusesAll("refuses".to_owned()));
        let offered = decide(groups([refuses, absent("none"), absent("no route")]), &ALL).unwrap();
        assert_eq!(not_offered(&offered), [(ALL[2].id().as_str(), "no route")]);
    }

    #[test]
    fn an_absent_group_is_not_offered_where_another_is_and_the_run_ends_where_none_is() {
        let offered = decide(groups([absent("a"), absent("b"), answered()]), &ALL).unwrap();
        assert_eq!(
            not_offered(&offered),
            [
                (ALL[0].id().as_str(), "a, and b"),
                (ALL[1].id().as_str(), "a, and b")
            ]
        );
        let none = decide(groups([absent("a"), absent("b"), absent("c")]), &ALL);
        assert_eq!(none.unwrap_err(), "a, and b; c");
    }

    #[test]
    fn a_way_not_asked_is_offered_its_clauses_decide() {
        let offered = decide(groups([answered(), None, answered()]), &ALL).unwrap();
        assert!(offered.not_offered().is_empty());
    }
}
