"""Corpus-level check of the access model behind tests/security/test_attack_suite.py: for each seed,
build its random corpus, ingest it, and count ready chunks whose text, heading path, header or title
holds a token that some reader of the chunk may not read (the model says who may read each token).

    PYTHONPATH=src:tests python benchmarks/access_model.py 0 25
"""
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path[:0] = ["tests", "tests/security"]
import test_attack_suite as suite  # noqa: E402

from chunkwise.pipeline import ingest  # noqa: E402


def main(first: int, last: int) -> int:
    bad = chunks = 0
    for seed in range(first, last):
        root = Path(tempfile.mkdtemp())
        model = suite._corpus(root, seed)
        db = str(root / "s.db")
        ingest([root], db, suite.CONFIG, embedder=None, acl="staff")
        for record, text, embed_text in sqlite3.connect(db).execute("SELECT record, text, embed_text FROM chunks"):
            rec = json.loads(record)
            if rec["quality"] != "ready":
                continue
            chunks += 1
            tags = set(rec["acl"])
            shown = " ".join([text, embed_text, " ".join(rec["heading_path"]), rec["title"]])
            for tok in set(suite.TOKEN.findall(shown)):
                if model.get(tok) is None or not tags <= model[tok]:
                    bad += 1
                    print(seed, tok, model.get(tok), sorted(tags), rec["doc_id"])
                    break
    print(f"seeds {first}-{last - 1}: {chunks} ready chunks, {bad} showing a token some reader may not read")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
