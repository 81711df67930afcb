"""How report values read: HTML escaping of everything from data, metric formatting, the shared
constants (metric order, palette). Imported by every part of the report."""
from __future__ import annotations

import math
from html import escape

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


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def num(value: object) -> float | None:
    """A metric as a float, or None when missing; a non-number is the runner's bug, so it fails."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"metric value {value!r} is not a number: pass floats/ints, or omit the metric")
    return None if math.isnan(value) else float(value)


def fmt_metric(name: str, value: object) -> str:
    """How a metric reads in a table: rates to 3 places, counts grouped, bytes in binary units."""
    v = num(value)
    if v is None:
        return DASH
    if name == "index_bytes":
        for unit in ("B", "KiB", "MiB", "GiB"):
            if abs(v) < 1024 or unit == "GiB":
                return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
            v /= 1024
    if name in INTS:
        return f"{v:,.0f}"
    if name in ("mean_chunk_size", "context_tokens", "tokens", "latency_ms_p50"):
        return f"{v:,.1f}"
    return f"{v:.3f}"

