"""The GitHub Actions manager: ``uses:`` action references and container images of workflows.

Workflows, workflow templates and action metadata files (``action.yml``) give two kinds of
rows: a ``uses: owner/repo[/path]@ref`` reference (datasource ``github-tags``, Renovate's
choice) and a container image (datasource ``docker``) of a job, a service or a
``uses: docker://…`` step. An ``actions/setup-node|python|go`` step's version input
(``with.node-version`` …) is a third: a tool row (``tools.tool_row``, versioning ``mise``,
dep type ``setup-<tool>``), as Renovate's github-actions manager reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec
from msgspec.structs import replace

from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    YamlNode,
    image_row,
    load_yaml,
    shown,
    skipped_image_row,
    strip_bom,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.names import scrub_surrogates
from patchula.runners import known
from patchula.tools import tool_row

ID = "github_actions"
ACTION_DATASOURCE = paths.ACTION_DATASOURCE
# Docker tag rules keep a floating ref's precision (``v4`` → ``v5``), with a leading ``v`` and
# suffixes, as Renovate's github-actions manager has it.
ACTION_VERSIONING = "docker"
# The module's main datasource is the actions' (Renovate's github-actions manager); each row
# names its own, so image rows (``container:``, ``services``, ``docker://``) keep ``docker``.
DATASOURCE = ACTION_DATASOURCE
matches = paths.github_actions  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = ACTION_VERSIONING
ACTION = "action"
REUSABLE_WORKFLOW = "reusable-workflow"

_DOCKER = "docker://"
EXPRESSION_SKIP = "uses a GitHub Actions expression (${{ … }}): its value is known only in a run"
LOCAL_SKIP = "a local action or workflow of this repository (./…): it has no version of its own"
SELF_SKIP = "the self-repository syntax ($/…) runs this repository's own commit: it has no version"
URL_SKIP = "an action given by URL (Gitea and Forgejo runners read these): its host is not read"
SHORT_SHA_SKIP = (
    "a short commit SHA is neither immutable nor comparable: pin the full 40-character SHA"
)
NO_REF_SKIP = "no @ref: GitHub needs a tag, a branch or a commit SHA after '@'"

# ``actions/setup-<tool>`` → the ``with:`` input naming its version, for the tools patchula has
# a release source for (Renovate's github-actions manager reads the same three,
# ``extractVersionedAction``: go, node, python; java and dotnet need other datasources).
SETUP_ACTIONS = {
    "actions/setup-node": ("node", "node-version"),
    "actions/setup-python": ("python", "python-version"),
    "actions/setup-go": ("go", "go-version"),
}
MATRIX_SKIP = (
    "a matrix value (${{ matrix.… }}): each job of the matrix runs its own version, and"
    " Renovate does not read matrix lists either; write the versions in the step to have them"
    " checked"
)
RANGE_SKIP = (
    "a semver range ({value!r}): setup-{tool} resolves it at run time; patchula's tool"
    " versioning reads exact versions and prefixes (20, 20.11, 20.x) only"
)
_RANGE = re.compile(r"[<>=^~|*]|\s")
# What setup-* reads as a release or a release line: numbers, a ``.x`` wildcard tail.
_SETUP_VERSION = re.compile(r"v?[0-9]+(?:\.[0-9]+)*")
_X_TAIL = re.compile(r"(?:\.[xX*])+$")
# An unquoted ``3.10`` is the YAML number 3.1: the runner hands the action ``3.1``.
_LOST_ZERO = re.compile(r"[0-9]+\.[0-9]*0")
# Words setup-* reads as "the newest release" (setup-node ``latest``/``current``/``node``,
# setup-go ``stable``), and the LTS aliases setup-node reads.
_NEWEST = frozenset({"latest", "current", "node", "stable"})

RUNNER_DATASOURCE = "github-runners"
RUNNER_VERSIONING = "docker"  # Renovate's github-runners default: -arm/-xlarge stay themselves
RUNS_ON = "runs-on"
# ``<os>-<image>`` (``ubuntu-22.04``, ``macos-15-xlarge``, ``windows-2025``): a hosted image label.
_RUNNER = re.compile(r"(?P<os>ubuntu|macos|windows)-(?P<image>\S+)", re.IGNORECASE)
RUNNER_LATEST_SKIP = (
    "a -latest label moves to GitHub's newest image of that OS by itself: no version to compare"
)
RUNNER_SET_SKIP = (
    "a list of labels picks a runner that has all of them (a self-hosted or larger runner):"
    " not one GitHub-hosted image"
)
RUNNER_GROUP_SKIP = (
    "a runner group (group:/labels:) picks a self-hosted or larger runner: not a"
    " GitHub-hosted image label"
)
SELF_HOSTED_SKIP = (
    "not a GitHub-hosted runner image label (a self-hosted or third-party runner's label):"
    " its image is not known here"
)

# GitHub account (user or organization) names: alphanumerics and single hyphens, no hyphen at
# either end, at most 39 characters (github.com/join's rule). Repository names: ASCII letters,
# digits, ``.``, ``-`` and ``_``, at most 100 characters, never ``.`` or ``..``.
_OWNER = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9])*")
_OWNER_MAX = 39
_REPO = re.compile(r"[A-Za-z0-9._-]+")
_REPO_MAX = 100
# A full commit SHA: SHA-1 (40 hex) or SHA-256 (64 hex) object names (git 2.29's
# ``--object-format=sha256``). A shorter run of 7+ hex digits with a letter is an abbreviation;
# an all-digit ref (``20240101``) is read as a tag, which is what such refs usually are.
_FULL_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_SHORT_SHA = re.compile(r"(?=[0-9]*[a-fA-F])[0-9a-fA-F]{7,39}")
# A bound on what is read as one reference (the image references' own bound): real ones are
# far shorter, and a report cell or cache key never holds a megabyte of hostile text.
_MAX_REFERENCE = 1024
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# git check-ref-format: no control characters, space or ``~^:?*[\``, no ``..`` or ``@{``.
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{")
# YAML 1.1 line breaks (what PyYAML and libyaml count lines by).
_LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
# The version a SHA pin's trailing comment names. With a marker (``tag=``, ``pin @``,
# ``ratchet:owner/repo@``, optionally after ``renovate:``) any ref is taken; a bare comment
# must start with a version-shaped tag, as Renovate accepts them: ``1.0.1``, ``v1``,
# ``prefix-v1.0``, ``prefix/v1.0`` (renovatebot/renovate, manager/github-actions/readme.md),
# with an optional ``-suffix``; it ends at whitespace, so ``# v4.2.2 (2024)`` reads ``v4.2.2``.
_MARKED_TAG = re.compile(
    r"\s*(?:renovate\s*:\s*)?"
    r"(?:tag\s*=\s*|pin\s+@?|ratchet:[A-Za-z0-9-]+/[A-Za-z0-9._-]+(?:/[^\s@]*)?@)"
    r"(?P<tag>[^\s,;]+)"
)
_BARE_TAG = re.compile(
    r"\s*(?:renovate\s*:\s*)?@?"
    r"(?P<tag>(?:[A-Za-z0-9_./-]*[-/])?v?[0-9]+(?:\.[0-9]+)*(?:[-+][0-9A-Za-z][0-9A-Za-z.+-]*)?)"
    r"(?=[\s,;]|$)"
)


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the action references and container images of a workflow or an ``action.yml``.

    Action references (docs.github.com, "Workflow syntax for GitHub Actions", ``uses``): a
    step's ``uses:`` (``jobs.<id>.steps[*]``, steps in ``parallel:`` blocks, a composite
    action's ``runs.steps[*]``) is dep type ``action``; a job's ``uses:`` calls a reusable
    workflow, dep type ``reusable-workflow``. ``owner/repo[/path]@ref`` splits at the last
    ``@``; ``name`` is ``owner/repo[/path]`` as written, ``package_name`` its ``owner/repo``
    (the release source, as written), ``constraint`` the ref. A full 40-hex (or 64-hex,
    lower-cased) SHA ref is the row's ``digest`` and its ``constraint`` the tag of the
    trailing comment on that line (``# v4.2.2``, ``# tag=v4.2.2``, ``# pin @v4``,
    ``# ratchet:owner/repo@v4``), ``None`` without one; ``declared`` is the value plus the
    comment when a tag was read from it. ``./local``, ``$/…``, URLs, expressions, short SHAs
    and refs git would refuse are skipped rows with the reason; an owner or repository name
    GitHub would refuse is a problem at its line.

    Container images: ``jobs.<id>.container`` (an image string, or a mapping with
    ``image``) is ``container``, ``jobs.<id>.services.<name>.image`` is ``service``, and a
    step's ``uses: docker://image`` is ``step``; an action's ``runs.image: docker://…`` is
    ``step`` too, while a ``runs.image`` naming a Dockerfile is built, not pulled. An empty
    image (a matrix turning the container off) gives nothing; an image holding a ``${{ … }}``
    expression is a skipped row; an invalid reference is a problem at its line.
    """
    documents, problem = load_yaml(path, text)
    reader = _Reader(path, text)
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
            for job in jobs.values():
                if job.kind == "mapping":
                    reader.job(job)
    return ExtractResult(dependencies=tuple(reader.rows), problems=tuple(reader.problems))


