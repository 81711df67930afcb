"""One flat exception family. Each message says what to do next; the CLI maps them to exit codes."""


class ChunkwiseError(Exception):
    """Base class for every error chunkwise raises on purpose."""

    exit_code = 1


def about(path: str, message: str) -> str:
    """``message`` said of ``path``, naming it once: most per-file messages already start with it."""
    return message if message.startswith(f"{path}:") else f"{path}: {message}"


class ConfigError(ChunkwiseError, ValueError):
    """A configuration that cannot work (overlap >= size, unknown strategy, ...). Raised at construction."""

    exit_code = 2


class DependencyError(ChunkwiseError, ImportError):
    """An optional dependency or bundled model file is missing; the message carries the install hint."""

    exit_code = 2


class AccessTagError(ConfigError):
    """A tag or set of tags that does not follow the grammar of ``chunkwise.access``."""


class EmbeddingServiceError(ChunkwiseError):
    """An embedding server (``openai:URL``) refused or kept failing a request."""


class InputError(ChunkwiseError):
    """A source file that cannot be read or decoded; reported per file, never fatal to a whole run."""

    exit_code = 1


class ExpansionError(ChunkwiseError):
    """Growing a retrieved chunk into more context was refused; the chunk itself is still valid.
    The three kinds are distinct so callers can tell a stale index from a permission or budget limit."""


class StaleLink(ExpansionError):
    """The chunk's document version is not the stored one: its neighbours or parent may have moved."""


class ParentNotPermitted(ExpansionError):
    """The caller may read the chunk but not all of its enclosing section."""


class BudgetExceeded(ExpansionError):
    """The expanded passage does not fit the token budget (it is never truncated to fit)."""


class StoreError(ChunkwiseError):
    """A store that cannot be used as asked: not a chunkwise store, a folder, read-only for a write,
    written by a newer chunkwise, or built with other settings than this run asks for."""

    exit_code = 2


class StoreTimeout(ChunkwiseError):
    """A read ran past the time limit ``Store.time_limit`` set and the backend stopped it."""


class StoreWriteError(ChunkwiseError):
    """The store could not be written (a full disk, a file size limit, an I/O error): fatal to the
    run, never one document's error; the transaction in progress is rolled back."""


class StoreLost(ChunkwiseError):
    """The connection to a server store broke mid-run (the server stopped or restarted): fatal to the
    run; what was committed is whole (a document is one transaction), so running again finishes."""


class StoreBusy(ChunkwiseError):
    """Another writer held the store's write lock longer than this run was willing to wait."""


class IdentityConflict(InputError):
    """A document would take an id another document already holds (reported for that file only)."""
