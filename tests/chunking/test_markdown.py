"""The Rust and Python Markdown backends must find the same structure (same sections, same blocks)."""
import pytest
from conftest import chroma_texts
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chunkwise.chunking.markdown import parse_markdown

pytest.importorskip("markdown_it_pyrs")

LINES = ["# Heading", "## Sub", "Setext", "------", "====", "```bash", "# comment", "```", "| a | b |",
         "| --- | --- |", "| 1 | 2 |", "1. step", "   - sub", "- item", "> quote", "    code", "<div>", "</div>",
         "---", "title: x", "plain words é ü 東京 😀.", "", "", "***", "[ref]: http://x"]


def same(text):
    rs, py = parse_markdown(text, "rs"), parse_markdown(text, "py")
    assert rs.body_start == py.body_start
    assert rs.title == py.title
    assert [(s.start, s.end, s.heading_path) for s in rs.sections] == [(s.start, s.end, s.heading_path) for s in py.sections]
    for a, b in zip(rs.sections, py.sections):
        assert [(x.kind, x.start, x.end, x.level, x.text) for x in a.blocks] == \
               [(x.kind, x.start, x.end, x.level, x.text) for x in b.blocks]
        items_a = [x.meta.get("items") for x in a.blocks]
        items_b = [x.meta.get("items") for x in b.blocks]
        assert items_a == items_b


def test_backends_agree_on_examples(examples):
    for name, text in examples.items():
        same(text)


def test_backends_agree_on_benchmark_corpora():
    for text in chroma_texts().values():
        same(text)


BREAKS = ("#", "```", "---", "***", "<div>", "</div>", "====", "------")  # end a paragraph
OPENS = (">", "-", "1.")  # a quote or list whose paragraph takes lazy continuation lines


def table_in_lazy_paragraph(lines):
    """Whether a pipe line continues (lazily) a quote's or list's paragraph, however many lines
    after the opener: the one input family the backends are known to read differently."""
    lazy = False
    for line in lines:
        if not line.strip() or line.startswith(BREAKS):
            lazy = False
        elif line.startswith("|") and lazy:
            return True
        elif line.lstrip().startswith(OPENS) or line.startswith("    "):
            lazy = True
    return False


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=25))
def test_backends_agree_on_generated_markdown(lines):
    # Known divergence: a pipe table inside a quote's or list's lazily continued paragraph starts a
    # table in markdown-it.rs but continues the paragraph in markdown-it-py. Either way every
    # chunking invariant holds; only the preferred cut differs (and the backend is in the config
    # fingerprint, so a store never mixes the two readings).
    assume(not table_in_lazy_paragraph(lines))
    same("\n".join(lines) + "\n")


# Found by the property above with fresh examples: the table two lines under the quote, after a
# lazily continued reference line. Pinned so that a backend upgrade that changes either reading shows.
LAZY = "> quote\n[ref]: http://x\n| a | b |\n| --- | --- |\n"


def test_the_known_divergence_loses_no_text():
    pytest.importorskip("markdown_it_pyrs")
    assert table_in_lazy_paragraph(LAZY.splitlines())
    rs, py = (parse_markdown(LAZY, b) for b in ("rs", "py"))
    blocks = {b: [(x.kind, x.start, x.end) for s in d.sections for x in s.blocks] for b, d in (("rs", rs), ("py", py))}
    assert blocks == {"rs": [("blockquote", 0, 23), ("table", 24, 47)], "py": [("blockquote", 0, 47)]}
    import importlib.util
    from unittest import mock

    from chunkwise.config import ChunkConfig

    from chunkwise.chunking.markdown import markdown_backend

    with_rust = ChunkConfig().fingerprint()
    markdown_backend.cache_clear()  # it is looked up once per process
    try:
        with mock.patch.object(importlib.util, "find_spec", return_value=None):
            without = ChunkConfig().fingerprint()  # as on a machine without the Rust wheel
    finally:
        markdown_backend.cache_clear()
    assert with_rust != without  # a store built by one reading is re-chunked, not mixed, by the other


# markdown-it-pyrs 0.4 panics ("index out of bounds") on a pipe-table delimiter under a paragraph
# holding a code-span opener; found by the chunking properties with fresh examples.
PANICS = "The regex [^`]+ matches.\n|---|\n"


def test_a_rust_parser_panic_falls_back_to_markdown_it_py():
    pytest.importorskip("markdown_it_pyrs")
    with pytest.raises(BaseException, match="index out of bounds"):
        parse_markdown(PANICS, backend="rs")  # asked for by name: the panic is not hidden
    assert parse_markdown(PANICS) == parse_markdown(PANICS, backend="py")
