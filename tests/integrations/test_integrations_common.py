"""What the three integrations share: options, ids, groups; and that importing loads no framework."""
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkwise import api
from chunkwise.integrations._common import Engine, Searcher, chunk_config, groups_of

from integration_fixtures import ROOT, docs, store  # noqa: F401 (fixtures)


def test_importing_the_package_loads_no_framework():
    code = ("import sys, chunkwise, chunkwise.integrations, chunkwise.integrations._common; "
            "print(sorted(m for m in ('langchain_core', 'llama_index', 'haystack', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "src")}, check=True).stdout
    assert out.strip() == "[]"


def test_options_are_the_chunk_commands():
    assert chunk_config().strategy == "auto"  # `chunkwise chunk`'s default, not ChunkConfig's
    cfg = chunk_config(None, {"size": 100, "overlap": 10, "unit": "words", "header": "path"})
    assert (cfg.size, cfg.overlap, cfg.unit, cfg.header) == (100, 10, "words", "path")
    with pytest.raises(api.ConfigError, match="did you mean"):
        chunk_config(None, {"strategy": "recursve"})
    with pytest.raises(api.ConfigError, match="overlap"):
        chunk_config(None, {"size": 10, "overlap": 10})
    with pytest.raises(TypeError):
        chunk_config(None, {"sise": 10})


@pytest.mark.parametrize("groups", [None, "", [], ",", [" "]])
def test_groups_are_required(groups, store):
    with pytest.raises(api.ConfigError, match="groups"):
        groups_of(groups)
    with pytest.raises(api.ConfigError, match="groups"):
        Searcher(store, groups)


def test_bad_store_or_mode_fails_at_construction(tmp_path, store):
    with pytest.raises(api.ConfigError, match="chunkwise ingest"):
        Searcher(tmp_path / "missing.db", ["sre"])
    with pytest.raises(api.ConfigError, match="mode"):
        Searcher(store, ["sre"], mode="semantic")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["Alpha beta.", "Yes.", "Gamma delta epsilon zeta.", "\n\n", " ", "# H\n", "é"]),
                max_size=40))
def test_pieces_are_exact_slices_with_unique_stable_ids(parts):
    text = "".join(parts)
    engine = Engine(chunk_config(None, {"strategy": "recursive", "size": 8}))
    pieces = engine.split_text(text, "doc")
    assert all(text[p.start:p.end] == p.text for p in pieces)
    assert len({p.chunk_id for p in pieces}) == len(pieces)  # repeated text still gets distinct ids
    assert [p.chunk_id for p in Engine(engine.config).split_text(text, "doc")] == [p.chunk_id for p in pieces]
