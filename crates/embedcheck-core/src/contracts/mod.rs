//! The contracts the suite judges, one folder each, over the shared engine (session,
//! transport, access, budgets, evidence, reports): the registry the audit runner reads.

use crate::clauses::Check;

pub(crate) mod embeddings;
pub(crate) mod rerank;

/// Every implemented check, the embeddings contract's first, then the rerank contract's.
pub(crate) fn checks() -> Vec<Check> {
    [embeddings::clauses::checks(), rerank::clauses::checks()]
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use std::collections::BTreeSet;

    #[test]
    fn catalogue_and_implementations_name_the_same_clauses() {
        let implemented: BTreeSet<&str> = checks().iter().map(|c| c.id).collect();
        let catalogued: BTreeSet<&str> = Catalogue::shipped()
            .clauses
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        let unimplemented: Vec<_> = catalogued.difference(&implemented).collect();
        let uncatalogued: Vec<_> = implemented.difference(&catalogued).collect();
        assert!(
            unimplemented.is_empty(),
            "clauses without implementation: {unimplemented:?}"
        );
        assert!(
            uncatalogued.is_empty(),
            "implementations without clause: {uncatalogued:?}"
        );
    }

    #[test]
    fn no_clause_is_implemented_twice() {
        let checks = checks();
        let ids: BTreeSet<&str> = checks.iter().map(|c| c.id).collect();
        assert_eq!(ids.len(), checks.len());
    }
}
