//! The knobs of a run that clauses read: budgets, the seed, and what the user declared
//! about the server instead of letting the suite detect it.

use crate::declared::{DEFAULT_QUERY_TASK, Matryoshka, Overlength, QueryTemplate};
use crate::reference::{self, Reference};
use std::sync::Arc;
use std::time::Duration;

/// Property cases per clause unless `--cases` says otherwise: enough to catch servers
/// that fail for most values, few enough to keep a default run near a hundred requests.
pub const DEFAULT_CASES: u32 = 8;

/// Knobs of a run that clauses read.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The model to request: from `--model`, else learned from `GET /models`.
    pub model: Option<String>,
    pub max_requests: u64,
    pub max_tokens: u64,
    /// Most bytes of files (audio clips) the run uploads (`--max-upload-mb`).
    pub max_upload_bytes: u64,
    /// The batch size the large-batch clause tries.
    pub large_batch: usize,
    /// Longest total wait for 429 answers over the whole run; once spent, a 429
    /// ends its probe inconclusive at once.
    pub max_retry_wait: Duration,
    /// Seeds every generated input: the same seed sends the same requests.
    pub seed: u64,
    /// Send probes that may take a server down (`--aggressive`).
    pub aggressive: bool,
    /// Generated cases per property clause (`--cases`).
    pub cases: u32,
    /// Declared Matryoshka support, or `Auto` to detect it.
    pub matryoshka: Matryoshka,
    /// The over-length policy the client relies on.
    pub overlength: Overlength,
    /// The per-input token limit, when declared instead of searched for.
    pub max_input_tokens: Option<u64>,
    /// The query instruction the client expects `input_type: "query"` to prepend.
    pub query_instruction: Option<QueryTemplate>,
    /// What `{task}` stands for in `query_instruction`.
    pub query_task: String,
    /// The model's own vectors the `reference` family compares with (`--reference`).
    pub reference: Option<Arc<Reference>>,
    /// Cosine with the reference a vector must reach (`--reference-threshold`).
    pub reference_threshold: f64,
    /// Most requests per second (`--rate`); none sends as fast as answers come.
    pub rate: Option<f64>,
    /// Record each request instead of sending it (`--dry-run`).
    pub dry_run: bool,
    /// Each contract's own settings (rerank's `--rerank-model`, …), kept without
    /// knowing their types.
    pub contracts: super::ByContract,
}

impl Default for Settings {
    /// The command line's defaults.
    fn default() -> Self {
        Settings {
            model: None,
            max_requests: 1000,
            max_tokens: 500_000,
            max_upload_bytes: 200_000_000,
            large_batch: 2048,
            max_retry_wait: Duration::from_secs(60),
            seed: 0,
            aggressive: false,
            cases: DEFAULT_CASES,
            matryoshka: Matryoshka::Auto,
            overlength: Overlength::Any,
            max_input_tokens: None,
            query_instruction: None,
            query_task: DEFAULT_QUERY_TASK.to_owned(),
            reference: None,
            reference_threshold: reference::DEFAULT_THRESHOLD,
            rate: None,
            dry_run: false,
            contracts: super::ByContract::default(),
        }
    }
}
