"""What every strategy shares: the Chunker protocol, drafts, contextual headers, and the final
measure-and-repair step that makes the hard cap hold on the *embedded* text."""
from __future__ import annotations

from dataclasses import dataclass, replace
from operator import lt, sub
from typing import ClassVar, Iterable, Protocol, Sequence

from chunkwise.chunking import boundaries
from chunkwise.chunking.codes import forget as forget_codes
from chunkwise.chunking.levels import Level
from chunkwise.chunking.pack import Piece, pack
from chunkwise.chunking.sizing import Sizer
from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError
from chunkwise.types import Chunk, new_chunk


# The character bound: no chunk's embedded text is longer than ``cap * CHARS_PER_UNIT[unit]``
# characters. A unit count alone does not bound text (MiniLM's WordPiece counts any word over 100
# characters as one [UNK]; a 20 MB run without spaces is one "word"). The figures are twice the
# worst ratio measured on real text (the Chroma corpora and examples/, caps 16-256: 8.4 characters
# per MiniLM token, 17.4 per word), so ordinary prose never meets the bound.
CHARS_PER_UNIT = {"chars": 1, "words": 32, "tokens": 16}


def char_cap(config: ChunkConfig) -> int:
    """The most characters a chunk's embedded text may hold under ``config``."""
    return config.size * CHARS_PER_UNIT[config.unit]


class Chunker(Protocol):
    name: str
    overlapping: bool

    def chunk(self, text: str) -> list[Chunk]: ...


@dataclass(frozen=True, slots=True)
class Draft:
    """A chunk before its header and final size are settled."""

    start: int
    end: int
    size: int
    level: Level
    review: bool = False
    reasons: tuple[str, ...] = ()
    heading_path: tuple[str, ...] = ()
    section: int | None = None
    kind: str = "text"
    rows: tuple[int, int] | None = None
    embed_body: str | None = None  # when the embedded body is not the slice (repeated table header)
    exact: bool = True  # size is exact for an exact sizer (no word split by a candidate cut inside)


def drafts_from_pieces(pieces: Iterable[Piece], exact: bool | None = True, **meta) -> list[Draft]:
    """Drafts of packed pieces; ``exact=None`` marks every size as an estimate to re-measure."""
    out = []
    for p in pieces:
        reasons = ((p.reason or "split_below_floor"),) if p.review else ()
        out.append(Draft(p.start, p.end, p.size, p.level, p.review, reasons, exact=p.exact and bool(exact), **meta))
    return out


def drafts_from_rows(rows: Iterable[tuple], exact: bool = True) -> list[Draft]:
    """``drafts_from_pieces`` of ``pack_rows``' rows (a piece's fields as a tuple)."""
    return [Draft(s, e, size, level, review, ((reason or "split_below_floor"),) if review else (),
                  exact=row_exact and exact) for s, e, size, level, review, row_exact, reason in rows]


_LABELS = {level: level.label for level in Level}


def outermost(spans: Sequence[tuple]) -> list[int]:
    """Indices of the spans (``(start, end, ...)`` in order) that lie inside no neighbour: overlapping
    windows whose trimming or repair left one inside another; the inner one adds nothing a reader or
    the index needs."""
    kept: list[int] = []
    for i, (s, e, *_) in enumerate(spans):
        if kept and spans[kept[-1]][0] <= s and e <= spans[kept[-1]][1]:
            continue
        while kept and s <= spans[kept[-1]][0] and spans[kept[-1]][1] <= e:
            kept.pop()
        kept.append(i)
    return kept

ABOUT = "About: "  # the description line of header mode "context" (enrich drops it where not readable)


