"""A guard for tests that could block forever (a FIFO opened by a regression): they fail instead."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


class Hung(BaseException):  # not an Exception: no guard or OSError handler may eat it
    """Raised by the alarm in a test that blocked."""


@contextlib.contextmanager
def fail_if_blocked(seconds: int) -> Iterator[None]:
    """Raise ``Hung`` in the main thread when the body has not finished after ``seconds``."""

    def _alarm(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"blocked: did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
