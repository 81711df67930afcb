"""The report's chunk-boundary viewer: each document with its chunks as bands, answer spans marked
(straddled ones loudly), and every question with the passages it was sent."""
from __future__ import annotations

from collections import defaultdict

from chunkwise.errors import ConfigError
from chunkwise.evaluate.report_format import esc as _e


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
    facts = []  # the per-question results of --json, when the runner gave them
    if "rank" in q:
        facts.append(f"complete at rank {_e(q['rank'])}" if q["rank"] is not None else "never complete")
    if "tokens" in q:
        facts.append(f"{_e(q['tokens'])} context tokens")
    if q.get("straddled"):
        facts.append('<span class="bad">straddled: no chunk holds it whole</span>')
    sep = " \u00b7 "
    detail = f' <span class="note qfacts">{sep.join(facts)}</span>' if facts else ""
    return (f'<li class="q" data-doc="{i}"><div><b>{_e(qid)}</b> {got} {_e(q.get("question", ""))} {where}'
            f'{detail}</div><details><summary>{len(hits)} retrieved passage(s)</summary>'
            f'<ol class="hits">{"".join(hits)}</ol></details></li>')


def viewer_section(viewer: dict | None) -> str:
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
