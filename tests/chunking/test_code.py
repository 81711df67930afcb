"""Source code and config files as a format (issue 14 item 5): sniffed by suffix and shebang,
chunked by syntax (whole definitions under the cap, enclosing class as heading path), line-packed
when no grammar is known, and ``auto`` routes code files to it."""
from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter")

from chunkers import chunk_text  # noqa: E402
from chunkwise import api  # noqa: E402
from chunkwise.chunking.code import has_grammar, outline  # noqa: E402
from chunkwise.config import ChunkConfig  # noqa: E402
from chunkwise.sources import CODE, SourceFile, iter_sources  # noqa: E402

PYTHON = '''"""Billing helpers."""
import math


def cents(amount):
    """Round to cents."""
    return math.floor(amount * 100) / 100


class Invoice:
    """An invoice with lines."""

    def __init__(self, lines):
        self.lines = list(lines)

    # Sum of all line totals, before tax.
    def subtotal(self):
        total = 0
        for line in self.lines:
            total += line.quantity * line.price
        return cents(total)

    @property
    def empty(self):
        return not self.lines


def main():
    print(Invoice([]).empty)
'''

GO = '''package store

import "errors"

// ErrMissing is returned when a key is absent.
var ErrMissing = errors.New("missing")

type Store struct {
	items map[string]string
}

// Get returns the value of key.
func (s *Store) Get(key string) (string, error) {
	v, ok := s.items[key]
	if !ok {
		return "", ErrMissing
	}
	return v, nil
}

func (s *Store) Put(key, value string) {
	s.items[key] = value
}
'''

TS = '''import { readFile } from "fs";

export interface Options {
  retries: number;
}

export class Client {
  constructor(private opts: Options) {}

  async fetchAll(urls: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const u of urls) {
      out.push(await this.fetchOne(u));
    }
    return out;
  }

  private async fetchOne(url: string): Promise<string> {
    return url.toUpperCase();
  }
}

export function helper(x: number): number {
  return x * 2;
}
'''

RUST = '''use std::collections::HashMap;

/// A cache with a size limit.
pub struct Cache {
    map: HashMap<String, String>,
}

impl Cache {
    pub fn new() -> Self {
        Cache { map: HashMap::new() }
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.map.get(key)
    }
}

fn main() {
    let c = Cache::new();
    println!("{:?}", c.get("a"));
}
'''

YAML = '''server:
  host: 0.0.0.0
  port: 8080
database:
  url: postgres://db/app
  pool: 5
logging:
  level: info
'''


def _defs(text: str, names: list[str]) -> list[tuple[int, int]]:
    """Spans of the definitions named (from their line to the next blank-line-separated unit)."""
    spans = []
    for name in names:
        a = text.index(name)
        a = text.rfind("\n", 0, a) + 1
        b = text.find("\n\n", a)
        spans.append((a, len(text) if b == -1 else b))
    return spans


@pytest.mark.parametrize("lang, text, defs, container, size", [
    ("python", PYTHON, ["def cents", "    def subtotal", "def main"], ("class Invoice",), 60),
    ("go", GO, ["func (s *Store) Get", "func (s *Store) Put"], None, 60),
    ("typescript", TS, ["  async fetchAll", "export function helper"], ("class Client",), 60),
    ("rust", RUST, ["    pub fn get", "fn main"], ("impl Cache",), 40),
])
def test_whole_definitions_under_the_cap(lang, text, defs, container, size):
    assert has_grammar(lang)
    chunks = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=size, unit="tokens"))
    assert all(c.text == text[c.start_char : c.end_char] and c.size <= size for c in chunks)
    assert not any(c.needs_review for c in chunks)
    sizer = api.make_chunker(ChunkConfig(size=size)).sizer
    for a, b in _defs(text, defs):
        body = text[a:b].strip()
        if sizer.count(body) <= size:  # a definition that fits is in one chunk, whole
            assert any(c.start_char <= a + len(text[a:b]) - len(text[a:b].lstrip()) and b <= c.end_char + 1
                       for c in chunks), (lang, body[:40])
    if container:
        inside = [c for c in chunks if c.heading_path == container]
        assert inside, [c.heading_path for c in chunks]


def test_comments_and_decorators_travel_with_their_definition():
    # 48: the comment and subtotal fit together (43 tokens); see the test below for when they do not
    chunks = chunk_text(PYTHON, ChunkConfig(strategy="code", language="python", size=48))
    starts = {PYTHON[c.start_char : c.start_char + 30] for c in chunks}
    assert any(s.startswith("# Sum of all line totals") for s in starts)
    assert not any(s.startswith("def subtotal") for s in starts)


