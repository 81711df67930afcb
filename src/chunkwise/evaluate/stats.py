"""How sure a figure is: standard errors of per-question means and paired comparisons of configs.

A golden set of 30 questions measures recall to about ±0.05, so "0.93 vs 0.90" says nothing until
its uncertainty is shown. Two configs asked the *same* questions are compared question by question
(the paired difference), which removes the spread between easy and hard questions from the error:
the standard error of the mean difference, and a percentile bootstrap interval over questions that
makes no normality assumption (hit rates are 0/1 values). The bootstrap is seeded, so the same
inputs give the same interval on every machine and run.
"""
from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from typing import Sequence

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def standard_error(xs: Sequence[float]) -> float:
    """Standard error of the mean (sample standard deviation / sqrt n); 0 below two values."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)


def bootstrap_interval(xs: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``xs`` (resampling values with replacement)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = len(xs)
    if not n:
        return (0.0, 0.0)
    rng = random.Random(seed)
    values = list(xs)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    lo = means[int(math.floor((1 - level) / 2 * (resamples - 1)))]
    hi = means[int(math.ceil((1 + level) / 2 * (resamples - 1)))]
    return (lo, hi)


@dataclass(frozen=True)
class Paired:
    """``b`` minus ``a`` on one metric over the questions both answered (``n``), with the standard error
    of the mean difference and a bootstrap interval; ``better``/``worse`` count questions where ``b``
    scored higher/lower than ``a``."""

    metric: str
    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    se: float
    ci_low: float
    ci_high: float
    better: int
    worse: int

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.ci_low > 0 or self.ci_high < 0

    def to_dict(self) -> dict:
        return {**asdict(self), "significant": self.significant}


def paired(metric: str, a: str, xs: Sequence[float], b: str, ys: Sequence[float], *,
           resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Paired:
    """Compare per-question values ``ys`` (config ``b``) with ``xs`` (config ``a``), same questions in
    the same order."""
    if len(xs) != len(ys):
        raise ValueError(f"paired comparison needs the same questions: {len(xs)} vs {len(ys)} values")
    d = [y - x for x, y in zip(xs, ys)]
    lo, hi = bootstrap_interval(d, resamples=resamples, seed=seed, level=level)
    return Paired(metric, a, b, len(d), mean(xs), mean(ys), mean(d), standard_error(d), lo, hi,
                  sum(v > 0 for v in d), sum(v < 0 for v in d))
