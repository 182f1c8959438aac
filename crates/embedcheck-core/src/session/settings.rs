//! The knobs of a run that clauses read: budgets, the seed, pacing; what the user
//! declared about the server is each contract's (`contracts`).

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
    /// Longest total wait for 429 answers over the whole run; once spent, a 429
    /// ends its probe inconclusive at once.
    pub max_retry_wait: Duration,
    /// Seeds every generated input: the same seed sends the same requests.
    pub seed: u64,
    /// Send probes that may take a server down (`--aggressive`).
    pub aggressive: bool,
    /// Generated cases per property clause (`--cases`).
    pub cases: u32,
    /// Most requests per second (`--rate`); none sends as fast as answers come.
    pub rate: Option<f64>,
    /// Record each request instead of sending it (`--dry-run`).
    pub dry_run: bool,
    /// Each contract's own settings (embeddings' `--matryoshka`, rerank's
    /// `--rerank-model`, …), kept without knowing their types.
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
            max_retry_wait: Duration::from_secs(60),
            seed: 0,
            aggressive: false,
            cases: DEFAULT_CASES,
            rate: None,
            dry_run: false,
            contracts: super::ByContract::default(),
        }
    }
}

impl Settings {
    /// These settings with one contract's own in its place.
    pub fn with<T: super::Part>(mut self, contract: T) -> Self {
        self.contracts = self.contracts.with(contract);
        self
    }
}
