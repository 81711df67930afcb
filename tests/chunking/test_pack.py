"""The one packer: regions (packed each on their own, with a repeated prefix paid for), the
character bound, and the unit level under it."""
from conftest import sizer

from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Region, pack, word_cuts

WORDS = " ".join(f"w{i}" for i in range(60))


def test_regions_are_never_crossed_and_a_fitting_region_is_one_piece():
    s = sizer("words")
    a, b = WORDS.index("w10"), WORDS.index("w40")
    pieces = pack(WORDS, 0, len(WORDS), word_cuts(WORDS, 0, len(WORDS)), s, 8,
                  regions=[Region(a, WORDS.index("w13") - 1), Region(WORDS.index("w13"), b - 1)])
    assert all(not (p.start < a < p.end) and not (p.start < b < p.end) for p in pieces)
    assert any(WORDS[p.start:p.end] == "w10 w11 w12" for p in pieces)  # fits: one piece, level END
    assert [p.level for p in pieces if WORDS[p.start:p.end] == "w10 w11 w12"] == [Level.END]
    assert all(p.size <= 8 for p in pieces)


def test_later_pieces_of_a_region_pay_its_repeat():
    s = sizer("words")
    pieces = pack(WORDS, 0, len(WORDS), word_cuts(WORDS, 0, len(WORDS)), s, 10,
                  regions=[Region(0, len(WORDS), repeat_units=4, repeat_chars=0)])
    assert pieces[0].size == 10 and all(p.size <= 6 for p in pieces[1:])


def test_overlap_never_reaches_back_over_a_region_start():
    s = sizer("words")
    r = WORDS.index("w30")
    pieces = pack(WORDS, 0, len(WORDS), word_cuts(WORDS, 0, len(WORDS)), s, 8, overlap=3,
                  regions=[Region(0, r - 1), Region(r, len(WORDS))])
    assert any(p.start == r for p in pieces)
    assert not any(p.start < r < p.end for p in pieces)


def test_the_character_bound_cuts_a_single_long_unit_and_flags_it():
    s = sizer("tokens")
    text = "short words " + "q" * 1000 + " tail"  # MiniLM: any 101+ characters of q are one [UNK]
    pieces = pack(text, 0, len(text), [], s, 50, max_chars=200)
    assert all(p.end - p.start <= 200 for p in pieces)
    flagged = [p for p in pieces if p.reason == "char_split"]
    assert flagged and all(p.review for p in flagged)
    assert "".join(text[p.start:p.end] for p in pieces).replace(" ", "") == text.replace(" ", "")
