//! The command line end to end: baselines, the matrix, the migration page, paid APIs,
//! recordings, redirects, the compatibility index and the documentation's excerpts.
//!
//! One test binary for the crate (each binary is a link of the whole dependency
//! graph, and tests of one binary run side by side): each file below is a module.

mod common;

mod baselines;
mod docs;
mod matrix;
mod migration_page;
mod paid_apis;
mod recording;
mod redirects;
mod site;
