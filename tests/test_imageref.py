"""Image references as distribution/reference (normalize_test.go, reference_test.go) parses them.

The valid and invalid names are the cases of those two files, read and restated here for
``ParseNormalizedNamed`` (the familiar names the docker CLI accepts).
"""

from __future__ import annotations

import re

import pytest

from patchula.imageref import ImageReference, InvalidImageReference, parse_image_reference

F64 = "f" * 64
D = f"sha256:{F64}"
REDIS = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c"

Parsed = tuple[str, str, str | None, str | None, str]


def _parts(ref: ImageReference) -> Parsed:
    return (ref.registry, ref.repository, ref.tag, ref.digest, ref.familiar)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Docker Hub: single names get library/, namespaces stay, docker.io aliases normalise.
        ("python", ("docker.io", "library/python", None, None, "python")),
        ("python:3.12-slim", ("docker.io", "library/python", "3.12-slim", None, "python")),
        ("grafana/grafana", ("docker.io", "grafana/grafana", None, None, "grafana/grafana")),
        ("docker.io/python", ("docker.io", "library/python", None, None, "docker.io/python")),
        (
            "docker.io/library/foo/bar",
            ("docker.io", "library/foo/bar", None, None, "docker.io/library/foo/bar"),
        ),
        ("index.docker.io/x/y", ("docker.io", "x/y", None, None, "index.docker.io/x/y")),
        (
            "registry-1.docker.io/debian",
            ("docker.io", "library/debian", None, None, "registry-1.docker.io/debian"),
        ),
        ("test_com/foo", ("docker.io", "test_com/foo", None, None, "test_com/foo")),
        ("docker/migrator", ("docker.io", "docker/migrator", None, None, "docker/migrator")),
        ("store/foo/bar", ("docker.io", "store/foo/bar", None, None, "store/foo/bar")),
        (
            "ubuntu-12.04-base",
            ("docker.io", "library/ubuntu-12.04-base", None, None, "ubuntu-12.04-base"),
        ),
        # Other registries: a first component with "." or ":" or "localhost" is a host.
        ("ghcr.io/o/img:v1", ("ghcr.io", "o/img", "v1", None, "ghcr.io/o/img")),
        ("localhost:5000/a/b", ("localhost:5000", "a/b", None, None, "localhost:5000/a/b")),
        ("localhost/fooo", ("localhost", "fooo", None, None, "localhost/fooo")),
        (
            "registry.example.com:5000/a/b:1.0",
            ("registry.example.com:5000", "a/b", "1.0", None, "registry.example.com:5000/a/b"),
        ),
        ("test.com:8080/foo", ("test.com:8080", "foo", None, None, "test.com:8080/foo")),
        ("test-com:8080/foo", ("test-com:8080", "foo", None, None, "test-com:8080/foo")),
        (
            "xn--n3h.com:18080/foo",
            ("xn--n3h.com:18080", "foo", None, None, "xn--n3h.com:18080/foo"),
        ),
        (
            "127.0.0.1:8000/private/moonbase",
            ("127.0.0.1:8000", "private/moonbase", None, None, "127.0.0.1:8000/private/moonbase"),
        ),
        (
            "192.168.1.1:5000/repo:5050",
            ("192.168.1.1:5000", "repo", "5050", None, "192.168.1.1:5000/repo"),
        ),
        (
            "[2001:db8::1]:5000/repo:tag",
            ("[2001:db8::1]:5000", "repo", "tag", None, "[2001:db8::1]:5000/repo"),
        ),
        ("[::1]:5000/repo", ("[::1]:5000", "repo", None, None, "[::1]:5000/repo")),
        (
            "sub-dom1.foo.com/bar/baz/quux:some-long-tag",
            (
                "sub-dom1.foo.com",
                "bar/baz/quux",
                "some-long-tag",
                None,
                "sub-dom1.foo.com/bar/baz/quux",
            ),
        ),
        (
            "b.gcr.io/test.example.com/my-app:test.example.com",
            (
                "b.gcr.io",
                "test.example.com/my-app",
                "test.example.com",
                None,
                "b.gcr.io/test.example.com/my-app",
            ),
        ),
        # An upper-case first component is a host (normalize.go), lower-cased here.
        ("LOCALDOMAIN/fooo/bar", ("localdomain", "fooo/bar", None, None, "LOCALDOMAIN/fooo/bar")),
        ("Foo/bar", ("foo", "bar", None, None, "Foo/bar")),
        # A single name that looks like host:port is a name and a tag (the FIXME in normalize.go).
        ("test.com:5000", ("docker.io", "library/test.com", "5000", None, "test.com")),
        ("localhost:5000", ("docker.io", "library/localhost", "5000", None, "localhost")),
        ("192.168.1.1", ("docker.io", "library/192.168.1.1", None, None, "192.168.1.1")),
        ("foo_bar.com:8080", ("docker.io", "library/foo_bar.com", "8080", None, "foo_bar.com")),
        ("lowercase:Uppercase", ("docker.io", "library/lowercase", "Uppercase", None, "lowercase")),
        # Digests, with and without a tag.
        (f"redis@{REDIS}", ("docker.io", "library/redis", None, REDIS, "redis")),
        (f"busybox:latest@{REDIS}", ("docker.io", "library/busybox", "latest", REDIS, "busybox")),
        (f"test:5000/repo:tag@{D}", ("test:5000", "repo", "tag", D, "test:5000/repo")),
        (
            f"[2001:db8::1]:5000/repo@{D}",
            ("[2001:db8::1]:5000", "repo", None, D, "[2001:db8::1]:5000/repo"),
        ),
        (
            f"img@sha512:{'a' * 128}",
            ("docker.io", "library/img", None, f"sha512:{'a' * 128}", "img"),
        ),
        # Separators: embedded and repeated hyphens, double underscores, single characters.
        (
            "docker---rules/docker",
            ("docker.io", "docker---rules/docker", None, None, "docker---rules/docker"),
        ),
        ("dock__er/docker", ("docker.io", "dock__er/docker", None, None, "dock__er/docker")),
        ("jess/t", ("docker.io", "jess/t", None, None, "jess/t")),
        (
            "docker.io/" + "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
            (
                "docker.io",
                "library/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
                None,
                None,
                "docker.io/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
            ),
        ),
        # Longest names: a path of exactly 255 characters.
        (
            "example.com/" + "a" * 255 + ":tag",
            ("example.com", "a" * 255, "tag", None, "example.com/" + "a" * 255),
        ),
        (
            "a/" * 127 + "a:tag-puts-this-over-max",
            ("docker.io", "a/" * 127 + "a", "tag-puts-this-over-max", None, "a/" * 127 + "a"),
        ),
        ("python:" + "t" * 128, ("docker.io", "library/python", "t" * 128, None, "python")),
    ],
)
def test_valid_references_parse_into_their_parts(text: str, expected: Parsed) -> None:
    """Registry, repository, tag, digest and the familiar name of each valid reference."""
    assert _parts(parse_image_reference(text)) == expected


