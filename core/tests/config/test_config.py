"""The configuration: where each setting comes from, which source wins, and how errors read.

Every test runs in an empty temporary folder with its own user config path, so the real
``~/.config/engram`` and the developer's ``ENGRAM_*`` variables never leak in.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from engram.config import (
    ChunkingConfig,
    EngramConfig,
    SearchConfig,
    find_project_file,
    load_config,
    parse_overrides,
    plugin_options,
    user_config_path,
)
from engram.errors import ConfigError, PluginNotFound
from engram.registry import Entry, Registry


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as cwd, no ENGRAM_* variables, a user config path under tmp."""
    for name in list(os.environ):
        if name.startswith("ENGRAM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(tmp_path / "user" / "config.toml"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_file() -> Path:
    return Path(os.environ["ENGRAM_USER_CONFIG"])


# --- precedence: defaults < user file < project file < ENGRAM_* env < CLI overrides ------------

LAYERS = ("user", "project", "env", "cli")


@pytest.mark.parametrize("present", list(itertools.product([False, True], repeat=len(LAYERS))))
def test_highest_present_layer_wins(
    present: tuple[bool, ...], isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every combination of layers: search.limit comes from the highest one that sets it."""
    values = {"user": 2, "project": 3, "env": 4, "cli": 5}
    on = dict(zip(LAYERS, present, strict=True))
    if on["user"]:
        write(user_file(), f"[search]\nlimit = {values['user']}\n")
    if on["project"]:
        write(isolated / "engram.toml", f"[search]\nlimit = {values['project']}\n")
    if on["env"]:
        monkeypatch.setenv("ENGRAM_SEARCH__LIMIT", str(values["env"]))
    overrides = parse_overrides([f"search.limit={values['cli']}"]) if on["cli"] else None

    config = load_config(overrides)

    winners = [layer for layer in LAYERS if on[layer]]
    expected = values[winners[-1]] if winners else SearchConfig().limit
    assert config.search.limit == expected


def test_layers_merge_key_by_key(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A higher layer overrides only the keys it sets; the rest of a section comes from below."""
    write(user_file(), '[search]\nlimit = 2\nmin_score = 0.1\nrrf_k = 7\nmode = "keyword"\n')
    write(isolated / "engram.toml", "[search]\nmin_score = 0.2\nrrf_k = 8\nmode = 'vector'\n")
    monkeypatch.setenv("ENGRAM_SEARCH__RRF_K", "9")
    monkeypatch.setenv("ENGRAM_SEARCH__MODE", "hybrid")

    config = load_config({"search": {"mode": "keyword"}})

    assert config.search.limit == 2  # user file
    assert config.search.min_score == 0.2  # project file
    assert config.search.rrf_k == 9  # environment
    assert config.search.mode == "keyword"  # CLI override
    assert config.search.fusion == "weighted"  # default


def test_defaults_without_any_file() -> None:
    config = load_config()
    assert config.store.backend == "sqlite"
    assert config.embedder.provider == "local"
    assert config.chunking.describe() == "markdown:400/80"
    assert (config.search.vector_weight, config.search.keyword_weight) == (0.5, 0.5)
    assert config.search.keyword_scale == "ceiling"
    assert config.search.balance == "fixed"
    assert config.search.keyword_standout_floor == 0.35
    assert config.store.options() == {}


def test_env_nested_delimiter_selects_backend_and_plugin_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENGRAM_STORE__BACKEND", "lancedb")
    monkeypatch.setenv("ENGRAM_STORE__URI", "s3://bucket/memory")
    config = load_config()
    assert config.store.backend == "lancedb"
    assert config.store.options() == {"uri": "s3://bucket/memory"}


def test_parse_overrides_builds_nested_values() -> None:
    assert parse_overrides(["store.backend=x", "search.limit=10", "vault.exclude=['a', 'b']"]) == {
        "store": {"backend": "x"},
        "search": {"limit": 10},
        "vault": {"exclude": ["a", "b"]},
    }
    assert load_config(parse_overrides(["store.backend=x"])).store.backend == "x"


@pytest.mark.parametrize("pair", ["store.backend", "=x", " =x", ""])
def test_parse_overrides_rejects_pairs_without_key_or_value(pair: str) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_overrides([pair])


keys = st.lists(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1, max_size=3)


@given(key=keys, value=st.integers() | st.booleans())
def test_parse_overrides_places_any_toml_scalar_at_its_dotted_path(
    key: list[str], value: int | bool
) -> None:
    raw = str(value).lower() if isinstance(value, bool) else str(value)
    node: Any = parse_overrides([f"{'.'.join(key)}={raw}"])
    for part in key:
        node = node[part]
    assert node == value
    assert type(node) is type(value)


@given(text=st.from_regex(r"[a-z][a-z0-9]*-[a-z0-9-]+", fullmatch=True))
def test_parse_overrides_keeps_non_toml_text_as_a_string(text: str) -> None:
    assert parse_overrides([f"store.backend={text}"]) == {"store": {"backend": text}}


# --- finding the project file ----------------------------------------------------------------


def test_project_file_is_found_upwards_from_a_subfolder(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(isolated / "engram.toml", '[store]\nbackend = "chroma"\n')
    deep = isolated / "notes" / "2024" / "march"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)

    assert find_project_file() == (isolated / "engram.toml").resolve()
    config = load_config()
    assert config.store.backend == "chroma"
    assert config.root == isolated.resolve()
    assert config.resolve("memory") == isolated.resolve() / "memory"


def test_start_folder_is_searched_instead_of_cwd(isolated: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other / "engram.toml", "[search]\nlimit = 42\n")
    (other / "sub").mkdir()
    config = load_config(start=other / "sub")
    assert config.search.limit == 42
    assert config.root == other.resolve()


def test_without_project_file_root_is_the_start_folder(isolated: Path) -> None:
    config = load_config()
    assert config.root == isolated.resolve()
    assert config.resolve("/abs/path") == Path("/abs/path")


def test_engram_config_variable_names_the_project_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = write(tmp_path / "elsewhere" / "custom.toml", "[search]\nlimit = 11\n")
    monkeypatch.setenv("ENGRAM_CONFIG", str(chosen))
    config = load_config()
    assert config.search.limit == 11
    assert config.root == chosen.parent.resolve()

    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match=r"missing\.toml.*not a file"):
        load_config()


def test_explicit_project_file_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml does not exist"):
        load_config(project_file=tmp_path / "nope.toml")


# --- error messages --------------------------------------------------------------------------


def test_malformed_project_toml_names_the_file(isolated: Path) -> None:
    bad = write(isolated / "engram.toml", "[store\nbackend = sqlite\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert str(bad.resolve()) in str(info.value)
    assert "not valid TOML" in str(info.value)
    assert "fix the file" in str(info.value)


def test_malformed_user_toml_names_the_file() -> None:
    bad = write(user_file(), "limit = = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        load_config()
    assert str(bad) in str(info.value)


def test_non_utf8_file_is_a_config_error(isolated: Path) -> None:
    (isolated / "engram.toml").write_bytes(b"[store]\nbackend = '\xff\xfe'\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config()


def test_unknown_key_names_its_field_path_and_file(isolated: Path) -> None:
    project = write(isolated / "engram.toml", "[search]\nlimt = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    message = str(info.value)
    assert "search.limt: unknown setting" in message
    assert "check the spelling" in message
    assert str(project.resolve()) in message


def test_unknown_section_is_rejected(isolated: Path) -> None:
    write(isolated / "engram.toml", "[serch]\nlimit = 3\n")
    with pytest.raises(ConfigError, match=r"serch: unknown setting"):
        load_config()


def test_unknown_key_from_environment_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_SEARCH__LIMT", "3")
    with pytest.raises(ConfigError, match=r"search\.limt: unknown setting"):
        load_config()


def test_unknown_key_from_cli_override_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"chunking\.max_tokenz: unknown setting"):
        load_config(parse_overrides(["chunking.max_tokenz=100"]))


def test_wrong_type_names_path_and_bad_value(isolated: Path) -> None:
    write(isolated / "engram.toml", '[search]\nlimit = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_config()
    message = str(info.value)
    assert "search.limit" in message
    assert "'many'" in message
    assert "integer" in message


@pytest.mark.parametrize(
    ("override", "path", "shown"),
    [
        ("search.mode=fuzzy", "search.mode", "'fuzzy'"),
        ("search.min_score=1.5", "search.min_score", "1.5"),
        ("vault.respect_gitignore=[1]", "vault.respect_gitignore", "[1]"),
        ("chunking.strategy=words", "chunking.strategy", "'words'"),
    ],
)
def test_out_of_range_or_bad_choice_is_reported(override: str, path: str, shown: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(parse_overrides([override]))
    assert path in str(info.value)
    assert shown in str(info.value)


def test_chunking_overlap_must_be_smaller_than_max_tokens() -> None:
    with pytest.raises(ConfigError, match=r"overlap \(400\) must be smaller than max_tokens"):
        load_config({"chunking": {"overlap": 400}})
    with pytest.raises(ConfigError, match=r"overlap \(90\) must be smaller than max_tokens \(64\)"):
        load_config(parse_overrides(["chunking.max_tokens=64", "chunking.overlap=90"]))
    with pytest.raises(ValidationError):
        ChunkingConfig(max_tokens=100, overlap=100)
    assert ChunkingConfig(max_tokens=100, overlap=99).describe() == "markdown:100/99"


# --- phase two: plugin options -----------------------------------------------------------------


class ProbeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: Path = Path("data/probe.db")
    absolute: Path = Path("/var/probe")
    size: int = 8


class ProbeStore:
    def __init__(self, options: ProbeOptions) -> None:
        self.options = options


@pytest.fixture
def registry() -> Registry:
    registry = Registry()
    registry.add(
        Entry(
            kind="store",
            name="probe",
            factory=ProbeStore,
            options=ProbeOptions,
            plugin=__name__,
            distribution=None,
            version=None,
        )
    )
    return registry


def store_options(config: EngramConfig, registry: Registry) -> BaseModel:
    return plugin_options(
        config, registry, "store", config.store.backend, config.store.options(), "store"
    )


def test_plugin_options_are_validated_by_the_plugins_model(
    isolated: Path, registry: Registry
) -> None:
    write(isolated / "engram.toml", '[store]\nbackend = "probe"\nsize = 32\n')
    options = store_options(load_config(), registry)
    assert isinstance(options, ProbeOptions)
    assert options.size == 32
    built = registry.get("store", "probe").build(options)
    assert isinstance(built, ProbeStore)
    assert built.options.size == 32


def test_relative_plugin_paths_resolve_against_the_project_root(
    isolated: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(isolated / "engram.toml", '[store]\nbackend = "probe"\npath = "state/x.db"\n')
    sub = isolated / "deep" / "er"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    options = store_options(load_config(), registry)
    assert isinstance(options, ProbeOptions)
    assert options.path == isolated.resolve() / "state" / "x.db"
    assert options.absolute == Path("/var/probe")


def test_relative_default_plugin_path_also_resolves_against_root(
    isolated: Path, registry: Registry
) -> None:
    options = store_options(load_config({"store": {"backend": "probe"}}), registry)
    assert isinstance(options, ProbeOptions)
    assert options.path == isolated.resolve() / "data" / "probe.db"


def test_plugin_option_errors_carry_the_section_prefix(isolated: Path, registry: Registry) -> None:
    write(isolated / "engram.toml", '[store]\nbackend = "probe"\nsize = "big"\ncolour = "red"\n')
    config = load_config()
    with pytest.raises(ConfigError) as info:
        store_options(config, registry)
    message = str(info.value)
    assert "store.size" in message
    assert "'big'" in message
    assert "store.colour: unknown setting" in message


def test_plugin_options_for_an_unknown_backend_list_what_is_installed(
    registry: Registry,
) -> None:
    config = load_config(parse_overrides(["store.backend=lancedb"]))
    with pytest.raises(PluginNotFound) as info:
        store_options(config, registry)
    assert "installed: probe" in str(info.value)
    assert "pip install -e ./backends/lancedb" in str(info.value)


def test_user_file_defaults_to_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_USER_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write(tmp_path / "xdg" / "engram" / "config.toml", '[embedder]\nprovider = "voyage"\n')
    assert user_config_path() == tmp_path / "xdg" / "engram" / "config.toml"
    assert load_config().embedder.provider == "voyage"
