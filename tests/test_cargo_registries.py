"""Reading Cargo's registries and source replacement (``patchula.cargo_registries``)."""

from __future__ import annotations

from pathlib import Path

from patchula.cargo_registries import CargoConfig, CargoConfigs, read_layer
from patchula.credentials import RegistryAccess
from patchula.settings import Settings

# Test stand-ins, never real credentials.
ENV_TOKEN = "STANDIN-env-token-a1"  # noqa: S105
FILE_TOKEN = "STANDIN-file-token-b2"  # noqa: S105
CORP = '[registries.corp]\nindex = "sparse+https://crates.corp.example/index/"\n'


def _config(text: str, env: dict[str, str] | None = None) -> CargoConfig:
    return CargoConfig([read_layer(text, "./.cargo/config.toml")], env or {})


def test_sparse_registry_with_token_from_env_over_file() -> None:
    """The env token wins over one in the file; it is sent raw, scoped to the index."""
    config = _config(
        f'[registries.corp]\nindex = "sparse+https://crates.corp.example/index/"\n'
        f'token = "{FILE_TOKEN}"\n'
    )
    source = config.resolve("corp", mirror_configured=False)
    assert (source.index, source.alternative, source.skip) == (
        "https://crates.corp.example/index",
        True,
        None,
    )
    (credential,) = source.credentials
    assert (credential.value, credential.scope) == (
        FILE_TOKEN,
        "https://crates.corp.example/index/",
    )
    env = {"CARGO_REGISTRIES_CORP_TOKEN": ENV_TOKEN}
    (credential,) = _config(CORP, env).resolve("corp", mirror_configured=False).credentials
    assert (credential.header, credential.value) == ("Authorization", ENV_TOKEN)
    assert credential.source == "CARGO_REGISTRIES_CORP_TOKEN"
    assert ENV_TOKEN not in repr(credential)


def test_userinfo_in_the_index_url_is_basic_and_not_shown() -> None:
    """``sparse+https://user:pass@host/`` becomes Basic auth; the URL kept has no userinfo."""
    source = _config(
        '[registries.corp]\nindex = "sparse+https://me:STANDIN-pw-c3@crates.corp.example/"\n'
    ).resolve("corp", mirror_configured=False)
    assert source.index == "https://crates.corp.example"
    (credential,) = source.credentials
    assert credential.value.startswith("Basic ")


def test_env_index_wins_and_replacement_of_crates_io() -> None:
    """``CARGO_REGISTRIES_<NAME>_INDEX`` wins over the file; crates-io's replacement is noted."""
    text = (
        '[source.crates-io]\nreplace-with = "corp"\n'
        '[registries.corp]\nindex = "sparse+https://file.example/"\n'
    )
    env = {"CARGO_REGISTRIES_CORP_INDEX": "sparse+https://env.example/"}
    source = _config(text, env).resolve(None, mirror_configured=False)
    assert source.index == "https://env.example"
    assert source.alternative is False  # a mirror of crates.io: its web API still applies
    assert source.note == (
        "crates-io replaced by 'corp' (./.cargo/config.toml): looked up on https://env.example"
    )
    # --registry crates=URL wins over the replacement.
    assert _config(text, env).resolve(None, mirror_configured=True).index is None


def test_directory_source_and_unknown_registry() -> None:
    """A directory source is skipped with its kind; an undefined registry names where to set it."""
    text = (
        '[source.crates-io]\nreplace-with = "vendored"\n[source.vendored]\ndirectory = "vendor"\n'
    )
    source = _config(text).resolve(None, mirror_configured=False)
    assert source.skip == (
        "cargo source 'vendored' is a directory source (vendored crates) (crates-io replaced by"
        " 'vendored' (./.cargo/config.toml)): not looked up"
    )
    assert "[registries.ghost] index" in (
        _config("").resolve("ghost", mirror_configured=False).skip or ""
    )


def test_nearest_file_wins_legacy_name_first_and_user_files_last(tmp_path: Path) -> None:
    """Per key the nearest file wins; ``config`` beats ``config.toml``; $CARGO_HOME is last."""
    root = tmp_path / "repo"
    (root / ".cargo").mkdir(parents=True)
    (root / ".cargo" / "config.toml").write_text(
        '[registries.corp]\nindex = "sparse+https://root.example/"\n'
    )
    (root / "member" / ".cargo").mkdir(parents=True)
    (root / "member" / ".cargo" / "config").write_text(
        '[registries.corp]\nindex = "sparse+https://legacy.example/"\n'
    )
    (root / "member" / ".cargo" / "config.toml").write_text(
        '[registries.corp]\nindex = "sparse+https://ignored.example/"\n'
    )
    home = tmp_path / "home"
    (home / ".cargo").mkdir(parents=True)
    (home / ".cargo" / "config.toml").write_text(
        '[registries.user]\nindex = "sparse+https://user.example/"\n'
        '[registries.corp]\nindex = "sparse+https://user-corp.example/"\n'
    )
    (home / ".cargo" / "credentials.toml").write_text(
        f'[registries.user]\ntoken = "{FILE_TOKEN}"\n'
    )
    view = RegistryAccess(Settings(), env={}, home=home).for_checkout(root)
    assert isinstance(view.cargo, CargoConfigs)
    member = view.cargo.for_file("member/Cargo.toml")
    assert member.resolve("corp", mirror_configured=False).index == "https://legacy.example"
    top = view.cargo.for_file("Cargo.toml")
    assert top.resolve("corp", mirror_configured=False).index == "https://root.example"
    user = top.resolve("user", mirror_configured=False)
    assert user.index == "https://user.example"
    assert [c.source for c in user.credentials] == ["~/.cargo/credentials.toml"]
    # Without a home, no user file is read.
    bare = RegistryAccess(Settings(), env={}).for_checkout(root)
    assert bare.cargo is not None
    assert bare.cargo.for_file("Cargo.toml").resolve("user", mirror_configured=False).skip


def test_a_derived_view_sends_the_token_to_its_index_only(tmp_path: Path) -> None:
    """The crate's view holds the registry token for that index and is keyed apart."""
    (tmp_path / ".cargo").mkdir()
    (tmp_path / ".cargo" / "config.toml").write_text(CORP)
    access = RegistryAccess(Settings(), env={"CARGO_REGISTRIES_CORP_TOKEN": ENV_TOKEN})
    view = access.for_checkout(tmp_path)
    derived, source = view.crate_view("Cargo.toml", "corp")
    assert source.index == "https://crates.corp.example/index"
    assert derived.key != view.key
    assert derived.base_url("crates", "acme") == "https://crates.corp.example/index"
    sent = derived.credentials.for_url("https://crates.corp.example/index/ac/me/acme")
    assert sent is not None
    assert sent.value == ENV_TOKEN
    assert derived.credentials.for_url("https://index.crates.io/se/rd/serde") is None
    assert view.credentials.for_url("https://crates.corp.example/index/ac/me/acme") is None
    # Asked again, the same view (one lookup key per registry and credential).
    assert view.crate_view("Cargo.toml", "corp")[0] is derived


def test_registry_crates_io_is_crates_io() -> None:
    """``registry = "crates-io"`` is the default registry; its replacement applies to it too."""
    plain = _config("").resolve("crates-io", mirror_configured=False)
    assert (plain.index, plain.skip, plain.error) == (None, None, None)
    text = '[source.crates-io]\nreplace-with = "m"\n[source.m]\nregistry = "sparse+https://m.example/"\n'
    replaced = _config(text).resolve("crates-io", mirror_configured=False)
    assert (replaced.index, replaced.alternative) == ("https://m.example", False)
