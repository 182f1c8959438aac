//! Small inline SVG charts: drawn from the report's numbers, readable without
//! JavaScript, each point or box titled with its exact figures (a hover shows them,
//! and a screen reader reads them).
//!
//! ```text
//! stacked bar      MUST ███████░░ SHOULD ██████▒░ MAY ███░   pass / fail / skip per level
//! cosines          ·······•••••••●●●●  one dot per document, lowest first; dashed "same at"
//! latency          old  ├──[██|███]──┤   min → p99 whisker, p25–p75 box, p50 line
//! ```

use super::escape;
use crate::migration::latency::Distribution;
use crate::migration::vectors::DocumentCosine;
use std::fmt::Write;

/// One row of a stacked bar: its name and its pass, fail and skip counts.
pub(crate) struct Stack<'a> {
    pub name: &'a str,
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
}

/// A small stacked bar of pass / fail / skip, one row per stack.
pub(crate) fn stacked_bar(stacks: &[Stack<'_>]) -> String {
    let title: Vec<String> = stacks
        .iter()
        .map(|s| {
            format!(
                "{}: {} pass, {} fail, {} skip",
                s.name, s.pass, s.fail, s.skip
            )
        })
        .collect();
    // The title comes first: it is the chart's accessible name.
    let mut svg = format!(
        "<svg class=\"bar\" viewBox=\"0 0 100 30\" role=\"img\"><title>{}</title>",
        escape(&title.join("; "))
    );
    for (i, s) in stacks.iter().enumerate() {
        let total = (s.pass + s.fail + s.skip).max(1) as f64;
        let y = i * 10;
        let mut x = 0.0;
        for (count, class) in [(s.pass, "pass"), (s.fail, "fail"), (s.skip, "skip")] {
            let w = 100.0 * count as f64 / total;
            let _ = write!(
                svg,
                "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"8\"/>"
            );
            x += w;
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The drawing area shared by the wide charts, in viewBox units.
const WIDTH: f64 = 600.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 10.0;

/// Above this many documents the cosines are drawn as one line (dots only below
/// `same_at`), so a large corpus stays a small page.
const MOST_DOTS: usize = 400;

/// Every document's cosine, lowest first, against the `same_at` threshold: the
/// distribution behind min / median / max, and which documents fall short.
pub(crate) fn cosines(points: &[DocumentCosine], same_at: f64) -> String {
    let mut sorted: Vec<&DocumentCosine> = points.iter().filter(|p| p.cosine.is_finite()).collect();
    if sorted.is_empty() {
        return String::new();
    }
    sorted.sort_by(|x, y| x.cosine.total_cmp(&y.cosine));
    let lowest = sorted[0].cosine.min(same_at);
    // A margin below the lowest value, so its dot is not on the axis.
    let floor = (lowest - (1.0 - lowest).max(1e-4) * 0.2).max(-1.0);
    let (top, height) = (10.0, 110.0);
    let y = |c: f64| top + (1.0 - c.min(1.0)) / (1.0 - floor) * height;
    let n = sorted.len();
    let x = |i: usize| LEFT + (i as f64 + 0.5) / n as f64 * (WIDTH - LEFT - RIGHT);
    let mut svg = format!(
        "<svg class=\"chart cosines\" viewBox=\"0 0 {WIDTH} {}\" role=\"img\" data-points=\"{n}\">",
        top + height + 30.0
    );
    let below = sorted.iter().filter(|p| p.cosine < same_at).count();
    let _ = write!(
        svg,
        "<title>Cosine of each of {n} documents, lowest first: {} at or above {same_at:.4}, {below} below</title>",
        n - below
    );
    // The top's label gives way to the threshold's when they would overlap.
    let top_label = if y(same_at) - y(1.0) < 14.0 {
        String::new()
    } else {
        "1.0000".to_owned()
    };
    horizontal_line(&mut svg, y(1.0), "grid", &top_label);
    horizontal_line(&mut svg, y(floor), "axis", &format!("{floor:.4}"));
    horizontal_line(&mut svg, y(same_at), "threshold", &format!("{same_at:.4}"));
    if n > MOST_DOTS {
        let line: Vec<String> = sorted
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.cosine)))
            .collect();
        let _ = write!(svg, "<polyline points=\"{}\"/>", line.join(" "));
    }
    let radius = (240.0 / n as f64).clamp(1.5, 4.0);
    for (i, p) in sorted.iter().enumerate() {
        let class = if p.cosine < same_at { "below" } else { "same" };
        if n > MOST_DOTS && class == "same" {
            continue;
        }
        let _ = write!(
            svg,
            "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{radius:.1}\"><title>{}: {:.6}</title></circle>",
            x(i),
            y(p.cosine),
            escape(&p.id),
            p.cosine
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{LEFT}\" y=\"{:.1}\">{n} documents, lowest cosine first</text>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">- - - same vector at or above {same_at:.4}</text></svg>",
        top + height + 22.0,
        WIDTH - RIGHT,
        top + height + 22.0
    );
    svg
}

fn horizontal_line(svg: &mut String, y: f64, class: &str, label: &str) {
    let _ = write!(
        svg,
        "<line class=\"{class}\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
        WIDTH - RIGHT,
        LEFT - 4.0,
        y + 4.0
    );
}

/// One box of a latency chart: what it measured and its quantiles.
pub(crate) struct LatencyBox<'a> {
    pub name: &'a str,
    pub distribution: &'a Distribution,
}

/// Latency distributions on one axis in milliseconds: a whisker from the fastest
/// request to p99, a box from p25 to p75 and a line at p50. The axis ends a little
/// past the largest p99, so one slow request does not flatten every box; a maximum
/// beyond it is marked at the edge and named in its title.
pub(crate) fn latency(boxes: &[LatencyBox<'_>]) -> String {
    if boxes.is_empty() {
        return String::new();
    }
    let largest = boxes
        .iter()
        .map(|b| b.distribution.p99_ms)
        .fold(0.0_f64, f64::max);
    let end = nice_ceiling(largest * 1.1);
    let (left, row) = (150.0, 28.0);
    let x = |ms: f64| left + ms.min(end) / end * (WIDTH - left - RIGHT);
    let height = row * boxes.len() as f64 + 30.0;
    let mut svg = format!(
        "<svg class=\"chart latency\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" data-boxes=\"{}\">\
         <title>Latency per request in milliseconds</title>",
        boxes.len()
    );
    for (i, b) in boxes.iter().enumerate() {
        let d = b.distribution;
        let middle = 8.0 + row * i as f64 + row / 2.0;
        let _ = write!(
            svg,
            "<g><title>{}: {} requests; min {:.1}, p10 {:.1}, p25 {:.1}, p50 {:.1}, p75 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1} ms</title>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <line class=\"whisker\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{middle:.1}\" y2=\"{middle:.1}\"/>\
             <rect class=\"box\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"14\"/>\
             <line class=\"median\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
            escape(b.name),
            d.requests,
            d.min_ms,
            d.p10_ms,
            d.p25_ms,
            d.p50_ms,
            d.p75_ms,
            d.p90_ms,
            d.p99_ms,
            d.max_ms,
            left - 6.0,
            middle + 4.0,
            escape(b.name),
            x(d.min_ms),
            x(d.p99_ms),
            x(d.p25_ms),
            middle - 7.0,
            (x(d.p75_ms) - x(d.p25_ms)).max(1.0),
            x(d.p50_ms),
            x(d.p50_ms),
            middle - 9.0,
            middle + 9.0
        );
        if d.max_ms > end {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">max {:.0} ›</text>",
                WIDTH - RIGHT,
                middle - 8.0,
                d.max_ms
            );
        }
        svg.push_str("</g>");
    }
    let axis = 8.0 + row * boxes.len() as f64 + 4.0;
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{axis:.1}\" y2=\"{axis:.1}\"/>",
        WIDTH - RIGHT
    );
    for (tick, anchor) in [(0.0, "start"), (end / 2.0, "middle"), (end, "end")] {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{} ms</text>",
            x(tick),
            axis + 16.0,
            trim_number(tick)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10ⁿ at or above `x`: an axis
/// end people read, never far past the data.
fn nice_ceiling(x: f64) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(x.log10().floor());
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|step| step * magnitude)
        .find(|end| *end >= x)
        .unwrap_or(10.0 * magnitude)
}

