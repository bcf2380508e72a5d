"""One value of a MySQL reply as the type replmon keeps: the scalars every MySQL parser
(mysql_parse, mysql_replica_parse, mysql_binlog_parse, mysql_processlist_parse) reads with.

pymysql hands numeric columns over as ``int`` (``float``, ``Decimal``), text as ``str``
(or ``bytes``), NULL as ``None``; the same values as text, the way the ``mysql`` client
prints them ("NULL" for NULL), are taken too. A value that is not the expected shape (a
counter that is not a decimal integer, "Maybe" where ON/OFF belongs) raises
``replmon.errors.ParseError``, never another exception. The converters that take
``(name, value)`` name the column in their error.

The texts a sample keeps (``text_or_empty``, ``gtid_set_text``) are interned
(``sys.intern``): a server answers the same host, binlog file, thread state and GTID set
tick after tick, and each answer is a new string; the engine keeps the replication part
of each tick for 300 s (replmon/model/parts.py), so a pair's windows held ~60 copies of
each such text a minute (#56: held memory, and the small blocks a window's turnover
frees and refills). An interned string is freed when the last sample holding it goes.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from typing import TypeGuard

from replmon.errors import ParseError

_INT = re.compile(r"[+-]?[0-9]{1,40}")
FLOAT_TEXT = re.compile(
    r"[+-]?(?:[0-9]{1,40}(?:\.[0-9]{0,40})?|\.[0-9]{1,40})(?:[eE][+-]?[0-9]{1,3})?")
"""A decimal number as text (digits, a fraction, an exponent; no inf, no nan)."""
_intern = sys.intern
_TRUE = frozenset({"ON", "YES", "1", "TRUE"})
_FALSE = frozenset({"OFF", "NO", "0", "FALSE"})


def as_text(value: object) -> str | None:
    """A status/column value as text; None for SQL NULL."""
    if type(value) is str:  # what pymysql gives for status values: the common case first
        return value
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ParseError(f"unexpected boolean {value!r}")
    if isinstance(value, int | float):
        return str(value)
    raise ParseError(f"unexpected value of type {type(value).__name__}")


def parse_int(name: str, value: object, *, nullable: bool = False) -> int | None:
    """A decimal integer (pymysql int or text). "NULL"/None only when ``nullable``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if _is_digits(value):  # most status values: no strip, no regex (0.37 µs, not 0.68)
        return int(value)
    text = as_text(value)
    if text is None or (nullable and text.strip().upper() == "NULL"):
        if nullable:
            return None
        raise ParseError(f"{name}: NULL where a number is expected")
    text = text.strip()
    if not _INT.fullmatch(text):
        raise ParseError(f"{name}: expected an integer, got {text[:40]!r}")
    return int(text)


def _is_digits(value: object) -> TypeGuard[str]:
    """Text that _INT matches as it is (1 to 40 ASCII digits, nothing to strip), found
    without the regex: the parse_int/parse_number fast path."""
    return type(value) is str and value.isdigit() and value.isascii() and len(value) <= 40


def parse_number(name: str, value: object) -> int | float:
    """An integer or a finite decimal (for gauges such as average wait times)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ParseError(f"{name}: expected a finite number, got {value!r}")
    if isinstance(value, float):
        return value
    if _is_digits(value):
        return int(value)
    text = as_text(value)
    if text is None:
        raise ParseError(f"{name}: NULL where a number is expected")
    text = text.strip()
    if _INT.fullmatch(text):
        return int(text)
    if FLOAT_TEXT.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return number
    raise ParseError(f"{name}: expected a number, got {text[:40]!r}")


def parse_bool(name: str, value: object) -> bool:
    """ON/OFF, YES/NO, 1/0, TRUE/FALSE (any case)."""
    text = as_text(value)
    word = "" if text is None else text.strip().upper()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ParseError(f"{name}: expected ON/OFF, got {(text or 'NULL')[:40]!r}")


# --- columns (name, value) ------------------------------------------------------------


def text_or_empty(_name: str, value: object) -> str:
    """A text column; "" for NULL (None, or the client's "NULL")."""
    text = as_text(value) or ""
    return "" if text.upper() == "NULL" else _intern(text)


def nullable_number(name: str, value: object) -> float | None:
    """A decimal column (a pymysql Decimal, or text) as a float; None for NULL/empty."""
    if isinstance(value, Decimal):
        return float(value)
    if value is None or (as_text(value) or "").strip() in ("", "NULL"):
        return None
    return float(parse_number(name, value))


def gtid_set_text(_name: str, value: object) -> str:
    """A GTID set on one line (MySQL prints "uuid:1-5,\nuuid2:1-9")."""
    return _intern("".join((as_text(value) or "").split()))
