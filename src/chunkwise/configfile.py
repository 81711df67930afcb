"""``chunkwise.toml``, read and validated once: unknown tables or keys and wrong types fail with one
line naming the key and what it should be, before any work starts.

```toml
[chunking]            # ChunkConfig fields: strategy, size, overlap, unit, tokenizer, header, ...
[ingest]              # embedder = "minilm", acl = ["staff"], acl_map = {"hr/**" = ["hr"]}, embed_mode = "plain",
                      # executor = "ray", ray_address = "head:6379", ray_gpus = 1, ray_embedders = 2
[eval]                # k, budget, mode, expand, overfetch, passage_budget
[search]              # field_weights = {title = 2, heading = 1.5}, fusion = {bm25 = 1, dense = 0.5}
```
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Mapping

from chunkwise.config import ChunkConfig
from chunkwise.errors import ConfigError

_TYPES = {"str": str, "int": int, "bool": bool, "float": (int, float), "None": type(None)}
_INGEST = {"embedder": "str", "acl": "tags", "acl_map": "acl_map", "embed_mode": "str", "executor": "str",
           "ray_address": "str", "ray_gpus": "float", "ray_embedders": "int"}
_EVAL = {"k": "int", "budget": "int", "mode": "str", "expand": "str", "overfetch": "int",
         "passage_budget": "int"}


@dataclass(frozen=True)
class ConfigFile:
    """The validated tables of a config file (empty when there is none)."""

    path: str = ""
    chunking: Mapping[str, object] = field(default_factory=dict)
    ingest: Mapping[str, object] = field(default_factory=dict)
    eval: Mapping[str, object] = field(default_factory=dict)
    search: Mapping[str, object] = field(default_factory=dict)  # field_weights (FieldWeights), fusion (Fusion)


def load_config(path: str | os.PathLike | None) -> ConfigFile:
    if not path:
        return ConfigFile()
    import tomllib

    from chunkwise.textfile import read_text

    text = read_text(path, "--config")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    unknown = sorted(set(data) - {"chunking", "ingest", "eval", "search"})
    if unknown:
        raise ConfigError(f"{path}: unknown table or key {unknown[0]!r}; the file has [chunking], [ingest], [eval] "
                          f"and [search]")
    tables = {}
    for name in ("chunking", "ingest", "eval", "search"):
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: {name} must be a table ([{name}]), got {_kind(table)}")
        tables[name] = table
    return ConfigFile(os.fspath(path), _chunking(path, tables["chunking"]), _checked(path, "ingest", tables["ingest"], _INGEST),
                      _checked(path, "eval", tables["eval"], _EVAL), _search(path, tables["search"]))


def _search(path, table: dict) -> dict:
    """[search]: BM25 field weights and hybrid fusion weights, each a table or a "name=N,..." string."""
    from chunkwise.lexical import FieldWeights
    from chunkwise.retrieve.fusion import Fusion

    out = {}
    for key, value in table.items():
        kind = {"field_weights": FieldWeights, "fusion": Fusion}.get(key)
        if kind is None:
            raise ConfigError(f"{path}: unknown key {key!r} in [search]; allowed: field_weights, fusion")
        if not isinstance(value, (dict, str)):
            raise ConfigError(f"{path}: [search] {key} must be a table or a string, got {_kind(value)} {value!r}")
        try:
            out[key] = kind.parse(value)
        except (ConfigError, TypeError) as exc:
            raise ConfigError(f"{path}: [search] {key}: {exc}") from None
    return out


def _kind(value) -> str:
    return {list: "a list", dict: "a table", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def _chunking(path, table: dict) -> dict:
    known = {f.name: str(f.type) for f in dataclasses.fields(ChunkConfig) if f.name != "extra"}
    out = {}
    for key, value in table.items():
        if key not in known:
            from difflib import get_close_matches

            near = get_close_matches(key, list(known), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ConfigError(f"{path}: unknown key {key!r} in [chunking]{hint}; allowed: {', '.join(known)}")
        if key == "separators":
            if not (isinstance(value, list) and all(isinstance(s, str) for s in value)):
                raise ConfigError(f"{path}: [chunking] separators must be a list of strings, got {_kind(value)}")
            value = tuple(value)
        elif not _fits(value, known[key]):
            raise ConfigError(f"{path}: [chunking] {key} must be {_want(known[key])}, got {_kind(value)} {value!r}")
        out[key] = value
    return out


def _fits(value, annotation: str) -> bool:
    allowed = [t.strip() for t in annotation.split("|")]
    if isinstance(value, bool):
        return "bool" in allowed
    return any(isinstance(value, _TYPES[t]) for t in allowed if t in _TYPES)


def _want(annotation: str) -> str:
    names = {"str": "a string", "int": "an integer", "bool": "true or false", "float": "a number"}
    return " or ".join(names[t.strip()] for t in annotation.split("|") if t.strip() in names)


def _checked(path, name: str, table: dict, schema: dict) -> dict:
    out = {}
    for key, value in table.items():
        kind = schema.get(key)
        if kind is None:
            raise ConfigError(f"{path}: unknown key {key!r} in [{name}]; allowed: {', '.join(schema)}")
        if kind == "tags":
            value = tags_value(value, f"{path}: [{name}] {key}")
        elif kind == "acl_map":
            value = acl_map_value(value, f"{path}: [{name}] {key}")
        elif not _fits(value, kind):
            raise ConfigError(f"{path}: [{name}] {key} must be {_want(kind)}, got {_kind(value)} {value!r}")
        out[key] = value
    return out


def tags_value(value, where: str):
    """Access tags: a list of strings or one comma-separated string, in ``access``'s grammar."""
    from chunkwise.access import AccessTags

    return AccessTags.parse(value, where)


def acl_map_value(value, where: str):
    """``{glob: tags}``: the same check for TOML's acl_map and ``--acl-map`` JSON."""
    from chunkwise.access import parse_acl_map

    return parse_acl_map(value, where)


def load_acl_map(path: str | os.PathLike) -> dict[str, tuple[str, ...]]:
    """``--acl-map FILE``: a JSON object of glob -> [tags], checked like TOML's ``acl_map``."""
    import json

    from chunkwise.textfile import read_text

    text = read_text(path, "--acl-map")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--acl-map {path}: not valid JSON ({exc}); expected {{\"glob\": [\"tag\", ...]}}") from exc
    return acl_map_value(data, f"--acl-map {path}")
