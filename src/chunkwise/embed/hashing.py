"""A deterministic, dependency-free lexical embedder built on feature hashing.

What a vector is, exactly (``hashing-{dim}@{version}`` names this recipe; changing any step
needs a new name, and a golden test pins it):

1. **Normalise.** ASCII text is lower-cased. Other text is NFKC-normalised and case-folded.
2. **Tokens.** Runs of letters and digits (Unicode-aware; underscores and punctuation split, so
   ``max_seq_length`` gives ``max seq length``), with combining marks kept inside their word
   (accents, Devanagari vowel signs and viramas). Each CJK ideograph or kana character is a token
   of its own, so CJK bigrams are character bigrams. Scripts written without spaces other than
   CJK (Thai, Lao, Khmer, Myanmar) give one token per space-delimited run.
3. **Hash.** Each token's UTF-8 bytes go through blake2b keyed with ``chunkwise-hashing@{version}``
   (never Python's ``hash()``, which changes with PYTHONHASHSEED); the 128-bit digest gives two
   numbers in ``[0, 2*dim)``: ``u`` (low 64 bits) and ``r`` (high 64 bits).
4. **Cells.** Token ``t`` lands in cell ``u(t)``; the word bigram ``(a, b)`` in cell
   ``(r(a) + u(b)) mod 2*dim`` (one extra addition per bigram instead of a second hash). Cell ``c``
   adds to dimension ``c`` when ``c < dim`` and subtracts from dimension ``c - dim`` otherwise: the
   sign bit that keeps colliding features from piling up.
5. **Weights.** Each cell with count ``n`` (its token and bigram occurrences) weighs ``1 + ln n``:
   sublinear term frequency, counted after hashing. Dimension ``i`` = weight(cell ``i``) -
   weight(cell ``i + dim``); the vector is L2-normalised.

Texts that share words (and word pairs) get a higher cosine than unrelated texts; there is no IDF
and no stemming, so it is a lexical baseline, not a semantic model. A text with no tokens (empty,
whitespace or punctuation only) gives the zero vector: its cosine to anything is undefined, and
callers must treat it as "no evidence", never as a match.

Speed: pure Python (stdlib) throughout; when numpy is importable the counting and the dense steps
run vectorised over a batch, with bit-identical results (same integer counts, the same
``math.log`` weights, the same ``math.hypot`` norms and IEEE divisions). Token hashes are kept in a
per-instance table (bounded; dropped when pickled); the vectors never depend on it.
"""
from __future__ import annotations

import math
import re
from array import array
import unicodedata
from bisect import bisect_left
from collections import Counter, deque
from itertools import islice, repeat
from operator import add, mod, sub, truediv
from typing import Sequence

from chunkwise import ids
from chunkwise.embed.base import texts_of
from chunkwise.errors import ConfigError

DEFAULT_DIM = 384
MIN_DIM, MAX_DIM = 2, 1 << 20
_CACHE_LIMIT = 200_000  # distinct tokens kept per instance (~40 MB); the table is cleared past it
_NUMPY_CELLS = 1 << 21  # count-matrix cells per vectorised step (16 MB of int64): bounds memory

# Han, kana, CJK compatibility ideographs and the supplementary ideograph planes.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
# Combining marks that \w does not match, plus the Brahmic and South-East Asian blocks whose vowel
# signs and viramas would otherwise cut words apart (their punctuation, e.g. the danda, excluded).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a"
    "\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u0900-\u0963"
    "\u0966-\u0dff\u0e00-\u0e4e\u0e50-\u0e59\u0e80-\u0eff\u1000-\u1049\u104c-\u109f\u1780-\u17d3"
    "\u17e0-\u17e9\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")
_TOKEN_WITH_MARKS = re.compile(f"[{_CJK}]|(?:[^\\W_{_CJK}]|[{_MARKS}])+")
_HAS_CJK = re.compile(f"[{_CJK}]")
_HAS_MARK = re.compile(f"[{_MARKS}]")
# The same tokens when the text has no CJK (or no marks): the simpler patterns run 2x faster.
_PATTERNS = {
    (False, False): re.compile(r"[^\W_]+"),
    (False, True): re.compile(f"(?:[^\\W_]|[{_MARKS}])+"),
    (True, False): _TOKEN,
    (True, True): _TOKEN_WITH_MARKS,
}
# ASCII fast path: one bytes.translate lower-cases letters and blanks everything but [a-z0-9];
# split() then gives exactly the tokens _TOKEN finds in the same (ASCII) text.
_ASCII_FOLD = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256)
)
# 1 + ln(n) for small counts, from math.log so both code paths use identical weights.
_WEIGHTS = [0.0] + [1.0 + math.log(n) for n in range(1, 1024)]


