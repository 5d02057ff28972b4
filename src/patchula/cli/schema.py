"""``patchula schema``: the JSON Schema of the ``--format json`` report."""

from __future__ import annotations

import sys


def schema() -> None:
    """Print the JSON Schema of the report (``--format json``)."""
    import orjson  # noqa: PLC0415 - lazy: start-up

    from patchula.report.model import ScanReport  # noqa: PLC0415 - lazy: start-up

    document = ScanReport.model_json_schema(by_alias=True)
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
