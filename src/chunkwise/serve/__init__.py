"""``chunkwise serve``: an HTTP service over one store (search, documents, OpenAI-compatible
embeddings, a web page). Needs the ``serve`` extra (FastAPI, uvicorn). Importing this package loads
nothing: ``chunkwise.serve.start.run`` starts the service, ``chunkwise.serve.app.create_app`` builds
the ASGI app for an ``Engine`` and a groups policy.
"""
