//! Markdown building blocks shared by the report's sections: rows, cells, inline code
//! and fenced blocks that a server's own text cannot break.

use std::fmt::Write;

pub(crate) fn table_row(doc: &mut String, cells: &[&str]) {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    let _ = writeln!(doc, "| {} |", cells.join(" | "));
}

/// A table cell: a `|` would end the cell and a newline the row.
pub(crate) fn cell(text: &str) -> String {
    text.trim()
        .replace('|', r"\|")
        .replace("\r\n", "<br>")
        .replace('\n', "<br>")
}

/// Inline code; the value is short and single-line (an URL, a model name).
pub(crate) fn code(text: &str) -> String {
    format!("`{text}`")
}

/// A fenced block whose fence is longer than any backtick run inside, so a server
/// that answers with Markdown cannot close the block early.
pub(crate) fn fenced(lang: &str, body: &str) -> String {
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a | b\nc"), r"a \| b<br>c");
    }

    #[test]
    fn fence_outgrows_backticks_in_the_body() {
        assert_eq!(fenced("", "x ```` y"), "`````\nx ```` y\n`````\n");
        assert_eq!(fenced("sh", "curl"), "```sh\ncurl\n```\n");
    }
}
