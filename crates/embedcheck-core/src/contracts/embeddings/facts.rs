//! What the embeddings side of an audit learns about a server: its vectors' size and
//! noise, its input limit and what it does past it, and how it treats the fields
//! OpenAI's contract leaves open. The session keeps them among each contract's facts;
//! the report shows them at the top level of `facts`, where schema 1.0 put them.

use crate::session::facts::{Fact, Facts, UnknownField};

use serde::Serialize;
use std::fmt;

/// Whether `dimensions` below the native size is honoured, and why that is believed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matryoshka {
    pub honoured: bool,
    pub because: MatryoshkaEvidence,
}

/// The observation behind [`Matryoshka`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MatryoshkaEvidence {
    /// The native size leaves nothing to truncate.
    NothingToTruncate { native: usize },
    /// `--matryoshka yes|no`.
    Declared,
    /// `dimensions: d` answered 200 with `got` values (`None`: no usable vectors).
    Answered { d: usize, got: Option<usize> },
    /// `dimensions: d` was answered with this non-200 status.
    Refused { d: usize, status: u16 },
}

/// The model's per-input token limit, or why it is not known.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "known", rename_all = "snake_case")]
pub enum InputLimit {
    Known {
        tokens: u64,
        /// An input of this many stream words is over the limit.
        over_words: usize,
        because: LimitEvidence,
    },
    Unknown {
        why: String,
    },
}

/// What showed the input limit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LimitEvidence {
    /// `--max-input-tokens`.
    Declared,
    /// An input of `words` words came back counted as `tokens` tokens.
    Truncated { words: usize, tokens: u64 },
    /// An input of `words` words was refused with a message naming the limit.
    RefusalNamed {
        words: usize,
        status: u16,
        named: u64,
    },
    /// Found from vectors: an input of `same_at` stream words followed by more words
    /// got the vector of those words alone (the rest was cut), one of `differs_at`
    /// words did not.
    Vectors { differs_at: usize, same_at: usize },
    /// The longest accepted and the shortest refused input of a binary search.
    Bisected {
        accepted_words: usize,
        accepted_tokens: u64,
        refused_words: usize,
        status: u16,
    },
}

impl fmt::Display for LimitEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitEvidence::Declared => f.write_str("declared with --max-input-tokens"),
            LimitEvidence::Truncated { words, tokens } => {
                write!(f, "found: {words} words were truncated to {tokens} tokens")
            }
            LimitEvidence::RefusalNamed {
                words,
                status,
                named,
            } => write!(
                f,
                "found: {words} words refused with {status}, naming {named}"
            ),
            LimitEvidence::Vectors {
                differs_at,
                same_at,
            } => write!(
                f,
                "found from vectors: text after the first {same_at} words changes nothing, after {differs_at} words it does"
            ),
            LimitEvidence::Bisected {
                accepted_words,
                accepted_tokens,
                refused_words,
                status,
            } => write!(
                f,
                "found: {accepted_words} words ({accepted_tokens} tokens) accepted, {refused_words} words refused with {status}"
            ),
        }
    }
}

/// What the server does with `encoding_format: "base64"`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Base64 {
    /// Refused with this status.
    Refused(u16),
    /// Answered, but there was no float answer to compare with.
    NotCompared,
    /// Little-endian float32 strings that decode to the float answer.
    Float32,
    /// Ignored: the embeddings come as this JSON kind.
    Ignored(String),
    /// Strings that do not decode to the float answer, and why.
    Mismatch(String),
}

impl Base64 {
    /// Whether a base64 request gets base64 strings back.
    pub(crate) fn honoured(&self) -> bool {
        matches!(self, Base64::Float32 | Base64::Mismatch(_))
    }
}

/// Which kind of text an instruction field's value asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// A search query (`input_type: "query"`, `task: "retrieval.query"`).
    Query,
    /// A document to be found (`input_type: "document"`, `"passage"`).
    Document,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Query => "query",
            Side::Document => "document",
        })
    }
}

