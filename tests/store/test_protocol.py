"""The storage interface (store/base.py) is what the backends implement and what the library calls,
exactly: no caller outside ``store/`` uses a store method the protocol does not declare (the drift
this pins: ingest called ``write_streamed`` and ``chunk_keys_of`` on stores while ``Store`` named
neither), each backend's class has every protocol method with the protocol's signature, and a
public method of a backend that is in no protocol is a stated exception below, with its reason."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from chunkwise.store import open_store
from chunkwise.store.base import Capabilities, LocalRanker, ServerRanker, Store
from chunkwise.store.sqlite.sqlite import SQLiteStore
from chunkwise.store.writing import WritePrimitives

SRC = Path(__file__).resolve().parents[2] / "src" / "chunkwise"

# Public methods of a backend outside its protocols, each with why it stays off the interface.
EXTRAS = {
    "SQLiteStore": {
        "commit": "what batch() yields to end its transaction (Store.batch's commit callable)",
    },
    "PostgresStore": {
        "row_security": "PostgreSQL's administration (pg-secure): api opens PostgresStore by name for it",
        # LocalRanker's reads that PostgreSQL answers too: the contract tests compare both backends'
        # (tests/store/test_contract.py, test_store_interface.py); the retriever never calls them on it.
        "lexical_row_sizes": "cross-backend parity checks",
        "servable_rows": "cross-backend parity checks",
        "term_count": "cross-backend parity checks",
        "term_matches": "cross-backend parity checks",
    },
}


def _methods(protocol) -> dict:
    return {n: v for n, v in vars(protocol).items() if not n.startswith("_") and callable(v)}


def _members(protocol) -> set[str]:
    return set(_methods(protocol)) | set(getattr(protocol, "__annotations__", {}))


def _shape(function) -> list[tuple]:
    """Parameter names, kinds and defaults (annotations are documentation: implementations may
    leave a parameter untyped)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(inspect.unwrap(function)).parameters.values()]


def _public(cls) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and (callable(getattr(cls, n)) or isinstance(
        inspect.getattr_static(cls, n), property))}


def _backends():
    from chunkwise.store.postgres.postgres import PostgresStore  # importing it needs no driver, no server

    return [(SQLiteStore, LocalRanker), (PostgresStore, ServerRanker)]


@pytest.mark.parametrize("index", [0, 1], ids=["sqlite", "postgresql"])
def test_each_backend_class_has_the_protocol_with_its_signatures_and_nothing_unstated(index):
    cls, ranker = _backends()[index]
    for protocol in (Store, ranker):
        for name, declared in _methods(protocol).items():
            assert hasattr(cls, name), f"{cls.__name__} lacks {protocol.__name__}.{name}"
            assert _shape(getattr(cls, name)) == _shape(declared), (
                f"{cls.__name__}.{name}{inspect.signature(getattr(cls, name))} is not "
                f"{protocol.__name__}.{name}{inspect.signature(declared)}")
    extras = EXTRAS[cls.__name__]
    # WritePrimitives: what the shared writer (store/writing.py) asks of the backend, not callers.
    unstated = _public(cls) - _members(Store) - _members(ranker) - _members(WritePrimitives) - set(extras)
    assert not unstated, f"{cls.__name__}: public methods in no protocol: {sorted(unstated)}; declare them in " \
                         f"store/base.py or make them private"
    stale = [n for n in extras if n not in _public(cls) or n in _members(Store) | _members(ranker)]
    assert not stale, f"EXTRAS names what is gone or now declared: {stale}"


def test_an_open_store_has_the_typed_attributes(db_location):
    with open_store(db_location) as store:
        assert isinstance(store.location, str) and isinstance(store.opens_with, str)
        assert isinstance(store.capabilities, Capabilities)
        ranker = ServerRanker if store.capabilities.native_search else LocalRanker
        assert all(callable(getattr(store.ranker, n)) for n in _methods(ranker))
        assert store.capabilities.backend == ("postgresql" if store.capabilities.native_search else "sqlite")


def _store_uses(tree: ast.AST):
    """(line, method) of every ``<...>store.NAME`` / ``<...>ranker.NAME`` in a module: a store (or
    its ranker) is named ``store``, ``self.store``, ``retriever.store``, ``self._status_store``..."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
        chain = base
        while isinstance(chain, ast.Attribute):
            chain = chain.value
        if isinstance(chain, ast.Name) and chain.id == "chunkwise":  # a module path, not a store
            continue
        if name.endswith("store") or name == "ranker":
            yield node.lineno, node.attr


def test_the_library_calls_only_what_the_protocols_declare():
    declared = _members(Store) | _members(LocalRanker) | _members(ServerRanker)
    undeclared = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "store":  # the backends themselves
            continue
        for line, attr in _store_uses(ast.parse(path.read_text(encoding="utf-8"))):
            if attr not in declared:
                undeclared.append(f"{path.relative_to(SRC)}:{line}: .{attr}")
    assert not undeclared, "store methods called but not declared in store/base.py: " + ", ".join(undeclared)


def test_the_scan_finds_an_undeclared_call():
    """The scan above is not vacuous: the calls it exists for are seen, and judged."""
    tree = ast.parse("def f(self, store):\n    store.chunk_keys_of('d')\n    self.store.write_document(1, 2)\n"
                     "    self.ranker.term_rows('x')\n    chunkwise.store.open_store('x')\n"
                     "    r.store.visible_records('d', g)\n    self._status_store.iter_chunks()\n")
    assert sorted(_store_uses(tree)) == [(2, "chunk_keys_of"), (3, "write_document"), (4, "term_rows"),
                                         (6, "visible_records"), (7, "iter_chunks")]
    declared = _members(Store) | _members(LocalRanker) | _members(ServerRanker)
    # what the eighth session folded away is undeclared now: a caller left on it fails the scan
    gone = {"chunk_keys_of", "write_streamed", "visible_records", "visible_count", "missing_vectors", "start_run",
            "finish_run", "chunks_by_key", "document_chunks", "iter_chunks"}
    assert not gone & declared and {"write_document", "doc_id_owner", "term_rows", "chunks", "run"} <= declared
