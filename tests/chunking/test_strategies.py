"""Behaviour of each strategy on hand-built cases and the sample corpus."""
from conftest import sizer

from chunkwise import chunk_file
from chunkers import chunk_text
from chunkwise.chunking.balanced import balanced_cuts

ATLAS = ("Project Atlas stores customer support tickets. Tickets are exported daily. Each ticket has an "
         "account_id and visibility label. Password reset tickets must stay visible only to support_staff.")


def test_sentence_window_seed_002():
    chunks = chunk_text(ATLAS, strategy="sentence_window", window=2, overlap=1, size=256)
    assert len(chunks) == 3
    assert chunks[0].text == "Project Atlas stores customer support tickets. Tickets are exported daily."
    assert "Tickets are exported daily." in chunks[1].text  # sentence 1 in chunks 0 and 1
    assert "Each ticket has" in chunks[1].text and "Each ticket has" in chunks[2].text  # sentence 2 in 1 and 2


def test_sentence_window_respects_the_cap():
    chunks = chunk_text(ATLAS * 3, strategy="sentence_window", window=4, overlap=1, size=20, unit="words")
    assert all(len(c.text.split()) <= 20 for c in chunks)


def test_balanced_seed_000():
    text = "Page on-call within 15 minutes with deploy ID. Include the service name and rollback attempt."
    chunks = chunk_text(text, strategy="balanced", size=7, unit="words", min_tail=4)
    assert [c.text for c in chunks] == [
        "Page on-call within 15 minutes",
        "with deploy ID. Include the",
        "service name and rollback attempt.",
    ]
    assert [(c.start_char, c.end_char) for c in chunks] == [(0, 30), (31, 58), (59, 93)]
    assert not any(c.needs_review for c in chunks)
    flagged = chunk_text(text, strategy="balanced", size=7, unit="words", min_tail=6)
    assert all(c.needs_review for c in flagged)  # 5 < 6: the cap wins, review says so


def test_balanced_never_exceeds_cap_where_greedy_merge_would():
    assert balanced_cuts([1] * 15, 7) == [5, 10, 15]
    assert balanced_cuts([1] * 16, 7) == [6, 11, 16]
    assert balanced_cuts([8], 7) is None


def test_paragraphs_fall_back_to_sentences_then_words():
    long_para = " ".join(["This sentence has exactly seven words."] * 10)
    text = f"Short intro.\n\n{long_para}\n\nShort outro."
    chunks = chunk_text(text, strategy="paragraphs", size=30, unit="words")
    assert chunks[0].text == "Short intro."
    assert all(c.text.endswith(".") for c in chunks)
    giant = "word " * 100
    chunks = chunk_text(giant, strategy="paragraphs", size=30, unit="words")
    assert [c.size for c in chunks] == [30, 30, 30, 10]


def test_recursive_cjk_without_spaces():
    text = "ロールバックに失敗した場合は、15分以内にオンコール担当者に連絡してください。" * 20
    chunks = chunk_text(text, strategy="recursive", size=40)
    assert len(chunks) > 1
    assert all(c.text.endswith("。") for c in chunks[:-1])
    assert not any(c.needs_review for c in chunks)


def test_recursive_custom_separators_in_characters():
    text = "alpha beta. gamma delta? epsilon\n\nzeta eta theta"
    chunks = chunk_text(text, strategy="recursive", size=12, unit="chars",
                        separators=["\n\n", "\n", ".", "?", "!", " ", ""])
    assert all(len(c.text) <= 12 for c in chunks)
    assert chunks[0].text == "alpha beta."


RUNBOOK = """# Runbook

Intro paragraph.

## Rollback failure

Page on-call within 15 minutes with deploy ID.

```bash
# this is a shell comment, not a heading
deployctl rollback
```

### Details

Include the service name.

Routine notes
-------------

Archive within 14 days.
"""


