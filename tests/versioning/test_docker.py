"""Docker tags as versions: parse, kinds, prereleases, order, compatibility, pins, update types."""

from __future__ import annotations

import pytest

from patchula.versioning import VERSIONINGS, docker


@pytest.mark.parametrize(
    "tag",
    [
        "3.12",
        "3.12-slim-bookworm",
        "20.11.1-alpine3.19",
        "1.22.5-bookworm",
        "v1.22.5",
        "17beta2-bookworm",
        "3.14-rc-slim-bookworm",
        "20240329",
        "2024.03.29",
        "2024-03-29",
        "123098140293",
        "jammy-20240227",
        "bookworm-20240211-slim",
    ],
)
def test_version_and_date_tags_are_valid(tag: str) -> None:
    """Numbers joined by dots, with a prerelease, a variant or a ``v``, and dates are versions."""
    assert docker.is_valid(tag)


@pytest.mark.parametrize(
    "tag",
    [
        "latest",
        "stable",
        "edge",
        "mainline",
        "alpine3.19",
        "bookworm",
        "lts-alpine",
        "jammy",
        "foo-1",  # a word and a number that is no date
        "jammy-20241399",  # no such day
        "jammy3-20240227",  # a word with digits: not a codename
        "0a1b2c3",  # a short commit hash
        "0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d",  # a full commit SHA
        "0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba",  # SHA-256
        "",
        "v",
        "-1.2",
        ".1.2",
        "1.2#3",
        "1" * 129,
    ],
)
def test_words_commit_hashes_and_bad_tags_are_not_versions(tag: str) -> None:
    """``latest``, ``stable``, ``edge``, words, commit hashes and off-grammar tags are invalid."""
    assert not docker.is_valid(tag)
    assert not docker.is_stable(tag)


@pytest.mark.parametrize(
    ("tag", "stable"),
    [
        ("3.13", True),
        ("3.13-slim", True),
        ("3.13-rc", False),
        ("3.13-rc1", False),
        ("3.13.0-rc.1", False),
        ("3.0.0-beta.1", False),
        ("3.0.0-alpha", False),
        ("3.0.0-ALPHA2", False),
        ("3.14-rc-slim-bookworm", False),
        ("3.13.0rc1-slim", False),
        ("17beta2-bookworm", False),
        ("3.8.3-SNAPSHOT", False),
        ("11.0.0-preview", False),
        ("1.2.3-alpine-rc1", True),  # only the first piece after the dash can be a prerelease
        ("1.25-rcx", True),  # "rcx" is a variant name, not rc plus a number
    ],
)
def test_rc_beta_alpha_are_prereleases(tag: str, *, stable: bool) -> None:
    """``-rc``, ``-beta``, ``-alpha`` (``-rcN``, ``-beta.1`` …) and glued ones are prereleases."""
    assert docker.is_stable(tag) is stable


def test_order_is_numeric_per_component() -> None:
    """``3.9`` < ``3.10`` < ``3.12``; a prerelease below its release; numbers in rc compare."""
    tags = ["3.10", "3.9", "3.12", "3.12-rc10", "3.12-rc9", "3.12-rc"]
    assert sorted(tags, key=docker.sort_key) == [
        "3.9",
        "3.10",
        "3.12-rc",
        "3.12-rc9",
        "3.12-rc10",
        "3.12",
    ]


def test_a_shorter_tag_sorts_above_the_longer_ones_it_prefixes() -> None:
    """``3.12`` follows the newest ``3.12.x``, so it sorts above ``3.12.5`` (Renovate's rule)."""
    assert docker.compare("3.12", "3.12.5") == 1
    assert docker.compare("3.12.5", "3.13") == -1


