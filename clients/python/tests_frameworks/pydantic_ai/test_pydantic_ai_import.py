"""`import sayso` needs no framework; `sayso.pydantic_ai` says what to install without one."""

from __future__ import annotations

from extra_hidden import import_checks

(
    test_sayso_imports_without_pydantic_ai,
    test_the_adapter_without_pydantic_ai_names_the_extra,
) = import_checks(("pydantic_ai",), "pydantic_ai", "pydantic-ai")
