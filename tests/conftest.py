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


# -- PostgreSQL (issue 12): one real server per test session, a fresh database per test -------------
BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL 16 + pgvector server from the ``pgserver`` package (binaries in the wheel: no
    system install, no network), in a temporary folder, listening on a Unix socket only; stopped
    when the session ends, whatever happened. Durability is relaxed (no fsync): a test database is
    thrown away, and crash tests kill the *ingest*, never the server. Not under pytest's own
    temporary folder: as root, the server runs as another user, and every pytest session resets
    that folder's permissions to owner-only."""
    pytest.importorskip("pgserver", reason="PostgreSQL tests need the pg extra: pip install -e '.[test]'")
    import psycopg
    from pg_servers import temporary_server

    with temporary_server("chunkwise-pg-") as srv:
        with psycopg.connect(srv.get_uri(), autocommit=True) as admin:
            for name, value in (("fsync", "off"), ("synchronous_commit", "off"), ("full_page_writes", "off")):
                admin.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            admin.execute("SELECT pg_reload_conf()")
            admin.execute("DROP DATABASE IF EXISTS chunkwise_template")
            admin.execute("CREATE DATABASE chunkwise_template")
        with psycopg.connect(srv.get_uri("chunkwise_template"), autocommit=True) as tpl:
            tpl.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield srv


class PgDatabases:
    """Makes fresh, empty databases on the session's server (dropped when the test ends)."""

    def __init__(self, srv) -> None:
        self.srv, self.made = srv, []

    def new(self) -> str:
        import uuid

        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.srv.get_uri(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name} TEMPLATE chunkwise_template")
            # raw reads in tests (tests/backends.py, rls.py) see a store's own schema first, as the store does
            admin.execute(f"ALTER DATABASE {name} SET search_path = chunkwise, public")
        self.made.append(name)
        return self.srv.get_uri(name)

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.srv.get_uri(), autocommit=True) as admin:
            for name in self.made:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_databases(pg_server):
    dbs = PgDatabases(pg_server)
    yield dbs
    dbs.drop()


@pytest.fixture
def pg_url(pg_databases) -> str:
    """The URL of a fresh, empty PostgreSQL database for this test."""
    return pg_databases.new()


@pytest.fixture
def own_pg():
    """A PostgreSQL server of this test's own, with an empty database ``pg_servers.OWN_DB``, for a test
    that restarts or stops it (tests/pg_servers.py)."""
    pytest.importorskip("pgserver", reason="PostgreSQL tests need the pg extra: pip install -e '.[test]'")
    from pg_servers import own_server

    with own_server() as srv:
        yield srv


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def new_location(backend, tmp_path, request):
    """Makes more stores of the test's backend: ``new_location()`` -> a fresh path or database URL."""
    made = []

    def make() -> str:
        made.append(None)
        if backend == "sqlite":
            return str(tmp_path / f"store{len(made)}.db")
        return request.getfixturevalue("pg_databases").new()

    return make


def module_location(request, tmp_path_factory, backend: str) -> str:
    """A store location that lives as long as the requesting (module- or class-scoped) fixture."""
    if backend == "sqlite":
        return str(tmp_path_factory.mktemp("db") / "index.db")
    dbs = PgDatabases(request.getfixturevalue("pg_server"))
    request.addfinalizer(dbs.drop)
    return dbs.new()


@pytest.fixture
def db_location(backend, tmp_path, request):
    """Where a test's store lives, once per backend: a SQLite file, or a fresh PostgreSQL database."""
    if backend == "sqlite":
        return str(tmp_path / "index.db")
    return request.getfixturevalue("pg_url")
