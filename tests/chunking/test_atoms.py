"""Content-type atoms (issue 15 item 3, seed 004): speaker turns, Q&A pairs, numbered steps and
field-value blocks are units under ``auto``, and the route a document took is recorded."""
from conftest import sizer

from chunkwise import chunk_file
from chunkers import chunk_text
from chunkwise.chunking.atoms import FIELDS, QA, STEP, TURN, find_atoms
from chunkwise.chunking.router import route_of

TRANSCRIPT = """## Incident call

[00:00:41] Priya: I'm incident commander for this one. Error rate on payments-api is at eight percent.
[00:01:05] Marco: Deploy pay-742 finished promotion about twenty minutes ago.
[00:01:19] Priya: Then we roll back first. Freeze the pipeline and roll back to pay-741.
[00:01:34] Marco: Freeze is on. Starting the rollback now.
"""


def test_consecutive_speaker_turns_share_a_chunk_up_to_the_budget():
    # issue 29 item 6 (was: each turn a chunk of its own, so an answer across two turns was in none)
    chunks = chunk_text(TRANSCRIPT, strategy="auto", size=128)
    assert [c.text for c in chunks] == [TRANSCRIPT.strip()]  # the 4 turns fit one chunk of 128
    assert route_of(chunks) == ("transcript",)  # the heading above the turns does not make it prose
    chunks = chunk_text(TRANSCRIPT, strategy="auto", size=128, header="path")
    assert route_of(chunks) == ("transcript",) and chunks[0].heading_path == ("Incident call",)


def test_a_long_turn_repeats_its_label_on_every_piece():
    long = "[00:02:00] Aiko: " + "The ledger queue lag is back to normal and no captures were lost. " * 12
    text = TRANSCRIPT + long + "\n[00:03:00] Priya: Good.\n"
    chunks = chunk_text(text, strategy="auto", size=48)
    pieces = [c for c in chunks if "ledger" in c.text]
    assert len(pieces) > 2
    assert all(c.embed_text.startswith("[00:02:00] Aiko:") for c in pieces)
    assert not any(c.text.startswith("[00:02:00]") for c in pieces[1:])  # the label lives in embed_text
    s = sizer("tokens")
    assert all(s.count(c.embed_text) == c.size <= 48 for c in chunks)
    assert chunks[-1].text == "[00:03:00] Priya: Good."  # the long turn is packed on its own


def test_turns_without_timestamps_and_field_blocks_are_told_apart():
    text = ("Priya: We roll back first, then we look at the logs together.\n"
            "Marco: Fine, I am starting the rollback of the payments service now.\n"
            "Priya: Tell me when the error rate drops below one percent.\n\n"
            "Owner: Payments SRE\nSeverity: 2\nStatus: resolved\nTicket: INC-2291\n")
    atoms = find_atoms(text)
    assert [a.kind for a in atoms] == [TURN, TURN, TURN, FIELDS]
    assert [a.label for a in atoms[:3]] == ["Priya:", "Marco:", "Priya:"]
    assert text[atoms[3].start:atoms[3].end].endswith("Ticket: INC-2291")


def test_a_field_block_stays_whole_inside_a_paragraph():
    fields = "\n".join(f"{k}: {v}" for k, v in [("Owner", "Payments SRE team"), ("Severity", "two"),
                                                ("Status", "resolved after rollback"), ("Ticket", "INC-2291"),
                                                ("Region", "eu-west-1"), ("Pager", "secondary on-call")])
    text = ("The incident record below was filed by the on-call engineer after the rollback finished.\n"
            + fields + "\nThe review meeting is on Thursday.\n")
    chunks = chunk_text(text, strategy="auto", size=40, format="text")
    assert any(fields in c.text for c in chunks), [c.text for c in chunks]
    whole = [c for c in chunks if fields in c.text]
    assert whole[0].kind == "fields" or whole[0].text != fields


def test_a_question_and_its_answer_in_two_paragraphs_stay_together():
    pairs = "\n\n".join(f"Q: How long does rollback {i} take in the payments service?\n\n"
                        f"A: Rollback {i} takes about {i} minutes, and the on-call engineer pages the secondary."
                        for i in range(6))
    chunks = chunk_text(f"## FAQ\n\n{pairs}\n", strategy="auto", size=40)
    for c in chunks:
        if "Q:" in c.text:
            assert c.text.rstrip().endswith("secondary."), c.text
    assert {c.kind for c in chunks if c.text.startswith("Q:")} == {"qa"}


def test_numbered_steps_are_units():
    steps = "\n".join(f"{i}. Run step {i} of the rollback and confirm the dashboard shows green." for i in range(1, 9))
    text = f"Rollback procedure:\n{steps}\n"
    chunks = chunk_text(text, strategy="auto", size=40, format="text")
    for c in chunks:
        for line in c.text.splitlines():
            assert line == "Rollback procedure:" or line.endswith("green.")  # no step cut inside
    assert STEP in {a.kind for a in find_atoms(text)} and QA not in {a.kind for a in find_atoms(text)}


def test_routes_of_the_sample_corpus(examples):
    routes = {name: {r.route.split(":")[1] for r in chunk_file(f"examples/{name}", strategy="auto", size=192)}
              for name in examples}
    assert "transcript" in routes["deploy-faq.txt"]
    assert "table" in routes["access-policy.md"]
    assert "steps" in routes["incident-runbook.md"]
