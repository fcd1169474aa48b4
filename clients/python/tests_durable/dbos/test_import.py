"""`import sayso` needs no dbos; `sayso.dbos` says what to install without it."""

from __future__ import annotations

from extra_hidden import import_checks

test_sayso_imports_without_dbos, test_the_helper_without_dbos_names_the_extra = import_checks(
    ("dbos",), "dbos", "dbos"
)
