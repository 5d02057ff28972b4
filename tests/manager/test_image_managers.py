"""The three container-image managers together on a checkout laid out like the corpus'."""

from __future__ import annotations

import shutil
from pathlib import Path

from patchula.discovery import discover
from patchula.errors import ManifestError
from patchula.manager import MANAGERS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests"
IMAGE_MANAGERS = ("dockerfile", "docker_compose", "github_actions")
# (fixture case, repository-relative path) of the corpus copies, as one checkout would hold them.
COPIES = [
    ("dockerfile/real-excalidraw", "Dockerfile"),
    ("dockerfile/real-prometheus", "Dockerfile.distroless"),
    ("dockerfile/real-mise", "packaging/mise/Dockerfile"),
    ("dockerfile/real-pipenv", "docker/Dockerfile"),
    ("docker_compose/real-django", "docker-compose.yml"),
    ("docker_compose/real-readthedocs-assets", "dockerfiles/docker-compose-assets.yml"),
    ("github_actions/real-prometheus", ".github/workflows/ci.yml"),
    ("github_actions/real-asdf", ".github/workflows/lint.yml"),
    ("github_actions/real-mise", ".github/workflows/release-alpine.yml"),
    ("github_actions/composite-action", ".github/actions/lint/action.yml"),
]


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for case, rel in COPIES:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / case / rel, target)
    (root / "dockerfiles" / "Dockerfile.dockerignore").write_text("node_modules\n")
    (root / "README.md").write_text("FROM python:3\n")
    return root


def test_discovery_gives_each_image_file_to_its_manager(tmp_path: Path) -> None:
    """Every copy is found by exactly its manager; ignore files and other files are not."""
    found = discover(_checkout(tmp_path), (), IMAGE_MANAGERS)
    assert sorted((f.path, f.manager) for f in found.files) == sorted(
        (rel, case.split("/")[0]) for case, rel in COPIES
    )


def test_every_image_of_the_copies_is_extracted_with_its_file_and_line(tmp_path: Path) -> None:
    """Each file's rows name that file and the line where the image is written."""
    root = _checkout(tmp_path)

    def read(path: str) -> str:
        raise ManifestError("no includes here", file=path)

    rows = []
    for item in discover(root, (), IMAGE_MANAGERS).files:
        text = (root / item.path).read_text(encoding="utf-8")
        result = MANAGERS[item.manager].extract(item.path, text, read)
        assert result.problems == ()
        # The workflows' action references (datasource github-tags) are not images.
        for dep in (d for d in result.dependencies if d.datasource == "docker"):
            assert dep.file == item.path
            assert dep.line is not None
            written = text.splitlines()[dep.line - 1]
            # The image as written is on its line (variables kept where a value is not known).
            assert dep.name in written or dep.name.removeprefix("docker.io/") in written
            rows.append((dep.file, dep.line, dep.package_name))
    assert len(rows) == 21
    assert ("Dockerfile", 16, "docker.io/library/nginx") in rows
    assert ("docker/Dockerfile", 2, "docker.io/library/python") in rows
    assert (".github/workflows/lint.yml", 52, "docker.io/rhysd/actionlint") in rows
    assert ("dockerfiles/docker-compose-assets.yml", 3, "docker.io/library/node") in rows
