//! over-length: inputs longer than the model's limit (LEN-001 … LEN-005), and those
//! just under it: answered (IN-010) and embedded whole (LEN-006).
//!
//! The limit is declared (`--max-input-tokens`) or searched for: inputs of 256, 512,
//! 1,024 … words until one is refused or comes back truncated (fewer tokens than
//! words), then, for a refusal, the limit its message names or a binary search between
//! the last accepted and the first refused length; at most 12 requests in all. The
//! `input_limit` and `overlength_policy` facts record what was found.
//!
//! Inputs are prefixes of one endless stream of short common words (one token each on
//! any tokenizer), so every over-length input is a prefix of every longer one: a server
//! that truncates keeping the start gives all of them the same vector.

use super::{consistency, usage};
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::OverlengthPolicy as Policy;
use crate::contracts::embeddings::facts::{EmbeddingsFacts, InputLimit, LimitEvidence, Noise};
use crate::contracts::embeddings::requests::{self, BATCH, OTHER_COMMON, TAIL, body, words};
use crate::contracts::embeddings::settings;
use crate::declared::Overlength;
use crate::http::{Body, Probe, Reply};
use crate::property::{Case, Property};
use crate::session::facts::describe_request;
use crate::session::{Fact, Facts, ProbeError, Session};
use crate::vectors::cosine;
use crate::verdict::Verdict;
use serde_json::json;
use std::fmt;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("LEN-001", never_5xx),
        check!("LEN-002", refused_or_truncated_properly),
        check!("LEN-003", policy_as_relied_on),
        check!("LEN-004", over_length_batch_item),
        check!("LEN-005", aggregated_whole, aggregate),
        check!("LEN-006", whole_below_the_limit, aggregate),
        check!("IN-010", at_the_limit, aggregate),
    ]
}

/// The limit search: first length, longest length, most requests.
const FIRST_SEARCH_WORDS: usize = 256;
const MAX_SEARCH_WORDS: usize = 16_384;
const MAX_SEARCH_REQUESTS: u32 = 24;

/// A batch item equals the same input embedded alone (CONS-002's tolerance).
const SAME_ITEM: f64 = 0.999;

/// The property label of generated over-length inputs, shared by LEN-001 and LEN-002.
const GENERATED_LENGTHS: &str = "over-length-words";

/// Statuses a refusal may carry: 400 preferred, 413 and 422 tolerated.
const REFUSAL_STATUSES: [u16; 3] = [400, 413, 422];

/// Words a message about input length contains (OpenAI, vLLM, TEI, llama.cpp wording).
const LENGTH_WORDS: [&str; 8] = [
    "length",
    "long",
    "token",
    "context",
    "limit",
    "exceed",
    "maximum",
    "too large",
];

/// The model's per-input limit and how it is known.
#[derive(Debug)]
struct Limit {
    tokens: u64,
    /// An input of this many words is over the limit.
    over_words: usize,
    because: LimitEvidence,
}

/// How far past the limit LEN-001 goes: servers that break only on very long inputs
/// (llama.cpp's server answers 500 past its physical batch) are caught.
const LONGEST_OVER_LIMIT: usize = 16;

impl Limit {
    /// Inputs of LEN-002: from just over the limit to half as long again, where a
    /// truncation or a refusal shows.
    fn lengths(&self) -> std::ops::RangeInclusive<usize> {
        self.over_words..=self.over_words * 3 / 2
    }

    /// Inputs of LEN-001: from just over the limit to 16 times it, as far as half the
    /// token budget left pays for every generated case.
    fn long_lengths(&self, s: &Session) -> std::ops::RangeInclusive<usize> {
        let left = s.settings().max_tokens.saturating_sub(s.tokens_used());
        let affordable = (left / 2 / u64::from(s.settings().cases.max(1))) as usize;
        let longest = (self.over_words * LONGEST_OVER_LIMIT).min(affordable);
        self.over_words..=longest.max(self.over_words)
    }
}

/// What a search found, and how many requests it sent.
type Searched = (Result<Limit, NoLimit>, u32);

/// Why no limit was found.
#[derive(Debug)]
enum NoLimit {
    NoVectors(String),
    NoneUpTo(usize),
    Budget,
    ShortInputsRefused { words: usize, status: u16 },
}

impl fmt::Display for NoLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoLimit::NoVectors(why) => write!(f, "no vectors to find the limit with: {why}"),
            NoLimit::NoneUpTo(words) => write!(
                f,
                "no limit found: inputs of up to {words} words were embedded in full (the words after the first half changed the vector)"
            ),
            NoLimit::Budget => {
                f.write_str("the token budget (--max-tokens) allows no longer input")
            }
            NoLimit::ShortInputsRefused { words, status } => {
                write!(f, "even an input of {words} words was refused ({status})")
            }
        }
    }
}