def test_tags_of_one_version_compare_equal_but_each_pins_itself() -> None:
    """``18.04`` and ``18.4``, ``v1.2`` and ``1.2``: one version in order, two pins."""
    assert docker.compare("18.04", "18.4") == 0
    assert docker.compare("v1.2", "1.2") == 0
    assert docker.compare("18.04", "18.10") == -1
    assert not docker.matches("18.4", "18.04")
    assert docker.update_type("18.04", "18.4") is None


def test_dates_sort_above_every_version_never_numerically_against_them() -> None:
    """A date tag is never "version 20240329": every date sorts above every version."""
    assert docker.compare("20240329", "99999999.1") == 1
    assert docker.compare("2024.03.29", "999.0.0") == 1
    assert sorted(["20240401", "3", "20240329", "100"], key=docker.sort_key) == [
        "3",
        "100",
        "20240329",
        "20240401",
    ]


def test_compact_and_dotted_dates_order_by_the_day() -> None:
    """``20240329`` and ``2024.03.29`` name one day; a later day sorts above either form."""
    assert docker.compare("2024.04.01", "20240329") == 1
    assert docker.compare("20240401", "2024.03.29") == 1
    assert docker.compare("202403291200", "202403290900") == 1


def test_an_impossible_compact_date_is_a_plain_number() -> None:
    """``20241399`` is no date (month 13): it is a one-component version."""
    assert docker.is_compatible("3", "20241399")
    assert not docker.is_compatible("20240329", "20241399")


@pytest.mark.parametrize(
    ("current", "other", "compatible"),
    [
        ("3.12-slim", "3.13-slim", True),
        ("3.12-slim", "3.13.1-slim", False),
        ("3.12-slim", "3.13", False),
        ("3.12-slim", "3.13-slim-bookworm", False),
        ("3.12-slim", "3.13-rc-slim", True),  # a prerelease of the same variant
        ("20.11.1-alpine3.19", "22.1.0-alpine3.19", True),
        ("20.11.1-alpine3.19", "22.1.0-alpine3.20", False),
        ("v1.22.5", "v1.23.0", True),
        ("v1.22.5", "1.23.0", False),  # the form in use: with a ``v`` or without
        ("3", "20240329", False),
        ("3.1.2", "2024.03.29", False),
        ("20240101", "20240329", True),
        ("20240101", "2024.03.29", False),  # same kind, another written form
        ("2024.01.02", "2024.03.29", True),
        ("latest", "3.13", False),
        ("3.13", "latest", False),
        (
            "0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d",
            "1a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d",
            False,
        ),
    ],
)
def test_compatible_means_same_kind_suffix_and_component_count(
    current: str, other: str, *, compatible: bool
) -> None:
    """Only tags with the same variant and number of components (and kind) are candidates."""
    assert docker.is_compatible(current, other) is compatible


def test_a_tag_is_its_own_pin_even_when_not_a_version() -> None:
    """``exact_pin`` returns the tag (``latest`` too); an off-grammar tag pins nothing."""
    assert docker.exact_pin("3.12-slim") == "3.12-slim"
    assert docker.exact_pin("latest") == "latest"
    assert docker.exact_pin("bad tag") is None
    assert docker.is_valid_constraint("latest")
    assert not docker.is_valid_constraint("-slim")


def test_matches_is_equality_and_max_satisfying_the_tag_itself() -> None:
    """A tag matches only itself; a fresh pull of a tag gets that tag when it is listed."""
    assert docker.matches("3.12", "3.12")
    assert not docker.matches("3.12.0", "3.12")
    assert not docker.matches("18.4", "18.04")
    assert docker.max_satisfying(["3.11", "3.12", "3.13"], "3.12") == "3.12"
    assert docker.max_satisfying(["3.11", "3.13"], "3.12") is None


