//! A recorded baseline: a corpus embedded by one server and written to a directory, so
//! that a later run can compare another server with it when the first one is gone (an
//! upgrade in place, one GPU for both, an engine or quantisation change).
//!
//! `DIR/baseline.jsonl` holds one JSON object a line, each tagged by `line`:
//!
//! ```text
//! {"line":"header","kind":"embedcheck-baseline","format":1,"embedcheck":"0.1.0",
//!  "recorded_unix":1796000000,"server":"vllm","model":"…","answered_model":"…",
//!  "listed_models":["…"],"fingerprint":{"Server":"uvicorn","GET /version version":"…"},
//!  "dimensions":384,"template":{…},"noise":{…},"corpus":{…},"query_tokens":{"bare":140,…}}
//! {"line":"batch","index":0,"ids":["en-01",…],"tokens":93}
//! {"line":"document","id":"en-01","text":"…","sha256":"…","batch":0,"norm":1.0,"vector":"…"}
//! {"line":"refused","id":"ko-07","text":"…","batch":2,"answer":"400 \"…maximum context length…\""}
//! {"line":"query","id":"q-01","text":"…","relevant":["en-03"],"forms":{"bare":{…}},"top":[["en-03",0.8123],…]}
//! ```
//!
//! Vectors are little-endian IEEE half floats in base64: a unit vector's cosine with its
//! recorded self loses about 2e-8 to the rounding (below 1e-7 in this module's tests),
//! far below any band a replay judges,
//! and 2,000 documents of 1024 dimensions take about 5.5 MB. The norm is kept in full,
//! since a normalisation change shows there and not in the cosine. Token counts are the
//! server's `usage.prompt_tokens` per batch, with the batch's composition (and per query
//! form's request, in the header): compared
//! later with the same kind of server's own counts, never with another tokenizer. A
//! recording sends documents in batches of an indexer's mix of sizes (32, 8, 1, 64,
//! 16, repeated), so a replay reaches deep batch positions as indexing does. A
//! batch the server refuses is sent one document at a time (`"alone": true`), and a
//! document refused even alone is recorded with the answer it got. Every text carries its
//! SHA-256; a recording of hashes only (`"texts": false`) leaves the texts out, and a
//! replay takes them back from the corpus they came from.

use super::corpus::{Corpus, Document};
use super::retrieval::Instruction;
use super::vectors::embed_with;
use crate::contracts::embeddings;
use crate::session::Session;
use crate::sha256;
use crate::vectors::cosine;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The file a recording directory holds.
pub const FILE: &str = "baseline.jsonl";

/// The version of the file's format; a reader refuses a newer one.
pub const FORMAT: u32 = 1;

/// What the header's `kind` says, so that no other JSON Lines file is read as one.
const KIND: &str = "embedcheck-baseline";

/// Documents kept per query's recorded ranking.
pub const TOP: usize = 100;

/// The query forms a recording embeds: bare, as a client that sends no instruction
/// does, and prefixed with the instruction, as one that prepends it itself.
pub const BARE: &str = "bare";
pub const PREFIXED: &str = "prefixed";

/// The header: what was recorded, from which server, with which requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub kind: String,
    pub format: u32,
    /// The embedcheck version that recorded it.
    pub embedcheck: String,
    /// Seconds since 1970 (UTC) when the recording finished.
    pub recorded_unix: u64,
    /// The server's label in reports (its host and port unless named).
    pub server: String,
    /// The model the requests named.
    pub model: String,
    /// The `model` the server answered with, where it said one: informational.
    pub answered_model: Option<String>,
    /// The ids `GET /models` listed, where it listed any: informational, never what a
    /// replay is judged on (a rename changes it, a new engine need not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed_models: Vec<String>,
    /// What else the server says of itself (`Server` header, `/version`, `/info`,
    /// `/props`): informational, as the listed models are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fingerprint: super::fingerprint::Fingerprint,
    pub dimensions: usize,
    pub template: Template,
    pub noise: RepeatNoise,
    pub corpus: CorpusCounts,
    /// Whether the file holds the texts, or their SHA-256 only (`--record-hashes-only`):
    /// a replay then reads them from the corpus they came from.
    #[serde(default = "texts_stored")]
    pub texts: bool,
    /// Requests the recording sent: a replay sends no more (it repeats no batch for
    /// the noise); 0 in a file written before it was kept.
    #[serde(default)]
    pub requests: u64,
    /// What usage counted for each query form's request (every query in one), where
    /// the server said: a replay names the queries whose count changed, as it names a
    /// document batch's. Empty in a file written before it was kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query_tokens: BTreeMap<String, u64>,
}

