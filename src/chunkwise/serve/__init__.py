"""``chunkwise serve``: an HTTP service over one store (search, documents, OpenAI-compatible
embeddings, a web page). Needs the ``serve`` extra (FastAPI, uvicorn); nothing heavy is imported
until ``run`` or ``create_app`` is called.
"""
from __future__ import annotations

SERVE_INSTALL_HINT = "pip install 'chunkwise[serve]'"


def run(*args, **kwargs) -> int:
    """Start the service (see chunkwise.serve.start.run)."""
    from chunkwise.serve.start import run as _run

    return _run(*args, **kwargs)


def create_app(*args, **kwargs):
    """The ASGI application for an Engine and a GroupSource (see chunkwise.serve.app)."""
    from chunkwise.serve.app import create_app as _create

    return _create(*args, **kwargs)
