"""The public surface: a handful at the top level (imported lazily), about 25 names in ``api``."""
import subprocess
import sys

import chunkwise
from chunkwise import api


def test_top_level_exports_what_a_user_needs():
    for name in ("ingest", "search", "open_retriever", "open_store", "chunk_text", "chunk_file", "evaluate",
                 "ChunkConfig", "ChunkRecord", "Retriever", "ChunkwiseError"):
        assert name in chunkwise.__all__ and getattr(chunkwise, name) is not None
    assert chunkwise.ingest is api.ingest and chunkwise.chunk_file is api.chunk_file


def test_unknown_top_level_name_is_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError):
        chunkwise.no_such_name  # noqa: B018


def test_api_all_is_small_and_real():
    assert 20 <= len(api.__all__) <= 30
    assert all(hasattr(api, name) for name in api.__all__)


def test_import_chunkwise_loads_no_stage():
    code = "import sys, chunkwise; print(sorted(m for m in sys.modules if m.startswith('chunkwise')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['chunkwise']"


def test_open_store_refuses_a_missing_file_and_creates_nothing(tmp_path):
    import pytest

    with pytest.raises(api.ConfigError):
        api.open_store(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()
