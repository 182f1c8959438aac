//! Agreement without a reference: in a matrix, the servers that serve one model are
//! compared on the probe texts, text by text.
//!
//! Engines serving the same weights agree far above 0.99 (see [`crate::reference`]). On
//! each text, the servers that agree with one another are the consensus when they are
//! at least two, at least half of those that embedded it, and more than any other
//! circle of agreeing servers; a server apart from the consensus is the text's outlier,
//! and the matrix names it with its cosines: no reference file is needed for that, only
//! three servers. Without a consensus (two servers that disagree, two camps of one size)
//! no one is named: the pairs show it.
//!
//! ```text
//! llamacpp disagrees with the 5 servers that agree on 2 of 15 texts: ko-busan 0.6042, ko-seoul 0.6640
//! ```

use crate::contracts::embeddings::clauses::reference::embed_texts;
use crate::contracts::embeddings::reference::probe_texts;
use crate::session::Session;
use crate::vectors::{cosine, median};
use serde::{Deserialize, Serialize};

/// One server's vectors for the probe texts.
#[derive(Clone, Debug)]
pub struct ProbeVectors {
    pub label: String,
    /// The model it serves, as grouped: `same_model` of `--servers`, else the model
    /// its audit requested.
    pub model: String,
    /// Per probe text, in file order: the server's vector, if it gave one.
    pub vectors: Vec<Option<Vec<f64>>>,
}

/// Embeds the probe texts through the audit's session, after its clauses: the
/// requests count against the same budgets, but not in the audit's figures. A text
/// the server gives no vector for (or an exhausted budget) leaves a gap.
pub async fn probe_vectors(session: &Session, label: &str, model: &str) -> ProbeVectors {
    let texts = probe_texts();
    let words: Vec<&str> = texts.iter().map(|t| t.text.as_str()).collect();
    let vectors = match embed_texts(session, &words).await {
        Ok(items) => items
            .into_iter()
            .map(|item| item.ok().map(|(vector, _)| vector))
            .collect(),
        Err(_) => vec![None; texts.len()],
    };
    ProbeVectors {
        label: label.to_owned(),
        model: model.to_owned(),
        vectors,
    }
}

/// The servers of one model, compared.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Group {
    pub model: String,
    /// The servers that gave vectors, in matrix order.
    pub servers: Vec<String>,
    /// Cosine at or above which two vectors of one text agree.
    pub threshold: f64,
    /// Probe texts embedded by at least two of the servers.
    pub texts: usize,
    pub pairs: Vec<Pair>,
    pub outliers: Vec<Outlier>,
}

/// Two servers' vectors for the texts both embedded.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub texts: usize,
    pub median: f64,
    pub lowest: TextCosine,
}

/// A text and a cosine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TextCosine {
    pub text: String,
    pub cosine: f64,
}

/// Texts an outlier's sentence names at most, worst first.
const NAMED: usize = 5;

/// A server apart, on some texts, from a consensus of the servers that agree among
/// themselves.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Outlier {
    pub server: String,
    /// How many servers the consensus held (the fewest over its texts).
    pub others: usize,
    /// Texts on which the servers had a consensus.
    pub compared: usize,
    /// The texts it is apart on, with its median cosine to the consensus, lowest first.
    pub texts: Vec<TextCosine>,
}

impl Outlier {
    /// `llamacpp disagrees with the 5 servers that agree on 2 of 15 texts: ko-busan
    /// 0.6042, ko-seoul 0.6640`, the worst [`NAMED`] texts named.
    pub fn sentence(&self) -> String {
        let named: Vec<String> = self
            .texts
            .iter()
            .take(NAMED)
            .map(|t| format!("{} {:.4}", t.text, t.cosine))
            .collect();
        let more = if self.texts.len() > NAMED {
            ", …"
        } else {
            ""
        };
        format!(
            "{} disagrees with the {} servers that agree on {} of {} texts: {}{more}",
            self.server,
            self.others,
            self.texts.len(),
            self.compared,
            named.join(", ")
        )
    }
}

