"""Which blocks of a page are its main content: trafilatura decides, chunkwise keeps the structure.

trafilatura (Apache-2.0, maintained, the reference on web main-content benchmarks) is good at
telling an article from page furniture but its output loses structure chunkwise needs: short lists
and tables vanish, code loses its language, and its text is not the text our offsets index. So it
is used as a *judge*: it reads the already-sanitised page (hidden elements removed first, so it never
sees an injection carrier), and each candidate block from our own walk is kept when trafilatura kept
its words. Blocks trafilatura dropped between two kept blocks — a list, a table, a code sample, a
teaser paragraph marked up as a heading — are kept too unless they look like furniture (link lists,
date lines, share bars), and so are long prose paragraphs just before its first kept block (a lead
paragraph it missed), the heading right before its first paragraph, a heading between two article
blocks of its own container, and the standfirst the page's own meta description names. The
thresholds were chosen on one half of trafilatura's evaluation pages and checked on the other
(``benchmarks/html_main_content.py`` prints both halves).
"""
from __future__ import annotations

import re

from chunkwise.extract.html_walk import Candidate

COVERED = 0.5  # a block is trafilatura's when this share of its word trigrams is in its output
LINKY = 0.5  # a block with this share of its text in links is a link list (navigation, related posts)
MAX_FURNITURE_CHARS = 80
DATE_WORDS = 4  # a line of a date and at most this many other words is a dateline
CHROME_MIN_CHARS = 40  # text in nav/aside/footer the judge kept must be at least this long
PROSE_CHARS = 120  # a paragraph this long with few links is prose, even where the judge dropped it
HEADING_PROSE_CHARS = 80  # a "heading" this long inside the article is a teaser or lead, not a title
LEAD_CHARS = 160  # prose this long just before the judge's first block is the article's lead
LEAD_REACH = 10  # how many blocks before the judge's first one are looked at (page chrome stops it)
# A dropped block is rescued only with at least this much of the judge's text after it: past the
# article's end the judge keeps only scraps (a copyright line, one comment), and what lies between
# them is comments, author boxes, sign-up texts (half A: 48 boilerplate strings against 7 of article)
TAIL_CHARS = 50
# A paragraph or heading at least this long that the page's own summary (<meta name=description>,
# og:/twitter:description) holds, or that holds it, is the article's standfirst, wherever the judge
# put it (half A: 50 keeps 5 article strings for 1 of boilerplate; 40 adds a blog's tagline)
SUMMARY_CHARS = 50
# The article's first paragraph is the judge's first block of at least this many characters outside
# page chrome: a one-word menu item ("Investment") that happens to occur in the article is also
# "kept", so the judge's very first block can be page furniture far above the title (half A: 50-150
# all keep the same 2 article strings for 1 of boilerplate)
ANCHOR_CHARS = 100

_WORD = re.compile(r"\w+")
# zero-width characters a page may put inside words (a CMS's break hints, joiners, a stray BOM): trafilatura
# drops them from its text, so the words are compared without them (the block's own text keeps them)
_ZERO_WIDTH = str.maketrans("", "", "\u200b\u200c\u200d\u2060\ufeff")
# a link that is an address the article gives (write to, download from), not a teaser or a menu item
_ADDRESS = re.compile(r"(?:mailto:)?[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://|www\.)\S+", re.I)
_MONTHS = (r"jan|feb|mär|mar|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz]|janvier|février|mars|avril|juin"
           r"|juillet|août|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio"
           r"|agosto|septiembre|octubre|noviembre|diciembre|stycz|lut|mar|kwie|maj|czerw|lip|sierp|wrze|paźdz"
           r"|listop|grud")
_DATE = re.compile(r"\b\d{1,2}\s*[./-]\s*\d{1,2}\s*[./-]\s*\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b"
                   rf"|\b\d{{1,2}}\.?\s+(?:{_MONTHS})\w*\.?(?:\s+\d{{4}})?|\b(?:{_MONTHS})\w*\.?\s+\d{{1,2}},?\s+\d{{4}}",
                   re.I)
