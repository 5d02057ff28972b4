"""Docker credentials (``~/.docker/config.json``, ``$DOCKER_CONFIG``) and image base URLs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.credentials import RegistryAccess, docker_logins, image_base
from patchula.errors import ConfigError
from patchula.http.fetcher import Fetcher
from patchula.settings import Settings, load_settings
from tests.fake_registry.registry import FakeRegistry

# Stand-ins, never real credentials.
PASSWORD = "pw-STANDIN-4444"  # noqa: S105
HUB = "https://index.docker.io/v1/"


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _basic(user: str, password: str) -> str:
    return "Basic " + _auth(user, password)


def _config(folder: Path, document: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = document if isinstance(document, str) else json.dumps(document)
    (folder / "config.json").write_text(text)
    return folder


def _access(
    home: Path, env: dict[str, str] | None = None, settings: Settings | None = None
) -> RegistryAccess:
    return RegistryAccess(settings or Settings(), env=env or {}, home=home)


def _header(access: RegistryAccess, url: str) -> str | None:
    credential = access.for_checkout(None).credentials.for_url(url)
    return credential.value if credential is not None else None


def test_auths_entries_become_basic_credentials_for_their_hosts(tmp_path: Path) -> None:
    """``auth`` and ``username``/``password`` entries; keys as hosts or URLs; scoped per host."""
    _config(
        tmp_path / ".docker",
        {
            "auths": {
                "https://ghcr.io": {"auth": _auth("octo", PASSWORD)},
                "registry.example.com:5000": {"username": "me", "password": PASSWORD},
                "localhost:5000": {"auth": _auth("local", PASSWORD)},
            }
        },
    )
    access = _access(tmp_path)
    assert _header(access, "https://ghcr.io/v2/o/i/tags/list") == _basic("octo", PASSWORD)
    assert _header(access, "https://ghcr.io/token?scope=x") == _basic("octo", PASSWORD)
    assert _header(access, "https://registry.example.com:5000/v2/a/b/tags/list") == _basic(
        "me", PASSWORD
    )
    # A loopback registry is reached over http: its login goes there.
    assert _header(access, "http://localhost:5000/v2/a/tags/list") == _basic("local", PASSWORD)
    assert _header(access, "https://ghcr.io.evil.example/v2/") is None
    assert _header(access, "http://ghcr.io/v2/") is None
    assert _header(access, "https://registry.example.com/v2/") is None
    assert access.warnings == []
    credential = access.for_checkout(None).credentials.for_url("https://ghcr.io/v2/")
    assert credential is not None
    assert credential.source == "~/.docker/config.json"
    assert PASSWORD not in repr(access)
    assert _auth("octo", PASSWORD) not in repr(credential)


@pytest.mark.parametrize("key", [HUB, "docker.io", "index.docker.io", "registry-1.docker.io"])
def test_docker_hubs_login_goes_to_the_registry_and_its_token_service(
    tmp_path: Path, key: str
) -> None:
    """Docker Hub's entry is sent to registry-1.docker.io and auth.docker.io, nowhere else."""
    _config(tmp_path / ".docker", {"auths": {key: {"auth": _auth("hubber", PASSWORD)}}})
    access = _access(tmp_path)
    expected = _basic("hubber", PASSWORD)
    assert _header(access, "https://registry-1.docker.io/v2/library/nginx/tags/list") == expected
    assert _header(access, "https://auth.docker.io/token?service=registry.docker.io") == expected
    assert _header(access, "https://hub.docker.com/v2/namespaces/library/repositories") is None
    assert _header(access, "https://ghcr.io/v2/") is None


def test_docker_hubs_login_follows_a_configured_mirror(tmp_path: Path) -> None:
    """With ``--registry docker=URL`` the Hub login goes to that base (and auth.docker.io)."""
    _config(tmp_path / ".docker", {"auths": {HUB: {"auth": _auth("hubber", PASSWORD)}}})
    settings = Settings(registries={"docker": "http://127.0.0.1:8123"})
    access = _access(tmp_path, settings=settings)
    assert _header(access, "http://127.0.0.1:8123/v2/library/nginx/tags/list") == _basic(
        "hubber", PASSWORD
    )
    assert _header(access, "https://registry-1.docker.io/v2/") is None