@pytest.mark.parametrize(
    ("current", "new", "expected"),
    [
        ("3.12-slim", "4.0-slim", "major"),
        ("3.12-slim", "3.13-slim", "minor"),
        ("20.11.1-alpine3.19", "20.11.2-alpine3.19", "patch"),
        ("20.11.1-alpine3.19", "22.1.0-alpine3.19", "major"),
        ("1.2.3.4", "1.2.3.5", "patch"),
        ("3.13-rc1", "3.13", "patch"),
        ("20240101", "20250101", "major"),
        ("20240101", "20240201", "minor"),
        ("20240101", "20240102", "patch"),
        ("3.13", "3.12", None),
        ("3.13", "3.13", None),
        ("1.2", "v1.2", None),
        ("3.13", "latest", None),
        ("3", "20240101", None),
    ],
)
def test_update_type_is_by_the_first_differing_component(
    current: str, new: str, expected: str | None
) -> None:
    """Major/minor/patch by component (a date's year, month, day); ``None`` when not newer."""
    assert docker.update_type(current, new) == expected


def test_registered_under_its_id() -> None:
    """The registry maps ``docker`` to this module."""
    assert VERSIONINGS["docker"] is docker


@pytest.mark.parametrize("scheme", ["npm", "pep440", "go", "cargo"])
def test_range_schemes_call_every_version_compatible(scheme: str) -> None:
    """npm, PEP 440, Go and Cargo let ranges decide: any two versions are compatible."""
    versioning = VERSIONINGS[scheme]
    one, other = ("v1.0.0", "v2.0.0-rc.1") if scheme == "go" else ("1.0.0", "3.0.0")
    assert versioning.is_compatible(one, other)


def _grid() -> list[str]:
    """Tags of every shape: versions of 1-3 components, prereleases, variants, dates, words."""
    cores = ["3", "4", "3.12", "3.13", "3.12.1", "3.13.0", "v3.13", "10.0.0", "3.13.0rc1"]
    cores += ["8", "8.0.402", "8u402", "8u402-b06", "8u412-b08", "17.0.10_7", "1.2.3-4"]
    dates = ["20240101", "20240329", "2024.03.29", "2024.3", "2024-03-29"]
    tails = ["", "-slim", "-alpine3.19", "-rc1", "-rc.2-slim", "-beta", "-debian-12-r9", "-r10"]
    words = ["latest", "stable", "0a1b2c3", "slim"]
    return [core + tail for core in cores + dates for tail in tails] + words


GRID = _grid()


def test_order_is_a_total_order_agreeing_with_the_key() -> None:
    """``compare`` is antisymmetric and agrees with ``sort_key``; equal tags are no update."""
    for a in GRID:
        for b in GRID:
            assert docker.compare(a, b) == -docker.compare(b, a)
            assert (docker.compare(a, b) < 0) is (docker.sort_key(a) < docker.sort_key(b))
            if docker.compare(a, b) == 0 and a != b:  # one version written two ways
                assert docker.update_type(a, b) is None
                assert not docker.matches(a, b)


def test_compatibility_is_an_equivalence_of_valid_tags() -> None:
    """``is_compatible`` is reflexive on versions, symmetric and transitive; never across kinds."""
    valid = [t for t in GRID if docker.is_valid(t)]
    classes: dict[str, set[str]] = {
        t: {o for o in valid if docker.is_compatible(t, o)} for t in valid
    }
    for tag in valid:
        assert tag in classes[tag]
        for other in classes[tag]:
            assert classes[other] == classes[tag]
    assert not any(docker.is_compatible(w, w) for w in GRID if not docker.is_valid(w))
    assert not docker.is_compatible("20240101-slim", "3-slim")


def test_an_update_type_is_given_only_for_a_newer_tag() -> None:
    """``update_type(a, b)`` is set only when ``b`` sorts above ``a``; compatible moves get one."""
    for a in GRID:
        for b in GRID:
            kind = docker.update_type(a, b)
            if kind is not None:
                assert docker.compare(b, a) > 0
            if docker.is_compatible(a, b) and docker.compare(b, a) > 0:
                assert kind in {"major", "minor", "patch"}, (a, b)


