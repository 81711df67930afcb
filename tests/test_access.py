"""Access tags are values (one grammar, one type) and anything unreadable fails closed."""
import json
import sqlite3

import pytest

from chunkwise.access import AccessTagError, AccessTags, parse_acl_map, permitted
from chunkwise.cli.main import main
from chunkwise.config import ChunkConfig
from chunkwise.pipeline import ingest
from chunkwise.retrieve import Retriever

CONFIG = ChunkConfig(strategy="structure", size=128)


# -- the grammar -------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["hr managers", "HR  Managers", "hr\u00a0managers", " hr\tmanagers ",
                                 "ｈｒ managers", "hr\u3000managers"])
def test_a_tag_with_spaces_is_one_tag(raw):
    assert AccessTags.parse(raw).tags == ("hr managers",)
    assert AccessTags.parse([raw]).tags == ("hr managers",)


def test_a_string_is_comma_separated_and_a_list_is_one_tag_per_item():
    assert AccessTags.parse("finance, sre").tags == ("finance", "sre")
    assert AccessTags.parse("finance").tags == ("finance",)  # never one tag per letter
    assert AccessTags.parse(["Finance", "finance", "财务"]).tags == ("finance", "财务")
    assert AccessTags.parse("a,,b,").tags == ("a", "b")
    assert not AccessTags.parse(None) and not AccessTags.parse("")


@pytest.mark.parametrize("bad", [["finance, sre"], "a<b", "x" * 65, ["ok", 3], {"a": 1}, "tab\x07bell", 7,
                                 ",".join(f"t{i}" for i in range(65))])
def test_anything_outside_the_grammar_is_refused_with_one_line(bad):
    with pytest.raises(AccessTagError) as exc:
        AccessTags.parse(bad, "--acl")
    assert "\n" not in str(exc.value) and str(exc.value).startswith("--acl")


def test_the_type_cannot_be_built_uncanonical():
    with pytest.raises(AccessTagError):
        AccessTags(("B", "a"))
    with pytest.raises(AccessTagError):
        AccessTags(("hr managers", "hr managers"))


def test_column_encoding_round_trips_and_garbage_reads_as_nobody():
    tags = AccessTags.parse(["hr managers", "财务", "eng-oncall"])
    assert AccessTags.from_column(tags.column()) == tags
    for garbage in ("hr managers", '["HR"]', "{}", '["a", 1]', "[", ""):
        assert not AccessTags.from_column(garbage)
    assert len(tags.tokens()) == 3 and all(t.isalnum() for t in tags.tokens())
    assert tags.index("review") == "" and AccessTags().index("ready") == ""


def test_visibility_rule_normalises_the_caller_too():
    assert permitted(("hr managers",), "ready", "HR Managers")
    assert not permitted(("hr managers",), "ready", ["hr", "managers"])
    assert not permitted(("hr managers",), "review", ["hr managers"])


def test_acl_map_values_are_tag_sets_and_lists_are_refused():
    assert parse_acl_map({"finance/*": "finance"}) == {"finance/*": AccessTags(("finance",))}
    with pytest.raises(AccessTagError, match="mapping"):
        parse_acl_map([["finance/*", "finance"]])
    with pytest.raises(AccessTagError, match="no tags"):
        parse_acl_map({"*": []})


# -- end to end --------------------------------------------------------------------------------
def _visible(db, groups, query="budget"):
    with Retriever(db, embedder=None) as r:
        return {p.doc_id for p in r.search(query, groups, k=20, mode="bm25").passages}


def _records(db):
    con = sqlite3.connect(db)
    return {d: json.loads(r) for d, r in con.execute("SELECT doc_id, record FROM chunks")}