/// What one value of an instruction field did, compared with the bare query.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ValueAnswer {
    Refused {
        status: u16,
    },
    /// The bare query's vector and token count came back.
    Bare {
        cosine: f64,
        tokens: Option<u64>,
    },
    /// The vector or the token count differs from the bare query's.
    Differs {
        cosine: f64,
        tokens: Option<u64>,
    },
    Broken {
        why: String,
    },
}

/// One value sent for an instruction field, the side it asks for, and its answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueTried {
    pub side: Side,
    pub value: String,
    pub answer: ValueAnswer,
}

/// What a bare request (no instruction field) is embedded as, seen from the two sides
/// of a field that is honoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BareIs {
    /// The query side gives the bare vector: bare requests are embedded as queries
    /// (NIM's documented default for `input_type`).
    Query,
    /// The document side gives the bare vector: bare requests are embedded as
    /// documents, and a query needs the field (the study's old server).
    Document,
    /// Both sides differ from the bare vector (Voyage's `input_type: null` is neither).
    Neither,
    /// Only one side was answered with vectors, and it differs.
    Unknown,
}

/// How one instruction-bearing field was handled, judged over both of its sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldHandling {
    /// Every value was refused; the first refusal's status.
    Refused {
        status: u16,
    },
    /// Some side's vector or token count differs from the bare query's, or the two
    /// sides differ from each other. `side` is the side that shows it (the query side
    /// when both do), with its cosine and token counts.
    Honoured {
        side: Side,
        cosine: f64,
        bare_tokens: Option<u64>,
        tokens: Option<u64>,
        bare_is: BareIs,
    },
    /// Every value that was not refused gave the bare query's vector and usage; the
    /// cosine and token counts of the query side's answer (else the document side's).
    Dropped {
        cosine: f64,
        bare_tokens: Option<u64>,
        tokens: Option<u64>,
    },
    Broken {
        why: String,
    },
}

/// An instruction-bearing field: the values sent for each side and the judgement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstructionField {
    pub field: &'static str,
    pub tried: Vec<ValueTried>,
    pub handling: FieldHandling,
}

impl InstructionField {
    /// The first value of `side` the server did not refuse.
    pub(crate) fn accepted(&self, side: Side) -> Option<&ValueTried> {
        self.tried
            .iter()
            .find(|t| t.side == side && !matches!(t.answer, ValueAnswer::Refused { .. }))
    }
}

/// How many inputs one request may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BatchLimit {
    /// A batch of `size` was embedded.
    AtLeast { size: usize },
    /// A batch of `refused` was refused with `status`, naming `limit`.
    Named {
        limit: usize,
        refused: usize,
        status: u16,
    },
}

/// One token-id input form and the answer to it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TokenIdForm {
    /// The input as sent, e.g. `[101,102,103,104]`.
    pub input: String,
    pub embedded: bool,
    pub status: u16,
}

/// The server's `usage.prompt_tokens` against the model's own token counts of the
/// reference texts (`--reference`): a tokenizer that reads a script otherwise shows
/// here first. A difference is an observation, not a failure: the vectors judge.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TokenAgreement {
    /// `texts` texts were counted by the server; these counts differ.
    Compared {
        texts: usize,
        differing: Vec<TokenCount>,
    },
    /// Counts cannot be compared, and why.
    NotCompared { why: String },
}

/// One text whose count differs from the model's own.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TokenCount {
    /// The text as reasons name it (its id in the reference file).
    pub text: String,
    pub reported: u64,
    pub reference: u64,
}

impl fmt::Display for TokenAgreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenAgreement::Compared { texts, differing } if differing.is_empty() => {
                write!(
                    f,
                    "agree with the model's tokenizer on all {texts} reference texts"
                )
            }
            TokenAgreement::Compared { texts, differing } => {
                let named: Vec<String> = differing
                    .iter()
                    .map(|c| format!("{} {} (model: {})", c.text, c.reported, c.reference))
                    .collect();
                write!(
                    f,
                    "differ from the model's tokenizer on {} of {texts} reference texts: {}",
                    differing.len(),
                    named.join(", ")
                )
            }
            TokenAgreement::NotCompared { why } => write!(f, "not compared: {why}"),
        }
    }
}