fn texts_stored() -> bool {
    true
}

/// The requests a recording sent, so that a replay sends the same ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Template {
    /// Fields sent beside `input` with every document batch.
    pub document_fields: Map<String, Value>,
    /// `{text}`'s template of the prefixed query form and its task.
    pub query_template: String,
    pub query_task: String,
    /// Documents per request, in the order sent: the mix an indexer sends
    /// ([`INDEXING_MIX`]), so a replay reaches batch positions past 16 too.
    #[serde(default)]
    pub batch_sizes: Vec<usize>,
}

/// The sizes of the recording's document requests, repeated over the corpus: a real
/// indexer's batches are of many sizes and reach deep positions, where some servers
/// damage items (Ollama from position 16 on, ollama/ollama#6262), and a single text
/// (the size a query has). A replay sends the same batches, so a text recorded at
/// position 20 is compared at position 20.
pub const INDEXING_MIX: [usize; 5] = [32, 8, 1, 64, 16];

/// The corpus's documents in [`INDEXING_MIX`]'s batches, in corpus order.
fn indexing_batches(documents: &[Document]) -> Vec<&[Document]> {
    let mut batches = Vec::new();
    let mut rest = documents;
    for size in INDEXING_MIX.into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (batch, after) = rest.split_at(size.min(rest.len()));
        batches.push(batch);
        rest = after;
    }
    batches
}

/// The first document batch sent twice on fresh requests: how far one server's own
/// answers move, the floor below which no replay difference means anything.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatNoise {
    /// The lowest cosine between a text's two vectors; `None` when the repeat failed.
    pub min_cosine: Option<f64>,
    pub texts: usize,
}

/// How many texts the recording holds, and where the corpus came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusCounts {
    pub origin: String,
    pub documents: usize,
    pub queries: usize,
}

/// One request of the recording's documents and what its usage counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub index: usize,
    pub ids: Vec<String>,
    pub tokens: Option<u64>,
    /// The batch was refused, and its documents sent one at a time: a replay sends
    /// them the same way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alone: bool,
}

/// One recorded vector: its half-float values and the norm the server gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub norm: f64,
    /// Base64 of the little-endian half floats.
    pub vector: String,
}

/// One document as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedDocument {
    pub id: String,
    /// Empty where the recording keeps texts as hashes only.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The text's SHA-256, by which a corpus's text is matched to it.
    pub sha256: String,
    /// The [`Batch`] it was sent in.
    pub batch: usize,
    #[serde(flatten)]
    pub recorded: Recorded,
}

/// A document the server refused even alone (an input over its limit, say): what it
/// answered, so that a replay can tell a server that now answers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RefusedDocument {
    pub id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    pub sha256: String,
    pub batch: usize,
    /// The answer: `400 "…maximum context length…"`.
    pub answer: String,
}

/// One query as recorded: its vector per form and its ranking of the documents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedQuery {
    pub id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    pub sha256: String,
    pub relevant: Vec<String>,
    pub forms: BTreeMap<String, Recorded>,
    /// The [`TOP`] documents by cosine with the bare form, best first.
    pub top: Vec<(String, f64)>,
}

/// A line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
enum Line {
    /// Boxed: one a file, and far larger than the lines that repeat.
    Header(Box<Header>),
    Batch(Batch),
    Document(RecordedDocument),
    Refused(RefusedDocument),
    Query(RecordedQuery),
}

/// A whole recording.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub header: Header,
    pub batches: Vec<Batch>,
    pub documents: Vec<RecordedDocument>,
    pub refused: Vec<RefusedDocument>,
    pub queries: Vec<RecordedQuery>,
}

/// Why a recording could not be made, written or read.
#[derive(Debug, Error)]
pub enum RecordingError {
    #[error("failed to write or read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} line {line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{} is not a recorded baseline: {message}", path.display())]
    NotABaseline { path: PathBuf, message: String },
    #[error("not recorded: {0}")]
    Server(String),
}