def tokens(text: str) -> list[str]:
    """The unigram tokens the embedder hashes, in order (for inspection and tests)."""
    toks = _tokens(text)
    return [t.decode("ascii") for t in toks] if text.isascii() else toks


def _tokens(text: str) -> list[bytes] | list[str]:
    """ASCII text gives bytes tokens (the fast path), other text str tokens; a token is hashed
    from its UTF-8 bytes either way, so the same word gets the same cells on both paths."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_FOLD).split()
    text = unicodedata.normalize("NFKC", text).casefold()
    pattern = _PATTERNS[_HAS_CJK.search(text) is not None, _HAS_MARK.search(text) is not None]
    return pattern.findall(text)


def _weight(n: int) -> float:
    return _WEIGHTS[n] if n < len(_WEIGHTS) else 1.0 + math.log(n)


class HashingEmbedder:
    """Feature-hashing embedder, see the module docstring. ``numpy=None`` uses numpy when it can be
    imported; ``True``/``False`` force a path (results are identical either way)."""

    max_tokens: int | None = None  # reads any length: nothing is ever truncated
    # No model, no batching gain: embedding costs about what hashing the text does, so ingest embeds
    # each document where it prepares it (a worker) instead of shipping its texts to one process.
    cheap: bool = True

    def __init__(self, dim: int = DEFAULT_DIM, version: int = 1, *, numpy: bool | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or not MIN_DIM <= dim <= MAX_DIM:
            raise ConfigError(f"hashing dimension must be an integer in {MIN_DIM}..{MAX_DIM}, got {dim!r}; "
                              f"e.g. hashing-{DEFAULT_DIM}")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ConfigError(f"hashing version must be a positive integer, got {version!r}; e.g. hashing@1")
        self.dim = dim
        self.version = version
        self.name = f"hashing-{dim}@{version}"
        self._numpy = numpy
        self._hash = ids.keyed_hasher(f"chunkwise-hashing@{version}", 16)
        # Token -> cells, one table per token type (bytes from the ASCII path, str otherwise) so
        # bytes and str keys are never compared.
        self._tables: dict[type, tuple[dict, dict]] = {bytes: ({}, {}), str: ({}, {})}

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, version={self.version})"

    def __reduce__(self):  # ship the recipe, not the token table (Ray workers, multiprocessing)
        return (_rebuild, (self.dim, self.version, self._numpy))

    # -- public -------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, False)

    def embed_float32(self, texts: Sequence[str]) -> list[array]:
        """``[array("f", v) for v in embed(texts)]``, the same values, without the lists of floats
        in between (numpy rounds each to float32 as ``array`` does): ingest stores float32 vectors,
        and making and converting the lists was ~a fifth of embedding a small file's chunks. A
        subclass that overrides ``embed`` is obeyed (its vectors, its errors)."""
        if type(self).embed is not HashingEmbedder.embed:
            return [array("f", v) for v in self.embed(texts)]
        return self._embed(texts, True)

    def _embed(self, texts: Sequence[str], float32: bool) -> list:
        texts = texts_of(texts)
        coded = [self._codes(_tokens(text)) for text in texts]
        np = self._np()
        if np is None:
            vectors = [self._vector_python(us, rs) for us, rs in coded]
            return [array("f", v) for v in vectors] if float32 else vectors
        out: list = []
        step = max(1, min(512, _NUMPY_CELLS // (2 * self.dim)))
        for i in range(0, len(coded), step):
            vecs = self._vectors_numpy(np, coded[i:i + step])
            if float32:
                rows = vecs.astype(np.float32)
                out.extend(array("f", row.tobytes()) for row in rows)
            else:
                out.extend(vecs.tolist())
        return out

    # -- shared steps ---------------------------------------------------------------------------
    def _np(self):
        if self._numpy is False:
            return None
        try:
            import numpy
        except ImportError:
            if self._numpy:
                raise
            return None
        return numpy

    def _codes(self, toks: list[bytes] | list[str]) -> tuple[list[int], list[int]]:
        """Each token's unigram cell ``u`` and bigram offset ``r``."""
        if not toks:
            return [], []
        u, r = self._tables[type(toks[0])]
        us = list(map(u.get, toks))
        if None in us:
            self._learn(toks, u, r)
            us = list(map(u.__getitem__, toks))
        return us, list(map(r.__getitem__, toks))

    def _learn(self, toks: list[bytes] | list[str], u: dict, r: dict) -> None:
        if len(u) > _CACHE_LIMIT:
            u.clear()
            r.clear()
        cells = 2 * self.dim
        for tok in set(toks).difference(u):
            h = self._hash.copy()  # the keyed state, already past its key block
            h.update(tok if isinstance(tok, bytes) else tok.encode("utf-8"))
            digest = h.digest()
            u[tok] = int.from_bytes(digest[:8], "little") % cells
            r[tok] = int.from_bytes(digest[8:], "little") % cells

    # -- pure Python ------------------------------------------------------------------------------
    def _vector_python(self, us: list[int], rs: list[int]) -> list[float]:
        dim, cells = self.dim, 2 * self.dim
        counts = Counter(us)
        counts.update(map(mod, map(add, rs, islice(us, 1, None)), repeat(cells)))  # bigram cells
        # A cell counts at most every token and bigram (< 2 * tokens): the table covers short texts.
        weight = _WEIGHTS.__getitem__ if 2 * len(us) < len(_WEIGHTS) else _weight
        if 3 * len(counts) < dim:  # few occupied cells: touch only those
            return _sparse(counts, weight, dim)
        acc = [0.0] * cells
        deque(map(acc.__setitem__, counts.keys(), map(weight, counts.values())), maxlen=0)
        vec = list(map(sub, acc[:dim], acc[dim:]))
        norm = math.hypot(*vec)
        return list(map(truediv, vec, repeat(norm))) if norm else vec

    # -- numpy, a batch at a time -----------------------------------------------------------------
    def _vectors_numpy(self, np, coded: list[tuple[list[int], list[int]]]):
        """The vectors of ``coded``, one float64 row each."""
        dim, cells, n = self.dim, 2 * self.dim, len(coded)
        flat_u: list[int] = []
        flat_r: list[int] = []
        for us, rs in coded:
            flat_u += us
            flat_r += rs
        lengths = np.fromiter(map(len, (us for us, _ in coded)), dtype=np.int64, count=n)
        u = np.fromiter(flat_u, dtype=np.int64, count=len(flat_u))
        r = np.fromiter(flat_r, dtype=np.int64, count=len(flat_r))
        text_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
        same = text_of[:-1] == text_of[1:]  # a bigram never spans two texts
        bigrams = (r[:-1][same] + u[1:][same]) % cells + text_of[1:][same] * cells
        keys = np.concatenate((u + text_of * cells, bigrams))
        counts = np.bincount(keys, minlength=n * cells).reshape(n, cells)
        top = int(counts.max()) if counts.size else 0
        if top < len(_WEIGHTS):
            weights = np.asarray(_WEIGHTS)[counts]
        else:
            values, inverse = np.unique(counts, return_inverse=True)
            weights = np.array([_weight(int(v)) for v in values])[inverse].reshape(n, cells)
        vecs = weights[:, :dim] - weights[:, dim:]
        vecs /= np.array([norm or 1.0 for norm in _row_norms(np, vecs)])[:, None]
        return vecs