def test_a_function_too_long_is_split_at_statements():
    body = "".join(f"    step_{i} = compute({i})\n" for i in range(80))
    text = f"def long():\n{body}    return step_79\n"
    chunks = chunk_text(text, ChunkConfig(strategy="code", language="python", size=64))
    assert len(chunks) > 1 and not any(c.needs_review for c in chunks)
    assert all(c.text.split("\n")[0].lstrip().startswith(("def long", "step_", "return")) for c in chunks)


def test_config_files_by_top_level_key():
    chunks = chunk_text(YAML, ChunkConfig(strategy="code", language="yaml", size=50, unit="chars"))
    assert [c.text.split(":")[0] for c in chunks] == ["server", "database", "logging"]
    json_text = '{\n  "name": "app",\n  "scripts": {\n    "build": "tsc",\n    "test": "jest"\n  },\n  "private": true\n}\n'
    o = outline(json_text, "json")
    assert ("scripts",) in {tuple(c[2:]) for c in o.containers}


def test_unknown_language_is_line_packed():  # lua: no grammar
    text = "".join(f"line {i} of a lua file\n" + ("\n" if i % 5 == 4 else "") for i in range(40))
    chunks = chunk_text(text, ChunkConfig(strategy="code", language="lua", size=30))
    assert len(chunks) > 1 and all(c.text.endswith("file") for c in chunks)
    assert all(c.text == text[c.start_char : c.end_char] for c in chunks)


def test_sniffing_and_auto_routing(tmp_path):
    (tmp_path / "app.py").write_text(PYTHON, encoding="utf-8")
    (tmp_path / "store.go").write_text(GO, encoding="utf-8")
    (tmp_path / "deploy").write_text("#!/usr/bin/env bash\nset -e\n\ndeploy() {\n  echo hi\n}\n", encoding="utf-8")
    (tmp_path / "conf.toml").write_text('[tool.ruff]\nline-length = 100\n\n[tool.mypy]\nstrict = true\n',
                                        encoding="utf-8")
    (tmp_path / "style.css").write_text("body { color: red }\n", encoding="utf-8")
    files = {i.doc_id: i for i in iter_sources([tmp_path]) if isinstance(i, SourceFile)}
    assert {k: v.media_type for k, v in files.items()} == dict.fromkeys(["app.py", "conf.toml", "deploy", "store.go"], CODE)
    docs = {d.source: d for d in api.iter_documents([tmp_path]) if not isinstance(d, api.SourceFailure)}
    assert docs["deploy"].metadata["language"] == "bash" and docs["app.py"].metadata["language"] == "python"
    chunker = api.make_chunker(ChunkConfig(strategy="auto", size=60))
    chunks = api.chunk_document(docs["app.py"], api.for_document(chunker, docs["app.py"]))
    assert {c.kind for c in chunks} == {"code"} and ("class Invoice",) in {c.heading_path for c in chunks}
    # whitespace is code: indentation survives normalisation
    assert any("\n        total = 0\n" in c.text for c in chunks)
    toml = api.chunk_document(docs["conf.toml"], api.for_document(api.make_chunker(ChunkConfig(strategy="auto",
                                                                                               size=12)), docs["conf.toml"]))
    assert [c.text.split("\n")[0] for c in toml] == ["[tool.ruff]", "[tool.mypy]"]


from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = st.sampled_from(["def f(x):", "class A:", "namespace N {", "class B {", "<?php\n", "end",
                           "    ", "\n", "\n\n", "return x", "# note", "@dec", "é", "日本",
                           "if x:", "pass", "{", "}", "x = [1,", "]", '"""', "fn main() {", "impl T {", "  "])


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECES, max_size=80).map("".join),
       st.sampled_from(["python", "rust", "yaml", "ruby", "cpp", "csharp", "php"]),
       st.integers(min_value=4, max_value=40))
def test_code_chunks_are_slices_under_the_cap(text, language, size):
    chunks = chunk_text(text, ChunkConfig(strategy="code", language=language, size=size, unit="tokens"))
    assert all(c.text == text[c.start_char : c.end_char] and c.size <= size for c in chunks)
    assert all(a.end_char <= b.start_char for a, b in zip(chunks, chunks[1:]))
    assert "".join(text.split()) == "".join("".join(c.text.split()) for c in chunks)


