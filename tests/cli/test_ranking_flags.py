"""chunkwise search/eval/serve: --field-weights and --fusion (and [search] in chunkwise.toml)."""
import json

import pytest

from chunkwise.cli.main import main


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("rank")
    docs = base / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text("---\ntitle: Paging guide\n---\n# Escalation\n\nCall the duty manager first, "
                                    "then the owner.\n", encoding="utf-8")  # "paging" only in the title
    (docs / "notes.md").write_text("# Notes\n\nThe printer was paged once while the team discussed lunch menus, "
                                   "parking, the rota, the kitchen and many other things.\n", encoding="utf-8")
    db = base / "s.db"
    assert main(["ingest", str(docs), "--db", str(db), "--acl", "staff", "--embedder", "hashing", "--json"]) == 0
    return base, db


def _sources(capsys, *argv):
    capsys.readouterr()
    assert main(["search", "paging", "--groups", "staff", "--mode", "bm25", "--json", *argv]) == 0
    return [r["source_uri"].rsplit("/", 1)[-1] for r in json.loads(capsys.readouterr().out)["results"]]


def test_title_weight_decides_and_config_is_read(store, capsys):
    base, db = store
    assert _sources(capsys, "--db", str(db), "--field-weights", "title=4")[0] == "policy.md"
    assert _sources(capsys, "--db", str(db), "--field-weights", "title=0.5")[0] == "notes.md"
    assert _sources(capsys, "--db", str(db), "--field-weights", "title=0,heading=0") == ["notes.md"]  # "paged" = "paging"
    conf = base / "chunkwise.toml"
    conf.write_text("[search]\nfield_weights = {title = 0, heading = 0}\nfusion = \"bm25=2,dense=1\"\n", encoding="utf-8")
    assert _sources(capsys, "--db", str(db), "--config", str(conf)) == ["notes.md"]
    assert _sources(capsys, "--db", str(db), "--config", str(conf), "--field-weights", "title=4")[0] == "policy.md"
    capsys.readouterr()
    assert main(["search", "paging", "--groups", "staff", "--mode", "hybrid", "--db", str(db), "--fusion",
                 "bm25=1,dense=0.25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]


@pytest.mark.parametrize("argv, message", [
    (["--field-weights", "title=lots"], "NAME=NUMBER"),
    (["--field-weights", "body=2"], "unknown field"),
    (["--fusion", "bm25=0,dense=0"], "cannot both be 0"),
    (["--fusion", "sparse=1"], "unknown name"),
])
def test_bad_weights_fail_fast_with_exit_2(store, capsys, argv, message):
    _, db = store
    capsys.readouterr()
    assert main(["search", "x", "--groups", "staff", "--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_search_table_fails_fast(store, capsys, tmp_path):
    _, db = store
    conf = tmp_path / "c.toml"
    conf.write_text("[search]\nfield_weights = {title = -1}\n", encoding="utf-8")
    assert main(["search", "x", "--groups", "staff", "--db", str(db), "--config", str(conf)]) == 2
    assert "[search] field_weights" in capsys.readouterr().err
    conf.write_text("[search]\nboost = 2\n", encoding="utf-8")
    assert main(["search", "x", "--groups", "staff", "--db", str(db), "--config", str(conf)]) == 2
    assert "unknown key 'boost' in [search]" in capsys.readouterr().err
