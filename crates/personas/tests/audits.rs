//! Every persona audited: breakers, real-server verdicts, hazards, vendors, migrations,
//! clients, rerank, known failures and real clients.
//!
//! One test binary for the crate (each binary is a link of the whole dependency
//! graph, and tests of one binary run side by side): each file below is a module.

mod common;

mod breakers;
mod clients;
mod expectations;
mod hazards;
mod migration;
mod real_clients;
mod rerank;
mod vendors;
mod verdicts;
