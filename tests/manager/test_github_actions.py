from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from patchula.discovery import discover
from patchula.errors import ManifestError
from patchula.manager import base, github_actions
from patchula.manager.github_actions import EXPRESSION_SKIP
from patchula.models import Dependency, ExtractResult
from tests.hang import fail_if_blocked

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
    """The module declares its id (Renovate's manager name) and its main datasource, the actions'.

    Image rows name ``docker`` on each row (``test_job_containers_services_and_docker_steps``).
    """
    assert (github_actions.ID, github_actions.DATASOURCE, github_actions.VERSIONING) == (
        "github_actions",
        "github-tags",
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
    # The node official image's tags have their own versioning (only LTS majors are stable).
    assert {(d.package_name, d.versioning) for d in _images(result)} >= {
        ("docker.io/library/node", "node_image"),
        ("docker.io/library/alpine", "docker"),
    }
    assert {(d.manager, d.datasource) for d in _images(result)} == {("github_actions", "docker")}
    assert {d.versioning for d in _images(result)} == {"docker", "node_image"}


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


# --- uses: action references ------------------------------------------------------------------

CHECKOUT_V7 = "3d3c42e5aac5ba805825da76410c181273ba90b1"  # actions/checkout v7.0.1 (and v7)
CHECKOUT_V6 = "de0fac2e4500dabe0009e67214ff5f5447ce83dd"  # actions/checkout v6.0.2


def _actions(result: ExtractResult) -> list[Dependency]:
    """The action reference rows (datasource ``github-tags``)."""
    return [d for d in result.dependencies if d.datasource == "github-tags"]


def _pins(result: ExtractResult) -> list[tuple[int | None, str, str | None, str | None]]:
    return [(d.line, d.name, d.constraint, d.digest) for d in _actions(result)]


def test_action_ids() -> None:
    """Action rows use Renovate's datasource for actions and the docker tag rules."""
    assert (github_actions.ACTION_DATASOURCE, github_actions.ACTION_VERSIONING) == (
        "github-tags",
        "docker",
    )


def test_a_tag_reference_has_the_shared_dependency_shape() -> None:
    """``owner/repo@ref``: name as written, package ``owner/repo``, the ref as constraint."""
    result = _extract("parallel-steps", f"{WORKFLOWS}/ci.yml")
    assert _actions(result)[0] == Dependency(
        manager="github_actions",
        file=f"{WORKFLOWS}/ci.yml",
        line=6,
        name="actions/checkout",
        package_name="actions/checkout",
        datasource="github-tags",
        versioning="docker",
        dep_type="action",
        declared="actions/checkout@v7",
        constraint="v7",
    )


def test_sha_pins_take_their_version_from_the_trailing_comment() -> None:
    """Every comment form Renovate reads names the tag; no (or a tagless) comment gives None."""
    result = _extract("sha-pin-comments", f"{WORKFLOWS}/ci.yml")
    assert result.problems == ()
    assert _pins(result) == [
        (7, "actions/checkout", "v7.0.1", CHECKOUT_V7),
        (8, "actions/checkout", "v7.0.1", CHECKOUT_V7),
        (9, "actions/checkout", "v7", CHECKOUT_V7),
        (10, "actions/checkout", "v7.0.1", CHECKOUT_V7),
        (11, "actions/checkout", "v7.0.1", CHECKOUT_V7),
        (12, "actions/setup-python", "7.0.0", "5fda3b95a4ea91299a34e894583c3862153e4b97"),
        (13, "actions/setup-python", "v7", "5fda3b95a4ea91299a34e894583c3862153e4b97"),
        (
            14,
            "actions-runner-controller/execute-assert-arc-e2e",
            "actions-runner-controller-0.23.5",
            "f1d7c52253b89f0beae60141f8465d9495cdc2cf",
        ),
        (15, "acme/monorepo/tools/lint", "lint/v1.0", "f1d7c52253b89f0beae60141f8465d9495cdc2cf"),
        (16, "Swatinem/rust-cache", "v2", "6323deb102c322ba6fcbdcafc7e3dddab59af2b6"),
        (17, "actions/checkout", None, CHECKOUT_V6),
        (18, "actions/checkout", None, CHECKOUT_V6),
        (19, "actions/checkout", None, CHECKOUT_V6),
        (
            20,
            "acme/sha256-repo",
            "v1.2.0",
            "0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba",
        ),
    ]
    rows = _actions(result)
    assert {d.skip_reason for d in rows} == {None}
    assert rows[1].declared == f"actions/checkout@{CHECKOUT_V7} # tag=v7.0.1"
    assert rows[9].package_name == "Swatinem/rust-cache"
    # A comment naming no tag is not part of what was read.
    assert rows[11].declared == f"actions/checkout@{CHECKOUT_V6}"
    assert rows[13].package_name == "acme/sha256-repo"


def test_a_comment_that_disagrees_with_the_sha_is_recorded_as_written() -> None:
    """The manager keeps both the SHA and the comment's tag; checking them is the scan's job."""
    result = _extract("sha-comment-disagrees", f"{WORKFLOWS}/ci.yml")
    assert _pins(result) == [
        (7, "actions/checkout", "v7.0.1", CHECKOUT_V6),
        (8, "actions/checkout", "v7.0.1", CHECKOUT_V7),
    ]
    assert _actions(result)[0].declared == f"actions/checkout@{CHECKOUT_V6} # v7.0.1"


def test_reusable_workflows_are_job_level_rows() -> None:
    """A job's ``uses:`` is a ``reusable-workflow`` row of the repository holding the workflow."""
    result = _extract("reusable-workflow", f"{WORKFLOWS}/release.yml")
    assert result.problems == ()
    rows = [
        (d.line, d.dep_type, d.package_name, d.constraint, d.skip_reason) for d in _actions(result)
    ]
    assert rows == [
        (7, "reusable-workflow", "acme/ci-templates", "v2.3.0", None),
        (14, "reusable-workflow", "slsa-framework/slsa-github-generator", "v2.1.0", None),
        (17, "reusable-workflow", "./.github/workflows/docs.yml", None, github_actions.LOCAL_SKIP),
        (22, "action", "actions/download-artifact", "v8.0.1", None),
    ]
    slsa = _actions(result)[1]
    assert slsa.name == (
        "slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml"
    )
    assert slsa.digest == "f7dd8c54c2067bafc12ca7a55595d5ee9b75204a"


def test_composite_action_steps_give_actions_local_actions_and_images() -> None:
    """``runs.steps[*].uses`` of a composite action: an action, a local one and an image."""
    result = _extract("composite-action-uses", ".github/actions/setup/action.yml")
    assert result.problems == ()
    rows = [
        (d.line, d.datasource, d.package_name, d.constraint, d.skip_reason)
        for d in result.dependencies
    ]
    assert rows == [
        (9, "github-tags", "astral-sh/setup-uv", "v8.1.0", None),
        (12, "github-tags", "./.github/actions/cache", None, github_actions.LOCAL_SKIP),
        (13, "docker", "docker.io/rhysd/actionlint", "1.7.1", None),
    ]


def test_docker_steps_stay_image_rows() -> None:
    """``uses: docker://…`` (tag or digest, quoted or not) is an image row, never an action."""
    result = _extract("docker-steps", f"{WORKFLOWS}/lint.yml")
    assert result.problems == ()
    rows = [
        (d.line, d.datasource, d.package_name, d.constraint)
        for d in result.dependencies
        if d.dep_type != "runs-on"
    ]
    assert rows == [
        (6, "github-tags", "actions/checkout", "v7.0.1"),
        (7, "docker", "docker.io/rhysd/actionlint", "1.6.24"),
        (10, "docker", "ghcr.io/acme/tool", None),
    ]
    assert result.dependencies[0].dep_type == "runs-on"  # ubuntu-latest: a skipped runner row
    assert result.dependencies[3].digest == (
        "sha256:0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba"
    )


def test_matrix_expressions_are_skipped_with_the_reason() -> None:
    """``${{ … }}`` in the reference or its ref skips the row; the rest is still read."""
    result = _extract("matrix-expressions", f"{WORKFLOWS}/matrix.yml")
    assert result.problems == ()
    rows = [(d.line, d.name, d.constraint, d.skip_reason) for d in _actions(result)]
    assert rows == [
        (10, "${{ matrix.action }}", None, EXPRESSION_SKIP),
        (11, "actions/setup-node", None, EXPRESSION_SKIP),
        (12, "${{ github.repository_owner }}/tools@v1", None, EXPRESSION_SKIP),
        (13, "actions/setup-node", "v6", None),
    ]
    assert _actions(result)[1].declared == "actions/setup-node@${{ matrix.ref }}"


def test_local_and_self_repository_references_are_skipped() -> None:
    """``./…``, ``../…`` and ``$/…`` (steps and jobs) name this repository: skipped rows."""
    result = _extract("local-and-self", f"{WORKFLOWS}/ci.yml")
    assert result.problems == ()
    rows = [(d.line, d.dep_type, d.name, d.skip_reason) for d in _actions(result)]
    local, self_repo = github_actions.LOCAL_SKIP, github_actions.SELF_SKIP
    assert rows == [
        (4, "reusable-workflow", "$/.github/workflows/build-binaries.yml", self_repo),
        (6, "reusable-workflow", "./.github/workflows/fuzzing.yml", local),
        (10, "action", "actions/checkout", None),
        (11, "action", "./.github/actions/setup", local),
        (12, "action", "../shared/actions/lint", local),
        (13, "action", "$/.github/actions/fetch-token", self_repo),
    ]


def test_quoted_values_and_hashes_inside_quotes() -> None:
    """Quotes are not part of the reference; a ``#`` inside a quoted string is no comment."""
    result = _extract("quoted-values", f"{WORKFLOWS}/ci.yml")
    assert result.problems == ()
    assert _pins(result) == [
        (6, "actions/checkout", "v4", None),
        (7, "actions/setup-node", "v3.1.1", "56337c425554a6be30cdef71bf441f15be286854"),
        (8, "actions/setup-node", "v2.5.1", "1f8c6b94b26d0feae1e387ca63ccbdc44d27b561"),
        (9, "actions/cache", "v6.1.0", "55cc8345863c7cc4c66a329aec7e433d2d1c52a9"),
        (10, "actions/cache", None, "55cc8345863c7cc4c66a329aec7e433d2d1c52a9"),
        (12, "actions/checkout", "v7", CHECKOUT_V7),
        (14, "actions/checkout", "v7.0.1", CHECKOUT_V7),
    ]
    # A tag reference's comment is not read: the ref is the version.
    assert _actions(result)[0].declared == "actions/checkout@v4"


def test_short_shas_are_skipped_and_digit_refs_are_tags() -> None:
    """7-39 hex digits are an abbreviated commit (skipped); an all-digit ref is a tag."""
    result = _extract("short-sha", f"{WORKFLOWS}/ci.yml")
    rows = [(d.line, d.constraint, d.digest, d.skip_reason) for d in _actions(result)]
    assert rows == [
        (6, None, None, github_actions.SHORT_SHA_SKIP),
        (7, None, None, github_actions.SHORT_SHA_SKIP),
        (8, "20240101", None, None),
    ]


def test_invalid_references_are_problems_or_skipped_rows_at_their_lines() -> None:
    """Bad owner/repo names are problems; a missing or invalid ref and a URL are skipped rows."""
    result = _extract("invalid-references", f"{WORKFLOWS}/ci.yml")
    rows = [(d.line, d.name, d.skip_reason) for d in _actions(result)]
    assert rows == [
        (12, "acme/tool", github_actions.NO_REF_SKIP),
        (13, "acme/tool", github_actions.NO_REF_SKIP),
        (14, "acme/tool", "ref 'v1..2' is not a valid git tag or branch name"),
        (
            17,
            "https://code.forgejo.org/actions/setup-go@v5",
            github_actions.URL_SKIP,
        ),
        (18, "actions/checkout", None),
    ]
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        (
            f"{WORKFLOWS}/ci.yml",
            4,
            "a job's `uses` calls a reusable workflow; a docker:// image runs only as a step",
        ),
        (
            f"{WORKFLOWS}/ci.yml",
            8,
            "invalid action reference 'checkout@v4': expected owner/repo[/path]@ref",
        ),
        (
            f"{WORKFLOWS}/ci.yml",
            9,
            (
                "invalid action reference '-acme/tool@v1': owner '-acme' is not a GitHub user or"
                " organization name (letters, digits and single inner hyphens, at most 39"
                " characters)"
            ),
        ),
        (
            f"{WORKFLOWS}/ci.yml",
            10,
            (
                "invalid action reference 'acme/tool!@v1': repository 'tool!' is not a GitHub"
                " repository name (letters, digits, '.', '-' and '_', at most 100 characters)"
            ),
        ),
        (
            f"{WORKFLOWS}/ci.yml",
            11,
            "invalid action reference 'acme/tool//sub@v1': its path has an empty folder name",
        ),
        (f"{WORKFLOWS}/ci.yml", 15, "a step's `uses` must be a string"),
        (f"{WORKFLOWS}/ci.yml", 16, "a step's `uses` is empty"),
    ]


