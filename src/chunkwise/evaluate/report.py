"""The evaluation report: one self-contained HTML file (inline CSS, SVG and a few lines of JS; nothing
fetched) that a person reads top down: tier 1, extraction audit (a bad PDF is visible before anyone
blames the chunker); tier 2, the config table; plots; the chunk-boundary viewer.

Every piece of text from data (documents, questions, names, notes) goes through `html.escape`, and a
Content-Security-Policy allows only this file's own script (by hash), so even a slip in escaping
could not run a script carried by a document.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from chunkwise import ids
from chunkwise.errors import ConfigError

KS = (1, 3, 5, 10)
METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr", "fits", "straddle_rate",
           "half_answer_rate", "token_recall", "token_precision", "token_iou", "index_inflation",
           "chunks", "mean_chunk_size", "max_chunk_size", "boundary_coherence", "duplicate_span_rate",
           "context_tokens", "latency_ms_p50", "index_bytes")
INTS = {"chunks", "max_chunk_size", "index_bytes"}
DASH = "\u2013"
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7F3C8D", "#444444")
SEVERITY = {"error": 0, "skipped": 1, "warning": 2, "warn": 2, "ok": 3}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: object) -> float | None:
    """A metric as a float, or None when missing; a non-number is the runner's bug, so it fails."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"metric value {value!r} is not a number: pass floats/ints, or omit the metric")
    return None if math.isnan(value) else float(value)


def fmt_metric(name: str, value: object) -> str:
    """How a metric reads in a table: rates to 3 places, counts grouped, bytes in binary units."""
    v = _num(value)
    if v is None:
        return DASH
    if name == "index_bytes":
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(v) < 1024 or unit == "GiB":
                return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
            v /= 1024
    if name in INTS:
        return f"{v:,.0f}"
    if name in ("mean_chunk_size", "context_tokens", "latency_ms_p50"):
        return f"{v:,.1f}"
    return f"{v:.3f}"