def _has_expression(text: str) -> bool:
    """Whether ``text`` holds a ``${{ … }}`` expression (docs.github.com, "Expressions").

    An unclosed ``${{`` counts too: the runner reads it as the start of an expression (and
    fails on it), never as text; a ``find`` also keeps this linear in the text.
    """
    return "${{" in text


def _steps(node: YamlNode | None) -> Iterator[YamlNode]:
    """The step mappings of a ``steps:`` list, with those of ``parallel:`` blocks in place.

    A ``parallel:`` block (a step holding a list of steps) may nest; an alias can make a list
    contain itself, so each list is entered once (by its items, which an alias shares).
    """
    if node is None or node.kind != "sequence":
        return
    seen = {id(node.items)}
    pending = [node.entries()]
    while pending:
        step = next(pending[-1], None)
        if step is None:
            pending.pop()
            continue
        if step.kind != "mapping":
            continue
        inner = step.get("parallel")
        if inner is not None and inner.kind == "sequence":
            if id(inner.items) not in seen:
                seen.add(id(inner.items))
                pending.append(inner.entries())
            continue
        yield step


def _setup_skip(tool: str, version: str, node: YamlNode) -> str | None:
    """Why a ``setup-<tool>`` version is not looked up, or ``None`` when it is."""
    lowered = version.lower()
    if _has_expression(version):
        return MATRIX_SKIP if "matrix." in lowered else EXPRESSION_SKIP
    if not node.quoted and _LOST_ZERO.fullmatch(version) is not None:
        number = version.rstrip("0").rstrip(".") or "0"
        return (
            f"unquoted {version} is the YAML number {number}: the runner gives setup-{tool}"
            f" {number!r}; quote it ('{version}')"
        )
    if lowered in _NEWEST or lowered in {"x", "*"}:
        return None
    if tool == "node" and (lowered in {"lts", "lts/*"} or lowered.startswith("lts/")):
        return None
    if tool == "go" and lowered == "oldstable":
        return "oldstable is the previous Go release line, resolved at run time: not looked up"
    bare = _X_TAIL.sub("", version)
    if _RANGE.search(bare) is not None:
        return RANGE_SKIP.format(value=version, tool=tool)
    if _SETUP_VERSION.fullmatch(bare) is None:
        return (
            f"{version!r} is not a {tool} release setup-{tool} reads from the {tool} release"
            " list (another implementation, a prerelease or nightly build, or a"
            " free-threaded build): not looked up"
        )
    return None


