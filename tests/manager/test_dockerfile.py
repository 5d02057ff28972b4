from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import dockerfile
from patchula.models import ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "dockerfile"
NODE_DIGEST = "sha256:8530f76a96d88820d288761f022e318970dda93d01536919fbc16076b7983e63"
RUST_DIGEST = "sha256:1bcff4befb740599103a2c7cb51058e14479b2e35e3a34a3f0dc4ede09927488"

# line, dep_type, name, package_name, declared, constraint, digest, skip_reason
Row = tuple[int | None, str, str, str, str | None, str | None, str | None, str | None]


def _no_read(path: str) -> str:
    raise ManifestError("no includes expected", file=path)


def _extract(case: str, rel: str = "Dockerfile") -> ExtractResult:
    text = (FIXTURES / case / rel).read_text(encoding="utf-8")
    return dockerfile.extract(rel, text, _no_read)


def _text(text: str) -> ExtractResult:
    return dockerfile.extract("Dockerfile", text, _no_read)


def _rows(result: ExtractResult) -> list[Row]:
    return [
        (
            d.line,
            d.dep_type,
            d.name,
            d.package_name,
            d.declared,
            d.constraint,
            d.digest,
            d.skip_reason,
        )
        for d in result.dependencies
    ]


def _short(result: ExtractResult) -> list[tuple[int | None, str, str, str | None]]:
    return [(d.line, d.dep_type, d.package_name, d.constraint) for d in result.dependencies]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Dockerfile", True),
        ("dockerfile", True),
        ("docker/Dockerfile", True),
        ("Dockerfile.distroless", True),
        ("Dockerfile-dev", True),
        ("build/app.Dockerfile", True),
        ("app.dockerfile", True),
        ("Containerfile", True),
        ("images/Containerfile.fedora", True),
        ("Dockerfile.dockerignore", False),
        ("app.Dockerfile.dockerignore", False),
        ("MyDockerfile", False),
        ("docs/dockerfile.md/readme", False),
        ("src/patchula/manager/dockerfile.py", False),  # source about Dockerfiles, not one
        ("docs/Dockerfile.md", False),
        ("pkg/dockerfile_test.go", False),
        ("ci/Dockerfile.yaml", False),
        ("Dockerfile.j2", True),  # a template of a Dockerfile is still read, as Renovate does
        ("docker-compose.yml", False),
    ],
)
def test_matches_dockerfiles_and_containerfiles_as_renovate_does(
    path: str,
    expected: bool,  # noqa: FBT001
) -> None:
    """Renovate's Dockerfile and Containerfile name patterns; BuildKit's ignore files are not."""
    assert dockerfile.matches(path) is expected


def test_plugin_ids() -> None:
    """The module declares its id, the docker datasource and the docker versioning."""
    assert (dockerfile.ID, dockerfile.DATASOURCE, dockerfile.VERSIONING) == (
        "dockerfile",
        "docker",
        "docker",
    )


def test_arg_defaults_are_substituted_and_missing_values_are_skipped() -> None:
    """ARGs before FROM fill ``$V``, ``${V:-x}``, ``${V:+x}``; a value not known skips the row."""
    result = _extract("arg-defaults")
    assert result.problems == ()
    hub = "docker.io/library/"
    no_default = "ARG NO_DEFAULT has no default; its value comes from --build-arg"
    platform = "$TARGETARCH is set by the build platform (BuildKit's automatic platform ARGs)"
    undeclared = "is not declared by an ARG before the first FROM"
    tool = "ghcr.io/acme/tool"
    assert _rows(result) == [
        (7, "stage", "python", hub + "python", "python:3.12-slim-bookworm",
         "3.12-slim-bookworm", None, None),
        (8, "stage", "python", hub + "python", "python:3.11-alpine", "3.11-alpine", None, None),
        (9, "stage", tool, tool, f"{tool}:1.0", "1.0", None, None),
        (10, "stage", "node", hub + "node", "node:${NO_DEFAULT}", None, None, no_default),
        (11, "stage", "node", hub + "node", "node:20", "20", None, None),
        (12, "stage", "redis", hub + "redis", "redis:7-alpine", "7-alpine", None, None),
        (13, "stage", "golang", hub + "golang", "golang:1.22-${TARGETARCH}", None, None,
         platform),
        (14, "stage", "postgres", hub + "postgres", "postgres:${UNDECLARED}", None, None,
         f"$UNDECLARED {undeclared}"),
        # An ARG inside a stage is not in scope for a later FROM (only the global ones are).
        (16, "final", "busybox", hub + "busybox", "busybox:${IN_STAGE}", None, None,
         f"$IN_STAGE {undeclared}"),
    ]  # fmt: skip


