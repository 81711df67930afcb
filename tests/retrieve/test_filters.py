"""Search filters narrow permitted hits and are validated when built."""
from __future__ import annotations

import pytest

from chunkwise.errors import ConfigError
from chunkwise.retrieve.filters import Filters
from chunkwise.retrieve.types import Hit


def hit(doc="a.md", source="docs/a.md", updated=""):
    return Hit("c" * 32, doc, 0, 0, 1, 1.0, 1, "t", source_uri=source, updated_at=updated)


def test_each_filter_narrows():
    assert Filters().empty and Filters().accepts(hit())
    assert Filters(doc_ids=("a.md",)).accepts(hit()) and not Filters(doc_ids=("b.md",)).accepts(hit())
    assert Filters(source_prefix="docs/").accepts(hit()) and not Filters(source_prefix="other/").accepts(hit())
    assert Filters(file_types=(".MD",)).accepts(hit()) and not Filters(file_types=("pdf",)).accepts(hit())
    assert not Filters(file_types=("md",)).accepts(hit(source="docs/README"))
    dated = hit(updated="2024-05-01T10:00:00")
    assert Filters(updated_after="2024-05-01").accepts(dated) and Filters(updated_before="2024-05-01").accepts(dated)
    assert not Filters(updated_after="2024-05-02").accepts(dated)
    assert not Filters(updated_before="2024-04-30").accepts(dated)
    assert not Filters(updated_after="2000-01-01").accepts(hit(updated=""))  # undated: no match under a date filter
    assert not Filters(updated_after="2000-01-01").accepts(hit(updated="last spring"))
    # a reversed range is empty, not an error (an HTTP request valid by its schema is accepted)
    assert not Filters(updated_after="2024-05-02", updated_before="2024-04-30").accepts(dated)


@pytest.mark.parametrize("kwargs", [{"doc_ids": "a.md"}, {"doc_ids": ("",)}, {"file_types": (1,)},
                                    {"doc_ids": tuple(map(str, range(101)))}, {"updated_after": "soon"},
                                    {"source_prefix": 3}])
def test_bad_filters_are_config_errors(kwargs):
    with pytest.raises(ConfigError, match="filter"):
        Filters(**kwargs)