_FURNITURE = re.compile(
    r"^(?:impressum|imprint|datenschutz(?:erklärung)?|privacy(?: policy)?|kontakt|contact(?: us)?|cookies?"
    r"|agb|terms(?: of (?:use|service))?|disclaimer|sitemap|newsletter|login|log in|sign in|sign up|register"
    r"|share(?: this| on \w+)?|teilen|tweet|facebook|twitter|whatsapp|pinterest|linkedin|e-?mail|print|drucken"
    r"|top|nach oben|back to top|zurück|weiter|more|mehr|read more|weiterlesen|advertisement|anzeige|werbung"
    r"|comments?|kommentare?|\d+ (?:comments?|kommentare?))\W*$", re.I)


def main_text(sanitised_html: str) -> str:
    """trafilatura's plain-text main content of a page ("" when it finds none)."""
    import trafilatura  # the html extra; imported on first use

    # its balanced default: favor_recall kept more boilerplate and less article text as a judge
    text = trafilatura.extract(sanitised_html, include_comments=False, include_tables=True,
                               include_formatting=False, include_links=False, include_images=False,
                               deduplicate=False)
    return text or ""


def furniture(c: Candidate, judged: bool) -> bool:
    """Page furniture by shape: a date line, a lone "Impressum" or "Share"; and, among blocks the
    judge did not keep, link lists."""
    if c.kind in ("code", "table"):
        return False
    text = c.body
    if c.links >= LINKY and not judged:
        return True
    if len(text) > MAX_FURNITURE_CHARS:
        return False
    if _FURNITURE.match(text.strip()):
        return True
    dates = _DATE.findall(text)
    return bool(dates) and len(_WORD.findall(_DATE.sub(" ", text))) <= DATE_WORDS


