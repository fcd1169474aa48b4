"""`import sayso` needs no framework; `sayso.langgraph` says what to install without one."""

from __future__ import annotations

from extra_hidden import import_checks

(
    test_sayso_imports_without_langgraph,
    test_the_adapter_without_langgraph_names_the_extra,
) = import_checks(("langgraph", "langchain", "langchain_core"), "langgraph", "langgraph")
