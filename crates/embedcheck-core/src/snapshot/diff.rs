//! The difference between an accepted snapshot and this run's, printed line by line
//! (`-` accepted, `+` now) with a few lines of context, so a reviewer sees what
//! changed without opening the files.

use std::fmt::Write;

/// Lines of unchanged context shown around each change.
const CONTEXT: usize = 2;

/// The diff of `old` → `new` under a header naming the snapshot.
pub(super) fn render(name: &str, old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let edits = edits(&old, &new);
    let mut out = format!("snapshot {name}: -accepted +now\n");
    let changed: Vec<usize> = (0..edits.len())
        .filter(|&i| !matches!(edits[i], Edit::Same(_)))
        .collect();
    let near = |i: usize| changed.iter().any(|&c| i.abs_diff(c) <= CONTEXT);
    let mut skipped = false;
    for (i, edit) in edits.iter().enumerate() {
        if !near(i) {
            skipped = true;
            continue;
        }
        if std::mem::take(&mut skipped) {
            out.push_str("  …\n");
        }
        let _ = match edit {
            Edit::Same(line) => writeln!(out, "  {line}"),
            Edit::Removed(line) => writeln!(out, "- {line}"),
            Edit::Added(line) => writeln!(out, "+ {line}"),
        };
    }
    if skipped {
        out.push_str("  …\n");
    }
    out
}

#[derive(Debug, PartialEq)]
enum Edit<'a> {
    Same(&'a str),
    Removed(&'a str),
    Added(&'a str),
}

/// A shortest edit script from the longest common subsequence of lines; snapshots
/// are a few hundred lines, so the quadratic table is small.
fn edits<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Edit<'a>> {
    let (n, m) = (old.len(), new.len());
    let mut common = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(n + m));
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            out.push(Edit::Same(old[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            out.push(Edit::Removed(old[i]));
            i += 1;
        } else {
            out.push(Edit::Added(new[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_removed_then_added_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng";
        let new = "a\nb\nc\nD\ne\nf\ng";
        let out = render("IN-001", old, new);
        assert_eq!(
            out,
            "snapshot IN-001: -accepted +now\n  …\n  b\n  c\n- d\n+ D\n  e\n  f\n  …\n"
        );
    }

    #[test]
    fn a_new_snapshot_is_all_additions() {
        assert_eq!(
            render("X", "", "a\nb"),
            "snapshot X: -accepted +now\n+ a\n+ b\n"
        );
    }
}