def _row_norms(np, vecs) -> list[float]:
    """math.hypot of each row, as the Python paths compute it: over the non-zero values in
    dimension order, with a leading 0.0 (zeros change nothing in hypot; see _sparse)."""
    nonzero = vecs != 0
    values = vecs[nonzero].tolist()  # row-major: each row's values in dimension order
    ends = np.cumsum(nonzero.sum(axis=1)).tolist()
    norms, start = [], 0
    for end in ends:
        norms.append(math.hypot(0.0, *values[start:end]))
        start = end
    return norms


def _sparse(counts: Counter, weight, dim: int) -> list[float]:
    """The dense path's arithmetic on the occupied dimensions only (short texts), bit for bit:
    the same subtractions, the same hypot over the non-zero values in dimension order (zeros
    change nothing in hypot), the same divisions."""
    keys = sorted(counts)
    split = bisect_left(keys, dim)
    weights = list(map(weight, map(counts.__getitem__, keys)))
    signed = dict(zip(keys[:split], weights[:split]))  # positive cells: pos - 0.0 == pos
    negative = list(map(sub, keys[split:], repeat(dim)))
    signed.update(list(zip(negative, map(sub, map(signed.get, negative, repeat(0.0)), weights[split:]))))
    dims = sorted(signed)
    values = list(map(signed.__getitem__, dims))
    norm = math.hypot(0.0, *values)  # the leading 0.0 keeps hypot on its general path, as dense
    vec = [0.0] * dim
    if norm:
        deque(map(vec.__setitem__, dims, map(truediv, values, repeat(norm))), maxlen=0)
    return vec


def _rebuild(dim: int, version: int, numpy: bool | None) -> HashingEmbedder:
    return HashingEmbedder(dim, version, numpy=numpy)