def test_every_row_has_the_container_image_shape() -> None:
    """Each row names the dockerfile manager, the docker datasource and versioning, the file."""
    rows = _extract("registries").dependencies
    assert {(d.manager, d.datasource, d.versioning, d.file) for d in rows} == {
        ("dockerfile", "docker", "docker", "Dockerfile")
    }


def test_multi_stage_aliases_are_not_images() -> None:
    """``FROM builder``, ``COPY --from=builder`` (any case) and ``--from=0`` name stages."""
    result = _extract("multi-stage-aliases")
    assert result.problems == ()
    assert _short(result) == [
        (1, "stage", "docker.io/library/golang", "1.22-bookworm"),
        (7, "stage", "docker.io/library/node", "20-alpine"),
        (10, "final", "gcr.io/distroless/base-debian12", "nonroot"),
        (14, "copy-from", "docker.io/library/nginx", "1.27-alpine"),
    ]


def test_platform_and_other_flags_are_skipped() -> None:
    """``--platform=$BUILDPLATFORM`` and ``--platform=linux/amd64`` do not hide the image."""
    assert _short(_extract("platform-flag")) == [
        (1, "stage", "docker.io/tonistiigi/xx", "1.4.0"),
        (2, "stage", "docker.io/library/rust", "1.80-slim"),
        (3, "final", "docker.io/library/alpine", "3.20"),
    ]


def test_digests_with_and_without_tags() -> None:
    """A digest is kept beside its tag; a digest alone has no constraint (no ``latest``)."""
    rows = _extract("digests").dependencies
    assert [(d.constraint, d.digest) for d in rows] == [
        ("24", NODE_DIGEST),
        (None, RUST_DIGEST),
        ("v2", "sha256:0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba"),
    ]
    assert rows[1].declared == f"rust@{RUST_DIGEST}"


def test_registries_hosts_ports_and_single_docker_hub_names() -> None:
    """localhost:5000, a host with a port, single names (library/), docker.io and its alias."""
    rows = _extract("registries").dependencies
    busybox = "quay.io/prometheus/busybox-linux-amd64"
    assert [(d.name, d.package_name, d.constraint) for d in rows] == [
        ("localhost:5000/x", "localhost:5000/x", "latest"),
        ("registry.example.com:5000/a/b", "registry.example.com:5000/a/b", "1.0"),
        ("alpine", "docker.io/library/alpine", "latest"),
        ("docker.io/library/debian", "docker.io/library/debian", "12"),
        ("index.docker.io/grafana/grafana", "docker.io/grafana/grafana", "11.1.0"),
        (busybox, busybox, "latest"),
    ]


def test_scratch_gives_no_row_and_the_last_image_stage_is_not_final() -> None:
    """``FROM scratch`` is no image; the stage before it stays ``stage``."""
    assert _short(_extract("scratch")) == [(1, "stage", "docker.io/library/alpine", "3.20")]


def test_continuation_lines_comments_and_crlf() -> None:
    """A FROM continued over lines (with a comment and a blank line inside) is read whole."""
    result = _extract("continuation-lines")
    assert result.problems == ()
    # The row's line is the image's own line; ``echo FROM nothing:1`` is inside a RUN.
    assert _short(result) == [
        (5, "stage", "docker.io/library/python", "3.12"),
        (9, "final", "docker.io/library/debian", "12-slim"),
    ]


def test_escape_directive_changes_the_continuation_character() -> None:
    """``# escape=``` makes the backtick continue lines; ``# syntax=`` is the frontend image."""
    result = _extract("escape-directive")
    assert result.problems == ()
    assert _short(result) == [
        (2, "syntax", "docker.io/docker/dockerfile", "1.7"),
        (3, "stage", "mcr.microsoft.com/windows/servercore", "ltsc2022"),
        (7, "final", "mcr.microsoft.com/powershell", "lts-nanoserver-1809"),
    ]


def test_heredoc_bodies_are_not_instructions() -> None:
    """``FROM`` lines inside ``RUN <<EOF`` and ``COPY <<-"CONF"`` bodies are not images."""
    assert _short(_extract("heredoc")) == [
        (1, "stage", "docker.io/library/ubuntu", "24.04"),
        (9, "final", "docker.io/library/alpine", "3.20"),
    ]


