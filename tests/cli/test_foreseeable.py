"""Issue 25 item 12: foreseeable conditions through the real command line — a full disk, a device
as the store, a missing or binary golden file, an empty file given to ``check``, an endless file
given as a small one, an absurd worker count, an unreachable Ray cluster. Each is one line on
stderr, exit 1 or 2, no traceback, and nothing changed on disk."""
import os
import resource
import socket
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def cli(*args, cwd=None, preexec_fn=None, timeout=120):
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": ""}
    return subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, preexec_fn=preexec_fn, timeout=timeout)


def one_line(out, code, needle):
    assert out.returncode == code, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("chunkwise: error:")]
    assert len(errors) == 1 and needle in errors[0], out.stderr[-2000:]
    return errors[0]


def corpus(root, n=3, paragraphs=2):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        body = "\n\n".join(" ".join(f"w{i}x{p}x{j} ledger{j % 7}" for j in range(60)) for p in range(paragraphs))
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\n{body}\n", encoding="utf-8")
    return root


def files(folder):
    return sorted(os.listdir(folder))


def test_a_device_as_the_store_is_refused(tmp_path):
    docs = corpus(tmp_path / "docs")
    one_line(cli("ingest", str(docs), "--db", "/dev/null", "--acl", "staff", "--embedder", "hashing"), 2,
             "not a regular file")
    one_line(cli("check", "--db", "/dev/null"), 2, "not a regular file")
    one_line(cli("search", "ledger", "--db", "/dev/null", "--groups", "staff"), 2, "not a regular file")


def _file_size_limit(limit):
    def apply():  # Python ignores SIGXFSZ: a write past the limit fails with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_fails_the_run_with_one_line_and_leaves_a_consistent_store(tmp_path):
    small, big, db = corpus(tmp_path / "small"), corpus(tmp_path / "big", n=80, paragraphs=20), tmp_path / "s.db"
    assert cli("ingest", str(small), "--db", str(db), "--acl", "staff", "--embedder", "hashing").returncode == 0
    out = cli("ingest", str(big), "--db", str(db), "--acl", "staff", "--embedder", "hashing", "--workers", "1",
              preexec_fn=_file_size_limit(600_000))
    one_line(out, 1, "cannot write")
    check = cli("check", "--db", str(db), "--json")
    assert check.returncode == 0 and '"ok": true' in check.stdout, check.stdout + check.stderr


def test_eval_with_a_missing_binary_or_endless_golden_file(tmp_path):
    docs = corpus(tmp_path / "docs")
    (tmp_path / "bad.jsonl").write_bytes(b'\xff\xfe{"id": "q1"}\n')
    one_line(cli("eval", "--golden", str(tmp_path / "nope.jsonl"), "--docs", str(docs), "--embedder", "hashing"), 2,
             "cannot read it")
    one_line(cli("eval", "--golden", str(tmp_path / "bad.jsonl"), "--docs", str(docs), "--embedder", "hashing"), 2,
             "not UTF-8")
    one_line(cli("eval", "--golden", "/dev/zero", "--docs", str(docs), "--embedder", "hashing"), 2, "larger than")
    assert files(tmp_path) == ["bad.jsonl", "docs"]


def test_check_on_an_empty_file_fails_and_writes_nothing(tmp_path):
    (tmp_path / "empty.db").write_bytes(b"")
    one_line(cli("check", "--db", "empty.db", cwd=tmp_path), 2, "not a chunkwise store")
    one_line(cli("search", "x", "--db", "empty.db", "--groups", "staff", cwd=tmp_path), 2, "not a chunkwise store")
    one_line(cli("manifest", "--db", "empty.db", cwd=tmp_path), 2, "not a chunkwise store")
    assert files(tmp_path) == ["empty.db"] and (tmp_path / "empty.db").stat().st_size == 0


