"""How a module for a framework or a workflow engine (``sayso.langgraph``, ``sayso.temporal``,
…) imports it. The framework is an extra of sayso, not a dependency: where it is not
installed, importing the module fails naming the extra that installs it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def framework_imports(module: str, framework: str, extra: str) -> Iterator[None]:
    """Around the framework's imports in ``module`` (the importing module's ``__name__``)."""
    try:
        yield
    except ImportError as e:
        raise ImportError(
            f"{module} needs {framework} ({e.name} is missing): pip install 'sayso[{extra}]'"
        ) from e