def _account_problem(owner: str, repo: str) -> str | None:
    """Why ``owner/repo`` is not a GitHub repository name, or ``None`` when it can be one."""
    if not owner or len(owner) > _OWNER_MAX or _OWNER.fullmatch(owner) is None:
        return (
            f"owner {shown(owner)} is not a GitHub user or organization name (letters, digits"
            f" and single inner hyphens, at most {_OWNER_MAX} characters)"
        )
    if not repo or len(repo) > _REPO_MAX or repo in {".", ".."} or _REPO.fullmatch(repo) is None:
        return (
            f"repository {shown(repo)} is not a GitHub repository name (letters, digits, '.',"
            f" '-' and '_', at most {_REPO_MAX} characters)"
        )
    return None


def _ref_problem(ref: str) -> str | None:
    """Why ``ref`` is no git ref name (git check-ref-format, the parts a ``uses:`` meets)."""
    if not ref:
        return NO_REF_SKIP
    parts = ref.split("/")
    if (
        _REF_FORBIDDEN.search(ref) is not None
        or ref.endswith(".")
        or any(not part or part.startswith(".") or part.endswith(".lock") for part in parts)
    ):
        return f"ref {shown(ref)} is not a valid git tag or branch name"
    return None


def trailing_comment(line: str, column: int) -> str | None:
    """The text of the YAML comment after ``column`` on ``line`` (after its ``#``), or ``None``.

    ``column`` is where a scalar ends. A comment starts at a ``#`` preceded by whitespace
    outside quotes (YAML 1.2 §6.6), so a ``#`` inside a quoted value of a flow mapping further
    on the line (``{uses: a/b@…, name: "x # y"}``) is no comment.
    """
    quote: str | None = None
    index = column
    previous = line[column - 1] if 0 < column <= len(line) else " "
    while index < len(line):
        char = line[index]
        if quote == '"' and char == "\\":
            index += 1  # the escaped character is part of the string
        elif quote == "'" and char == "'" and line[index + 1 : index + 2] == "'":
            index += 1  # '' is a quote inside a single-quoted string
        elif quote is not None and char == quote:
            quote = None
        elif quote is None and char == "#" and previous in " \t":
            return line[index + 1 :]
        elif quote is None and char in "\"'" and previous in " \t,[{:":
            quote = char
        previous = char
        index += 1
    return None


