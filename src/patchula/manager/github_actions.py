"""The GitHub Actions manager: container images of workflows and actions (job, service, step).

Renovate's manager of the same name also reads ``uses: owner/repo@ref`` action references;
those plug into ``_Reader.uses`` (every ``uses:`` of a step) when that datasource arrives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from patchula.manager.base import (
    IMAGE_DATASOURCE,
    IMAGE_VERSIONING,
    ReadFile,
    YamlNode,
    image_row,
    load_yaml,
    skipped_image_row,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "github_actions"
DATASOURCE = IMAGE_DATASOURCE
VERSIONING = IMAGE_VERSIONING

# Renovate's managerFilePatterns for github-actions: workflows (also Gitea's and Forgejo's
# folders and workflow templates) and ``action.yml`` / ``action.yaml`` anywhere.
_NAME = re.compile(
    r"(?:^|/)(?:workflow-templates|\.(?:github|gitea|forgejo)/(?:workflows|actions))/.+\.ya?ml$"
    r"|(?:^|/)action\.ya?ml$"
)
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
_DOCKER = "docker://"
EXPRESSION_SKIP = "uses a GitHub Actions expression (${{ … }}): its value is known only in a run"


def matches(path: str) -> bool:
    """Return whether ``path`` is a workflow or an action metadata file (Renovate's patterns)."""
    return _NAME.search(path) is not None


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the container images of a workflow or an ``action.yml``.

    From a workflow (docs.github.com, "Workflow syntax for GitHub Actions"):
    ``jobs.<id>.container`` (an image string, or a mapping with ``image``) is ``container``,
    ``jobs.<id>.services.<name>.image`` is ``service``, and a step's ``uses: docker://image``
    is ``step``. From an action's metadata ("Metadata syntax"): ``runs.image: docker://…`` of
    a Docker action and ``uses: docker://…`` of a composite action's steps are ``step``; a
    ``runs.image`` naming a Dockerfile is built, not pulled. An empty image (a matrix turning
    the container off) gives nothing; an image holding a ``${{ … }}`` expression is a skipped
    row; an invalid reference is a problem at its line.
    """
    documents, problem = load_yaml(path, text)
    reader = _Reader(path)
    if problem is not None:
        reader.problems.append(problem)
    for document in documents:
        if document.kind != "mapping":
            continue
        runs = document.get("runs")
        if runs is not None and runs.kind == "mapping":
            reader.action(runs)
        jobs = document.get("jobs")
        if jobs is not None and jobs.kind == "mapping":
            for job in jobs.pairs.values():
                if job.kind == "mapping":
                    reader.job(job)
    return ExtractResult(dependencies=tuple(reader.rows), problems=tuple(reader.problems))


def _steps(node: YamlNode | None) -> Iterator[YamlNode]:
    if node is not None and node.kind == "sequence":
        yield from (step for step in node.items if step.kind == "mapping")


@dataclass
class _Reader:
    path: str
    rows: list[Dependency] = field(default_factory=list)
    problems: list[ManifestProblem] = field(default_factory=list)

    def job(self, job: YamlNode) -> None:
        container = job.get("container")
        if container is not None:
            image = container.get("image") if container.kind == "mapping" else container
            self.image(image, "container")
        services = job.get("services")
        if services is not None and services.kind == "mapping":
            for service in services.pairs.values():
                if service.kind == "mapping":
                    self.image(service.get("image"), "service")
        for step in _steps(job.get("steps")):
            self.uses(step.get("uses"))

    def action(self, runs: YamlNode) -> None:
        image = runs.get("image")
        text = None if image is None else image.text()
        if image is not None and text is not None and text.startswith(_DOCKER):
            self.image(image, "step")
        for step in _steps(runs.get("steps")):
            self.uses(step.get("uses"))

    def uses(self, node: YamlNode | None) -> None:
        """A step's ``uses:``: ``docker://image`` is an image (actions: the next datasource)."""
        text = None if node is None else node.text()
        if node is not None and text is not None and text.startswith(_DOCKER):
            self.image(node, "step")

    def image(self, node: YamlNode | None, dep_type: str) -> None:
        if node is None or node.kind != "scalar" or not (node.value or "").strip():
            if node is not None and node.kind != "scalar":
                message = f"a {dep_type} image must be a string"
                self.problems.append(ManifestProblem(self.path, node.line, message))
            return
        written = (node.value or "").strip()
        reference = written.removeprefix(_DOCKER)
        if _EXPRESSION.search(reference) is not None:
            row = skipped_image_row(
                reference,
                manager=ID,
                file=self.path,
                line=node.line,
                dep_type=dep_type,
                reason=EXPRESSION_SKIP,
            )
            self.rows.append(row)
            return
        found = image_row(reference, manager=ID, file=self.path, line=node.line, dep_type=dep_type)
        if isinstance(found, ManifestProblem):
            self.problems.append(found)
        else:
            self.rows.append(found)
