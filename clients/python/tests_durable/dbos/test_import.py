"""`import sayso` needs no dbos; `sayso.dbos` says what to install without it."""

from __future__ import annotations

from extra_hidden import without


def test_sayso_imports_without_dbos() -> None:
    done = without("dbos", "import sayso; assert 'dbos' not in sys.modules")
    assert done.returncode == 0, done.stderr


def test_the_helper_without_dbos_names_the_extra() -> None:
    done = without("dbos", "import sayso.dbos")
    assert done.returncode != 0
    assert "pip install 'sayso[dbos]'" in done.stderr