def test_steps_in_parallel_blocks_are_read() -> None:
    """Steps nested in ``parallel:`` blocks (at any depth) are steps too."""
    result = _extract("parallel-steps", f"{WORKFLOWS}/ci.yml")
    assert [(d.line, d.name) for d in _actions(result)] == [
        (6, "actions/checkout"),
        (8, "actions/setup-node"),
        (9, "actions/setup-go"),
        (11, "actions/setup-java"),
    ]


def test_workflow_templates_are_read() -> None:
    """A ``workflow-templates/`` file is a workflow with the same rows."""
    result = _extract("workflow-template", "workflow-templates/python.yml")
    assert [(d.line, d.name, d.constraint) for d in _actions(result)] == [
        (9, "actions/checkout", "v7"),
        (10, "actions/setup-python", "v7"),
    ]


def test_a_parallel_block_holding_itself_ends() -> None:
    """An alias making a ``parallel:`` list contain itself is read once, never looped over."""
    text = "jobs:\n  a:\n    steps: &s\n      - uses: a/b@v1\n      - parallel: *s\n"
    result = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)
    assert [(d.line, d.name) for d in result.dependencies] == [(4, "a/b")]


@pytest.mark.parametrize(
    ("comment", "tag"),
    [
        (" v4.2.2", "v4.2.2"),
        ("v4.2.2", "v4.2.2"),
        (" tag=v4.2.2", "v4.2.2"),
        (" pin @v4", "v4"),
        (" @v2.1.0", "v2.1.0"),
        (" renovate: tag=v1.0.0", "v1.0.0"),
        (" renovate: pin @v1.2.3", "v1.2.3"),
        (" ratchet:actions/checkout@v4.2.2", "v4.2.2"),
        (" 1.0.1", "1.0.1"),
        (" v1", "v1"),
        (" prefix-v1.0", "prefix-v1.0"),
        (" prefix/v1.0", "prefix/v1.0"),
        (" v1.0.0-rc.1", "v1.0.0-rc.1"),
        (" v4.2.2 (2024-10-23)", "v4.2.2"),
        (" v2 # zizmor: ignore[cache-poisoning]", "v2"),
        (" tag=release-candidate", "release-candidate"),
        (" ratchet:exclude", None),
        (" keep in sync with release.yml", None),
        (" main", None),
        (" v4.2.2.", None),
        (" tag=v1..2", None),
        ("", None),
    ],
)
def test_comment_tags(comment: str, tag: str | None) -> None:
    """The tag a SHA pin's comment names, in each form Renovate accepts; prose names none."""
    assert github_actions.comment_tag(comment) == tag


