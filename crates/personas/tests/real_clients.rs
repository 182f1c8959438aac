//! The client profiles checked against the real clients: the lab's openai-python,
//! langchain-openai and openai-node, with their default settings
//! (`lab/clients/profile_check.py` and `.mjs`), and the two SDKs' audio calls with the
//! suite's clip (`lab/clients/speech_check.py` and `.mjs`), run against persona servers,
//! and the audit run against the same servers; every profile's `works` must be what the
//! real client experienced in its default call (the rerank clients are checked by the
//! dialect test below; Open WebUI and LangChain's `OpenAIWhisperParser` are not installed
//! in the lab).
//!
//! Needs the lab's client installs (`lab/install.sh clients`: the `clients` venv under
//! `lab/.state/`, or `$EMBEDCHECK_LAB_DIR`, and `lab/clients/node_modules`) and `node`;
//! without them it prints why and passes, so CI, which has no lab, skips it.

use embedcheck_core::audit::{ServerAudit, audit_server};
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::http::{Secret, Transport};
use embedcheck_core::profiles::Client;
use embedcheck_core::session::{Interrupt, Settings};
use personas::{API_KEY, Persona};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where the lab keeps the clients, when they are installed.
struct Lab {
    python: PathBuf,
    scripts: PathBuf,
    state: PathBuf,
}

impl Lab {
    fn find() -> Result<Lab, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let state = std::env::var_os("EMBEDCHECK_LAB_DIR")
            .map_or_else(|| root.join("lab/.state"), PathBuf::from);
        let python = state.join("venvs/clients/bin/python");
        let scripts = root.join("lab/clients");
        if !state.join("venvs/clients/.lab-installed").is_file() || !python.exists() {
            return Err(format!(
                "no lab client venv under {} (lab/install.sh clients)",
                state.display()
            ));
        }
        if !scripts.join("node_modules/openai").is_dir() {
            return Err("no lab/clients/node_modules/openai (lab/install.sh clients)".into());
        }
        if Command::new("node").arg("--version").output().is_err() {
            return Err("no node on PATH".into());
        }
        Ok(Lab {
            python,
            scripts,
            state,
        })
    }

    /// Every real client's outcome against `base_url`, one JSON object each (a speech
    /// client's default call first), the speech calls uploading `clip`.
    fn run(&self, base_url: &str, model: &str, clip: &Path) -> Vec<Value> {
        let python = self.command(&self.python, "profile_check.py", base_url, model);
        let node = self.command(Path::new("node"), "profile_check.mjs", base_url, model);
        let mut speech_python = self.command(&self.python, "speech_check.py", base_url, model);
        speech_python.arg(clip);
        let mut speech_node = self.command(Path::new("node"), "speech_check.mjs", base_url, model);
        speech_node.arg(clip);
        [python, node, speech_python, speech_node]
            .into_iter()
            .flat_map(|mut command| {
                let out = command.output().expect("the client script runs");
                assert!(
                    out.status.success(),
                    "{command:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8(out.stdout)
                    .expect("utf-8 output")
                    .lines()
                    .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
                    .collect::<Vec<Value>>()
            })
            .collect()
    }

    fn command(&self, program: &Path, script: &str, base_url: &str, model: &str) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.scripts)
            .arg(script)
            .args([base_url, model, "--json"])
            .env("OPENAI_API_KEY", API_KEY)
            .env("EMBEDCHECK_LAB_DIR", &self.state)
            .env("TIKTOKEN_CACHE_DIR", self.state.join("tiktoken-cache"))
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        command
    }
}

/// The speech clients whose real calls run here: the two SDKs. The rerank clients have
/// their own check (the dialect test below, `lab/clients/rerank_check.py`); Open WebUI
/// and LangChain's `OpenAIWhisperParser` are not installed in the lab.
const SPEECH_SDKS: [Client; 2] = [Client::OPENAI_PYTHON_AUDIO, Client::OPENAI_NODE_AUDIO];

/// The audit of the server already running at `base_url`, as `common::audit` does it.
async fn audit_running(persona: &Persona, base_url: &str) -> ServerAudit {
    let target = contracts::target(base_url).expect("a persona URL is valid");
    let transport = Transport::new(
        target,
        Some(Secret::new(API_KEY.to_owned())),
        Duration::from_secs(10),
    );
    let settings = Settings {
        seed: 7,
        ..Settings::default()
    }
    .with(EmbeddingsSettings {
        large_batch: 64,
        ..EmbeddingsSettings::default()
    });
    let clauses: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    audit_server(
        transport,
        settings,
        persona.name.to_owned(),
        &clauses,
        Interrupt::default(),
    )
    .await
}

