"""Packages whose public names are imported on first use (PEP 562), so importing a package - or a
light module inside it - loads nothing heavy until a name is used."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `exports` maps each public name to the module that
    defines it; the value is imported on first access and cached on the package. An unknown name
    raises AttributeError as usual."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
