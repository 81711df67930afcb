"""`chunkwise chunk --strategy fixed --size 256 --json` on a large file against one tokenizer pass.

Why: issue 26 keeps the target "the CLI path <= 1.5x one pass of the tokenizer over the same text".
The CLI runs end to end in a child process (start-up, imports, tokenizer load, extraction,
normalisation, chunking, records, JSON to /dev/null); the references run in this process on the
same text: one ``encode`` of the whole text by tokie (the backend ``auto`` picks for MiniLM) and by
Hugging Face ``tokenizers``. CPU seconds are the comparable figure on a shared machine (the child's
from ``RUSAGE_CHILDREN``); wall is printed too. A run of the CLI on a one-line file gives the fixed
start-up cost, so the per-MB cost can be read apart from it.

Run: ``PYTHONPATH=src python benchmarks/cli_chunk.py [--copies 4] [--repeat 3] [--corpora DIR]``
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO / ".." / "shared" / "data" / "chroma" / "corpora"


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


PYCACHE: Path | None = None  # --pycache: children write and read byte code there (as an installed package does)


# The same CLI with its contained worker spawned instead of forked (``sandbox.processes.fork_safe``
# answers False): what the fork saves, in the same run.
SPAWNED = ("import sys; import chunkwise.sandbox.processes as p; p.fork_safe = lambda limits: False; "
           "from chunkwise.cli.main import main; sys.exit(main(sys.argv[1:]))")


def cli(path: Path, src: Path = REPO / "src", spawned: bool = False) -> tuple[float, float]:
    """(CPU s, wall s) of one CLI run from ``src``, output discarded (the child's CPU includes its
    contained worker's: ``RUSAGE_CHILDREN`` counts every waited-for descendant)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    if PYCACHE is not None:  # else PYTHONDONTWRITEBYTECODE (set on the shared box) compiles every module each run
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE / src.resolve().as_posix().strip("/").replace("/", "_"))
    head = [sys.executable, "-c", SPAWNED] if spawned else [sys.executable, "-m", "chunkwise.cli.main"]
    cmd = [*head, "chunk", "--strategy", "fixed", "--size", "256", "--json", str(path)]
    c0, w0 = child_cpu(), time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, env=env, check=True)
    return child_cpu() - c0, time.perf_counter() - w0


def in_process(run) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - c0, time.perf_counter() - w0


