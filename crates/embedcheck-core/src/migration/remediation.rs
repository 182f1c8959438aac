//! What to change in the client: one action per finding, each with its evidence.
//!
//! Actions come only from findings (a broken expectation, vectors that differ, a
//! ranking that moves), never from a checklist, so two servers that behave alike
//! get an empty list.
//!
//! ```text
//! - Stop sending `dimensions` …  (dimensions: 512 → 500 on the candidate; 200 · 512 floats on the baseline)
//! - Prepend the query instruction yourself …  (query cosine old vs new: 0.52 bare, 0.9998 prefixed)
//! ```

use super::contract::{Expectation, Judgement, Topic};
use super::retrieval::Retrieval;
use super::vectors::VectorEquivalence;
use crate::http::Encoding;
use serde::Serialize;

/// One client-side change and the finding it comes from.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Remedy {
    pub action: String,
    pub evidence: String,
    /// The finding: a contract topic, `vectors` or `retrieval`.
    pub finding: String,
}

/// Every action the findings imply, in the order a migration would apply them.
pub(crate) fn derive(
    contract: &[Expectation],
    vectors: &VectorEquivalence,
    retrieval: &Retrieval,
) -> Vec<Remedy> {
    let mut remedies: Vec<Remedy> = contract
        .iter()
        .filter(|e| e.judgement == Judgement::Broken)
        .filter_map(|e| for_expectation(e, retrieval))
        .collect();
    remedies.extend(for_vectors(vectors));
    remedies.extend(for_retrieval(vectors, retrieval));
    remedies
}

fn remedy(finding: &str, action: impl Into<String>, evidence: impl Into<String>) -> Remedy {
    Remedy {
        action: action.into(),
        evidence: evidence.into(),
        finding: finding.to_owned(),
    }
}

fn for_expectation(e: &Expectation, retrieval: &Retrieval) -> Option<Remedy> {
    let seen = format!("baseline: {}; candidate: {}", e.baseline, e.candidate);
    if let Some(action) = &e.findings.action {
        return Some(remedy(e.topic.name(), action.as_str(), seen));
    }
    Some(match e.topic {
        Topic::MATRYOSHKA if e.findings.refuses_native => remedy(
            "matryoshka",
            "stop sending `dimensions`; for shorter vectors keep the first d values and re-normalise them in the client",
            seen,
        ),
        Topic::MATRYOSHKA => remedy(
            "matryoshka",
            format!(
                "stop sending `dimensions` below {}; truncate vectors in the client (first d values, re-normalised)",
                e.findings.native.unwrap_or_default()
            ),
            seen,
        ),
        Topic::INSTRUCTION => remedy(
            "instruction",
            format!(
                "prepend the query instruction yourself (`{}`) and stop relying on `input_type`",
                retrieval.instruction.client_prefix.replace('\n', "\\n")
            ),
            instruction_evidence(&seen, retrieval),
        ),
        Topic::OVERLENGTH => remedy(
            "overlength",
            match e.findings.truncates_at {
                Some(n) => format!("truncate inputs to {n} tokens with the model's tokenizer before sending (a cut at whole characters can end a token or two away from the old server's cut)"),
                None => "keep truncating inputs before sending; the candidate's answer to over-length input is not a clean 4xx".to_owned(),
            },
            seen,
        ),
        Topic::ENCODING => remedy(
            "encoding",
            match e.findings.candidate_encoding {
                Some(Encoding::Base64) => "decode base64 embeddings, or send `encoding_format: \"float\"` (or no `encoding_format`)".to_owned(),
                _ => "send `encoding_format: \"float\"` and parse float arrays: the candidate does not return base64".to_owned(),
            },
            seen,
        ),
        Topic::ERROR_SHAPE => remedy(
            "error_shape",
            "read error messages from `error.message`, a top-level `message` and `detail` alike",
            seen,
        ),
        Topic::SERVER_ERRORS => remedy(
            "server_errors",
            "do not retry 5xx answers to these requests: they are client mistakes the candidate reports as server errors",
            server_error_evidence(e),
        ),
        _ => return None,
    })
}

fn instruction_evidence(seen: &str, retrieval: &Retrieval) -> String {
    let effect = &retrieval.instruction;
    let mut parts = vec![seen.to_owned()];
    if let (Some(dropped), Some(fixed)) = (effect.dropped, effect.client_prefixed) {
        parts.push(format!(
            "query cosine old vs new: median {:.4} with the instruction dropped, {:.4} with it prefixed by the client",
            dropped.median, fixed.median
        ));
    }
    let recall = |name: &str| retrieval.scenario(name).map(|s| s.recall_at_k);
    if let (Some(bare), Some(prefixed)) = (recall("candidate_bare"), recall("candidate_prefixed")) {
        parts.push(format!(
            "recall@{} {bare:.2} bare vs {prefixed:.2} prefixed",
            retrieval.k
        ));
    }
    parts.join("; ")
}