def _address_space(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


@pytest.mark.parametrize("args", [
    ("serve", "--db", "{db}", "--tokens", "/dev/zero"),
    ("mcp", "--db", "{db}", "--transport", "http", "--tokens", "/dev/zero"),
    ("ingest", "{docs}", "--db", "{db}", "--config", "/dev/zero"),
    ("ingest", "{docs}", "--db", "{db}", "--acl-map", "/dev/zero"),
    ("eval", "--golden", "{docs}/doc0.md", "--docs", "{docs}", "--grid", "/dev/zero"),
])
def test_an_endless_file_named_as_a_small_one_is_read_with_a_bound(tmp_path, args):
    docs = corpus(tmp_path / "docs")
    db = tmp_path / "s.db"
    assert cli("ingest", str(docs), "--db", str(db), "--acl", "staff", "--embedder", "hashing").returncode == 0
    before = db.read_bytes()
    argv = [a.format(db=db, docs=docs) for a in args]
    # 3 GB of address space: the interpreter and its imports fit; reading /dev/zero unbounded does not.
    one_line(cli(*argv, preexec_fn=_address_space(3 << 30), timeout=60), 2, "larger than")
    assert db.read_bytes() == before


def test_an_absurd_worker_count_is_refused_before_anything_starts(tmp_path):
    docs = corpus(tmp_path / "docs")
    line = one_line(cli("ingest", str(docs), "--db", "s.db", "--acl", "staff", "--embedder", "hashing",
                        "--workers", "100000", cwd=tmp_path), 2, "--workers 100000")
    assert "per CPU" in line
    assert files(tmp_path) == ["docs"]  # no store created


def test_the_worker_cap_is_a_multiple_of_the_cpus():
    from chunkwise.errors import ConfigError
    from chunkwise.sandbox import WORKERS_PER_CPU, check_workers, default_workers

    most = WORKERS_PER_CPU * default_workers()
    assert check_workers(most) == most
    with pytest.raises(ConfigError, match="per CPU"):
        check_workers(most + 1)
    with pytest.raises(ConfigError, match="at least 1"):
        check_workers(0)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_ray_address_is_one_line_not_a_hang(tmp_path):
    pytest.importorskip("ray")
    docs = corpus(tmp_path / "docs")
    address = f"127.0.0.1:{_closed_port()}"
    # Without the check, ray.init retries a closed port for minutes: the subprocess timeout catches that.
    line = one_line(cli("ingest", str(docs), "--db", "s.db", "--acl", "staff", "--embedder", "hashing",
                        "--executor", "ray", "--ray-address", address, cwd=tmp_path, timeout=90), 2, "cannot reach")
    assert address in line
    assert files(tmp_path) == ["docs"]


@pytest.mark.parametrize("address, endpoint", [
    ("head:6379", ("head", 6379)), ("ray://head:10001", ("head", 10001)), ("ray://head", ("head", 10001)),
    ("head", ("head", 6379)), ("[::1]:7000", ("::1", 7000)), ("auto", None), ("10.0.0.5:6380", ("10.0.0.5", 6380)),
])
def test_ray_addresses_name_the_endpoint_tried(address, endpoint):
    from chunkwise.pipeline.ray_address import endpoint as _endpoint

    assert _endpoint(address) == endpoint


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_refused_not_answered_with_arbitrary_passages(tmp_path, query):
    root = corpus(tmp_path / "kb", n=2)
    db = str(tmp_path / "s.db")
    assert cli("ingest", str(root), "--db", db, "--acl", "staff", "--embedder", "hashing", "--workers", "1").returncode == 0
    out = cli("search", query, "--db", db, "--groups", "staff")
    one_line(out, 2, "empty")
    assert out.stdout == ""


@pytest.mark.parametrize("command", ["chunk", "audit", "extract"])
def test_a_path_that_names_nothing_is_a_usage_error(tmp_path, command):
    """A typo in PATH is exit 2 and one line, as in ``ingest``, not one failed file (exit 1); a
    real file beside it is not needed to see it."""
    one_line(cli(command, str(tmp_path / "nosuch.md")), 2, "nosuch.md: no such file or folder")
    (tmp_path / "real.md").write_text("# Real\n\nThe ledger freezes at noon.\n", encoding="utf-8")
    assert cli(command, str(tmp_path / "real.md")).returncode == 0


@pytest.mark.parametrize("command", ["chunk", "ingest", "audit"])
def test_a_parser_panic_the_file_survives_prints_nothing_raw(tmp_path, command, monkeypatch):
    """markdown-it-pyrs panics on some pipe-table lines; the Python parser takes over and the file is
    fine, so nothing of the panic may reach the terminal, RUST_BACKTRACE=1 or not (eighth session,
    helper frontdoor: the worker forwarded Rust's raw panic report with the item's other output)."""
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "table.md").write_text("| a |\n|---|\n| The regex [^`]+ matches. |\n", encoding="utf-8")
    extra = ["--db", str(tmp_path / "s.db"), "--acl", "staff", "--embedder", "none"] if command == "ingest" else []
    out = cli(command, str(tmp_path / "docs" if command != "chunk" else tmp_path / "docs" / "table.md"), *extra)
    assert out.returncode == 0, out.stderr
    assert "panicked" not in out.stderr and "RUST_BACKTRACE" not in out.stderr and "backtrace" not in out.stderr


@pytest.mark.parametrize("argv, says", [
    (["chunk", "--strategy", "no\x1b[31mpe", "examples/"], "invalid choice"),
    (["ingest", "--file-timeout", "-1", "examples/"], "must be above 0"),
    (["nosuch"], "invalid choice"),
    ([], "required"),
])
def test_a_usage_error_is_one_escaped_line(argv, says):
    """A usage error is one line that says where the help is (exit 2): not argparse's usage block, and
    what was typed never reaches the terminal raw."""
    done = subprocess.run([sys.executable, "-m", "chunkwise.cli.main", *argv], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 2 and done.stdout == "", done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and says in lines[0] and "--help" in lines[0] and "usage:" not in done.stderr, done.stderr
    assert "\x1b" not in done.stderr