def test_spaces_nbsp_and_commas_in_front_matter_mean_what_they_say(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("---\nacl: hr managers\n---\n# Pay\n\nThe budget for pay.\n", encoding="utf-8")
    (root / "b.md").write_text("---\nacl: \"hr\u00a0managers\"\n---\n# Pay\n\nThe budget again.\n", encoding="utf-8")
    (root / "c.md").write_text("---\nacl: finance, sre\n---\n# Ops\n\nThe budget of ops.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    stats = ingest([root], db, CONFIG, acl="staff")
    assert not stats.errors
    assert _visible(db, ["hr"]) == set() and _visible(db, ["managers"]) == set()
    assert _visible(db, ["hr managers"]) == {"a.md", "b.md"}
    assert _visible(db, ["sre"]) == {"c.md"} and _visible(db, "finance, sre") == {"c.md"}
    assert _visible(db, ["staff"]) == set()


def test_cli_acl_map_and_toml_strings_are_tags_not_letters(tmp_path, capsys):
    root = tmp_path / "kb"
    (root / "fin").mkdir(parents=True)
    (root / "fin" / "q.md").write_text("# Q\n\nThe budget of the quarter.\n", encoding="utf-8")
    (root / "ops.md").write_text("# Ops\n\nThe budget of ops.\n", encoding="utf-8")
    amap = tmp_path / "map.json"
    amap.write_text(json.dumps({"fin/*": "finance"}), encoding="utf-8")
    toml = tmp_path / "c.toml"
    toml.write_text('[ingest]\nembedder = "none"\nacl = "sre team"\n', encoding="utf-8")
    db = tmp_path / "s.db"
    assert main(["ingest", str(root), "--db", str(db), "--config", str(toml), "--acl-map", str(amap), "--json"]) == 0
    capsys.readouterr()
    assert _visible(db, ["e"]) == set() and _visible(db, ["f"]) == set()
    assert _visible(db, ["finance"]) == {"fin/q.md"} and _visible(db, ["sre team"]) == {"ops.md"}
    toml.write_text('[ingest]\nacl = ["a,b"]\n', encoding="utf-8")
    assert main(["ingest", str(root), "--db", str(db), "--config", str(toml)]) == 2
    assert "contains a comma" in capsys.readouterr().err
    amap.write_text(json.dumps([["fin/*", "finance"]]), encoding="utf-8")
    assert main(["ingest", str(root), "--db", str(db), "--acl-map", str(amap)]) == 2
    err = capsys.readouterr().err
    assert "expected a mapping" in err and "Traceback" not in err
    assert main(["ingest", str(root), "--db", str(db), "--acl", "ok, b<d"]) == 2


UNREADABLE = {
    "bad_yaml.md": "---\ntitle: [unclosed\nacl: hr\n---\n# Pay\n\nThe budget.\n",
    "not_mapping.md": "---\n- acl: hr\n---\n# Pay\n\nThe budget.\n",
    "acl_mapping.md": "---\nacl: {hr: yes}\n---\n# Pay\n\nThe budget.\n",
    "acl_nested.md": "---\nacl: [[hr]]\n---\n# Pay\n\nThe budget.\n",
    "acl_empty.md": "---\nacl:\n---\n# Pay\n\nThe budget.\n",
    "acl_bad_tag.md": "---\nacl: h<r\n---\n# Pay\n\nThe budget.\n",
    "marker_on_heading.md": "# Intro\n\nThe budget.\n\n## Pay <!-- acl: hr -->\n\nSalaries.\n",
    "marker_after_paragraph.md": "# Intro\n\nThe budget.\n\n## Pay\n\nSalaries.\n\n<!-- acl: hr -->\n",
    "marker_in_quote.md": "# Intro\n\nThe budget.\n\n## Pay\n\n> <!-- acl: hr -->\n\nSalaries.\n",
    "marker_in_list.md": "# Intro\n\nThe budget.\n\n## Pay\n\n- <!-- acl: hr -->\n\nSalaries.\n",
    "marker_bad_tag.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl: h*r -->\n\nSalaries.\n",
    "marker_empty.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl: -->\n\nSalaries.\n",
    # front matter that declares acl and does not parse (issue 25, item 3)
    "fm_toml_bad.md": "+++\nacl: hr\n+++\n# Pay\n\nThe budget.\n",
    "fm_yaml_equals.md": "---\nacl = hr\n---\n# Pay\n\nThe budget.\n",
    "fm_unclosed.md": "---\nACL: hr\n\n# Pay\n\nThe budget.\n",
    "fm_unclosed_indented.md": " ---\n  acl: hr\n# Pay\n\nThe budget.\n",
    "fm_twice.md": "---\nacl: hr\nACL : staff\n---\n# Pay\n\nThe budget.\n",
    "fm_fullwidth.md": "---\nａｃｌ：hr\n---\n# Pay\n\nThe budget.\n",
    "fm_blank_bad.md": "\n\n---\nacl: [hr\n---\n# Pay\n\nThe budget.\n",
    "fm_in_text.txt": "---\nacl: hr\n---\nPay\n\nThe budget.\n",
    # near-miss markers (item 4)
    "marker_three_dashes.md": "# Intro\n\nThe budget.\n\n## Pay\n<!--- acl: hr -->\n\nSalaries.\n",
    "marker_no_colon.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl hr -->\n\nSalaries.\n",
    "marker_fullwidth_colon.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl： hr -->\n\nSalaries.\n",
    "marker_long_close.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl: hr --->\n\nSalaries.\n",
    "marker_dash_tag.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- acl: hr - -->\n\nSalaries.\n",
    "marker_split.md": "# Intro\n\nThe budget.\n\n## Pay\n<!--\nacl: hr\n-->\n\nSalaries.\n",
    "marker_upper.md": "# Intro\n\nThe budget.\n\n## Pay\n<!-- ACL hr, finance -->\n\nSalaries.\n",
    "marker_before_heading.md": "<!-- acl: hr -->\n# Intro\n\nThe budget.\n\nSalaries.\n",
    "marker_in_text.txt": "Intro\n\nThe budget.\n\n<!-- acl: hr -->\nSalaries.\n",
}


def test_unreadable_access_fails_closed_and_is_reported_per_file(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in UNREADABLE.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "fine.md").write_text("# Fine\n\nThe budget is public.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    stats = ingest([root], db, CONFIG, acl="staff")
    assert {e["path"] for e in stats.errors} == set(UNREADABLE)
    assert all("\n" not in e["error"] for e in stats.errors)
    con = sqlite3.connect(db)
    for doc, quality, record in con.execute("SELECT doc_id, quality, record FROM chunks"):
        rec = json.loads(record)
        if doc == "fine.md":
            assert quality == "ready" and rec["acl"] == ["staff"]
        else:  # stored, never served under the default
            assert quality == "review" and "unreadable_acl" in rec["reasons"] and rec["acl"] == [], doc
    assert _visible(db, ["staff", "hr"]) == {"fine.md"}
    assert _visible(db, ["staff", "hr"], "salaries") == set()


def test_markers_in_code_are_text_and_honoured_markers_still_apply(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "doc.md").write_text(
        "# Guide\n\nWrite `<!-- acl: hr -->` under a heading, like this:\n\n```\n## Pay\n<!-- acl: hr -->\n```\n\n"
        "The budget is public.\n\n## Pay\n<!-- acl: HR Managers -->\n\nThe salary budget.\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert not ingest([root], db, CONFIG, acl="staff").errors
    by_acl = {}
    for rec in _records_all(db):
        by_acl.setdefault(tuple(rec["acl"]), []).append(rec["heading_path"])
    assert set(by_acl) == {("staff",), ("hr managers",)}
    assert _visible(db, ["hr managers"], "salary") == {"doc.md"} and _visible(db, ["staff"], "salary") == set()


def _records_all(db):
    con = sqlite3.connect(db)
    return [json.loads(r) for (r,) in con.execute("SELECT record FROM chunks")]


def test_schema_3_tags_are_migrated_to_values(tmp_path):
    """A store written before tags were values: its space-joined column is re-read from the
    record's list, and a tag that breaks the grammar sends its chunk to review."""
    from chunkwise.store import SQLiteStore
    from chunkwise.store.sqlite.schema import MIGRATIONS
    from chunkwise.store.sqlite.sqlite import _statements

    db = tmp_path / "old.db"
    con = sqlite3.connect(db, isolation_level=None)
    con.create_function("chunkwise_acl_index", 2, lambda a, q: " ".join("g" + t.encode().hex() for t in a.split())
                        if q == "ready" else "")
    con.execute("CREATE TABLE migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for number, name, sql in MIGRATIONS[:3]:
        for st in _statements(sql):
            con.execute(st)
        con.execute("INSERT INTO migrations VALUES (?, ?, 'then')", (number, name))
    con.execute("INSERT INTO documents VALUES ('d', '/r', 'd.md', 'v', 'i', '', '', '', 't', 2)")
    for cid, i, tags in (("c1", 0, ["HR Managers"]), ("c2", 1, ["bad<tag"])):
        rec = json.dumps({"acl": tags, "quality": "ready", "reasons": [], "start_char": 0, "end_char": 6})
        con.execute("INSERT INTO chunks (chunk_id, doc_id, chunk_index, record, text, embed_text, embed_model, embed_key,"
                    " acl, quality, size, acl_index) VALUES (?, 'd', ?, ?, 'budget', 'budget', 'm', 'k', ?, 'ready', 1,"
                    " chunkwise_acl_index(?, 'ready'))", (cid, i, rec, " ".join(tags), " ".join(tags)))
    con.close()
    SQLiteStore(db).close()
    rows = {c: (AccessTags.from_column(a), q) for c, a, q in sqlite3.connect(db).execute(
        "SELECT chunk_id, acl, quality FROM chunks")}
    assert rows == {"c1": (AccessTags(("hr managers",)), "ready"), "c2": (AccessTags(), "review")}
    assert _visible(db, ["hr managers"]) == {"d"} and _visible(db, ["hr", "managers", "bad<tag".replace("<", "")]) == set()