/// Half-float bits of `value`, rounded to nearest, ties to even (IEEE 754 binary16).
fn half_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0xff {
        return sign | 0x7c00 | if mantissa == 0 { 0 } else { 0x200 };
    }
    let biased = exponent - 127 + 15;
    if biased >= 0x1f {
        return sign | 0x7c00;
    }
    let (kept, dropped_bits) = if biased <= 0 {
        if biased < -10 {
            return sign;
        }
        // A subnormal half: the implicit bit joins the mantissa, shifted down.
        (
            (mantissa | 0x80_0000) >> (14 - biased),
            (14 - biased) as u32,
        )
    } else {
        (((biased as u32) << 10) | (mantissa >> 13), 13)
    };
    let full = if biased <= 0 {
        mantissa | 0x80_0000
    } else {
        mantissa
    };
    let dropped = full & ((1 << dropped_bits) - 1);
    let halfway = 1 << (dropped_bits - 1);
    let up = dropped > halfway || (dropped == halfway && kept & 1 == 1);
    // A carry out of the mantissa rounds into the exponent, as it should.
    sign | (kept + u32::from(up)) as u16
}

/// The value of half-float `bits`.
fn half_value(bits: u16) -> f32 {
    let sign = if bits & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff);
    match exponent {
        0 => sign * mantissa * 2f32.powi(-24),
        0x1f if mantissa == 0.0 => sign * f32::INFINITY,
        0x1f => f32::NAN,
        _ => sign * (1.0 + mantissa / 1024.0) * 2f32.powi(exponent - 15),
    }
}

impl Recorded {
    /// `vector` as recorded: its norm in full, its values as half floats.
    pub fn of(vector: &[f64]) -> Recorded {
        let bytes: Vec<u8> = vector
            .iter()
            .flat_map(|v| half_bits(*v as f32).to_le_bytes())
            .collect();
        Recorded {
            norm: vector.iter().map(|v| v * v).sum::<f64>().sqrt(),
            vector: STANDARD.encode(bytes),
        }
    }

    /// The recorded values, or why they cannot be read.
    pub fn values(&self) -> Result<Vec<f64>, String> {
        let bytes = STANDARD
            .decode(&self.vector)
            .map_err(|e| format!("the vector is not base64: {e}"))?;
        if bytes.len() % 2 != 0 {
            return Err(format!("the vector has an odd {} bytes", bytes.len()));
        }
        Ok(bytes
            .chunks_exact(2)
            .map(|pair| f64::from(half_value(u16::from_le_bytes([pair[0], pair[1]]))))
            .collect())
    }
}

/// The ids `GET /models` lists, in its order; none where it answers otherwise.
pub(crate) async fn listed_models(s: &Session) -> Vec<String> {
    let Ok(reply) = s.send(crate::http::Probe::list_models()).await else {
        return Vec::new();
    };
    let listed = reply
        .json
        .as_ref()
        .filter(|_| reply.is_success())
        .and_then(|j| j.get("data")?.as_array().cloned())
        .unwrap_or_default();
    listed
        .iter()
        .filter_map(|m| m.get("id")?.as_str().map(str::to_owned))
        .collect()
}

/// What the recording sends beside each document batch: the server's document value
/// of `input_type` where it embeds bare input as a query (UNK-003's finding), as a
/// migration's baseline is sent.
fn document_fields(s: &Session) -> Map<String, Value> {
    embeddings::learned(s)
        .document_field()
        .map(|(name, value)| (name.to_owned(), Value::String(value)))
        .into_iter()
        .collect()
}

