"""The HTML report as text: escaping, order, tables, plots and the boundary viewer, checked by parsing
the page (selectolax) against the data it was rendered from."""
import hashlib
import math
import random
import re
from base64 import b64encode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from chunkwise.errors import ConfigError
from chunkwise.evaluate.report import render_report, write_report
from chunkwise.evaluate.report_format import DASH, METRICS, fmt_metric
from chunkwise.evaluate.report_plots import nice_ticks
from chunkwise.evaluate.report_viewer import render_document
from chunkwise.evaluate.stats import paired
from chunkwise.extract.audit import AuditRow, audit_failure

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2;alert(1)">'

RUNBOOK = f"""# Database failover runbook

## When to fail over
Fail over only when the primary has been unreachable for five minutes and replication lag on the
standby is under thirty seconds. The incident commander makes the call; the on-call DBA executes it.

## Steps
1. Freeze writes by setting the maintenance flag in the admin console.
2. Promote the standby with `pg_ctl promote` and wait for it to accept connections.
3. Point the connection pooler at the new primary and reload it.
4. Unfreeze writes and watch the error rate for ten minutes.

## Afterwards
Rebuild the old primary as a standby from a fresh base backup. Never reuse its data directory: it may
hold writes the new primary never saw. A hostile snippet copied from a ticket: {HOSTILE}
File the post-incident review within two working days.
"""

NOTES = """# Release notes 4.2

The export job now streams rows instead of buffering them, so memory stays flat at about 80 MB for
any table size. Retries use exponential backoff starting at 200 ms and capped at 30 seconds.
Deprecated: the `--legacy-csv` flag is removed in 4.3; use `--format csv` instead.
"""

ANSWERS = {
    "q1": ("runbook.md", "Who decides to fail over?", "The incident commander makes the call"),
    "q2": ("runbook.md", f"How do I promote the standby? {HOSTILE}", "Promote the standby with `pg_ctl promote`"),
    "q3": ("runbook.md", "Can the old data directory be reused?",
           "Never reuse its data directory: it may\nhold writes the new primary never saw"),
    "q4": ("notes.md", "Where do retries start?", "exponential backoff starting at 200 ms"),
    "q5": ("notes.md", "What replaces --legacy-csv?", "use `--format csv` instead"),
}