def test_date_stamped_snapshots_order_by_date_within_their_name_and_variant() -> None:
    """``jammy-20240227`` < ``jammy-20251001``; other names, variants and plain dates apart."""
    assert docker.compare("jammy-20240227", "jammy-20251001") < 0
    assert docker.is_compatible("jammy-20240227", "jammy-20251001")
    assert not docker.is_compatible("jammy-20240227", "noble-20251001")
    assert not docker.is_compatible("jammy-20240227", "20251001")
    assert not docker.is_compatible("bookworm-20240211", "bookworm-20240211-slim")
    assert docker.is_compatible("bookworm-20240211-slim", "bookworm-20250101-slim")
    assert docker.is_stable("jammy-20240227")
    assert docker.update_type("jammy-20240227", "jammy-20251001") == "patch"
    assert docker.update_type("jammy-20251001", "jammy-20240227") is None


def test_a_temurin_build_number_orders_after_the_patch() -> None:
    """``17.0.10_7-jdk`` < ``17.0.10_10-jdk`` < ``17.0.11_9-jdk``: ``_N`` is a build, numeric."""
    tags = ["17.0.11_9-jdk", "17.0.10_10-jdk", "17.0.10_7-jdk"]
    assert sorted(tags, key=docker.sort_key) == ["17.0.10_7-jdk", "17.0.10_10-jdk", "17.0.11_9-jdk"]
    assert docker.is_stable("17.0.10_7-jdk")
    assert docker.update_type("17.0.10_7-jdk", "17.0.11_9-jdk") == "patch"
    assert docker.update_type("17.0.10_7-jdk", "17.0.10_9-jdk") == "patch"
    assert docker.update_type("17.0.10_7-jdk", "21.0.3_9-jdk") == "major"


def test_a_build_tag_is_compatible_only_with_build_tags_of_its_variant() -> None:
    """Builds keep the suffix (``-jdk``, ``-jre-alpine``) and the precision of their tag."""
    assert docker.is_compatible("17.0.10_7-jdk", "17.0.11_9-jdk")
    assert docker.is_compatible("17.0.10_7-jre-alpine", "21.0.3_9-jre-alpine")
    assert not docker.is_compatible("17.0.10_7-jdk", "17.0.11_9-jre-alpine")
    assert not docker.is_compatible("17.0.10_7-jdk", "17-jdk")
    assert not docker.is_compatible("17.0.10_7-jdk", "17.0.11-jdk")
    assert not docker.is_compatible("17-jdk", "17.0.11_9-jdk")
    assert docker.is_compatible("17-jdk", "21-jdk")


def test_a_numeric_first_suffix_piece_is_a_build() -> None:
    """``1.2.3-4`` → ``1.2.4-1`` (a package revision), ``4.16.1-20231219`` → a later build."""
    assert docker.is_compatible("1.2.3-4", "1.2.4-1")
    assert docker.compare("1.2.4-1", "1.2.3-4") == 1
    assert docker.compare("1.2.3-5", "1.2.3-4") == 1
    assert docker.update_type("1.2.3-4", "1.2.3-5") == "patch"
    assert docker.is_compatible("1.2.3-4-alpine", "1.2.4-1-alpine")
    assert not docker.is_compatible("1.2.3-4-alpine", "1.2.4-1")
    assert not docker.is_compatible("1.2.3-4", "1.2.4")
    assert docker.is_compatible("4.16.1-20231219", "4.18.0-20240220")
    assert not docker.is_compatible("1.2.3_4", "1.2.3-4")


def test_version_shaped_tags_that_read_as_no_version_are_told_apart() -> None:
    """``1.2.3.Final`` looks like a version; ``latest``, a commit and a valid tag do not."""
    assert docker.looks_like_version("1.2.3.Final")
    assert docker.looks_like_version("v2.0_rc")
    for tag in ("latest", "0a1b2c3", "17.0.10_7-jdk", "3.12", "jammy"):
        assert not docker.looks_like_version(tag), tag


