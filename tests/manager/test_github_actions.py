from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import github_actions
from patchula.manager.github_actions import EXPRESSION_SKIP
from patchula.models import Dependency, ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "github_actions"
WORKFLOWS = ".github/workflows"
SPACE = "'node:20 extra'"


def _no_read(path: str) -> str:
    raise ManifestError("no includes expected", file=path)


def _extract(case: str, rel: str) -> ExtractResult:
    text = (FIXTURES / case / rel).read_text(encoding="utf-8")
    return github_actions.extract(rel, text, _no_read)


def _images(result: ExtractResult) -> list[Dependency]:
    """The container image rows (datasource ``docker``), without the action references."""
    return [d for d in result.dependencies if d.datasource == "docker"]


def _short(result: ExtractResult) -> list[tuple[int | None, str, str, str | None]]:
    return [(d.line, d.dep_type, d.package_name, d.constraint) for d in _images(result)]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".github/workflows/ci.yml", True),
        (".github/workflows/release.yaml", True),
        (".gitea/workflows/ci.yml", True),
        (".github/actions/lint/action.yml", True),
        ("action.yml", True),
        ("tools/setup/action.yaml", True),
        ("workflow-templates/ci.yml", True),
        (".github/dependabot.yml", False),
        (".github/workflows/README.md", False),
        ("docker-compose.yml", False),
        ("my-action.yml", False),
    ],
)
def test_matches_workflows_and_action_files_as_renovate_does(
    path: str,
    expected: bool,  # noqa: FBT001
) -> None:
    """Workflow folders (GitHub, Gitea, Forgejo, templates) and action.yml|yaml anywhere."""
    assert github_actions.matches(path) is expected


def test_plugin_ids() -> None:
    """The module declares its id (Renovate's manager name) and the docker datasource for now."""
    assert (github_actions.ID, github_actions.DATASOURCE, github_actions.VERSIONING) == (
        "github_actions",
        "docker",
        "docker",
    )


def test_job_containers_services_and_docker_steps() -> None:
    """``container`` (string and mapping), ``services.*.image`` and ``uses: docker://``."""
    result = _extract("container-and-services", f"{WORKFLOWS}/ci.yml")
    assert result.problems == ()
    assert _short(result) == [
        (6, "container", "docker.io/library/node", "20-bookworm"),
        (9, "step", "docker.io/library/alpine", "3.20"),
        (15, "container", "ghcr.io/acme/builder", "1.4"),
        (21, "service", "docker.io/library/postgres", "17-trixie"),
        (24, "service", "localhost:5000/cache/redis", "7"),
        (27, "step", "registry.example.com:5000/a/b", "1.0"),
    ]
    builder = _images(result)[2]
    assert (
        builder.digest == "sha256:0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba"
    )
    assert builder.declared == f"ghcr.io/acme/builder:1.4@{builder.digest}"
    assert {(d.manager, d.datasource, d.versioning) for d in _images(result)} == {
        ("github_actions", "docker", "docker")
    }


def test_expressions_are_skipped_and_empty_images_give_nothing() -> None:
    """``${{ … }}`` in an image skips the row; an empty image turns the container off."""
    result = _extract("expressions", f"{WORKFLOWS}/matrix.yaml")
    assert result.problems == ()
    rows = [(d.line, d.dep_type, d.name, d.declared) for d in result.dependencies]
    assert rows == [
        (7, "container", "${{ matrix.image }}", "${{ matrix.image }}"),
        (10, "service", "postgres", "postgres:${{ matrix.pg }}"),
        (14, "step", "ghcr.io/acme/tool", "ghcr.io/acme/tool:${{ inputs.version }}"),
    ]
    assert {d.skip_reason for d in result.dependencies} == {EXPRESSION_SKIP}


def test_docker_action_image_and_composite_steps() -> None:
    """An action's ``runs.image: docker://`` and a composite action's docker steps are rows."""
    assert _short(_extract("docker-action", "action.yml")) == [
        (4, "step", "docker.io/hadolint/hadolint", "v2.12.0-alpine")
    ]
    assert _short(_extract("composite-action", ".github/actions/lint/action.yml")) == [
        (5, "step", "docker.io/rhysd/actionlint", "1.7.1")
    ]


