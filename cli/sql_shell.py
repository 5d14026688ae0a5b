"""``ves sql``'s output and prompt: query results as an aligned table, CSV or JSON, and a loop
that reads statements up to ``;``. The SQL itself runs in ``storage.artifacts.analyst_views``."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any, TextIO

import duckdb
import pyarrow as pa

from storage.artifacts.analyst_views import run_query, view_names
from ves.errors import InvalidRequest


def _cell(value: Any) -> str:
    """A value as text: NULL for null, lists and structs as JSON."""
    if value is None:
        return "NULL"
    if isinstance(value, list | dict):
        return json.dumps(value, default=str)
    return str(value)


def _aligned(table: pa.Table) -> list[str]:
    """Header, rule, rows (numbers right-aligned), then the row count."""
    names = table.column_names
    cells = [[_cell(v) for v in column.to_pylist()] for column in table.columns]
    widths = [
        max([len(name), *map(len, column)]) for name, column in zip(names, cells, strict=True)
    ]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]

    def line(values: list[str]) -> str:
        padded = [
            v.rjust(w) if right else v.ljust(w)
            for v, w, right in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(padded).rstrip()

    rows = [line(list(row)) for row in zip(*cells, strict=True)]
    count = f"({table.num_rows} row{'' if table.num_rows == 1 else 's'})"
    return [line(names), line(["-" * w for w in widths]), *rows, count]


def print_result(table: pa.Table, fmt: str, out: TextIO = sys.stdout) -> None:
    """Print a query's result in ``fmt``: ``json``, ``csv`` or ``table`` (``cli.main.FORMATS``)."""
    if fmt == "json":
        print(json.dumps(table.to_pylist(), default=str), file=out)
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.column_names)
        rows = zip(*(column.to_pylist() for column in table.columns), strict=True)
        writer.writerows([[_cell(v) if v is not None else "" for v in row] for row in rows])
    elif table.num_columns:
        print("\n".join(_aligned(table)), file=out)


def _run(conn: duckdb.DuckDBPyConnection, query: str, fmt: str) -> None:
    try:
        print_result(run_query(conn, query), fmt)
    except InvalidRequest as exc:
        print(f"error: {exc.detail}", file=sys.stderr)


def prompt(conn: duckdb.DuckDBPyConnection, fmt: str) -> int:
    """Read statements until end of input: each runs at its ``;``, ``.tables`` lists the views.

    A bad statement prints its error and the prompt goes on. The prompt is shown only on a
    terminal, so ``ves sql < queries.sql`` prints results alone.
    """
    show = sys.stdin.isatty()
    buffer: list[str] = []
    while True:
        try:
            line = input(("...> " if buffer else "ves> ") if show else "")
        except EOFError:
            break
        except KeyboardInterrupt:
            buffer = []  # Ctrl-C drops the statement being typed, as in other SQL shells
            print()
            continue
        if not buffer and line.strip() == ".tables":
            print("\n".join(view_names(conn)))
        elif buffer or line.strip():
            buffer.append(line)
            if line.rstrip().endswith(";"):
                _run(conn, "\n".join(buffer), fmt)
                buffer = []
    if "".join(buffer).strip():  # a last statement without its ';'
        _run(conn, "\n".join(buffer), fmt)
    return 0
