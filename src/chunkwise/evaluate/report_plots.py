"""The report's SVG plots (no plotting library: a few hundred bytes of SVG each): recall@k against
index inflation, straddle rate by overlap, context tokens against recall. Labels are placed so they
never cover each other or a point; every string from data is escaped."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from chunkwise.errors import ConfigError
from chunkwise.evaluate.report_format import KS, PALETTE
from chunkwise.evaluate.report_format import esc as _e
from chunkwise.evaluate.report_format import num as _num


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