@pytest.mark.parametrize(
    ("line", "column", "comment"),
    [
        ("  - uses: a/b@c # v1", 15, " v1"),
        ("  - uses: a/b@c", 15, None),
        ('  - {uses: "a/b@c"} # v1', 19, " v1"),
        ('  - {uses: "a/b@c", name: "x # v9"}', 19, None),
        ("  - {uses: 'a/b@c', name: 'it''s # v9'}", 19, None),
        ('  - {uses: "a/b@c", name: "say \\" # v9"}', 19, None),
        ("  - {uses: a/b@c, name: it's} # v1", 17, " v1"),
        ('  - {uses: a/b@c, name: "x"} # v1', 17, " v1"),
        ("  - uses: a/b@c#v1", 18, None),
    ],
)
def test_trailing_comments_respect_quotes(line: str, column: int, comment: str | None) -> None:
    """The comment after a scalar ends at a ``#`` after whitespace, outside quoted strings."""
    assert github_actions.trailing_comment(line, column) == comment


def test_comments_are_read_from_the_parsed_text_with_either_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A BOM, CRLF line ends and non-ASCII text before the value do not shift the comment."""
    text = (
        "\ufeffjobs:\r\n  a:\r\n    steps:\r\n"
        f'      - {{name: "café # v9", uses: "actions/checkout@{CHECKOUT_V7}"}} # v7.0.1\r\n'
    )
    expected = [(4, "actions/checkout", "v7.0.1", CHECKOUT_V7)]
    assert _pins(github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)) == expected
    monkeypatch.setattr(base, "_yaml_loader", lambda: yaml.SafeLoader)
    assert _pins(github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)) == expected


# An independent oracle for the copies of real workflows: the lines that write an external
# ``uses:`` (not an image, a local or a self-repository one), and the SHA and comment tag of a
# pinned one, found by a line grep instead of the YAML reader.
_USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?!['\"]?(?:docker://|\.\.?/|\$/))\S")
_PIN = re.compile(r"@([0-9a-f]{40})['\"]?(?:\s+#\s*(v?\d[\w.-]*))?")
REAL_WORKFLOWS = [
    ("real-prometheus", f"{WORKFLOWS}/ci.yml"),
    ("real-prometheus-prombench", f"{WORKFLOWS}/prombench.yml"),
    ("real-mise", f"{WORKFLOWS}/release-alpine.yml"),
    ("real-mise", f"{WORKFLOWS}/copr-publish.yml"),
    ("real-mise", f"{WORKFLOWS}/test.yml"),
    ("real-asdf", f"{WORKFLOWS}/lint.yml"),
    ("real-pydantic", f"{WORKFLOWS}/third-party.yml"),
    ("real-django", f"{WORKFLOWS}/tests.yml"),
    ("real-ruff", f"{WORKFLOWS}/release.yml"),
    ("real-ruff", f"{WORKFLOWS}/ci.yaml"),
    ("real-ripgrep", f"{WORKFLOWS}/ci.yml"),
    ("real-pipenv", f"{WORKFLOWS}/pypi_upload.yml"),
    ("real-poetry", f"{WORKFLOWS}/tests.yaml"),
    ("real-excalidraw", f"{WORKFLOWS}/semantic-pr-title.yml"),
]


def _grep_uses(text: str) -> dict[int, tuple[str | None, str | None]]:
    """Line → (pinned SHA, comment tag) of each external ``uses:`` line, by grep."""
    found: dict[int, tuple[str | None, str | None]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if _USES_LINE.match(line):
            pin = _PIN.search(line)
            found[number] = (None, None) if pin is None else (pin.group(1), pin.group(2))
    return found


@pytest.mark.parametrize(("case", "rel"), REAL_WORKFLOWS)
def test_real_workflows_give_every_external_uses_a_row(case: str, rel: str) -> None:
    """Copies of the corpus' workflows: each external ``uses:`` line is one looked-up row."""
    text = (FIXTURES / case / rel).read_text(encoding="utf-8")
    result = _extract(case, rel)
    assert result.problems == ()
    rows = [d for d in _actions(result) if d.skip_reason is None]
    assert all(d.file == rel for d in rows)
    grepped = _grep_uses(text)
    assert {d.line: (d.digest, d.constraint if d.digest else None) for d in rows} == grepped
    assert len(rows) == len(grepped)