fn trim_number(x: f64) -> String {
    if x >= 10.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: &str, cosine: f64) -> DocumentCosine {
        DocumentCosine {
            id: id.to_owned(),
            cosine,
        }
    }

    #[test]
    fn a_stacked_bar_is_named_first_and_fills_its_row() {
        let svg = stacked_bar(&[Stack {
            name: "MUST",
            pass: 3,
            fail: 1,
            skip: 0,
        }]);
        assert!(svg.contains("role=\"img\"><title>MUST: 3 pass, 1 fail, 0 skip</title><rect"));
        assert!(svg.contains("class=\"pass\" x=\"0.0\" y=\"0\" width=\"75.0\""));
        assert!(svg.contains("class=\"fail\" x=\"75.0\" y=\"0\" width=\"25.0\""));
    }

    #[test]
    fn every_document_is_a_dot_and_those_below_the_threshold_are_marked() {
        let points = [
            point("en-1", 1.0),
            point("ko-17", 0.9934),
            point("en-2", 0.99995),
        ];
        let svg = cosines(&points, 0.999);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("class=\"below\"").count(), 1);
        assert!(svg.contains("ko-17: 0.993400"), "{svg}");
        assert!(svg.contains("2 at or above 0.9990, 1 below"), "{svg}");
        // Lowest first: ko-17's dot is the leftmost.
        let first = svg.find("<circle").unwrap();
        assert!(svg[first..].starts_with("<circle class=\"below\""), "{svg}");
    }

    #[test]
    fn a_large_corpus_is_a_line_with_dots_only_where_it_falls_short() {
        let points: Vec<DocumentCosine> = (0..1000)
            .map(|i| point(&format!("d{i}"), if i == 7 { 0.5 } else { 0.9999 }))
            .collect();
        let svg = cosines(&points, 0.999);
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(svg.contains("<polyline"));
        assert!(cosines(&[], 0.999).is_empty());
    }

    fn spread(p50: f64, p99: f64, max: f64) -> Distribution {
        Distribution {
            requests: 90,
            min_ms: p50 / 2.0,
            p10_ms: p50 * 0.8,
            p25_ms: p50 * 0.9,
            p50_ms: p50,
            p75_ms: p50 * 1.1,
            p90_ms: p50 * 1.2,
            p99_ms: p99,
            max_ms: max,
        }
    }

    #[test]
    fn latency_boxes_share_one_axis_past_the_largest_p99() {
        let (old, new) = (spread(54.3, 76.0, 80.0), spread(120.0, 180.0, 2400.0));
        let svg = latency(&[
            LatencyBox {
                name: "old sequential",
                distribution: &old,
            },
            LatencyBox {
                name: "new sequential",
                distribution: &new,
            },
        ]);
        assert_eq!(svg.matches("class=\"box\"").count(), 2);
        assert!(svg.contains(">200 ms<"), "axis ends at 200 ms: {svg}");
        assert!(
            svg.contains("max 2400 ›"),
            "the far maximum is marked: {svg}"
        );
        assert!(!svg.contains("max 80 ›"));
        assert!(
            svg.contains("old sequential: 90 requests; min 27.1"),
            "{svg}"
        );
    }

    #[test]
    fn axis_ends_are_round_numbers() {
        assert_eq!(nice_ceiling(83.6), 100.0);
        assert_eq!(nice_ceiling(286.0), 300.0);
        assert_eq!(nice_ceiling(198.0), 200.0);
        assert_eq!(nice_ceiling(2.1), 2.5);
        assert_eq!(nice_ceiling(0.0), 1.0);
    }
}
