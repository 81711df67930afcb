"""PEP 562 module attributes that load on first use: a package's names without importing every
submodule up front (a command's start-up pays only for what it touches)."""
from __future__ import annotations

import importlib
import sys
from typing import Callable, Mapping


def lazy_names(module: str, table: Mapping[str, str]) -> tuple[Callable, Callable]:
    """``__getattr__`` and ``__dir__`` for ``module`` whose names ``table`` maps to the module that
    defines each (looked up once, then a plain global)."""
    namespace = vars(sys.modules[module])

    def __getattr__(name: str):
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *table])

    return __getattr__, __dir__
