"""Session fixtures: one real store and one real server per groups mode, shared by the serve tests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .serving import TOKENS, Server, make_store


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("serve-store"))


@pytest.fixture(scope="session")
def tokens_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    path.write_text(json.dumps(TOKENS), encoding="utf-8")
    return path


def _server(store, tmp_path_factory, *flags):
    server = Server(store, *flags, log=tmp_path_factory.mktemp("serve-log") / "serve.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def header_server(store, tmp_path_factory):
    yield from _server(store, tmp_path_factory, "--trust-groups-header")


@pytest.fixture(scope="session")
def body_server(store, tmp_path_factory):
    yield from _server(store, tmp_path_factory, "--insecure-groups-in-body")


@pytest.fixture(scope="session")
def tokens_server(store, tokens_file, tmp_path_factory):
    yield from _server(store, tmp_path_factory, "--tokens", str(tokens_file))
