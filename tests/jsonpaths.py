"""Helpers the fuzz tests share for mutating JSON-like documents."""

from __future__ import annotations

from typing import Any


def json_slots(value: Any, out: list[tuple[Any, Any]] | None = None) -> list[tuple[Any, Any]]:
    """Every (container, key or index) inside a JSON value, depth first."""
    out = [] if out is None else out
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append((value, key))
            json_slots(inner, out)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out.append((value, i))
            json_slots(inner, out)
    return out