def test_invalid_references_and_bad_lines_are_problems_at_their_lines() -> None:
    """An invalid image, a malformed FROM and a broken substitution cost only their line."""
    result = _extract("invalid-reference")
    assert _short(result) == [(4, "final", "docker.io/library/node", "20")]
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        (
            "Dockerfile",
            1,
            (
                "invalid image reference 'Python:3.12': "
                "repository name 'library/Python' must be lowercase"
            ),
        ),
        ("Dockerfile", 2, "FROM takes an image and an optional AS name"),
        ("Dockerfile", 3, "missing '}' in '${BROKEN'"),
        ("Dockerfile", 5, "FROM takes an image and an optional AS name"),
    ]


def test_an_empty_dockerfile_has_nothing() -> None:
    """An empty file gives neither rows nor problems."""
    assert _extract("empty") == ExtractResult()


@pytest.mark.parametrize(
    ("text", "declared", "reason"),
    [
        ('ARG V="1 2"\nFROM img:${V}\n', None, None),  # an invalid tag: a problem, not a row
        ("ARG V=3\nFROM img:\\$V\n", None, None),  # an escaped dollar is literal: invalid
        ("ARG A=x B=${A}-y\nFROM img:${B}\n", "img:x-y", None),
        ("ARG PY_VERSION\nFROM python:${PY_VERSION:-3.12}-slim\n", "python:3.12-slim", None),
        ("ARG A=1\nFROM img:${A-2}\n", "img:1", None),
        ("ARG A=\nFROM img:${A-2}x\n", "img:x", None),
        ("ARG A=\nFROM img:${A:-2}\n", "img:2", None),
        ("ARG A\nFROM img:${A:-${B:-3}}\n", "img:3", None),
        ("ARG A=1\nFROM img:${A:?needed}\n", "img:1", None),
        ("ARG A\nFROM img:${A:?needed}\n", "img:${A:?needed}", "ARG A has no default"),
        ("ARG A='$B'\nFROM img:${A}\n", None, None),  # single quotes: "$B" is not expanded again
        ('ARG T=3.12\nFROM "python:${T}"\n', "python:3.12", None),
        ("FROM img:${A#x}\n", None, None),  # an unsupported modifier: a problem
    ],
)
def test_shell_lexer_substitutions(text: str, declared: str | None, reason: str | None) -> None:
    """BuildKit's expansion forms, quotes and escapes give the image BuildKit would pull."""
    result = _text(text)
    if declared is None:
        assert result.dependencies == ()
        assert len(result.problems) == 1
        return
    [row] = result.dependencies
    assert row.declared == declared
    assert (row.skip_reason or "").startswith(reason or "")
    assert bool(row.skip_reason) is bool(reason)


def test_from_a_stage_named_like_an_image_pulls_it_first() -> None:
    """``FROM node AS node`` pulls node; a later ``FROM node`` is that stage."""
    result = _text("FROM node:20 AS node\nFROM node\n")
    assert _short(result) == [(1, "stage", "docker.io/library/node", "20")]


def test_copy_from_an_image_in_a_stage_uses_the_stage_args() -> None:
    """``COPY --from=${IMG}`` expands with the stage's ARGs (global ones declared again)."""
    text = "ARG TAG=1.27\nFROM alpine:3\nARG TAG\nARG IMG=nginx\nCOPY --from=${IMG}:${TAG} /a /b\n"
    assert _short(_text(text)) == [
        (2, "final", "docker.io/library/alpine", "3"),
        (5, "copy-from", "docker.io/library/nginx", "1.27"),
    ]


@pytest.mark.parametrize(
    ("case", "rel", "expected"),
    [
        (
            "real-excalidraw",
            "Dockerfile",
            [
                (1, "stage", "docker.io/library/node", "24"),
                (16, "final", "docker.io/library/nginx", "stable-alpine-slim"),
            ],
        ),
        (
            "real-mise",
            "packaging/mise/Dockerfile",
            [
                (1, "syntax", "docker.io/docker/dockerfile", "1"),
                (2, "stage", "docker.io/library/rust", None),
                (14, "final", "docker.io/library/rust", None),
            ],
        ),
        (
            "real-prometheus",
            "Dockerfile.distroless",
            [(4, "final", "gcr.io/distroless/static-debian13", "nonroot-amd64")],
        ),
        (
            "real-prometheus-busybox",
            "Dockerfile",
            [(3, "final", "quay.io/prometheus/busybox-linux-amd64", "latest")],
        ),
        ("real-pipenv", "docker/Dockerfile", [(2, "final", "docker.io/library/python", None)]),
        ("real-ruff", "Dockerfile", [(1, "stage", "docker.io/library/ubuntu", "latest")]),
    ],
)
def test_real_dockerfiles_of_the_corpus(
    case: str, rel: str, expected: list[tuple[int, str, str, str | None]]
) -> None:
    """Copies of the corpus' Dockerfiles: every image with its line, stage and tag."""
    result = _extract(case, rel)
    assert result.problems == ()
    assert _short(result) == expected


