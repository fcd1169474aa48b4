"""`import sayso` needs no temporalio; `sayso.temporal` says what to install without it."""

from __future__ import annotations

from extra_hidden import without


def test_sayso_imports_without_temporalio() -> None:
    done = without("temporalio", "import sayso; assert 'temporalio' not in sys.modules")
    assert done.returncode == 0, done.stderr


def test_the_helper_without_temporalio_names_the_extra() -> None:
    done = without("temporalio", "import sayso.temporal")
    assert done.returncode != 0
    assert "pip install 'sayso[temporal]'" in done.stderr