def test_a_java_8_update_tag_is_major_0_update() -> None:
    """``8u402-b06-jdk`` is 8.0.402 build 6: newer updates and builds sort above it, numerically."""
    tags = ["8u412-b08-jdk", "8u402-b10-jdk", "8u92-b14-jdk", "8u402-b06-jdk"]
    assert sorted(tags, key=docker.sort_key) == [
        "8u92-b14-jdk",
        "8u402-b06-jdk",
        "8u402-b10-jdk",
        "8u412-b08-jdk",
    ]
    assert docker.is_valid("8u402-b06-jre-jammy")
    assert docker.is_stable("8u402-b06-jdk")
    assert docker.is_stable("8u342-jdk")
    assert docker.release_of("8u402-b06-jre-jammy") == (8, 0, 402)
    assert docker.release_of("8u402") == (8, 0, 402)
    assert docker.update_type("8u402-b06-jdk", "8u412-b08-jdk") == "patch"
    assert docker.update_type("8u402-b06-jdk", "8u402-b07-jdk") == "patch"
    assert docker.update_type("8u412-b08-jdk", "8u402-b06-jdk") is None
    assert not docker.looks_like_version("8u402-b06-jdk")


def test_a_java_8_update_tag_moves_only_within_its_variant_and_form() -> None:
    """The suffix (``-jdk``, ``-jre-jammy``) must match; a build written alike or none.

    Never to the floating ``8-jdk`` (the move Renovate proposes, renovatebot/renovate#19678),
    nor to a Java 11 tag written ``11.0.22_7-jdk``.
    """
    assert docker.is_compatible("8u402-b06-jdk", "8u412-b08-jdk")
    assert docker.is_compatible("8u402-b06-jre-jammy", "8u412-b08-jre-jammy")
    assert docker.is_compatible("8u342-jdk", "8u352-jdk")
    assert docker.is_compatible("8u402", "8u412")
    assert docker.is_compatible("8u402-al2", "8u412-al2")
    assert not docker.is_compatible("8u402-b06-jdk", "8u412-b08-jre-jammy")
    assert not docker.is_compatible("8u402-b06-jdk", "8u412-b08-jdk-jammy")
    assert not docker.is_compatible("8u402-b06-jdk", "8u412-jdk")
    assert not docker.is_compatible("8u402-b06-jdk", "8-jdk")
    assert not docker.is_compatible("8u342-alpine3.16-jre", "8-alpine3.16-jre")
    assert not docker.is_compatible("8u402-b06-jdk", "8.0.412-jdk")
    assert not docker.is_compatible("8u402", "8u412-al2")
    assert not docker.is_compatible("8u402-b06-jdk", "11.0.22_7-jdk")