def test_the_real_workflow_copies_hold_every_kind_of_reference() -> None:
    """The copies cover SHA pins with and without comments, tags, branches and ``$/``."""
    rows = [d for case, rel in REAL_WORKFLOWS for d in _actions(_extract(case, rel))]
    assert len([d for d in rows if d.skip_reason is None]) == 283
    constraints = {d.constraint for d in rows if d.digest is None and d.skip_reason is None}
    assert {"master", "release/v1", "v7"} <= constraints
    assert any(d.digest and d.constraint is None for d in rows)
    assert {d.skip_reason for d in rows} == {
        None,
        github_actions.LOCAL_SKIP,
        github_actions.SELF_SKIP,
    }
    rust_cache = next(d for d in rows if d.package_name == "Swatinem/rust-cache" and d.digest)
    assert rust_cache.constraint == "v2"


CORPUS = Path("/work/shared/corpus")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_every_external_uses_of_the_corpus_is_a_row() -> None:
    """Every workflow of the shared corpus: each external ``uses:`` line is a row, no problem."""
    total = 0
    for path in sorted(CORPUS.glob("*/.github/workflows/*.y*ml")):
        rel = path.relative_to(path.parents[2]).as_posix()
        text = path.read_text(encoding="utf-8")
        result = github_actions.extract(rel, text, _no_read)
        assert result.problems == (), rel
        rows = [d for d in _actions(result) if d.skip_reason is None]
        grepped = _grep_uses(text)
        assert {d.line: (d.digest, d.constraint if d.digest else None) for d in rows} == grepped
        total += len(rows)
    assert total >= 700


