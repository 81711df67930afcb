"""Standard errors, seeded bootstrap intervals and paired comparisons, checked by hand and by property."""
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkwise.evaluate.stats import bootstrap_interval, paired, standard_error


def test_standard_error_by_hand():
    assert standard_error([0, 1, 1, 0]) == pytest.approx(math.sqrt(1 / 3) / 2)  # sd 0.577 / sqrt 4
    assert standard_error([1.0]) == 0.0 and standard_error([]) == 0.0
    assert standard_error([3, 3, 3]) == 0.0


def test_bootstrap_is_seeded_and_reproducible():
    rng = random.Random(1)
    xs = [rng.random() for _ in range(30)]
    assert bootstrap_interval(xs, seed=7) == bootstrap_interval(xs, seed=7)
    assert bootstrap_interval(xs, seed=7) != bootstrap_interval(xs, seed=8)
    lo, hi = bootstrap_interval(xs)
    assert lo < sum(xs) / len(xs) < hi
    with pytest.raises(ValueError, match="level"):
        bootstrap_interval(xs, level=1.5)


def test_paired_difference_by_hand():
    # b answers two questions a missed, and none the other way round
    p = paired("hit@5", "a", [0, 0, 1, 1], "b", [1, 1, 1, 1])
    assert (p.n, p.mean_a, p.mean_b, p.diff, p.better, p.worse) == (4, 0.5, 1.0, 0.5, 2, 0)
    assert p.se == pytest.approx(math.sqrt(1 / 3) / 2)
    # four questions cannot settle it: a resample of the two non-wins alone (1 in 16) has mean 0
    assert p.ci_low == 0.0 and not p.significant
    many = paired("hit@5", "a", [0, 0, 1, 1] * 10, "b", [1, 1, 1, 1] * 10)
    assert many.ci_low > 0 and many.significant and many.to_dict()["significant"] is True
    with pytest.raises(ValueError, match="same questions"):
        paired("iou", "a", [0.1], "b", [0.1, 0.2])


def test_interval_covers_the_true_rate_about_as_often_as_it_claims():
    """100 golden sets of 40 questions with a true recall of 0.7: the 95% interval holds 0.7 in about 95."""
    covered = 0
    for trial in range(100):
        rng = random.Random(trial)
        xs = [float(rng.random() < 0.7) for _ in range(40)]
        lo, hi = bootstrap_interval(xs, resamples=500, seed=trial)
        covered += lo <= 0.7 <= hi
    assert 88 <= covered <= 99


values = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=40)


@given(values, st.integers(0, 2 ** 32))
def test_interval_is_ordered_and_inside_the_values(xs, seed):
    lo, hi = bootstrap_interval(xs, resamples=200, seed=seed)
    assert min(xs) - 1e-9 <= lo <= hi <= max(xs) + 1e-9


@given(values)
def test_a_config_compared_with_itself_differs_by_nothing(xs):
    p = paired("iou", "a", xs, "a", xs, resamples=100)
    assert (p.diff, p.se, p.ci_low, p.ci_high, p.better, p.worse) == (0, 0, 0, 0, 0, 0)
    assert not p.significant
