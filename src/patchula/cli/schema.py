"""``patchula schema``: the JSON Schema of the ``--format json`` report."""

from __future__ import annotations

import sys


def schema() -> None:
    """Print the JSON Schema of the report (``--format json``)."""
    import orjson  # noqa: PLC0415 - lazy: start-up

    from patchula.report.model import ScanReport  # noqa: PLC0415 - lazy: start-up

    # pydantic writes JSON Schema draft 2020-12 (its ``GenerateJsonSchema``) but does not say
    # so; validators guess the draft without ``$schema``.
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **ScanReport.model_json_schema(by_alias=True),
    }
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
