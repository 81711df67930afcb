"""Extraction against Docling's groundtruth (benchmarks/docling_compare.py) must not regress: floors a
little below the figures measured (BENCHMARKS, "Extraction against Docling"). Runs when
../shared/data/docling is present (it is in CI; ``CHUNKWISE_SHARED_DATA`` names another shared/data
folder)."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CHUNKWISE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "docling"
if not DATA.is_dir():
    pytest.skip("../shared/data/docling is absent", allow_module_level=True)
sys.path.insert(0, str(ROOT / "benchmarks"))
import docling_compare  # noqa: E402

# (format, figure): floor — the measured figure minus a small margin; raise a floor when it improves
FLOORS = {
    ("pdf", "word_recall"): 0.98, ("pdf", "heading_recall"): 0.85, ("pdf", "heading_precision"): 0.86,
    ("pdf", "cell_recall"): 0.90, ("pdf", "word_recall_min"): 0.80, ("pdf", "located"): 0.94,
    ("pdf", "order_mean"): 0.95, ("pdf", "order_min"): 0.95,  # reading order >= 0.95 per file (issue 27 item 2)
    ("docx", "order_min"): 0.98, ("html", "order_min"): 0.98,
    ("pdf", "page_right"): 0.99,  # page right for every block (1.000 measured: 336 located items)
    ("docx", "word_recall"): 0.975, ("docx", "heading_recall"): 0.98, ("docx", "heading_precision"): 0.98,
    ("docx", "cell_recall"): 0.89, ("docx", "order_mean"): 0.98,
    ("html", "word_recall"): 0.98, ("html", "heading_recall"): 0.97, ("html", "heading_precision"): 0.98,
    ("html", "cell_recall"): 0.86, ("html", "order_mean"): 0.98, ("html", "located"): 0.97,
}


@pytest.fixture(scope="module")
def figures():
    return docling_compare.run(DATA)


@pytest.mark.parametrize("fmt, figure", sorted(FLOORS))
def test_no_regression_against_docling(figures, fmt, figure):
    summary = figures[fmt]["summary"]
    assert summary["errors"] == 0, [r for r in figures[fmt]["files"] if "error" in r]
    assert summary[figure] >= FLOORS[(fmt, figure)], (fmt, figure, summary)


def test_the_measures_measure():
    """The scorers on hand-made inputs: a check that cannot fail is no check."""
    assert docling_compare.multiset_recall(["a", "a", "b"], ["a", "b", "c"]) == (2, 3)
    assert docling_compare._lis([5, 1, 2, 9, 3]) == 3

    class Doc:
        text = "lorem ipsum dolor sit amet consetetur sadipscing elitr one. " * 2 + "a b c d e f g h"

    same = "lorem ipsum dolor sit amet consetetur sadipscing elitr"
    assert docling_compare.order_score([same, same, "a b c d e f g h"], Doc) == {
        "paragraphs": 3, "located": 3, "in_order": 3}  # a recurring paragraph is found at its next place
    assert docling_compare.order_score(["a b c d e f g h", same], Doc)["in_order"] == 1
    assert docling_compare.gt_headings("# Title\n\ntext\n\n## 2.1 Data\n") == [(1, "title"), (2, "2 1 data")]
    assert docling_compare.norm("Hyper-Parameter  Optimisation!") == "hyper parameter optimisation"
    assert docling_compare.gt_headings("## [Home](/home.html)\n") == [(2, "home")]  # the link's text only

    from chunkwise.types import Page

    class Paged:
        text = "alpha beta gamma delta epsilon\n\nzeta eta theta iota kappa"
        pages = (Page(1, 0, 30), Page(2, 32, 57))

    items = [(1, "alpha beta gamma delta"), (1, "zeta eta theta iota"), (2, "not in the text at all")]
    assert docling_compare.page_score(items, Paged) == {"page_gt": 3, "page_items": 2, "page_right": 1}
