//! Serves one persona on 127.0.0.1, to try embedcheck on a server that behaves like a
//! real one, e.g. the migration study in one terminal each:
//!
//! ```sh
//! cargo run -p personas --example serve -- old_fastapi 8000
//! cargo run -p personas --example serve -- dynamo_vllm 9000
//! cargo test -- --endpoint http://127.0.0.1:9000/v1 --baseline http://127.0.0.1:8000/v1
//! ```
//!
//! It also writes its model's known answers (the reference file `lab/reference.py` would
//! write for a real model) and prints the path, for `--reference`:
//!
//! ```sh
//! cargo run -p personas --example serve -- REF-002 9000
//! cargo test -- --endpoint http://127.0.0.1:9000/v1 --reference target/personas/REF-002.reference.jsonl
//! ```

use personas::Persona;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, port] = args.as_slice() else {
        eprintln!(
            "usage: serve PERSONA PORT (personas: {})",
            names().join(", ")
        );
        return ExitCode::from(2);
    };
    let Some(persona) = all().into_iter().find(|p| p.name == name) else {
        eprintln!(
            "unknown persona {name:?} (personas: {})",
            names().join(", ")
        );
        return ExitCode::from(2);
    };
    let listener = match port
        .parse::<u16>()
        .map_err(|e| e.to_string())
        .and_then(|port| {
            std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| e.to_string())
        }) {
        Ok(listener) => listener,
        Err(why) => {
            eprintln!("cannot listen on 127.0.0.1:{port}: {why}");
            return ExitCode::from(2);
        }
    };
    let server = persona.start_on(listener).await;
    println!(
        "{} listening on {} (its endpoint: {})",
        persona.name,
        server.base_url(),
        server.endpoint_url()
    );
    match write_known_answers(&persona) {
        Ok(path) => println!("its model's known answers: {path} (for --reference)"),
        Err(why) => eprintln!("could not write its known answers: {why}"),
    }
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}

/// Writes the persona's known answers under `target/personas/` and returns the path.
fn write_known_answers(persona: &Persona) -> std::io::Result<String> {
    let dir = std::path::Path::new("target").join("personas");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{}.reference.jsonl", persona.name));
    std::fs::write(&path, personas::known_answers(&persona.config))?;
    Ok(path.display().to_string())
}

fn all() -> Vec<Persona> {
    let mut all = personas::real_servers();
    all.extend(personas::rerank_servers());
    all.push(personas::reference());
    // Seen outside the lab: bare input as a query, one request at a time.
    all.extend([personas::asymmetric_cpu(), personas::serial_cpu()]);
    // Hosted vendors as documented (`serve azure 9000`, then `--vendor azure`).
    all.extend(personas::vendors::vendors());
    // Each clause's breaker, named after its clause (`serve ERR-011 9000`).
    all.extend(personas::broken_clauses().filter_map(personas::breaker));
    all
}

fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name).collect()
}
