"""Two versions of each policy, differing only in a number: hit@1 per kind of question and choice of
``versions`` (through the public ``Retriever``, as ``chunkwise search`` runs it).

Generates ``--families`` policies (distinct topics, four sections each), each in an old version
(version 1, updated_at 2023) and a new one (version 2, 2024) in which one number changed, plus one
unrelated document per family. Three questions per family ask for the number that changed:
``current`` (no version named: the new number), ``named`` ("... in version 1": the old number) and
``dated`` ("... in 2023": the old number, the version in force that year). hit@1: the first passage
is the expected version's and holds its number. Runs against whatever chunkwise is on the path (a
choice of ``versions`` that code does not know is skipped). Also times the link pass
(``derive_links``) over ``--link-docs`` synthetic fingerprinted documents.

    PYTHONPATH=src python benchmarks/versions.py [--families 40] [--modes bm25,hybrid] [--json]
"""
from __future__ import annotations

import argparse
import inspect
import json
import random
import sys
import tempfile
import time
from pathlib import Path

TOPICS = ["annual leave", "expense claims", "remote work", "travel booking", "laptop refresh", "parental leave",
          "overtime pay", "training budget", "probation review", "data retention", "password rotation",
          "visitor access", "parking permits", "sick leave", "shift swaps", "on-call allowance", "conference travel",
          "mobile phones", "relocation support", "equipment loans"]
ACTIONS = ["request", "submit", "approve", "renew", "report", "file", "confirm", "book"]
UNITS = ["days", "weeks", "hours", "months"]


def family(i: int, rng: random.Random) -> tuple[str, str, str, str, str]:
    """(old text, new text, question, the old number, the new number)."""
    topic = f"{TOPICS[i % len(TOPICS)]} {i // len(TOPICS) + 1}" if i >= len(TOPICS) else TOPICS[i]
    action, unit = rng.choice(ACTIONS), rng.choice(UNITS)
    old, new = rng.sample(range(2, 60), 2)
    sections = [
        ("Scope", f"This policy on {topic} applies to every permanent and fixed-term employee of the company, "
                  f"including staff on secondment, and replaces any local guidance on {topic}."),
        ("Deadline", f"Employees must {action} {topic} at least {{n}} {unit} in advance through the people portal; "
                     f"late requests for {topic} need the written approval of a director."),
        ("Exceptions", f"Managers may waive the {topic} rules for emergencies, recording the reason in the portal "
                       f"within one working day of the decision."),
        ("Contacts", f"Questions about {topic} go to the people team, who answer within two working days."),
    ]

    def text(n: int, version: int, date: str) -> str:
        body = "\n\n".join(f"## {h}\n\n{t.format(n=n)}" for h, t in sections)
        return (f"---\ntitle: {topic.title()} policy\nversion: {version}\nupdated_at: {date}\n---\n"
                f"# {topic.title()} policy\n\n{body}\n")

    question = f"how many {unit} in advance must employees {action} {topic}"
    return text(old, 1, "2023-02-01"), text(new, 2, "2024-05-01"), question, f"{old} {unit}", f"{new} {unit}"


KINDS = ("current", "named", "dated")


def corpus(root: Path, n: int, seed: int = 15) -> list[tuple[str, str, str, str]]:
    """Writes the documents; returns (kind, question, expected document, expected answer)."""
    rng = random.Random(seed)
    questions = []
    for i in range(n):
        old, new, q, old_answer, answer = family(i, rng)
        (root / f"p{i:03d}-2023.md").write_text(old, encoding="utf-8")
        (root / f"p{i:03d}-2024.md").write_text(new, encoding="utf-8")
        (root / f"note{i:03d}.md").write_text(
            f"# Team note {i}\n\nThe {TOPICS[i % len(TOPICS)]} working group meets on Thursdays; minutes are "
            f"shared in the wiki and actions are tracked in the planning board.\n", encoding="utf-8")
        questions.append(("current", q, f"p{i:03d}-2024.md", answer))
        questions.append(("named", f"{q} in version 1", f"p{i:03d}-2023.md", old_answer))
        questions.append(("dated", f"{q} in 2023", f"p{i:03d}-2023.md", old_answer))
    return questions