fn server_error_evidence(e: &Expectation) -> String {
    let shown: Vec<String> = e
        .findings
        .server_errors
        .iter()
        .take(5)
        .map(|(request, status)| format!("{request} → {status}"))
        .collect();
    let more = e.findings.server_errors.len().saturating_sub(shown.len());
    let tail = if more > 0 {
        format!("; and {more} more")
    } else {
        String::new()
    };
    format!("{}{tail}", shown.join("; "))
}

/// Re-embedding only when vectors differ beyond the noise on documents both servers
/// embedded; a tokenizer remark only when both count tokens and the counts differ.
fn for_vectors(v: &VectorEquivalence) -> Vec<Remedy> {
    let mut remedies = Vec::new();
    let dims_differ = matches!(
        (v.dimensions_baseline, v.dimensions_candidate),
        (Some(x), Some(y)) if x != y
    );
    if let (false, Some(min), Some(median)) = (v.equivalent, v.cosine_min, v.cosine_median) {
        remedies.push(remedy(
            "vectors",
            "re-embed the whole corpus with the candidate before it serves queries",
            format!(
                "per-document cosine min {min:.4}, median {median:.4} over the {} documents both servers embedded (the same vector is at least {:.4})",
                v.common, v.same_at
            ),
        ));
    } else if dims_differ {
        remedies.push(remedy(
            "vectors",
            "re-embed the whole corpus with the candidate before it serves queries",
            format!(
                "{:?}-value vectors on the baseline, {:?} on the candidate: the old index cannot be searched with new vectors",
                v.dimensions_baseline, v.dimensions_candidate
            ),
        ));
    }
    if !v.token_differences.is_empty() && v.tokens_not_comparable.is_none() {
        remedies.push(remedy(
            "vectors",
            "recount chunk sizes and token budgets with the candidate's tokenizer",
            format!(
                "{} of {} documents count differently; totals {} vs {} tokens over the {} documents both embedded",
                v.token_differences.len(),
                v.documents,
                v.tokens_baseline,
                v.tokens_candidate,
                v.common
            ),
        ));
    }
    remedies
}

/// Only when the vectors pass as equivalent: otherwise re-embedding is already the
/// action, and a mixed index is out of the question anyway.
fn for_retrieval(v: &VectorEquivalence, retrieval: &Retrieval) -> Option<Remedy> {
    let mixed = retrieval.scenario("baseline_index_candidate_queries")?;
    let agreement = mixed.versus_reference.as_ref()?;
    if !v.equivalent || agreement.top_hit_changed.is_empty() {
        return None;
    }
    Some(remedy(
        "retrieval",
        "re-embed the corpus rather than querying the old index with the candidate's vectors",
        format!(
            "with the old index and new queries the top hit changed for {} of {} queries ({}); overlap@{} {:.2}",
            agreement.top_hit_changed.len(),
            mixed.queries.len(),
            agreement.top_hit_changed.join(", "),
            retrieval.k,
            agreement.overlap_at_k
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::retrieval::InstructionEffect;

    fn vectors(min: f64, equivalent: bool) -> VectorEquivalence {
        VectorEquivalence {
            documents: 40,
            common: 40,
            dimensions_baseline: Some(1024),
            dimensions_candidate: Some(1024),
            norm_baseline: Some(1.0),
            norm_candidate: Some(1.0),
            tokens_baseline: 3375,
            tokens_candidate: 3375,
            tokens_not_comparable: None,
            cosine_min: Some(min),
            cosine_median: Some(min),
            cosine_max: Some(min),
            least_similar: None,
            cosines: Vec::new(),
            token_differences: Vec::new(),
            failures_baseline: Vec::new(),
            failures_candidate: Vec::new(),
            same_at: 0.999,
            equivalent,
        }
    }

    fn retrieval() -> Retrieval {
        Retrieval {
            documents: 40,
            queries: 14,
            k: 5,
            instruction: InstructionEffect {
                client_prefix: "Q: {text}".to_owned(),
                dropped: None,
                client_prefixed: None,
                both_bare: None,
            },
            scenarios: Vec::new(),
            not_ranked: Vec::new(),
            migrated: "candidate_prefixed",
        }
    }

    #[test]
    fn alike_servers_need_no_change() {
        assert!(derive(&[], &vectors(0.9998, true), &retrieval()).is_empty());
    }

    #[test]
    fn different_vectors_call_for_re_embedding_with_the_numbers() {
        let remedies = derive(&[], &vectors(0.82, false), &retrieval());
        assert_eq!(remedies.len(), 1);
        assert!(remedies[0].action.starts_with("re-embed the whole corpus"));
        assert!(
            remedies[0].evidence.contains("min 0.8200"),
            "{:?}",
            remedies[0]
        );
    }
}