def comment_tag(comment: str) -> str | None:
    """The tag a SHA pin's trailing comment names (the text after ``#``), or ``None``.

    ``v4.2.2``, ``tag=v4.2.2``, ``pin @v4``, ``renovate: tag=v1.0.0``,
    ``ratchet:owner/repo@v4.2.2`` and Renovate's tag forms ``1.0.1``, ``v1``, ``prefix-v1.0``,
    ``prefix/v1.0``; a comment that names no such tag (``ratchet:exclude``, prose) gives
    ``None``, as does a tag git would refuse.
    """
    found = _MARKED_TAG.match(comment) or _BARE_TAG.match(comment)
    if found is None:
        return None
    tag = found.group("tag")
    return tag if _ref_problem(tag) is None else None


class _Reader(msgspec.Struct):
    path: str
    text: str
    rows: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    _lines: list[str] | None = None

    def job(self, job: YamlNode) -> None:
        runs_on = job.get("runs-on")
        if runs_on is not None:
            self.runs_on(runs_on)
        called = job.get("uses")
        if called is not None:
            self.uses(called, REUSABLE_WORKFLOW)
        container = job.get("container")
        if container is not None:
            image = container.get("image") if container.kind == "mapping" else container
            self.image(image, "container")
        services = job.get("services")
        if services is not None and services.kind == "mapping":
            for service in services.values():
                if service.kind == "mapping":
                    self.image(service.get("image"), "service")
        self.steps(job.get("steps"), "a job's `steps`")

    def runs_on(self, node: YamlNode) -> None:
        """A job's ``runs-on``: a GitHub-hosted runner image (datasource ``github-runners``).

        ``ubuntu-22.04`` is the image ``22.04`` of ``ubuntu`` (Renovate's ``extractRunner``:
        ``<os>-<version>``, the OS the package name), dep type ``runs-on``. A one-item list is
        its item. Skipped with the reason: ``-latest`` labels, ``${{ … }}`` expressions, lists
        of several labels and ``group:``/``labels:`` mappings (self-hosted or larger runners),
        ``self-hosted``, and ``<os>-…`` labels that name no image the table knows. Another
        single label (a self-hosted runner's own name) gives no row, as in Renovate.
        """
        items = list(node.entries()) if node.kind == "sequence" else [node]
        texts = [item.text() for item in items]
        if node.kind == "mapping":
            self.runner_row(node, "(a runner group)", RUNNER_GROUP_SKIP)
            return
        if not items or any(text is None for text in texts):
            return  # an empty runs-on: GitHub refuses the workflow; nothing to read
        labels = [(text or "").strip() for text in texts]
        if len(labels) > 1:
            joined = ", ".join(labels)[:_MAX_REFERENCE]  # a report cell, never a megabyte
            reason = EXPRESSION_SKIP if _has_expression(joined) else RUNNER_SET_SKIP
            self.runner_row(items[0], f"[{joined}]", reason)
            return
        label = labels[0]
        if not label:
            return
        if len(label) > _MAX_REFERENCE:
            label = label[:_MAX_REFERENCE]
        if _has_expression(label):
            self.runner_row(items[0], label, EXPRESSION_SKIP)
            return
        found = _RUNNER.fullmatch(label)
        if found is None:
            # ``self-hosted`` says so; another bare label names a runner of its owner's (as
            # Renovate, no row: nothing here could ever be looked up for it).
            if label.lower() == "self-hosted":
                self.runner_row(items[0], label, SELF_HOSTED_SKIP)
            return
        os, image = found.group("os").lower(), found.group("image").lower()
        if image == "latest" or image.startswith("latest-"):
            self.runner_row(items[0], label, RUNNER_LATEST_SKIP, package=os)
            return
        if known(os, image) is None:
            reason = (
                f"{shown(label)} is no GitHub-hosted {os} image patchula's runner table knows"
                " (a larger runner's or self-hosted label, or an image newer than the table)"
            )
            self.runner_row(items[0], label, reason, package=os)
            return
        row = self.runner_row(items[0], label, None, package=os)
        self.rows[-1] = replace(row, name=os, constraint=image)

    def runner_row(
        self, node: YamlNode, label: str, reason: str | None, package: str | None = None
    ) -> Dependency:
        row = Dependency(
            manager=ID,
            file=self.path,
            line=node.line,
            name=label,
            package_name=package or label,
            datasource=RUNNER_DATASOURCE,
            versioning=RUNNER_VERSIONING,
            dep_type=RUNS_ON,
            declared=label,
            constraint=None,
            skip_reason=reason,
        )
        self.rows.append(row)
        return row

    def action(self, runs: YamlNode) -> None:
        image = runs.get("image")
        text = None if image is None else image.text()
        if image is not None and text is not None and text.startswith(_DOCKER):
            self.image(image, "step")
        self.steps(runs.get("steps"), "`runs.steps`")

    def steps(self, node: YamlNode | None, what: str) -> None:
        """The steps of ``node``; a ``steps:`` that is no list is a problem at its line.

        GitHub refuses a workflow or an action whose ``steps`` is a string or a mapping
        (docs.github.com, "Workflow syntax": ``jobs.<job_id>.steps`` is a sequence); an empty
        ``steps:`` (null) gives nothing, as an empty list would.
        """
        if node is not None and node.kind != "sequence" and node.text() is not None:
            self.problems.append(self.not_a_list(node, what, "a string"))
        elif node is not None and node.kind == "mapping":
            self.problems.append(self.not_a_list(node, what, "a mapping"))
        for step in _steps(node):
            self.step(step)

    def not_a_list(self, node: YamlNode, what: str, kind: str) -> ManifestProblem:
        return ManifestProblem(self.path, node.line, f"{what} must be a list of steps, not {kind}")

    def step(self, step: YamlNode) -> None:
        uses = step.get("uses")
        if uses is not None:
            self.uses(uses, ACTION)
            self.setup(uses, step.get("with"))

    def setup(self, uses: YamlNode, inputs: YamlNode | None) -> None:
        """The tool version an ``actions/setup-node|python|go`` step installs, as a tool row.

        ``with.<tool>-version`` (docs: actions/setup-node, setup-python, setup-go READMEs) is a
        row of the ``tool`` ``node``/``python``/``go``, dep type ``setup-<tool>``, judged by
        mise's versioning: ``20`` and ``20.x`` admit 20.x.y, ``20.11.0`` is a pin, ``lts/*``
        and ``lts/<name>`` are Node's LTS lines, ``latest``/``current``/``node``/``stable``
        the newest release. setup-python's several versions (one a line) are one row each.
        Skipped with the reason: ``${{ … }}`` (a matrix or other expression), semver ranges
        (``>=3.8 <3.10``, ``^20``), setup-go's ``oldstable``, PyPy/GraalPy and other builds,
        an unquoted number YAML reads otherwise (``3.10`` is 3.1), and ``<tool>-version-file``
        (the file is read at run time; a version file of the checkout is its own row).
        """
        name = (uses.text() or "").strip().rpartition("@")[0].lower()
        found = SETUP_ACTIONS.get(name)
        if found is None or inputs is None or inputs.kind != "mapping":
            return
        tool, key = found
        node = inputs.get(key)
        value = None if node is None else node.text()
        if node is None or value is None or not value.strip():
            source = inputs.get(f"{key}-file")
            written = None if source is None else source.text()
            if source is not None and written is not None and written.strip():
                reason = (
                    f"the version is read from {written.strip()!r} when the job runs"
                    f" ({key}-file); that file, when the checkout has it, is its own row"
                )
                self.setup_row(source, tool, f"{key}-file: {written.strip()}", reason)
            return
        lines = [part.strip() for part in value.splitlines() if part.strip()]
        if len(lines) > 1 and tool != "python":
            reason = f"setup-{tool} takes one version, not a list of {len(lines)}"
            self.setup_row(node, tool, value.strip(), reason)
            return
        for index, version in enumerate(lines):
            line = node.line + index + (1 if node.quoted and len(lines) > 1 else 0)
            self.setup_row(
                replace(node, line=line), tool, version, _setup_skip(tool, version, node)
            )

    def setup_row(self, node: YamlNode, tool: str, version: str, reason: str | None) -> None:
        # ``20.x`` is the line 20; ``x`` and ``*`` any release; a skipped row reads nothing.
        read = _X_TAIL.sub("", version)
        row = tool_row(
            manager=ID,
            file=self.path,
            line=node.line,
            tool=tool,
            version="latest" if reason is not None or read in {"x", "X", "*"} else read,
            dep_type=f"setup-{tool}",
        )
        self.rows.append(replace(row, declared=version, skip_reason=reason or row.skip_reason))

    def uses(self, node: YamlNode, dep_type: str) -> None:
        """One ``uses:`` value: an image (``docker://``, steps only) or an action reference."""
        what = "a job's `uses`" if dep_type == REUSABLE_WORKFLOW else "a step's `uses`"
        if node.kind != "scalar" or not (node.value or "").strip():
            shape = "must be a string" if node.kind != "scalar" else "is empty"
            self.problems.append(ManifestProblem(self.path, node.line, f"{what} {shape}"))
            return
        value = (node.value or "").strip()
        if value.startswith(_DOCKER):
            if dep_type == ACTION:
                self.image(node, "step")
            else:
                message = f"{what} calls a reusable workflow; a docker:// image runs only as a step"
                self.problems.append(ManifestProblem(self.path, node.line, message))
            return
        if len(value) > _MAX_REFERENCE:
            message = (
                f"invalid action reference {shown(value)}: longer than {_MAX_REFERENCE} characters"
            )
            self.problems.append(ManifestProblem(self.path, node.line, message))
            return
        found = self.reference(node, value, dep_type)
        if isinstance(found, ManifestProblem):
            self.problems.append(found)
        else:
            self.rows.append(found)

    def reference(self, node: YamlNode, value: str, dep_type: str) -> Dependency | ManifestProblem:
        """The row of ``owner/repo[/path]@ref`` (or of a form skipped), or its problem."""
        if value.startswith(("./", "../")) or value in {".", ".."}:
            return self.row(node, value, value, value, dep_type, LOCAL_SKIP)
        if value.startswith("$/"):
            return self.row(node, value, value, value, dep_type, SELF_SKIP)
        if _URL.match(value) is not None:
            return self.row(node, value, value, value, dep_type, URL_SKIP)
        name, at, ref = value.rpartition("@")
        if not at:
            name, ref = value, ""
        if _has_expression(name):
            return self.row(node, value, value, value, dep_type, EXPRESSION_SKIP)
        owner, slash, rest = name.partition("/")
        repo = rest.partition("/")[0]
        problem = _account_problem(owner, repo) if slash else "expected owner/repo[/path]@ref"
        if problem is None and (rest.endswith("/") or "//" in rest):
            problem = "its path has an empty folder name"
        if problem is not None:
            message = f"invalid action reference {shown(value)}: {problem}"
            return ManifestProblem(self.path, node.line, message)
        package = f"{owner}/{repo}"
        if _has_expression(ref):
            return self.row(node, value, name, package, dep_type, EXPRESSION_SKIP)
        reason = _ref_problem(ref)
        if reason is not None:
            return self.row(node, value, name, package, dep_type, reason)
        if _SHORT_SHA.fullmatch(ref) is not None:
            return self.row(node, value, name, package, dep_type, SHORT_SHA_SKIP)
        if _FULL_SHA.fullmatch(ref) is None:
            return self.row(node, value, name, package, dep_type, None)
        comment = self.comment(node)
        tag = None if comment is None else comment_tag(comment)
        declared = value if tag is None or comment is None else f"{value} # {comment.strip()}"
        pinned = self.row(node, value, name, package, dep_type, None)
        return replace(pinned, declared=declared, constraint=tag, digest=ref.lower())

    def row(
        self,
        node: YamlNode,
        value: str,
        name: str,
        package: str,
        dep_type: str,
        reason: str | None,
    ) -> Dependency:
        """A reference row, ``constraint`` the ref after ``@`` (or skipped with ``reason``)."""
        _, at, ref = value.rpartition("@")
        return Dependency(
            manager=ID,
            file=self.path,
            line=node.line,
            name=name,
            package_name=package,
            datasource=ACTION_DATASOURCE,
            versioning=ACTION_VERSIONING,
            dep_type=dep_type,
            declared=value,
            constraint=ref if at and reason is None else None,
            skip_reason=reason,
        )

    def comment(self, node: YamlNode) -> str | None:
        """The trailing comment on the line where the scalar ``node`` ends (PyYAML drops it)."""
        if node.end_line < 1:
            return None
        if self._lines is None:
            # The text exactly as the YAML reader parsed it, so lines and columns agree.
            self._lines = _LINE_BREAK.split(scrub_surrogates(strip_bom(self.text)))
        if node.end_line > len(self._lines):
            return None
        return trailing_comment(self._lines[node.end_line - 1], node.end_column)

    def image(self, node: YamlNode | None, dep_type: str) -> None:
        if node is None or node.kind != "scalar" or not (node.value or "").strip():
            if node is not None and node.kind != "scalar":
                message = f"a {dep_type} image must be a string"
                self.problems.append(ManifestProblem(self.path, node.line, message))
            return
        written = (node.value or "").strip()
        reference = written.removeprefix(_DOCKER)
        if _has_expression(reference):
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
