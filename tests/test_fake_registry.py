"""The loopback fake registry speaks each wire protocol and its knobs do what they say."""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fake_registry import HOST_NAMES, FakeRegistry, encode_path, http_date, index_path

T0 = datetime(2025, 1, 6, 9, 30, tzinfo=UTC)
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _get(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(url, timeout=10, **kwargs)


def _days(n: int) -> datetime:
    return T0 + timedelta(days=n)


def test_npm_scoped_packument_with_lower_and_upper_percent_2f(fake_registry: FakeRegistry) -> None:
    """``/@types%2fnode`` and ``/@types%2Fnode`` both serve the full packument with its time map."""
    base = fake_registry.url("npm")
    lower, upper = _get(f"{base}/@types%2fnode"), _get(f"{base}/@types%2Fnode")
    assert lower.status_code == upper.status_code == 200
    assert lower.json() == upper.json()
    assert lower.json()["time"]["24.0.3"] == "2025-06-18T21:06:08.954Z"
    assert lower.headers["content-type"] == "application/json"
    assert _get(f"{base}/@types%252fnode").status_code == 404


def test_npm_programmatic_package_in_full_and_abbreviated_shape(
    fake_registry: FakeRegistry,
) -> None:
    """``npm.add`` builds ``time`` with created/modified and deprecations; corgi has no time."""
    fake_registry.npm.add(
        "@acme/widget",
        {"2.0.0": _days(0), "2.1.0": _days(7), "3.0.0-beta.2": _days(9), "2.2.0": None},
        deprecated={"2.0.0": "security fix in 2.1.0"},
        dist_tags={"next": "3.0.0-beta.2"},
    )
    base = fake_registry.url("npm")
    full = _get(f"{base}/@acme%2fwidget").json()
    assert full["dist-tags"] == {"next": "3.0.0-beta.2", "latest": "2.2.0"}
    assert full["time"] == {
        "created": "2025-01-06T09:30:00.000Z",
        "modified": "2025-01-15T09:30:00.000Z",
        "2.0.0": "2025-01-06T09:30:00.000Z",
        "2.1.0": "2025-01-13T09:30:00.000Z",
        "3.0.0-beta.2": "2025-01-15T09:30:00.000Z",
    }
    assert full["versions"]["2.0.0"]["deprecated"] == "security fix in 2.1.0"
    corgi = _get(
        f"{base}/@acme%2fwidget", headers={"Accept": "application/vnd.npm.install-v1+json"}
    )
    assert corgi.headers["content-type"] == "application/vnd.npm.install-v1+json"
    assert "time" not in corgi.json()
    assert corgi.json()["modified"] == "2025-01-15T09:30:00.000Z"
    assert _get(f"{base}/@acme%2fwidget/next").json()["version"] == "3.0.0-beta.2"


def test_pypi_json_api_redirects_to_the_project_spelling(fake_registry: FakeRegistry) -> None:
    """``/pypi/Requests/json`` 301s to ``/pypi/requests/json``, whose ``info.version`` skips rc."""
    base = fake_registry.url("pypi")
    moved = _get(f"{base}/pypi/Requests/json")
    assert moved.status_code == 301
    assert moved.headers["location"] == f"{base}/pypi/requests/json"
    document = _get(f"{base}/pypi/Requests/json", follow_redirects=True).json()
    assert document["info"]["version"] == "2.32.3"
    assert document["releases"]["2.32.1"] == []


def test_pypi_simple_json_html_and_redirects(fake_registry: FakeRegistry) -> None:
    """The Simple API gives JSON only for the PEP 691 Accept, else HTML, and 301 for odd names."""
    fake_registry.pypi.add("Foo__Bar.baz", {"1.0": _days(0)})
    base = fake_registry.url("pypi")
    as_json = _get(f"{base}/simple/foo-bar-baz/", headers={"Accept": SIMPLE_JSON})
    assert as_json.headers["content-type"] == SIMPLE_JSON
    assert as_json.json()["name"] == "foo-bar-baz"
    as_html = _get(f"{base}/simple/foo-bar-baz/")
    assert as_html.headers["content-type"].startswith("text/html")
    assert ">foo_bar_baz-1.0.tar.gz</a>" in as_html.text
    for odd in ("Foo__Bar.baz/", "foo-bar-baz"):
        moved = _get(f"{base}/simple/{odd}")
        assert (moved.status_code, moved.headers["location"]) == (
            301,
            f"{base}/simple/foo-bar-baz/",
        )


def test_pypi_programmatic_yanks_files_and_status(fake_registry: FakeRegistry) -> None:
    """``pypi.add`` dates files, yanks with a reason, lists file-less versions and a status."""
    fake_registry.pypi.add(
        "acme-widget",
        {
            "1.4.0": _days(0),
            "1.5.0rc1": _days(3),
            "1.5.0": _days(5),
            "1.6.0": _days(8),
            "0.1": None,
        },
        yanked={"1.6.0": "broken on 3.13"},
        requires_python=">=3.9",
        status="archived",
    )
    base = fake_registry.url("pypi")
    page = _get(f"{base}/simple/acme-widget/", headers={"Accept": SIMPLE_JSON}).json()
    assert page["versions"] == ["1.4.0", "1.5.0rc1", "1.5.0", "1.6.0", "0.1"]
    assert page["project-status"] == {"status": "archived", "reason": ""}
    sdist = next(f for f in page["files"] if f["filename"] == "acme_widget-1.5.0.tar.gz")
    assert sdist["upload-time"] == "2025-01-11T09:30:00.000000Z"
    assert sdist["requires-python"] == ">=3.9"
    assert {f["yanked"] for f in page["files"] if "1.6.0" in f["filename"]} == {"broken on 3.13"}
    assert _get(f"{base}/pypi/acme-widget/json").json()["info"]["version"] == "1.5.0"


@pytest.mark.parametrize(
    ("name", "path"),
    [("a", "1/a"), ("cc", "2/cc"), ("syn", "3/s/syn"), ("Serde_Json", "se/rd/serde_json")],
)
def test_crates_index_path_scheme(fake_registry: FakeRegistry, name: str, path: str) -> None:
    """Crates of 1, 2, 3 and 4+ letters live at the lower-cased sparse-index path Cargo computes."""
    fake_registry.crates.add(name, {"1.0.0": _days(0)}, pubtime=name != "cc")
    assert index_path(name) == path
    base = fake_registry.url("crates-index")
    line = json.loads(_get(f"{base}/{path}").text)
    assert (line["name"], line["vers"], line["yanked"]) == (name, "1.0.0", False)
    assert ("pubtime" in line) is (name != "cc")
    assert _get(f"{base}/config.json").json()["api"] == fake_registry.url("crates-api")


def test_crates_index_lines_and_api_seek_pagination(fake_registry: FakeRegistry) -> None:
    """The index has a line per version (yanked too); the API pages by ``seek``, not ``page``."""
    base_index, base_api = fake_registry.url("crates-index"), fake_registry.url("crates-api")
    lines = [json.loads(x) for x in _get(f"{base_index}/se/rd/serde").text.splitlines()]
    assert [(x["vers"], x["yanked"]) for x in lines][:2] == [("1.0.210", False), ("1.0.211", True)]
    assert lines[0]["pubtime"] == "2024-09-06T20:08:06Z"
    assert _get(f"{base_index}/Se/rd/serde").status_code == 404
    seen, query = [], "?per_page=2"
    while query:
        body = _get(f"{base_api}/api/v1/crates/serde/versions{query}").json()
        seen += [v["num"] for v in body["versions"]]
        query = body["meta"]["next_page"]
    assert seen == ["1.0.220-rc.1", "1.0.219", "1.0.212", "1.0.211", "1.0.210"]
    assert _get(f"{base_api}/api/v1/crates/serde/versions?page=2").status_code == 400
    crate = _get(f"{base_api}/api/v1/crates/serde").json()["crate"]
    assert (crate["max_stable_version"], crate["newest_version"]) == ("1.0.219", "1.0.220-rc.1")


def test_goproxy_case_encoding_retractions_and_missing(fake_registry: FakeRegistry) -> None:
    """``github.com/!burnt!sushi/toml`` resolves; bare capitals 400; unknown modules 404 or 410."""
    fake_registry.goproxy.add(
        "github.com/BurntSushi/toml",
        {
            "v1.4.0": _days(0),
            "v1.5.0-RC1": _days(1),
            "v1.4.1": _days(2),
            "v0.0.0-20250107093000-abcdef123456": None,
        },
        retracted={"v1.4.1": "published from the wrong branch"},
    )
    base = fake_registry.url("goproxy")
    escaped = encode_path("github.com/BurntSushi/toml")
    assert escaped == "github.com/!burnt!sushi/toml"
    assert _get(f"{base}/{escaped}/@v/list").text == "v1.4.0\nv1.5.0-RC1\nv1.4.1\n"
    assert _get(f"{base}/{escaped}/@latest").json() == {
        "Version": "v1.4.1",
        "Time": "2025-01-08T09:30:00Z",
    }
    assert _get(f"{base}/{escaped}/@v/v1.5.0-!r!c1.info").json()["Version"] == "v1.5.0-RC1"
    mod = _get(f"{base}/{escaped}/@v/v1.4.1.mod").text
    assert "module github.com/BurntSushi/toml\n" in mod
    assert "retract v1.4.1 // published from the wrong branch" in mod
    assert _get(f"{base}/github.com/BurntSushi/toml/@v/list").status_code == 400
    assert _get(f"{base}/example.com/nope/@v/list").status_code == 404
    fake_registry.goproxy.missing_status = 410
    assert _get(f"{base}/example.com/nope/@v/list").status_code == 410


def test_oci_token_flow_and_link_pagination(fake_registry: FakeRegistry) -> None:
    """A 401 challenge leads to a token; ``Link: rel="next"`` pages tags in lexical order."""
    base = fake_registry.url("oci")
    challenge = _get(f"{base}/v2/")
    assert challenge.status_code == 401
    assert (
        challenge.headers["www-authenticate"]
        == f'Bearer realm="{base}/token",service="fake-registry"'
    )
    assert _get(f"{base}/v2/library/nginx/tags/list").status_code == 401
    scope = {"scope": "repository:library/nginx:pull", "service": "fake-registry"}
    token = _get(f"{base}/token", params=scope).json()
    assert token["token"] == token["access_token"]
    assert token["expires_in"] == 300
    auth = {"Authorization": f"Bearer {token['token']}"}
    tags, url, pages = [], f"{base}/v2/library/nginx/tags/list?n=4", 0
    while url:
        page = _get(url, headers=auth)
        tags += page.json()["tags"]
        pages += 1
        link = page.headers.get("link", "")
        url = base + link[1 : link.index(">")] if 'rel="next"' in link else ""
    assert pages == 3
    assert tags == sorted(tags)
    assert tags[:3] == ["1.26", "1.26.2", "1.27"]
    wrong = _get(f"{base}/token", params={"scope": "repository:nginx:pull"}).json()["token"]
    forbidden = _get(
        f"{base}/v2/library/nginx/tags/list", headers={"Authorization": f"Bearer {wrong}"}
    )
    assert forbidden.status_code == 401


def test_oci_manifest_head_and_get_by_tag_or_digest(fake_registry: FakeRegistry) -> None:
    """HEAD and GET on a manifest give ``Docker-Content-Digest`` and the index media type."""
    pinned = "sha256:" + "ab" * 32
    fake_registry.oci.add("acme/app", {"1.0": None, "1.1": pinned})
    base = fake_registry.url("oci")
    token = _get(f"{base}/token", params={"scope": "repository:acme/app:pull"}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    head = httpx.head(f"{base}/v2/acme/app/manifests/1.0", headers=auth)
    got = _get(f"{base}/v2/acme/app/manifests/1.0", headers=auth)
    assert head.headers["docker-content-digest"] == got.headers["docker-content-digest"]
    assert head.headers["content-type"] == "application/vnd.oci.image.index.v1+json"
    assert head.content == b""
    digest = got.headers["docker-content-digest"]
    assert _get(f"{base}/v2/acme/app/manifests/{digest}", headers=auth).content == got.content
    forced = httpx.head(f"{base}/v2/acme/app/manifests/1.1", headers=auth)
    assert forced.headers["docker-content-digest"] == pinned


def test_oci_raw_manifest_bodies_and_re_pushed_tags(fake_registry: FakeRegistry) -> None:
    """Bytes are served as the manifest body; adding a tag again points it at the new one."""
    fake_registry.oci.anonymous = True
    fake_registry.oci.add("acme/app", {"1.0": b"", "1.1": "sha256:" + "a" * 64})
    base = fake_registry.url("oci")
    empty = _get(f"{base}/v2/acme/app/manifests/1.0")
    assert (empty.content, empty.headers["docker-content-digest"]) == (
        b"",
        "sha256:" + hashlib.sha256(b"").hexdigest(),
    )
    fake_registry.oci.add("acme/app", {"1.1": "sha256:" + "b" * 64})
    head = httpx.head(f"{base}/v2/acme/app/manifests/1.1")
    assert head.headers["docker-content-digest"] == "sha256:" + "b" * 64
    assert _get(f"{base}/v2/acme/app/tags/list").json()["tags"] == ["1.0", "1.1"]


def test_github_rest_link_pagination_and_rate_headers(fake_registry: FakeRegistry) -> None:
    """Releases page through ``Link`` with ``x-ratelimit-*``; ``latest`` skips prereleases."""
    base = fake_registry.url("github")
    url, names = f"{base}/repos/actions/checkout/releases?per_page=2", []
    while url:
        page = _get(url)
        names += [r["tag_name"] for r in page.json()]
        url = page.links.get("next", {}).get("url", "")
    assert names == ["v5.0.0-beta.1", "v4.2.2", "v4.2.1", "v4.2.0", "v4.1.7"]
    assert page.headers["x-ratelimit-limit"] == "60"
    assert page.headers["x-ratelimit-remaining"] == "57"
    assert page.links["first"]["url"].endswith("page=1")
    latest = _get(f"{base}/repos/Actions/Checkout/releases/latest").json()
    assert latest["tag_name"] == "v4.2.2"
    tags = [t["name"] for t in _get(f"{base}/repos/actions/checkout/tags?per_page=100").json()]
    assert tags[:3] == ["v4", "v3", "v5.0.0-beta.1"]
    assert _get(f"{base}/repos/actions/missing/releases").status_code == 404


def test_github_graphql_cursor_pagination(fake_registry: FakeRegistry) -> None:
    """GraphQL pages ``releases`` and ``refs`` with ``after`` cursors and needs a token."""
    fake_registry.github.add_repo("acme", "widget", {f"v1.{i}.0": _days(i) for i in range(5)})
    url = fake_registry.url("github") + "/graphql"
    query = """query($o:String!,$r:String!,$after:String){ repository(owner:$o,name:$r){
      releases(first: 2, after: $after, orderBy:{field:CREATED_AT,direction:DESC}){
        pageInfo{ hasNextPage endCursor } nodes{ tagName publishedAt isLatest } }
      refs(refPrefix:"refs/tags/", first:100){ nodes{ name } } } rateLimit{ cost remaining } }"""
    auth = {"Authorization": "Bearer not-a-real-token"}
    assert httpx.post(url, json={"query": query}).status_code == 401
    tags: list[str] = []
    after = None
    while True:
        variables = {"o": "acme", "r": "widget", "after": after}
        answer = httpx.post(url, json={"query": query, "variables": variables}, headers=auth)
        data = answer.json()["data"]
        releases = data["repository"]["releases"]
        tags += [n["tagName"] for n in releases["nodes"]]
        if not releases["pageInfo"]["hasNextPage"]:
            break
        after = releases["pageInfo"]["endCursor"]
    assert tags == [f"v1.{i}.0" for i in range(5)]
    assert len(data["repository"]["refs"]["nodes"]) == 5
    assert data["rateLimit"]["cost"] == 1
    unknown = 'query{ repository(owner:"x", name:"y"){ releases(first:1){ nodes{ name } } } }'
    missing = httpx.post(url, json={"query": unknown}, headers=auth)
    assert missing.json()["errors"][0]["type"] == "NOT_FOUND"


def test_conditional_requests_answer_304(fake_registry: FakeRegistry) -> None:
    """A matching ETag or a later If-Modified-Since gives 304; a changed body gives a new ETag."""
    host = fake_registry.host("npm")
    url = fake_registry.url("npm") + "/left-pad"
    first = _get(url)
    assert first.headers["cache-control"] == "max-age=300"
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert _get(url, headers={"If-None-Match": etag}).status_code == 304
    assert _get(url, headers={"If-None-Match": f"W/{etag}"}).status_code == 304
    assert _get(url, headers={"If-Modified-Since": modified}).status_code == 304
    earlier = http_date(parsedate_to_datetime(modified) - timedelta(seconds=1))
    assert _get(url, headers={"If-Modified-Since": earlier}).status_code == 200
    assert host.not_modified == 3
    fake_registry.npm.add("left-pad", {"1.3.1": _days(0)})
    changed = _get(url, headers={"If-None-Match": etag, "If-Modified-Since": modified})
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag
    assert _get(url, headers={"If-Modified-Since": modified}).status_code == 200
    host.validators, host.cache_control = False, None
    bare = _get(url, headers={"If-None-Match": changed.headers["etag"]})
    assert bare.status_code == 200
    assert not {"etag", "last-modified", "cache-control"} & set(bare.headers)


@pytest.mark.parametrize(
    "retry_after",
    ["2", http_date(datetime(2030, 1, 1, tzinfo=UTC)), None, "soon-ish"],
    ids=["seconds", "http-date", "absent", "garbage"],
)
def test_fail_next_with_each_retry_after_form(
    fake_registry: FakeRegistry, retry_after: str | None
) -> None:
    """``fail_next`` answers the next n requests with 429 and the given Retry-After only."""
    host = fake_registry.host("pypi")
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    host.fail_next(2, status=429, headers=headers, body=b'{"message":"slow down"}')
    url = fake_registry.url("pypi") + "/pypi/requests/json"
    for _ in range(2):
        failed = _get(url)
        assert failed.status_code == 429
        assert failed.headers.get("retry-after") == retry_after
        assert failed.json() == {"message": "slow down"}
    assert _get(url).status_code == 200
    assert host.injected_failures == 2


def test_fail_next_default_is_retry_after_two_seconds(fake_registry: FakeRegistry) -> None:
    """By default ``fail_next`` sends ``Retry-After: 2``; ``server_error_next`` sends a bare 503."""
    host = fake_registry.host("github")
    host.fail_next()
    host.server_error_next()
    url = fake_registry.url("github") + "/repos/actions/checkout/tags"
    assert _get(url).headers["retry-after"] == "2"
    unavailable = _get(url)
    assert (unavailable.status_code, unavailable.headers.get("retry-after")) == (503, None)


def test_reset_and_truncate_raise_httpx_errors(fake_registry: FakeRegistry) -> None:
    """A reset connection and a short body raise httpx protocol errors; then service resumes."""
    host = fake_registry.host("crates-index")
    url = fake_registry.url("crates-index") + "/se/rd/serde"
    host.reset_next()
    with pytest.raises(httpx.RemoteProtocolError):
        _get(url)
    host.truncate_next()
    with pytest.raises(httpx.RemoteProtocolError):
        _get(url)
    assert _get(url).status_code == 200
    assert [entry.status for entry in host.log] == [0, 200, 200]
    assert host.injected_failures == 2


def test_latency_overlaps_sixteen_concurrent_requests(fake_registry: FakeRegistry) -> None:
    """With latency set, 16 concurrent requests are all in flight at once rather than queued."""
    host = fake_registry.host("goproxy")
    host.latency = 0.5
    url = fake_registry.url("goproxy") + "/golang.org/x/text/@v/list"
    ready = threading.Barrier(16)

    def get(_: int) -> int:
        # Each thread makes its client (TLS setup and all) first, then all send together: on a
        # loaded CI machine, client construction alone could outlast the latency.
        with httpx.Client(timeout=10) as client:
            ready.wait(timeout=30)
            return client.get(url).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(get, range(16)))
    assert statuses == [200] * 16
    assert host.peak_concurrency == 16


def test_request_counting_per_route_log_and_reset(fake_registry: FakeRegistry) -> None:
    """Requests are counted per decoded route and logged without any Authorization value."""
    host = fake_registry.host("npm")
    base = fake_registry.url("npm")
    _get(f"{base}/left-pad")
    _get(f"{base}/left-pad?write=true", headers={"Authorization": "Bearer s3cret"})
    _get(f"{base}/@types%2fnode")
    _get(f"{base}/nope")
    assert host.requests == 4
    assert host.requests_by_route == {"GET /left-pad": 2, "GET /@types/node": 1, "GET /nope": 1}
    assert host.authorized_requests == 1
    assert [(e.host, e.method, e.path, e.status) for e in host.log][-2:] == [
        ("npm", "GET", "/@types%2fnode", 200),
        ("npm", "GET", "/nope", 404),
    ]
    assert "s3cret" not in repr(host.log)
    assert fake_registry.host("pypi").requests == 0
    fake_registry.reset_stats()
    assert (host.requests, host.peak_concurrency, host.log) == (0, 0, [])


def test_registry_context_manager_with_empty_fixtures(tmp_path: Path) -> None:
    """``FakeRegistry(empty_dir)`` binds a port per host, serves no fixtures and stops cleanly."""
    with FakeRegistry(tmp_path) as registry:
        urls = registry.urls()
        assert len(set(urls.values())) == len(HOST_NAMES) == 11
        assert _get(urls["npm"] + "/left-pad").status_code == 404
    with pytest.raises(httpx.ConnectError):
        _get(urls["npm"] + "/left-pad")
