"""Code files as documents: the grammar named from the file (issue 29 item 3: C++ headers)."""
from __future__ import annotations

import pytest

from chunkwise.extract.code import extract

C_HEADER = b"#ifndef BUF_H\n#define BUF_H\nstruct buf {\n    char *data;\n};\nint buf_push(struct buf *b, char c);\n#endif\n"
CPP_HEADER = b"#pragma once\nnamespace geo {\nclass Point {\n public:\n  double norm() const;\n};\n}\n"


@pytest.mark.parametrize("name, data, language", [
    ("buf.h", C_HEADER, "c"),
    ("point.h", CPP_HEADER, "cpp"),
    ("point.hpp", CPP_HEADER, "cpp"),
    ("point.cxx", b"int main() { return 0; }\n", "cpp"),
    ("point.hh", CPP_HEADER, "cpp"),
    ("tpl.h", b"template <typename T>\nT twice(T x) { return x + x; }\n", "cpp"),
    ("Invoice.cs", b"namespace Shop;\npublic class Invoice {}\n", "csharp"),
    ("invoice.rb", b"class Invoice\nend\n", "ruby"),
    ("invoice.php", b"<?php\nclass Invoice {}\n", "php"),
])
def test_language_of_a_code_file(name, data, language):
    assert extract(data, name).metadata["language"] == language
