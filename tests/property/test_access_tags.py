"""Property: a tag set round-trips through every entry point (front matter string and list, section
marker, --acl, --acl-map list and string values, TOML list and string, the API) into the store and
back out of search, and nobody holding only a piece of a tag (a word of it, a letter) sees anything."""
import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkwise.access import AccessTagError, AccessTags, normalise_tag
from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever

ALPHABET = list("abcXYZé财ｈ0-_.:/@+#") + [" ", "\u00a0", "\t", "\u3000"]


def _valid(raw: str) -> bool:
    try:
        normalise_tag(raw)
    except AccessTagError:
        return False
    return True


RAW_TAG = st.text(alphabet=st.sampled_from(ALPHABET), min_size=1, max_size=10).filter(_valid)
RAW_SET = st.lists(RAW_TAG, min_size=1, max_size=4)
BODY = "# Title\n\nThe budget line.\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _stored(db) -> dict[str, set[tuple[str, ...]]]:
    out: dict[str, set] = {}
    for doc, rec in sqlite3.connect(db).execute("SELECT doc_id, record FROM chunks"):
        out.setdefault(doc, set()).add(tuple(json.loads(rec)["acl"]))
    return out


def _visible(db, groups) -> set[str]:
    """Documents whose text the caller gets (identical passages come back once, listing the others)."""
    with Retriever(db, embedder=None) as r:
        return {v.doc_id for p in r.search("budget", groups, k=50, mode="bm25").passages for v in p.versions}


def _check(db, docs: set[str], want: AccessTags, other: AccessTags) -> None:
    stored = _stored(db)
    for doc in docs:
        assert stored[doc] == {want.tags}, (doc, stored[doc], want)
    for tag in want:
        assert docs <= _visible(db, [tag]), tag
    pieces = {w for t in want for w in t.split()} | {c for t in want for c in t if c.isalnum()}
    pieces -= set(want.tags) | set(other.tags)
    for piece in sorted(pieces)[:6]:
        assert not _visible(db, [piece]) & docs, piece


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=RAW_SET, other_raw=RAW_SET)
@example(raw=["hr managers"], other_raw=["staff"])
@example(raw=["hr\u00a0managers", "finance"], other_raw=["e"])
def test_tags_round_trip_through_every_entry_point(raw, other_raw):
    want, other = AccessTags.parse(raw), AccessTags.parse(other_raw)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = tmp / "kb"
        q = json.dumps  # JSON strings are valid YAML and TOML basic strings
        _write(root / "fm_string.md", f"---\nacl: {q(', '.join(raw))}\n---\n{BODY}")
        _write(root / "fm_list.md", f"---\nacl: [{', '.join(q(t) for t in raw)}]\n---\n{BODY}")
        _write(root / "marker.md", f"# Public\n\nNothing here.\n\n## Part\n<!-- acl: {', '.join(raw)} -->\n\nThe budget line.\n")
        _write(root / "lst" / "a.md", BODY)
        _write(root / "str" / "a.md", BODY)
        _write(root / "plain.md", BODY)
        amap = tmp / "map.json"
        amap.write_text(json.dumps({"lst/*": raw, "str/*": ", ".join(raw)}), encoding="utf-8")
        toml = tmp / "c.toml"
        toml.write_text(f"[ingest]\nembedder = \"none\"\nacl = {q(', '.join(other_raw))}\n", encoding="utf-8")
        db = tmp / "a.db"
        assert main(["ingest", str(root), "--db", str(db), "--config", str(toml), "--acl-map", str(amap),
                     "--json"]) == 0
        _check(db, {"fm_string.md", "fm_list.md", "lst/a.md", "str/a.md"}, want, other)
        assert _stored(db)["plain.md"] == {other.tags}
        assert _stored(db)["marker.md"] == {other.tags, want.tags}

        solo = tmp / "solo"
        _write(solo / "plain.md", BODY)
        toml.write_text(f"[ingest]\nembedder = \"none\"\nacl = [{', '.join(q(t) for t in raw)}]\n", encoding="utf-8")
        for n, extra in enumerate(([], [f"--acl={','.join(raw)}"])):
            db = tmp / f"b{n}.db"
            assert main(["ingest", str(solo), "--db", str(db), "--config", str(toml), "--json", *extra]) == 0
            _check(db, {"plain.md"}, want, other)
        db = tmp / "c.db"
        assert not ingest([solo], db, ChunkConfig(strategy="structure", size=64), acl=raw).errors
        _check(db, {"plain.md"}, want, other)
