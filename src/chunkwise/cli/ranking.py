"""Ranking flags shared by search, eval and serve: BM25 field weights and hybrid fusion weights."""
from __future__ import annotations

import argparse

from chunkwise import api


def add_ranking_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--field-weights", default=None, metavar="title=N,heading=N",
                   help="BM25 weight of a term in the document title and in the heading path, relative to the "
                        "embedded text (default title=2,heading=1.5; 0 turns a field off)")
    p.add_argument("--fusion", default=None, metavar="bm25=N,dense=N",
                   help="hybrid: weighted reciprocal rank fusion of the BM25 and dense lists "
                        "(default bm25=1,dense=0.5; k=N sets the RRF constant, default 60)")
    p.add_argument("--rerank", default=None, metavar="SPEC",
                   help="a second stage over the permitted candidates: tei:URL (text-embeddings-inference "
                        "/rerank) or cohere:URL#MODEL / jina:URL#MODEL (/rerank with documents and top_n); "
                        "the key from CHUNKWISE_RERANK_API_KEY")
    p.add_argument("--rerank-depth", type=int, default=None, metavar="N",
                   help="how many first-stage hits the reranker reorders (default 20, at most 200)")


def ranking_options(args: argparse.Namespace, search_table) -> dict:
    """``field_weights`` and ``fusion`` from the flags, else the config's [search] table (validated:
    a bad value is a ConfigError, exit 2)."""
    out = {}
    for key, parse in (("field_weights", api.FieldWeights.parse), ("fusion", api.Fusion.parse)):
        value = getattr(args, key, None)
        if value is not None:
            out[key] = parse(value)
        elif key in search_table:
            out[key] = search_table[key]
    return out


def rerank_options(args: argparse.Namespace) -> dict:
    """``reranker`` and ``rerank_depth`` for a Retriever, from the flags (validated when it opens)."""
    out = {}
    if getattr(args, "rerank", None) is not None:
        out["reranker"] = args.rerank
    if getattr(args, "rerank_depth", None) is not None:
        out["rerank_depth"] = args.rerank_depth
    return out


def add_engine_flags(p) -> None:
    """The search-engine flags a long-running server takes (``serve``, ``mcp``): BM25 engine, the
    budget's tokenizer, the ranking flags and the config file that holds field weights and fusion."""
    p.add_argument("--bm25", default="fts5", choices=("fts5", "sparse"), help="BM25 engine (default fts5)")
    p.add_argument("--generator-tokenizer", default=None, help="tokenizer the context budget counts in")
    add_ranking_flags(p)
    p.add_argument("--config", help="chunkwise.toml ([search] field_weights, fusion)")