/// How the server embedded a reference text's own token ids (REF-002, when the reference
/// file carries them): cosine to the model's vector of the text, as the tokenizer makes
/// the ids and without the token it appends after a text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TokenIdsAsSent {
    /// The text as reasons name it.
    pub text: String,
    /// The answer's status to the ids as the tokenizer makes them.
    pub status: u16,
    pub with_ids: Option<f64>,
    /// The same ids without the appended token, where the tokenizer appends one.
    pub without_eos: Option<f64>,
    pub eos_token: Option<String>,
}

impl fmt::Display for TokenIdsAsSent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(with) = self.with_ids else {
            return write!(
                f,
                "{}'s token ids answered {} without a vector",
                self.text, self.status
            );
        };
        write!(
            f,
            "{}'s token ids as the tokenizer makes them: cosine {with:.4} to the model's vector",
            self.text
        )?;
        match (self.without_eos, &self.eos_token) {
            (Some(without), Some(eos)) if without < with - 0.01 => write!(
                f,
                "; without the {eos} it appends: {without:.4}: ids are embedded as sent, so a client sending ids must append {eos} itself"
            ),
            (Some(without), Some(eos)) => write!(f, "; without the {eos} it appends: {without:.4}"),
            _ => Ok(()),
        }
    }
}

/// The server's own variation between identical requests, measured on CONS-001's
/// repeated request: what "differs" and "is the same" are judged against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Noise {
    /// Cosine between the vectors of two identical requests.
    pub cosine: f64,
    /// The largest difference of one value between them.
    pub max_abs: f64,
}

/// The least distance from 1 that counts as an effect on a deterministic server:
/// vectors closer than this are the same embedding (float noise of one runtime).
const LEAST_EFFECT: f64 = 1.0 - crate::vectors::SAME_EMBEDDING;

/// How many times its own noise an effect must be to count as one.
const NOISE_MARGIN: f64 = 3.0;

impl Noise {
    /// Identical requests gave the same vector, to the last float bit or nearly.
    pub(crate) fn deterministic(&self) -> bool {
        1.0 - self.cosine <= LEAST_EFFECT / NOISE_MARGIN
    }

    /// Two vectors this far apart are the same embedding as far as this server's
    /// noise lets anyone tell.
    pub(crate) fn same(&self, cosine: f64) -> bool {
        1.0 - cosine <= self.threshold()
    }

    /// The distance from 1 beyond which a cosine is an effect, not noise. A server
    /// whose repeat differed at all may differ by as much as noise explains on any
    /// later pair (one repeat measures one draw of it: 0.9999 on one call, 0.9995 on
    /// the next), so only a deterministic one is held to its measured noise.
    pub(crate) fn threshold(&self) -> f64 {
        let measured = (NOISE_MARGIN * (1.0 - self.cosine)).max(LEAST_EFFECT);
        if self.deterministic() {
            measured
        } else {
            measured.max(1.0 - crate::vectors::NOISE_BOUND)
        }
    }

    /// The noise of a server never measured: the fixed tolerance alone.
    pub(crate) fn unmeasured() -> Noise {
        Noise {
            cosine: 1.0,
            max_abs: 0.0,
        }
    }
}

/// An answer that the same request, sent again, did not reproduce: a difference seen
/// between two answers is blamed on what differs between their requests only when it
/// repeats (ENC-002 judged the batch on the repeat).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unrepeatable {
    /// The request, as the clause shows it: `a batch of 21 [...]`.
    pub request: String,
    /// Which answer varied: the float one, or the base64 one.
    pub answer: VariedAnswer,
    /// The item that varied most, and the cosine between its two vectors.
    pub item: usize,
    pub cosine: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VariedAnswer {
    Float,
    Base64,
}

impl fmt::Display for Unrepeatable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let answer = match self.answer {
            VariedAnswer::Float => "float",
            VariedAnswer::Base64 => "base64",
        };
        write!(
            f,
            "{} sent twice: data[{}] of the {answer} answer at cosine {:.6} between the two answers",
            self.request, self.item, self.cosine
        )
    }
}

