"""`import sayso` needs no temporalio; `sayso.temporal` says what to install without it."""

from __future__ import annotations

from extra_hidden import import_checks

(
    test_sayso_imports_without_temporalio,
    test_the_helper_without_temporalio_names_the_extra,
) = import_checks(("temporalio",), "temporal", "temporal")
