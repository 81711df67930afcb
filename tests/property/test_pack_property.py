"""The packer's own contract on generated text (hypothesis): pieces are trimmed slices inside the
range, never cross a region edge, stay within the character bound (less a region's repeat), are
within the unit budget when their size is exact, and lose no non-whitespace character; in window
mode (sentence windows) a piece holds at most W segments."""
from bisect import bisect_right

from conftest import sizer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Region, pack, word_cuts

TOKENS = ["alpha", "beta", "on-call", "1994–95", "대한민국의", "성장하였다", "東京都庁舎", "ロールバック", "😀",
          "y" * 120, "z" * 400, "x", "Straße", ".", "\n", "\n\n", "  "]


@st.composite
def cases(draw):
    words = draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=60))
    text = " ".join(words)
    n = len(text)
    edges = sorted(set(draw(st.lists(st.integers(0, n), max_size=6))))
    regions = []
    for a, b in zip(edges[::2], edges[1::2]):
        if a < b:
            regions.append(Region(a, b, draw(st.integers(0, 3)), draw(st.integers(0, 12))))
    unit = draw(st.sampled_from(["words", "tokens"]))
    budget = draw(st.integers(4, 40))
    return text, regions, unit, budget, draw(st.integers(0, budget // 2)), draw(st.integers(24, 200))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_pack_contract(case):
    text, regions, unit, budget, overlap, max_chars = case
    s = sizer(unit).for_text(text)
    cuts = [*word_cuts(text, 0, len(text)), *((m, Level.SENTENCE) for m in range(len(text)) if text[m] == ".")]
    pieces = pack(text, 0, len(text), cuts, s, budget, overlap=overlap, max_chars=max_chars, regions=regions)
    edges = sorted({x for r in regions for x in (r.start, r.end)})
    starts = {r.start: r for r in regions}
    for p in pieces:
        body = text[p.start:p.end]
        assert body and body == body.strip()
        assert not any(p.start < x < p.end for x in edges), (p, edges)
        k = bisect_right(edges, p.start) - 1
        reg = starts.get(edges[k]) if k >= 0 else None
        later = reg is not None and text[reg.start:p.start].strip() != ""
        limit = max(1, max_chars - (reg.repeat_chars if later else 0))
        assert p.end - p.start <= limit, (p, limit)
        if p.exact and s.exact:  # sizes add up: the piece's size is its measured size
            assert s.count(body) == p.size <= max(1, budget - (reg.repeat_units if later else 0)), p
    covered = bytearray(len(text))
    for p in pieces:
        covered[p.start:p.end] = b"\x01" * (p.end - p.start)
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(TOKENS), min_size=1, max_size=80), budget=st.integers(4, 40),
       data=st.data())
def test_sentence_windows(words, budget, data):
    """Window mode (sentence_window): every piece within the budget and the character bound, at
    most W whole segments per piece, a piece inside a segment never leaves it, windows advance, and
    nothing is lost."""
    text = " ".join(words)
    w = data.draw(st.integers(1, 5))
    k = data.draw(st.integers(0, w - 1))
    max_chars = data.draw(st.integers(24, 400))
    s = sizer(data.draw(st.sampled_from(["words", "tokens"]))).for_text(text)
    ends = sorted({m + 1 for m in range(len(text) - 1) if text[m] == "."})
    pieces = pack(text, 0, len(text), [(e, Level.SENTENCE) for e in ends], s, budget, max_chars=max_chars,
                  window=(w, k))
    bounds = [0, *ends, len(text)]
    prev = None
    for p in pieces:
        body = text[p.start:p.end]
        assert body and body == body.strip() and p.end - p.start <= max_chars
        if p.exact and s.exact:
            assert s.count(body) == p.size <= budget, p
        first = bisect_right(bounds, p.start) - 1
        inside = sum(1 for b in bounds if p.start < b < p.end)  # segment ends strictly inside the piece
        whole_start = text[bounds[first]:p.start].strip() == ""
        assert inside < w if whole_start else inside == 0, (p, bounds)
        if prev is not None:
            assert p.start > prev.start and p.end > prev.end, (prev, p)
        prev = p
    covered = bytearray(len(text))
    for p in pieces:
        covered[p.start:p.end] = b"\x01" * (p.end - p.start)
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
