import os
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# Every run, CI included, first replays the committed example database (tests/.hypothesis-db: every
# failure found so far, pinned; commit what a failing run adds there) and then explores fresh random
# examples, so CI keeps looking instead of re-running one fixed set. A red build prints the failing
# example and its reproduction blob (@reproduce_failure); the shrunk example is saved to the
# database and should also become an explicit @example in the test. HYPOTHESIS_PROFILE=replay runs
# only the explicit and saved examples (fast, deterministic); =explore is the default.
EXAMPLES_DB = DirectoryBasedExampleDatabase(str(Path(__file__).resolve().parent / ".hypothesis-db"))
for _name in ("explore", "ci"):  # the same on purpose: CI explores as a developer's run does
    settings.register_profile(_name, database=EXAMPLES_DB, derandomize=False, print_blob=True)
settings.register_profile("replay", database=EXAMPLES_DB, derandomize=False, print_blob=True,
                          phases=[Phase.explicit, Phase.reuse])
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


def words(text: str) -> int:
    """A whitespace word count: the token unit of the hand-made retrieval tests."""
    return len(text.split())


class ItemSource:
    """A ChunkSource over hand-made Items: what expansion and assembly read from a store."""

    def __init__(self, items, version="v1"):
        self.items, self.version = items, version

    def document_version(self, doc_id):
        return self.version

    def doc_chunks(self, doc_id):
        return [it for it in self.items if it.doc_id == doc_id]


@pytest.fixture(scope="session")
def examples() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.iterdir())
            if p.is_file() and p.suffix in (".md", ".txt")}


def chroma_texts() -> dict[str, str]:
    """The benchmark corpora from ../shared/data (present on every dev and CI machine)."""
    if not CHROMA.is_dir():
        pytest.skip(f"{CHROMA} not present")
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(CHROMA.glob("*.md"))}
