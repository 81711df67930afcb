"""The version detector's one-permutation MinHash (enrich/versions.py) cross-checked against
datasketch's MinHash (128 permutations; a test dependency only: it pulls scipy, which ingest does
not need). Over edited copies of generated documents, both estimate the exact Jaccard similarity of
the 3-shingle sets, and they agree with each other, most of all around the near-duplicate threshold."""
from __future__ import annotations

import random

import pytest

from chunkwise.enrich import versions as v

datasketch = pytest.importorskip("datasketch")

VOCAB = [f"w{i}" for i in range(400)]


def shingles(text: str) -> set[str]:
    w = v.words(text)
    return {" ".join(w[i : i + v.SHINGLE]) for i in range(len(w) - v.SHINGLE + 1)}


def theirs(text: str) -> "datasketch.MinHash":
    mh = datasketch.MinHash(num_perm=v.BINS, seed=7)
    mh.update_batch([s.encode("utf-8") for s in shingles(text)])
    return mh


def pairs(n: int, seed: int = 11):
    rng = random.Random(seed)
    for _ in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(150, 400))]
        edited = list(words)
        for _ in range(rng.randint(0, 40)):  # point edits: 0 to ~40 changed words
            edited[rng.randrange(len(edited))] = rng.choice(VOCAB)
        yield " ".join(words), " ".join(edited)


def test_estimates_agree_with_datasketch_and_the_exact_jaccard():
    ours_err, theirs_err, between = [], [], []
    for a, b in pairs(120):
        exact = len(shingles(a) & shingles(b)) / len(shingles(a) | shingles(b))
        mine = v.similarity(v.minhash(a), v.minhash(b))
        ds = theirs(a).jaccard(theirs(b))
        ours_err.append(abs(mine - exact))
        theirs_err.append(abs(ds - exact))
        between.append(abs(mine - ds))
        assert abs(mine - exact) < 0.2 and abs(ds - exact) < 0.2
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    # the module docstring's claim: a standard error below 0.045 at 128 bins (datasketch: same order)
    assert mean(ours_err) < 0.045 and mean(theirs_err) < 0.045
    assert mean(between) < 0.06
    assert mean(ours_err) < 1.5 * mean(theirs_err) + 0.005  # no worse than the library's estimator


def test_the_near_duplicate_decision_matches_datasketch_far_from_the_threshold():
    """Where the exact J is clearly on one side of NEAR_DUPLICATE (more than 0.15 away), both
    estimators decide the same."""
    decided = 0
    for a, b in pairs(200, seed=5):
        exact = len(shingles(a) & shingles(b)) / len(shingles(a) | shingles(b))
        if abs(exact - v.NEAR_DUPLICATE) <= 0.15:
            continue
        mine = v.similarity(v.minhash(a), v.minhash(b)) >= v.NEAR_DUPLICATE
        ds = theirs(a).jaccard(theirs(b)) >= v.NEAR_DUPLICATE
        assert mine == ds == (exact >= v.NEAR_DUPLICATE)
        decided += 1
    assert decided > 50
