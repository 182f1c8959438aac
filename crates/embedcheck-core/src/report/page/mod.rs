//! What every HTML page of a report shares: one self-contained document (styles
//! and script inside it, nothing loaded: no CDN, no web font), escaping, and the
//! small SVG charts of [`chart`].
//!
//! The pages read well with JavaScript off: tables, `<details>` cells and SVG charts
//! need none; the script only adds the filters (the matrix's and the index's): rows
//! by contract, family, level and "only where servers differ", columns by contract.

pub(crate) mod chart;

use std::fmt::Write;

/// A whole page: `title` in the tab, `body` as given.
pub(crate) fn document(title: &str, body: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        escape(title)
    );
    page
}

/// `text` safe inside an element or a double-quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Report prose as HTML: escaped, with its `code` spans (the Markdown report's
/// backticks) as `<code>`. An unpaired backtick stays as it is.
pub(crate) fn inline(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape(text);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", escape(part))
            } else {
                escape(part)
            }
        })
        .collect()
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.3rem;margin:.2rem 0}
h2{font-size:1.1rem;margin:1.2rem 0 .4rem}
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
.glance{padding-left:1.2rem}.glance li{margin:.2rem 0}
code{font-size:12px;background:#f2f2f2;padding:0 .2rem}
figure{margin:.4rem 0 1rem}figcaption{color:#444;max-width:44rem}
svg.chart{display:block;width:100%;max-width:44rem;height:auto;font-size:13px;font-family:inherit}
svg.chart .axis{stroke:#888;stroke-width:1}svg.chart .grid{stroke:#e2e2e2;stroke-width:1}
svg.chart .threshold{stroke:#c8372d;stroke-width:1;stroke-dasharray:4 3}
svg.chart circle.same{fill:#3a9d4a}svg.chart circle.below{fill:#c8372d}
svg.chart polyline{fill:none;stroke:#3a9d4a;stroke-width:1.5}
svg.chart .box{fill:#9cc8e8;stroke:#2f6f9f}svg.chart .whisker{stroke:#2f6f9f;stroke-width:1.5}
svg.chart .median{stroke:#123;stroke-width:2.5}svg.chart text{fill:#333}
table.figures{min-width:0;margin:.3rem 0}table.figures td,table.figures th{padding:.15rem .5rem}
@media (max-width:600px){body{margin:.4rem}th.clause{min-width:8rem}.detail{max-width:80vw}svg.chart{font-size:18px}
#servers thead{display:none}#servers tr{display:block;border-bottom:2px solid #ccc}#servers th,#servers td{display:block;position:static;border:0}#servers [hidden]{display:none}}
"#;

const SCRIPT: &str = r#"
(function(){
  var form=document.getElementById('filters');if(!form)return;form.hidden=false;
  var contract=document.getElementById('contract'),family=document.getElementById('family'),level=document.getElementById('level'),differ=document.getElementById('differ');
  function picked(select,value){return !select||!select.value||value===select.value;}
  function apply(){
    document.querySelectorAll('tr[data-level]').forEach(function(tr){
      tr.hidden=!(picked(contract,tr.dataset.contract)&&picked(family,tr.dataset.family)&&picked(level,tr.dataset.level)&&(!differ.checked||tr.dataset.differs==='true'));
    });
    document.querySelectorAll('th[data-contract],td[data-contract]').forEach(function(cell){cell.hidden=!picked(contract,cell.dataset.contract);});
  }
  [contract,family,level,differ].forEach(function(e){if(e)e.addEventListener('change',apply);});
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_loads_nothing_and_escapes_its_title() {
        let page = document("a <b> & \"c\"", "<p>body</p>\n");
        assert!(page.contains("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"));
        assert!(page.contains("<p>body</p>"));
        for loads in ["src=", "<link", "url(", "@import", "href="] {
            assert!(!page.contains(loads), "the page must load nothing: {loads}");
        }
    }

    #[test]
    fn code_spans_become_code_and_the_rest_is_escaped() {
        assert_eq!(
            inline("stop sending `dimensions` <now>"),
            "stop sending <code>dimensions</code> &lt;now&gt;"
        );
        assert_eq!(inline("a ` alone"), "a ` alone");
    }
}