impl fmt::Display for Noise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.deterministic() {
            write!(
                f,
                "deterministic: identical requests gave cosine {:.6}",
                self.cosine
            )
        } else {
            write!(
                f,
                "nondeterministic: identical requests gave cosine {:.6} (values differ by up to {:.2e}); effects must exceed 1 - {:.6}",
                self.cosine,
                self.max_abs,
                1.0 - self.threshold()
            )
        }
    }
}

/// Everything the embeddings side learned of its server.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EmbeddingsFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_dimension: Option<Fact<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matryoshka: Option<Fact<Matryoshka>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_limit: Option<Fact<InputLimit>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlength_policy: Option<Fact<OverlengthPolicy>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base64: Option<Fact<Base64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction_fields: Option<Fact<Vec<InstructionField>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_fields: Option<Fact<Vec<UnknownField>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_batch: Option<Fact<BatchLimit>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id_input: Option<Fact<Vec<TokenIdForm>>>,
    /// The server's variation between identical requests (CONS-001).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<Fact<Noise>>,
    /// An answer the same request sent again did not reproduce (ENC-002).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unrepeatable: Option<Fact<Unrepeatable>>,
    /// The server's token counts of the reference texts against the model's (REF-002).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_tokens: Option<Fact<TokenAgreement>>,
    /// How a reference text's own token ids were embedded (REF-002, with ids in the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_ids_as_sent: Option<Fact<TokenIdsAsSent>>,
}

impl EmbeddingsFacts {
    /// The embeddings facts among an audit's (none before its first clause).
    pub(crate) fn of(facts: &Facts) -> EmbeddingsFacts {
        facts.contracts.get().cloned().unwrap_or_default()
    }

    /// How `input_type` was handled, when UNK-003 sent it.
    pub(crate) fn input_type(&self) -> Option<&FieldHandling> {
        self.input_type_field().map(|f| &f.handling)
    }

    fn input_type_field(&self) -> Option<&InstructionField> {
        let fields = &self.instruction_fields.as_ref()?.value;
        fields.iter().find(|f| f.field == "input_type")
    }

    /// What a bare request is embedded as, where an honoured `input_type` shows it.
    pub(crate) fn bare_is(&self) -> Option<BareIs> {
        match self.input_type()? {
            FieldHandling::Honoured { bare_is, .. } => Some(*bare_is),
            _ => None,
        }
    }

    /// The field and value that ask this server for a document embedding where a bare
    /// request is embedded as a query: what its clients send with every document.
    pub(crate) fn document_field(&self) -> Option<(&'static str, String)> {
        if self.bare_is()? != BareIs::Query {
            return None;
        }
        let field = self.input_type_field()?;
        let tried = field.accepted(Side::Document)?;
        Some((field.field, tried.value.clone()))
    }

    /// The server's measured noise, or the fixed tolerance when none was measured.
    pub(crate) fn noise(&self) -> Noise {
        self.noise.as_ref().map_or(Noise::unmeasured(), |f| f.value)
    }

    /// The known input limit in tokens and the over-length input size in words.
    pub(crate) fn known_limit(&self) -> Option<(u64, usize)> {
        match &self.input_limit.as_ref()?.value {
            InputLimit::Known {
                tokens, over_words, ..
            } => Some((*tokens, *over_words)),
            InputLimit::Unknown { .. } => None,
        }
    }