def test_hostile_uses_values_cost_only_their_line() -> None:
    """A megabyte reference is a problem; an unclosed ``${{`` run is an expression (read once)."""
    huge = "a/b@v" + "1" * 1_000_000
    opened = "a/b@" + "${{" * 100
    text = f"jobs:\n  a:\n    steps:\n      - uses: {huge}\n      - uses: {opened}\n"
    result = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)
    [problem] = result.problems
    assert problem.line == 4
    assert problem.message.endswith("(1000005 characters): longer than 1024 characters")
    [row] = result.dependencies
    assert (row.line, row.skip_reason) == (5, EXPRESSION_SKIP)


def test_an_unclosed_expression_run_is_read_in_linear_time() -> None:
    """200,000 ``${{`` and no ``}}``: a skipped image, a too-long reference; nothing quadratic."""
    run = "${{" * 200_000
    text = f"jobs:\n  a:\n    steps:\n      - uses: docker://x:{run}\n      - uses: a/b@{run}\n"
    with fail_if_blocked(30):
        result = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)
    assert [(d.line, d.skip_reason) for d in result.dependencies] == [(4, EXPRESSION_SKIP)]
    assert [p.line for p in result.problems] == [5]


def test_names_keep_their_case_and_digests_are_lower_case() -> None:
    """``package_name`` is ``owner/repo`` as written; an upper-case SHA is stored lower-cased."""
    sha = "5FDA3B95A4EA91299A34E894583C3862153E4B97"
    text = f"jobs:\n  a:\n    steps:\n      - uses: PyO3/maturin-action/sub@{sha} # v1.49.4\n"
    [row] = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read).dependencies
    assert (row.name, row.package_name, row.constraint, row.digest) == (
        "PyO3/maturin-action/sub",
        "PyO3/maturin-action",
        "v1.49.4",
        sha.lower(),
    )


