"""The evaluation report: one self-contained HTML file (inline CSS, SVG and a few lines of JS; nothing
fetched) that a person reads top down: tier 1, extraction audit (a bad PDF is visible before anyone
blames the chunker); tier 2, the config table; plots; the chunk-boundary viewer. This module lays out
the page and its tables; ``report_plots`` draws the SVG, ``report_viewer`` the boundary viewer, and
``report_format`` holds the escaping and number formatting all three share.

Every piece of text from data (documents, questions, names, notes) goes through `html.escape`, and a
Content-Security-Policy allows only this file's own script (by hash), so even a slip in escaping
could not run a script carried by a document.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from chunkwise import ids
from chunkwise.errors import ConfigError
from chunkwise.evaluate.report_format import DASH, METRICS, SEVERITY, fmt_metric
from chunkwise.evaluate.report_format import esc as _e
from chunkwise.evaluate.report_format import num as _num
from chunkwise.evaluate.report_plots import plot_context_recall, plot_recall_inflation, plot_straddle_overlap
from chunkwise.evaluate.report_viewer import viewer_section


# ------------------------------------------------------------------------------- tables
def _audit(rows: list[dict]) -> str:
    if not rows:
        return '<p class="note">No extraction audit in this run.</p>'
    for r in rows:
        if r.get("status") not in SEVERITY:
            raise ConfigError(f"audit status {r.get('status')!r} for {r.get('source')!r}: "
                              "use one of ok, warning, error")
    rows = sorted(rows, key=lambda r: SEVERITY[r["status"]])
    counts = defaultdict(int)
    for r in rows:
        counts["warning" if r["status"] == "warn" else r["status"]] += 1
    ordered = sorted(counts.items(), key=lambda i: SEVERITY[i[0]])
    summary = " ".join(f'<span class="st {s}">{n} {s}</span>' for s, n in ordered)
    head = "".join(f"<th>{h}</th>" for h in ("status", "source", "pages", "empty pages", "chars / page",
                                             "(cid: garbage", "language", "needs OCR", "notes"))
    body = []
    for r in rows:
        status = "warning" if r["status"] == "warn" else r["status"]
        notes = list(r.get("notes", r.get("warnings", []))) + ([r["error"]] if r.get("error") else [])
        cid = r.get("cid_garbage", r.get("cid_artifacts", 0))
        cpp = _num(r.get("chars_per_page"))
        cells = [f'<span class="st {status}">{status}</span>', f"<code>{_e(r.get('source', '?'))}</code>",
                 _e(DASH if r.get("pages") is None else r["pages"]), _e(r.get("empty_pages", 0)),
                 DASH if cpp is None else f"{cpp:,.0f}", _e(cid), _e(r.get("language") or DASH),
                 "yes" if r.get("needs_ocr") else "", "<br>".join(_e(n) for n in notes)]
        body.append(f'<tr class="{status}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<p>{len(rows)} file(s): {summary}</p><div class="scroll"><table class="audit">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def _configs(configs: list[dict], best: dict[str, str], pareto: set[str]) -> str:
    if not configs:
        return '<p class="note">No configurations were evaluated.</p>'
    fields = ("strategy", "size", "overlap", "header", "mode")
    head = "<th>config</th>" + "".join(f"<th>{f}</th>" for f in fields) + "".join(
        f'<th class="num">{_e(m)}</th>' for m in METRICS)
    rows = []
    for c in configs:
        star = '<span class="star" title="on the Pareto front">\u2605</span> ' if c["name"] in pareto else ""
        cells = [f'<th scope="row" title="{_e(c["name"])}">{star}{_e(c["name"])}</th>']
        cells += [f"<td>{_e(c.get(f, DASH))}</td>" for f in fields]
        for m in METRICS:
            win = best.get(m) == c["name"]
            cls = "num best" if win else "num"
            tip = f' title="best {_e(m)}"' if win else ""
            value = fmt_metric(m, c.get("metrics", {}).get(m))
            cells.append(f'<td class="{cls}" data-metric="{_e(m)}"{tip}>{value}</td>')
        row_cls = "pareto" if c["name"] in pareto else ""
        rows.append(f'<tr class="{row_cls}" data-config="{_e(c["name"])}">{"".join(cells)}</tr>')
    return (f'<p class="note"><span class="best-key">highlighted</span> = best per metric; '
            f'\u2605 = on the Pareto front ({len(pareto)} of {len(configs)}).</p><div class="scroll">'
            f'<table class="configs"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')



def _comparisons(data: dict) -> str:
    """The chosen config with standard errors, then every other config against it question by question."""
    comp, configs = data.get("comparisons") or {}, {c["name"]: c for c in data.get("configs", [])}
    chosen = configs.get(data.get("chosen") or comp.get("reference"))
    if chosen is None:
        return '<p class="note">No config was chosen in this run.</p>'
    se = chosen.get("se", {})
    cells = " \u00b7 ".join(f"{_e(name)} {fmt_metric(name, chosen['metrics'].get(name))} \u00b1 "
                              f"{fmt_metric(name, value)}" for name, value in se.items())
    head = (f'<p>Chosen: <b>{_e(chosen["name"])}</b> (highest recall@k, then recall@1, IoU, fewer tokens) on '
            f'{_e(data.get("questions", "?"))} {_e(data.get("split", "all"))} question(s), embedder '
            f'<code>{_e(data.get("embedder") or DASH)}</code>: {cells} (mean \u00b1 standard error).</p>')
    rows = comp.get("rows") or []
    if not rows:
        return head + '<p class="note">One config only: nothing to compare.</p>'
    level = _num(comp.get("level")) or 0.95
    cols = ("config", "metric", "chosen", "this config", "difference", "SE", f"{level:.0%} interval",
            "better / worse")
    body = []
    for r in rows:
        sig = bool(r.get("significant"))
        values = [fmt_metric(r["metric"], r.get(k)) for k in ("mean_a", "mean_b", "diff", "se")]
        interval = f'[{fmt_metric(r["metric"], r.get("ci_low"))}, {fmt_metric(r["metric"], r.get("ci_high"))}]'
        cells = [f'<th scope="row">{_e(r.get("b", "?"))}</th>', f"<td>{_e(r.get('metric', '?'))}</td>"]
        cells += [f'<td class="num">{v}</td>' for v in values]
        cells += [f'<td class="num{" sig" if sig else ""}">{interval}</td>',
                  f'<td class="num">+{_e(r.get("better", 0))} / \u2212{_e(r.get("worse", 0))}</td>']
        body.append(f'<tr data-config="{_e(r.get("b", ""))}" data-metric="{_e(r.get("metric", ""))}">'
                    + "".join(cells) + "</tr>")
    return (head + f'<p class="note">Each row: this config minus the chosen one on the same questions; '
            f'highlighted = the interval excludes 0 (percentile bootstrap over questions, '
            f'{_e(comp.get("resamples", "?"))} resamples, seed {_e(comp.get("seed", "?"))}).</p>'
            f'<div class="scroll"><table class="comparisons"><thead><tr>'
            + "".join(f"<th>{_e(c)}</th>" for c in cols) + f'</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


# ------------------------------------------------------------------------------- page
CSS = """
body{font:14px/1.45 system-ui,"DejaVu Sans",sans-serif;color:#1d2330;margin:0;background:#f6f7f9}
main{max-width:1280px;margin:0 auto;padding:18px 24px 60px}
h1{margin:0 0 4px;font-size:24px} h2{margin:34px 0 8px;border-bottom:2px solid #d7dbe3;padding-bottom:4px}
nav a{margin-right:14px} .meta{color:#5b6474} code{font:12px "DejaVu Sans Mono",monospace}
.note{color:#5b6474;font-size:12.5px} .scroll{overflow-x:auto;background:#fff;border:1px solid #d7dbe3}
table{border-collapse:collapse;font-size:12.5px;white-space:nowrap}
th,td{padding:4px 8px;border-bottom:1px solid #e6e9ef;text-align:left}
thead th{background:#eef1f6;position:sticky;top:0} .num{text-align:right;font-variant-numeric:tabular-nums}
table.configs tbody th{position:sticky;left:0;background:#fff;max-width:230px;overflow:hidden;text-overflow:ellipsis}
tr.pareto th{color:#7a4b00}
td.best,.best-key,td.sig{background:#c9f0d2;font-weight:700;box-shadow:inset 0 0 0 1px #2e8b57} .star{color:#d08700}
.st{display:inline-block;padding:0 6px;border-radius:8px;font-size:11.5px;font-weight:600;background:#e6e9ef}
.st.ok{background:#d4f3dc;color:#145a2c} .st.warning,.st.skipped{background:#fff0c2;color:#6b4e00}
.st.error{background:#ffd6d6;color:#8a1010} tr.error td{background:#fff4f4} tr.warning td{background:#fffbea}
.plots{display:flex;flex-wrap:wrap;gap:16px}
figure.plot{margin:0;background:#fff;border:1px solid #d7dbe3;padding:8px}
figcaption{font-weight:600;margin-bottom:4px} .plotbg{fill:#fbfcfd} .grid{stroke:#e3e6ec}
.tick{font-size:10.5px;fill:#5b6474} .axis{font-size:12px;fill:#1d2330} .lbl{font-size:10.5px;fill:#333}
.lbl.strong{font-weight:700} .stalk{stroke:#b8bfcc;stroke-width:1.5} path.line{fill:none;stroke-width:2}
circle.mark{stroke:#fff;stroke-width:1} circle.pareto{stroke:#1d2330;stroke-width:2}
.legend{font-size:12px;max-width:372px} .legend span{margin-right:12px;white-space:nowrap}
.legend i{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}
.doc{background:#fff;border:1px solid #d7dbe3;padding:4px 14px 14px;margin:10px 0} .doc h3{margin:8px 0 0}
.text{white-space:pre-wrap;font:13px/1.9 "DejaVu Sans Mono",monospace;max-height:620px;overflow:auto}
.seg.b0{background:#dcebff} .seg.b1{background:#fff1c9} .seg.gap{background:none;color:#8a93a3}
.seg.ov{background:repeating-linear-gradient(135deg,#d9c8f5 0 5px,#efe6ff 5px 10px)}
.seg.ans{text-decoration:underline 3px #1f9d55;text-underline-offset:3px}
.seg.ans.straddled{text-decoration:underline wavy 2px #d11a1a;text-underline-offset:4px;color:#b00000;font-weight:700}
.cs,.ce,.qtag{user-select:none;font:10px/1 system-ui,sans-serif}
.cs::before{content:attr(data-n);border-left:2px solid #2b3a55;color:#2b3a55;padding:0 2px;vertical-align:super}
.ce::before{content:"";border-right:2px solid #7a8499;margin-right:1px}
.qtag::before{content:attr(data-q);background:#1f9d55;color:#fff;border-radius:3px;padding:1px 3px;margin:0 2px;
vertical-align:super}
.qtag.straddled::before{background:#d11a1a} .bad{color:#d11a1a;font-weight:700}
.key .seg{margin-right:10px;padding:1px 4px;font-size:12px} .key{margin:6px 0}
ul.questions{list-style:none;padding:0} li.q{background:#fff;border:1px solid #e1e5ec;padding:6px 10px;margin:6px 0}
.hit{white-space:pre-wrap;font:12px/1.5 "DejaVu Sans Mono",monospace;background:#f6f7f9;padding:4px 8px;
max-height:160px;overflow:auto}
.st.none{background:#eceff3;color:#5b6474} .flash{animation:fl 1.5s} @keyframes fl{from{outline:4px solid #ffb300}}
"""

JS = """(function(){
var sel=document.getElementById('doc-select');if(!sel)return;
function show(i){document.querySelectorAll('.doc').forEach(function(d){d.hidden=d.dataset.i!==i;});
document.querySelectorAll('li.q').forEach(function(q){q.hidden=q.dataset.doc!==i&&q.dataset.doc!=='-1';});
sel.value=i;}
sel.addEventListener('change',function(){show(sel.value);});show(sel.value);
document.querySelectorAll('a[data-goto]').forEach(function(a){a.addEventListener('click',function(e){
e.preventDefault();show(a.dataset.doc);var t=document.getElementById(a.dataset.goto);if(!t)return;
t.scrollIntoView({block:'center'});
t.classList.add('flash');setTimeout(function(){t.classList.remove('flash');},1500);});});})();"""


def _names(data: dict) -> tuple[list[dict], dict[str, str], set[str]]:
    configs = list(data.get("configs", []))
    names = [c.get("name") for c in configs]
    if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
        raise ConfigError(f"config names must be unique non-empty strings, got {names!r}")
    best, pareto = dict(data.get("best", {})), set(data.get("pareto", []))
    for where, name in [(f"best[{m!r}]", n) for m, n in best.items()] + [("pareto", n) for n in sorted(pareto)] + (
            [("viewer.config", data["viewer"].get("config"))] if data.get("viewer") else []):
        if name not in names:
            raise ConfigError(f"{where} names config {name!r}, which is not in 'configs': pass one of {names!r}")
    return configs, best, pareto


def render_report(data: dict) -> str:
    """The whole report as one HTML string; raises ConfigError when data contradicts itself."""
    if not isinstance(data, dict):
        raise ConfigError(f"render_report takes the evaluation result as a dict, got {type(data).__name__}")
    configs, best, pareto = _names(data)
    title = data.get("title") or "chunkwise evaluation"
    csp_hash = ids.sha256_base64(JS)
    csp = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{csp_hash}'; img-src data:"
    plots = "".join(f(configs, pareto) for f in (plot_recall_inflation, plot_straddle_overlap, plot_context_recall))
    sections = [("audit", "Tier 1 \u00b7 extraction audit", _audit(list(data.get("audit", [])))),
                ("configs", "Tier 2 \u00b7 configurations", _configs(configs, best, pareto)),
                ("comparisons", "Paired comparisons", _comparisons(data)),
                ("plots", "Plots", f'<div class="plots">{plots}</div><p class="note">Ringed points are on the '
                                   f'Pareto front; hover a point for its config and values.</p>'),
                ("viewer", "Chunk boundaries", viewer_section(data.get("viewer")))]
    nav = "".join(f'<a href="#{sid}">{_e(h)}</a>' for sid, h, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_e(h)}</h2>{html}</section>' for sid, h, html in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(title)}</title>'
            f"<style>{CSS}</style></head><body><main><h1>{_e(title)}</h1>"
            f'<p class="meta">{_e(data.get("generated_at", ""))} \u00b7 '
            f'<code>{_e(data.get("command", ""))}</code></p>'
            f"<nav>{nav}</nav>{body}</main><script>{JS}</script></body></html>\n")


def write_report(data: dict, path: str | Path) -> Path:
    """Render and write the report (UTF-8); returns the path written."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ConfigError(f"cannot write {path}: directory {path.parent} does not exist; "
                          "create it or choose another --out")
    html = render_report(data)
    path.write_text(html, encoding="utf-8")
    return path
