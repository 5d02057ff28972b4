"""Credential sources: .npmrc (user and checkout), NPM_CONFIG_REGISTRY, pip, netrc, GitHub."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from rich.pretty import pretty_repr

from patchula.credentials import (
    RegistryAccess,
    docker_logins,
    github_credential,
    github_graphql_url,
    netrc_logins,
    pip_index,
    read_npmrc,
)
from patchula.errors import ConfigError
from patchula.http.auth import basic_credential
from patchula.settings import Settings, load_settings

# Stand-ins, never real credentials.
TOKEN = "npm-tok-STANDIN-1111"  # noqa: S105
OTHER = "npm-tok-STANDIN-2222"
PASSWORD = "pw-STANDIN-3333"  # noqa: S105


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _home(tmp_path: Path, npmrc: str | None = None, netrc: str | None = None) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if npmrc is not None:
        (home / ".npmrc").write_text(npmrc)
    if netrc is not None:
        (home / ".netrc").write_text(netrc)
    return home


def _access(
    tmp_path: Path,
    *,
    npmrc: str | None = None,
    netrc: str | None = None,
    env: dict[str, str] | None = None,
    settings: Settings | None = None,
) -> RegistryAccess:
    return RegistryAccess(
        settings or Settings(),
        env=env or {},
        home=_home(tmp_path, npmrc, netrc),
        etc=tmp_path / "etc",
    )


def _header(access: RegistryAccess, url: str, root: Path | None = None) -> str | None:
    credential = access.for_checkout(root).credentials.for_url(url)
    return credential.value if credential is not None else None


def test_npmrc_comments_quotes_and_sections() -> None:
    """``#``/``;`` lines are comments, quotes are removed, keys under a [section] are ignored."""
    text = (
        "# c\n; c\nregistry = \"https://r.example.com/\"\nx='q'\n[section]\nregistry=https://no\n"
    )
    npmrc = read_npmrc(text, "~/.npmrc", {})
    assert npmrc.entries["registry"].value == "https://r.example.com/"
    assert npmrc.entries["x"].value == "q"
    assert npmrc.warnings == ()


def test_npmrc_env_expansion_and_unset_variable_warning() -> None:
    """``${VAR}`` expands; an unset one skips that line with a warning naming the variable only."""
    text = (
        "//a.example.com/:_authToken=${NPM_TOKEN}\n"
        "//b.example.com/:_authToken=${MISSING}\n"
        "//c.example.com/:_authToken=x${OPTIONAL?}\n"
    )
    npmrc = read_npmrc(text, "./.npmrc", {"NPM_TOKEN": TOKEN})
    assert npmrc.entries["//a.example.com/:_authToken"].value == TOKEN
    assert "//b.example.com/:_authToken" not in npmrc.entries
    assert npmrc.entries["//c.example.com/:_authToken"].value == "x"
    warning = (
        "./.npmrc line 2: environment variable MISSING is not set; "
        "//b.example.com/:_authToken is not used"
    )
    assert npmrc.warnings == (warning,)
    assert TOKEN not in repr(npmrc)


def test_npmrc_token_auth_and_username_password(tmp_path: Path) -> None:
    """``_authToken`` is Bearer; ``_auth`` and ``username`` + base64 ``_password`` are Basic."""
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    auth = base64.b64encode(b"u2:p2").decode()
    access = _access(
        tmp_path,
        npmrc=(
            f"//tok.example.com/npm/:_authToken={TOKEN}\n"
            f"//auth.example.com/:_auth={auth}\n"
            f"//user.example.com/:username=me\n//user.example.com/:_password={encoded}\n"
            "//user.example.com/:always-auth=true\n"
        ),
    )
    assert _header(access, "https://tok.example.com/npm/left-pad") == f"Bearer {TOKEN}"
    assert _header(access, "https://tok.example.com/other") is None
    assert _header(access, "https://auth.example.com/x") == f"Basic {auth}"
    assert _header(access, "https://user.example.com/x") == _basic("me", PASSWORD)
    source = access.for_checkout(None).credentials.for_url("https://tok.example.com/npm/a")
    assert source is not None
    assert source.source == "~/.npmrc"