/// The servers: one where every client works (OpenAI's vocabulary), one with another
/// vocabulary (the reference server), two that ignore `encoding_format`, one whose
/// base64 is float64, one that answers the SDKs' default request 500, and one that
/// answers a transcript as plain text where JSON is due.
fn servers() -> Vec<Persona> {
    vec![
        personas::openai(),
        personas::reference(),
        personas::breaker("ENC-003").expect("ENC-003 has a breaker"),
        personas::old_fastapi(),
        personas::breaker("ENC-002").expect("ENC-002 has a breaker"),
        personas::litellm(),
        // A transcript answered as plain text where JSON is due.
        personas::breaker("SPS-001").expect("SPS-001 has a breaker"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_profile_says_what_the_real_client_experiences() {
    let lab = match Lab::find() {
        Ok(lab) => std::sync::Arc::new(lab),
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let clip = std::env::temp_dir().join(format!("embedcheck-speech-{}.wav", std::process::id()));
    std::fs::write(
        &clip,
        embedcheck_core::contracts::speech::audio::speech_wav()
            .upload
            .bytes(),
    )
    .expect("the clip is written");
    let mut disagreements = Vec::new();
    for persona in servers() {
        let server = persona.start().await;
        let base_url = server.base_url();
        let model = persona.config.model_id.clone();
        let runner = lab.clone();
        let url = base_url.clone();
        let at = clip.clone();
        let real = tokio::task::spawn_blocking(move || runner.run(&url, &model, &at))
            .await
            .expect("the clients ran");
        let audit = audit_running(&persona, &base_url).await;
        for profile in &audit.clients {
            if !Client::EMBEDDINGS.contains(&profile.client)
                && !SPEECH_SDKS.contains(&profile.client)
            {
                continue;
            }
            let name = profile.client.name();
            let outcome = real
                .iter()
                .find(|r| r["client"] == name)
                .unwrap_or_else(|| panic!("{name} ran against {}", persona.name));
            assert_eq!(outcome["version"], profile.version, "the profiled release");
            let worked = outcome["worked"].as_bool();
            println!(
                "{:<12} {:<17} profile {:<7} real {:<6} {}",
                persona.name,
                name,
                format!("{:?}", profile.works),
                format!("{worked:?}"),
                outcome
            );
            // The retries the profile counted are the ones the client made.
            let retries = outcome["retries"].as_u64().unwrap_or(0);
            if retries > 0 {
                let attempts = format!("after {} attempts", retries + 1);
                assert!(
                    profile.because.iter().any(|r| r.contains(&attempts)),
                    "{} / {name}: real client retried {retries} times; {:#?}",
                    persona.name,
                    profile.because
                );
            }
            if profile.works != worked {
                disagreements.push(format!(
                    "{} / {name}: profile {:?}, real {outcome}; because {:#?}",
                    persona.name, profile.works, profile.because
                ));
            }
        }
        let embeddings = audit
            .clients
            .iter()
            .filter(|p| Client::EMBEDDINGS.contains(&p.client))
            .count();
        assert_eq!(embeddings, Client::EMBEDDINGS.len());
    }
    std::fs::remove_file(&clip).ok();
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// The rerank clients of TEI's, NIM's and Voyage's dialects, the real libraries
/// (`lab/clients/dialect_check.py` in the `rerank-dialect-clients` venv of
/// `lab/install.sh rerank-clients`), against a server of each dialect and of Cohere's:
/// every profile's `works` is what the real client did. Without the venv it prints why
/// and passes, as the test above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dialect_clients_do_what_their_profiles_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let state = std::env::var_os("EMBEDCHECK_LAB_DIR")
        .map_or_else(|| root.join("lab/.state"), PathBuf::from);
    let venv = state.join("venvs/rerank-dialect-clients");
    if !venv.join(".lab-installed").is_file() {
        println!(
            "skipped: no rerank-dialect-clients venv under {}",
            state.display()
        );
        return;
    }
    let script = root.join("lab/clients/dialect_check.py");
    let mut disagreements = Vec::new();
    for persona in [
        personas::tei_reranker(),
        personas::nim_reranker(),
        personas::voyage_reranker(),
        personas::vllm_reranker(),
    ] {
        let server = persona.start().await;
        let url = format!("http://{}", server.addr());
        let model = persona.config.model_id.clone();
        let python = venv.join("bin/python");
        let script = script.clone();
        let output = tokio::task::spawn_blocking(move || {
            Command::new(python)
                .arg(script)
                .args([&url, &model])
                .output()
        })
        .await
        .expect("the clients ran")
        .expect("python started");
        let real: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert_eq!(real.len(), 3, "{}", String::from_utf8_lossy(&output.stderr));
        let audit = audit_running(&persona, &server.base_url()).await;
        for outcome in &real {
            let name = outcome["client"].as_str().expect("a client name");
            let profile = audit
                .clients
                .iter()
                .find(|p| p.client.name() == name)
                .unwrap_or_else(|| panic!("{name} profiled on {}", persona.name));
            println!(
                "{:<16} {name:<24} profile {:?} real {outcome}",
                persona.name, profile.works
            );
            if profile.works != outcome["works"].as_bool() {
                disagreements.push(format!(
                    "{} / {name}: {:?} vs {outcome}",
                    persona.name, profile.works
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
