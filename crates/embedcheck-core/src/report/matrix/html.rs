//! `matrix.html`: the matrix as one self-contained page.
//!
//! No network access at all (no CDN, no web font): the styles and the script are in
//! the page. With JavaScript off it is a plain table whose cells open with
//! `<details>` (statement, reason, evidence, curl reproducer); with it, filters by
//! family, level and "only where servers differ". Headers stick while scrolling, and
//! the table scrolls sideways inside its own box on a narrow screen.

use super::{Cell, Document, LEGEND, Row, Server, cell_word};
use std::fmt::Write;

pub fn render(doc: &Document) -> String {
    let labels = doc.labels();
    let rows = doc.rows();
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>embedcheck matrix: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&labels.join(", "))
    );
    let _ = writeln!(
        page,
        "<h1>embedcheck matrix</h1>\n<p>{} servers, one seed ({}), {} {}.</p>",
        labels.len(),
        doc.seed,
        escape(&doc.tool.name),
        escape(&doc.tool.version)
    );
    if let Some(how) = &doc.provenance {
        let _ = writeln!(page, "<pre class=\"provenance\">{}</pre>", escape(how));
    }
    clients(&mut page, doc);
    legend(&mut page);
    filters(&mut page, &rows);
    table(&mut page, doc, &rows);
    let _ = write!(page, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    page
}