def best(repeat: int, run) -> tuple[float, float]:
    return min((run() for _ in range(repeat)), key=lambda r: r[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--copies", type=int, default=4, help="copies of the concatenated corpora in the file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, default=None,
                    help="another tree's src/ (e.g. from `git archive 2d8a35f src`) run side by side")
    ap.add_argument("--pycache", type=Path, default=None,
                    help="byte-code cache for the CLI runs (warmed by one untimed run each): start-up as an installed "
                         "package has it; without it PYTHONDONTWRITEBYTECODE=1 compiles every module every run")
    ap.add_argument("--pairs", type=int, default=0,
                    help="with --before: this many interleaved runs of both trees (after, before, before, after, ...) "
                         "on each file, min and median CPU: the A/B a loaded machine can still read")
    ap.add_argument("--spawned", action="store_true",
                    help="also run this tree's CLI with its worker spawned instead of forked (what the fork saves)")
    args = ap.parse_args()
    global PYCACHE
    PYCACHE = args.pycache
    text = "".join((args.corpora / f).read_text(encoding="utf-8") for f in sorted(os.listdir(args.corpora))
                   if f.endswith(".md")) * args.copies
    sys.path.insert(0, str(REPO / "src"))
    from chunkwise.models import load_tokenizer, minilm_dir

    import tokie

    path = minilm_dir() / "tokenizer.json"
    tk = tokie.Tokenizer.from_json(str(path))
    tk.no_truncation()
    tk.no_padding()
    hf = load_tokenizer(path)
    with tempfile.TemporaryDirectory() as tmp:
        big, tiny = Path(tmp) / "big.md", Path(tmp) / "tiny.md"
        big.write_text(text, encoding="utf-8")
        tiny.write_text("# One line\n\nA short file.\n", encoding="utf-8")
        mb = len(text.encode("utf-8")) / 1e6
        if PYCACHE is not None:  # warm the byte-code caches, untimed
            cli(tiny)
            if args.before is not None:
                cli(tiny, args.before)
        rows = {
            "tokie encode (ids), in process": best(args.repeat, lambda: in_process(
                lambda: tk.encode(text, add_special_tokens=False))),
            "tokenizers encode (ids), in process": best(args.repeat, lambda: in_process(
                lambda: hf.encode(text, add_special_tokens=False))),
            "chunkwise chunk (one-line file: start-up)": best(args.repeat, lambda: cli(tiny)),
            "chunkwise chunk --strategy fixed --size 256 --json": best(args.repeat, lambda: cli(big)),
        }
        if args.spawned:
            rows["worker spawned: chunkwise chunk (one-line file: start-up)"] = best(
                args.repeat, lambda: cli(tiny, spawned=True))
            rows["worker spawned: chunkwise chunk --strategy fixed --size 256 --json"] = best(
                args.repeat, lambda: cli(big, spawned=True))
        if args.before is not None:
            rows["before: chunkwise chunk (one-line file: start-up)"] = best(args.repeat, lambda: cli(tiny, args.before))
            rows["before: chunkwise chunk --strategy fixed --size 256 --json"] = best(args.repeat,
                                                                                     lambda: cli(big, args.before))
        pairs = _pairs(args.pairs, big, tiny, args.before) if args.pairs and args.before is not None else None
    ref = rows["tokie encode (ids), in process"][0]
    load = os.getloadavg()
    print(f"file: {mb:.2f} MB ({args.copies} copies of the Chroma corpora); best of {args.repeat} by CPU; "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; byte code "
          f"{'cached in ' + str(PYCACHE) if PYCACHE else 'as the environment says (PYTHONDONTWRITEBYTECODE=' + os.environ.get('PYTHONDONTWRITEBYTECODE', '') + ')'}")
    print("| pass | CPU s | wall s | x tokie pass (CPU) |")
    print("|---|--:|--:|--:|")
    for name, (cpu, wall) in rows.items():
        print(f"| {name} | {cpu:.3f} | {wall:.3f} | {cpu / ref:.1f} |")
    startup = rows["chunkwise chunk (one-line file: start-up)"][0]
    whole = rows["chunkwise chunk --strategy fixed --size 256 --json"][0]
    print(f"\nwithout start-up: {(whole - startup):.3f} CPU s = {(whole - startup) / ref:.1f}x the tokie pass; "
          f"{(whole - startup) / mb:.3f} CPU s per MB")
    if args.before is not None:
        b_start = rows["before: chunkwise chunk (one-line file: start-up)"][0]
        b_whole = rows["before: chunkwise chunk --strategy fixed --size 256 --json"][0]
        print(f"before ({args.before}): {b_whole:.3f} CPU s = {b_whole / ref:.1f}x the tokie pass; without start-up "
              f"{b_whole - b_start:.3f} = {(b_whole - b_start) / ref:.1f}x; after / before: {whole / b_whole:.2f} "
              f"(without start-up {(whole - startup) / (b_whole - b_start):.2f})")

    if pairs is not None:
        _print_pairs(pairs, ref, args.pairs)


def _pairs(n: int, big: Path, tiny: Path, before: Path) -> dict:
    """CPU s of ``n`` interleaved runs per tree and file; the order alternates each round (ABBA), so a
    drift in the machine's load falls on both trees alike."""
    runs: dict = {(tree, f): [] for tree in ("after", "before") for f in ("big", "tiny")}
    for i in range(n):
        for tree in (("after", "before") if i % 2 == 0 else ("before", "after")):
            src = REPO / "src" if tree == "after" else before
            for f, path in (("tiny", tiny), ("big", big)):
                runs[(tree, f)].append(cli(path, src)[0])
    return runs


def _print_pairs(runs: dict, ref: float, n: int) -> None:
    import statistics

    print(f"\ninterleaved, {n} runs each (CPU s; x: the tokie pass above):")
    print("| tree | start-up min | start-up median | big file min | big file median | without start-up (medians) |")
    print("|---|--:|--:|--:|--:|--:|")
    med = {}
    for tree in ("after", "before"):
        t, b = runs[(tree, "tiny")], runs[(tree, "big")]
        med[tree] = (statistics.median(t), statistics.median(b))
        print(f"| {tree} | {min(t):.3f} | {med[tree][0]:.3f} | {min(b):.3f} ({min(b) / ref:.1f}x) | "
              f"{med[tree][1]:.3f} ({med[tree][1] / ref:.1f}x) | {med[tree][1] - med[tree][0]:.3f} "
              f"({(med[tree][1] - med[tree][0]) / ref:.1f}x) |")
    ratio = [a / b for a, b in zip(runs[("after", "big")], runs[("before", "big")])]
    print(f"after / before, big file: medians {med['after'][1] / med['before'][1]:.2f}; per round "
          f"{', '.join(f'{r:.2f}' for r in ratio)}; without start-up (medians) "
          f"{(med['after'][1] - med['after'][0]) / (med['before'][1] - med['before'][0]):.2f}")


if __name__ == "__main__":
    main()