def test_legacy_top_level_token_applies_to_the_default_registry_only(tmp_path: Path) -> None:
    """A top-level ``_authToken`` goes to the default registry, nowhere else."""
    access = _access(tmp_path, npmrc=f"registry=https://r.example.com/\n_authToken={TOKEN}\n")
    assert _header(access, "https://r.example.com/left-pad") == f"Bearer {TOKEN}"
    assert _header(access, "https://registry.npmjs.org/left-pad") is None


def test_scoped_registry_and_checkout_npmrc_win_for_that_checkout(tmp_path: Path) -> None:
    """``@acme:registry`` picks the base URL; the checkout's .npmrc wins over the user's."""
    access = _access(
        tmp_path,
        npmrc=f"@acme:registry=https://acme.example.com/npm/\n"
        f"//acme.example.com/npm/:_authToken={TOKEN}\n",
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".npmrc").write_text(
        "registry=https://mirror.example.com/\n"
        "//acme.example.com/npm/:_authToken=${CHECKOUT_TOKEN}\n"
    )
    access = RegistryAccess(
        Settings(),
        env={"CHECKOUT_TOKEN": OTHER},
        home=tmp_path / "home",
        etc=tmp_path / "etc",
    )
    plain = access.for_checkout(None)
    view = access.for_checkout(repo)
    assert plain.base_url("npm", "@acme/x") == "https://acme.example.com/npm"
    assert plain.base_url("npm", "left-pad") == "https://registry.npmjs.org"
    assert view.base_url("npm", "left-pad") == "https://mirror.example.com"
    assert view.base_url("npm", "@ACME/x") == "https://acme.example.com/npm"
    assert _header(access, "https://acme.example.com/npm/@acme%2fx") == f"Bearer {TOKEN}"
    assert _header(access, "https://acme.example.com/npm/@acme%2fx", repo) == f"Bearer {OTHER}"
    assert view.key != plain.key
    used = view.credentials.for_url("https://acme.example.com/npm/@acme%2fx")
    assert used is not None
    assert used.source == "./.npmrc"


def test_registry_flag_wins_over_npmrc_and_npm_config_registry(tmp_path: Path) -> None:
    """``--registry npm=`` is npm's ``--registry``: above NPM_CONFIG_REGISTRY and .npmrc."""
    env = {"NPM_CONFIG_REGISTRY": "https://env.example.com/"}
    access = _access(tmp_path, npmrc="registry=https://rc.example.com/\n", env=env)
    assert access.for_checkout(None).base_url("npm", "a") == "https://env.example.com"
    flagged = _access(
        tmp_path,
        npmrc="registry=https://rc.example.com/\n",
        env=env,
        settings=Settings(registries={"npm": "https://flag.example.com"}),
    )
    assert flagged.for_checkout(None).base_url("npm", "a") == "https://flag.example.com"


def test_npm_config_registry_userinfo_becomes_a_basic_credential(tmp_path: Path) -> None:
    """Userinfo in NPM_CONFIG_REGISTRY is taken out of the URL and sent as Basic to it only."""
    access = _access(
        tmp_path, env={"npm_config_registry": f"https://me:{PASSWORD}@env.example.com/npm/"}
    )
    view = access.for_checkout(None)
    assert view.base_url("npm", "a") == "https://env.example.com/npm"
    assert _header(access, "https://env.example.com/npm/a") == _basic("me", PASSWORD)
    assert _header(access, "https://env.example.com/other") is None


