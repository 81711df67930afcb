"""Where ``chunkwise audit``'s time goes on given PDFs: each file extracted and audited in this one
process (no workers, no page split: the same work the pool shares out), its CPU split by stage
(issue 27 item 6: which stage a faster reader would have to replace).

    PYTHONPATH=src python benchmarks/audit_profile.py ../shared/data/unstructured/example-docs/pdf/DA-619p.pdf ...

By default each stage's function is wrapped, in this process only, by a timer of the process's CPU
seconds (``time.process_time``), so the code runs at its own speed and the load does not move the
shares. ``--cprofile`` runs cProfile instead, with the same CPU clock: every function is seen, but
the profiler inflates call-heavy pure-Python code (pypdf's visitor most), so its shares lean that way.
Stages are inclusive times of the functions named in ``STAGES`` (nested ones are shown indented and
are part of their parent; the pdfminer parse is taken out of the overprint check, which triggers
it by reading ``page.chars`` first); "other" is the file's total less the top-level stages. Also: each file's
pages, its table-candidate pages (drawn rules or aligned lines, ``pdf._table_work``) and of them the
pages pdfplumber reads (``pdf_tables.within_bounds``). ``--out FILE`` keeps the pstats of the last file.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

# (label, module path ending, function name, depth): depth 1 stages add up to the file's total
STAGES = (
    ("open the PDF (pypdf)", "chunkwise/extract/pdf.py", "_open", 1),
    ("pypdf text layer (page_lines, every page)", "chunkwise/extract/pdf.py", "_scan", 1),
    ("table pages (pdfplumber, find_tables)", "chunkwise/extract/pdf_tables.py", "find_tables", 1),
    ("open with pdfplumber/pdfminer", "pdfplumber/pdf.py", "__init__", 2),
    ("pdfminer parse of candidate pages (Page.layout)", "pdfplumber/page.py", "layout", 2),
    ("pdfplumber objects from the layout (parse_objects, less layout)", "pdfplumber/page.py", "parse_objects", 2),
    ("overprint check (less the parse its page.chars triggers)", "chunkwise/extract/pdf_tables.py", "_overprinted", 2),
    ("dedupe_chars", "chunkwise/extract/pdf_dedupe.py", "dedupe_chars", 2),
    ("ruled-table finder (_ruled: find_tables + cell text)", "chunkwise/extract/pdf_tables.py", "_ruled", 2),
    ("extract_words", "pdfplumber/page.py", "extract_words", 2),
    ("aligned tables (pdf_aligned.find)", "chunkwise/extract/pdf_aligned.py", "find", 2),
    ("headings (_levels)", "chunkwise/extract/pdf.py", "_levels", 1),
    ("assemble text and blocks", "chunkwise/extract/pdf.py", "_assemble", 1),
    ("the audit's own measures (audit_document)", "chunkwise/extract/audit.py", "audit_document", 1),
    ("language (langid)", "chunkwise/extract/language.py", "detect", 2),
    ("damage.measure", "chunkwise/extract/damage.py", "measure", 2),
    ("running headers", "chunkwise/extract/audit.py", "_running", 2),
)


def cumulative(stats: pstats.Stats, path: str, name: str) -> float:
    return sum(v[3] for (file, _, fn), v in stats.stats.items() if fn == name and file.endswith(path))


class Timers:
    """Inclusive CPU seconds of the ``STAGES`` functions, by wrapping them where they are looked up
    (module attributes, pdfplumber's ``Page`` methods and property). A recursive call is counted once."""

    def __init__(self) -> None:
        import pdfplumber.page
        import pdfplumber.pdf

        from chunkwise.extract import audit, damage, language, pdf, pdf_aligned, pdf_dedupe, pdf_tables

        self.spent: dict[tuple[str, str], float] = {}
        self.depth: dict[tuple[str, str], int] = {}
        mods = {"chunkwise/extract/pdf.py": pdf, "chunkwise/extract/pdf_tables.py": pdf_tables,
                "chunkwise/extract/pdf_aligned.py": pdf_aligned, "chunkwise/extract/audit.py": audit,
                "chunkwise/extract/language.py": language, "chunkwise/extract/damage.py": damage,
                "chunkwise/extract/pdf_dedupe.py": pdf_dedupe, "pdfplumber/page.py": pdfplumber.page.Page,
                "pdfplumber/pdf.py": pdfplumber.pdf.PDF}
        for _, path, name, _ in STAGES:
            owner = mods[path]
            key = (path, name)
            if isinstance(owner, type) and isinstance(vars(owner).get(name), property):
                prop = vars(owner)[name]
                setattr(owner, name, property(self._wrap(key, prop.fget)))
            else:
                setattr(owner, name, self._wrap(key, getattr(owner, name)))
        # names bound by import elsewhere: the wrapped ones
        pdf.find_tables = pdf_tables.find_tables
        pdf_tables.dedupe_chars = pdf_dedupe.dedupe_chars

    def _wrap(self, key, fn):
        clock = time.process_time

        def timed(*a, **k):
            if self.depth.get(key):
                return fn(*a, **k)
            self.depth[key] = 1
            t0 = clock()
            try:
                return fn(*a, **k)
            finally:
                self.spent[key] = self.spent.get(key, 0.0) + clock() - t0
                self.depth[key] = 0

        return timed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help="write the last file's pstats here (with --cprofile)")
    ap.add_argument("--cprofile", action="store_true", help="cProfile (CPU clock) instead of the stage timers")
    args = ap.parse_args(argv)
    timers = None if args.cprofile else Timers()
    from chunkwise.extract import extract_bytes, pdf_tables
    from chunkwise.extract.audit import audit_document
    from chunkwise.extract.language import detect

    detect("warm the language model up: its first load is not this file's work")
    bounds = []
    real = pdf_tables.within_bounds

    def counted(work, warnings):
        chosen = real(work, warnings)
        bounds.append((len(work), len(chosen)))
        return chosen

    pdf_tables.within_bounds = counted  # this process only: to count the candidate pages
    rows, totals = [], {}
    for path in args.files:
        data = path.read_bytes()
        bounds.clear()
        prof = cProfile.Profile(time.process_time) if args.cprofile else None
        if timers:
            timers.spent.clear()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        row = audit_document(extract_bytes(data, path.name, "application/pdf"))
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if prof:
            stats = pstats.Stats(prof)
            total = stats.total_tt
            shares = {label: cumulative(stats, p, fn) for label, p, fn, _ in STAGES}
        else:
            total = cpu
            shares = {label: timers.spent.get((p, fn), 0.0) for label, p, fn, _ in STAGES}
        parse = shares["pdfplumber objects from the layout (parse_objects, less layout)"]
        shares["pdfplumber objects from the layout (parse_objects, less layout)"] -= shares[
            "pdfminer parse of candidate pages (Page.layout)"]
        # a page's first ``page.chars`` is in the overprint check: the parse is counted above
        shares["overprint check (less the parse its page.chars triggers)"] -= parse
        candidates, read = bounds[-1] if bounds else (0, 0)
        print(f"\n## {path.name}: {row.pages} pages, {candidates} table candidates, {read} read by pdfplumber, "
              f"status {row.status}, tables {row.tables}\n"
              f"CPU {cpu:.1f} s, wall {wall:.1f} s, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
              f"{' (cProfile: it inflates pure-Python code)' if prof else ''}; shares of {total:.1f} CPU s")
        print("| stage | s | share |\n|---|--:|--:|")
        top = 0.0
        for label, _, _, depth in STAGES:
            s = shares[label]
            top += s if depth == 1 else 0.0
            totals[label] = totals.get(label, 0.0) + s
            print(f"| {'&nbsp;&nbsp;' * (depth - 1)}{label} | {s:.2f} | {s / total:.1%} |")
        print(f"| other | {total - top:.2f} | {(total - top) / total:.1%} |")
        totals["other"] = totals.get("other", 0.0) + total - top
        totals["total"] = totals.get("total", 0.0) + total
        rows.append((path.name, row.pages, candidates, read, cpu, wall))
        if args.out and prof:
            stats.dump_stats(args.out)
    print("\n## all files\n| stage | s | share |\n|---|--:|--:|")
    for label, s in totals.items():
        print(f"| {label} | {s:.2f} | {s / totals['total']:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