# ----------------------------------------------------------------------------------------- plots
@dataclass(frozen=True)
class Scale:
    """Linear map from a data interval onto a pixel interval (pixel y grows downwards: pass r0 > r1)."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, v: float) -> float:
        return self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k) covering [lo, hi]; the axis domain is their span."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ConfigError(f"cannot draw an axis over [{lo}, {hi}]: metrics must be finite numbers")
    if hi - lo <= 1e-9 * max(1.0, abs(lo), abs(hi)):  # one value (or float dust): pad around it
        pad = abs(lo) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9) * step
    count = math.ceil((hi - first) / step - 1e-9)
    places = max(0, -math.floor(math.log10(step))) + 3  # clean values, not 0.30000000000000004
    return [round(first + i * step, places) for i in range(count + 1)]


def _tick_label(v: float, ticks: list[float]) -> str:
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    places = max(0, -math.floor(math.log10(step)))
    places += round(step, places) != round(step, 12)  # 0.25 needs one more place than 0.2
    return f"{v:,.{places}f}"


W, H, ML, MR, MT, MB = 372, 290, 52, 14, 14, 44


def _frame(xt: list[float], yt: list[float], xlabel: str, ylabel: str) -> tuple[list[str], Scale, Scale]:
    sx, sy = Scale(xt[0], xt[-1], ML, W - MR), Scale(yt[0], yt[-1], H - MB, MT)
    out = [f'<rect class="plotbg" x="{ML}" y="{MT}" width="{W - ML - MR}" height="{H - MT - MB}"/>']
    for t in xt:
        x = sx(t)
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{MT}" x2="{x:.1f}" y2="{H - MB}"/><text class="tick" '
                   f'x="{x:.1f}" y="{H - MB + 15}" text-anchor="middle">{_tick_label(t, xt)}</text>')
    for t in yt:
        y = sy(t)
        out.append(f'<line class="grid" x1="{ML}" y1="{y:.1f}" x2="{W - MR}" y2="{y:.1f}"/>'
                   f'<text class="tick" x="{ML - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick_label(t, yt)}</text>')
    out.append(f'<text class="axis" x="{(ML + W - MR) / 2}" y="{H - 8}" text-anchor="middle">{_e(xlabel)}</text>'
               f'<text class="axis" transform="translate(14 {(MT + H - MB) / 2}) rotate(-90)" '
               f'text-anchor="middle">{_e(ylabel)}</text>')
    return out, sx, sy


def _labels(points: list[tuple[float, float, str, bool]], dots: list[tuple[float, float]]) -> list[str]:
    """Greedy placement of point labels: right, left, above, below; a label that fits nowhere is
    dropped (the point keeps its tooltip) rather than drawn over another label or a dot."""
    taken = [(x - 4, y - 4, x + 4, y + 4) for x, y in dots]
    out = []
    for x, y, text, strong in sorted(points, key=lambda p: (p[1], p[0])):
        w, h = 6.2 * len(text) + 2, 12
        places = ((x + 7, y + 4, "start"), (x - 7, y + 4, "end"), (x, y - 8, "middle"), (x, y + 16, "middle"))
        for ax, ay, anchor in places:
            x0 = ax if anchor == "start" else ax - w if anchor == "end" else ax - w / 2
            box = (x0, ay - h + 2, x0 + w, ay + 2)
            inside = box[0] >= ML and box[2] <= W - MR and box[1] >= MT and box[3] <= H - MB
            clash = any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken)
            if inside and not clash:
                taken.append(box)
                cls = "lbl strong" if strong else "lbl"
                out.append(f'<text class="{cls}" x="{ax:.1f}" y="{ay:.1f}" text-anchor="{anchor}">{_e(text)}</text>')
                break
    return out


def _svg(pid: str, title: str, body: list[str], legend: Sequence[tuple[str, str]] = (), note: str = "") -> str:
    items = "".join(f'<span><i style="background:{c}"></i>{_e(t)}</span>' for c, t in legend)
    return (f'<figure class="plot" id="{pid}"><figcaption>{_e(title)}</figcaption>'
            f'<svg viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{_e(title)}">'
            + "".join(body) + f'</svg><div class="legend">{items}</div>'
            + (f'<p class="note">{_e(note)}</p>' if note else "") + "</figure>")


def _empty_plot(pid: str, title: str, why: str) -> str:
    return _svg(pid, title, [f'<text class="axis" x="{W / 2}" y="{H / 2}" text-anchor="middle">'
                             f"no data: {_e(why)}</text>"])


def _dot(x: float, y: float, color: str, tip: str, pareto: bool) -> str:
    ring = " pareto" if pareto else ""
    return (f'<circle class="mark{ring}" cx="{x:.1f}" cy="{y:.1f}" r="{5 if pareto else 4}" fill="{color}">'
            f"<title>{_e(tip)}</title></circle>")


def _metric(c: dict, name: str) -> float | None:
    return _num(c.get("metrics", {}).get(name))


def _skipped(configs: list[dict], names: tuple[str, ...]) -> str:
    n = sum(1 for c in configs if any(_metric(c, m) is None for m in names))
    return f"{n} config(s) without {' / '.join(names)} not drawn" if n else ""


def plot_recall_inflation(configs: list[dict], pareto: set[str]) -> str:
    """recall@k (one colour per k) against index inflation; one stalk per config joins its k's."""
    title = "recall@k vs index inflation"
    pts = [(c, _metric(c, "index_inflation"), [(k, _metric(c, f"recall@{k}")) for k in KS]) for c in configs]
    pts = [(c, x, [(k, r) for k, r in rs if r is not None]) for c, x, rs in pts if x is not None]
    pts = [p for p in pts if p[2]]
    if not pts:
        return _empty_plot("plot-recall", title, "no config has index_inflation and a recall@k")
    xs = [x for _, x, _ in pts]
    body, sx, sy = _frame(nice_ticks(min(xs), max(xs)), nice_ticks(0.0, 1.0),
                          "index inflation (stored / source tokens)", "recall@k")
    labels = []
    for c, x, rs in pts:
        ys = [r for _, r in rs]
        body.append(f'<line class="stalk" x1="{sx(x):.1f}" y1="{sy(min(ys)):.1f}" '
                    f'x2="{sx(x):.1f}" y2="{sy(max(ys)):.1f}"/>')
        for k, r in rs:
            tip = f"{c['name']}: recall@{k} {r:.3f}, inflation {x:.3f}"
            body.append(_dot(sx(x), sy(r), PALETTE[KS.index(k)], tip, c["name"] in pareto))
        labels.append((sx(x), sy(max(ys)), c["name"], c["name"] in pareto))
    body += _labels(labels, [(sx(x), sy(r)) for _, x, rs in pts for _, r in rs])
    legend = [(PALETTE[i], f"recall@{k}") for i, k in enumerate(KS)]
    return _svg("plot-recall", title, body, legend, _skipped(configs, ("index_inflation",)))