def test_structure_heading_paths_and_code_comments():
    chunks = chunk_text(RUNBOOK, strategy="structure", size=256)
    paths = [c.heading_path for c in chunks]
    assert paths == [
        ("Runbook",),
        ("Runbook", "Rollback failure"),
        ("Runbook", "Rollback failure", "Details"),
        ("Runbook", "Routine notes"),
    ]
    assert "# this is a shell comment" in chunks[1].text
    assert [c.section for c in chunks] == [0, 1, 2, 3]


def test_structure_edit_in_one_section_leaves_others_alone():
    before = chunk_text(RUNBOOK, strategy="structure", size=256)
    edited = RUNBOOK.replace("Include the service name.", "Include the service name and the region.")
    after = chunk_text(edited, strategy="structure", size=256)
    assert [c.text for c in before if c.section != 2] == [c.text for c in after if c.section != 2]
    assert [c.text for c in before if c.section == 2] != [c.text for c in after if c.section == 2]


def test_structure_keeps_code_whole_when_it_fits():
    chunks = chunk_text(RUNBOOK, strategy="structure", size=40)
    code = [c for c in chunks if "deployctl rollback" in c.text]
    assert len(code) == 1 and "```bash" in code[0].text and code[0].text.rstrip().endswith("```")


TABLE = "## Windows\n\n| Condition | Window | Evidence |\n| --- | --- | --- |\n" + "".join(
    f"| Condition {i} | {i} minutes | Deploy ID {i} |\n" for i in range(40)
)


def test_table_groups_repeat_the_header():
    chunks = chunk_text(TABLE, strategy="table", size=64)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) > 2
    for c in tables:
        assert c.embed_text.splitlines()[-1].startswith("| Condition")
        assert "| Condition | Window | Evidence |" in c.embed_text
        assert c.size <= 64 and sizer("tokens").count(c.embed_text) == c.size
    rows = [c.rows for c in tables]
    assert rows[0][0] == 0 and rows[-1][1] == 40
    assert all(a[1] == b[0] for a, b in zip(rows, rows[1:]))


def test_table_rows_as_fields():
    chunks = chunk_text(TABLE, strategy="table", size=64, table_rows_as_fields=True)
    tables = [c for c in chunks if c.kind == "table"]
    assert "Condition: Condition 3; Window: 3 minutes; Evidence: Deploy ID 3" in "".join(c.embed_text for c in tables)


def test_auto_keeps_qa_pairs_and_steps_whole():
    qa = "\n".join(f"Q: How long is window {i}?\nA: Window {i} lasts {i} minutes and needs deploy ID {i}." for i in range(12))
    chunks = chunk_text(f"## FAQ\n\n{qa}\n", strategy="auto", size=40)
    for c in chunks:
        lines = c.text.splitlines()
        assert lines[0].startswith(("## FAQ", "Q:")) and lines[-1].startswith("A:")


def test_auto_on_sample_runbook(examples):
    chunks = chunk_file("examples/incident-runbook.md", strategy="auto", size=256)
    assert chunks[0].start_char > 0  # front matter is not chunk text
    assert not any(c.text.startswith("---") for c in chunks)
    rollback = [c for c in chunks if "page on-call within 15 minutes with the deploy ID" in c.text]
    assert rollback and "Rolling back a deploy" in rollback[0].heading_path


def test_header_counts_toward_the_cap():
    chunks = chunk_text(RUNBOOK * 3, strategy="structure", size=48, header="full", title="Incident Runbook")
    s = sizer("tokens")
    for c in chunks:
        assert c.embed_text.startswith("Source: Incident Runbook")
        assert s.count(c.embed_text) == c.size <= 48


def test_long_header_is_shortened_not_allowed_to_break_the_cap():
    chunks = chunk_text(RUNBOOK, strategy="structure", size=24, header="full", title="Incident Runbook")
    s = sizer("tokens")
    assert all(s.count(c.embed_text) == c.size <= 24 for c in chunks)
    assert any(c.embed_text.startswith("Section: Rollback failure\n") for c in chunks)  # path cut to its last heading
