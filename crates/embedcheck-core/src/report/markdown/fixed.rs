//! "With the fixes applied": the migration report's proof that "What to change"
//! works, or its account of what still differs. Every sentence reads the numbers of
//! the table above it, so it cannot claim a match the table does not show.
//!
//! ```markdown
//! ## With the fixes applied
//! | check | result |
//! | documents embedded | 40 of 40 |
//! | cosine with the old client's vectors | min 0.9934 (ko-17) · median 1.0000 … |
//! ```

use super::rankings::scenario_row;
use super::table::table_row;
use crate::migration::fixed::{Cut, FixesApplied};
use crate::report::text;
use std::fmt::Write;

pub(super) fn render(doc: &mut String, f: &FixesApplied, candidate: &str) {
    let _ = writeln!(
        doc,
        "\n## With the fixes applied\n\nThe corpus and the queries were sent again to {} as a migrated client sends them once it makes these changes:\n",
        text::flat(candidate)
    );
    for change in &f.applied {
        let _ = writeln!(doc, "- {}", text::flat(change));
    }
    doc.push_str("\n| check | result |\n|---|---|\n");
    table_row(
        doc,
        &[
            "documents embedded",
            &format!("{} of {}", f.embedded, f.documents),
        ],
    );
    if !f.old_client_cut.is_empty() {
        let row = cut_summary(&f.old_client_cut, "the baseline's");
        table_row(doc, &["documents the old client cuts", &row]);
    }
    if !f.cut.is_empty() {
        let row = cut_summary(&f.cut, "the candidate's");
        table_row(doc, &["documents cut before sending", &row]);
    }
    if !f.whole.is_empty() {
        let ids = f.whole.join(", ");
        let row = format!("{}: {ids}", f.whole.len());
        table_row(doc, &["failed only with their batch, sent whole", &row]);
    }
    table_row(
        doc,
        &["cosine with the old client's vectors", &cosine_summary(f)],
    );
    if let Some(d) = &f.dimensions {
        let name = format!(
            "`dimensions: {}` cut and re-normalised by the client",
            d.dimensions
        );
        let result = match (d.cosine, &d.not_compared) {
            (Some(x), _) => format!("cosine {x:.4} with the baseline's {} values", d.dimensions),
            (None, Some(why)) => format!("not compared: {}", text::flat(why)),
            (None, None) => "not compared".to_owned(),
        };
        table_row(doc, &[&name, &result]);
    }
    rankings(doc, f);
    doc.push('\n');
    for line in verdict(f) {
        let _ = writeln!(doc, "{line}");
    }
    for why in &f.not_embedded {
        let _ = writeln!(doc, "- not embedded: {}", text::flat(why));
    }
    if !f.not_compared.is_empty() {
        let _ = writeln!(
            doc,
            "- not compared (the old client had no vector for them): {}",
            f.not_compared.join(", ")
        );
    }
    cut_table(doc, "Documents the old client cuts", &f.old_client_cut);
    cut_table(doc, "Documents cut before sending to the candidate", &f.cut);
}

/// `20 (ko-01…ko-20): 160–202 of 192–247 characters kept, 254–256 tokens by the
/// candidate's count; 177 requests to find the cuts`.
fn cut_summary(cut: &[Cut], whose: &str) -> String {
    let range = |values: Vec<u64>| {
        let (lo, hi) = (values.iter().min(), values.iter().max());
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
            (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
            _ => String::new(),
        }
    };
    let kept = range(cut.iter().map(|c| c.kept as u64).collect());
    let chars = range(cut.iter().map(|c| c.chars as u64).collect());
    let tokens: Vec<u64> = cut.iter().filter_map(|c| c.tokens).collect();
    let tokens = if tokens.len() == cut.len() {
        format!(", {} tokens by {whose} count", range(tokens))
    } else {
        String::new()
    };
    let requests: u32 = cut.iter().map(|c| c.requests).sum();
    format!(
        "{}: {kept} of {chars} characters kept{tokens}; {requests} requests to find the cuts",
        cut.len()
    )
}

fn cosine_summary(f: &FixesApplied) -> String {
    let Some(s) = f.cosine else {
        return "no document compared".to_owned();
    };
    let lowest = f
        .below
        .first()
        .map_or(String::new(), |d| format!(" ({})", d.id));
    format!(
        "min {:.4}{lowest} · median {:.4} · max {:.4} over {} documents; {} at or above {:.4}",
        s.min,
        s.median,
        s.max,
        f.compared,
        f.compared - f.below.len(),
        f.same_at
    )
}

