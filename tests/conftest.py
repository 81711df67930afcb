import os
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the same examples every time (a red build must be reproducible); locally each run explores
# new ones. HYPOTHESIS_PROFILE=explore overrides either way.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore"))

os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CHROMA = ROOT.parent / "shared" / "data" / "chroma" / "corpora"


@lru_cache(maxsize=None)
def sizer(unit: str, tokenizer: str = "minilm", backend: str = "auto"):
    from chunkwise.chunking.sizing import make_sizer

    return make_sizer(unit, tokenizer, backend)


@pytest.fixture(scope="session")
def examples() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.iterdir())
            if p.is_file() and p.suffix in (".md", ".txt")}


def chroma_texts() -> dict[str, str]:
    """The benchmark corpora from ../shared/data (present on every dev and CI machine)."""
    if not CHROMA.is_dir():
        pytest.skip(f"{CHROMA} not present")
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CHROMA.glob("*.md"))}