/// Records `corpus` from the server of `s`: every document batch, the queries bare
/// and prefixed with `instruction`, the first batch again for the repeat noise.
/// Every request must succeed: a recording with holes could not be replayed.
pub async fn record(
    s: &Session,
    corpus: &Corpus,
    instruction: &Instruction,
    server: &str,
) -> Result<Recording, RecordingError> {
    let before = s.requests_sent();
    let fields = document_fields(s);
    let failed = |what: String| RecordingError::Server(what);
    let mut batches = Vec::new();
    let mut documents = Vec::new();
    let mut answered_model = None;
    let mut refused = Vec::new();
    for (index, batch) in indexing_batches(&corpus.documents).into_iter().enumerate() {
        let texts: Vec<&str> = batch.iter().map(|d| d.text.as_str()).collect();
        let ids = batch.iter().map(|d| d.id.clone()).collect();
        let (vectors, tokens, answered) = match embed_with(s, &texts, &fields, false).await {
            Ok(answer) => answer,
            Err(_) => {
                // A batch the server refuses (one input over its limit, say) is sent one
                // document at a time: what it answers alone is the baseline too.
                for document in batch {
                    match embed_with(s, &[document.text.as_str()], &fields, false).await {
                        Ok((vectors, ..)) => documents.push(RecordedDocument {
                            id: document.id.clone(),
                            text: document.text.clone(),
                            sha256: sha256::hex(&document.text),
                            batch: index,
                            recorded: Recorded::of(&vectors[0]),
                        }),
                        Err(answer) => refused.push(RefusedDocument {
                            id: document.id.clone(),
                            text: document.text.clone(),
                            sha256: sha256::hex(&document.text),
                            batch: index,
                            answer,
                        }),
                    }
                }
                batches.push(Batch {
                    index,
                    ids,
                    tokens: None,
                    alone: true,
                });
                continue;
            }
        };
        answered_model = answered_model.or(answered);
        for (document, vector) in batch.iter().zip(&vectors) {
            documents.push(RecordedDocument {
                id: document.id.clone(),
                text: document.text.clone(),
                sha256: sha256::hex(&document.text),
                batch: index,
                recorded: Recorded::of(vector),
            });
        }
        batches.push(Batch {
            index,
            ids,
            tokens,
            alone: false,
        });
    }
    if documents.is_empty() {
        let first = refused
            .first()
            .map_or("no documents", |r| r.answer.as_str());
        return Err(failed(format!(
            "every document was refused, even alone: {first}"
        )));
    }
    let noise = repeat_noise(s, corpus, &fields).await;
    let (queries, query_tokens) = record_queries(s, corpus, instruction, &documents).await?;
    let dimensions = documents
        .first()
        .and_then(|d| d.recorded.values().ok())
        .map_or(0, |v| v.len());
    let header = Header {
        kind: KIND.to_owned(),
        format: FORMAT,
        embedcheck: env!("CARGO_PKG_VERSION").to_owned(),
        recorded_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        server: server.to_owned(),
        model: s.model().to_owned(),
        answered_model,
        listed_models: listed_models(s).await,
        fingerprint: super::fingerprint::of(s).await,
        dimensions,
        template: Template {
            document_fields: fields,
            query_template: instruction.template.to_string(),
            query_task: instruction.task.clone(),
            batch_sizes: batches.iter().map(|b| b.ids.len()).collect(),
        },
        noise,
        corpus: CorpusCounts {
            origin: corpus.origin.clone(),
            documents: documents.len(),
            queries: queries.len(),
        },
        texts: true,
        requests: 0,
        query_tokens,
    };
    let header = Header {
        requests: s.requests_sent() - before,
        ..header
    };
    Ok(Recording {
        header,
        batches,
        documents,
        refused,
        queries,
    })
}

/// The first document batch sent again, fresh: the lowest cosine of a text with its
/// recorded self.
async fn repeat_noise(s: &Session, corpus: &Corpus, fields: &Map<String, Value>) -> RepeatNoise {
    let Some(batch) = corpus.batches().next() else {
        return RepeatNoise {
            min_cosine: None,
            texts: 0,
        };
    };
    let texts: Vec<&str> = batch.iter().map(|d| d.text.as_str()).collect();
    let (first, again) = (
        embed_with(s, &texts, fields, false).await,
        embed_with(s, &texts, fields, true).await,
    );
    let min_cosine = match (first, again) {
        (Ok((a, ..)), Ok((b, ..))) => a.iter().zip(&b).map(|(x, y)| cosine(x, y)).reduce(f64::min),
        _ => None,
    };
    RepeatNoise {
        min_cosine,
        texts: texts.len(),
    }
}

