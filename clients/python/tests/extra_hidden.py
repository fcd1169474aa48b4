"""Runs Python with a framework's packages hidden, as in an environment without them: the two
checks every optional adapter's suite makes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

HIDDEN = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {tops!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
"""


def without(tops: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run where none of the packages ``tops`` can be imported."""
    script = HIDDEN.format(tops=tops) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)


def import_checks(
    tops: tuple[str, ...], module: str, extra: str
) -> tuple[Callable[[], None], Callable[[], None]]:
    """Two tests: ``import sayso`` works and loads none of ``tops``; ``import sayso.<module>``
    without them fails, naming the extra to install."""

    def imports_without() -> None:
        loaded = f"assert not [t for t in {tops!r} if t in sys.modules]"
        done = without(tops, f"import sayso; {loaded}; print(sayso.Client)")
        assert done.returncode == 0, done.stderr

    def names_the_extra() -> None:
        done = without(tops, f"import sayso.{module}")
        assert done.returncode != 0
        assert f"pip install 'sayso[{extra}]'" in done.stderr

    return imports_without, names_the_extra
