"""`import chunkwise` must stay light: heavy libraries load only when a feature needs them."""
import subprocess
import sys

HEAVY = ["tokenizers", "tokie", "tiktoken", "torch", "pypdf", "pypdfium2", "markdown_it", "numpy",
         "sentence_transformers", "transformers", "ray", "pyarrow", "pandas"]


def test_import_loads_nothing_heavy():
    code = (
        "import sys, chunkwise, chunkwise.api, chunkwise.config, chunkwise.types; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"imported at startup: {out.stdout.strip()}"


def test_public_api():
    import chunkwise

    for name in ("chunk_text", "chunk_file", "make_chunker", "plan", "Chunk", "ChunkConfig", "ConfigError"):
        assert hasattr(chunkwise, name)