/// The queries bare and prefixed, one request each, and each bare query's ranking of
/// the recorded documents; with what usage counted for each form's request.
async fn record_queries(
    s: &Session,
    corpus: &Corpus,
    instruction: &Instruction,
    documents: &[RecordedDocument],
) -> Result<(Vec<RecordedQuery>, BTreeMap<String, u64>), RecordingError> {
    let bare: Vec<&str> = corpus.queries.iter().map(|q| q.text.as_str()).collect();
    let prefixed: Vec<String> = bare.iter().map(|t| instruction.prefixed(t)).collect();
    let prefixed: Vec<&str> = prefixed.iter().map(String::as_str).collect();
    let none = Map::new();
    let mut forms = Vec::new();
    let mut tokens = BTreeMap::new();
    for (name, texts) in [(BARE, &bare), (PREFIXED, &prefixed)] {
        let (vectors, counted, _) = embed_with(s, texts, &none, false)
            .await
            .map_err(|why| RecordingError::Server(format!("the {name} queries answered {why}")))?;
        forms.push((name, vectors));
        tokens.extend(counted.map(|n| (name.to_owned(), n)));
    }
    let document_vectors: Vec<Vec<f64>> = documents
        .iter()
        .map(|d| d.recorded.values().unwrap_or_default())
        .collect();
    let queries = corpus
        .queries
        .iter()
        .enumerate()
        .map(|(i, query)| RecordedQuery {
            id: query.id.clone(),
            text: query.text.clone(),
            sha256: sha256::hex(&query.text),
            relevant: query.relevant.clone(),
            forms: forms
                .iter()
                .map(|(name, vectors)| ((*name).to_owned(), Recorded::of(&vectors[i])))
                .collect(),
            top: ranking(&forms[0].1[i], documents, &document_vectors),
        })
        .collect();
    Ok((queries, tokens))
}

/// The [`TOP`] documents by cosine with `query`, best first, scores to six places.
fn ranking(
    query: &[f64],
    documents: &[RecordedDocument],
    vectors: &[Vec<f64>],
) -> Vec<(String, f64)> {
    let mut scored: Vec<(String, f64)> = documents
        .iter()
        .zip(vectors)
        .map(|(d, v)| (d.id.clone(), (cosine(query, v) * 1e6).round() / 1e6))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(TOP);
    scored
}

impl Recording {
    /// The recording with its texts left out, each kept as its SHA-256 only.
    pub fn without_texts(mut self) -> Recording {
        self.header.texts = false;
        self.documents.iter_mut().for_each(|d| d.text.clear());
        self.refused.iter_mut().for_each(|r| r.text.clear());
        self.queries.iter_mut().for_each(|q| q.text.clear());
        self
    }

    /// Puts back the texts of a recording that keeps hashes only, from the corpus it was
    /// recorded from; the first text the corpus lacks, else.
    pub fn with_texts_from(mut self, corpus: &Corpus) -> Result<Recording, String> {
        let known: std::collections::HashMap<String, &str> = corpus
            .documents
            .iter()
            .map(|d| d.text.as_str())
            .chain(corpus.queries.iter().map(|q| q.text.as_str()))
            .map(|text| (sha256::hex(text), text))
            .collect();
        let find = |id: &str, hash: &str| {
            known
                .get(hash)
                .map(|t| (*t).to_owned())
                .ok_or_else(|| format!("{id}'s text is not in the corpus (SHA-256 {hash})"))
        };
        for d in &mut self.documents {
            d.text = find(&d.id, &d.sha256)?;
        }
        for r in &mut self.refused {
            r.text = find(&r.id, &r.sha256)?;
        }
        for q in &mut self.queries {
            q.text = find(&q.id, &q.sha256)?;
        }
        self.header.texts = true;
        Ok(self)
    }

    /// Writes the recording to `dir/baseline.jsonl`, creating `dir`; the bytes written.
    pub fn write(&self, dir: &Path) -> Result<u64, RecordingError> {
        let path = dir.join(FILE);
        let io = |source| RecordingError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
        let lines = std::iter::once(Line::Header(Box::new(self.header.clone())))
            .chain(self.batches.iter().cloned().map(Line::Batch))
            .chain(self.documents.iter().cloned().map(Line::Document))
            .chain(self.refused.iter().cloned().map(Line::Refused))
            .chain(self.queries.iter().cloned().map(Line::Query));
        let mut written = 0;
        for line in lines {
            let text = serde_json::to_string(&line).expect("a recording serialises");
            writeln!(out, "{text}").map_err(io)?;
            written += text.len() as u64 + 1;
        }
        out.flush().map_err(io)?;
        Ok(written)
    }

