"""mise versions: fuzzy prefixes, exact pins, prereleases, order and precision-keeping proposals."""

from __future__ import annotations

import pytest

from patchula.versioning import VERSIONINGS, mise


def test_registered() -> None:
    """The scheme is registered under its id."""
    assert VERSIONINGS["mise"] is mise


@pytest.mark.parametrize(
    ("version", "stable"),
    [
        ("22.12.0", True),
        ("v1.2.3", True),
        ("1.20", True),
        ("3.13.0rc1", False),
        ("3.13.0a1", False),
        ("1.24rc1", False),
        ("22.0.0-rc.1", False),
        ("1.0.0-beta.2", False),
        ("2.0.0-alpha", False),
        ("1.2.3-source", True),  # "rc" inside a word is no release candidate
        ("1.2.0-canary.3", False),  # bun's canary builds (mise's VERSION_REGEX: -canary)
        ("27.0-rc1", False),  # OTP-27.0-rc1, its prefix stripped
        ("1.0.0-nightly", False),
        ("3.0-edge", False),
        ("1.0.0-ledger", True),  # "-edge" must start the suffix's word
    ],
)
def test_stability(version: str, stable: bool) -> None:  # noqa: FBT001
    """Prereleases are what mise's own filter leaves out of fuzzy matches."""
    assert mise.is_valid(version)
    assert mise.is_stable(version) is stable


def test_order_and_equality() -> None:
    """Numeric order, trailing zeros equal, prereleases before their release, rc10 after rc2."""
    versions = ["3.13.0", "3.13.0rc10", "3.12.9", "3.13.0a1", "3.13.0rc2", "3.9.1"]
    assert sorted(versions, key=mise.sort_key) == [
        "3.9.1", "3.12.9", "3.13.0a1", "3.13.0rc2", "3.13.0rc10", "3.13.0"
    ]  # fmt: skip
    assert mise.compare("1.20", "1.20.0") == 0
    assert mise.compare("garbage", "0.0.1") == -1
    assert not mise.is_valid("lts")


@pytest.mark.parametrize(
    ("constraint", "pin"),
    [
        ("20", None),
        ("3.12", None),
        ("20.11.1", "20.11.1"),
        ("v20.11.1", "20.11.1"),
        ("3.13.0rc1", "3.13.0rc1"),
    ],
)
def test_exact_pins_have_three_parts_or_a_suffix(constraint: str, pin: str | None) -> None:
    """`20` and `3.12` are prefixes; `20.11.1` is a pin compared exactly."""
    assert mise.exact_pin(constraint) == pin


def test_prefix_resolves_to_the_newest_stable_match() -> None:
    """`20` is the newest 20.x; a prerelease of that line never is; `2` is not `20`."""
    versions = ["2.0.0", "20.1.0", "20.18.1", "20.19.0-rc.1", "21.0.0", "22.12.0"]
    assert mise.max_satisfying(versions, "20") == "20.18.1"
    assert mise.max_satisfying(versions, "2") == "2.0.0"
    assert mise.max_satisfying(versions, "20.1") == "20.1.0"
    assert mise.max_satisfying(versions, "20.18.1") == "20.18.1"
    assert mise.max_satisfying(versions, "19") is None


@pytest.mark.parametrize(
    ("constraint", "version", "proposed"),
    [
        ("20", "22.12.0", "22"),
        ("3.12", "3.13.1", "3.13"),
        ("v20", "22.12.0", "v22"),
        ("20.11.1", "22.12.0", "22.12.0"),
        ("lts", "22.12.0", None),
    ],
)
def test_proposals_keep_the_declared_precision(
    constraint: str, version: str, proposed: str | None
) -> None:
    """`20` → `22`, not `22.12.0`; an exact pin gets the version; an alias nothing."""
    assert mise.propose(constraint, version) == proposed


def test_update_types() -> None:
    """By the first numeric part that differs."""
    assert mise.update_type("20.18.1", "22.12.0") == "major"
    assert mise.update_type("1.22.10", "1.23.4") == "minor"
    assert mise.update_type("0.1.7", "0.1.9") == "patch"
    assert mise.update_type("1.20", "1.20.0") is None


def test_huge_numbers_are_invalid() -> None:
    """A 5,000-digit version is invalid, not a slow int()."""
    assert not mise.is_valid("1." + "9" * 5000)


@pytest.mark.parametrize(
    ("version", "shown"),
    [("v0.11.0", "0.11.0"), ("0.9.0", "0.9.0"), ("v1", "1"), ("vim-9.1", "vim-9.1")],
)
def test_shown_drops_a_tags_v_as_mise_lists_it(version: str, shown: str) -> None:
    """Only a ``v`` before a digit is dropped: ``vim-9.1`` is no ``v``-prefixed version."""
    assert mise.shown(version) == shown


def test_unknown_alias_is_worded_for_tools() -> None:
    """No npm words (range, dist-tag) on a tool row; the catalog's aliases are listed."""
    assert mise.unknown_alias("lts/hydrogen", ["lts", "lts/iron", "latest"]) == (
        "'lts/hydrogen' is neither a version, a version prefix nor an alias of this tool"
        " (aliases: latest, lts, lts/iron)"
    )
    assert mise.unknown_alias("stable", []) == (
        "'stable' is neither a version nor a version prefix of this tool"
    )