def test_docker_config_env_names_the_folder(tmp_path: Path) -> None:
    """``$DOCKER_CONFIG/config.json`` replaces ``~/.docker/config.json``."""
    _config(tmp_path / ".docker", {"auths": {"ghcr.io": {"auth": _auth("home", PASSWORD)}}})
    elsewhere = _config(tmp_path / "elsewhere", {"auths": {"ghcr.io": {"auth": _auth("env", "x")}}})
    access = _access(tmp_path, env={"DOCKER_CONFIG": str(elsewhere)})
    assert _header(access, "https://ghcr.io/v2/") == _basic("env", "x")
    credential = access.for_checkout(None).credentials.for_url("https://ghcr.io/v2/")
    assert credential is not None
    assert credential.source == "$DOCKER_CONFIG/config.json"


def test_unsupported_helpers_and_refresh_tokens_are_warnings_without_values(
    tmp_path: Path,
) -> None:
    """credsStore, credHelpers and identitytoken are named and skipped; no value is shown."""
    _config(
        tmp_path / ".docker",
        {
            "credsStore": "secretservice-STANDIN",
            "credHelpers": {"123.dkr.ecr.example.com": "ecr-login-STANDIN"},
            "auths": {
                "ghcr.io": {"identitytoken": "refresh-STANDIN-5555"},
                "quay.io": {"auth": _auth("q", PASSWORD)},
                "broken.example": {"auth": "%%%not-base64"},
                "nocolon.example": {"auth": base64.b64encode(b"just-a-token").decode()},
                "listed.example": {},
            },
        },
    )
    access = _access(tmp_path)
    text = "\n".join(access.warnings)
    assert "credsStore" in text
    assert "credHelpers" in text
    assert "123.dkr.ecr.example.com" in text
    assert "'ghcr.io' has an identitytoken (a refresh token), which is not supported" in text
    assert "'broken.example': auth is not base64; skipped" in text
    assert "'nocolon.example': auth is not base64 of user:password; skipped" in text
    assert "listed.example" not in text  # an empty entry (a helper's list) is no problem
    for secret in ("secretservice-STANDIN", "ecr-login-STANDIN", "refresh-STANDIN-5555", "%%%"):
        assert secret not in text
    assert all(w.startswith("~/.docker/config.json: ") for w in access.warnings)
    assert _header(access, "https://ghcr.io/v2/") is None
    assert _header(access, "https://quay.io/v2/") == _basic("q", PASSWORD)


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"auths": []}', "auths is not an object"),
        ('{"auths": {"ghcr.io": "x"}}', "auths entry 'ghcr.io' is not usable"),
        ("[" * 100_000, "not valid JSON"),
    ],
)
def test_a_malformed_config_is_a_warning_naming_the_file(text: str, warning: str) -> None:
    """Damage never raises: one warning naming the file, and no credential."""
    logins, warnings = docker_logins(text, "~/.docker/config.json")
    assert logins == []
    assert len(warnings) == 1
    assert warnings[0].startswith("~/.docker/config.json: ")
    assert warning in warnings[0]


@pytest.mark.parametrize(
    ("host", "insecure", "expected"),
    [
        ("docker.io", (), "https://registry-1.docker.io"),
        ("ghcr.io", (), "https://ghcr.io"),
        ("GHCR.io", (), "https://ghcr.io"),
        ("localhost:5000", (), "http://localhost:5000"),
        ("localhost", (), "http://localhost"),
        ("127.0.0.1:5000", (), "http://127.0.0.1:5000"),
        ("127.8.9.10", (), "http://127.8.9.10"),
        ("[::1]:5000", (), "http://[::1]:5000"),
        ("registry.example.com:5000", (), "https://registry.example.com:5000"),
        (
            "registry.example.com:5000",
            ("registry.example.com:5000",),
            "http://registry.example.com:5000",
        ),
        (
            "registry.example.com:5000",
            ("registry.example.com",),
            "http://registry.example.com:5000",
        ),
        (
            "registry.example.com:5000",
            ("registry.example.com:5001",),
            "https://registry.example.com:5000",
        ),
        ("localhost.example.com", (), "https://localhost.example.com"),
        ("128.0.0.1", (), "https://128.0.0.1"),
    ],
)
def test_image_base_urls(host: str, insecure: tuple[str, ...], expected: str) -> None:
    """Docker Hub → the docker registry; others https, http only for loopback and insecure."""
    assert image_base(host, {}, frozenset(insecure)) == expected