def test_an_action_built_from_its_dockerfile_gives_nothing() -> None:
    """``runs.image: Dockerfile`` is built from the action's own folder, not pulled."""
    assert _extract("dockerfile-action", "action.yaml") == ExtractResult()


def test_invalid_images_are_problems_at_their_lines() -> None:
    """An upper-case name, a list image and a reference with a space cost only their line."""
    result = _extract("invalid", f"{WORKFLOWS}/bad.yml")
    assert _short(result) == [(10, "step", "docker.io/library/node", "22")]
    assert [(p.line, p.message) for p in result.problems] == [
        (3, "invalid image reference 'Node:20': repository name 'library/Node' must be lowercase"),
        (6, "a container image must be a string"),
        (9, f"invalid image reference 'node:20 extra': reference {SPACE} contains whitespace"),
    ]


def test_an_empty_workflow_has_nothing() -> None:
    """An empty file gives neither rows nor problems."""
    assert _extract("empty", f"{WORKFLOWS}/empty.yml") == ExtractResult()


def test_broken_yaml_is_one_problem_with_its_line() -> None:
    """A syntax error is a problem naming file and line."""
    result = github_actions.extract(f"{WORKFLOWS}/x.yml", "jobs:\n  a: [\n", _no_read)
    assert result.dependencies == ()
    [problem] = result.problems
    assert (problem.file, problem.line) == (f"{WORKFLOWS}/x.yml", 3)


# An independent oracle for the copies of real workflows: the lines that name an image.
_IMAGE_LINE = re.compile(r"^\s*(?:image:\s*\S|container:\s*[^\s#]|-?\s*uses:\s*['\"]?docker://)")


@pytest.mark.parametrize(
    ("case", "rel"),
    [
        ("real-prometheus", f"{WORKFLOWS}/ci.yml"),
        ("real-prometheus-prombench", f"{WORKFLOWS}/prombench.yml"),
        ("real-mise", f"{WORKFLOWS}/release-alpine.yml"),
        ("real-mise", f"{WORKFLOWS}/copr-publish.yml"),
        ("real-asdf", f"{WORKFLOWS}/lint.yml"),
        ("real-pydantic", f"{WORKFLOWS}/third-party.yml"),
        ("real-django", f"{WORKFLOWS}/tests.yml"),
    ],
)
def test_real_workflows_give_every_image_line(case: str, rel: str) -> None:
    """Copies of the corpus' workflows: one row at each line naming an image, no problem."""
    result = _extract(case, rel)
    text = (FIXTURES / case / rel).read_text(encoding="utf-8").splitlines()
    expected = [n for n, line in enumerate(text, 1) if _IMAGE_LINE.match(line)]
    assert expected
    assert result.problems == ()
    assert [d.line for d in _images(result)] == expected


def test_the_corpus_workflow_images() -> None:
    """The images themselves in a few real workflows (hosts, tags, digests, dep types)."""
    assert set(_short(_extract("real-prometheus", f"{WORKFLOWS}/ci.yml"))) == {
        (line, "container", "quay.io/prometheus/golang-builder", "1.26-base")
        for line in (19, 37, 56, 92, 111, 130, 168, 188, 300)
    }
    assert _short(_extract("real-asdf", f"{WORKFLOWS}/lint.yml")) == [
        (52, "step", "docker.io/rhysd/actionlint", "1.6.24")
    ]
    [alpine] = _images(_extract("real-mise", f"{WORKFLOWS}/release-alpine.yml"))
    assert (alpine.line, alpine.package_name, alpine.constraint, alpine.digest) == (
        26,
        "ghcr.io/jdx/mise",
        "alpine",
        "sha256:d21f898629fbe7016ff26b52c9ebd244e3efb4328a36e7cde28b9bc2a8569090",
    )
    assert _short(_extract("real-pydantic", f"{WORKFLOWS}/third-party.yml")) == [
        (344, "service", "docker.io/library/postgres", "15.1-bullseye"),
        (359, "service", "docker.io/library/redis", "7.4-alpine"),
        (369, "service", "docker.io/bitnamilegacy/minio", "2024.5.28"),
        (760, "service", "docker.io/redis/redis-stack", "latest"),
    ]
