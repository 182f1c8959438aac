//! Every persona audited: breakers, real-server verdicts, hazards, vendors, migrations,
//! clients, rerank, known failures and real clients; and the engine against hostile
//! servers and with secrets.
//!
//! One test binary for the crate (each binary is a link of the whole dependency
//! graph, and tests of one binary run side by side): each file below is a module.

mod common;

mod breakers;
mod clients;
mod expectations;
mod hazards;
mod hostile;
mod migration;
mod real_clients;
mod rerank;
mod secrets;
mod speech;
mod vendors;
mod verdicts;