def _series_key(c: dict, vary: list[str]) -> str:
    return " ".join(f"{c.get(f)}" if f != "size" else f"size {c.get(f)}" for f in vary) or "all configs"


def plot_straddle_overlap(configs: list[dict], pareto: set[str]) -> str:
    """Straddle rate against overlap, one line per everything-but-overlap (strategy, size, header, mode)."""
    title = "straddle rate by overlap"
    pts = [(c, c.get("overlap"), _metric(c, "straddle_rate")) for c in configs]
    pts = [p for p in pts if isinstance(p[1], (int, float)) and p[2] is not None]
    if not pts:
        return _empty_plot("plot-straddle", title, "no config has an overlap and a straddle_rate")
    vary = [f for f in ("strategy", "size", "header", "mode") if len({str(c.get(f)) for c, _, _ in pts}) > 1]
    series: dict[str, list] = defaultdict(list)
    for p in pts:
        series[_series_key(p[0], vary)].append(p)
    xs, ys = [float(o) for _, o, _ in pts], [r for _, _, r in pts]
    body, sx, sy = _frame(nice_ticks(min(xs), max(xs)), nice_ticks(0.0, max(max(ys), 0.05)),
                          "overlap (units)", "straddle rate")
    legend = []
    for i, (key, ps) in enumerate(sorted(series.items())):
        color = PALETTE[i % len(PALETTE)]
        ps.sort(key=lambda p: p[1])
        if len(ps) > 1:
            d = " ".join(f"{'M' if j == 0 else 'L'}{sx(o):.1f},{sy(r):.1f}" for j, (_, o, r) in enumerate(ps))
            body.append(f'<path class="mark line" d="{d}" stroke="{color}"/>')
        body += [_dot(sx(o), sy(r), color, f"{c['name']}: overlap {o}, straddle rate {r:.3f}", c["name"] in pareto)
                 for c, o, r in ps]
        legend.append((color, key))
    return _svg("plot-straddle", title, body, legend, _skipped(configs, ("straddle_rate",)))


def plot_context_recall(configs: list[dict], pareto: set[str]) -> str:
    """Recall against the context tokens it costs, coloured by strategy: the price of each point."""
    k = next((k for k in (5, 10, 3, 1) if any(_metric(c, f"recall@{k}") is not None for c in configs)), 5)
    title = f"context tokens vs recall@{k}"
    pts = [(c, _metric(c, "context_tokens"), _metric(c, f"recall@{k}")) for c in configs]
    pts = [p for p in pts if p[1] is not None and p[2] is not None]
    if not pts:
        return _empty_plot("plot-context", title, f"no config has context_tokens and recall@{k}")
    strategies = sorted({str(c.get("strategy")) for c, _, _ in pts})
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(strategies)}
    xs = [x for _, x, _ in pts]
    body, sx, sy = _frame(nice_ticks(min(xs), max(xs)), nice_ticks(0.0, 1.0),
                          "context tokens per question", f"recall@{k}")
    for c, x, r in pts:
        tip = f"{c['name']}: {x:.0f} context tokens, recall@{k} {r:.3f}"
        body.append(_dot(sx(x), sy(r), colors[str(c.get("strategy"))], tip, c["name"] in pareto))
    dots = [(sx(x), sy(r)) for _, x, r in pts]
    body += _labels([(sx(x), sy(r), c["name"], c["name"] in pareto) for c, x, r in pts], dots)
    legend = [(color, s) for s, color in colors.items()]
    return _svg("plot-context", title, body, legend, _skipped(configs, ("context_tokens", f"recall@{k}")))


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