def test_checkout_access_base_url_for_images(tmp_path: Path) -> None:
    """``base_url("docker", …)`` honours the docker mirror and insecure registries."""
    settings = Settings(
        registries={"docker": "https://mirror.example/"},
        insecure_registries=("Registry.Local:5000",),
    )
    view = _access(tmp_path, settings=settings).for_checkout(None)
    assert view.base_url("docker", "docker.io/library/python") == "https://mirror.example"
    assert view.base_url("docker", "ghcr.io/o/img") == "https://ghcr.io"
    assert view.base_url("docker", "registry.local:5000/a/b") == "http://registry.local:5000"
    assert view.base_url("docker", "localhost:5000/a/b") == "http://localhost:5000"
    default = _access(tmp_path).for_checkout(None)
    assert default.base_url("docker", "docker.io/library/python") == "https://registry-1.docker.io"


def test_insecure_registries_from_flag_env_and_config(tmp_path: Path) -> None:
    """``--insecure-registry`` (repeatable), ``PATCHULA_INSECURE_REGISTRIES`` and the config key."""
    (tmp_path / "patchula.toml").write_text('insecure-registries = ["a.example:5000"]\n')
    assert load_settings({}, env={}, cwd=tmp_path).insecure_registries == ("a.example:5000",)
    env = {"PATCHULA_INSECURE_REGISTRIES": "b.example, C.example:81"}
    from_env = load_settings({}, env=env, cwd=tmp_path)
    assert from_env.insecure_registries == ("b.example", "c.example:81")
    flags = {"insecure_registries": ["d.example", "d.example", "[::2]:5000"]}
    assert load_settings(flags, env=env, cwd=tmp_path).insecure_registries == (
        "d.example",
        "[::2]:5000",
    )
    with pytest.raises(
        ConfigError, match=r"--insecure-registry: .*host:port \(no scheme or path\), got 'http://x'"
    ):
        load_settings({"insecure_registries": ["http://x"]}, env={}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="PATCHULA_INSECURE_REGISTRIES"):
        load_settings({}, env={"PATCHULA_INSECURE_REGISTRIES": "x:port"}, cwd=tmp_path)


@pytest.mark.anyio
async def test_a_docker_login_reaches_a_private_registrys_token_service(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A login for a loopback registry goes to its token realm; the token stays off disk."""
    oci = fake_registry.url("oci")
    host = oci.removeprefix("http://")
    _config(tmp_path / ".docker", {"auths": {host: {"auth": _auth("robot", PASSWORD)}}})
    fake_registry.oci.token_credential = _basic("robot", PASSWORD)
    access = _access(tmp_path)
    view = access.for_checkout(None)
    base = view.base_url("docker", f"{host}/library/nginx")
    assert base == oci
    cache = Cache.open(tmp_path / "cache.sqlite3")
    fetcher = Fetcher(cache=cache, credentials=access)
    with RegistryAccess.using(view):
        response = await fetcher(
            f"{base}/v2/library/nginx/tags/list", scope="repository:library/nginx:pull"
        )
    await fetcher.aclose()
    cache.close()
    assert response.status == 200
    assert fake_registry.host("oci").authorized_routes["GET /token"] == 1
    data = (tmp_path / "cache.sqlite3").read_bytes()
    assert all(token.encode() not in data for token in fake_registry.oci.issued)
    assert _auth("robot", PASSWORD).encode() not in data