def test_registry_url_userinfo_is_stripped_in_settings(tmp_path: Path) -> None:
    """``--registry`` userinfo becomes a credential (source "registry URL"), not part of URLs."""
    settings = load_settings(
        {"registries": [f"npm=https://me:{PASSWORD}@r.example.com/npm/"]}, env={}, cwd=tmp_path
    )
    assert settings.registries == {"npm": "https://r.example.com/npm"}
    assert PASSWORD not in repr(settings)
    assert PASSWORD not in str(settings.model_dump())
    access = _access(tmp_path, settings=settings)
    assert _header(access, "https://r.example.com/npm/x") == _basic("me", PASSWORD)
    used = access.for_checkout(None).credentials.for_url("https://r.example.com/npm/x")
    assert used is not None
    assert used.source == "registry URL"


def test_usage_error_does_not_show_the_password(tmp_path: Path) -> None:
    """An unusable ``--registry`` value is reported with its userinfo redacted."""
    with pytest.raises(ConfigError) as caught:
        load_settings({"registries": [f"npm=ftp://me:{PASSWORD}@h"]}, env={}, cwd=tmp_path)
    assert PASSWORD not in str(caught.value)
    assert "***@h" in str(caught.value)


def test_pip_index_url_sets_the_pypi_base_and_a_credential(tmp_path: Path) -> None:
    """PIP_INDEX_URL's ``…/simple`` gives the PyPI base; its userinfo is a Basic credential."""
    env = {"PIP_INDEX_URL": f"https://me:{PASSWORD}@pypi.example.com/repo/simple/"}
    access = _access(tmp_path, env=env)
    assert access.for_checkout(None).base_url("pypi", "x") == "https://pypi.example.com/repo"
    assert _header(access, "https://pypi.example.com/repo/simple/x/") == _basic("me", PASSWORD)
    flagged = _access(tmp_path, env=env, settings=Settings(registries={"pypi": "https://p.test"}))
    assert flagged.for_checkout(None).base_url("pypi", "x") == "https://p.test"


def test_pip_conf_order(tmp_path: Path) -> None:
    """pip.conf files in pip's order; [install] over [global]; PIP_CONFIG_FILE last."""
    home = _home(tmp_path)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "pip.conf").write_text("[global]\nindex-url = https://etc/simple\n")
    assert pip_index({}, home, tmp_path / "etc") == (
        "https://etc/simple",
        str(tmp_path / "etc" / "pip.conf"),
    )
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nindex-url = https://g/simple\n[install]\nindex-url = https://i/simple\n"
    )
    assert pip_index({}, home, tmp_path / "etc") == ("https://i/simple", "~/.config/pip/pip.conf")
    explicit = tmp_path / "custom.conf"
    explicit.write_text("[global]\nindex-url = https://c/simple\n")
    found = pip_index({"PIP_CONFIG_FILE": str(explicit)}, home, tmp_path / "etc")
    assert found == ("https://c/simple", str(explicit))
    assert pip_index({"PIP_INDEX_URL": "https://e/simple"}, home)[0] == "https://e/simple"  # type: ignore[index]


def test_netrc_only_for_registry_hosts_without_another_credential(tmp_path: Path) -> None:
    """~/.netrc logins go to registries in use whose host has no other credential."""
    netrc = (
        f"machine registry.npmjs.org login me password {PASSWORD}\n"
        f"machine pypi.org login you password {PASSWORD}\n"
        f"default login any password {PASSWORD}\n"
    )
    access = _access(tmp_path, netrc=netrc, npmrc=f"//registry.npmjs.org/:_authToken={TOKEN}\n")
    assert _header(access, "https://registry.npmjs.org/a") == f"Bearer {TOKEN}"
    assert _header(access, "https://pypi.org/simple/a/") == _basic("you", PASSWORD)
    assert _header(access, "https://elsewhere.example.com/") is None


