"""Runs Python with one engine's packages hidden, as in an environment without them."""

from __future__ import annotations

import subprocess
import sys

HIDDEN = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {top!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
"""


def without(top: str, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run where the package ``top`` cannot be imported."""
    script = HIDDEN.format(top=top) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