def test_discovery_gives_every_workflow_copy_to_the_manager(tmp_path: Path) -> None:
    """Copies laid out as one checkout: discovery finds each, and every external use is a row."""
    root = tmp_path / "repo"
    copies = [
        ("real-ruff", f"{WORKFLOWS}/release.yml"),
        ("real-ripgrep", f"{WORKFLOWS}/ci.yml"),
        ("docker-steps", f"{WORKFLOWS}/lint.yml"),
        ("composite-action-uses", ".github/actions/setup/action.yml"),
        ("workflow-template", "workflow-templates/python.yml"),
    ]
    for case, rel in copies:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / case / rel, target)
    found = discover(root, (), ("github_actions",))
    assert sorted(f.path for f in found.files) == sorted(rel for _, rel in copies)
    rows = [
        d
        for f in found.files
        for d in _actions(github_actions.extract(f.path, (root / f.path).read_text(), _no_read))
    ]
    expected = sum(len(_grep_uses((root / rel).read_text())) for _, rel in copies)
    assert len([d for d in rows if d.skip_reason is None]) == expected
    assert {d.file for d in rows} == {rel for _, rel in copies}


@pytest.mark.parametrize(
    ("steps", "kind"),
    [('"not a list"', "a string"), ("{a: 1}", "a mapping"), ("7", "a string")],
)
def test_steps_that_are_no_list_are_a_problem(steps: str, kind: str) -> None:
    """``steps:`` of a job or of ``runs`` that is no list: a problem naming file and line."""
    workflow = f"on: push\njobs:\n  a:\n    runs-on: x\n    steps: {steps}\n"
    result = github_actions.extract(f"{WORKFLOWS}/x.yml", workflow, _no_read)
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        (f"{WORKFLOWS}/x.yml", 5, f"a job's `steps` must be a list of steps, not {kind}")
    ]
    action = f"name: x\nruns:\n  using: composite\n  steps: {steps}\n"
    result = github_actions.extract("action.yml", action, _no_read)
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        ("action.yml", 4, f"`runs.steps` must be a list of steps, not {kind}")
    ]