fn rankings(doc: &mut String, f: &FixesApplied) {
    if let Some(why) = &f.rankings_not_compared {
        let _ = writeln!(doc, "\nRankings not compared: {}", text::flat(why));
        return;
    }
    let (Some(reference), k) = (f.rankings.first(), f.k) else {
        return;
    };
    let _ = writeln!(
        doc,
        "\nRankings of the {} queries over the {} documents compared, against the old client's:\n",
        reference.queries.len(),
        f.compared
    );
    let _ = writeln!(
        doc,
        "| scenario | recall@{k} | MRR | overlap@{k} | Spearman | Kendall | top hit changed |\n|---|---|---|---|---|---|---|"
    );
    for s in &f.rankings {
        scenario_row(doc, s);
    }
}

/// The conclusion, one sentence per finding, each true of the table.
fn verdict(f: &FixesApplied) -> Vec<String> {
    if f.restored {
        return vec![format!(
            "With these changes the migrated client gets what the old one got: all {} documents embed, each at cosine {:.4} or more with its old vector, and no query's top hit changes.",
            f.documents, f.same_at
        )];
    }
    let mut lines = vec!["What still differs with these changes:".to_owned()];
    let missing = f.documents - f.embedded;
    if missing > 0 {
        lines.push(format!(
            "- {missing} of {} documents still do not embed (listed below).",
            f.documents
        ));
    }
    if !f.not_compared.is_empty() {
        lines.push(format!(
            "- {} documents embed but cannot be compared: the old client had no vector for them.",
            f.not_compared.len()
        ));
    }
    if !f.below.is_empty() {
        lines.push(below_line(f));
    }
    if let Some(a) = f.rankings.last().and_then(|s| s.versus_reference.as_ref())
        && !a.top_hit_changed.is_empty()
    {
        lines.push(format!(
            "- the top hit changed for {}: {}.",
            a.top_hit_changed.len(),
            a.top_hit_changed.join(", ")
        ));
    }
    if let Some(d) = &f.dimensions
        && !d.cosine.is_some_and(|x| x >= f.same_at)
    {
        lines.push(format!(
            "- the client-side cut to {} values does not reproduce the baseline's (see the table).",
            d.dimensions
        ));
    }
    lines
}

/// The documents under the line, with how each was cut; the tokenizer remark only
/// when every one of them was cut.
fn below_line(f: &FixesApplied) -> String {
    let cut_of = |id: &str| f.cut.iter().chain(&f.old_client_cut).find(|c| c.id == id);
    let shown: Vec<String> = f
        .below
        .iter()
        .map(|d| match cut_of(&d.id) {
            Some(c) => format!(
                "{} {:.4} ({} of {} characters kept{})",
                d.id,
                d.cosine,
                c.kept,
                c.chars,
                c.tokens.map_or(String::new(), |t| format!(", {t} tokens"))
            ),
            None => format!("{} {:.4}", d.id, d.cosine),
        })
        .collect();
    let all_cut = f.below.iter().all(|d| cut_of(&d.id).is_some());
    let remark = if all_cut {
        " These are cut documents: a cut at whole characters does not always end where the baseline's cut in tokens did; cutting token ids with the model's tokenizer would match it."
    } else {
        ""
    };
    format!(
        "- {} of {} documents are below {:.4}: {}.{remark}",
        f.below.len(),
        f.compared,
        f.same_at,
        shown.join(", ")
    )
}

fn cut_table(doc: &mut String, title: &str, cut: &[Cut]) {
    if cut.is_empty() {
        return;
    }
    let _ = writeln!(doc, "\n<details><summary>{title}</summary>\n");
    doc.push_str("| document | characters | kept | tokens | cosine with the old vector | the whole document alone | requests |\n|---|---|---|---|---|---|---|\n");
    for c in cut {
        let cosine = c.cosine.map_or("—".to_owned(), |x| format!("{x:.4}"));
        table_row(
            doc,
            &[
                &c.id,
                &c.chars.to_string(),
                &c.kept.to_string(),
                &c.tokens.map_or("—".to_owned(), |t| t.to_string()),
                &cosine,
                &text::one_line(&c.refused, 80),
                &c.requests.to_string(),
            ],
        );
    }
    doc.push_str("\n</details>\n");
}