def select(cands: list[Candidate], main: str, summaries: tuple[str, ...] = ()) -> list[Candidate]:
    """The candidates that are main content according to ``main`` (trafilatura's text) and the
    page's own ``summaries`` of itself (its meta descriptions)."""
    words = _WORD.findall(main.lower())
    grams = {tuple(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    return choose(cands, [_covered(c, grams) for c in cands], summaries)


def choose(cands: list[Candidate], kept: list[bool], summaries: tuple[str, ...] = ()) -> list[Candidate]:
    """The main content, given which candidates the judge kept (``kept[i]``)."""
    hits = [i for i, k in enumerate(kept) if k]
    if not hits:
        return []
    first, last = hits[0], hits[-1]
    anchor = next((i for i in hits if len(cands[i].plain) >= ANCHOR_CHARS and not cands[i].chrome), first)
    lead = (_lead(cands, first) | _title(cands, first) | _title(cands, anchor) | _opening(cands, anchor)
            | _standfirst(cands, last, summaries))
    after = _judged_after(cands, kept)
    out = []
    for i, c in enumerate(cands):
        if kept[i]:
            if not furniture(c, True) and not (c.chrome and _slight(c)) and not _link_line(c):
                out.append(c)
        elif i in lead or (first < i < last and after[i] >= TAIL_CHARS and _structure(c)
                           and not furniture(c, False)):
            out.append(c)  # article text that trafilatura dropped
    return _with_siblings(cands, out, after)


def _with_siblings(cands: list[Candidate], chosen: list[Candidate], after: list[int]) -> list[Candidate]:
    """``chosen`` and each heading between two chosen blocks of its own container: a section heading
    or a sub-heading ("Filling:" between two ingredient tables) inside the article's own run of
    blocks heads part of the article, however short; the judge drops it (it keeps few headings).
    Same container on both sides keeps out teasers set in boxes of their own; headings only keep out
    captions and credit lines. Half A: +1 article string / +1 boilerplate (32 headings added in
    502 pages, by eye 28 section headings of the article); any block, same container: +1 / +3;
    any heading between two chosen blocks, whatever the container: +1 / +7."""
    ids = {id(c) for c in chosen}
    add = {
        i for i in range(1, len(cands) - 1)
        if cands[i].kind == "heading" and not cands[i].chrome and id(cands[i]) not in ids
        and id(cands[i - 1]) in ids and id(cands[i + 1]) in ids
        and cands[i - 1].box == cands[i].box == cands[i + 1].box
        and after[i] >= TAIL_CHARS and not furniture(cands[i], False) and cands[i].links < LINKY
    }
    if not add:
        return chosen
    ids |= {id(cands[i]) for i in add}
    return [c for c in cands if id(c) in ids]


def _judged_after(cands: list[Candidate], kept: list[bool]) -> list[int]:
    """Per block, the characters of the judge's blocks after it."""
    out, total = [0] * len(cands), 0
    for i in range(len(cands) - 1, -1, -1):
        out[i] = total
        total += len(cands[i].plain) if kept[i] else 0
    return out


def _lead(cands: list[Candidate], first: int) -> set[int]:
    """Long prose paragraphs among the few blocks before the judge's first, up to page chrome."""
    out = set()
    for i in range(first - 1, max(-1, first - 1 - LEAD_REACH), -1):
        c = cands[i]
        if c.chrome:
            break
        if c.kind == "paragraph" and len(c.body) >= LEAD_CHARS and c.links < 0.2:
            out.add(i)
    return out


def _standfirst(cands: list[Candidate], last: int, summaries: tuple[str, ...]) -> set[int]:
    """Paragraphs, headings and list items up to the judge's last block that the page's summary holds (or that
    hold it): the standfirst under the title, which the judge often leaves out (it sits in the page
    header, or is short). A site-wide summary (a blog's tagline) is mostly shorter than
    ``SUMMARY_CHARS``."""
    wanted = [f" {w} " for s in summaries if len(s) >= SUMMARY_CHARS and (w := _words(s))]
    if not wanted:
        return set()
    out = set()
    for i, c in enumerate(cands[: last + 1]):
        if c.kind in ("paragraph", "heading", "list_item") and len(c.body) >= SUMMARY_CHARS:
            own = f" {_words(c.plain)} "
            if any(own in w or w in own for w in wanted) and not furniture(c, False):
                out.add(i)
    return out


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _title(cands: list[Candidate], first: int) -> set[int]:
    """The page's ``<h1>`` among the few blocks before the judge's first one: trafilatura takes the
    title out of its text (into its metadata), so the article's own heading would be lost."""
    for i in range(first - 1, max(-1, first - 1 - LEAD_REACH), -1):
        c = cands[i]
        if c.chrome:
            break
        if c.kind == "heading" and c.level == 1 and c.links < LINKY and not furniture(c, False):
            return {i}
    return set()


def _opening(cands: list[Candidate], anchor: int) -> set[int]:
    """The heading right before the article's first paragraph: its title, subtitle or first section
    heading, which the judge drops as too short (it keeps headings only inside its text)."""
    if anchor < 1:
        return set()
    c = cands[anchor - 1]
    ok = c.kind == "heading" and not c.chrome and c.links < LINKY and not furniture(c, False)
    return {anchor - 1} if ok else set()


def _link_line(c: Candidate) -> bool:
    """A short paragraph that is mostly a link: a teaser, "next article", a category line; not an
    address the article gives (an e-mail address, a URL), which the judge keeps as its text."""
    return (c.kind == "paragraph" and c.links >= LINKY and len(c.body) < MAX_FURNITURE_CHARS
            and not _ADDRESS.fullmatch(c.body.strip()))


def _slight(c: Candidate) -> bool:
    """Too short or too linky to be article text found in page chrome (menus, breadcrumbs)."""
    return c.links >= LINKY or (c.kind != "heading" and len(c.plain) < CHROME_MIN_CHARS)


def _structure(c: Candidate) -> bool:
    """Lists, tables, code and real prose (also in heading tags) inside the article survive the
    judge's size cut-offs."""
    if c.kind in ("list_item", "table", "code"):
        return True
    if c.kind == "heading":
        return len(c.body) >= HEADING_PROSE_CHARS and not c.chrome
    # prose in page chrome the judge dropped is an aside, a teaser or a sign-up text (half A: 1 article
    # string against 17 of boilerplate)
    return c.kind == "paragraph" and len(c.body) >= PROSE_CHARS and c.links < 0.2 and not c.chrome


def _covered(c: Candidate, grams: set) -> bool:
    """Whether the judge kept this block: most of its word trigrams (a short block: all its words,
    in order) occur in the judge's text. Sets of n-grams keep this linear in the page size."""
    words = _WORD.findall(c.plain.translate(_ZERO_WIDTH).lower())
    if not words:
        return False
    if len(words) < 3:
        return tuple(words) in grams
    own = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return sum(g in grams for g in own) >= COVERED * len(own)