def link_pass(n: int) -> float:
    """Seconds for ``derive_links`` over ``n`` fingerprinted documents (pairs of near-duplicates)."""
    from chunkwise.enrich.versions import VersionInfo, minhash
    from chunkwise.pipeline.versions import derive_links
    from chunkwise.store.base import DocumentRow

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(5000)]
    rows = []
    for i in range(0, n, 2):
        words = [rng.choice(vocab) for _ in range(300)]
        edited = list(words)
        edited[rng.randrange(300)] = "changed"
        for j, (w, date) in enumerate(((words, "2023-01-01"), (edited, "2024-01-01"))):
            info = VersionInfo("", (), minhash(" ".join(w)), ("staff",))
            rows.append(DocumentRow(f"d{i + j}", "/r", f"d{i + j}.md", f"d{i + j}.md", "v", "i", "", "", date,
                                    "t", 1, info.to_json()))
    t = time.perf_counter()
    derive_links(rows)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", type=int, default=40)
    ap.add_argument("--modes", default="bm25,hybrid")
    ap.add_argument("--link-docs", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from chunkwise.config import ChunkConfig
    from chunkwise.embed import make_embedder
    from chunkwise.pipeline import ingest
    from chunkwise.retrieve import Retriever

    has_versions = "versions" in inspect.signature(Retriever.search).parameters
    try:
        from chunkwise.retrieve.types import VERSIONS
    except ImportError:
        VERSIONS = ("latest", "all")
    out = {"families": args.families, "versions_supported": has_versions, "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        root, db = Path(tmp) / "docs", Path(tmp) / "s.db"
        root.mkdir()
        questions = corpus(root, args.families)
        t = time.perf_counter()
        ingest([root], db, ChunkConfig(strategy="structure", size=128), embedder=make_embedder("hashing"),
               acl="staff")
        out["ingest_s"] = round(time.perf_counter() - t, 2)
        known = VERSIONS if has_versions else (None,)
        choices = [c for c in ("auto", "latest", "all") if c in known] or [None]
        with Retriever(db) as r:
            for mode in args.modes.split(","):
                for versions in choices:
                    opts = {} if versions is None else {"versions": versions}
                    for kind in KINDS:
                        asked = [q for q in questions if q[0] == kind]
                        hit1 = hit5 = 0
                        t = time.perf_counter()
                        for _, q, doc, answer in asked:
                            ps = r.search(q, "staff", k=5, mode=mode, **opts).passages
                            hit1 += bool(ps) and ps[0].doc_id == doc and answer in ps[0].text
                            hit5 += any(p.doc_id == doc and answer in p.text for p in ps)
                        ms = (time.perf_counter() - t) / len(asked) * 1000
                        out["rows"].append({"mode": mode, "versions": versions or "(none: before)", "kind": kind,
                                            "questions": len(asked), "hit@1": round(hit1 / len(asked), 3),
                                            "hit@5": round(hit5 / len(asked), 3), "ms_per_query": round(ms, 1)})
    if has_versions and args.link_docs:
        out["link_pass_s"] = {args.link_docs: round(link_pass(args.link_docs), 3)}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.families} families x 2 versions + {args.families} notes, {args.families} questions of each kind; "
          f"ingest {out['ingest_s']} s")
    for row in out["rows"]:
        print(f"  {row['mode']:7} versions={row['versions']:8} {row['kind']:8} hit@1 {row['hit@1']:.3f}  "
              f"hit@5 {row['hit@5']:.3f}  {row['ms_per_query']} ms/query")
    if "link_pass_s" in out:
        print(f"  link pass over {args.link_docs} fingerprinted documents: {out['link_pass_s'][args.link_docs]} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
