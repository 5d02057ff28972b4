"""The docker compose manager: ``services.<name>.image``, following ``include`` and ``extends``."""

from __future__ import annotations

import posixpath
import re

import msgspec

from patchula.errors import ManifestError
from patchula.manager import paths
from patchula.manager.base import (
    IMAGE_DATASOURCE,
    IMAGE_VERSIONING,
    ReadFile,
    YamlNode,
    image_row,
    load_yaml,
    shown,
    skipped_image_row,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "docker_compose"
DATASOURCE = IMAGE_DATASOURCE
matches = paths.docker_compose  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = IMAGE_VERSIONING

_BRACES = re.compile(r"\$\{|\}")
_NAME_CHARS = re.compile(r"[_A-Za-z][_A-Za-z0-9]*", re.ASCII)
_NOT_READ = "compose reads it from the environment or a .env file, which the scan does not read"
BUILT_HERE = "built here (build:): compose builds this image and tags it with this name"
_MAX_INCLUDE_DEPTH = 32
# A plain scalar YAML 1.2's core schema resolves to a number or a boolean (YAML 1.2.2 §10.3.2):
# compose decodes ``image: 12`` as the integer 12 and refuses it ("must be a string").
_NOT_A_STRING = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)|true|True|TRUE|false|False|FALSE"
)
# ``${A:-${B:-…}}`` deeper than this is no real compose file; each level is one recursion.
MAX_SUBSTITUTION_DEPTH = 32


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:
    """Extract the images of one compose file (compose-spec.io, the Compose file reference).

    Each ``services.<name>.image`` is a row (``dep_type`` ``image``) at the line of its value,
    every document of a multi-document file read, the last of repeated keys winning, ``<<``
    merges applied. Interpolation follows compose (compose-go ``template``): ``$$`` is ``$``,
    ``${VAR:-default}`` and ``${VAR-default}`` give the default, ``${VAR:+x}`` nothing; the scan
    knows no variable, so an image that needs one (``${VAR}``, ``$VAR``, ``${VAR:?err}``) is a
    skipped row naming it, saying that the environment and a ``.env`` file beside it are not
    read. A service with ``build:`` and ``image:`` is a skipped row ("built here"): compose
    builds and tags that image rather than pulling it, and Renovate leaves such services out
    altogether; one with only ``build:`` gives nothing. Files named by top-level ``include:``
    and by ``extends: {file: …}`` are read as compose files too when their names are not
    compose names (those are found on their own), listed in ``included_files``. A Compose
    file format 1 document (no ``services``, no ``version``: each top-level key a service with
    ``image`` or ``build``) is read the same way.
    """
    reader = _Reader(read)
    reader.visit(path, text, (path,))
    return ExtractResult(
        dependencies=tuple(reader.rows),
        problems=tuple(reader.problems),
        included_files=tuple(reader.included),
    )


def _legacy_services(root: YamlNode) -> YamlNode | None:
    """The services of a Compose file format 1 document, else ``None``.

    Format 1 (docker-compose before 1.6) has neither ``services`` nor ``version``: every
    top-level key is a service. A document is read so only when each of its top-level values
    (``x-`` extensions aside) is a mapping with an ``image`` or a ``build`` key, as Renovate
    reads these files; any other document without ``services`` gives nothing.
    """
    pairs = {name: value for name, value in root.named() if not name.startswith("x-")}
    if not pairs or not all(
        value.kind == "mapping"
        and (value.get("image") is not None or value.get("build") is not None)
        for value in pairs.values()
    ):
        return None
    return msgspec.structs.replace(root, pairs=pairs)


class _Interpolated(msgspec.Struct):
    parts: list[str] = msgspec.field(default_factory=list)  # joined once: linear in the text
    missing: list[tuple[str, bool]] = msgspec.field(default_factory=list)  # (name, required)
    error: str | None = None

    @property
    def value(self) -> str:
        return "".join(self.parts)


