"""A store keeps the settings it was built with, and a run uses them unless told otherwise.

Every ingest records its chunk config and embedder in the store. The next run:
- without chunk options or an embedder uses the recorded ones (``chunkwise ingest docs/ --db x.db``
  re-run after edits does what the first run did);
- with options applies them *over* the recorded config, and if the result differs (or the embedder
  does) refuses with a message naming each difference, unless ``reconfigure`` is set: then every
  document is re-chunked and re-embedded with the new settings (a half-reconfigured store, with
  chunks over the new cap or two embedding models, can never happen by accident).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from chunkwise.config import ChunkConfig
from chunkwise.errors import StoreError

AUTO = "auto"  # embedder / embed mode: the store's own, else the default


@dataclass(frozen=True)
class RunSettings:
    config: ChunkConfig
    embedder: object | None  # an Embedder, or None for no vectors
    embed_mode: str


def resolve(stored: Mapping[str, str], location: str, *, config: ChunkConfig | None, options: Mapping | None,
            default: ChunkConfig, embedder, embed_mode: str | None, reconfigure: bool,
            default_embedder: str = "hashing") -> RunSettings:
    """The settings of this run, given what the store recorded (``Store.settings()``)."""
    from chunkwise.embed import make_embedder
    from chunkwise.embed.late import base_model_name

    before = ChunkConfig.from_json(stored["config"]) if "config" in stored else None
    base = config if config is not None else before or default
    final = replace(base, **options) if options else base
    recorded = stored.get("embedder")
    if embed_mode in (None, AUTO):
        embed_mode = "late" if recorded and "+" in recorded else "plain"
    if isinstance(embedder, str) and embedder == AUTO:
        embedder = make_embedder(base_model_name(recorded) if recorded else default_embedder)
    elif isinstance(embedder, str):
        embedder = make_embedder(embedder)
    if before is not None and not reconfigure:
        changes = before.differences(final)
        if changes:
            raise StoreError(f"{location} was built with other chunk settings ({'; '.join(changes)}); drop those "
                             f"options to keep the store's, or pass --reconfigure to re-chunk everything")
    return RunSettings(final, embedder, embed_mode)


def check_model(stored: Mapping[str, str], location: str, model: str, reconfigure: bool) -> None:
    """Refuse a different embedder (its vectors would not be comparable) unless reconfiguring."""
    recorded = stored.get("embedder")
    if recorded and recorded != model and not reconfigure:
        raise StoreError(f"{location} holds vectors of {recorded}; this run would embed with {model}: drop "
                         f"--embedder/--embed-mode to keep the store's, or pass --reconfigure to re-embed everything")