/// Will each client work with its defaults: one row per client, one cell per server.
fn clients(page: &mut String, doc: &Document) {
    let clients = doc.clients();
    if clients.is_empty() {
        return;
    }
    page.push_str("<div class=\"scroll short\"><table id=\"clients\"><thead><tr><th>client</th>");
    for label in doc.labels() {
        let _ = write!(page, "<th>{}</th>", escape(label));
    }
    page.push_str("</tr></thead><tbody>\n");
    for (client, cells) in clients {
        let _ = write!(page, "<tr><th class=\"clause\">{}</th>", escape(&client));
        for profile in cells {
            match profile {
                Some(p) => {
                    let (class, word) = if p.works {
                        ("pass", "works")
                    } else {
                        ("fail", "breaks")
                    };
                    let _ = write!(
                        page,
                        "<td class=\"cell {class}\"><details><summary>{word}</summary><ul>"
                    );
                    for why in &p.because {
                        let _ = write!(page, "<li>{}</li>", escape(why));
                    }
                    page.push_str("</ul></details></td>");
                }
                None => page.push_str("<td class=\"cell none\">—</td>"),
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table></div>\n");
}

fn legend(page: &mut String) {
    page.push_str("<ul class=\"legend\">");
    for (word, meaning) in LEGEND {
        let _ = write!(
            page,
            "<li><span class=\"cell {}\">{}</span> {}</li>",
            class_of(word),
            escape(word),
            escape(meaning)
        );
    }
    page.push_str("</ul>\n");
}

fn filters(page: &mut String, rows: &[Row]) {
    let mut families: Vec<&str> = rows.iter().map(|r| r.family.as_str()).collect();
    families.dedup();
    page.push_str("<form class=\"filters\" id=\"filters\" hidden>\n<label>family <select id=\"family\"><option value=\"\">all</option>");
    for f in families {
        let _ = write!(page, "<option>{}</option>", escape(f));
    }
    page.push_str("</select></label>\n<label>level <select id=\"level\"><option value=\"\">all</option><option>MUST</option><option>SHOULD</option><option>MAY</option></select></label>\n<label><input type=\"checkbox\" id=\"differ\"> only where servers differ</label>\n</form>\n");
}

fn table(page: &mut String, doc: &Document, rows: &[Row]) {
    page.push_str(
        "<div class=\"scroll\"><table id=\"matrix\">\n<thead><tr><th>clause</th><th>level</th>",
    );
    for server in &doc.servers {
        let _ = write!(
            page,
            "<th class=\"server\">{}{}</th>",
            escape(&server.label),
            bar(server)
        );
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let _ = write!(
            page,
            "<tr data-family=\"{}\" data-level=\"{}\" data-differs=\"{}\"><th class=\"clause\" title=\"{}\">{} <span>{}</span></th><td>{}</td>",
            escape(&row.family),
            escape(&row.level),
            row.differs(),
            escape(&row.statement),
            escape(&row.id),
            escape(&row.title),
            escape(&row.level)
        );
        for (cell, server) in row.cells.iter().zip(&doc.servers) {
            match (cell, &server.not_audited) {
                (_, Some(_)) => page.push_str("<td class=\"cell none\">not audited</td>"),
                (Some(c), None) => result_cell(page, row, c, &server.label),
                (None, None) => page.push_str("<td class=\"cell none\">—</td>"),
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody>\n</table></div>\n");
}

fn result_cell(page: &mut String, row: &Row, c: &Cell, label: &str) {
    let word = cell_word(c);
    let _ = write!(
        page,
        "<td class=\"cell {}\" data-server=\"{}\"><details><summary>{}</summary><div class=\"detail\"><p class=\"statement\">{}: {}</p><p class=\"reason\">{}</p>",
        class_of(word),
        escape(label),
        escape(word),
        escape(&row.id),
        escape(&row.statement),
        escape(&c.reason)
    );
    for exchange in &c.evidence {
        let _ = write!(
            page,
            "<pre class=\"evidence\">{}</pre>",
            escape(&exchange_text(exchange))
        );
    }
    if let Some(curl) = &c.curl {
        let _ = write!(page, "<pre class=\"curl\">{}</pre>", escape(curl));
    }
    page.push_str("</div></details></td>");
}

/// One exchange as evidence: the request line and body, then status and answer.
fn exchange_text(e: &serde_json::Value) -> String {
    let field = |name: &str| e.get(name).and_then(|v| v.as_str()).unwrap_or_default();
    let status = e
        .get("status")
        .and_then(serde_json::Value::as_u64)
        .map_or_else(|| field("transport_error").to_owned(), |s| s.to_string());
    format!(
        "{} {}\n{}\n→ {}\n{}",
        field("method"),
        field("path"),
        field("request_body"),
        status,
        field("response_body")
    )
}

/// A small stacked bar of pass / fail / skip for each level, as inline SVG.
fn bar(server: &Server) -> String {
    if let Some(why) = &server.not_audited {
        return format!(
            "<div class=\"not-audited\">not audited: {}</div>",
            escape(why)
        );
    }
    let mut svg = String::from("<svg class=\"bar\" viewBox=\"0 0 100 30\" role=\"img\">");
    let mut title = Vec::new();
    for (i, c) in server.levels.iter().enumerate() {
        let total = (c.pass + c.fail + c.skip + c.inconclusive).max(1) as f64;
        let y = i * 10;
        let mut x = 0.0;
        for (count, class) in [
            (c.pass, "pass"),
            (c.fail, "fail"),
            (c.skip + c.inconclusive, "skip"),
        ] {
            let w = 100.0 * count as f64 / total;
            let _ = write!(
                svg,
                "<rect class=\"{class}\" x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"8\"/>"
            );
            x += w;
        }
        title.push(format!(
            "{}: {} pass, {} fail, {} skip",
            c.level,
            c.pass,
            c.fail,
            c.skip + c.inconclusive
        ));
    }
    let _ = write!(svg, "<title>{}</title></svg>", escape(&title.join("; ")));
    svg
}

fn class_of(word: &str) -> &'static str {
    match word {
        "pass" => "pass",
        "FAIL" => "fail",
        "fail*" => "tolerated",
        "known" => "known",
        "skip" => "skip",
        _ => "inconclusive",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.3rem;margin:.2rem 0}
.legend{display:flex;flex-wrap:wrap;gap:.4rem 1rem;list-style:none;padding:0}
.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;margin:.6rem 0}
.scroll{overflow:auto;max-height:80vh;border:1px solid #ccc}
.scroll.short{margin-bottom:.6rem}
table{border-collapse:separate;border-spacing:0;min-width:100%}
th,td{border-bottom:1px solid #e4e4e4;padding:.25rem .4rem;vertical-align:top;text-align:left}
thead th{position:sticky;top:0;background:#f4f4f4;z-index:2}
th.clause{position:sticky;left:0;background:#fafafa;z-index:1;font-weight:600;min-width:12rem}
th.clause span{font-weight:400;color:#555}
.cell{min-width:4.5rem}
.cell summary{cursor:pointer;font-weight:600}
.pass{background:#d9f2dc}.fail{background:#f8c9c4}.tolerated{background:#fbe3c2}
.known{background:#e3dcf5}.skip{background:#eceff1}.inconclusive{background:#fff5b8}.none{color:#999}
.detail{max-width:34rem;white-space:normal}
pre{white-space:pre-wrap;word-break:break-word;font-size:12px;background:#fff;border:1px solid #ddd;padding:.3rem;margin:.3rem 0}
svg.bar{display:block;width:6rem;height:1.8rem}
svg.bar rect.pass{fill:#3a9d4a}svg.bar rect.fail{fill:#c8372d}svg.bar rect.skip{fill:#b0b7bb}
.not-audited{font-weight:400;color:#a33;max-width:14rem;font-size:12px}
@media (max-width:600px){body{margin:.4rem}th.clause{min-width:8rem}.detail{max-width:80vw}}
"#;

const SCRIPT: &str = r#"
(function(){
  var form=document.getElementById('filters');form.hidden=false;
  var family=document.getElementById('family'),level=document.getElementById('level'),differ=document.getElementById('differ');
  function apply(){
    document.querySelectorAll('#matrix tbody tr').forEach(function(tr){
      var show=(!family.value||tr.dataset.family===family.value)&&(!level.value||tr.dataset.level===level.value)&&(!differ.checked||tr.dataset.differs==='true');
      tr.hidden=!show;
    });
  }
  [family,level,differ].forEach(function(e){e.addEventListener('change',apply);});
})();
"#;
