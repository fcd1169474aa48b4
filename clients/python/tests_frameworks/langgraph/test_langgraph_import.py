"""`import sayso` needs no framework; `sayso.langgraph` says what to install without one."""

from __future__ import annotations

import subprocess
import sys

# Runs with the framework's packages hidden, as in an environment without them.
HIDDEN = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("langgraph", "langchain", "langchain_core"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
"""


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDDEN + code], capture_output=True, text=True)


def test_sayso_imports_without_langgraph() -> None:
    done = python("import sayso; assert 'langgraph' not in sys.modules; print(sayso.Client)")
    assert done.returncode == 0, done.stderr


def test_the_adapter_without_langgraph_names_the_extra() -> None:
    done = python("import sayso.langgraph")
    assert done.returncode != 0
    assert "pip install 'sayso[langgraph]'" in done.stderr