@pytest.mark.parametrize(
    "text",
    [
        "FROM img:" + "${A:-" * 50_000 + "x" + "}" * 50_000 + "\n",
        "FROM " + "a" * 2_000_000 + "\n",
        "ARG A=" + "$$" * 500_000 + "\nFROM img:${A}\n",
        "FROM \\\n" * 100_000 + "alpine:3\n",
        "ARG " + "A=1 " * 100_000 + "\nFROM img:${A}\n",
    ],
)
def test_hostile_dockerfiles_end_in_problems_or_rows(text: str) -> None:
    """Deep substitutions, a 2 MB image word, huge ARGs and 100,000 continuations never hang."""
    result = _text(text)
    assert len(result.problems) + len(result.dependencies) >= 1
    assert all(p.file == "Dockerfile" for p in result.problems)


def test_run_mount_from_an_image_or_a_stage() -> None:
    """``RUN --mount=from=image`` is ``mount-from``; a stage name or index there is not an image."""
    text = (
        "FROM python:3.12 AS base\n"
        "RUN --mount=from=ghcr.io/astral-sh/uv:0.4.20,source=/uv,target=/bin/uv uv sync\n"
        "RUN --mount=type=bind,from=base,target=/x --mount=type=cache,target=/c \\\n"
        "    --mount=type=bind,source=/a,from=0,target=/y make\n"
        "RUN --mount=type=cache,target=/root/.cache echo from=nginx:1\n"
    )
    result = _text(text)
    assert result.problems == ()
    assert _short(result) == [
        (1, "final", "docker.io/library/python", "3.12"),
        (2, "mount-from", "ghcr.io/astral-sh/uv", "0.4.20"),
    ]


def test_many_bad_words_on_continued_lines_cost_linear_time() -> None:
    """100,000 continued lines of invalid ARG names: problems capped, each with its own line."""
    result = _text("ARG \\\n" + "-bad \\\n" * 100_000 + "ok=1\nFROM img:${ok}\n")
    assert [p.line for p in result.problems[:3]] == [2, 3, 4]
    assert len(result.problems) == 21
    assert result.problems[-1].message == "more than 20 problems; the rest are not reported"
    assert [d.declared for d in result.dependencies] == ["img:1"]


def test_an_arg_whose_default_needs_a_value_says_which() -> None:
    """``ARG BASE=golang:${TARGETARCH}`` then ``FROM ${BASE}``: the reason names TARGETARCH."""
    [row] = _text("ARG BASE=golang:1.22-${TARGETARCH}\nFROM ${BASE}\n").dependencies
    assert row.skip_reason == (
        "ARG BASE's default needs a value: "
        "$TARGETARCH is set by the build platform (BuildKit's automatic platform ARGs)"
    )


def test_directives_may_be_indented_and_in_any_case() -> None:
    """`` # EsCaPe=` `` after blanks is still the escape directive (Renovate's fixture 4).

    BuildKit trims a line's leading whitespace first, so backtick continuations join.
    """
    result = _text(
        "#  syntax=docker/dockerfile:1\n"
        " # EsCaPe=`\n"
        " ARG `\n"
        "\t# multi-line arg\n"
        "   ALPINE_VERSION=alpine:3.15.4\n"
        "\n"
        "FROM `\n"
        "${ALPINE_VERSION} as stage1\n"
        "\n"
        "\tFROM \t`\n"
        "   image5 `\n"
        "\t#comment5\n"
        "\tas name3\n"
    )
    assert result.problems == ()
    assert _short(result) == [
        (1, "syntax", "docker.io/docker/dockerfile", "1"),
        (8, "stage", "docker.io/library/alpine", "3.15.4"),
        (11, "final", "docker.io/library/image5", "latest"),
    ]
