//! Personas: in-process servers that break embedcheck clauses on purpose.