def windows(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    out, s = [], 0
    while True:
        out.append((s, min(s + size, n)))
        if s + size >= n:
            return out
        s += size - overlap


def viewer_doc(name: str, text: str, size: int, overlap: int) -> dict:
    chunks = [{"chunk_id": f"{name}-{i:02d}", "start": s, "end": e} for i, (s, e) in enumerate(windows(len(text), size, overlap))]
    spans = []
    for qid, (doc, _, answer) in ANSWERS.items():
        if doc == name:
            s = text.index(answer)
            e = s + len(answer)
            spans.append({"qid": qid, "start": s, "end": e,
                          "straddled": not any(c["start"] <= s and e <= c["end"] for c in chunks)})
    return {"doc": name, "text": text, "chunks": chunks, "spans": spans}


def sample_data(size: int = 180, overlap: int = 20) -> dict:
    """A realistic evaluation result: a grid of configs, an audit, a viewer whose spans are located in
    the text and marked straddled exactly when no chunk holds them whole."""
    configs = []
    for strategy, sizes in (("fixed", (128, 256)), ("recursive", (256,))):
        for s in sizes:
            for o in (0, 16, 32, 64):
                straddle = max(0.0, 30 / s - o / (2 * s))
                r1 = 0.42 + s / 2000 - straddle / 3 + (0.04 if strategy == "recursive" else 0)
                configs.append({"name": f"{strategy}-{s}-o{o}", "strategy": strategy, "size": s, "overlap": o,
                                "header": "path", "mode": "dense", "metrics": {
                                    **{f"recall@{k}": min(1.0, r1 + 0.09 * math.log(k)) for k in (1, 3, 5, 10)},
                                    "mrr": r1 + 0.05, "fits": 1 - straddle, "straddle_rate": straddle,
                                    "half_answer_rate": straddle / 2, "token_recall": 0.8, "token_precision": 0.2,
                                    "token_iou": 0.18, "index_inflation": s / (s - o), "chunks": int(900 * s / (s - o) / s * 10),
                                    "mean_chunk_size": s * 0.93, "max_chunk_size": s, "boundary_coherence": 0.7,
                                    "duplicate_span_rate": o / s, "context_tokens": 5 * s * 0.93,
                                    "latency_ms_p50": 3.2 + s / 100, "index_bytes": 1_500_000 * s // (s - o)}})
    configs[-1]["name"] = f"recursive-256 {HOSTILE}"
    del configs[2]["metrics"]["context_tokens"]
    configs[3]["metrics"]["index_bytes"] = None
    docs = [viewer_doc("runbook.md", RUNBOOK, size, overlap), viewer_doc("notes.md", NOTES, size, overlap)]
    questions = []
    for qid, (doc, q, answer) in ANSWERS.items():
        d = next(x for x in docs if x["doc"] == doc)
        span = next(s for s in d["spans"] if s["qid"] == qid)
        hits = sorted(d["chunks"], key=lambda c: abs(c["start"] - span["start"]))[:3]
        questions.append({"qid": qid, "question": q, "doc": doc, "answered": not span["straddled"], "retrieved": [
            {"rank": r + 1, "doc": doc, "start": c["start"], "end": c["end"], "text": d["text"][c["start"]:c["end"]],
             "holds_span": c["start"] <= span["start"] and span["end"] <= c["end"]} for r, c in enumerate(hits)]})
    questions.append({"qid": "q9", "question": "Elsewhere?", "doc": "other.md", "answered": False, "retrieved": []})
    audit = [AuditRow(source="runbook.md", status="ok", format="markdown", chars=len(RUNBOOK), language="en").to_dict(),
             {"source": "scan.pdf", "status": "warning", "pages": 12, "empty_pages": 12, "chars_per_page": 0.0,
              "cid_garbage": 0, "language": "", "needs_ocr": True, "notes": ["no page has a text layer", HOSTILE]},
             audit_failure("locked.pdf", "encrypted: a user password is required").to_dict(),
             {"source": "fonts.pdf", "status": "warn", "pages": 3, "empty_pages": 0, "chars_per_page": 1800.0,
              "cid_artifacts": 412, "language": "en", "needs_ocr": False, "warnings": ["412 '(cid:' glyph artifacts"]}]
    best = {"recall@5": configs[7]["name"], "straddle_rate": configs[3]["name"], "index_inflation": configs[0]["name"],
            "latency_ms_p50": configs[0]["name"]}
    chosen = configs[7]
    chosen["se"] = {"recall@1": 0.061, "recall@5": 0.044, "token_iou": 0.002, "context_tokens": 4.1}
    rng = random.Random(0)
    ref = [float(rng.random() < 0.8) for _ in range(40)]
    rows = []
    for c in (configs[0], configs[-1]):  # a plain name and the hostile one
        other = [x if rng.random() < 0.8 else 1 - x for x in ref]
        rows.append(paired("hit@5", chosen["name"], ref, c["name"], other).to_dict())
        rows.append(paired("tokens", chosen["name"], [900.0] * 40, c["name"], [900.0 + 40 * x for x in other]).to_dict())
    comparisons = {"reference": chosen["name"], "metrics": ["hit@5", "tokens"], "resamples": 2000, "seed": 0,
                   "level": 0.95, "rows": rows}
    return {"title": f"chunkwise eval {HOSTILE}", "generated_at": "2025-01-01T00:00:00Z",
            "command": "chunkwise eval --golden golden.jsonl --docs docs/ --out report.html", "audit": audit,
            "configs": configs, "best": best, "pareto": [configs[0]["name"], configs[7]["name"], configs[3]["name"]],
            "chosen": chosen["name"], "comparisons": comparisons, "embedder": "hashing-384@1", "split": "test",
            "questions": 40, "viewer": {"config": configs[5]["name"], "documents": docs, "questions": questions}}


@pytest.fixture(scope="module")
def data():
    d = sample_data()
    flags = [s["straddled"] for doc in d["viewer"]["documents"] for s in doc["spans"]]
    assert any(flags) and not all(flags), "the sample needs both a straddled and an intact answer"
    return d


@pytest.fixture(scope="module")
def page(data):
    return HTMLParser(render_report(data))


def test_hostile_text_is_escaped_everywhere(data, page):
    html = render_report(data)
    assert "<script>window" not in html and "<img" not in html
    assert len(page.css("script")) == 1 and page.css("img") == []
    shown = page.body.text(separator="")
    # every place the payload was put shows it as text: title, config name, question, document, notes
    assert shown.count(HOSTILE) >= 5
    assert HOSTILE in page.css_first("title").text()


def test_script_is_the_only_one_the_policy_allows(page):
    csp = page.css_first('meta[http-equiv="Content-Security-Policy"]').attributes["content"]
    script = page.css_first("script").text()
    digest = b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp


def test_self_contained(page):
    for node in page.css("[src], [href], link"):
        assert node.tag != "link"
        for attr in ("src", "href"):
            value = node.attributes.get(attr)
            assert value is None or value.startswith("#"), f"{node.tag} {attr}={value} leaves the file"


def test_sections_in_reading_order(page):
    ids = [s.attributes["id"] for s in page.css("main > section")]
    assert ids == ["audit", "configs", "comparisons", "plots", "viewer"]
    assert "extraction" in page.css_first("#audit h2").text()


def test_comparisons_table_shows_every_paired_row_with_its_interval(data, page):
    comp = data["comparisons"]
    intro = page.css_first("#comparisons p").text()
    assert data["chosen"] in intro and "hashing-384@1" in intro and "40 test question(s)" in intro
    chosen = next(c for c in data["configs"] if c["name"] == data["chosen"])
    assert f"recall@5 {chosen['metrics']['recall@5']:.3f} \u00b1 0.044" in intro
    rows = page.css("table.comparisons tbody tr")
    assert len(rows) == len(comp["rows"])
    for tr, r in zip(rows, comp["rows"]):
        assert tr.attributes["data-config"] == r["b"] and tr.attributes["data-metric"] == r["metric"]
        cells = [td.text() for td in tr.css("td")]
        assert cells[0] == r["metric"]
        lo, hi = (float(v.replace(",", "")) for v in cells[5].strip("[]").split(", "))
        assert lo == pytest.approx(r["ci_low"], abs=0.06) and hi == pytest.approx(r["ci_high"], abs=0.06)
        assert float(cells[3].replace(",", "")) == pytest.approx(r["diff"], abs=0.06)
        assert ("sig" in tr.css("td")[5].attributes["class"].split()) == r["significant"]
    assert any(r["significant"] for r in comp["rows"]) and not all(r["significant"] for r in comp["rows"])


def test_config_table_marks_best_and_pareto(data, page):
    rows = {r.attributes["data-config"]: r for r in page.css("table.configs tbody tr")}
    assert list(rows) == [c["name"] for c in data["configs"]]
    best_cells = page.css("td.best")
    assert len(best_cells) == len(data["best"])
    for metric, name in data["best"].items():
        cell = rows[name].css_first(f'td[data-metric="{metric}"]')
        assert "best" in cell.attributes["class"].split()
        assert cell.text() == fmt_metric(metric, next(c for c in data["configs"] if c["name"] == name)["metrics"][metric])
    starred = {n for n, r in rows.items() if r.css_first(".star")}
    assert starred == set(data["pareto"])


def test_missing_metrics_show_a_dash(data, page):
    rows = {r.attributes["data-config"]: r for r in page.css("table.configs tbody tr")}
    for c in data["configs"]:
        for m in METRICS:
            cell = rows[c["name"]].css_first(f'td[data-metric="{m}"]').text()
            assert (cell == DASH) == (c["metrics"].get(m) is None)
    assert "1 config(s) without context_tokens" in page.css_first("#plot-context").text()


def test_fmt_metric():
    assert fmt_metric("index_bytes", 3 * 1024 * 1024) == "3.0 MiB"
    assert fmt_metric("chunks", 12345) == "12,345"
    assert fmt_metric("recall@5", 0.81234) == "0.812"
    assert fmt_metric("mrr", None) == DASH == fmt_metric("mrr", float("nan"))
    with pytest.raises(ConfigError, match="not a number"):
        fmt_metric("mrr", "0.5")


@given(st.floats(-1e6, 1e6), st.floats(0, 1e6), st.integers(2, 8))
def test_nice_ticks_cover_the_range_evenly(lo, width, n):
    hi = lo + width
    ticks = nice_ticks(lo, hi, n)
    dust = 1e-8 * max(1.0, width, abs(lo), abs(hi))
    assert ticks[0] <= lo + dust and ticks[-1] >= hi - dust
    steps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert steps and all(math.isclose(s, steps[0], rel_tol=1e-6, abs_tol=1e-9) and s > 0 for s in steps)
    assert len(ticks) <= 2 * n + 2


def _circles(page, pid):
    out = []
    for c in page.css(f"#{pid} circle.mark"):
        out.append((float(c.attributes["cx"]), float(c.attributes["cy"]), c.css_first("title").text()))
    return out


def test_recall_plot_places_every_point_by_its_values(data, page):
    points = _circles(page, "plot-recall")
    expected = [(c, k) for c in data["configs"] for k in (1, 3, 5, 10)]
    assert len(points) == len(expected)
    for (cx, cy, tip), (c, k) in zip(points, expected):
        assert tip.startswith(f"{c['name']}: recall@{k} ")
    by_x = sorted(zip(points, expected), key=lambda p: p[1][0]["metrics"]["index_inflation"])
    assert [p[0][0] for p in by_x] == sorted(p[0][0] for p in by_x)
    by_y = sorted(zip(points, expected), key=lambda p: p[1][0]["metrics"][f"recall@{p[1][1]}"])
    assert [p[0][1] for p in by_y] == sorted((p[0][1] for p in by_y), reverse=True)  # higher recall, higher up
    assert len(page.css("#plot-recall circle.pareto")) == 4 * len(data["pareto"])


def test_straddle_plot_draws_one_line_per_series(data, page):
    series = {(c["strategy"], c["size"]) for c in data["configs"]}
    assert len(page.css("#plot-straddle path.line")) == len(series)
    assert len(_circles(page, "plot-straddle")) == len(data["configs"])
    legend = [s.text() for s in page.css("#plot-straddle .legend span")]
    assert legend == sorted(f"{st_} size {sz}" for st_, sz in series)


def test_context_plot_skips_configs_without_context_tokens(data, page):
    drawn = [t.split(":")[0] for _, _, t in _circles(page, "plot-context")]
    assert drawn == [c["name"] for c in data["configs"] if "context_tokens" in c["metrics"]]


def test_empty_run_still_renders():
    page = HTMLParser(render_report({}))
    assert len(page.css("figure.plot")) == 3 and all("no data" in f.text() for f in page.css("figure.plot"))
    assert "No extraction audit" in page.css_first("#audit").text()


def test_audit_worst_first_and_real_audit_rows_accepted(data, page):
    statuses = [r.attributes["class"] for r in page.css("table.audit tbody tr")]
    assert statuses == ["error", "warning", "warning", "ok"]
    text = page.css_first("table.audit").text()
    assert "encrypted: a user password is required" in text and "412" in text and HOSTILE in text


@st.composite
def documents(draw):
    text = draw(st.text(alphabet="ab <&>\n\"'é", min_size=0, max_size=60))
    n = len(text)
    rng = st.integers(0, n)
    chunks = [sorted(draw(st.tuples(rng, rng))) for _ in range(draw(st.integers(0, 6)))]
    spans = [sorted(draw(st.tuples(rng, rng))) + [draw(st.booleans())] for _ in range(draw(st.integers(0, 4)))]
    return {"doc": "d.md", "text": text,
            "chunks": [{"chunk_id": f"c{i}", "start": s, "end": e} for i, (s, e) in enumerate(chunks)],
            "spans": [{"qid": f"q{i}", "start": s, "end": e, "straddled": b} for i, (s, e, b) in enumerate(spans)]}


@settings(max_examples=150, deadline=None)
@given(documents())
def test_viewer_segments_rebuild_the_text_and_show_coverage(doc):
    page = HTMLParser(render_document(doc, 0))
    segs = page.css(".seg")
    assert "".join(s.text(deep=True, separator="", strip=False) for s in segs) == doc["text"]
    assert len(page.css(".cs")) == len(page.css(".ce")) == len(doc["chunks"])
    assert len(page.css(".qtag")) == len(doc["spans"])
    pos = 0
    for s in segs:
        t = s.text(deep=True, separator="", strip=False)
        cls = set(s.attributes["class"].split())
        covering = [c for c in doc["chunks"] if c["start"] <= pos and pos + len(t) <= c["end"]]
        answers = [a for a in doc["spans"] if a["start"] <= pos and pos + len(t) <= a["end"]]
        assert ("gap" in cls) == (not covering) and ("ov" in cls) == (len(covering) > 1)
        assert ("ans" in cls) == bool(answers)
        assert ("straddled" in cls) == any(a["straddled"] for a in answers)
        pos += len(t)


def test_bad_input_fails_fast_with_a_fix(data, tmp_path):
    def broken(**change):
        return {**data, **change}

    with pytest.raises(ConfigError, match="not in 'configs'"):
        render_report(broken(best={"mrr": "no-such-config"}))
    with pytest.raises(ConfigError, match="not in 'configs'"):
        render_report(broken(pareto=["ghost"]))
    with pytest.raises(ConfigError, match="unique"):
        render_report(broken(configs=data["configs"] + data["configs"][:1]))
    doc = {**data["viewer"]["documents"][0], "spans": [{"qid": "q1", "start": 5, "end": 10**6, "straddled": False}]}
    with pytest.raises(ConfigError, match="outside its document"):
        render_report(broken(viewer={**data["viewer"], "documents": [doc]}))
    with pytest.raises(ConfigError, match="use one of ok, warning, error"):
        render_report(broken(audit=[{"source": "a", "status": "fine"}]))
    with pytest.raises(ConfigError, match="dict"):
        render_report([data])
    with pytest.raises(ConfigError, match="does not exist"):
        write_report(data, tmp_path / "missing" / "r.html")


def test_write_report_writes_what_render_returns(data, tmp_path):
    out = write_report(data, str(tmp_path / "report.html"))
    assert out == tmp_path / "report.html"
    assert out.read_text(encoding="utf-8") == render_report(data) == render_report(sample_data())
    assert re.search(r"<h1>chunkwise eval &lt;script&gt;", out.read_text(encoding="utf-8"))
