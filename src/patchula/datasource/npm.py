"""npm registry datasource: release list and publish times from the full packument.

The full packument (``GET /<name>``, ``Accept: application/json``) is the only npm document
that carries ``time[version]``; the abbreviated install document
(``application/vnd.npm.install-v1+json``) omits it.
Source: ``npm/registry:docs/responses/package-metadata.md``.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import sys
import threading
from array import array
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import quote

import msgspec
import zstandard

from patchula.datasource.base import (
    CatalogRequest,
    Datasource,
    Declared,
    SingleDocument,
    check_status,
    describe_decode_error,
    epoch_seconds,
    fetch_catalog,
    times_from_epochs,
    url_safe_name,
)
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import npm as npm_versioning

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "npm"
DEFAULT_BASE_URL = "https://registry.npmjs.org"
TIME_SOURCE = "npm packument time"
# v2 (issue 12): columnar msgpack; v1 (JSON) rows are a cache miss, their key names v1.
REPRESENTATION = "npm-packument-v2"

# Where a credential for an npm registry goes (named in a 401/403 row).
CREDENTIAL_HINT = ".npmrc or ~/.netrc"

# The full document; the abbreviated one has no ``time`` map.
_ACCEPT = "application/json"


class _VersionManifest(msgspec.Struct, frozen=True):
    """One ``versions[v]`` entry, reduced to the one field a freshness scan reads.

    ``deprecated`` stays undecoded JSON (empty when absent): any value is allowed and only its
    kind matters, so a huge number or a deep structure there is never built.
    """

    deprecated: msgspec.Raw = msgspec.Raw()


class _Packument(msgspec.Struct, frozen=True):
    """The fields of a packument a freshness scan reads; msgspec skips the rest unbuilt."""

    name: str | None = None
    dist_tags: dict[str, str] = msgspec.field(default_factory=dict, name="dist-tags")
    versions: dict[str, _VersionManifest] = msgspec.field(default_factory=dict)
    # Version keys map to ISO timestamps; ``created``/``modified`` (and ``unpublished``, an
    # object) share the map, so values stay undecoded and only those of versions are read.
    time: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)


_DECODER = msgspec.json.Decoder(_Packument)


def package_url(base_url: str, package_name: str) -> str:
    """Return the packument URL; a scoped name's slash is sent as ``%2f`` (``@scope%2fpkg``).

    npm's own client escapes only that slash, in lower case, and leaves ``@`` literal
    (``npm/npm-package-arg:lib/npa.js``, ``escapedName``).
    """
    escaped = quote(url_safe_name(package_name), safe="@/").replace("/", "%2f")
    return f"{base_url.rstrip('/')}/{escaped}"


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the full packument of ``package_name`` (cached as ``npm-packument-v2``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or an
    unusable body.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:
    """The GET of ``package_name``'s packument, stored as ``npm-packument-v2``."""
    return CatalogRequest(
        url=package_url(base_url, package_name),
        headers={"Accept": _ACCEPT},
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request`` (compact document in ``content``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or an
    unusable document.
    """
    check_status(response, f"npm package {package_name!r}", credential_hint=CREDENTIAL_HINT)
    return parse_compact(
        response.content,
        package_name=package_name,
        fetched_at=response.fetched_at,
        source_url=url,
        reused=response.cache == "fresh",
    )


def derive(content: bytes, *, package_name: str) -> bytes:
    """Reduce a full packument to the compact ``npm-packument-v2`` document (msgpack bytes).

    Keeps what a catalog reads: every semver version (others are dropped, as the catalog drops
    them), its publish time in whole epoch seconds (unknown stays unknown), its deprecation
    message, and the dist-tags; manifests, integrity, readme and the rest are dropped. Columnar
    and encoded to compress well (see ``_encode``): 20x to 30x smaller than the packument when
    both are compressed alike. Raises ``RegistryError`` when the body is not JSON or not shaped
    like a packument.
    """
    try:
        packument = _DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        reason = describe_decode_error(exc, content=content)
        msg = f"npm package {package_name!r}: unusable packument ({reason})"
        raise RegistryError(msg) from exc
    time = packument.time
    is_valid = npm_versioning.is_valid
    rows = [
        (version, _epoch(time.get(version))) for version in packument.versions if is_valid(version)
    ]
    deprecated = {
        version: message
        for version, manifest in packument.versions.items()
        if manifest.deprecated and (message := _deprecation(manifest.deprecated)) is not None
    }
    return _encode(rows, packument.dist_tags, deprecated)


def parse(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
) -> Catalog:
    """Build the catalog of ``package_name`` from a full packument (``derive``, then parse)."""
    return parse_compact(
        derive(content, package_name=package_name),
        package_name=package_name,
        fetched_at=fetched_at,
        source_url=source_url,
    )


def parse_compact(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
    reused: bool = False,
) -> Catalog:
    """Build the catalog of ``package_name`` from an ``npm-packument-v2`` document.

    Releases come from the stored versions (any that is not semver is dropped), sorted by semver
    precedence; ``released_at`` is ``time[version]`` or ``None``; ``latest`` is
    ``dist-tags.latest`` as the registry says, even when a higher version exists.
    """
    unusable = f"npm package {package_name!r}: unusable {REPRESENTATION} document"
    try:
        versions, times, tags, deprecated = _decode(content)
        whens = times_from_epochs(times)
    except (
        msgspec.DecodeError,
        zstandard.ZstdError,
        IndexError,
        ValueError,
        TypeError,
        StopIteration,
    ) as exc:
        raise RegistryError(unusable) from exc
    if len(whens) != len(versions):
        raise RegistryError(unusable)
    repeat = itertools.repeat
    messages = [deprecated.get(v) for v in versions] if deprecated else repeat(None)
    # Every field of ``Release`` in order, made by ``tuple.__new__`` from C iterators: the named
    # tuple's own ``__new__`` and a Python loop per release cost twice as much on a warm run's
    # tens of thousands of releases. Versions that are not semver are dropped: their precedence
    # key is ``(0, version)``, a valid one's ``(1, …)`` (``versioning.npm.sort_key``).
    no, yes, none = repeat(False), repeat(True), repeat(None)  # noqa: FBT003 - Release fields
    # ``strict=False``: the constant columns are endless; the lengths were checked above.
    fields = zip(versions, whens, no, messages, yes, no, none, none, none, strict=False)
    made = map(tuple.__new__, repeat(Release), fields)
    keys = list(map(npm_versioning.sort_key, versions))
    keyed = list(itertools.compress(zip(keys, made, strict=True), map(_FIRST, keys)))
    keyed.sort(key=_FIRST)  # stable: versions equal in precedence keep their stored order
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(map(_SECOND, keyed)),
        latest=tags.get("latest"),
        fetched_at=fetched_at,
        dist_tags=tuple(sorted(tags.items())),
        time_source=TIME_SOURCE,
        source_url=source_url,
        reused=reused,
    )


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_CORE = "%d.%d.%d"  # MAJOR.MINOR.PATCH of three ints


# --- the npm-packument-v2 document ------------------------------------------------------------
#
# A msgpack array ``[latest, columns, packed, tags, deprecated]``. ``latest`` is
# ``dist-tags.latest`` and ``tags`` the other ``[[tag, version], ...]``, a stored version given by
# its position; ``deprecated`` is ``[[position, message], ...]``. The version and time columns
# (``_Columns``) are inline, or, when that is smaller, ``columns`` is ``None`` and ``packed``
# holds their msgpack zstd-compressed with one block per column: each column gets its own
# entropy tables (times, small integers and version text compress far better apart than
# mixed, which the cache's compression of a whole document cannot do).
#
# Versions are stored in publish order (the real documents' times compress only as deltas in
# that order), each split as ``MAJOR.MINOR.PATCH`` + a label (the lead and the text up to the
# next ``-``: ``-canary``, ``-rc.1``) + the rest after that ``-`` (``0066e0b68-20240306``).
# Labels, rests and (in a long catalog) cores are interned: a table in first-appearance order
# and one reference per version (see ``_columns``); a short catalog's cores are deltas.
# Publish times are deltas of epoch seconds. Short integer columns are LEB128 bytes (ZigZag for
# signed deltas; times fixed-width uint32), long ones msgpack lists, which msgspec decodes in C.
# Trailing fields at their defaults are left out (``_trimmed``).

_CANONICAL = re.compile(
    r"((0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15}))"
    r"(?:([-+][0-9A-Za-z.+]*)(?:-([0-9A-Za-z.+-]*))?)?\Z"
)
_VARINT_MAX = 64
_PACKED_MAX = 64 << 20  # bytes: far above any packument's columns (typescript's: 70 KB)
_CHUNK = 1 << 20  # bytes read at once from the packed columns
# Columns of at most this many bytes stay inline: a frame and a header per block cost more than
# compressing so few bytes saves.
_INLINE_MAX = 256
ZSTD_LEVEL = 6  # of the packed columns
_Ints: TypeAlias = bytes | list[int]


class _Columns(msgspec.Struct, array_like=True, frozen=True):
    """The version and time columns of an ``npm-packument-v2`` document (see above).

    Trailing fields at their defaults are left out of the msgpack array (``_trimmed``; a
    release-only packument stores two), so the fields that are often empty come last.
    """

    times: _Ints  # deltas of the known publish times (epoch seconds; see _pack_times)
    core_deltas: _Ints  # signed deltas of major, minor, patch, interleaved; or empty, and:
    core_refs: _Ints = b""  # per canonical version: 0 the next new core, n >= 1 core n - 1
    cores: str = ""  # the ``MAJOR.MINOR.PATCH`` table, ``\n``-joined, first appearance first
    label_refs: _Ints = b""  # one per canonical version; empty when none has a label
    labels: str = ""  # the label table, ``\n``-joined (labels and rests never hold ``\n``)
    rest_refs: _Ints = b""  # one per version with a rest
    rests: str = ""  # the rest table, ``\n``-joined, each up to its last ``-``
    rest_ends: str = ""  # from that ``-`` on (or empty), apart: mostly digits (dates)
    unknown: list[int] = []  # positions whose publish time is unknown, ascending
    other: list[tuple[int, str]] = []  # (position, version) of versions of another form


class _Compact(msgspec.Struct, array_like=True, frozen=True):
    latest: int | str | None  # ``dist-tags.latest``, the one tag nearly every packument has
    columns: _Columns | None  # inline columns, or ``None`` when they are packed
    packed: bytes = b""
    tags: list[tuple[str, int | str]] = []  # the other dist-tags
    deprecated: list[tuple[int, str]] = []


_COMPACT = msgspec.msgpack.Decoder(_Compact)
_COLUMNS = msgspec.msgpack.Decoder(_Columns)
_local = threading.local()  # zstd contexts are not thread-safe: one pair per worker thread


def _compressor() -> zstandard.ZstdCompressor:
    compressor: zstandard.ZstdCompressor | None = getattr(_local, "compressor", None)
    if compressor is None:
        # No content size in the frame: it would tune the parameters to it, and pack worse.
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=False)
        _local.compressor = compressor
    return compressor


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = zstandard.ZstdDecompressor()
        _local.decompressor = decompressor
    return decompressor


def _encode(
    rows: list[tuple[str, int | None]], tags: dict[str, str], deprecated: dict[str, str]
) -> bytes:
    """Return the ``npm-packument-v2`` document of ``(version, epoch seconds | None)`` rows."""
    rows = sorted(rows, key=lambda row: (row[1] is None, row[1] or 0))  # publish order
    position = {version: index for index, (version, _) in enumerate(rows)}
    columns = _columns(rows)
    encode = msgspec.msgpack.encode
    plain = encode(_trimmed(columns))
    packed = _packed(columns) if len(plain) > _INLINE_MAX else b""
    inline = not packed or len(packed) >= len(plain)
    latest = tags.get("latest")
    document = _Compact(
        latest=None if latest is None else position.get(latest, latest),
        columns=columns if inline else None,
        packed=b"" if inline else packed,
        tags=[(t, position.get(v, v)) for t, v in tags.items() if t != "latest"],
        deprecated=[(position[v], message) for v, message in deprecated.items() if v in position],
    )
    return encode(_trimmed(document))


def _packed(columns: _Columns) -> bytes:
    """Return the msgpack of every column, zstd-compressed with one block per column."""
    encode = msgspec.msgpack.encode
    fields = [encode(getattr(columns, name)) for name in _Columns.__struct_fields__]
    header = bytes([0x90 | len(fields)])  # a msgpack fixarray (fewer than 16 fields)
    stream = _compressor().compressobj()
    flush_block = zstandard.COMPRESSOBJ_FLUSH_BLOCK
    blocks = [stream.compress(header)]
    for field in fields:
        blocks += (stream.compress(field), stream.flush(flush_block))
    blocks.append(stream.flush())
    return b"".join(blocks)


def _trimmed(struct: msgspec.Struct) -> list[object]:
    """Return an array-like struct's fields without its trailing defaults (nested ones too).

    msgspec decodes a shorter array into an array-like struct, filling in the defaults.
    """
    values: list[object] = []
    kept = 0
    for name, default in _defaults(type(struct)):
        value = getattr(struct, name)
        values.append(_trimmed(value) if isinstance(value, msgspec.Struct) else value)
        if default is msgspec.NODEFAULT or value != default:
            kept = len(values)
    return values[:kept]


@functools.cache
def _defaults(kind: type[msgspec.Struct]) -> tuple[tuple[str, object], ...]:
    """Return ``(name, default)`` per field (``msgspec.NODEFAULT`` for a required one)."""
    out: list[tuple[str, object]] = []
    for field in msgspec.structs.fields(kind):
        default = field.default
        if field.default_factory is not msgspec.NODEFAULT:
            default = field.default_factory()
        out.append((field.name, default))
    return tuple(out)


def _columns(rows: list[tuple[str, int | None]]) -> _Columns:
    """Split ``rows`` (in publish order) into columns.

    A label reference is ``code << 1 | has_rest`` with code 0 for no label, 1 for the next new
    table entry and ``n >= 2`` for entry ``n - 2``; a rest reference is 0 for the next new entry
    and ``n >= 1`` for entry ``n - 1``.
    """
    times: list[int] = []
    unknown: list[int] = []
    cores: list[int] = []
    core_table: dict[str, int] = {}
    core_refs: list[int] = []
    labels: dict[str, int] = {}
    rests: dict[str, int] = {}
    label_refs: list[int] = []
    rest_refs: list[int] = []
    other: list[tuple[int, str]] = []
    last_time = last_major = last_minor = last_patch = 0
    match_canonical = _CANONICAL.match
    for position, (version, when) in enumerate(rows):
        if when is None:
            unknown.append(position)
        else:
            times.append(when - last_time)
            last_time = when
        match = match_canonical(version)
        if match is None:
            other.append((position, version))
            continue
        core, major, minor, patch, label, rest = match.groups()
        index = core_table.get(core)
        if index is None:
            core_table[core] = len(core_table)
        core_refs.append(0 if index is None else index + 1)
        major, minor, patch = int(major), int(minor), int(patch)
        cores += (major - last_major, minor - last_minor, patch - last_patch)
        last_major, last_minor, last_patch = major, minor, patch
        if label is None:
            label_refs.append(0)
            continue
        index = labels.get(label)
        if index is None:
            labels[label] = len(labels)
        label_refs.append((1 if index is None else index + 2) << 1 | (rest is not None))
        if rest is not None:
            index = rests.get(rest)
            if index is None:
                rests[rest] = len(rests)
            rest_refs.append(0 if index is None else index + 1)
    # A long catalog's cores are a table (a lookup per version to decode, where formatting
    # three integers costs more than the rest of decoding), a short one's the fewer bytes.
    deltas: _Ints = b""
    refs: _Ints = b""
    table = ""
    if len(core_refs) > _VARINT_MAX:
        refs, table = _pack(core_refs, signed=False), "\n".join(core_table)
    else:
        deltas = _pack(cores, signed=True)
    return _Columns(
        times=_pack_times(times),
        unknown=unknown,
        core_deltas=deltas,
        core_refs=refs,
        cores=table,
        labels="\n".join(labels),
        label_refs=_pack(label_refs, signed=False) if labels else b"",
        rests="\n".join(rest[: _end(rest)] for rest in rests),
        rest_ends="\n".join(rest[_end(rest) :] for rest in rests),
        rest_refs=_pack(rest_refs, signed=False),
        other=other,
    )


def _decode(content: bytes) -> tuple[list[str], list[int | None], dict[str, str], dict[str, str]]:
    """Return ``(versions, times, tags, deprecated)`` of an ``npm-packument-v2`` document.

    ``versions`` and ``times`` (epoch seconds or ``None``) are in stored order. Raises
    ``msgspec.DecodeError``, ``zstandard.ZstdError``, ``IndexError``, ``ValueError``,
    ``TypeError`` or ``StopIteration`` on a damaged document.
    """
    document = _COMPACT.decode(content)
    columns = document.columns
    if columns is None:
        columns = _COLUMNS.decode(_unpacked(document.packed))
    accumulate = itertools.accumulate
    if columns.cores:
        core_table = columns.cores.split("\n")
        new = itertools.count()
        refs = _unpack(columns.core_refs, signed=False)
        cores = [core_table[next(new) if ref == 0 else ref - 1] for ref in refs]
    else:
        deltas = _unpack(columns.core_deltas, signed=True)
        # ``%d`` of (major, minor, patch) ints, mapped in C: a third cheaper than an f-string
        # per version in a comprehension.
        cores = list(
            map(
                _CORE.__mod__,
                zip(
                    accumulate(deltas[0::3]),
                    accumulate(deltas[1::3]),
                    accumulate(deltas[2::3]),
                    strict=True,
                ),
            )
        )
    # Releases only (no labels): nothing follows the cores.
    versions = _with_tails(cores, columns) if columns.labels else cores
    for position, version in columns.other:
        versions.insert(position, version)
    times: list[int | None] = list(accumulate(_unpack_times(columns.times)))
    for position in columns.unknown:
        times.insert(position, None)
    if len(times) != len(versions):
        msg = "columns of different lengths"
        raise ValueError(msg)
    named = document.tags
    if document.latest is not None:
        named = [("latest", document.latest), *named]
    tags = {tag: _at(versions, v) if isinstance(v, int) else v for tag, v in named}
    deprecated = {_at(versions, index): message for index, message in document.deprecated}
    return versions, times, tags, deprecated


def _unpacked(packed: bytes) -> bytes:
    """Return the decompressed columns, read in chunks up to ``_PACKED_MAX`` bytes.

    The frame carries no content size (see ``_compressor``): a bound keeps a damaged or forged
    row from expanding without limit. Raises ``zstandard.ZstdError`` or ``ValueError``.
    """
    chunks: list[bytes] = []
    size = 0
    with _decompressor().stream_reader(packed) as reader:
        while chunk := reader.read(_CHUNK):
            size += len(chunk)
            if size > _PACKED_MAX:
                msg = "packed columns too large"
                raise ValueError(msg)
            chunks.append(chunk)
    return b"".join(chunks)


def _with_tails(cores: list[str], columns: _Columns) -> list[str]:
    """Return each core followed by its label and its ``-rest`` (see ``_columns``).

    Raises ``IndexError`` or ``ValueError`` when the references do not match the tables.
    """
    label_refs = _unpack(columns.label_refs, signed=False)
    # Index -1 is the empty label of a version without one.
    label_table = [*columns.labels.split("\n"), ""]
    new = itertools.count()
    label_index = [
        -1 if ref < 2 else next(new) if ref < 4 else (ref >> 1) - 2  # noqa: PLR2004 - see _columns
        for ref in label_refs
    ]
    tails = list(map(label_table.__getitem__, label_index))
    rest_refs = _unpack(columns.rest_refs, signed=False)
    if rest_refs:
        rest_table = [
            "-" + head + end
            for head, end in zip(
                columns.rests.split("\n"), columns.rest_ends.split("\n"), strict=True
            )
        ]
        new = itertools.count()
        rests = [rest_table[next(new) if ref == 0 else ref - 1] for ref in rest_refs]
        with_rest = [position for position, ref in enumerate(label_refs) if ref & 1]
        if len(with_rest) != len(rests):
            msg = "rest references and rests differ in number"
            raise ValueError(msg)
        for position, rest in zip(with_rest, rests, strict=True):
            tails[position] += rest
    if len(tails) != len(cores):
        msg = "labels and cores differ in number"
        raise ValueError(msg)
    return list(map(operator.add, cores, tails))


def _at(versions: list[str], position: int) -> str:
    """Return the stored version at ``position``; raise ``IndexError`` outside the list."""
    if position < 0:
        raise IndexError(position)
    return versions[position]


_U32 = next(code for code in "ILH" if array(code).itemsize == 4)  # noqa: PLR2004 - 4 bytes
_U32_MAX = 0xFFFFFFFF


def _pack_times(deltas: list[int]) -> _Ints:
    """Return publish-time deltas as little-endian uint32 bytes, or as the list when long.

    Fixed width rather than LEB128 so that ``_unpack_times`` reads them in C; a list when a
    value does not fit (a time before 1970 or after 2106).
    """
    if len(deltas) > _VARINT_MAX or not all(0 <= delta <= _U32_MAX for delta in deltas):
        return deltas
    packed = array(_U32, deltas)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def _unpack_times(column: _Ints) -> list[int]:
    """Return the deltas of a column written by ``_pack_times``."""
    if isinstance(column, list):
        return column
    unpacked = array(_U32)
    unpacked.frombytes(column)
    if sys.byteorder == "big":
        unpacked.byteswap()
    return unpacked.tolist()


def _end(rest: str) -> int:
    """Return where the last ``-``-separated field of a rest begins (its length when none)."""
    index = rest.rfind("-")
    return index if index > 0 else len(rest)


def _pack(values: list[int], *, signed: bool) -> _Ints:
    """Return ``values`` as LEB128 bytes (ZigZag when ``signed``), or as the list when long."""
    if len(values) > _VARINT_MAX:
        return values
    out = bytearray()
    for value in values:
        number = (value << 1 if value >= 0 else ~(value << 1)) if signed else value
        while number > 0x7F:  # noqa: PLR2004 - seven bits a byte
            out.append(number & 0x7F | 0x80)
            number >>= 7
        out.append(number)
    return bytes(out)


def _unpack(column: _Ints, *, signed: bool) -> list[int]:
    """Return the integers of a column written by ``_pack``."""
    if isinstance(column, list):
        return column
    if column.isascii():  # every value in one byte: no Python loop over the bytes
        return [n >> 1 ^ -(n & 1) for n in column] if signed else list(column)
    out: list[int] = []
    number = shift = 0
    for byte in column:
        number |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            continue
        out.append((number >> 1 if not number & 1 else ~(number >> 1)) if signed else number)
        number = shift = 0
    return out


def _text(raw: msgspec.Raw | None) -> str | None:
    """Return undecoded JSON as a string when it is one (``None`` for any other value)."""
    if raw is None or not bytes(raw).startswith(b'"'):
        return None
    return msgspec.json.decode(raw, type=str)


def _epoch(raw: msgspec.Raw | None) -> int | None:
    return epoch_seconds(_text(raw))


def _deprecation(raw: msgspec.Raw) -> str | None:
    """Return the deprecation message; ``""`` un-deprecates, other non-strings say "deprecated".

    ``null`` and ``false`` (like an absent field) mean not deprecated.
    """
    text = bytes(raw)
    if text.startswith(b'"'):
        message = msgspec.json.decode(raw, type=str)
        return message if message.strip() else None
    if text in {b"null", b"false"}:
        return None
    return "deprecated"


# The dependencies of one version document (``cache warm``): JSON ``[[name, range], …]``.
DEPENDENCIES_REPRESENTATION = "npm-version-deps-v1"


class _VersionDocument(msgspec.Struct, frozen=True):
    """A version document's ``dependencies``: values stay raw, only strings are kept."""

    dependencies: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)


_VERSION_DECODER = msgspec.json.Decoder(_VersionDocument)


def derive_dependencies(content: bytes) -> bytes:
    """Reduce a version document to its run-time ``dependencies`` as ``[[name, range], …]``.

    ``devDependencies`` and ``peerDependencies`` are not installed with the package; a range
    that is not a string is dropped. Raises ``RegistryError`` for a body that is no document.
    """
    try:
        document = _VERSION_DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable npm version document: {describe_decode_error(exc)}"
        raise RegistryError(msg) from None
    pairs = [
        [name, text]
        for name, raw in document.dependencies.items()
        if (text := _text(raw)) is not None
    ]
    return msgspec.json.encode(pairs)


async def dependencies(
    fetch: Fetch,
    base_url: str,
    package_name: str,
    version: str,
    *,
    extras: frozenset[str] = frozenset(),  # noqa: ARG001 - npm has no extras
) -> list[Declared]:
    """The ``dependencies`` of ``package_name@version`` from ``GET /<name>/<version>``.

    The version document is the one npm's install uses (``npm/registry:docs/responses/
    package-metadata.md``). Raises ``PackageNotFound`` on 404/410, ``RegistryError`` otherwise.
    """
    url = f"{package_url(base_url, package_name)}/{quote(url_safe_name(version), safe='')}"
    response = await fetch(
        url,
        headers={"Accept": _ACCEPT},
        representation=DEPENDENCIES_REPRESENTATION,
        derive=derive_dependencies,
    )
    what = f"npm package {package_name!r} version {version}"
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    try:
        pairs = msgspec.json.decode(response.content, type=list[tuple[str, str]])
    except msgspec.DecodeError:
        msg = f"{what}: unusable stored dependencies"
        raise RegistryError(msg) from None
    return [Declared(name, spec) for name, spec in pairs]


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=npm_versioning.ID,
    get_catalog=get_catalog,
    single_document=SingleDocument(request=catalog_request, build=catalog_from),
    release_times=None,  # the catalog document carries every publish time it knows
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=dependencies,
)
