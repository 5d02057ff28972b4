"""Publish times as the compact documents store them: whole epoch seconds."""

from __future__ import annotations

import pytest

from patchula.datasource.base import epoch_seconds, parse_time

TIMES = [
    "2024-01-02T03:04:05Z",
    "2024-01-02T03:04:05.999999Z",
    "2024-01-02T03:04:05.123+00:00",
    "2023-12-31T23:00:00+02:00",
    "2024-06-01T12:00:00-07:30",
    "2024-05-06T07:08:09",  # no offset: UTC
    "2024-05-06 07:08:09.5",
    "2024-05-06",
    "1969-12-31T23:59:59.5Z",  # before the epoch: truncated toward zero, as int() does
    "1900-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "not a time",
    "",
    "2024-13-01T00:00:00Z",
]


@pytest.mark.parametrize("value", [*TIMES, None, 1700000000, b"2024-01-02T03:04:05Z"])
def test_epoch_seconds_is_parse_time_in_whole_seconds(value: object) -> None:
    """``epoch_seconds`` equals ``int(parse_time(value).timestamp())``, ``None`` when unread."""
    when = parse_time(value)
    assert epoch_seconds(value) == (int(when.timestamp()) if when is not None else None)