# ------------------------------------------------------------------------------- viewer
def _check_range(what: str, item: dict, n: int) -> tuple[int, int]:
    s, e = item.get("start"), item.get("end")
    if not (isinstance(s, int) and isinstance(e, int) and 0 <= s <= e <= n):
        raise ConfigError(f"{what} has offsets [{s}, {e}) outside its document (0..{n}): "
                          "pass character offsets into the document's 'text'")
    return s, e


def render_document(doc: dict, i: int) -> str:
    """One document with chunk bands (alternating; overlap regions their own colour), start/end
    markers for every chunk, golden spans underlined and straddled ones marked. The text is cut at
    every boundary once, so the segments joined give back the text exactly."""
    text, name = doc.get("text", ""), doc.get("doc", "?")
    chunks = sorted(_check_range(f"chunk {c.get('chunk_id')!r} of {name!r}", c, len(text)) + (c.get("chunk_id", ""),)
                    for c in doc.get("chunks", []))
    spans = [_check_range(f"span of {s.get('qid')!r} in {name!r}", s, len(text))
             + (str(s.get("qid", "")), bool(s.get("straddled"))) for s in doc.get("spans", [])]
    opens, closes, zero = defaultdict(list), defaultdict(list), defaultdict(list)
    for kind, items in (("c", chunks), ("s", spans)):
        for j, item in enumerate(items):
            (zero if item[0] == item[1] else opens)[item[0]].append((kind, j))
            if item[0] != item[1]:
                closes[item[1]].append((kind, j))
    cuts = sorted({0, len(text), *opens, *closes, *zero})
    live: dict[str, set[int]] = {"c": set(), "s": set()}
    out, seen = [], set()

    def marker(kind: str, j: int, start: bool) -> str:
        if kind == "c":
            s, e, cid = chunks[j]
            tip = _e(f"chunk {j + 1} {'starts' if start else 'ends'} at {s if start else e} \u00b7 {cid}")
            return f'<span class="{"cs" if start else "ce"}" data-n="{j + 1}" title="{tip}"></span>'
        if not start:
            return ""
        s, e, qid, straddled = spans[j]
        anchor = "" if qid in seen else f' id="a{i}-{_e(qid)}"'
        seen.add(qid)
        cls, label = ("qtag straddled", f"{qid} \u2702") if straddled else ("qtag", qid)
        return f'<span class="{cls}"{anchor} data-q="{_e(label)}" title="{_e(qid)}: answer [{s}, {e})"></span>'

    for p, nxt in zip(cuts, cuts[1:] + [None]):
        for kind, j in closes[p]:
            live[kind].discard(j)
            out.append(marker(kind, j, False))
        for kind, j in opens[p] + zero[p]:
            out.append(marker(kind, j, True))
            live[kind].add(j)
        for kind, j in zero[p]:
            live[kind].discard(j)
            out.append(marker(kind, j, False))
        if nxt is None or nxt == p:
            continue
        cs, ss = live["c"], live["s"]
        cls = ["seg", "gap" if not cs else "ov" if len(cs) > 1 else f"b{min(cs) % 2}"]
        attrs = ""
        if ss:
            cls += ["ans"] + (["straddled"] if any(spans[j][3] for j in ss) else [])
            attrs = f' data-qids="{_e(" ".join(sorted({spans[j][2] for j in ss})))}"'
        out.append(f'<span class="{" ".join(cls)}"{attrs}>{_e(text[p:nxt])}</span>')
    straddled = sum(1 for s in spans if s[3])
    return (f'<article class="doc" data-i="{i}"{" hidden" if i else ""}><h3>{_e(name)}</h3>'
            f'<p class="note">{len(chunks)} chunks \u00b7 {len(spans)} answer spans \u00b7 '
            f'<span class="{"bad" if straddled else ""}">{straddled} straddled</span></p>'
            f'<div class="text">{"".join(out)}</div></article>')


