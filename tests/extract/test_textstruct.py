"""Plain-text headings (issue 27 item 4): a name signing a letter is no title, and RFC 2616-style
numbered headings whose title starts with a number, or whose one-part number has no dot and no
sub-section, are headings."""
from chunkwise.extract.textstruct import headings_of

LETTERS = """CHAPTER I

The princess took the letter from the table. Princess Mary read it twice, and Mary sighed,
as she always did when a letter from Julie came; then she sat down to answer it, for Julie
and she wrote to each other every week.

My dear friend, your letter of the 13th has given me great delight. So you still love me,
my romantic Julie? I embrace you as I love you.

MARY

P.S. Give my respects to your mother.

When the answer was sealed, the princess went down to dinner.

CHAPTER II

A note from the Emperor came at noon. It was short, as notes from Napoleon always were, and
Napoleon had signed it himself.

You are letting yourself be tricked by an aide-de-camp of the Emperor.

NAPOLEON

SECOND EPILOGUE

The second epilogue is about history, and the first one was about the family.

INTRODUCTION

An introduction, as introductions go, written in an introductory way.

CHAPTER III

JULIE

Julie wrote in French, as she always did.
"""


def test_a_name_on_its_own_line_is_a_signature_not_a_heading():
    # MARY and NAPOLEON are names (always capitalised, met in the middle of sentences):
    # signatures, not titles; CHAPTER, SECOND EPILOGUE and INTRODUCTION are titles, and so is a name
    # right under a heading (a chapter called JULIE)
    assert headings_of(LETTERS) == [(1, "CHAPTER I"), (1, "CHAPTER II"), (1, "SECOND EPILOGUE"),
                                    (1, "INTRODUCTION"), (1, "CHAPTER III"), (1, "JULIE")]


def test_a_capitalised_word_met_only_at_sentence_starts_stays_a_title():
    text = "PREFACE\n\nPreface words come first. Preface is what this part is called.\n\nEPILOGUE\n\nThe end.\n"
    assert headings_of(text) == [(1, "PREFACE"), (1, "EPILOGUE")]


RFC2616_LIKE = """Network Working Group                                      A. Author
Request for Comments: 9998                                     June 1999

                       Hypertext Transfer for Tests

1 Introduction

   This document is the introduction.  It goes on for a few lines
   so that the body is indented, as the body of an RFC is.

1.1 Purpose

   The purpose of this protocol is to be an example for the tests.

2 Status Code Definitions

   Each status code is described below.

2.1 Informational 1xx

   This class of status code indicates a provisional response.

2.1.1 100 Continue

   The client SHOULD continue with its request.

2.1.2 101 Switching Protocols

   The server understands and is willing to comply.

2.2 Successful 2xx

2.2.1 200 OK

   The request has succeeded.

2.2.2 206 (Unused)

   This code is no longer used.

3 Access Authentication

   HTTP provides several challenge-response authentication mechanisms.

4 Acknowledgments

   This specification makes heavy use of the augmented BNF.

5 References

   [1] Alvestrand, H., "Tags for the Identification of Languages".
"""


def test_rfc2616_style_numbered_headings():
    got = [(level, title.split(" ", 1)[0]) for level, title in headings_of(RFC2616_LIKE)]
    assert got == [(1, "1"), (2, "1.1"), (1, "2"), (2, "2.1"), (3, "2.1.1"), (3, "2.1.2"), (2, "2.2"),
                   (3, "2.2.1"), (3, "2.2.2"), (1, "3"), (1, "4"), (1, "5")]


def test_numbers_in_prose_and_lists_stay_text():
    # a one-part number joins the sequence only next to an accepted top-level number of the same
    # style, and only in a document with numbered sub-sections; a figure starting a line is no title
    text = ("Shopping\n\n1 Apples\n\n2 Pears\n\nThe count went from 2.5\n\n1.5 100 people came\n\n"
            "and left.\n")
    assert headings_of(text) == []
    numbered = "1 Scope\n\nText here.\n\n1.1 Terms\n\nMore text.\n\n2. Pears\n\nFruit.\n\n7 Apples\n\nFruit.\n"
    assert [t for _, t in headings_of(numbered)] == ["1 Scope", "1.1 Terms"]