def test_a_bitnami_revision_is_ordered_numerically_and_is_not_the_variant() -> None:
    """``7.2.4-debian-12-r9`` → ``-r10`` (patch) or ``7.2.5-debian-12-r0``; ``debian-12`` stays."""
    tags = ["7.2.5-debian-12-r0", "7.2.4-debian-12-r10", "7.2.4-debian-12-r9", "7.2.4-debian-12-r2"]
    assert sorted(tags, key=docker.sort_key) == [
        "7.2.4-debian-12-r2",
        "7.2.4-debian-12-r9",
        "7.2.4-debian-12-r10",
        "7.2.5-debian-12-r0",
    ]
    assert docker.is_compatible("7.2.4-debian-12-r9", "7.2.4-debian-12-r10")
    assert docker.is_compatible("7.2.4-debian-12-r9", "7.2.5-debian-12-r0")
    assert docker.is_compatible("7.2.4-debian-12-r9", "8.0.0-debian-12-r1")
    assert not docker.is_compatible("7.2.4-debian-12-r9", "7.2.5-debian-11-r3")
    assert not docker.is_compatible("7.2.4-debian-12-r9", "7.2.5-debian-12")
    assert not docker.is_compatible("7.2.4-debian-12-r9", "7.2.5")
    assert not docker.is_compatible("7.2-debian-12", "7.2.5-debian-12-r0")
    assert docker.update_type("7.2.4-debian-12-r9", "7.2.4-debian-12-r10") == "patch"
    assert docker.update_type("7.2.4-debian-12-r9", "7.2.5-debian-12-r0") == "patch"
    assert docker.update_type("7.2.4-debian-12-r9", "7.4.0-debian-12-r0") == "minor"
    assert docker.update_type("7.2.4-debian-12-r10", "7.2.4-debian-12-r9") is None
    assert docker.release_of("7.2.4-debian-12-r9") == (7, 2, 4)
    # Alpine-style package revisions, without a variant; with a build before them.
    assert docker.is_compatible("1.2.3-r1", "1.2.4-r0")
    assert docker.compare("1.2.3-r10", "1.2.3-r9") == 1
    assert docker.is_compatible("1.2.3-4-r1", "1.2.3-5-r0")
    assert not docker.is_compatible("1.2.3-4-r1", "1.2.3-5")


def test_another_variant_is_the_same_shape_with_another_suffix() -> None:
    """``is_other_variant``: same form and precision, other suffix; never dates or snapshots."""
    assert docker.is_other_variant("7.2.4-debian-11-r40", "7.4.1-debian-12-r3")
    assert docker.is_other_variant("20-alpine3.18", "22-alpine3.20")
    assert docker.is_other_variant("3.12-slim", "3.13")
    assert not docker.is_other_variant("3.12-slim", "3.13-slim")  # the same variant
    assert not docker.is_other_variant("7.2.4-debian-11-r40", "7.4.1-debian-12")  # no revision
    assert not docker.is_other_variant("3.12-slim", "3.13.1")  # another precision
    assert not docker.is_other_variant("jammy-20240227", "noble-20251001")
    assert not docker.is_other_variant("20240101-slim", "20250101")
    assert not docker.is_other_variant("latest", "3.13")
    for scheme in ("node_image", "ubuntu_image"):
        assert VERSIONINGS[scheme].is_other_variant("20-alpine3.18", "22-alpine3.20")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("current", "other", "line"),
    [
        ("v1", "v2.0.0", (2,)),
        ("v1", "v1.2.3", (1,)),
        ("v4.2", "v4.3.1", (4, 3)),
        ("4.2-alpine", "4.3.1-alpine", (4, 3)),
        ("v1", "2.0.0", None),  # another written form
        ("1-alpine", "2.0.0", None),  # another variant
        ("v1", "v2", None),  # as precise: compatible, not finer
        ("v1.2.3", "v2", None),  # less precise
        ("v1", "v2.0.0-rc1", None),  # a prerelease
        ("v1-rc1", "v2.0.0", None),
        ("7-debian-12", "7.2.4-debian-12-r9", None),  # a revision
        ("17", "17.0.10_7", None),  # a build
        ("2024", "2024.03.29", None),  # dates
        ("latest", "v2.0.0", None),
    ],
)
def test_finer_line_cuts_a_precise_tag_to_a_floating_tags_precision(
    current: str, other: str, line: tuple[int, ...] | None
) -> None:
    """Only a more precise stable tag of the same form and variant has a line."""
    assert docker.finer_line(current, other) == line


@pytest.mark.parametrize(
    ("current", "line", "tag"),
    [("v1", (2,), "v2"), ("4.2-alpine", (4, 3), "4.3-alpine"), ("1", (2,), "2")],
)
def test_line_tag_writes_a_line_as_the_floating_tag_is_written(
    current: str, line: tuple[int, ...], tag: str
) -> None:
    """The ``v`` and the variant of the floating tag are kept."""
    assert docker.line_tag(current, line) == tag
