from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import docker_compose
from patchula.manager.docker_compose import BUILT_HERE, interpolate
from patchula.models import ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "docker_compose"
OUTSIDE = "outside the repository; not read"
UNKNOWN = "variables the scan does not know; not read"
LOWER = "repository name 'library/Python' must be lowercase"
NOT_READ = "compose reads it from the environment or a .env file, which the scan does not read"


def _extract(case: str, rel: str) -> ExtractResult:
    folder = FIXTURES / case

    def read(path: str) -> str:
        target = folder / path
        if not target.is_file():
            raise ManifestError("file not found", file=path)
        return target.read_text(encoding="utf-8")

    return docker_compose.extract(rel, read(rel), read)


def _text(text: str) -> ExtractResult:
    def no_read(path: str) -> str:
        raise ManifestError("no includes expected", file=path)

    return docker_compose.extract("compose.yaml", text, no_read)


def _short(result: ExtractResult) -> list[tuple[str, int | None, str, str | None]]:
    return [(d.file, d.line, d.package_name, d.constraint) for d in result.dependencies]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docker-compose.yml", True),
        ("docker-compose.yaml", True),
        ("docker-compose.override.yml", True),
        ("dockerfiles/docker-compose-assets.yml", True),
        ("compose.yaml", True),
        ("deploy/compose.prod.yml", True),
        ("compose.json", False),
        ("my-compose.yml", False),
        ("docker-compose.yml.bak", False),
        ("common/services.yml", False),
    ],
)
def test_matches_compose_files_as_renovate_does(path: str, expected: bool) -> None:  # noqa: FBT001
    """``docker-compose*.yml|yaml`` and ``compose*.yml|yaml`` in any folder."""
    assert docker_compose.matches(path) is expected


def test_plugin_ids() -> None:
    """The module declares its id, the docker datasource and the docker versioning."""
    assert (docker_compose.ID, docker_compose.DATASOURCE, docker_compose.VERSIONING) == (
        "docker_compose",
        "docker",
        "docker",
    )