# A definition whose comment lines above it do not fit with it: the packer used to start at the
# comments and cut inside the definition (9 definitions of the code-chunking benchmark: C macros
# and TypeScript interfaces under long doc comments).
_DOC = "".join(f" * {w} describes what the next declaration is for, in some detail.\n"
               for w in ("Dialog", "Handler", "Pointer"))
_TS_DOC = f"/**\n{_DOC} */\nexport interface Dialog {{\n" + "".join(
    f"  /**\n   * Step {i}.\n   */\n  step{i}(options?: {{ delay?: number }}): Promise<void>;\n\n" for i in range(4)) + "}\n"
_C_DOC = f"/*\n{_DOC} */\n#define Py_CLEAR(op) \\\n    do {{ \\\n        PyObject *tmp = (op); \\\n" \
         "        if (tmp != NULL) { \\\n            (op) = NULL; \\\n            Py_DECREF(tmp); \\\n" \
         "        } \\\n    } while (0)\n\nint after(void);\n"


@pytest.mark.parametrize("lang, text, head", [("typescript", _TS_DOC, "export interface Dialog"),
                                               ("c", _C_DOC, "#define Py_CLEAR")])
def test_a_definition_that_fits_is_whole_when_its_comments_do_not_fit_with_it(lang, text, head):
    sizer = api.make_chunker(ChunkConfig(size=100)).sizer
    a = text.index(head)
    b = text.rindex("}" if lang == "typescript" else "while (0)") + (1 if lang == "typescript" else 9)
    unit = sizer.count(text[a:b])
    size = unit + 4  # the unit fits; with its doc comment it does not, though the comment alone does
    assert sizer.count(text[:a]) < size < sizer.count(text[:b])
    chunks = chunk_text(text, ChunkConfig(strategy="code", language=lang, size=size))
    assert any(c.start_char <= a and b <= c.end_char for c in chunks), [(c.start_char, c.end_char) for c in chunks]


_WORDS = st.sampled_from(["total", "rate", "items", "value", "name", "count", "retry", "cache", "日本", "é"])
_STMT = st.tuples(_WORDS, _WORDS, st.integers(0, 999)).map(lambda t: f"{t[0]}_{t[2]} = {t[1]}({t[2]})")
_COMMENT = st.lists(st.lists(_WORDS, min_size=1, max_size=12).map(" ".join), max_size=6)
_FUNC = st.tuples(_COMMENT, _WORDS, st.lists(_STMT, min_size=1, max_size=12))
_UNIT = st.one_of(_FUNC.map(lambda f: ("def", f)),
                  st.tuples(_COMMENT, _WORDS, st.lists(_FUNC, min_size=1, max_size=4)).map(lambda c: ("class", c)))


def _python(units) -> tuple[str, list[tuple[int, int]]]:
    """Python source from generated units, and the span of every function and class (its own lines,
    without the comment lines above it)."""
    out, spans = [], []
    pos = 0

    def add(line: str) -> None:
        nonlocal pos
        out.append(line + "\n")
        pos += len(line) + 1

    def func(f, indent: str, i: int) -> None:
        comment, name, body = f
        for c in comment:
            add(f"{indent}# {c}")
        a = pos + len(indent)
        add(f"{indent}def {name}_{i}(x):")
        for s in body:
            add(f"{indent}    {s}")
        spans.append((a, pos - 1))

    for i, (kind, u) in enumerate(units):
        if kind == "def":
            func(u, "", i)
        else:
            comment, name, methods = u
            for c in comment:
                add(f"# {c}")
            a = pos
            add(f"class {name.title()}{i}:")
            for j, m in enumerate(methods):
                func(m, "    ", j)
                if j < len(methods) - 1:
                    add("")
            spans.append((a, pos - 1))
        add("")
        add("")
    return "".join(out), spans


@settings(max_examples=80, deadline=None)
@given(st.lists(_UNIT, min_size=1, max_size=8), st.integers(min_value=16, max_value=160),
       st.sampled_from(["tokens", "chars"]))
def test_a_definition_that_fits_under_the_cap_is_one_chunk(units, size, unit):
    text, spans = _python(units)
    config = ChunkConfig(strategy="code", language="python", size=size, unit=unit)
    chunker = api.make_chunker(config)
    chunks = chunker.chunk(text)
    assert all(c.text == text[c.start_char : c.end_char] and c.size <= size for c in chunks)
    for a, b in spans:
        if chunker.sizer.count(text[a:b]) <= size and b - a <= chunker.char_cap:
            assert any(c.start_char <= a and b <= c.end_char for c in chunks), (text[a:b][:60], size)