class BaseChunker:
    """Holds the config and sizer; subclasses implement ``drafts(text)``."""

    name: ClassVar[str] = "base"
    overlapping: ClassVar[bool] = False

    def __init__(self, config: ChunkConfig, sizer: Sizer) -> None:
        self.config = config
        self.sizer = sizer
        self.cap = config.size
        self.char_cap = char_cap(config)
        if self.cap - sizer.overhead < 1:
            raise ConfigError(
                f"size {self.cap} leaves no room after {sizer.overhead} special tokens; raise --size"
            )
        self._header_cache: dict[tuple[str, ...], tuple[str, int]] = {}

    # -- headers ---------------------------------------------------------------------------------
    def header_for(self, path: tuple[str, ...], title: str, about_dropped: bool = False) -> str:
        """The contextual header: ``full`` is "Source: <title>" and "Section: <path>" lines;
        ``context`` adds "About: <description>" between them (the document's description)."""
        mode = self.config.header
        if mode == "none":
            return ""
        if mode == "title":
            return title
        if mode == "path":
            return " > ".join(path)
        lines = []
        if title:
            lines.append(f"Source: {title}")
        if mode == "context" and self.config.description and not about_dropped:
            lines.append(f"{ABOUT}{self.config.description}")
        if path:
            lines.append(f"Section: {' > '.join(path)}")
        return "\n".join(lines)

    def header_units(self, header: str) -> int:
        """Units the header adds (with its newline separator), measured once per distinct header."""
        if not header:
            return 0
        return self.sizer.count(header + "\n") - self.sizer.overhead

    def body_budget(self, path: tuple[str, ...] = (), title: str = "") -> tuple[int, str]:
        """Units left for the body once special tokens and the header are paid for. A header that
        would leave less than half the cap is shortened to its last heading, then dropped."""
        key = (*path, "\x1f", title)
        if key in self._header_cache:
            header, units = self._header_cache[key]
            return self.cap - self.sizer.overhead - units, header
        room = self.cap - self.sizer.overhead - self.config.context_tokens  # kept for an LLM-written context
        header = self.header_for(path, title)
        units = self.header_units(header)
        if header and units > room // 2 and ABOUT in header:
            header = self.header_for(path, title, about_dropped=True)
            units = self.header_units(header)
        if header and units > room // 2:
            header = self.header_for(path[-1:], "", about_dropped=True) if path else ""
            units = self.header_units(header)
            if units > room // 2:
                header, units = "", 0
        self._header_cache[key] = (header, units)
        return room - units, header

    def body_chars(self, path: tuple[str, ...] = (), title: str = "") -> int:
        """Characters left for the body once the header (and its newline) is paid for."""
        _, header = self.body_budget(path, title)
        return max(1, self.char_cap - (len(header) + 1 if header else 0))

    def pack(self, text: str, start: int, end: int, cuts, budget: int, *, path: tuple[str, ...] = (),
             title: str = "", **kw) -> list[Piece]:
        """The shared packer with this chunker's sizer and character bound (for ``path``'s header)."""
        kw.setdefault("max_chars", self.body_chars(path, title))
        return pack(text, start, end, cuts, self.sizer, budget, **kw)

    # -- the pipeline ----------------------------------------------------------------------------
    def title_of(self, text: str) -> str:
        return self.config.title

    def chunk(self, text: str) -> list[Chunk]:
        try:
            return self.for_text(text)._chunk(text)
        finally:
            forget_codes(text)

    def for_text(self, text: str) -> "BaseChunker":
        """This chunker, or a twin on the sizer's reference backend when the fast one cannot be trusted."""
        sizer = self.sizer.for_text(text)
        return self if sizer is self.sizer else type(self)(self.config, sizer)

    def _chunk(self, text: str) -> list[Chunk]:
        title = self.title_of(text)
        return self.finalize(text, self.drafts(text, title), title)

    def drafts(self, text: str, title: str) -> list[Draft]:  # pragma: no cover - abstract
        raise TypeError(f"{type(self).__name__} must implement drafts()")

    def finalize(self, text: str, drafts: Sequence[Draft], title: str) -> list[Chunk]:
        """Attach headers, measure embedded text, and repair anything over the cap.

        Exact sizers add up, so a draft's size plus its header is its final size. Others (characters
        with trimmed whitespace, byte-level BPE) are re-measured in one batch, and an oversized draft
        is re-packed with a budget smaller by the excess until it fits.
        """
        todo = list(drafts)
        for _ in range(32):
            embeds, sizes = self._measure(text, todo, title)
            over = {i for i, (e, sz) in enumerate(zip(embeds, sizes)) if sz > self.cap or len(e) > self.char_cap}
            if not over:
                break
            fixed: list[Draft] = []
            for i, d in enumerate(todo):
                if i in over:
                    fixed.extend(self._repair(text, d, sizes[i] - self.cap, title))
                else:
                    fixed.append(d)
            todo = fixed
        else:
            worst = max(sizes)
            raise ConfigError(
                f"size {self.cap} is too small for this text: a piece that cannot be split further (one "
                f"character or token sequence) measures {worst} units with the header; raise --size"
            )
        kept = [(todo[i], embeds[i], sizes[i]) for i in outermost([(d.start, d.end) for d in todo])]
        # Built once with their final index (no copy per chunk): this loop runs for every chunk. A
        # chunk embedded as it reads (no header) holds one string for both, not two equal copies.
        return [
            new_chunk(i, d.start, d.end, embed if embed == (piece := text[d.start : d.end]) else piece, size,
                  d.level.label if isinstance(d.level, Level) else str(d.level), embed, d.heading_path, d.section,
                  d.kind, d.review, d.reasons, d.rows)
            for i, (d, embed, size) in enumerate(kept)
        ]

    def finalize_rows(self, text: str, rows: Sequence[tuple], title: str, exact: bool = True) -> list[Chunk]:
        """``finalize(text, drafts_from_rows(rows, exact), title)``, without a ``Draft`` per row when no
        row has a header and every row keeps the cap as packed (the common case): the same sizes (an
        exact sizer's sums, else one batched count of the slices), the same chunks. Anything else (a
        header, a row over the cap to repair) is ``finalize``'s. ``exact=False``: every row is
        measured (fixed token windows report the measured size)."""
        _, header = self.body_budget((), title)
        if header:
            return self.finalize(text, drafts_from_rows(rows, exact), title)
        overhead, cap, char_cap = self.sizer.overhead, self.cap, self.char_cap
        starts, ends = [r[0] for r in rows], [r[1] for r in rows]
        if self.sizer.exact and exact:
            sizes = [size + overhead if row_exact else -1 for _, _, size, _, _, row_exact, _ in rows]
            todo = [i for i, size in enumerate(sizes) if size < 0]
            if todo:
                counts = self.sizer.count_spans(text, [starts[i] for i in todo], [ends[i] for i in todo])
                for i, c in zip(todo, counts):
                    sizes[i] = c + overhead
        else:  # every slice is counted: in one call, with no per-row bookkeeping
            sizes = list(self.sizer.count_spans(text, starts, ends))
            if overhead:
                sizes = [c + overhead for c in sizes]
        if max(sizes, default=0) > cap or max(map(sub, ends, starts), default=0) > char_cap:
            return self.finalize(text, drafts_from_rows(rows, exact), title)
        # Starts and ends both rising (no overlap, the usual case): no row lies inside another.
        keep = range(len(rows)) if all(map(lt, starts, starts[1:])) and all(map(lt, ends, ends[1:])) \
            else outermost(rows)
        labels = _LABELS
        return [
            new_chunk(n, s, e, body, sizes[i], labels[level], body, (), None, "text", review,
                  ((reason or "split_below_floor"),) if review else (), None)
            for n, i in enumerate(keep)
            for s, e, _, level, review, _, reason in (rows[i],)
            for body in (text[s:e],)
        ]

    def _measure(self, text: str, drafts: Sequence[Draft], title: str) -> tuple[list[str], list[int]]:
        embeds, sizes = [], []
        spans: list[int] = []  # drafts whose embedded text is their slice: counted off the document
        others: list[int] = []  # the rest (a header, a repeated table header): counted as strings
        overhead = self.sizer.overhead
        exact = self.sizer.exact
        for d in drafts:
            _, header = self.body_budget(d.heading_path, title)
            body = d.embed_body if d.embed_body is not None else text[d.start : d.end]
            embeds.append(f"{header}\n{body}" if header else body)
            if exact and d.exact and d.embed_body is None:
                sizes.append(d.size + self.header_units(header) + overhead)
            else:
                sizes.append(-1)
                (others if header or d.embed_body is not None else spans).append(len(embeds) - 1)
        if spans:
            counts = self.sizer.count_spans(text, [drafts[i].start for i in spans], [drafts[i].end for i in spans])
            for i, c in zip(spans, counts):
                sizes[i] = c + overhead
        if others:
            counts = self.sizer.count_many([embeds[i] for i in others])
            for i, c in zip(others, counts):
                sizes[i] = c + overhead
        return embeds, sizes

    def _repair(self, text: str, d: Draft, excess: int, title: str) -> list[Draft]:
        """Re-pack an oversized draft: its unit budget lowered by the excess, under the character bound."""
        budget, _ = self.body_budget(d.heading_path, title)
        if excess > 0:
            budget = max(1, min(budget, d.size) - excess)
        chars = self.body_chars(d.heading_path, title)  # lengths are exact: the full bound is safe
        pieces = pack(text, d.start, d.end, boundaries.sentences(text, d.start, d.end), self.sizer, budget,
                      max_chars=chars)
        return [
            replace(d, start=p.start, end=p.end, size=p.size, level=p.level if len(pieces) > 1 else d.level,
                    review=d.review or p.review, embed_body=None, rows=d.rows, exact=p.exact,
                    reasons=d.reasons if not p.review or p.reason in d.reasons else (*d.reasons, p.reason))
            for p in pieces
        ]