/// Groups the servers by model and compares each group of two or more.
pub fn compare(servers: &[ProbeVectors], threshold: f64) -> Vec<Group> {
    let ids: Vec<String> = probe_texts().into_iter().map(|t| t.id).collect();
    let mut models: Vec<&str> = Vec::new();
    for server in servers {
        if !models.contains(&server.model.as_str()) {
            models.push(&server.model);
        }
    }
    models
        .into_iter()
        .filter_map(|model| {
            let members: Vec<&ProbeVectors> = servers
                .iter()
                .filter(|s| s.model == model && s.vectors.iter().any(Option::is_some))
                .collect();
            (members.len() >= 2).then(|| group(model, &members, &ids, threshold))
        })
        .collect()
}

fn group(model: &str, members: &[&ProbeVectors], ids: &[String], threshold: f64) -> Group {
    Group {
        model: model.to_owned(),
        servers: members.iter().map(|m| m.label.clone()).collect(),
        threshold,
        texts: (0..ids.len())
            .filter(|&k| present(members, k).len() >= 2)
            .count(),
        pairs: pairs(members, ids),
        outliers: outliers(members, ids, threshold),
    }
}

/// Member `m`'s vector of text `k`, if it gave one.
fn vector<'a>(members: &[&'a ProbeVectors], m: usize, k: usize) -> Option<&'a Vec<f64>> {
    members[m].vectors.get(k).and_then(Option::as_ref)
}

/// The cosine between two members' vectors of text `k`, when both gave one.
fn between(members: &[&ProbeVectors], a: usize, b: usize, k: usize) -> Option<f64> {
    Some(cosine(vector(members, a, k)?, vector(members, b, k)?))
}

/// The members that gave a vector for text `k`.
fn present(members: &[&ProbeVectors], k: usize) -> Vec<usize> {
    (0..members.len())
        .filter(|&m| vector(members, m, k).is_some())
        .collect()
}

/// Every pair of members, over the texts both embedded.
fn pairs(members: &[&ProbeVectors], ids: &[String]) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for a in 0..members.len() {
        for b in a + 1..members.len() {
            let cosines: Vec<(usize, f64)> = (0..ids.len())
                .filter_map(|k| between(members, a, b, k).map(|c| (k, c)))
                .collect();
            pairs.extend(pair(members[a], members[b], &cosines, ids));
        }
    }
    pairs
}

/// The members apart from the consensus on some texts.
fn outliers(members: &[&ProbeVectors], ids: &[String], threshold: f64) -> Vec<Outlier> {
    let mut apart: Vec<Vec<TextCosine>> = vec![Vec::new(); members.len()];
    let mut compared = vec![0usize; members.len()];
    let mut consensus = vec![usize::MAX; members.len()];
    for (k, id) in ids.iter().enumerate() {
        let present = present(members, k);
        let agrees = |i, j| between(members, i, j, k).is_some_and(|c| c >= threshold);
        let Some(agreeing) = consensus_of(&present, agrees) else {
            continue;
        };
        for &i in &present {
            compared[i] += 1;
            if agreeing.contains(&i) {
                continue;
            }
            let to_them = agreeing.iter().filter_map(|&j| between(members, i, j, k));
            apart[i].push(TextCosine {
                text: id.clone(),
                cosine: median(to_them.collect()),
            });
            consensus[i] = consensus[i].min(agreeing.len());
        }
    }
    apart
        .into_iter()
        .enumerate()
        .filter(|(_, texts)| !texts.is_empty())
        .map(|(i, mut texts)| {
            texts.sort_by(|x, y| x.cosine.total_cmp(&y.cosine));
            Outlier {
                server: members[i].label.clone(),
                others: consensus[i],
                compared: compared[i],
                texts,
            }
        })
        .collect()
}

