"""One flat exception family. Each message says what to do next; the CLI maps them to exit codes."""


class ChunkwiseError(Exception):
    """Base class for every error chunkwise raises on purpose."""

    exit_code = 1


class ConfigError(ChunkwiseError, ValueError):
    """A configuration that cannot work (overlap >= size, unknown strategy, ...). Raised at construction."""

    exit_code = 2


class DependencyError(ChunkwiseError, ImportError):
    """An optional dependency or bundled model file is missing; the message carries the install hint."""

    exit_code = 2


class InputError(ChunkwiseError):
    """A source file that cannot be read or decoded; reported per file, never fatal to a whole run."""

    exit_code = 1