/// The declared limit, or the one found by searching; learned once as the
/// `input_limit` fact and read from it by the other clauses. A skip verdict when there
/// is none.
async fn input_limit(s: &Session) -> Result<Result<Limit, Verdict>, ProbeError> {
    let fact = match embeddings::learned(s).input_limit {
        Some(known) => known,
        None => {
            let fact = find_limit(s).await?;
            embeddings::learn(s, |facts| facts.input_limit = Some(fact.clone()));
            fact
        }
    };
    Ok(match fact.value {
        InputLimit::Known {
            tokens,
            over_words,
            because,
        } => Ok(Limit {
            tokens,
            over_words,
            because,
        }),
        InputLimit::Unknown { why } => Err(Verdict::skip(format!(
            "{why}; pass --max-input-tokens N to test over-length input"
        ))),
    })
}

async fn find_limit(s: &Session) -> Result<Fact<InputLimit>, ProbeError> {
    let (found, requests) = match settings::of(s).max_input_tokens {
        // An input over a limit beyond the whole budget could never be sent.
        Some(tokens) if tokens >= s.settings().max_tokens => (Err(NoLimit::Budget), 0),
        Some(tokens) => {
            let limit = Limit {
                tokens,
                over_words: tokens as usize + 1,
                because: LimitEvidence::Declared,
            };
            return Ok(Fact::declared(limit.into(), "--max-input-tokens"));
        }
        None => search(s).await?,
    };
    let value = match found {
        Ok(limit) => limit.into(),
        Err(why) => InputLimit::Unknown {
            why: why.to_string(),
        },
    };
    Ok(s.searched(value, requests))
}

impl From<Limit> for InputLimit {
    fn from(limit: Limit) -> Self {
        InputLimit::Known {
            tokens: limit.tokens,
            over_words: limit.over_words,
            because: limit.because,
        }
    }
}

/// A length the server embedded in full.
#[derive(Clone, Copy, Debug, Default)]
struct Accepted {
    words: usize,
    tokens: u64,
}

/// Probes of the search. Whether one is over the limit is what the search is for, so
/// each is marked as possibly invalid: a 5xx to one is then named by ERR-009.
fn search_probe(s: &Session, text: String, n: usize) -> Probe {
    requests::invalid(
        Body::Json(body(s, json!(text), &[])),
        format!("input of {n} words, possibly over the input limit"),
    )
}

/// What sending `words(n)` followed by `n` words of another stream showed.
enum Cut {
    /// The vector is that of `words(n)` alone: everything after was cut. Holds the
    /// answer to the longer input.
    After(Arc<Reply>),
    /// The words after changed the vector: nothing was cut before them.
    NotBefore,
    /// The longer input was refused (or answered neither 200 nor 4xx).
    Refused(Arc<Reply>),
    /// No vectors to compare.
    NoVectors(String),
}

/// The limit search: the vectors of long inputs tell whether text after a point is
/// cut, whatever `usage` says; usage counts are read only where USE-005 found them
/// to be tokens.
struct Search<'a> {
    s: &'a Session,
    sent: u32,
    usage_counts_tokens: bool,
    noise: Noise,
}

