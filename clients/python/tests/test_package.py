"""The package builds into a wheel that holds what an install needs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import sayso

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_the_typed_package(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="hatchling builds the wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("sayso-0.1.0-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sayso/py.typed" in names and "sayso/__init__.py" in names
    assert not [n for n in names if "tests/" in n or "__pycache__" in n]
    meta = zipfile.ZipFile(wheel).read("sayso-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Python: >=3.10" in meta and "Requires-Dist: httpx" in meta
    assert "License-Expression: MIT" in meta
    assert sayso.__version__ == "0.1.0"