    /// Reads `dir/baseline.jsonl` (or the file `dir` names), checking that it is a
    /// recording this version can read and that its parts agree.
    pub fn read(dir: &Path) -> Result<Recording, RecordingError> {
        let path = if dir.is_dir() {
            dir.join(FILE)
        } else {
            dir.to_owned()
        };
        let text = std::fs::read_to_string(&path).map_err(|source| RecordingError::Io {
            path: path.clone(),
            source,
        })?;
        Recording::parse(&text).map_err(|(line, message)| match line {
            0 => RecordingError::NotABaseline { path, message },
            line => RecordingError::Line {
                path,
                line,
                message,
            },
        })
    }

    /// A recording from the file's text; an error names its line (0: the whole file).
    fn parse(text: &str) -> Result<Recording, (usize, String)> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let header = match lines.next().map(|(_, l)| serde_json::from_str::<Line>(l)) {
            Some(Ok(Line::Header(header))) => *header,
            _ => return Err((0, "its first line is no baseline header".to_owned())),
        };
        if header.kind != KIND {
            return Err((0, format!("its header's kind is {:?}", header.kind)));
        }
        if header.format > FORMAT {
            return Err((
                0,
                format!(
                    "it is format {}, recorded by embedcheck {}; this embedcheck reads format {FORMAT} at most",
                    header.format, header.embedcheck
                ),
            ));
        }
        let mut recording = Recording {
            header,
            batches: Vec::new(),
            documents: Vec::new(),
            refused: Vec::new(),
            queries: Vec::new(),
        };
        for (number, line) in lines {
            match serde_json::from_str::<Line>(line) {
                Ok(Line::Header(_)) => return Err((number + 1, "a second header".to_owned())),
                Ok(Line::Batch(b)) => recording.batches.push(b),
                Ok(Line::Document(d)) => recording.documents.push(d),
                Ok(Line::Refused(r)) => recording.refused.push(r),
                Ok(Line::Query(q)) => recording.queries.push(q),
                Err(e) => return Err((number + 1, e.to_string())),
            }
        }
        recording.check().map_err(|message| (0, message))?;
        Ok(recording)
    }

    /// Whether the parts agree: unique ids, every vector of the header's width, every
    /// document in a recorded batch.
    fn check(&self) -> Result<(), String> {
        let mut ids = BTreeSet::new();
        let refused = self.refused.iter().map(|r| &r.id);
        for id in self.documents.iter().map(|d| &d.id).chain(refused) {
            if !ids.insert(id) {
                return Err(format!("document {id:?} is recorded twice"));
            }
        }
        let width = self.header.dimensions;
        let vectors = self.documents.iter().map(|d| (&d.id, &d.recorded)).chain(
            self.queries
                .iter()
                .flat_map(|q| q.forms.values().map(move |r| (&q.id, r))),
        );
        for (id, recorded) in vectors {
            let values = recorded.values().map_err(|why| format!("{id}: {why}"))?;
            if values.len() != width {
                return Err(format!(
                    "{id}'s vector has {} values, the header says {width}",
                    values.len()
                ));
            }
        }
        if let Some(d) = self
            .documents
            .iter()
            .find(|d| d.batch >= self.batches.len())
        {
            return Err(format!(
                "{} names batch {} of {}",
                d.id,
                d.batch,
                self.batches.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::corpus::BATCH_SIZE;
    use super::*;

    #[test]
    fn documents_are_batched_in_the_indexing_mix_in_corpus_order() {
        let corpus = Corpus::shipped();
        let sizes: Vec<usize> = indexing_batches(&corpus.documents[..40])
            .iter()
            .map(|b| b.len())
            .collect();
        assert_eq!(sizes, vec![32, 8]);
        let many: Vec<Document> = (0..130).map(|_| corpus.documents[0].clone()).collect();
        let sizes: Vec<usize> = indexing_batches(&many).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, vec![32, 8, 1, 64, 16, 9]);
    }

    #[test]
    fn half_floats_round_to_nearest_even_as_ieee_754_says() {
        assert_eq!(half_bits(1.0), 0x3c00);
        assert_eq!(half_bits(-2.0), 0xc000);
        assert_eq!(half_bits(65504.0), 0x7bff);
        assert_eq!(
            half_bits(65520.0),
            0x7c00,
            "rounds up past the largest half"
        );
        assert_eq!(half_bits(0.1), 0x2e66);
        assert_eq!(half_bits(2f32.powi(-24)), 0x0001, "the smallest subnormal");
        assert_eq!(
            half_bits(2f32.powi(-25)),
            0x0000,
            "halfway to it rounds to even"
        );
        assert_eq!(
            half_bits(1.0 + 2f32.powi(-11)),
            0x3c00,
            "a tie rounds to even"
        );
        assert_eq!(half_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        for bits in [0x3c00u16, 0xc000, 0x7bff, 0x2e66, 0x0001, 0x03ff, 0x0400] {
            assert_eq!(half_bits(half_value(bits)), bits, "{bits:#06x}");
        }
    }

    /// A unit vector of `n` values from a simple generator, spread like a model's.
    fn unit_vector(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        let raw: Vec<f64> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect();
        let norm = raw.iter().map(|v| v * v).sum::<f64>().sqrt();
        raw.iter().map(|v| v / norm).collect()
    }

    #[test]
    fn a_recorded_vector_keeps_its_direction_and_its_norm() {
        for seed in 1..20 {
            let vector: Vec<f64> = unit_vector(1024, seed).iter().map(|v| v * 3.0).collect();
            let recorded = Recorded::of(&vector);
            let values = recorded.values().unwrap();
            assert!(1.0 - cosine(&vector, &values) < 1e-7, "seed {seed}");
            assert!((recorded.norm - 3.0).abs() < 1e-9);
            assert_eq!(recorded.vector.len(), 4 * (1024usize * 2).div_ceil(3));
        }
    }

    /// A recording of `documents` and `queries` random unit vectors of `width` values.
    pub(crate) fn sample(documents: usize, queries: usize, width: usize) -> Recording {
        let recorded = |seed| Recorded::of(&unit_vector(width, seed));
        let documents: Vec<RecordedDocument> = (0..documents)
            .map(|i| RecordedDocument {
                id: format!("d{i}"),
                text: format!("document number {i} of the corpus, a sentence of some length"),
                sha256: sha256::hex(&format!(
                    "document number {i} of the corpus, a sentence of some length"
                )),
                batch: i / BATCH_SIZE,
                recorded: recorded(i as u64 + 1),
            })
            .collect();
        // Scores as a ranking's, without the cost of one (`ranking` has its own test).
        let top: Vec<(String, f64)> = documents
            .iter()
            .take(TOP)
            .enumerate()
            .map(|(k, d)| (d.id.clone(), 0.9 - k as f64 * 1e-3))
            .collect();
        let queries = (0..queries)
            .map(|i| {
                let bare = recorded(1_000_000 + i as u64);
                RecordedQuery {
                    id: format!("q{i}"),
                    text: format!("query {i}"),
                    sha256: sha256::hex(&format!("query {i}")),
                    relevant: vec![format!("d{i}")],
                    forms: [
                        (BARE.to_owned(), bare),
                        (PREFIXED.to_owned(), recorded(2_000_000 + i as u64)),
                    ]
                    .into_iter()
                    .collect(),
                    top: top.clone(),
                }
            })
            .collect();
        Recording {
            header: Header {
                kind: KIND.to_owned(),
                format: FORMAT,
                embedcheck: "0.1.0".to_owned(),
                recorded_unix: 1_796_000_000,
                server: "old".to_owned(),
                model: "m".to_owned(),
                answered_model: Some("m".to_owned()),
                listed_models: vec!["m".to_owned()],
                fingerprint: BTreeMap::new(),
                dimensions: width,
                template: Template {
                    document_fields: Map::new(),
                    query_template: Instruction::QWEN3_TEMPLATE.to_owned(),
                    query_task: "task".to_owned(),
                    batch_sizes: vec![BATCH_SIZE; documents.len().div_ceil(BATCH_SIZE)],
                },
                noise: RepeatNoise {
                    min_cosine: Some(0.9999999),
                    texts: 8,
                },
                corpus: CorpusCounts {
                    origin: "test".to_owned(),
                    documents: 0,
                    queries: 0,
                },
                texts: true,
                requests: 0,
                query_tokens: BTreeMap::new(),
            },
            batches: (0..documents.len().div_ceil(BATCH_SIZE))
                .map(|index| Batch {
                    index,
                    ids: Vec::new(),
                    tokens: Some(80),
                    alone: false,
                })
                .collect(),
            documents,
            refused: Vec::new(),
            queries,
        }
    }

    #[test]
    fn a_written_recording_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let recording = sample(20, 3, 64);
        let written = recording.write(dir.path()).unwrap();
        assert_eq!(
            written,
            std::fs::metadata(dir.path().join(FILE)).unwrap().len()
        );
        assert_eq!(Recording::read(dir.path()).unwrap(), recording);
        assert_eq!(Recording::read(&dir.path().join(FILE)).unwrap(), recording);
    }

    #[test]
    fn two_thousand_documents_and_two_hundred_queries_of_1024_dimensions_take_under_10_mb() {
        let dir = tempfile::tempdir().unwrap();
        let written = sample(2000, 200, 1024).write(dir.path()).unwrap();
        eprintln!("2,000 documents and 200 queries of 1024 dimensions: {written} bytes");
        assert!(written < 10_000_000, "{written} bytes");
    }

    #[test]
    fn another_file_or_a_newer_format_is_refused_with_its_reason() {
        let not_ours =
            Recording::parse("{\"line\":\"batch\",\"index\":0,\"ids\":[],\"tokens\":null}\n");
        assert_eq!(
            not_ours.unwrap_err().1,
            "its first line is no baseline header"
        );
        let mut newer = sample(2, 0, 4);
        newer.header.format = FORMAT + 1;
        let dir = tempfile::tempdir().unwrap();
        newer.write(dir.path()).unwrap();
        let error = Recording::read(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains("this embedcheck reads format 1 at most"),
            "{error}"
        );
    }

    #[test]
    fn a_recording_of_hashes_holds_no_text_and_takes_its_texts_back_from_the_corpus() {
        let recording = sample(3, 1, 8);
        let hashed = recording.clone().without_texts();
        let dir = tempfile::tempdir().unwrap();
        hashed.write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(!text.contains("document number"), "no text is written");
        let read = Recording::read(dir.path()).unwrap();
        assert!(!read.header.texts);
        let documents = recording
            .documents
            .iter()
            .map(|d| {
                format!(
                    "{{\"id\":\"{}\",\"lang\":\"en\",\"text\":\"{}\"}}",
                    d.id, d.text
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let queries = "{\"id\":\"q0\",\"lang\":\"en\",\"text\":\"query 0\",\"relevant\":[\"d0\"]}";
        let corpus = Corpus::parse(&documents, queries, "test").unwrap();
        assert_eq!(read.clone().with_texts_from(&corpus).unwrap(), recording);
        let fewer = Corpus::parse(
            &documents,
            "{\"id\":\"q9\",\"lang\":\"en\",\"text\":\"other\",\"relevant\":[\"d0\"]}",
            "t",
        )
        .unwrap();
        let err = read.with_texts_from(&fewer).unwrap_err();
        assert!(err.starts_with("q0's text is not in the corpus"), "{err}");
    }

    #[test]
    fn parts_that_disagree_are_refused() {
        let mut narrow = sample(3, 0, 8);
        narrow.header.dimensions = 9;
        assert!(narrow.check().unwrap_err().contains("the header says 9"));
        let mut twice = sample(3, 0, 8);
        twice.documents[1].id = "d0".to_owned();
        assert_eq!(
            twice.check().unwrap_err(),
            "document \"d0\" is recorded twice"
        );
    }

    #[test]
    fn a_ranking_keeps_the_best_hundred_best_first() {
        let recording = sample(150, 0, 16);
        let vectors: Vec<Vec<f64>> = recording
            .documents
            .iter()
            .map(|d| d.recorded.values().unwrap())
            .collect();
        let top = ranking(&unit_vector(16, 7), &recording.documents, &vectors);
        assert_eq!(top.len(), TOP);
        assert!(top.windows(2).all(|w| w[0].1 >= w[1].1));
        let best = vectors
            .iter()
            .map(|v| cosine(&unit_vector(16, 7), v))
            .fold(f64::MIN, f64::max);
        assert!((top[0].1 - best).abs() < 1e-6);
    }
}