/// The servers of `present` that agree with the one agreeing with most others: the
/// consensus a server apart from it is measured against, when it holds at least two
/// servers and half of `present`, and no other circle of agreeing servers is as large.
/// `None` when there is no such consensus.
fn consensus_of(present: &[usize], agrees: impl Fn(usize, usize) -> bool) -> Option<Vec<usize>> {
    let circle = |i: usize| -> Vec<usize> {
        present
            .iter()
            .copied()
            .filter(|&j| j == i || agrees(i, j))
            .collect()
    };
    let largest = present.iter().map(|&i| circle(i)).max_by_key(Vec::len)?;
    let rival = present
        .iter()
        .filter(|i| !largest.contains(i))
        .map(|&i| circle(i).len())
        .max()
        .unwrap_or(0);
    (largest.len() >= 2 && largest.len() * 2 >= present.len() && largest.len() > rival)
        .then_some(largest)
}

/// The pair's figures over the texts both embedded; `None` when there are none.
fn pair(
    a: &ProbeVectors,
    b: &ProbeVectors,
    cosines: &[(usize, f64)],
    ids: &[String],
) -> Option<Pair> {
    let &(k, lowest) = cosines.iter().min_by(|x, y| x.1.total_cmp(&y.1))?;
    Some(Pair {
        a: a.label.clone(),
        b: b.label.clone(),
        texts: cosines.len(),
        median: median(cosines.iter().map(|(_, c)| *c).collect()),
        lowest: TextCosine {
            text: ids[k].clone(),
            cosine: lowest,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server whose vector for text `k` is `[1, 0]`, or `[1, 1]` on the `apart` texts.
    fn server(label: &str, model: &str, apart: &[usize]) -> ProbeVectors {
        let n = probe_texts().len();
        ProbeVectors {
            label: label.to_owned(),
            model: model.to_owned(),
            vectors: (0..n)
                .map(|k| {
                    Some(if apart.contains(&k) {
                        vec![1.0, 1.0]
                    } else {
                        vec![1.0, 0.0]
                    })
                })
                .collect(),
        }
    }

    #[test]
    fn the_server_apart_from_agreeing_others_is_named_with_its_texts() {
        let servers = [
            server("vllm", "m", &[]),
            server("infinity", "m", &[]),
            server("llamacpp", "m", &[6]),
            server("other", "n", &[1]),
        ];
        let groups = compare(&servers, 0.99);
        assert_eq!(groups.len(), 1, "a model served once is no group");
        let group = &groups[0];
        assert_eq!(group.servers, ["vllm", "infinity", "llamacpp"]);
        assert_eq!(group.pairs.len(), 3);
        assert_eq!(group.outliers.len(), 1);
        let total = probe_texts().len();
        assert_eq!(
            group.outliers[0].sentence(),
            format!(
                "llamacpp disagrees with the 2 servers that agree on 1 of {total} texts: ko-busan 0.7071"
            )
        );
        let pair = &group.pairs[1];
        assert_eq!((pair.a.as_str(), pair.b.as_str()), ("vllm", "llamacpp"));
        assert_eq!(pair.lowest.text, "ko-busan");
        assert!((pair.median - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_consensus_of_half_names_a_smaller_camp_and_two_camps_of_one_size_name_no_one() {
        let consensus: Vec<ProbeVectors> = (0..3)
            .map(|i| server(&format!("right{i}"), "m", &[]))
            .chain((0..3).map(|i| server(&format!("wrong{i}"), "m", &[6])))
            .collect();
        assert!(
            compare(&consensus, 0.99)[0].outliers.is_empty(),
            "3 against 3"
        );
        let mut plurality = consensus;
        plurality.push(server("odd", "m", &[0]));
        plurality.push(server("right3", "m", &[]));
        let named: Vec<String> = compare(&plurality, 0.99)[0]
            .outliers
            .iter()
            .map(|o| o.server.clone())
            .collect();
        assert_eq!(named, ["wrong0", "wrong1", "wrong2", "odd"]);
    }

    #[test]
    fn two_servers_that_disagree_name_no_one() {
        let servers = [server("a", "m", &[0, 1, 2]), server("b", "m", &[])];
        let group = &compare(&servers, 0.99)[0];
        assert!(group.outliers.is_empty());
        assert!(group.pairs[0].lowest.cosine < 0.99);
    }
}
