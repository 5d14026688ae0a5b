"""Whether a query that schemathesis meant to break its schema was, as sent, a valid one.

A query string carries text only: a parameter mutated into a one-item list (``text: ['true']``)
or into another type is sent as the same ``?text=true`` a valid request sends, and the service
cannot refuse it. schemathesis 4.32.5 still counts some such cases as accepted negative data
(its issues #4600, #3962). ``valid_on_the_wire`` reads the query as sent, the way the service
does, and checks it against the operation's parameters; the run counts these apart, as the
tool's own, and never lets one hide a mutation anywhere else (only query-only negations).
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

from jsonschema import Draft202012Validator


def _readings(text: str) -> list[Any]:
    """What one query value may stand for: the text, and the number or boolean it spells."""
    readings: list[Any] = [text]
    for convert in (int, float):
        with contextlib.suppress(ValueError):
            readings.append(convert(text))
    if text in ("true", "false"):
        readings.append(text == "true")
    return readings


def _fits(spec: dict[str, Any], schema: dict[str, Any], values: list[str]) -> bool:
    validator = Draft202012Validator({**spec, **schema})
    if any(validator.is_valid(reading) for reading in _readings(values[0])) and len(values) == 1:
        return True
    numbers = [_readings(v)[-1] for v in values]  # a list of numbers or booleans
    return bool(validator.is_valid(values) or validator.is_valid(numbers))


def valid_on_the_wire(spec: dict[str, Any], operation: str, uri: str) -> bool:
    """Whether the query of ``uri``, as the service reads it, is valid for ``operation``
    (``"GET /api/product/search"``) of the OpenAPI ``spec``."""
    method, path = operation.split(" ", 1)
    declared = spec.get("paths", {}).get(path, {}).get(method.lower())
    if declared is None:
        return False
    sent = parse_qs(urlsplit(uri).query, keep_blank_values=True)
    for parameter in declared.get("parameters", []):
        if parameter.get("in") != "query":
            continue
        values = sent.get(parameter["name"])
        if values is None:
            if parameter.get("required"):
                return False
            continue
        if not _fits(spec, parameter.get("schema", {}), values):
            return False
    return True