def interpolate(text: str, depth: int = 0) -> _Interpolated:
    """Interpolate ``text`` as compose does with no variable set (compose-go ``template``).

    Defaults nest (``${A:-${B:-x}}``) up to ``MAX_SUBSTITUTION_DEPTH`` levels, deeper is an
    error.
    """
    out = _Interpolated()
    index, end = 0, len(text)
    while index < end:
        dollar = text.find("$", index)
        if dollar < 0:
            out.parts.append(text[index:])
            break
        out.parts.append(text[index:dollar])
        if text.startswith("$$", dollar):
            out.parts.append("$")
            index = dollar + 2
        elif text.startswith("${", dollar):
            index = _braced(text, dollar, out, depth)
        else:
            name = _NAME_CHARS.match(text, dollar + 1)
            if name is None:
                out.error = f"invalid interpolation format in {shown(text)}: a lone '$' (write $$)"
                return out
            out.missing.append((name.group(), False))
            index = name.end()
    return out


def _braced(text: str, dollar: int, out: _Interpolated, depth: int) -> int:
    open_braces, index = 1, len(text) + 1
    for mark in _BRACES.finditer(text, dollar + 2):
        open_braces += 1 if mark.group() == "${" else -1
        if not open_braces:
            index = mark.end()
            break
    if open_braces:
        out.error = f"invalid interpolation format in {shown(text)}: missing '}}'"
        return len(text)
    inner = text[dollar + 2 : index - 1]
    name = _NAME_CHARS.match(inner)
    if name is None:
        out.error = f"invalid interpolation format in {shown(text)}: no variable name"
        return index
    rest = inner[name.end() :]
    operator = rest[:2] if rest[:1] == ":" else rest[:1]
    operand = rest[len(operator) :]
    if operator in {":-", "-"} and depth >= MAX_SUBSTITUTION_DEPTH:
        out.error = f"substitutions nested more than {MAX_SUBSTITUTION_DEPTH} levels deep"
    elif operator in {":-", "-"}:
        nested = interpolate(operand, depth + 1)
        out.parts.append(nested.value)
        out.missing.extend(nested.missing)
        out.error = out.error or nested.error
    elif operator in {":?", "?"}:
        out.missing.append((name.group(), True))
    elif operator not in {":+", "+"}:  # ``:+`` / ``+`` of an unset variable is empty
        if rest:
            out.error = f"invalid interpolation format in {shown(text)}: {shown(inner)}"
        else:
            out.missing.append((name.group(), False))
    return index


def _missing_reason(name: str, *, required: bool) -> str:
    if required:
        return f"${{{name}}} is required and not known here: {_NOT_READ}"
    return f"${{{name}}} is not set here: {_NOT_READ}"


