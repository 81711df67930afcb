"""langid's model, decoded once per machine instead of once per process.

Why: langid ships its model as a bz2-compressed pickle in a base64 string; decoding it costs ~4.5
CPU seconds (bz2 ~3.9 s), and every audit worker pays it again: two workers were ~9 of an audit's
CPU seconds on ``../shared/data``. The decoded arrays are kept in the cache directory
(``$XDG_CACHE_HOME/chunkwise/langid``, else ``~/.cache/...``), named by a digest of langid's model
string, as plain bytes and JSON (no pickle: a file there cannot run code), and read back in a
fraction of a second into the very objects ``from_modelstring`` builds: the same identifier, the
same answers. A cache that cannot be read or written (a read-only home) costs only the time.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from array import array
from pathlib import Path

FORMAT = b"chunkwise-langid-1\n"
_PARTS = (("ptc", "f"), ("pc", "f"), ("nextmove", "H"))  # nb_ptc, nb_pc, tk_nextmove: array.array typecodes


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunkwise" / "langid"


def identifier(norm_probs: bool = True):
    """``LanguageIdentifier.from_modelstring(langid's model, norm_probs=...)``, from the cache when
    it holds this model (else decoded, and cached for the next process)."""
    from langid.langid import model

    path = cache_dir() / f"model-{hashlib.sha256(_as_bytes(model)).hexdigest()[:16]}.bin"
    parts = _read(path)
    if parts is None:
        parts = _decode(model)
        _write(path, parts)
    return _build(*parts, norm_probs=norm_probs)


def _as_bytes(model) -> bytes:
    return model if isinstance(model, bytes) else model.encode()


def _decode(model) -> tuple:
    """langid's own decoding (``from_modelstring``): nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output."""
    import base64
    import bz2
    from pickle import loads

    return tuple(loads(bz2.decompress(base64.b64decode(model))))


def _build(nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output, norm_probs: bool):
    """The rest of ``from_modelstring``, as langid does it."""
    import numpy as np
    from langid.langid import LanguageIdentifier

    nb_numfeats = int(len(nb_ptc) / len(nb_pc))
    nb_pc = np.array(nb_pc)
    nb_ptc = np.array(nb_ptc).reshape(nb_numfeats, len(nb_pc))
    return LanguageIdentifier(nb_ptc, nb_pc, nb_numfeats, nb_classes, tk_nextmove, tk_output, norm_probs=norm_probs)


def _header(arrays: list) -> dict:
    return {"byteorder": sys.byteorder, "parts": [[name, code, array(code).itemsize, len(a)]
                                                  for (name, code), a in zip(_PARTS, arrays)]}


def _write(path: Path, parts: tuple) -> None:
    nb_ptc, nb_pc, nb_classes, tk_nextmove, tk_output = parts
    arrays = [nb_ptc, nb_pc, tk_nextmove]
    if not all(isinstance(a, array) and a.typecode == code for a, (_, code) in zip(arrays, _PARTS)):
        return  # a langid whose model is built otherwise: not cached
    if not all(isinstance(k, int) and isinstance(v, tuple) and all(isinstance(x, int) for x in v)
               for k, v in tk_output.items()):
        return
    head = {**_header(arrays), "classes": list(nb_classes), "output": [[k, list(v)] for k, v in tk_output.items()]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".model-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(FORMAT + json.dumps(head).encode() + b"\n")
                for a in arrays:
                    f.write(a.tobytes())
            os.replace(tmp, path)  # whole or not at all, whichever worker writes it
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # no cache here: the next process decodes again


def _read(path: Path) -> tuple | None:
    """The cached parts, or None when the file is missing, foreign or damaged in any way."""
    try:
        data = path.read_bytes()
        if not data.startswith(FORMAT):
            return None
        end = data.index(b"\n", len(FORMAT))
        head = json.loads(data[len(FORMAT):end])
        arrays, pos = [], end + 1
        for (name, code), (n, c, size, count) in zip(_PARTS, head["parts"]):
            if (n, c, size) != (name, code, array(code).itemsize) or head["byteorder"] != sys.byteorder:
                return None
            a = array(code)
            a.frombytes(data[pos:pos + size * count])
            if len(a) != count:
                return None
            arrays.append(a)
            pos += size * count
        if pos != len(data) or len(arrays) != len(_PARTS):
            return None
        output = {int(k): tuple(int(x) for x in v) for k, v in head["output"]}
        return arrays[0], arrays[1], [str(c) for c in head["classes"]], arrays[2], output
    except (OSError, ValueError, KeyError, TypeError):
        return None
