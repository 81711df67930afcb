"""Drop-in pieces for LangChain, LlamaIndex and Haystack, built on ``chunkwise.api`` only.

Each framework is an optional extra (``pip install 'chunkwise[langchain]'``, ``[llamaindex]``,
``[haystack]``) and is imported only when its module is: importing this package loads none of them.

- ``chunkwise.integrations.langchain``: ``ChunkwiseSplitter`` (a TextSplitter), ``ChunkwiseRetriever``
- ``chunkwise.integrations.llamaindex``: ``ChunkwiseNodeParser``, ``ChunkwiseRetriever``
- ``chunkwise.integrations.haystack``: ``ChunkwiseSplitter``, ``ChunkwiseRetriever`` (components)
"""
