"""The report as its JSON document (``yacht report --json``, the server's ``/api/report``): every figure, in the shape
documented since its first schema (``"schema": 1``).

The document is the report's results as they are typed (:mod:`yacht_play.report.results`): an object per result
with its fields as keys, in order, an array per tuple; a field marked to be omitted when None has no key then.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

from yacht_play.report.results import OMITTED_WHEN_NONE, Report

JsonObject = dict[str, Any]  # what json.dumps writes as an object


def report_document(report: Report) -> JsonObject:
    """Every figure of ``report`` as a JSON object, as ``--json`` writes it and ``/api/report`` answers it."""
    return json_value(report)


def json_value(value):
    """``value`` as JSON values: a result as an object of its fields, a tuple or list as an array, the rest as is."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: json_value(getattr(value, field.name))
            for field in fields(value)
            if not (field.metadata == OMITTED_WHEN_NONE and getattr(value, field.name) is None)
        }
    if isinstance(value, (tuple, list)):
        return [json_value(item) for item in value]
    return value


def save_json(path, report: Report) -> None:
    """Write every figure of ``report`` as JSON, atomically (a crash leaves the old file or the new one)."""
    from yacht_env.atomic_files import write_atomically

    text = json.dumps(report_document(report), indent=2) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode()))
