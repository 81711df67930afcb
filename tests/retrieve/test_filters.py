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
    assert Filters(updated_after="2024-05-01", updated_before="2024-05-01").accepts(dated)  # one day is a range


def test_a_reversed_date_range_is_refused_in_one_place():
    """Library, HTTP (400), MCP (-32602) and the integrations all build ``Filters``: one check, one message."""
    with pytest.raises(ConfigError, match=r"^filter: updated_after 2024-05-02 is later than updated_before "
                                          r"2024-04-30; the range is empty \(swap them\?\)$"):
        Filters(updated_after="2024-05-02", updated_before="2024-04-30T08:00:00")


@pytest.mark.parametrize("kwargs", [{"doc_ids": "a.md"}, {"doc_ids": ("",)}, {"file_types": (1,)},
                                    {"doc_ids": tuple(map(str, range(101)))}, {"updated_after": "soon"},
                                    {"source_prefix": 3}])
def test_bad_filters_are_config_errors(kwargs):
    with pytest.raises(ConfigError, match="filter"):
        Filters(**kwargs)


def test_the_integrations_refuse_a_reversed_range_with_the_same_message():
    from chunkwise.integrations._common import filters_of

    with pytest.raises(ConfigError) as caught:
        filters_of({"updated_after": "2024-05-02", "updated_before": "2024-04-30"})
    assert str(caught.value) == ("filter: updated_after 2024-05-02 is later than updated_before 2024-04-30; "
                                 "the range is empty (swap them?)")