def test_variable_defaults_are_substituted_and_unknown_variables_skipped() -> None:
    """``${V:-x}``, ``${V-x}`` and nested defaults give the image; ``${V}`` and ``:?`` skip it."""
    result = _extract("var-defaults", "compose.yaml")
    assert result.problems == ()
    rows = [(d.line, d.declared, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (3, "postgres:16-alpine", "16-alpine", None),
        (5, "redis:7.4", "7.4", None),
        (7, "ghcr.io/acme/proxy:1.2.3", "1.2.3", None),
        (9, "acme/app:${APP_TAG}", None, f"${{APP_TAG}} is not set here: {NOT_READ}"),
        (11, "acme/worker:$WORKER_TAG", None, f"${{WORKER_TAG}} is not set here: {NOT_READ}"),
        (13, "acme/required:${REQUIRED_TAG:?set REQUIRED_TAG}", None,
         f"${{REQUIRED_TAG}} is required and not known here: {NOT_READ}"),
        (15, "nginx:1.27", "1.27", None),
        (17, "busybox:1.36", "1.36", None),
    ]  # fmt: skip
    skipped = result.dependencies[3]
    assert (skipped.name, skipped.package_name) == ("acme/app", "docker.io/acme/app")


def test_every_row_has_the_container_image_shape() -> None:
    """Each row names the manager, the docker datasource and versioning, dep_type ``image``."""
    rows = _extract("registries-and-digests", "compose.yml").dependencies
    assert {(d.manager, d.datasource, d.versioning, d.dep_type) for d in rows} == {
        ("docker_compose", "docker", "docker", "image")
    }


def test_registries_single_names_and_digests() -> None:
    """localhost:5000, a host with a port, a single name, a digest with and without a tag."""
    rows = _extract("registries-and-digests", "compose.yml").dependencies
    assert [(d.name, d.package_name, d.constraint, d.digest) for d in rows] == [
        ("localhost:5000/x", "localhost:5000/x", "latest", None),
        ("registry.example.com:5000/a/b", "registry.example.com:5000/a/b", "1.0", None),
        ("redis", "docker.io/library/redis", "latest", None),
        ("nginx", "docker.io/library/nginx", "1.27",
         "sha256:2c605dbeab79a6b2a63340474fe58119d0ef95bdc4b1f41df0aa689659b3d13b"),
        ("ghcr.io/acme/tool", "ghcr.io/acme/tool", None,
         "sha256:0c1f63ed8fb818fad16cf6ae091598c410a21d2e1a9adf183beb93189299bfba"),
    ]  # fmt: skip


def test_a_service_with_only_build_gives_nothing() -> None:
    """``build:`` alone builds an image from the checkout: no row."""
    assert _short(_extract("build-only", "docker-compose.yml")) == [
        ("docker-compose.yml", 9, "docker.io/library/postgres", "17")
    ]


def test_image_with_build_is_a_skipped_row() -> None:
    """``build:`` with ``image:`` names the image compose builds: a skipped row, not a lookup."""
    [built, pulled] = _extract("build-and-image", "docker-compose.yml").dependencies
    assert (built.line, built.package_name, built.declared, built.skip_reason) == (
        4,
        "ghcr.io/acme/web",
        "ghcr.io/acme/web:dev",
        BUILT_HERE,
    )
    assert (pulled.package_name, pulled.skip_reason) == ("docker.io/library/mysql", None)


def test_include_and_extends_files_are_read_as_compose_files() -> None:
    """Top-level ``include`` (string or ``path:`` list) and ``extends.file`` are followed."""
    result = _extract("include-and-extends", "compose.yaml")
    assert result.problems == ()
    assert result.included_files == ("base/web.yml", "common/services.yml", "extra/db.yml")
    assert _short(result) == [
        ("base/web.yml", 3, "docker.io/library/nginx", "1.27-alpine"),
        ("compose.yaml", 14, "docker.io/envoyproxy/envoy", "v1.31.0"),
        ("common/services.yml", 3, "docker.io/library/rabbitmq", "3.13-management"),
        ("extra/db.yml", 3, "docker.io/library/postgres", "17-trixie"),
    ]


def test_include_cycles_missing_and_outside_files_are_problems() -> None:
    """A cycle, a missing file, a path out of the checkout and a variable path each say so."""
    result = _extract("include-cycle", "compose.yaml")
    assert _short(result) == [
        ("compose.yaml", 5, "docker.io/library/alpine", "3.20"),
        ("a.yml", 8, "docker.io/library/alpine", "3.19"),
    ]
    assert [(p.file, p.line, p.severity, p.message) for p in result.problems] == [
        ("a.yml", 2, "error", "include cycle: compose.yaml -> a.yml -> compose.yaml"),
        ("a.yml", 3, "error", "cannot read included file 'missing.yml': file not found"),
        ("a.yml", 4, "warning", f"included file '../../outside.yml' is {OUTSIDE}"),
        ("a.yml", 5, "warning", f"included file '${{DIR}}/x.yml' uses {UNKNOWN}"),
    ]


def test_an_included_compose_named_file_is_left_to_discovery() -> None:
    """An include whose name is a compose name is found on its own: it is not read twice."""
    result = _text("include:\n  - other/compose.yml\nservices:\n  a:\n    image: alpine:3\n")
    assert result.included_files == ()
    assert result.problems == ()
    assert len(result.dependencies) == 1


def test_anchors_merges_and_duplicate_keys() -> None:
    """``<<: *base`` gives its image (at the line of the ``<<``); a repeated key keeps the last."""
    assert _short(_extract("anchors-and-duplicates", "docker-compose.yml")) == [
        ("docker-compose.yml", 7, "docker.io/library/python", "3.12-slim"),
        ("docker-compose.yml", 11, "docker.io/library/python", "3.13-slim"),
        ("docker-compose.yml", 14, "docker.io/library/alpine", "3.20"),
    ]


def test_multi_document_files_read_every_document() -> None:
    """Services of each ``---`` document are read."""
    assert [d.line for d in _extract("multi-document", "compose.yml").dependencies] == [3, 7]


def test_invalid_images_are_problems_and_the_rest_is_read() -> None:
    """An upper-case name, a list, a lone ``$`` cost their line; null services and images pass."""
    result = _extract("invalid", "compose.yml")
    assert _short(result) == [("compose.yml", 9, "docker.io/library/python", "3.12")]
    assert [(p.line, p.message) for p in result.problems] == [
        (3, f"invalid image reference 'Python:3.12': {LOWER}"),
        (5, "services.list.image must be a string"),
        (7, "invalid interpolation format in 'python:3$': a lone '$' (write $$)"),
    ]


@pytest.mark.parametrize("value", ["12", "1.5", "true", "0x1F", "-3e2", ".inf"])
def test_an_image_yaml_reads_as_a_number_or_boolean_is_a_problem(value: str) -> None:
    """``image: 12`` is the integer 12 to compose, which refuses it; quoted, it is an image."""
    result = _text(f"services:\n  a:\n    image: {value}\n  b:\n    image: '12'\n")
    assert [(p.line, p.message) for p in result.problems] == [
        (3, "services.a.image must be a string")
    ]
    assert [(d.line, d.package_name) for d in result.dependencies] == [(5, "docker.io/library/12")]


@pytest.mark.parametrize(
    "text",
    ["", "# nothing\n", "services:\n", "- a\n- b\n", "services: 3\n", "services:\n  a: 1\n"],
)
def test_odd_shapes_never_raise(text: str) -> None:
    """Empty files, lists, scalars where mappings belong: at most problems, never a crash."""
    result = _text(text)
    assert result.dependencies == ()
    assert all(p.file == "compose.yaml" for p in result.problems)


@pytest.mark.parametrize(
    ("text", "value", "missing"),
    [
        ("a:$$b", "a:$b", []),
        ("${A:-x}${B-y}", "xy", []),
        ("${A:+x}z", "z", []),
        ("${A:-${B:-${C:-deep}}}", "deep", []),
        ("${A}", "", [("A", False)]),
        ("$A_1.x", ".x", [("A_1", False)]),
        ("${A?no}", "", [("A", True)]),
    ],
)
def test_interpolation_as_compose_with_no_variable_set(
    text: str, value: str, missing: list[tuple[str, bool]]
) -> None:
    """compose-go's forms, with every variable unset."""
    result = interpolate(text)
    assert (result.value, result.missing, result.error) == (value, missing, None)


_IMAGE_LINE = re.compile(r"^\s*image:\s*\S")


@pytest.mark.parametrize(
    ("case", "rel"),
    [
        ("real-excalidraw", "docker-compose.yml"),
        ("real-django", "docker-compose.yml"),
        ("real-readthedocs", "docker-compose.override.yml"),
        ("real-readthedocs-assets", "dockerfiles/docker-compose-assets.yml"),
    ],
)
def test_real_compose_files_give_every_image_line(case: str, rel: str) -> None:
    """Copies of the corpus' compose files: one row at each ``image:`` line, no problem."""
    result = _extract(case, rel)
    text = (FIXTURES / case / rel).read_text(encoding="utf-8").splitlines()
    expected = [n for n, line in enumerate(text, 1) if _IMAGE_LINE.match(line)]
    assert result.problems == ()
    assert [d.line for d in result.dependencies] == expected
    assert all(d.skip_reason is None for d in result.dependencies)


def test_the_corpus_compose_images() -> None:
    """The images themselves: django's postgres and readthedocs' node (excalidraw only builds)."""
    assert _short(_extract("real-django", "docker-compose.yml")) == [
        ("docker-compose.yml", 35, "docker.io/library/postgres", "17-trixie")
    ]
    assert _extract("real-excalidraw", "docker-compose.yml").dependencies == ()
    rel = "dockerfiles/docker-compose-assets.yml"
    assert _short(_extract("real-readthedocs-assets", rel)) == [
        (rel, 3, "docker.io/library/node", "8.16")
    ]


@pytest.mark.parametrize(
    "image",
    ["${A:-" * 50_000 + "x" + "}" * 50_000, "$$" * 500_000, "a" * 2_000_000, "${A}" * 200_000],
)
def test_hostile_images_end_in_problems_or_rows(image: str) -> None:
    """Deep defaults, huge values and many variables end in one row or problem each."""
    result = _text(f"services:\n  a:\n    image: '{image}'\n")
    assert len(result.problems) + len(result.dependencies) == 1


def test_empty_and_reset_images() -> None:
    """An image empty after interpolation is a problem unless built; ``!reset`` removes it."""
    text = (
        "services:\n  a:\n    image: ${IMAGE:-}\n"
        "  b:\n    build: .\n    image: ${IMAGE:-}\n"
        "  c:\n    image: !reset null\n"
        "  d:\n    image: !override alpine:3.20\n"
    )
    result = _text(text)
    assert [(p.line, p.message) for p in result.problems] == [
        (3, "services.a.image is empty after interpolation")
    ]
    assert _short(result) == [("compose.yaml", 10, "docker.io/library/alpine", "3.20")]


def test_services_and_services_of_the_wrong_shape_are_problems() -> None:
    """A ``services`` list or a string service is refused, as compose does; null is nothing."""
    as_list = docker_compose.extract("compose.yml", "services:\n  - web\n", _no_reads)
    assert [(p.line, p.message) for p in as_list.problems] == [
        (2, "`services` must be a mapping of service names to services")
    ]
    text = "services:\n  web: nginx:1.27\n  db:\n"
    as_string = docker_compose.extract("compose.yml", text, _no_reads)
    assert [(p.line, p.message) for p in as_string.problems] == [
        (2, "services.web must be a mapping")
    ]
    assert as_string.dependencies == ()
    empty = docker_compose.extract("compose.yml", "services:\n", _no_reads)
    assert (empty.problems, empty.dependencies) == ((), ())


def _no_reads(path: str) -> str:
    raise AssertionError(path)


def test_compose_file_format_1_top_level_services_are_read() -> None:
    """Format 1 (no ``services``, no ``version``): each top-level key is a service.

    A document without ``services`` whose top-level values are not all services gives nothing.
    """
    result = _text(
        "redis:\n"
        "  image: quay.io/something/redis:alpine\n"
        "worker:\n"
        '  image: "node:10.0.0"\n'
        "x-common:\n"
        "  labels: [a]\n"
        "app:\n"
        "  build: .\n"
    )
    assert result.problems == ()
    assert [(d.line, d.package_name, d.constraint) for d in result.dependencies] == [
        (2, "quay.io/something/redis", "alpine"),
        (4, "docker.io/library/node", "10.0.0"),
    ]
    assert _text("name: demo\nnetworks:\n  front:\n    driver: bridge\n").dependencies == ()
    assert _text('version: "2"\nweb:\n  image: nginx:1\n').dependencies == ()
