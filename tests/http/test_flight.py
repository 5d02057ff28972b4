"""``once_per_run``: a document several lookups of one run read is made once per run."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from patchula.errors import RegistryError
from patchula.http.flight import once_per_run, run_memo


class _Maker:
    """Counts its calls; each answer is the call's number, after one checkpoint."""

    def __init__(self, fail_first: int = 0) -> None:
        self.calls = 0
        self.fail_first = fail_first

    async def __call__(self) -> int:
        self.calls += 1
        await anyio.lowlevel.checkpoint()
        if self.calls <= self.fail_first:
            msg = f"failed call {self.calls}"
            raise RegistryError(msg)
        return self.calls


@pytest.mark.anyio
async def test_concurrent_and_later_callers_of_one_key_share_one_answer() -> None:
    """Five concurrent callers and one later: one call, one answer for all."""
    maker, owner = _Maker(), object()
    answers: list[int] = []

    async def ask() -> None:
        answers.append(await once_per_run(owner, ("doc", "a"), maker))

    with run_memo():
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(ask)
        await ask()
    assert (maker.calls, answers) == (1, [1] * 6)


@pytest.mark.anyio
async def test_keys_owners_and_runs_are_kept_apart() -> None:
    """Another key, another fetch facade, another run (or none): another call each."""
    maker, owner = _Maker(), object()
    with run_memo():
        first = await once_per_run(owner, ("doc", "a"), maker)
        other_key = await once_per_run(owner, ("doc", "b"), maker)
        other_owner = await once_per_run(object(), ("doc", "a"), maker)
    with run_memo():
        next_run = await once_per_run(owner, ("doc", "a"), maker)
    outside = await once_per_run(owner, ("doc", "a"), maker)
    again_outside = await once_per_run(owner, ("doc", "a"), maker)
    assert [first, other_key, other_owner, next_run, outside, again_outside] == [1, 2, 3, 4, 5, 6]


@pytest.mark.anyio
async def test_a_failure_is_shared_by_its_waiters_and_not_kept() -> None:
    """Callers waiting on a failing call get its error; the next caller asks again."""
    maker, owner = _Maker(fail_first=1), object()
    errors: list[str] = []

    async def ask() -> None:
        try:
            await once_per_run(owner, ("doc",), maker)
        except RegistryError as exc:
            errors.append(str(exc))

    with run_memo():
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            tg.start_soon(ask)
        later = await once_per_run(owner, ("doc",), maker)
    assert errors == ["failed call 1", "failed call 1"]
    assert (maker.calls, later) == (2, 2)
