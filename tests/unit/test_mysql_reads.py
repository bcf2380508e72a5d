"""The MySQL source's DictCursor (replmon/sources/mysql_reads.py) keys rows as pymysql's
own DictCursor does: a name met again takes its table's name, whatever the order."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pymysql.cursors
import pytest

from replmon.sources.mysql_reads import DictCursor

COLUMNS = [
    [("Slave_IO_State", "t"), ("Master_Host", "t")],
    [("a", "t1"), ("a", "t2"), ("t2.a", "t3"), ("a", "t4"), ("b", "")],  # repeats
    [(f"Col_{i}", "") for i in range(62)],
    [],
]


@pytest.mark.parametrize("columns", COLUMNS, ids=range(len(COLUMNS)))
@pytest.mark.parametrize("nrows", [0, 1, 3])
def test_rows_are_keyed_as_pymysqls_dict_cursor_keys_them(columns: list[tuple[str, str]],
                                                          nrows: int) -> None:
    fields = [SimpleNamespace(name=n, table_name=t) for n, t in columns]
    rows = tuple(tuple(f"{i}-{j}" for j in range(len(columns))) for i in range(nrows))
    result = SimpleNamespace(fields=fields, rows=rows, affected_rows=nrows, insert_id=0,
                             warning_count=0,
                             description=tuple((n, 253) for n, _ in columns) or None)

    def read(kind: Any) -> tuple[Any, Any]:
        cur = object.__new__(kind)
        cur.connection = SimpleNamespace(_result=result)
        cur._do_get_result()
        return getattr(cur, "_fields", None), cur._rows

    assert read(DictCursor) == read(pymysql.cursors.DictCursor)
