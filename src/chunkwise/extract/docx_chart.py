"""A chart embedded in a DOCX (DrawingML ``c:chartSpace``) as a caption and a table of its data.

Why: Word keeps the numbers behind a chart in the chart part's caches (series names, category
labels, values); drawn, they are only a picture, so a question about "the 2024 figure of series B"
finds nothing. The cached values are what Word shows, so they are read as they are (no workbook is
opened): one row per category, one column per series, headed by the series names; the caption is
the chart's title, else its kind ("Line chart"). Bounded: at most ``MAX_SERIES`` series and
``MAX_POINTS`` categories.
"""
from __future__ import annotations

C_NS = ("http://schemas.openxmlformats.org/drawingml/2006/chart", "http://purl.oclc.org/ooxml/drawingml/chart")
A_T = "{http://schemas.openxmlformats.org/drawingml/2006/main}t"
MAX_SERIES = 64
MAX_POINTS = 2000


def is_chart(tag: str) -> bool:
    """A ``c:chart`` reference inside a drawing (either namespace)."""
    return tag.endswith("}chart") and tag[1:].split("}", 1)[0] in C_NS


def _local(el) -> str:
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def _kids(el, name: str):
    return [c for c in el if _local(c) == name]


def _points(el) -> dict[int, str]:
    """idx -> value of the points cached under ``el`` (a c:cat, c:val or c:tx)."""
    out = {}
    for pt in el.iter():
        if _local(pt) != "pt":
            continue
        try:
            idx = int(pt.get("idx", ""))
        except ValueError:
            continue
        v = next((c.text or "" for c in pt if _local(c) == "v"), "")
        if 0 <= idx < MAX_POINTS:
            out[idx] = _number(v.strip())
    return out


def _number(v: str) -> str:
    """A cached float as Word shows it ("4.4000000000000004" -> "4.4")."""
    try:
        f = float(v)
    except ValueError:
        return v
    return f"{f:.15g}" if f == f and abs(f) != float("inf") else v


def read(root) -> tuple[str, list[list[str]]] | None:
    """(caption, rows with a header row) of a chart part's root, or None when it holds no data."""
    if root is None:
        return None
    chart = next((c for c in root.iter() if _local(c) == "chart"), None)
    plot = next((c for c in chart.iter() if _local(c) == "plotArea"), None) if chart is not None else None
    if plot is None:
        return None
    title = next((c for c in chart if _local(c) == "title"), None)
    caption = " ".join("".join(t.text or "" for t in title.iter(A_T)).split()) if title is not None else ""
    kinds = [_local(c) for c in plot if _local(c).endswith("Chart")]
    if not caption and kinds:
        kind = kinds[0][: -len("Chart")]
        caption = f"{kind[:1].upper()}{kind[1:]} chart".replace("3D", " 3D")
    series = [s for c in plot if _local(c).endswith("Chart") for s in _kids(c, "ser")][:MAX_SERIES]
    if not series:
        return None
    names, columns, cats = [], [], {}
    for i, s in enumerate(series):
        tx = _kids(s, "tx")
        names.append(" ".join(_points(tx[0]).values()) or (tx[0].findtext(".//{*}v") or "") if tx else f"Series {i + 1}")
        vals = next((c for c in s if _local(c) in ("val", "yVal")), None)
        columns.append(_points(vals) if vals is not None else {})
        cat = next((c for c in s if _local(c) in ("cat", "xVal")), None)
        for k, v in (_points(cat) if cat is not None else {}).items():
            cats.setdefault(k, v)
    idxs = sorted(set(cats).union(*columns))[:MAX_POINTS]
    rows = [[""] + names] + [[cats.get(k, str(k + 1))] + [col.get(k, "") for col in columns] for k in idxs]
    return caption, rows
