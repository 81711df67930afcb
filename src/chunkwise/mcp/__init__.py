"""``chunkwise mcp``: a Model Context Protocol server over one store (the official ``mcp`` SDK).

A thin layer like ``chunkwise serve``: tools ``search`` and ``fetch`` and the caller's documents as
resources, over the same long-lived Retriever (``chunkwise.serve.engine.Engine``). The caller's
groups come from the server's configuration (``--groups``) or its authenticated HTTP transport (a
bearer token mapped to groups, or a gateway's header), never from tool arguments. Needs the ``mcp``
extra; importing this package loads nothing. It reaches the library through serve (the Engine,
auth, hosts, models), never the ``api`` facade itself, and takes only the core types straight
(``errors``, the tag grammar of ``access``), as serve does: the front doors that import the
facade are cli, serve and integrations (``arch_check.py``).
"""