    /// Each fact as one line, under the names schema 1.0's `observations` used.
    pub(crate) fn observations(&self, put: &mut dyn FnMut(&str, Option<String>)) {
        put(
            "native_dimension",
            self.native_dimension.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "matryoshka",
            self.matryoshka.as_ref().map(|f| matryoshka_line(&f.value)),
        );
        put(
            "input_limit_tokens",
            self.input_limit.as_ref().map(|f| match &f.value {
                InputLimit::Known {
                    tokens, because, ..
                } => format!("{tokens} ({because})"),
                InputLimit::Unknown { why } => format!("unknown ({why})"),
            }),
        );
        put(
            "base64",
            self.base64.as_ref().map(|f| base64_line(&f.value)),
        );
        put(
            "instruction_fields",
            self.instruction_fields.as_ref().map(|f| {
                let lines: Vec<String> = f.value.iter().map(instruction_line).collect();
                lines.join("; ")
            }),
        );
        put(
            "unknown_fields",
            self.unknown_fields.as_ref().map(|f| {
                let lines: Vec<String> = f.value.iter().map(ToString::to_string).collect();
                lines.join(" / ")
            }),
        );
        put(
            "max_batch",
            self.max_batch.as_ref().map(|f| match f.value {
                BatchLimit::AtLeast { size } => format!("at least {size}"),
                BatchLimit::Named {
                    limit,
                    refused,
                    status,
                } => format!("{limit} (refused {refused} with {status})"),
            }),
        );
        put(
            "token_id_input",
            self.token_id_input.as_ref().map(|f| {
                let forms: Vec<String> = f.value.iter().map(token_id_line).collect();
                forms.join("; ")
            }),
        );
        put("noise", self.noise.as_ref().map(|f| f.value.to_string()));
        put(
            "unrepeatable",
            self.unrepeatable.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "reference_tokens",
            self.reference_tokens.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "token_ids_as_sent",
            self.token_ids_as_sent.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "overlength_policy",
            self.overlength_policy.as_ref().map(|f| f.value.to_string()),
        );
    }
}

impl Matryoshka {
    /// How the support is known: `detected: dimensions=192 refused with 400`.
    pub(crate) fn how(&self) -> String {
        let m = self;
        match &m.because {
            MatryoshkaEvidence::NothingToTruncate { native } => {
                format!("the native size {native} leaves nothing to truncate")
            }
            MatryoshkaEvidence::Declared => format!(
                "declared with --matryoshka {}",
                if m.honoured { "yes" } else { "no" }
            ),
            MatryoshkaEvidence::Answered { d, got: Some(got) } if got == d => {
                format!("detected: dimensions={d} answered 200 with {d} values")
            }
            MatryoshkaEvidence::Answered { d, got: Some(got) } => {
                format!("detected: dimensions={d} ignored, 200 with {got} values")
            }
            MatryoshkaEvidence::Answered { d, got: None } => {
                format!("detected: dimensions={d} answered 200 without usable vectors")
            }
            MatryoshkaEvidence::Refused { d, status } if (400..500).contains(status) => {
                format!("detected: dimensions={d} refused with {status}")
            }
            MatryoshkaEvidence::Refused { d, status } => {
                format!("detected: dimensions={d} answered {status}")
            }
        }
    }
}

/// `yes (detected: dimensions=192 answered 200 with 192 values)`.
fn matryoshka_line(m: &Matryoshka) -> String {
    format!("{} ({})", if m.honoured { "yes" } else { "no" }, m.how())
}

fn base64_line(b: &Base64) -> String {
    match b {
        Base64::Refused(status) => format!("refused ({status})"),
        Base64::NotCompared => "answered; not compared (no float answer)".to_owned(),
        Base64::Float32 => "little-endian float32 strings, as the SDKs decode them".to_owned(),
        Base64::Ignored(kind) => format!("ignored: embeddings are {kind}"),
        Base64::Mismatch(why) => format!("strings that do not decode to the floats: {why}"),
    }
}

/// `input_type: honoured (the query side differs: cosine 0.8213, prompt tokens 9 bare,
/// 28 with the field; the document side is the bare input)`.
pub(crate) fn instruction_line(f: &InstructionField) -> String {
    let field = f.field;
    match &f.handling {
        FieldHandling::Refused { status } => format!("{field}: rejected ({status})"),
        FieldHandling::Honoured {
            side,
            cosine,
            bare_tokens,
            tokens,
            bare_is,
        } => format!(
            "{field}: honoured (the {side} side differs: cosine {cosine:.4}, {}{})",
            token_counts(*bare_tokens, *tokens),
            bare_line(f, *side, *bare_is)
        ),
        FieldHandling::Dropped {
            cosine,
            bare_tokens,
            tokens,
        } => format!(
            "{field}: dropped ({}: cosine {cosine:.6}, {})",
            sides_sent(f),
            token_counts(*bare_tokens, *tokens)
        ),
        FieldHandling::Broken { why } => format!("{field}: {why}"),
    }
}

