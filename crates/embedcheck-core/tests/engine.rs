//! The engine against hostile servers and with secrets.
//!
//! One test binary for the crate (each binary is a link of the whole dependency
//! graph, and tests of one binary run side by side): each file below is a module.

mod hostile;
mod secrets;