def _question(q: dict, doc_index: dict[str, int]) -> str:
    i = doc_index.get(q.get("doc"), -1)
    qid = str(q.get("qid", ""))
    ok = bool(q.get("answered"))
    if i >= 0:
        where = f'<a href="#a{i}-{_e(qid)}" data-doc="{i}" data-goto="a{i}-{_e(qid)}">show answer in text</a>'
    else:
        where = f'<span class="note">{_e(q.get("doc", "?"))} (document not in the viewer)</span>'
    hits = []
    for h in q.get("retrieved", []):
        badge = ('<span class="st ok">holds answer</span>' if h.get("holds_span")
                 else '<span class="st none">no answer</span>')
        hits.append(f'<li><div>#{_e(h.get("rank", "?"))} {badge} <code>{_e(h.get("doc", "?"))}</code> '
                    f'[{_e(h.get("start", "?"))}, {_e(h.get("end", "?"))})</div>'
                    f'<div class="hit">{_e(h.get("text", ""))}</div></li>')
    got = '<span class="st ok">answered</span>' if ok else '<span class="st error">missed</span>'
    return (f'<li class="q" data-doc="{i}"><div><b>{_e(qid)}</b> {got} {_e(q.get("question", ""))} {where}</div>'
            f'<details><summary>{len(hits)} retrieved passage(s)</summary>'
            f'<ol class="hits">{"".join(hits)}</ol></details></li>')


def _viewer(viewer: dict | None) -> str:
    if not viewer or not viewer.get("documents"):
        return '<p class="note">No documents to view in this run.</p>'
    docs = viewer["documents"]
    doc_index = {d.get("doc"): i for i, d in enumerate(docs)}
    options = []
    for i, d in enumerate(docs):
        n = sum(1 for s in d.get("spans", []) if s.get("straddled"))
        options.append(f'<option value="{i}">{_e(d.get("doc", "?"))}{f" ({n} straddled)" if n else ""}</option>')
    key = ('<div class="key"><span class="seg b0">chunk</span><span class="seg b1">next chunk</span>'
           '<span class="seg ov">overlap (in two chunks)</span><span class="seg gap">in no chunk</span>'
           '<span class="seg b0 ans">answer span</span>'
           '<span class="seg b0 ans straddled">straddled answer (cut by a boundary)</span></div>')
    documents = "".join(render_document(d, i) for i, d in enumerate(docs))
    questions = "".join(_question(q, doc_index) for q in viewer.get("questions", []))
    return (f'<p>Chunks of <b>{_e(viewer.get("config", "?"))}</b>. <label>Document '
            f'<select id="doc-select">{"".join(options)}</select></label></p>{key}{documents}'
            f'<h3>Questions</h3><ul class="questions">{questions}</ul>')


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
td.best,.best-key{background:#c9f0d2;font-weight:700;box-shadow:inset 0 0 0 1px #2e8b57} .star{color:#d08700}
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
                ("plots", "Plots", f'<div class="plots">{plots}</div><p class="note">Ringed points are on the '
                                   f'Pareto front; hover a point for its config and values.</p>'),
                ("viewer", "Chunk boundaries", _viewer(data.get("viewer")))]
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