class _Reader(msgspec.Struct):
    """Reads one compose file and the files it includes or extends."""

    read: ReadFile
    rows: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    included: list[str] = msgspec.field(default_factory=list)
    visited: set[str] = msgspec.field(default_factory=set)

    def visit(self, path: str, text: str, stack: tuple[str, ...]) -> None:
        self.visited.add(path)
        documents, problem = load_yaml(path, text)
        if problem is not None:
            self.problems.append(problem)
        for document in documents:
            if document.kind == "scalar" and document.value is None:
                continue  # an empty document
            if document.kind != "mapping":
                message = "expected a mapping at the top level of a compose file"
                self.problems.append(ManifestProblem(path, document.line, message))
                continue
            self.document(path, document, stack)

    def document(self, path: str, root: YamlNode, stack: tuple[str, ...]) -> None:
        services = root.get("services")
        if services is None and root.get("version") is None:
            services = _legacy_services(root)
        if services is not None and services.kind == "mapping":
            for name, service in services.named():
                if service.kind == "mapping":
                    self.service(path, name, service, stack)
                elif not (service.kind == "scalar" and service.value is None):
                    # Compose refuses a service that is not a mapping; ``web:`` alone is null.
                    message = f"services.{name} must be a mapping"
                    self.problems.append(ManifestProblem(path, service.line, message))
        elif services is not None and not (services.kind == "scalar" and services.value is None):
            message = "`services` must be a mapping of service names to services"
            self.problems.append(ManifestProblem(path, services.line, message))
        include = root.get("include")
        if include is not None and include.kind == "sequence":
            for item in include.entries():
                targets = item.get("path") if item.kind == "mapping" else item
                for target in [] if targets is None else list(targets.entries()) or [targets]:
                    self.follow(path, target, stack)

    def service(self, path: str, name: str, service: YamlNode, stack: tuple[str, ...]) -> None:
        extends = service.get("extends")
        if extends is not None and extends.kind == "mapping":
            target = extends.get("file")
            if target is not None:
                self.follow(path, target, stack)
        image = service.get("image")
        if image is None or (image.kind == "scalar" and image.value is None):
            return
        if image.tag == "!reset":
            return  # compose's ``!reset`` removes a value an extended or merged file set
        if (
            image.kind != "scalar"
            or image.value is None
            or (not image.quoted and image.tag is None and _NOT_A_STRING.fullmatch(image.value))
        ):
            message = f"services.{name}.image must be a string"
            self.problems.append(ManifestProblem(path, image.line, message))
            return
        line = image.line
        result = interpolate(image.value)
        if result.error is not None:
            self.problems.append(ManifestProblem(path, line, result.error))
            return
        build = service.get("build")
        built = build is not None and not (build.kind == "scalar" and build.value is None)
        if not result.missing and not result.value.strip():
            if not built:  # compose: "has neither an image nor a build context specified"
                message = f"services.{name}.image is empty after interpolation"
                self.problems.append(ManifestProblem(path, line, message))
            return
        reason: str | None = BUILT_HERE if built else None
        if result.missing:
            missing, required = result.missing[0]
            reason = _missing_reason(missing, required=required)
        if reason is not None and (result.missing or self.valid(path, line, result.value)):
            written = image.value if result.missing else result.value
            self.rows.append(
                skipped_image_row(
                    written, manager=ID, file=path, line=line, dep_type="image", reason=reason
                )
            )
            return
        row = image_row(result.value, manager=ID, file=path, line=line, dep_type="image")
        if isinstance(row, ManifestProblem):
            self.problems.append(row)
        else:
            self.rows.append(row)

    def valid(self, path: str, line: int, reference: str) -> bool:
        """Whether ``reference`` is a valid image (else its problem is recorded)."""
        row = image_row(reference, manager=ID, file=path, line=line, dep_type="image")
        if isinstance(row, ManifestProblem):
            self.problems.append(row)
            return False
        return True

    def follow(self, path: str, target: YamlNode, stack: tuple[str, ...]) -> None:
        """Read an included or extended file named by ``target`` (relative to ``path``)."""
        raw = target.text()
        if raw is None:
            return
        written = interpolate(raw)
        if written.error is not None or written.missing:
            message = f"included file {shown(raw)} uses variables the scan does not know; not read"
            self.problems.append(ManifestProblem(path, target.line, message, "warning"))
            return
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), written.value))
        if written.value.startswith("/") or joined == ".." or joined.startswith("../"):
            message = f"included file {shown(raw)} is outside the repository; not read"
            self.problems.append(ManifestProblem(path, target.line, message, "warning"))
            return
        if joined in stack:
            chain = " -> ".join([*stack[stack.index(joined) :], joined])
            self.problems.append(ManifestProblem(path, target.line, f"include cycle: {chain}"))
            return
        if joined in self.visited or matches(joined) or len(stack) > _MAX_INCLUDE_DEPTH:
            return  # read already, or found by its name as a compose file of its own
        self.visited.add(joined)
        try:
            text = self.read(joined)
        except (ManifestError, OSError, ValueError) as exc:
            reason = exc.message if isinstance(exc, ManifestError) else str(exc)
            message = f"cannot read included file {shown(raw)}: {reason}"
            self.problems.append(ManifestProblem(path, target.line, message))
            return
        self.included.append(joined)
        self.visit(joined, text, (*stack, joined))
