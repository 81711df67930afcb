"""A store keeps the settings it was built with, and a run uses them unless told otherwise.

Every ingest records its chunk config and embedder in the store. The next run:
- without chunk options or an embedder uses the recorded ones (``chunkwise ingest docs/ --db x.db``
  re-run after edits does what the first run did);
- with options applies them *over* the recorded config, and if the result differs (or the embedder
  does) refuses with a message naming each difference, unless ``reconfigure`` is set: then every
  document is re-chunked and re-embedded with the new settings (a half-reconfigured store, with
  chunks over the new cap or two embedding models, can never happen by accident).

A new store gets ``config.DEFAULT_EMBEDDER``; when that model cannot be loaded (no onnxruntime, no
model files) it is indexed for BM25 only, with one notice saying how to add the model later. Its
size is the configured default, lowered to the embedder's cap when the model reads less; an explicit
size above the cap is refused with the largest allowed size. A store built with ``hashing`` (a toy
embedder) keeps it, with a note on how to move to the default.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from chunkwise.config import DEFAULT_EMBEDDER, ChunkConfig
from chunkwise.errors import ConfigError, DependencyError, StoreError

AUTO = "auto"  # embedder / embed mode: the store's own, else the default


@dataclass(frozen=True)
class RunSettings:
    config: ChunkConfig
    embedder: object | None  # an Embedder, or None for no vectors
    embed_mode: str
    notice: str | None = None  # one line for the user (the default model is missing, a toy store)


def resolve(stored: Mapping[str, str], location: str, *, config: ChunkConfig | None, options: Mapping | None,
            default: ChunkConfig, embedder, embed_mode: str | None, reconfigure: bool,
            default_embedder: str = DEFAULT_EMBEDDER) -> RunSettings:
    """The settings of this run, given what the store recorded (``Store.settings()``)."""
    from chunkwise.embed import make_embedder
    from chunkwise.embed.late import base_model_name

    before = ChunkConfig.from_json(stored["config"]) if "config" in stored else None
    base = config if config is not None else before or default
    final = replace(base, **options) if options else base
    recorded = stored.get("embedder")
    if embed_mode in (None, AUTO):
        embed_mode = "late" if recorded and "+" in recorded else "plain"
    notice = None
    if isinstance(embedder, str) and embedder == AUTO:
        if recorded:
            embedder = make_embedder(base_model_name(recorded))
            notice = toy_store_note(recorded, location)
        else:
            embedder, notice = load_default(default_embedder)
    elif isinstance(embedder, str):
        embedder = make_embedder(embedder)
    if embedder is not None and hasattr(embedder, "check"):
        embedder.check()  # a missing runtime or model fails here, before any work
    if config is None and before is None and "size" not in (options or {}):
        final = replace(final, size=min(final.size, size_cap(final, embedder) or final.size))
    check_fits(final, embedder)
    if before is not None and not reconfigure:
        changes = before.differences(final)
        if changes:
            raise StoreError(f"{location} was built with other chunk settings ({'; '.join(changes)}); drop those "
                             f"options to keep the store's, or pass --reconfigure to re-chunk everything")
    return RunSettings(final, embedder, embed_mode, notice)


def load_default(name: str = DEFAULT_EMBEDDER):
    """``(embedder, None)`` for the default model, or ``(None, notice)`` when it cannot run here: the
    store is then indexed for BM25 only (never silently with a toy embedder)."""
    from chunkwise.embed import make_embedder

    try:
        embedder = make_embedder(name)
        if embedder is not None and hasattr(embedder, "check"):
            embedder.check()
    except DependencyError as exc:
        return None, (f"no embedding model: {exc}; indexing for BM25 only (add vectors later with "
                      f"--embedder {name} --reconfigure)")
    return embedder, None


def toy_store_note(recorded: str | None, location: str) -> str | None:
    """One line for a store whose vectors come from the feature-hashing embedder: it keeps working as
    built, and this says how to move it to the default model."""
    if not recorded or not recorded.lower().startswith("hashing"):
        return None
    return (f"{location} holds {recorded} vectors (a keyword-hashing toy, weaker than BM25 alone); move it to the "
            f"default model with: chunkwise ingest PATH --db {location} --embedder {DEFAULT_EMBEDDER} --reconfigure")


def size_cap(config: ChunkConfig, embedder) -> int | None:
    """The largest ``size`` whose chunks the embedder reads whole: its window less [CLS]/[SEP] (unless
    the size counts them). None when the units are not the model's tokens (nothing to compare)."""
    limit = getattr(embedder, "max_tokens", None)
    if not limit or config.unit != "tokens" or config.tokenizer.lower() not in ("minilm", "all-minilm-l6-v2"):
        return None
    return limit - (0 if config.special_tokens else 2)


def check_fits(config: ChunkConfig, embedder) -> None:
    """Refuse a size whose chunks the model would read only in part (it would embed just their head)."""
    cap = size_cap(config, embedder)
    if cap is not None and config.size > cap:
        raise ConfigError(f"--size {config.size} is above what {embedder.name} reads whole: the largest allowed size "
                          f"is {cap} tokens ({embedder.max_tokens}-token window less [CLS]/[SEP]); use --size {cap}"
                          + ("" if config.special_tokens else f" (or --size {embedder.max_tokens} --special-tokens)"))


def check_model(stored: Mapping[str, str], location: str, model: str, reconfigure: bool) -> None:
    """Refuse a different embedder (its vectors would not be comparable) unless reconfiguring."""
    recorded = stored.get("embedder")
    if recorded and recorded != model and not reconfigure:
        raise StoreError(f"{location} holds vectors of {recorded}; this run would embed with {model}: drop "
                         f"--embedder/--embed-mode to keep the store's, or pass --reconfigure to re-embed everything")