def test_empty_steps_are_no_problem() -> None:
    """``steps:`` with nothing (null) or ``[]`` gives nothing and no problem."""
    for steps in ("", "[]", "~"):
        text = f"jobs:\n  a:\n    steps: {steps}\n"
        result = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)
        assert (result.dependencies, result.problems) == ((), ())


def test_what_an_alias_brings_is_at_the_line_of_its_use() -> None:
    """A row or problem reached through an alias is reported where the alias is used."""
    text = (
        "x-images:\n"
        "  bad: &bad 'UPPER:1'\n"  # 2
        "  svc: &svc {image: 'Bad Image'}\n"  # 3
        "  step: &step {uses: actions/checkout@v4}\n"  # 4
        "jobs:\n"
        "  a:\n"
        "    container: *bad\n"  # 7
        "    services:\n"
        "      db: *svc\n"  # 9
        "    steps:\n"
        "      - *step\n"  # 11
        "      - <<: *step\n"  # 12
        "        name: again\n"
    )
    result = github_actions.extract(f"{WORKFLOWS}/x.yml", text, _no_read)
    assert [(d.line, d.name) for d in result.dependencies] == [
        (11, "actions/checkout"),
        (12, "actions/checkout"),
    ]
    assert [p.line for p in result.problems] == [7, 9]


SETUP = """\
on: push
jobs:
  a:
    runs-on: x
    steps:
      - uses: actions/setup-node@v4
        with:
          node-version: '20.11.0'
      - uses: actions/setup-node@v4
        with:
          node-version-file: .nvmrc
      - uses: actions/setup-python@v5
        with:
          python-version: |
            3.9
            3.12
      - uses: actions/setup-python@v5
        with:
          python-version: ">=3.8 <3.10"
      - uses: actions/setup-python@v5
        with:
          python-version: pypy3.10
      - uses: actions/setup-go@v5
        with:
          go-version: 1.20
      - uses: actions/setup-go@v5
        with:
          go-version: oldstable
      - uses: Actions/Setup-Node@main
        with:
          node-version: x
      - uses: actions/setup-java@v4
        with:
          java-version: '21'
      - uses: actions/setup-node@v4
"""