def test_netrc_path_from_env_and_damaged_file(tmp_path: Path) -> None:
    """NETRC names the file; a damaged one is not used and the warning shows no content."""
    broken = tmp_path / "netrc"
    broken.write_text(f"machine pypi.org login me password {PASSWORD} bogus {PASSWORD}\n")
    logins, warnings = netrc_logins(broken)
    assert logins == {}
    assert warnings
    assert PASSWORD not in warnings[0]
    access = _access(tmp_path, env={"NETRC": str(broken)})
    assert access.warnings == warnings


def test_github_token_scope() -> None:
    """GH_TOKEN over GITHUB_TOKEN, Bearer, scoped to GITHUB_API_URL or api.github.com."""
    plain = github_credential({"GITHUB_TOKEN": TOKEN})
    assert plain is not None
    assert (plain.scope, plain.value, plain.source) == (
        "https://api.github.com/",
        f"Bearer {TOKEN}",
        "GITHUB_TOKEN",
    )
    ghes = github_credential(
        {"GITHUB_TOKEN": TOKEN, "GH_TOKEN": OTHER, "GITHUB_API_URL": "https://ghe.example/api/v3"}
    )
    assert ghes is not None
    assert (ghes.scope, ghes.source) == ("https://ghe.example/api/v3/", "GH_TOKEN")


def test_http_registry_gets_the_nerf_dart_credential(tmp_path: Path) -> None:
    """A nerf-dart has no scheme: a plain-http registry on that host gets it, others https only."""
    access = _access(
        tmp_path,
        npmrc=f"registry=http://127.0.0.1:4873/\n//127.0.0.1:4873/:_authToken={TOKEN}\n"
        f"//r.example.com/:_authToken={OTHER}\n",
    )
    assert _header(access, "http://127.0.0.1:4873/a") == f"Bearer {TOKEN}"
    assert _header(access, "https://127.0.0.1:4873/a") == f"Bearer {TOKEN}"
    assert _header(access, "http://r.example.com/a") is None


