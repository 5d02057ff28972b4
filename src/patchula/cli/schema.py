"""``patchula schema``: the JSON Schema of the ``--format json`` report."""

from __future__ import annotations

import sys

import orjson

from patchula.report.model import ScanReport


def schema() -> None:
    """Print the JSON Schema of the report (``--format json``)."""
    document = ScanReport.model_json_schema(by_alias=True)
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
