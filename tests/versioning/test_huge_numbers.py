"""Every versioning treats a 5,000-digit number as invalid input instead of raising."""

from __future__ import annotations

import pytest

from patchula.versioning import VERSIONINGS

HUGE = "9" * 5000
INPUTS = [
    HUGE,
    f"1.{HUGE}.0",
    f"v{HUGE}.0.0",
    f"1.2.3-{HUGE}",
    f"v1.2.3-rc.{HUGE}",
    f"=={HUGE}",
    f">={HUGE}",
    f"^{HUGE}",
    f"~{HUGE}",
    f"{HUGE}.*",
    f"1.0.0 - {HUGE}",
]


@pytest.mark.parametrize("versioning_id", sorted(VERSIONINGS))
@pytest.mark.parametrize("text", INPUTS)
def test_huge_numbers_are_invalid_never_an_exception(versioning_id: str, text: str) -> None:
    """Parse, order, pin, match and resolve all answer "invalid" for a 5,000-digit number."""
    scheme = VERSIONINGS[versioning_id]
    valid = "v1.0.0" if versioning_id == "go" else "1.0.0"
    assert not scheme.is_valid(text)
    assert not scheme.is_stable(text)
    assert not scheme.is_valid_constraint(text)
    assert scheme.exact_pin(text) is None
    assert not scheme.matches(valid, text)
    assert not scheme.matches(text, ">=1")
    assert scheme.max_satisfying([valid, text], text) is None
    assert scheme.update_type(valid, text) is None
    assert sorted([text, valid], key=scheme.sort_key) == [text, valid]
    assert scheme.compare(text, valid) == -1


def test_a_hundred_digit_number_is_still_a_version() -> None:
    """The bound is far above any real version: 100 digits still parse."""
    assert VERSIONINGS["pep440"].is_valid("1." + "9" * 100)
    assert not VERSIONINGS["pep440"].is_valid("1." + "9" * 101)