def test_canonical_is_registry_and_repository() -> None:
    """``canonical`` is what a lookup names: Docker Hub with library/, other hosts as written."""
    assert parse_image_reference("python:3").canonical == "docker.io/library/python"
    assert parse_image_reference("GHCR.io/o/img").canonical == "ghcr.io/o/img"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "must have at least one component"),
        (":justtag", "has no repository name"),
        (f"@{D}", "has no repository name"),
        ("repo@sha256:" + "f" * 34, "invalid sha256 digest length 34 (expected 64)"),
        (f"validname@invaliddigest:{F64}", "unsupported digest algorithm 'invaliddigest'"),
        (f"validname@sha256:{'F' * 64}", "hex part must be lower-case"),
        ("validname@sha256:xyz", "invalid digest format"),
        ("Uppercase:tag", "must be lowercase"),
        ("test:5000/Uppercase/lowercase:tag", "must be lowercase"),
        ("docker/Docker", "must be lowercase"),
        ("docker.io/docker/Docker", "must be lowercase"),
        ("domain/" + "a" * 256 + ":tag", "must not be more than 255 characters"),
        (
            "this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255" * 4 + "/docker",
            "must not be more than 255 characters",
        ),
        ("aa/asdf$$^/aa", "path component 'asdf$$^' is invalid"),
        ("[2001:db8::1]", "is invalid"),
        ("[2001:db8::1]:5000", "is invalid"),
        ("[fe80::1%eth0]:5000/repo", "invalid registry host"),
        ("[2001:db8:3:4::192.0.2.33]:5000/debian", "invalid registry host"),
        ("fc00::1:5000/debian", "invalid registry host"),
        ("https://github.com/docker/docker", "invalid registry host"),
        ("-docker", "is invalid"),
        ("-docker/docker", "is invalid"),
        ("docker-/docker", "is invalid"),
        ("-docker.io/docker/docker", "invalid registry host"),
        ("docker///docker", "empty path component"),
        ("docker.io/docker///docker", "empty path component"),
        ("____/____", "is invalid"),
        ("_docker/_docker", "is invalid"),
        ("dock..er/docker", "invalid registry host"),
        ("dock_.er/docker", "invalid registry host"),
        ("dock-.er/docker", "invalid registry host"),
        ("docker/", "empty path component"),
        (
            "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
            "cannot specify 64-byte hexadecimal strings",
        ),
        ("python:", "invalid tag ''"),
        ("python:.hidden", "invalid tag '.hidden'"),
        ("python:-x", "invalid tag '-x'"),
        ("python:" + "t" * 129, "invalid tag"),
        ("python:3.12 slim", "contains whitespace"),
        ("x" * 2000, "longer than 1024 characters"),
        ("pythön:3", "is invalid"),
    ],
)
def test_invalid_references_say_what_is_wrong(text: str, message: str) -> None:
    """Each invalid reference raises InvalidImageReference naming the part that is wrong."""
    with pytest.raises(InvalidImageReference, match=re.escape(message)) as caught:
        parse_image_reference(text)
    assert isinstance(caught.value, ValueError)
