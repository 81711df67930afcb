"""Document identity (issue 10 item 4): a document is (root, path) and keeps its id. Two folders with
the same relative paths never overwrite each other; re-ingesting a sub-folder or one file updates
the same documents; a front matter id can never take over another document. On both backends."""
from chunkwise.pipeline import ingest
from backends import query

BODY = "# {title}\n\n## Scope\n\n{words}\n\n## Steps\n\nRoll back the {what} deploy and page the owner.\n"


def write(folder, name, title, what="payments", front=""):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    words = " ".join(f"{title.lower()} word{i}" for i in range(40))
    path.write_text(front + BODY.format(title=title, words=words, what=what), encoding="utf-8")
    return path


def docs(db):
    return {d: (r, p, n) for d, r, p, n in query(db, "SELECT doc_id, root, path, chunk_count FROM documents")}


def chunk_docs(db):
    return {d: n for d, n in query(db, "SELECT doc_id, count(*) FROM chunks GROUP BY doc_id")}


def run(path, db, **kw):
    return ingest([path], db, acl=("staff",), **kw)


def test_two_folders_with_the_same_relative_paths_keep_both(tmp_path, db_location):
    a, b, db = tmp_path / "team-a", tmp_path / "team-b", db_location
    write(a, "guide.md", "Alpha")
    write(b, "guide.md", "Beta")
    run(a, db)
    run(b, db)
    held = docs(db)
    assert len(held) == 2, held
    assert {(r.rsplit("/", 1)[-1], p) for r, p, _ in held.values()} == {("team-a", "guide.md"), ("team-b", "guide.md")}
    assert set(held) == {"guide.md", "team-b/guide.md"}  # the second gets its root's name in front
    # both converge: re-running either changes nothing and removes nothing of the other
    again_a, again_b = run(a, db), run(b, db)
    assert (again_a.added, again_a.removed, again_b.added, again_b.removed) == (0, 0, 0, 0)
    assert docs(db) == held


def test_reingesting_a_sub_folder_or_one_file_updates_the_same_documents(tmp_path, db_location):
    root, db = tmp_path / "kb", db_location
    write(root, "top.md", "Top")
    write(root, "ops/runbook.md", "Runbook")
    write(root, "ops/oncall.md", "Oncall")
    run(root, db)
    before = docs(db)
    assert set(before) == {"top.md", "ops/runbook.md", "ops/oncall.md"}
    sub = run(root / "ops", db)  # the sub-folder: same documents, nothing new, nothing removed
    assert (sub.added, sub.removed, sub.skipped_documents) == (0, 0, 2)
    write(root, "ops/runbook.md", "Runbook", what="ledger")  # one file edited, ingested alone
    one = run(root / "ops" / "runbook.md", db)
    assert one.added >= 1 and one.removed >= 1
    assert set(docs(db)) == set(before) and set(chunk_docs(db)) == set(before)
    (root / "ops" / "oncall.md").unlink()  # a sub-folder run removes only inside itself
    gone = run(root / "ops", db)
    assert gone.removed == before["ops/oncall.md"][2]
    assert set(docs(db)) == {"top.md", "ops/runbook.md"}


def test_a_parent_folder_after_its_sub_folder_holds_each_file_once(tmp_path, db_location):
    root, db = tmp_path / "kb", db_location
    write(root, "ops/runbook.md", "Runbook")
    write(root, "top.md", "Top")
    run(root / "ops", db)
    assert set(docs(db)) == {"runbook.md"}
    stats = run(root, db)
    held = docs(db)
    assert len(held) == 2 and set(chunk_docs(db)) == set(held)
    assert held["runbook.md"][1] == "ops/runbook.md"  # same id, now a path under the wider root
    assert stats.skipped_documents == 1  # the sub-folder's file was not re-chunked


def test_a_front_matter_id_cannot_take_over_another_document(tmp_path, db_location):
    root, db = tmp_path / "kb", db_location
    write(root, "leave.md", "Leave", front="---\nid: HR-1\n---\n")
    run(root, db)
    before = chunk_docs(db)
    write(root, "zz-copy.md", "Copy", what="ledger", front="---\nid: HR-1\n---\n")
    stats = run(root, db)
    assert [e["path"] for e in stats.errors] == ["zz-copy.md"]
    assert "HR-1" in stats.errors[0]["error"] and "already held by" in stats.errors[0]["error"]
    assert chunk_docs(db) == before and docs(db)["HR-1"][1] == "leave.md"


def test_a_front_matter_id_that_changes_replaces_its_own_document(tmp_path, db_location):
    root, db = tmp_path / "kb", db_location
    path = write(root, "leave.md", "Leave", front="---\nid: HR-1\n---\n")
    run(root, db)
    path.write_text(path.read_text(encoding="utf-8").replace("HR-1", "HR-2"), encoding="utf-8")
    run(root, db)
    assert set(docs(db)) == {"HR-2"} and set(chunk_docs(db)) == {"HR-2"}