def test_setup_version_inputs_are_tool_rows_and_unread_forms_say_why() -> None:
    """``with.<tool>-version`` of actions/setup-node|python|go: one tool row each (Renovate's)."""
    result = github_actions.extract(f"{WORKFLOWS}/ci.yml", SETUP, _no_read)
    assert result.problems == ()
    rows = [d for d in result.dependencies if d.dep_type.startswith("setup-")]
    shown = [(d.line, d.dep_type, d.name, d.datasource, d.constraint) for d in rows]
    assert shown == [
        (8, "setup-node", "node", "node", "20.11.0"),
        (11, "setup-node", "node", "node", None),
        (15, "setup-python", "python", "python", "3.9"),
        (16, "setup-python", "python", "python", "3.12"),
        (19, "setup-python", "python", "python", None),
        (22, "setup-python", "python", "python", None),
        (25, "setup-go", "go", "go", None),
        (28, "setup-go", "go", "go", None),
        (31, "setup-node", "node", "node", None),
    ]
    assert all(d.versioning == "mise" for d in rows)
    reasons = [d.skip_reason for d in rows]
    assert reasons[0] is None
    assert reasons[1] is not None
    assert "'.nvmrc'" in reasons[1]
    assert rows[1].declared == "node-version-file: .nvmrc"
    assert reasons[2:4] == [None, None]
    assert reasons[4] is not None
    assert "semver range" in reasons[4]
    assert reasons[5] is not None
    assert "not a python release" in reasons[5]
    assert reasons[6] == (
        "unquoted 1.20 is the YAML number 1.2: the runner gives setup-go '1.2'; quote it ('1.20')"
    )
    assert reasons[7] is not None
    assert "oldstable" in reasons[7]
    # ``x`` is any release: the newest, as ``latest`` (GitHub names are case-insensitive).
    assert (reasons[8], rows[8].declared) == (None, "x")


RUNNERS = """\
on: push
jobs:
  a: {runs-on: ubuntu-22.04, steps: [{run: x}]}
  b: {runs-on: MacOS-15-XLarge, steps: [{run: x}]}
  c: {runs-on: [windows-2025], steps: [{run: x}]}
  d: {runs-on: ubuntu-latest, steps: [{run: x}]}
  e: {runs-on: [self-hosted, linux], steps: [{run: x}]}
  f: {runs-on: "${{ matrix.os }}", steps: [{run: x}]}
  g: {runs-on: self-hosted, steps: [{run: x}]}
  h: {runs-on: {group: big, labels: [ubuntu-22.04]}, steps: [{run: x}]}
  i: {runs-on: ubuntu-24.04-16core, steps: [{run: x}]}
  j: {uses: acme/wf/.github/workflows/x.yml@v1}
"""


def test_runs_on_labels_of_hosted_images_are_rows_and_others_say_why() -> None:
    """``runs-on: <os>-<image>`` is a ``github-runners`` row; other labels are skipped with why."""
    result = github_actions.extract(f"{WORKFLOWS}/ci.yml", RUNNERS, _no_read)
    assert result.problems == ()
    rows = [d for d in result.dependencies if d.dep_type == "runs-on"]
    assert all((d.datasource, d.versioning) == ("github-runners", "docker") for d in rows)
    assert [(d.line, d.name, d.package_name, d.constraint) for d in rows[:3]] == [
        (3, "ubuntu", "ubuntu", "22.04"),
        (4, "macos", "macos", "15-xlarge"),
        (5, "windows", "windows", "2025"),
    ]
    assert [d.skip_reason for d in rows[:3]] == [None, None, None]
    assert rows[1].declared == "MacOS-15-XLarge"
    skipped = {d.declared: d.skip_reason for d in rows[3:]}
    assert list(skipped) == [
        "ubuntu-latest",
        "[self-hosted, linux]",
        "${{ matrix.os }}",
        "self-hosted",
        "(a runner group)",
        "ubuntu-24.04-16core",
    ]
    assert skipped["ubuntu-latest"] == github_actions.RUNNER_LATEST_SKIP
    assert skipped["[self-hosted, linux]"] == github_actions.RUNNER_SET_SKIP
    assert skipped["${{ matrix.os }}"] == EXPRESSION_SKIP
    assert skipped["self-hosted"] == github_actions.SELF_HOSTED_SKIP
    assert skipped["(a runner group)"] == github_actions.RUNNER_GROUP_SKIP
    assert "runner table knows" in (skipped["ubuntu-24.04-16core"] or "")