/// What the other side showed, and so what bare requests are embedded as: `; the query
/// side is the bare input, …`, or nothing for a field with one side only.
fn bare_line(f: &InstructionField, differing: Side, bare_is: BareIs) -> String {
    let other = match differing {
        Side::Query => Side::Document,
        Side::Document => Side::Query,
    };
    match bare_is {
        BareIs::Query => {
            "; the query side is the bare input, so bare requests are embedded as queries"
                .to_owned()
        }
        BareIs::Document => "; the document side is the bare input".to_owned(),
        BareIs::Neither => "; both sides differ from the bare input".to_owned(),
        BareIs::Unknown if f.tried.iter().any(|t| t.side == other) => {
            format!("; the {other} side was refused")
        }
        BareIs::Unknown => String::new(),
    }
}

/// `input_type "query" and "document" both gave the bare input's vector`.
fn sides_sent(f: &InstructionField) -> String {
    let values: Vec<String> = f
        .tried
        .iter()
        .filter(|t| matches!(t.answer, ValueAnswer::Bare { .. }))
        .map(|t| format!("{:?}", t.value))
        .collect();
    match values.as_slice() {
        [one] => format!("{one} gave the bare input's vector"),
        [first, second] => format!("{first} and {second} both gave the bare input's vector"),
        [rest @ .., last] => format!(
            "{} and {last} all gave the bare input's vector",
            rest.join(", ")
        ),
        [] => "no value gave a vector".to_owned(),
    }
}

/// `prompt tokens 9 bare, 28 with the field`.
pub(crate) fn token_counts(bare_tokens: Option<u64>, tokens: Option<u64>) -> String {
    let show = |t: Option<u64>| t.map_or("no".to_owned(), |t| t.to_string());
    format!(
        "prompt tokens {} bare, {} with the field",
        show(bare_tokens),
        show(tokens)
    )
}

fn token_id_line(form: &TokenIdForm) -> String {
    let how = if form.embedded { "embedded" } else { "refused" };
    format!("{} {how} ({})", form.input, form.status)
}

/// How an over-length input is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", content = "status", rename_all = "snake_case")]
pub enum OverlengthPolicy {
    /// Refused with this 4xx.
    Reject(u16),
    /// Answered 200.
    Truncate,
    /// Answered with this status, neither 200 nor a 4xx.
    Neither(u16),
}

impl fmt::Display for OverlengthPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverlengthPolicy::Reject(status) => write!(f, "reject ({status})"),
            OverlengthPolicy::Truncate => f.write_str("truncate"),
            OverlengthPolicy::Neither(status) => write!(f, "neither: answered {status}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn detected<T>(value: T) -> Option<Fact<T>> {
        Fact::detected_for_test(value)
    }

    #[test]
    fn observations_keep_the_schema_1_0_wording() {
        let facts = EmbeddingsFacts {
            native_dimension: detected(384),
            matryoshka: detected(Matryoshka {
                honoured: false,
                because: MatryoshkaEvidence::Refused {
                    d: 192,
                    status: 400,
                },
            }),
            overlength_policy: detected(OverlengthPolicy::Reject(400)),
            unknown_fields: detected(vec![
                UnknownField::Ignored,
                UnknownField::RefusedNaming(400),
            ]),
            ..EmbeddingsFacts::default()
        };
        let mut lines = BTreeMap::new();
        facts.observations(&mut |name, line| {
            if let Some(line) = line {
                lines.insert(name.to_owned(), line);
            }
        });
        assert_eq!(lines["native_dimension"], "384");
        assert_eq!(
            lines["matryoshka"],
            "no (detected: dimensions=192 refused with 400)"
        );
        assert_eq!(lines["overlength_policy"], "reject (400)");
        assert_eq!(
            lines["unknown_fields"],
            "ignored (200) / rejected with 400 naming the field"
        );
        assert_eq!(lines.len(), 4);
    }
}
