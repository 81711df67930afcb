"""benchmarks/text_headings.py's scorer (issue 27 item 4: RFC headings against their tables of
contents) on the RFC-like text of test_formats: a check that cannot fail is no check."""
import sys
from pathlib import Path

from test_formats import RFC_LIKE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import text_headings  # noqa: E402


def test_table_of_contents_entries_and_where_the_body_starts():
    keys, body = text_headings.toc(RFC_LIKE)
    assert keys == ["#1", "#1.1", "#2"]
    assert RFC_LIKE[body:].startswith("1.  Introduction\n")
    assert text_headings.key("Appendix A.", "Examples") == "#A" and text_headings.key(None, "Authors' Addresses") \
        == "authors addresses"


def test_rfc_score_counts_deeper_headings_apart(tmp_path):
    path = tmp_path / "rfc9999.txt"
    path.write_text(RFC_LIKE, encoding="utf-8")
    row = text_headings.score_rfc(path)
    assert (row["toc"], row["recall_hit"], row["missed"]) == (3, 3, [])
    # 2.1.1 is two levels below the listed 2 (not "one below a listed entry"): extra, as are the appendix ones
    assert "#2.1.1" in row["extra"] and "#A" in row["extra"] and row["below_toc"] == 0


def test_a_table_of_contents_entry_whose_page_number_ate_the_leader():
    # RFC 2616: "13.3.4   Rules for ... Last-Modified Dates.89", then "13.3.5   Non-validating ..."
    text = ("Table of Contents\n\n   13.3.4   Rules for When to Use Entity Tags and Dates.89\n"
            "   13.3.5   Non-validating Conditionals ..............................90\n\n1 Introduction\n")
    keys, body = text_headings.toc(text)
    assert keys == ["#13.3.4", "#13.3.5"] and text[body:].startswith("1 Introduction")
