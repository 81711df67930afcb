"""Where the recursive chunker's CPU time goes, stage by stage (issue 26 item 7).

Why: the targets compare chunkwise's recursive chunker with Chonkie (tokens) and LangChain
(characters). This splits chunkwise's own time into stages, so the floor a stage cannot go below
(one tokenizer pass over the text, the boundary scans) is told apart from the packer's walk.

Method: one untimed ``chunk()`` per text records what each stage is given: the cuts found up front
(paragraphs and lines), the sentence finder's calls (which stretches it searched), the sizer's
``count_spans`` calls (how many spans, how many characters) and the packed rows. Each stage is then
replayed alone on those inputs, best of ``--repeat`` CPU seconds; "walk and the rest" is the whole
``chunk()`` minus the stages. For reference: one count of every text, whole (the least any token
counting can cost), and the packer's counts made one slice at a time on the calling thread (what
tokie's batch thread pool would cost if it were not used). The configurations are
``benchmarks/chunking.py``'s.

Run: ``PYTHONPATH=src python benchmarks/recursive_stages.py [--corpora DIR] [--repeat 7]``
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from _timing import timed

from chunkwise.chunking import recursive
from chunkwise.chunking.codes import forget as forget_codes
from chunkwise.chunking.levels import Level
from chunkwise.pipeline.chunk import make_chunker

CORPORA = Path(__file__).resolve().parent.parent / ".." / "shared" / "data" / "chroma" / "corpora"
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]
CONFIGS = {
    "recursive@256 tokens (tokie)": dict(strategy="recursive", size=256, overlap=0, unit="tokens",
                                         tokenizer="minilm", backend="tokie"),
    "recursive@800 chars": dict(strategy="recursive", size=800, overlap=0, unit="chars", separators=SEPARATORS),
}


def best(run, repeat: int) -> float:
    return min(timed(run)[1] for _ in range(repeat))


def record(chunker, texts: list[str]):
    """Each text's chunker (``for_text``), the finder calls, the count calls and the rows of one run."""
    finds: list[list[tuple[int, int]]] = []
    counts: list[tuple] = []
    make_finder = recursive._sentence_finder

    def recording_finder(seps):
        inner = make_finder(seps)

        def find(text, start, end):
            finds[-1].append((start, end))
            return inner(text, start, end)

        return find

    recursive._sentence_finder = recording_finder
    chunkers, rows = [], []
    try:
        for text in texts:
            ch = chunker.for_text(text)
            sizer = ch.sizer
            original = sizer.count_spans

            def count_spans(t, starts, ends, original=original):
                counts.append((sizer, t, list(starts), list(ends)))
                return original(t, starts, ends)

            finds.append([])
            object.__setattr__(sizer, "count_spans", count_spans)  # frozen dataclass sizers too
            try:
                rows.append(ch.rows(text, ch.title_of(text)))
            finally:
                object.__delattr__(sizer, "count_spans")
            chunkers.append(ch)
    finally:
        recursive._sentence_finder = make_finder
    return chunkers, finds, counts, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    texts = [(args.corpora / f).read_text(encoding="utf-8") for f in sorted(os.listdir(args.corpora))
             if f.endswith(".md")]
    load = os.getloadavg()
    print(f"texts: {len(texts)} ({sum(len(t.encode()) for t in texts) / 1e6:.2f} MB); CPU s, best of "
          f"{args.repeat}; load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
    for name, options in CONFIGS.items():
        chunker = make_chunker(**options)
        for text in texts:
            chunker.chunk(text)  # warm: tokenizer tables, compiled patterns
        chunkers, finds, counts, rows = record(chunker, texts)
        seps = tuple(s for s in options.get("separators") or recursive.DEFAULT_SEPARATORS
                     if recursive.separator_level(s) == Level.SENTENCE)
        whole = best(lambda: [chunker.chunk(t) for t in texts], args.repeat)

        def cuts():
            for ch, t in zip(chunkers, texts):
                ch.top_cuts(t)
                forget_codes(t)  # as ``chunk()`` does: the code points array is made again each time

        def sentences():
            for t, calls in zip(texts, finds):
                find = recursive._sentence_finder(seps)
                for a, b in calls:
                    find(t, a, b)
                forget_codes(t)

        def counting():
            for sizer, t, starts, ends in counts:
                sizer.count_spans(t, starts, ends)

        def finalize():
            for ch, t, r in zip(chunkers, texts, rows):
                ch.finalize_rows(t, r, ch.title_of(t))

        stages = {"cuts: paragraphs and lines (top_cuts)": best(cuts, args.repeat),
                  "sentence finder (its calls)": best(sentences, args.repeat),
                  "counting (the packer's count_spans calls)": best(counting, args.repeat),
                  "finalize_rows (chunks from rows)": best(finalize, args.repeat)}
        n_spans = sum(len(c[2]) for c in counts)
        n_chars = sum(b - a for c in counts for a, b in zip(c[2], c[3]))
        print(f"#### {name}: {sum(map(len, rows))} chunks\n")
        print("| stage | CPU s | share |\n|---|--:|--:|")
        print(f"| whole chunk() | {whole:.4f} | 100% |")
        for stage, cpu in stages.items():
            print(f"| {stage} | {cpu:.4f} | {cpu / whole:.0%} |")
        rest = whole - sum(stages.values())
        print(f"| walk and the rest (whole minus the above) | {rest:.4f} | {rest / whole:.0%} |")
        if options["unit"] == "tokens":
            fast = chunker.sizer._fast
            once = best(lambda: [fast.count_tokens(t) for t in texts], args.repeat)
            print(f"| for reference: tokie count_tokens of each whole text once | {once:.4f} | {once / whole:.0%} |")

            def serial():  # the same slices, one count_tokens call each: no batch thread pool
                for _, t, starts, ends in counts:
                    [fast.count_tokens(t[a:b]) for a, b in zip(starts, ends)]

            one = best(serial, args.repeat)
            print(f"| for reference: the packer's counts on one thread (count_tokens a slice) | {one:.4f} | "
                  f"{one / whole:.0%} |")
        print(f"\ncount_spans: {len(counts)} calls, {n_spans} spans, {n_chars} characters "
              f"({n_chars / sum(map(len, texts)):.2f}x the text); sentence finder: "
              f"{sum(map(len, finds))} calls on {sum(b - a for f in finds for a, b in f)} characters\n")


if __name__ == "__main__":
    main()
