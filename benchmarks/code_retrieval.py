"""Code retrieval (issue 29 item 3): docstrings as queries, the documented definition as the answer.

Why: a chunker for code is only as good as what a retriever finds with it. A docstring or doc comment
says in words what its function or class does, so it is a real question with a known answer: the
question is the doc's first paragraph, the doc is stripped from the indexed file (every documented
definition's doc, so no chunk holds a question's own words), and the gold span is the definition
itself (signature to end) in the stripped file. Definitions over ``--max-gold`` MiniLM tokens are not
asked about: no chunk of a 256-token chunker could hold them whole.

Contenders, side by side in one process on the same files: chunkwise ``code`` (with and without a
``full`` header: file name and enclosing class/function path), ``recursive`` (same), ``auto`` (what
ingest routes a source file to), LangChain's ``RecursiveCharacterTextSplitter.from_language`` and
LlamaIndex's ``CodeSplitter`` (given chunkwise's tree-sitter parser for the language). chunkwise and
LangChain count MiniLM tokens (``--size``, the default config's 254); LlamaIndex counts characters (``max_chars`` = 4 x size).
Chonkie's CodeChunker needs tree-sitter-language-pack, which this machine does not have: skipped.

Retrieval is the default embedder (``minilm-onnx-int8``) by cosine over every chunk of the split's
repositories, and a hybrid (that ranking fused by reciprocal rank with BM25 on chunkwise's analyser,
k=60). Scores: ``P@5`` = the gold definition lies whole in the text of the top 5 chunks (their union,
same file); ``@ctx`` = the same for the chunks taken in rank order while their tokens fit
``--context`` MiniLM tokens (equal context: a chunker with small chunks gets more of them); MRR of the
first chunk that completes the answer. Tune/test are split by repository (``REPOS``).

Repositories are not shipped: clone each ``REPOS`` entry (owner/name) and check out the pinned commit,
into ``--repos DIR`` as ``DIR/<owner>+<name>/repo`` (a bare clone works: files are read with
``git show``). Vectors are cached in ``benchmarks/.cache/code_retrieval.sqlite``.

Run: ``python benchmarks/code_retrieval.py --repos DIR [--split test] [--size 254] [--json FILE]``
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from chunkwise import api  # noqa: E402
from chunkwise.chunking import code as code_mod  # noqa: E402
from chunkwise.config import DEFAULT_SIZE, ChunkConfig  # noqa: E402

# owner/name, pinned commit, language, file suffix, split, path filter (excluded when it matches)
REPOS = [
    ("psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e", "python", ".py", "tune", r"^(tests|docs)/"),
    ("spf13/cobra", "adbc8813901bba65827259daa8e22ff94ec1f30e", "go", ".go", "tune", r"_test\.go$"),
    ("google/gson", "9835b6f90192f79cdf5300c528fc6212455fb6c1", "java", ".java", "test", r"(/test/|Test|examples|proto)"),
    ("sinatra/sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12", "ruby", ".rb", "test", r"(^test|/test/|spec)"),
    ("guzzle/guzzle", "2779e868a00289e1b1fd854af030c43a06f4bcb4", "php", ".php", "test", r"^(tests|docs|vendor)/"),
    ("serde-rs/json", "827a315bf2198558f0325b07bcc1e2cd973aba2f", "rust", ".rs", "test", r"^(tests|benches|fuzz)/"),
]
DEFS = {
    "python": {"function_definition", "class_definition"},
    "go": {"function_declaration", "method_declaration", "type_declaration"},
    "java": {"method_declaration", "constructor_declaration", "class_declaration", "interface_declaration",
             "enum_declaration"},
    "ruby": {"method", "singleton_method", "class", "module"},
    "php": {"function_definition", "method_declaration", "class_declaration", "interface_declaration",
            "trait_declaration"},
    "rust": {"function_item", "struct_item", "enum_item", "trait_item", "mod_item", "type_item"},
}
LC_LANG = {"python": "PYTHON", "go": "GO", "java": "JAVA", "ruby": "RUBY", "php": "PHP", "rust": "RUST"}
_TAG = re.compile(r"\{@\w+\s+([^}]*)\}|<[^>]+>|`")
_MARK = re.compile(r"^\s*(?:/\*\*|/\*|\*/|\*|///|//!|//|#)\s?")


@dataclass(frozen=True)
class Question:
    qid: str
    doc: str  # repo-relative file, prefixed by the repository
    query: str
    start: int
    end: int


@dataclass
class Corpus:
    texts: dict[str, str]  # doc -> stripped text
    language: dict[str, str]
    questions: list[Question]


def git_files(repo: Path, commit: str, suffix: str, skip: str, limit: int) -> list[tuple[str, str]]:
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", commit], capture_output=True,
                           text=True, check=True).stdout.split("\n")
    names = sorted(n for n in names if n.endswith(suffix) and not re.search(skip, n))
    out = []
    for n in names:
        data = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{n}"], capture_output=True,
                              check=True).stdout
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if 200 < len(text) < 120_000:
            out.append((n, text))
    # the largest files first would favour no one; a fixed, spread sample keeps the run short
    step = max(1, len(out) // limit)
    return out[::step][:limit]


def _doc_text(raw: str) -> str:
    """A doc comment or docstring as words: markers, tags and examples dropped, first paragraph."""
    lines = []
    fence = False
    for line in raw.strip().strip('"\'').split("\n"):
        line = _MARK.sub("", line).removesuffix("*/").strip()
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if line.startswith(("@", ":param", ":return", "Args:", "Returns:", "# Example", "# Errors", ">>>", "Usage:")):
            break
        if not line:
            if lines:
                break
            continue
        lines.append(line)
    text = _TAG.sub(lambda m: m.group(1) or "", " ".join(lines))
    return " ".join(text.split())[:400]


def documented(text: str, lang: str):
    """(definition start, end, doc ranges to strip, query) for every documented definition."""
    parser = code_mod._parser(lang)
    tree = parser.parse(text.encode("utf-8"))
    lines = code_mod._Lines(text, lang)
    out = []

    def walk(node):
        kids = node.children
        for i, kid in enumerate(kids):
            if kid.type in DEFS[lang]:
                a, b = lines.at(kid.start_point), lines.at(kid.end_point)
                doc = None
                if lang == "python":
                    body = kid.child_by_field_name("body")
                    first = body.named_children[0] if body is not None and body.named_children else None
                    if (first is not None and first.type == "expression_statement" and first.named_children
                            and first.named_children[0].type == "string" and len(body.named_children) > 1):
                        s = lines.start(first.start_point[0])
                        e = lines.start(first.end_point[0] + 1) if first.end_point[0] + 1 < len(lines.starts) else len(text)
                        doc = ([(s, e)], text[lines.at(first.start_point):lines.at(first.end_point)])
                else:
                    j = i - 1
                    run = []
                    row = kid.start_point[0]
                    while j >= 0 and "comment" in kids[j].type and kids[j].end_point[0] >= row - 1:
                        run.append(kids[j])
                        row = kids[j].start_point[0]
                        j -= 1
                    if lang == "rust":
                        run = [c for c in run if text[lines.at(c.start_point):].startswith(("///", "/**"))]
                    if run:
                        run.reverse()
                        s = lines.start(run[0].start_point[0])
                        end = run[-1].end_point  # a Rust line comment ends at the next line's start
                        e = lines.start((end[0] if end[1] else end[0] - 1) + 1)
                        if not text[s:lines.at(run[0].start_point)].strip():
                            doc = ([(s, e)], "\n".join(text[lines.at(c.start_point):lines.at(c.end_point)] for c in run))
                if doc is not None:
                    query = _doc_text(doc[1])
                    if len(query.split()) >= 4:
                        out.append((a, b, doc[0], query))
            walk(kid)

    walk(tree.root_node)
    return out


def strip(text: str, spans: list[tuple[int, int]]) -> tuple[str, callable]:
    """``text`` without ``spans`` and a map from old offsets to new ones."""
    spans = sorted(set(spans))
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    parts, pos = [], 0
    for s, e in merged:
        parts.append(text[pos:s])
        pos = e
    parts.append(text[pos:])

    def where(x: int) -> int:
        return x - sum(min(e, x) - s for s, e in merged if s < x)

    return "".join(parts), where


def build(repos_dir: Path, split: str, files_per_repo: int, max_gold: int, sizer) -> Corpus:
    texts, langs, questions = {}, {}, []
    for name, commit, lang, suffix, side, skip in REPOS:
        if split != "all" and side != split:
            continue
        repo = repos_dir / name.replace("/", "+") / "repo"
        if not repo.exists():
            repo = repos_dir / name.replace("/", "+")
        for path, text in git_files(repo, commit, suffix, skip, files_per_repo):
            found = documented(text, lang)
            if not found:
                continue
            new, where = strip(text, [r for _, _, rs, _ in found for r in rs])
            doc = f"{name}/{path}"
            texts[doc], langs[doc] = new, lang
            for a, b, _, query in found:
                s, e = where(a), where(b)
                if sizer.count(new[s:e]) <= max_gold:
                    qid = hashlib.sha256(f"{doc}\x1f{s}".encode()).hexdigest()[:12]
                    questions.append(Question(qid, doc, query, s, e))
    return Corpus(texts, langs, questions)


class Vectors:
    """Default-embedder vectors in one SQLite file, keyed by sha256(model, text)."""

    def __init__(self, path: Path, model: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self.model = model
        self.embedder = None
        self.embedded = 0

    def get(self, texts: list[str]):
        import numpy as np

        keys = [hashlib.sha256(f"{self.model}\x1f{t}".encode()).hexdigest() for t in texts]
        found: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            found.update(self.db.execute(f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})", part))
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in found}.items())
        if todo:
            if self.embedder is None:
                from chunkwise.embed import make_embedder

                self.embedder = make_embedder(self.model, allow_truncation=True)  # peers exceed the window
            for i in range(0, len(todo), 256):
                batch = todo[i:i + 256]
                vecs = np.asarray(self.embedder.embed([t for _, t in batch]), dtype=np.float32)
                rows = [(k, v.tobytes()) for (k, _), v in zip(batch, vecs)]
                self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
                self.db.commit()
                found.update(rows)
                self.embedded += len(batch)
                print(f"    embedded {self.embedded} new texts", file=sys.stderr, flush=True)
        m = np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def contenders(size: int):
    """name -> f(text, language, title) -> [(start, end, embedded text)]."""
    out = {}

    def cw(strategy: str, header: str = "none"):
        cache = {}

        def run(text, lang, title):
            key = (lang, title)
            if key not in cache:
                cache[key] = api.make_chunker(ChunkConfig(strategy=strategy, size=size, header=header, title=title,
                                                          language=lang, format="code"))
            ch = cache[key]
            return [(c.start_char, c.end_char, c.embed_text) for c in ch.chunk(text)]
        return run

    out["chunkwise code"] = cw("code")
    out["chunkwise code +full header"] = cw("code", "full")
    out["chunkwise recursive"] = cw("recursive")
    out["chunkwise recursive +full header"] = cw("recursive", "full")
    out["chunkwise auto (routes to code)"] = cw("auto")
    sizer = api.make_chunker(ChunkConfig(size=size)).sizer
    try:
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        lc = {}

        def langchain(text, lang, title):
            sp = lc.setdefault(lang, RecursiveCharacterTextSplitter.from_language(
                getattr(Language, LC_LANG[lang]), chunk_size=size, chunk_overlap=0, length_function=sizer.count,
                add_start_index=True))
            return [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content), d.page_content)
                    for d in sp.create_documents([text])]
        out["LangChain from_language"] = langchain
    except ImportError as exc:
        print(f"LangChain skipped: {exc}", file=sys.stderr)
    try:
        from llama_index.core import Document as LDoc
        from llama_index.core.node_parser import CodeSplitter

        li = {}

        def llama(text, lang, title):
            sp = li.setdefault(lang, CodeSplitter(
                language=lang, max_chars=4 * size, parser=code_mod._parser(lang),
                tokenizer=lambda t: [0] * sizer.count(t)))  # its default tokenizer downloads cl100k_base
            out, pos = [], 0
            for node in sp.get_nodes_from_documents([LDoc(text=text)]):
                t = node.get_content()
                s = text.find(t, pos)
                if s < 0:
                    s = text.find(t)
                if s < 0:
                    continue
                out.append((s, s + len(t), t))
                pos = s + 1
            return out
        out["LlamaIndex CodeSplitter"] = llama
    except ImportError as exc:
        print(f"LlamaIndex skipped: {exc}", file=sys.stderr)
    return out, sizer


def evaluate(corpus: Corpus, run, vectors: Vectors, sizer, k: int, context: int) -> dict:
    import numpy as np
    from rank_bm25 import BM25Okapi

    from chunkwise.lexical import analyze, query_terms

    t0 = time.process_time()
    chunks = []  # (doc, start, end, embedded text)
    for doc, text in corpus.texts.items():
        for s, e, emb in run(text, corpus.language[doc], doc.rsplit("/", 1)[-1]):
            chunks.append((doc, s, e, emb))
    cpu = time.process_time() - t0
    mat = vectors.get([c[3] for c in chunks])
    qv = vectors.get([q.query for q in corpus.questions])
    bm25 = BM25Okapi([analyze(c[3]) or ["\x00"] for c in chunks])
    tokens = sizer.count_many([corpus.texts[c[0]][c[1]:c[2]] for c in chunks])
    res = {}
    per: dict[str, dict[str, list[float]]] = {}  # mode -> metric -> per question (paired comparisons)
    for mode in ("dense", "hybrid"):
        hits5 = hitctx = rr = 0.0
        ctx_used = []
        per[mode] = {"P@5": [], "@ctx": []}
        for qi, q in enumerate(corpus.questions):
            dense = mat @ qv[qi]
            order = np.argsort(-dense, kind="stable")
            if mode == "hybrid":
                lex = np.argsort(-bm25.get_scores(query_terms(q.query)), kind="stable")
                score = np.zeros(len(chunks))
                score[order[:200]] += 1.0 / (60 + np.arange(1, 201))
                score[lex[:200]] += 1.0 / (60 + np.arange(1, 201))
                order = np.argsort(-score, kind="stable")
            first = None
            spans: list[tuple[int, int]] = []
            used = 0
            in_ctx = None
            for rank, ci in enumerate(order[:50], 1):
                doc, s, e, _ = chunks[ci]
                if in_ctx is None and used + tokens[ci] > context:
                    in_ctx = _covers(spans, q.start, q.end)
                used += tokens[ci]
                if doc == q.doc:
                    spans.append((s, e))
                if first is None and _covers(spans, q.start, q.end):
                    first = rank
                if rank == k:
                    hits5 += _covers(spans, q.start, q.end)
                    per[mode]["P@5"].append(float(_covers(spans, q.start, q.end)))
            hitctx += bool(in_ctx) if in_ctx is not None else bool(first)
            per[mode]["@ctx"].append(float(bool(in_ctx) if in_ctx is not None else bool(first)))
            rr += 1.0 / first if first else 0.0
        n = len(corpus.questions)
        res[mode] = {"P@5": round(100 * hits5 / n, 1), "@ctx": round(100 * hitctx / n, 1), "MRR": round(rr / n, 3)}
    return {"chunks": len(chunks), "mean_tokens": round(sum(tokens) / max(1, len(tokens)), 1),
            "cpu_chunking_s": round(cpu, 2), **res, "per_question": per}


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean and standard error (points) of a - b over the same questions."""
    d = [100 * (x - y) for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1) if n > 1 else 0.0
    return round(mean, 1), round((var / n) ** 0.5, 1)