impl<'a> Search<'a> {
    async fn new(s: &'a Session) -> Result<Search<'a>, ProbeError> {
        let usage_counts_tokens = usage::usage_unit(s).await?.0.counts_tokens();
        let noise = consistency::noise(s).await?.unwrap_or(Noise::unmeasured());
        Ok(Search {
            s,
            sent: 0,
            usage_counts_tokens,
            noise,
        })
    }

    /// Sends `text` (of `n` words); `None` when the token budget cannot pay for it.
    async fn send(&mut self, text: String, n: usize) -> Result<Option<Arc<Reply>>, ProbeError> {
        self.sent += 1;
        match self.s.send(search_probe(self.s, text, n)).await {
            Ok(reply) => Ok(Some(reply)),
            Err(ProbeError::TokenBudget { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// Whether text after the first `n` words changes the vector; `None` when the
    /// budget cannot pay for the longer input.
    async fn cut(&mut self, n: usize) -> Result<Option<Cut>, ProbeError> {
        let Some(alone) = self.send(words(n), n).await? else {
            return Ok(None);
        };
        let longer = format!("{} {}", words(n), other_words(n));
        let Some(with_more) = self.send(longer, 2 * n).await? else {
            return Ok(None);
        };
        if !with_more.is_success() {
            return Ok(Some(Cut::Refused(with_more)));
        }
        let first = |r: &Reply| r.float_vectors().ok().and_then(|v| v.into_iter().next());
        Ok(Some(match (first(&alone), first(&with_more)) {
            (Some(a), Some(b)) if self.noise.same(cosine(&a, &b)) => Cut::After(with_more),
            (Some(_), Some(_)) => Cut::NotBefore,
            _ => Cut::NoVectors(format!(
                "an input of {n} words answered {} without usable vectors",
                alone.summary()
            )),
        }))
    }
}

/// `n` words of a stream that shares no word with [`words`]: what follows a prefix in
/// the vector test, so that cutting it off or not changes half the input.
fn other_words(n: usize) -> String {
    TAIL.iter()
        .cycle()
        .take(n)
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Doubles the length until an input is refused or cut.
async fn search(s: &Session) -> Result<Searched, ProbeError> {
    let mut search = Search::new(s).await?;
    let mut accepted: Option<Accepted> = None;
    let mut n = FIRST_SEARCH_WORDS;
    while 2 * n <= MAX_SEARCH_WORDS {
        let Some(reply) = search.send(words(n), n).await? else {
            return Ok((Err(NoLimit::Budget), search.sent));
        };
        if !reply.is_success() {
            let found = refine(&mut search, accepted.unwrap_or_default(), n, &reply).await?;
            return Ok((found, search.sent));
        }
        let tokens = reply.prompt_tokens().filter(|_| search.usage_counts_tokens);
        // Every word is at least one token: clearly fewer tokens means truncation.
        if let Some(tokens) = tokens.filter(|&t| t * 4 < n as u64 * 3) {
            let because = LimitEvidence::Truncated { words: n, tokens };
            let limit = Limit {
                tokens,
                over_words: tokens as usize + 1,
                because,
            };
            return Ok((Ok(limit), search.sent));
        }
        match search.cut(n).await? {
            None => return Ok((Err(NoLimit::Budget), search.sent)),
            Some(Cut::After(longer)) => {
                // A token count of the cut input, where usage counts tokens, is the
                // limit; else the vectors narrow it down.
                let counted = longer
                    .prompt_tokens()
                    .filter(|&t| search.usage_counts_tokens && t > 0 && t < 2 * n as u64);
                let found = match counted {
                    Some(tokens) => Limit {
                        tokens,
                        over_words: tokens as usize + 1,
                        because: LimitEvidence::Truncated {
                            words: 2 * n,
                            tokens,
                        },
                    },
                    None => bisect_cut(&mut search, accepted.map_or(0, |a| a.words), n).await?,
                };
                return Ok((Ok(found), search.sent));
            }
            Some(Cut::Refused(longer)) => {
                let base = Accepted {
                    words: n,
                    tokens: tokens.unwrap_or(n as u64),
                };
                let found = refine(&mut search, base, 2 * n, &longer).await?;
                return Ok((found, search.sent));
            }
            Some(Cut::NoVectors(why)) => return Ok((Err(NoLimit::NoVectors(why)), search.sent)),
            Some(Cut::NotBefore) => {}
        }
        accepted = Some(Accepted {
            words: n,
            tokens: tokens.unwrap_or(n as u64),
        });
        n *= 2;
    }
    Ok((Err(NoLimit::NoneUpTo(n)), search.sent))
}

/// Narrows a cut down between `lo` words (nothing cut before the text after them)
/// and `hi` words (everything after them cut), within the request allowance: the
/// server keeps about `hi` words of this stream, one token each.
async fn bisect_cut(
    search: &mut Search<'_>,
    mut lo: usize,
    mut hi: usize,
) -> Result<Limit, ProbeError> {
    while search.sent + 2 <= MAX_SEARCH_REQUESTS && hi - lo > (hi / 64).max(1) {
        let mid = lo + (hi - lo) / 2;
        match search.cut(mid).await? {
            Some(Cut::After(_)) => hi = mid,
            Some(Cut::NotBefore) => lo = mid,
            _ => break,
        }
    }
    Ok(Limit {
        tokens: hi as u64,
        over_words: hi + 1,
        because: LimitEvidence::Vectors {
            differs_at: lo,
            same_at: hi,
        },
    })
}

/// Narrows a refusal down: the limit the refusal names, else a binary search on the
/// number of words within the request allowance.
async fn refine(
    search: &mut Search<'_>,
    accepted: Accepted,
    refused: usize,
    reply: &Reply,
) -> Result<Result<Limit, NoLimit>, ProbeError> {
    let per_word = match accepted.words {
        0 => 1.0,
        w => accepted.tokens as f64 / w as f64,
    };
    let ceiling = (refused as f64 * per_word).ceil() as u64;
    if let Some(named) = named_limit(&reply.error_text(), accepted.tokens, ceiling) {
        let because = LimitEvidence::RefusalNamed {
            words: refused,
            status: reply.status,
            named,
        };
        return Ok(Ok(Limit {
            tokens: named,
            over_words: named as usize + 1,
            because,
        }));
    }
    let (mut low, mut high, mut status) = (accepted, refused, reply.status);
    while search.sent < MAX_SEARCH_REQUESTS && high - low.words > 1 {
        let mid = low.words + (high - low.words) / 2;
        let Some(reply) = search.send(words(mid), mid).await? else {
            break;
        };
        if reply.is_success() {
            let counted = reply.prompt_tokens().filter(|_| search.usage_counts_tokens);
            low = Accepted {
                words: mid,
                tokens: counted.unwrap_or(mid as u64),
            };
        } else {
            (high, status) = (mid, reply.status);
        }
    }
    if low.words == 0 {
        return Ok(Err(NoLimit::ShortInputsRefused {
            words: high,
            status,
        }));
    }
    let because = LimitEvidence::Bisected {
        accepted_words: low.words,
        accepted_tokens: low.tokens,
        refused_words: high,
        status,
    };
    Ok(Ok(Limit {
        tokens: low.tokens,
        over_words: high,
        because,
    }))
}

/// The largest number in a refusal's message that can be the limit: at least the
/// tokens accepted so far, below the refused input's size.
fn named_limit(message: &str, floor: u64, ceiling: u64) -> Option<u64> {
    message
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0 && n >= floor && n < ceiling)
        .max()
}

/// An input of `n` words, known to be over the limit: a client mistake, so a 5xx to it
/// is named by ERR-009.
fn over_probe(s: &Session, n: usize, limit: &Limit) -> Probe {
    requests::invalid(
        Body::Json(body(s, json!(words(n)), &[])),
        format!(
            "input of {n} words, over the {}-token input limit",
            limit.tokens
        ),
    )
}

/// The policy a server applied to one over-length input.
fn policy_of(reply: &Reply) -> Policy {
    if reply.is_success() {
        Policy::Truncate
    } else if reply.is_client_error() {
        Policy::Reject(reply.status)
    } else {
        Policy::Neither(reply.status)
    }
}

/// The answer to the shortest over-length input, and the policy it shows; recorded as
/// the `overlength_policy` observation.
async fn policy(s: &Session, limit: &Limit) -> Result<(Arc<Reply>, Policy), ProbeError> {
    let reply = s.send(over_probe(s, limit.over_words, limit)).await?;
    let policy = policy_of(&reply);
    let fact = s.detected(policy, &reply.exchange);
    embeddings::learn(s, |facts| {
        facts.overlength_policy.get_or_insert(fact);
    });
    Ok((reply, policy))
}

/// LEN-001: "An input longer than the model's input limit is never answered with a
/// 5xx."
async fn never_5xx(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    policy(s, &limit).await?;
    let (limit, lengths) = (&limit, limit.long_lengths(s));
    let finding = Property::new(s.settings(), GENERATED_LENGTHS)
        .check(&lengths, move |n| async move {
            let reply = s.send(over_probe(s, n, limit)).await?;
            Ok::<_, ProbeError>(if reply.is_server_error() {
                Case::Fails(
                    Verdict::fail(format!(
                        "answered {} (the limit is {} tokens)",
                        reply.summary(),
                        limit.tokens
                    ))
                    .with(&reply.exchange),
                )
            } else {
                Case::Holds
            })
        })
        .await?;
    Ok(finding.into_verdict(
        |n| format!("{n} words"),
        |cases, _| {
            Verdict::pass(format!(
                "{cases} generated inputs of {} to {} words (limit {} tokens): no 5xx",
                lengths.start(),
                lengths.end(),
                limit.tokens
            ))
        },
    ))
}

/// Why a refusal of over-length input is not a proper one.
fn improper_refusal(reply: &Reply) -> Option<String> {
    if !REFUSAL_STATUSES.contains(&reply.status) {
        return Some(format!(
            "refused with {}; expected 400 (413 or 422 tolerated)",
            reply.status
        ));
    }
    let message = reply.error_text();
    if LENGTH_WORDS.iter().any(|w| message.contains(w)) {
        return None;
    }
    Some(format!(
        "refused with {} but the message says nothing about length: {:?}",
        reply.status,
        reply.error_message().unwrap_or_default()
    ))
}

/// Why a truncating answer is not a proper truncation: a vector unlike the one of a
/// longer input with the same beginning, judged against the server's own noise. (A
/// 200 that counts more tokens than the limit is the aggregate policy, LEN-005's.)
fn improper_truncation(
    reply: &Reply,
    longer: Option<&[f64]>,
    facts: &EmbeddingsFacts,
) -> Option<String> {
    let vector = match super::vectors_or_verdict(reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Some(verdict.reason),
    };
    let similarity = cosine(&vector, longer?);
    let noise = facts.noise();
    (!noise.same(similarity)).then(|| {
        format!(
            "truncation does not keep the start: this input and a longer one beginning with the same words gave cosine {similarity:.6} (the server's noise allows 1 - {:.6})",
            noise.threshold()
        )
    })
}

/// LEN-002: "An over-length input is refused with 400 (413 or 422 tolerated) and a
/// message about its length, or truncated: 200, usage.prompt_tokens not above the
/// limit, and the vector of a still longer input with the same beginning."
async fn refused_or_truncated_properly(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let (_, found) = policy(s, &limit).await?;
    let longest = *limit.lengths().end();
    let longer_text = format!("{} {}", words(longest), TAIL.repeat(4).join(" "));
    let longer_reply = s
        .send(requests::invalid(
            Body::Json(body(s, json!(longer_text), &[])),
            format!(
                "input of {} words, over the {}-token input limit",
                longest + 4 * TAIL.len(),
                limit.tokens
            ),
        ))
        .await?;
    let longer = super::vectors_or_verdict(&longer_reply, 1)
        .ok()
        .and_then(|v| v.into_iter().next());
    let (limit, longer, longer_reply) = (&limit, longer.as_deref(), &longer_reply);
    let finding = Property::new(s.settings(), GENERATED_LENGTHS)
        .check(&limit.lengths(), move |n| async move {
            let reply = s.send(over_probe(s, n, limit)).await?;
            let problem = if reply.is_client_error() {
                improper_refusal(&reply)
            } else if reply.is_success() {
                let truncation = improper_truncation(&reply, longer, &embeddings::learned(s));
                match (aggregated_tokens(&reply, limit, &s.facts()), truncation) {
                    // Embedded whole: the aggregate policy, which LEN-005 judges.
                    (Some(_), Some(_)) => return Ok::<_, ProbeError>(Case::Inapplicable),
                    (Some(tokens), None) => Some(format!(
                        "truncated (the vector of a longer input with the same beginning), but usage counts {tokens} prompt tokens for the {}-token limit: clients are billed for text the model never saw",
                        limit.tokens
                    )),
                    (None, truncation) => truncation,
                }
            } else {
                return Ok::<_, ProbeError>(Case::Inapplicable);
            };
            Ok(match problem {
                None => Case::Holds,
                Some(why) => Case::Fails(
                    Verdict::fail(why)
                        .with(&reply.exchange)
                        .with(&longer_reply.exchange),
                ),
            })
        })
        .await?;
    Ok(finding.into_verdict(
        |n| format!("{n} words"),
        |cases, applicable| match (applicable, found) {
            (0, _) => Verdict::skip(format!(
                "none of {cases} over-length inputs was refused or truncated within the limit: each was answered 5xx (see LEN-001) or 200 counting more tokens than the {}-token limit (see LEN-005)",
                limit.tokens
            )),
            (_, Policy::Truncate) => Verdict::pass(format!(
                "{applicable} of {cases} over-length inputs (limit {} tokens) truncated, keeping the start: the vector of a still longer input with the same beginning",
                limit.tokens
            )),
            _ => Verdict::pass(format!(
                "{applicable} of {cases} over-length inputs refused, the message about length"
            )),
        },
    ))
}

/// LEN-003: "With --overlength reject or truncate, the server applies that policy to
/// over-length input."
async fn policy_as_relied_on(s: &Session) -> CheckResult {
    let relied = settings::of(s).overlength;
    match relied {
        Overlength::Any => {
            return Ok(Verdict::skip(
                "--overlength any: the client copes with either policy",
            ));
        }
        Overlength::Aggregate => {
            return Ok(Verdict::skip(
                "--overlength aggregate: LEN-005 judges the aggregated vectors",
            ));
        }
        Overlength::Reject | Overlength::Truncate => {}
    }
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let (reply, found) = policy(s, &limit).await?;
    let verdict = match (relied, found) {
        (Overlength::Reject, Policy::Reject(_)) | (Overlength::Truncate, Policy::Truncate) => {
            Verdict::pass(format!(
                "over-length input: {}, as --overlength {relied} relies on",
                found
            ))
        }
        (Overlength::Truncate, _) => Verdict::fail(format!(
            "the client relies on truncation (--overlength truncate), but the server's policy is {}: the client must truncate inputs itself",
            found
        )),
        _ => Verdict::fail(format!(
            "the client relies on refusals (--overlength reject), but the server's policy is {}: over-length inputs are not refused",
            found
        )),
    };
    Ok(verdict.with(&reply.exchange))
}

/// Why the answer to a batch with one over-length item is not a proper one, checking
/// each item against the same input embedded alone.
async fn improper_batch(
    s: &Session,
    reply: &Reply,
    texts: &[String; 3],
    limit: &Limit,
) -> Result<Option<(String, Vec<Arc<Reply>>)>, ProbeError> {
    let vectors = match reply.float_vectors() {
        Ok(v) => v,
        Err(why) => return Ok(Some((format!("200 without usable vectors: {why}"), vec![]))),
    };
    if vectors.len() != texts.len() {
        return Ok(Some((
            format!(
                "200 with {} items for {} inputs: the over-length item was dropped from data",
                vectors.len(),
                texts.len()
            ),
            vec![],
        )));
    }
    for (i, (text, vector)) in texts.iter().zip(&vectors).enumerate() {
        let alone = match i {
            1 => s.send(over_probe(s, limit.over_words, limit)).await?,
            _ => s.send(requests::probe(body(s, json!(text), &[]))).await?,
        };
        let Ok(own) = super::vectors_or_verdict(&alone, 1) else {
            continue;
        };
        let similarity = cosine(&own[0], vector);
        if similarity < SAME_ITEM {
            return Ok(Some((
                format!(
                    "data[{i}] has cosine {similarity:.6} to input {i} embedded alone: the items do not match their inputs"
                ),
                vec![alone],
            )));
        }
    }
    Ok(None)
}

/// LEN-004: "A batch with one over-length item is refused as a whole with a 4xx, or
/// answered 200 with that item truncated; the item is never dropped from data."
async fn over_length_batch_item(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let texts = [
        BATCH[0].to_owned(),
        words(limit.over_words),
        BATCH[1].to_owned(),
    ];
    let reply = s
        .send(requests::invalid(
            Body::Json(body(s, json!(texts), &[])),
            format!(
                "input[1] of {} words, over the {}-token input limit",
                limit.over_words, limit.tokens
            ),
        ))
        .await?;
    if reply.is_client_error() {
        return Ok(Verdict::pass(format!(
            "the batch was refused as a whole with {}",
            reply.status
        ))
        .with(&reply.exchange));
    }
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "answered {} to a batch with one over-length item",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    Ok(match improper_batch(s, &reply, &texts, &limit).await? {
        None => Verdict::pass("200 with one item per input, the over-length one truncated")
            .with(&reply.exchange),
        Some((why, alone)) => Verdict::fail(why)
            .with(&reply.exchange)
            .with_all(alone.iter().map(|r| &r.exchange)),
    })
}

/// The prompt tokens of a 200 to one input that counted more than the limit, where
/// usage counts tokens: the whole input was embedded, or its usage over-reported. A
/// limit found from vectors is counted in stream words, one token each, so the input's
/// special tokens are allowed on top of it.
fn aggregated_tokens(reply: &Reply, limit: &Limit, facts: &Facts) -> Option<u64> {
    let slack = match limit.because {
        LimitEvidence::Vectors { .. } => usage::SPECIAL_TOKENS,
        _ => 0,
    };
    reply.prompt_tokens().filter(|&t| {
        reply.is_success()
            && reply.data().is_ok_and(|d| d.len() == 1)
            && facts.usage_counts_tokens()
            && t > limit.tokens + slack
    })
}

/// The first 200 of the run to one input that counted more tokens than the limit, with
/// its count: what shows the aggregate policy, whichever clause sent it.
fn over_counted(s: &Session, limit: &Limit) -> Option<(Arc<Reply>, u64)> {
    let facts = s.facts();
    s.log()
        .into_iter()
        .filter_map(|l| l.reply)
        .find_map(|reply| {
            let tokens = aggregated_tokens(&reply, limit, &facts)?;
            Some((reply, tokens))
        })
}

/// Words of the stream that are surely within the limit: the longest input the search
/// saw embedded whole, else the limit less room for special tokens.
fn words_within(limit: &Limit) -> usize {
    let words = match limit.because {
        LimitEvidence::Bisected { accepted_words, .. } => return accepted_words,
        LimitEvidence::Vectors { differs_at, .. } => return differs_at.max(1),
        LimitEvidence::Declared
        | LimitEvidence::Truncated { .. }
        | LimitEvidence::RefusalNamed { .. } => limit.tokens.saturating_sub(usage::SPECIAL_TOKENS),
    };
    usize::try_from(words).unwrap_or(usize::MAX).max(1)
}

/// Words of the stream a server that truncates keeps of a longer input: where the
/// vectors showed the cut, as many as showed no change (a text that long is cut to
/// the same words), else the words within the limit.
fn words_kept(limit: &Limit) -> usize {
    match limit.because {
        LimitEvidence::Vectors { same_at, .. } => same_at,
        _ => words_within(limit),
    }
}

/// IN-010: "An input just under the input limit is answered 200, alone and inside a
/// batch of three."
async fn at_the_limit(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let n = words_within(&limit);
    let text = words(n);
    let alone = s.send(requests::probe(body(s, json!(text), &[]))).await?;
    let batch = [BATCH[0], text.as_str(), BATCH[1]];
    let together = s.send(requests::probe(body(s, json!(batch), &[]))).await?;
    let verdict = match (alone.is_success(), together.is_success()) {
        (true, true) => Verdict::pass(format!(
            "an input of {n} words (the limit is {} tokens) embedded alone and in a batch of three",
            limit.tokens
        )),
        (false, _) => Verdict::fail(format!(
            "an input of {n} words, within the {}-token limit, answered {}",
            limit.tokens,
            alone.summary()
        )),
        (true, false) => Verdict::fail(format!(
            "an input of {n} words, within the {}-token limit, embeds alone but its batch of three answered {}: the limit holds per request, not per input",
            limit.tokens,
            together.summary()
        )),
    };
    Ok(verdict.with(&alone.exchange).with(&together.exchange))
}

/// Unit length within float32 rounding.
const UNIT: f64 = 1e-3;

/// LEN-005: "With --overlength aggregate, an over-length input is answered 200 with a
/// unit-length vector that differs from the vector of its first limit tokens. Without
/// the declaration, a 200 that counts more prompt tokens than the limit is reported as
/// this policy (observed)."
async fn aggregated_whole(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let declared = settings::of(s).overlength == Overlength::Aggregate;
    let over = 2 * limit.over_words;
    let whole = s.send(over_probe(s, over, &limit)).await?;
    let observed = aggregated_tokens(&whole, &limit, &s.facts())
        .map(|tokens| (whole.clone(), tokens))
        .or_else(|| over_counted(s, &limit));
    if !declared && observed.is_none() {
        let why = if s.facts().usage_counts_tokens() {
            "no 200 to one input counted more tokens than the limit"
        } else {
            "usage does not count tokens, so no count can show it (see USE-005)"
        };
        return Ok(Verdict::skip(format!(
            "the aggregate policy is neither declared (--overlength aggregate) nor observed ({why})"
        ))
        .with(&whole.exchange));
    }
    let how = match &observed {
        Some((reply, tokens)) => format!(
            "observed: {tokens} prompt tokens for a {}-token limit, in the answer to {}",
            limit.tokens,
            describe_request(&reply.exchange)
        ),
        None => "declared with --overlength aggregate".to_owned(),
    };
    let observed = observed.map(|(_, tokens)| tokens);
    let vector = match super::vectors_or_verdict(&whole, 1) {
        Ok(mut v) if whole.is_success() => v.remove(0),
        Ok(_) => {
            return Ok(Verdict::fail(format!(
                "an input of {over} words answered {} ({how})",
                whole.summary()
            ))
            .with(&whole.exchange));
        }
        Err(verdict) => return Ok(verdict),
    };
    let start = s
        .send(requests::probe(body(
            s,
            json!(words(words_kept(&limit))),
            &[],
        )))
        .await?;
    let evidence = |v: Verdict| v.with(&whole.exchange).with(&start.exchange);
    let norm = crate::vectors::norm(&vector);
    if (norm - 1.0).abs() > UNIT {
        return Ok(evidence(Verdict::fail(format!(
            "the aggregated vector has L2 norm {norm:.4}, not 1 ({how}): pooled chunks must be re-normalised"
        ))));
    }
    let first = match super::vectors_or_verdict(&start, 1) {
        Ok(mut v) if start.is_success() => v.remove(0),
        _ => {
            return Ok(evidence(Verdict::inconclusive(format!(
                "the input's beginning alone answered {}: nothing to compare with",
                start.summary()
            ))));
        }
    };
    let similarity = cosine(&vector, &first);
    Ok(evidence(
        if embeddings::learned(s).noise().same(similarity) && declared {
            Verdict::fail(format!(
                "an input of {over} words got the vector of its first words alone (cosine {similarity:.6}): it was truncated, not aggregated ({how})"
            ))
        } else if embeddings::learned(s).noise().same(similarity) {
            Verdict::fail(format!(
                "truncation with over-reported usage, not aggregation: an input of {over} words got the vector of its first words alone (cosine {similarity:.6}), yet usage counts {} prompt tokens for a {}-token limit: clients are billed for text the model never saw (as raullenchai/Rapid-MLX#1381)",
                observed.unwrap_or_default(),
                limit.tokens
            ))
        } else {
            Verdict::pass(format!(
                "an input of {over} words embedded whole: unit length, cosine {similarity:.4} with its beginning alone ({how})"
            ))
        },
    ))
}

/// The largest input limit anyone claims for the model, in tokens, who claims it, and
/// whether it is the model's own (the reference file's `max_seq_length`): the one
/// declared or found (the `input_limit` fact), the one the models listing advertises
/// (vLLM's `max_model_len`), and the model's, capped by what the server advertises (its
/// own configuration may lawfully serve less).
async fn claimed_limit(s: &Session, limit: &Limit) -> Result<Claim, ProbeError> {
    let listing = s.send(Probe::list_models()).await?;
    let advertised = listing
        .json
        .as_ref()
        .and_then(|j| j.get("data"))
        .and_then(serde_json::Value::as_array)
        .and_then(|models| models.iter().find(|m| m["id"] == s.model()))
        .and_then(|m| m.get("max_model_len"))
        .and_then(serde_json::Value::as_u64);
    let model = settings::of(s)
        .reference
        .as_ref()
        .and_then(|r| r.header.max_seq_length)
        .map(|m| advertised.map_or(m, |a| m.min(a)));
    let mut claim = Claim {
        tokens: limit.tokens,
        by: limit.because.to_string(),
        models_own: false,
    };
    if let Some(tokens) = advertised.filter(|&t| t > claim.tokens) {
        claim = Claim {
            tokens,
            by: format!("max_model_len {tokens} in GET /models"),
            models_own: false,
        };
    }
    if let Some(tokens) = model.filter(|&t| t > claim.tokens) {
        claim = Claim {
            tokens,
            by: format!("max_seq_length {tokens} in the reference file: the model's own"),
            models_own: true,
        };
    }
    Ok(claim)
}

/// A claimed input limit: its tokens, who claims it, and whether the model does.
struct Claim {
    tokens: u64,
    by: String,
    models_own: bool,
}

/// LEN-006: "An input just under the input limit (declared, advertised in the models
/// listing, or found) is embedded whole: replacing its last sixteenth changes its
/// vector beyond the server's noise."
///
/// Both inputs are the word stream's first words followed by an ending, the stream's own
/// or other common words of one token each: a server that cuts anywhere before the
/// ending gives both one vector. A
/// server that cuts early fails with where it cuts, narrowed down as the limit search
/// narrows a cut (ollama/ollama#14259: bge-m3 embedded 2048 of its 8192 tokens).
async fn whole_below_the_limit(s: &Session) -> CheckResult {
    let limit = match input_limit(s).await? {
        Ok(limit) => limit,
        Err(verdict) => return Ok(verdict),
    };
    let claim = claimed_limit(s, &limit).await?;
    let (tokens, claimed_by) = (claim.tokens, claim.by.clone());
    let mut n = if tokens == limit.tokens {
        words_within(&limit)
    } else {
        usize::try_from(tokens.saturating_sub(usage::SPECIAL_TOKENS)).unwrap_or(usize::MAX)
    };
    let send = |text: String| s.send(requests::probe(body(s, json!(text), &[])));
    let mut whole = send(words(n)).await?;
    // The model reads more than this server may be configured to take: the longest
    // input it embeds, halving down towards the limit it showed.
    let mut refused = Vec::new();
    while claim.models_own && whole.first_vector().is_none() && n / 2 > words_within(&limit) {
        refused.push(format!("{n} words answered {}", whole.summary()));
        n /= 2;
        whole = send(words(n)).await?;
    }
    let claimed_by = match refused.as_slice() {
        [] => claimed_by,
        _ => format!("{claimed_by}; {}", refused.join(", ")),
    };
    let kept = n - (n / 16).max(1);
    let ending: Vec<&str> = OTHER_COMMON
        .iter()
        .cycle()
        .take(n - kept)
        .copied()
        .collect();
    let other_end = send(format!("{} {}", words(kept), ending.join(" "))).await?;
    let evidence = |v: Verdict| v.with(&whole.exchange).with(&other_end.exchange);
    let (Some(a), Some(b)) = (whole.first_vector(), other_end.first_vector()) else {
        return Ok(evidence(Verdict::skip(format!(
            "inputs of {n} words, within the {tokens}-token limit, answered {} and {}: no vectors to compare (see IN-010)",
            whole.summary(),
            other_end.summary()
        ))));
    };
    let similarity = cosine(&a, &b);
    if !embeddings::learned(s).noise().same(similarity) {
        return Ok(evidence(Verdict::pass(format!(
            "an input of {n} words, within the {tokens}-token limit ({claimed_by}), was embedded whole: another last {} words give cosine {similarity:.4}",
            n - kept
        ))));
    }
    let noise = embeddings::learned(s).noise();
    if noise.cosine < crate::vectors::NOISE_BOUND {
        return Ok(evidence(Verdict::inconclusive(format!(
            "an input of {n} words and the same with its last {} words replaced gave cosine {similarity:.6}, within this server's noise: identical requests differ by cosine {:.6} (CONS-001), more than noise explains, so no cut can be told from it",
            n - kept,
            noise.cosine
        ))));
    }
    let (differs_at, same_at) = bisect_within(s, &a, n, kept).await?;
    Ok(evidence(Verdict::fail(format!(
        "an input of {n} words, within the {tokens}-token limit ({claimed_by}), kept its vector when its last {} words were replaced (cosine {similarity:.6}): the server cuts inputs after about {same_at} words (words after the first {same_at} change nothing, after the first {differs_at} they do), before its limit",
        n - kept
    ))))
}

/// Where a server cuts inputs of `n` words that it should embed whole, between 0 and
/// `same_at` words: `words(m)` followed by `n - m` words of another stream has the
/// vector of `words(n)` exactly when the server keeps no more than `m` words. Every
/// input is `n` words long, within the limit, so no refusal can end the search early;
/// it narrows the cut down to a few words within the request allowance. Returns
/// `(differs_at, same_at)`: the cut lies after the first and at or before the second.
async fn bisect_within(
    s: &Session,
    whole: &[f64],
    n: usize,
    mut same_at: usize,
) -> Result<(usize, usize), ProbeError> {
    let noise = embeddings::learned(s).noise();
    let (mut differs_at, mut sent) = (0, 0);
    while sent < MAX_SEARCH_REQUESTS && same_at - differs_at > 2 {
        let mid = differs_at + (same_at - differs_at) / 2;
        let text = format!("{} {}", words(mid), other_words(n - mid));
        let reply = s.send(requests::probe(body(s, json!(text), &[]))).await?;
        sent += 1;
        let Some(vector) = reply.first_vector() else {
            break;
        };
        if noise.same(cosine(whole, &vector)) {
            same_at = mid;
        } else {
            differs_at = mid;
        }
    }
    Ok((differs_at, same_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_words_are_one_toy_token_each() {
        let text = words(1000);
        assert_eq!(reference_server::tokenize(&text, 50_000).len(), 1000);
    }

    #[test]
    fn refusals_name_their_limit() {
        let openai = "input[0] has 1024 tokens; this model's maximum context length is 512 tokens";
        assert_eq!(named_limit(openai, 512, 1024), Some(512));
        let tei = "`inputs` must have less than 8192 tokens. given: 9000";
        assert_eq!(named_limit(tei, 4096, 9000), Some(8192));
        assert_eq!(named_limit("input too long", 0, 256), None);
        assert_eq!(
            named_limit("input[1] is too long, max 128", 0, 256),
            Some(128)
        );
    }
}
