"""Records compared value for value with their types: ``1`` and ``1.0`` are equal in
Python but not the same field (a counter parsed as int must stay an int after a change to
how records are built)."""

from __future__ import annotations

from replmon.model.base import Struct


def typed_leaves(value: object) -> object:
    """A record as nested tuples of (name, type, value)."""
    if isinstance(value, Struct):
        return tuple((n, typed_leaves(getattr(value, n))) for n in type(value).model_fields)
    if isinstance(value, dict):
        return tuple((k, typed_leaves(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(typed_leaves(v) for v in value))
    return (type(value).__name__, value)