def _covers(spans, a: int, b: int) -> bool:
    """Whether the union of ``spans`` covers ``[a, b)`` (whitespace at the gold's edges aside)."""
    pos = a
    for s, e in sorted(spans):
        if s > pos:
            break
        pos = max(pos, e)
        if pos >= b:
            return True
    return pos >= b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", required=True, type=Path, help="folder holding <owner>+<name>/repo clones")
    ap.add_argument("--split", default="test", choices=["tune", "test", "all"])
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE, help="MiniLM tokens (default: the default config's)")
    ap.add_argument("--context", type=int, default=1280, help="equal-context budget, MiniLM tokens")
    ap.add_argument("--files", type=int, default=12, help="files sampled per repository")
    ap.add_argument("--max-gold", type=int, default=192)
    ap.add_argument("--only", help="contenders whose name contains one of these (comma-separated)")
    ap.add_argument("--json")
    args = ap.parse_args()
    runs, sizer = contenders(args.size)
    corpus = build(args.repos, args.split, args.files, args.max_gold, sizer)
    vectors = Vectors(HERE / ".cache" / "code_retrieval.sqlite", "minilm-onnx-int8")
    langs = sorted(set(corpus.language.values()))
    print(f"{args.split}: {len(corpus.texts)} files ({', '.join(langs)}), {len(corpus.questions)} questions; "
          f"size {args.size} MiniLM tokens, context {args.context}")
    rows = []
    for name, run in runs.items():
        if args.only and not any(part in name for part in args.only.split(",")):
            continue
        r = {"contender": name, **evaluate(corpus, run, vectors, sizer, 5, args.context)}
        rows.append(r)
        print(f"{name:34} chunks {r['chunks']:5} mean {r['mean_tokens']:6.1f} tok | dense P@5 {r['dense']['P@5']:5.1f} "
              f"@ctx {r['dense']['@ctx']:5.1f} MRR {r['dense']['MRR']:.3f} | hybrid P@5 {r['hybrid']['P@5']:5.1f} "
              f"@ctx {r['hybrid']['@ctx']:5.1f} MRR {r['hybrid']['MRR']:.3f} | cpu {r['cpu_chunking_s']}s", flush=True)
    by = {r["contender"]: r for r in rows}
    for a, b in (("chunkwise code", "chunkwise recursive"), ("chunkwise auto (routes to code)", "chunkwise recursive"),
                 ("chunkwise code +full header", "chunkwise recursive +full header")):
        if a in by and b in by:
            cells = []
            for mode in ("dense", "hybrid"):
                for metric in ("P@5", "@ctx"):
                    d, se = paired(by[a]["per_question"][mode][metric], by[b]["per_question"][mode][metric])
                    cells.append(f"{mode} {metric} {d:+.1f} \u00b1 {se:.1f}")
            print(f"{a} - {b} (paired, points): " + ", ".join(cells))
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "size": args.size, "context": args.context,
                                               "files": len(corpus.texts), "questions": len(corpus.questions),
                                               "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