def test_checkout_npmrc_that_leaves_the_checkout_is_not_read(tmp_path: Path) -> None:
    """A symlinked .npmrc pointing outside the checkout (or a FIFO) is not read."""
    outside = tmp_path / "outside"
    outside.write_text("registry=https://evil.example.com/\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".npmrc").symlink_to(outside)
    access = _access(tmp_path)
    assert access.for_checkout(repo).base_url("npm", "a") == "https://registry.npmjs.org"


def test_pip_index_that_is_not_a_simple_url_is_not_used(tmp_path: Path) -> None:
    """An index URL not ending in /simple is not used; the warning shows it redacted."""
    access = _access(tmp_path, env={"PIP_INDEX_URL": f"https://me:{PASSWORD}@p.example/+dev/"})
    assert access.for_checkout(None).base_url("pypi", "x") == "https://pypi.org"
    assert access.warnings == [
        "PIP_INDEX_URL: index https://***@p.example/+dev/ is not a …/simple index URL; not used"
    ]
    assert _header(access, "https://p.example/+dev/simple/x/") is None


def test_a_config_file_cannot_give_credentials_directly(tmp_path: Path) -> None:
    """``registry-credentials`` is filled from URL userinfo only, never from a file."""
    (tmp_path / "patchula.toml").write_text("registry-credentials = []\n")
    with pytest.raises(ConfigError, match="registry-credentials: unknown setting"):
        load_settings({}, env={}, cwd=tmp_path)


def _checkout(tmp_path: Path, npmrc: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / ".npmrc").write_text(npmrc)
    return repo


@pytest.mark.parametrize(
    ("user", "checkout", "expected"),
    [
        (  # the reported case: a checkout user name and password over a user token
            f"//r.example.com/:_authToken={TOKEN}\n",
            (
                "//r.example.com/:username=me\n"
                f"//r.example.com/:_password={base64.b64encode(PASSWORD.encode()).decode()}\n"
            ),
            _basic("me", PASSWORD),
        ),
        (  # a checkout _auth over a user token
            f"//r.example.com/:_authToken={TOKEN}\n",
            f"//r.example.com/:_auth={base64.b64encode(b'u2:p2').decode()}\n",
            _basic("u2", "p2"),
        ),
        (  # a checkout user name never pairs with the user file's password
            (
                "//r.example.com/:username=home\n"
                f"//r.example.com/:_password={base64.b64encode(b'home-pw').decode()}\n"
            ),
            "//r.example.com/:username=me\n",
            _basic("home", "home-pw"),
        ),
        (  # a checkout line naming an unset variable is no credential: the user's is sent
            f"//r.example.com/:_authToken={TOKEN}\n",
            "//r.example.com/:_authToken=${UNSET_STANDIN}\n",
            f"Bearer {TOKEN}",
        ),
    ],
)
def test_the_checkout_npmrc_credential_replaces_the_users_whatever_its_kind(
    tmp_path: Path, user: str, checkout: str, expected: str
) -> None:
    """For one nerf-dart the checkout's credential wins entirely; files are never mixed."""
    access = _access(tmp_path, npmrc=user)
    repo = _checkout(tmp_path, checkout)
    assert _header(access, "https://r.example.com/left-pad", repo) == expected


def test_within_one_npmrc_npm_order_holds(tmp_path: Path) -> None:
    """One file: token over _auth over user name and password; a nerf-dart over legacy keys."""
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    auth = base64.b64encode(b"u2:p2").decode()
    access = _access(
        tmp_path,
        npmrc=(
            "registry=https://r.example.com/\n"
            f"_authToken={OTHER}\n"
            f"//r.example.com/:username=me\n//r.example.com/:_password={encoded}\n"
            f"//r.example.com/:_auth={auth}\n"
            f"//r.example.com/:_authToken={TOKEN}\n"
            f"//s.example.com/:username=me\n//s.example.com/:_password={encoded}\n"
            f"//s.example.com/:_auth={auth}\n"
        ),
    )
    assert _header(access, "https://r.example.com/left-pad") == f"Bearer {TOKEN}"
    assert _header(access, "https://s.example.com/left-pad") == f"Basic {auth}"


def test_an_unusable_credential_line_explains_itself(tmp_path: Path) -> None:
    """An unset ``${VAR}`` or a non-base64 ``_password`` is why that scope got no credential."""
    access = _access(
        tmp_path,
        npmrc=(
            "//home.example.com/:_authToken=${UNSET_HOME_STANDIN}\n"
            "//shadowed.example.com/:_authToken=${UNSET_HOME_STANDIN}\n"
        ),
    )
    repo = _checkout(
        tmp_path,
        "@acme:registry=https://acme.example.com/npm/\n"
        "//acme.example.com/npm/:_authToken=${NPM_TOKEN}\n"
        "//b64.example.com/:username=me\n//b64.example.com/:_password=not base64!\n"
        f"//shadowed.example.com/:_authToken={TOKEN}\n"
        "//${UNSET_KEY_STANDIN}/:_authToken=x\n",
    )
    store = access.for_checkout(repo).credentials
    assert store.unused_for("https://acme.example.com/npm/@acme%2fx") == (
        "the credential in ./.npmrc line 2 was not used: environment variable NPM_TOKEN is not set"
    )
    assert store.unused_for("https://b64.example.com/x") == (
        "the credential in ./.npmrc line 4 was not used: _password is not base64"
    )
    assert store.unused_for("https://home.example.com/x") == (
        "the credential in ~/.npmrc line 1 was not used: "
        "environment variable UNSET_HOME_STANDIN is not set"
    )
    # The checkout's credential is sent there: the user file's unusable line does not matter.
    assert store.unused_for("https://shadowed.example.com/x") is None
    assert store.unused_for("https://acme.example.com/other/x") is None
    assert store.unused_for("https://elsewhere.example.com/x") is None
    assert (
        access.for_checkout(None).credentials.unused_for("https://acme.example.com/npm/x") is None
    )
    assert access.for_checkout(repo).key != access.for_checkout(None).key


def test_github_registry_is_the_base_and_the_token_scope(tmp_path: Path) -> None:
    """``--registry github=…/api/v3`` (GHES) is the GitHub datasources' base and token scope.

    REST under it and GraphQL at ``/api/graphql`` get the token; api.github.com does not.
    """
    settings = Settings(registries={"github": "https://ghe.example/api/v3"})
    access = _access(tmp_path, env={"GH_TOKEN": TOKEN}, settings=settings)
    view = access.for_checkout(None)
    assert view.base_url("github-tags", "acme/widget") == "https://ghe.example/api/v3"
    assert view.base_url("github-releases", "acme/widget") == "https://ghe.example/api/v3"
    assert _header(access, "https://ghe.example/api/v3/repos/acme/widget/tags") == f"Bearer {TOKEN}"
    assert _header(access, "https://ghe.example/api/graphql") == f"Bearer {TOKEN}"
    assert _header(access, "https://ghe.example/other") is None
    assert _header(access, "https://api.github.com/repos/acme/widget/tags") is None


def test_github_api_url_sets_the_github_registry(tmp_path: Path) -> None:
    """``GITHUB_API_URL`` (as Actions sets it on GHES) is the base when no registry is given."""
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": "https://ghe.example/api/v3/"}
    view = _access(tmp_path, env=env).for_checkout(None)
    assert view.registries["github"] == "https://ghe.example/api/v3"
    assert view.base_url("github-tags", "acme/widget") == "https://ghe.example/api/v3"
    default = _access(tmp_path, env={"GITHUB_TOKEN": TOKEN}).for_checkout(None)
    assert default.base_url("github-tags", "acme/widget") == "https://api.github.com"
    assert default.credentials.for_url("https://api.github.com/graphql") is not None
    assert TOKEN not in repr(default)


def test_github_graphql_url() -> None:
    """GraphQL is ``{base}/graphql``; GHES's ``/api/v3`` has it at ``/api/graphql``."""
    assert github_graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert github_graphql_url("https://ghe.example/api/v3/") == "https://ghe.example/api/graphql"


def test_no_secret_reaches_a_repr_or_a_pretty_print(tmp_path: Path) -> None:
    """Secrets stay out of ``repr`` and of rich's pretty printer, at every level of nesting.

    rich lists a ``msgspec.Struct``'s fields through its ``__rich_repr__`` and honours a
    dataclass field's ``repr=False``: the values holding a secret stay dataclasses, and the
    Structs holding those values show only what they show.
    """
    npmrc = read_npmrc(
        f"//r.example.com/:_authToken={TOKEN}\n//r.example.com/:_password={PASSWORD}\n",
        "~/.npmrc",
        {},
    )
    login = json.dumps({"auths": {"ghcr.io": {"username": "octo", "password": PASSWORD}}})
    logins, _ = docker_logins(login, "~/.docker/config.json")
    access = _access(
        tmp_path, npmrc=f"//registry.npmjs.org/:_authToken={TOKEN}\n", env={"GH_TOKEN": OTHER}
    )
    view = access.for_checkout(None)
    credential = view.credentials.for_url("https://registry.npmjs.org/left-pad")
    assert credential is not None
    assert credential.value == f"Bearer {TOKEN}"  # the values below do hold the secrets
    assert logins[0].password == PASSWORD
    values: list[object] = [
        npmrc,
        logins,
        view,
        credential,
        basic_credential("me", PASSWORD, "https://h.example/", "URL"),
    ]
    for value in values:
        for shown in (repr(value), pretty_repr(value)):
            for secret in (
                TOKEN,
                OTHER,
                PASSWORD,
                base64.b64encode(f"me:{PASSWORD}".encode()).decode(),
            ):
                assert secret not in shown, (type(value).__name__, shown)
