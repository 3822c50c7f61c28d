"""The plugin system, proven with a real third-party distribution.

``tests/example_plugin`` (distribution ``engram-example-store``) is built and installed once per
session into a private folder (``pip install --target``), never into the shared venv. Checks that
need it run in a subprocess with that folder on ``PYTHONPATH``: entry points are discovered from
its dist-info exactly as they would be after a user's ``pip install``.

Misbehaving plugins (a misspelled hook, a duplicate name) are small distributions written as
module + dist-info next to it, which ``importlib.metadata`` finds the same way.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pluggy
import pytest
from pydantic import BaseModel, ConfigDict

import engram_sqlite
from engram.distributions import CHECKOUT_PATHS
from engram.errors import PluginNotFound
from engram.hookspecs import hookimpl
from engram.plugins import build_registry, describe_plugins, get_plugin_manager
from engram.registry import KINDS, Kind, Register

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "example_plugin"
EXAMPLE_DIST = "engram-example-store"
EXAMPLE_VERSION = "0.3.1"


# --- installing and running ------------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin built with hatchling and installed as a distribution into a tmp folder."""
    target = tmp_path_factory.mktemp("example-site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-input",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return target


def run_argv(
    argv: list[str], paths: list[Path], *, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with only ``paths`` on PYTHONPATH, no ENGRAM_* variables and no user config."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    clean["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    clean["ENGRAM_USER_CONFIG"] = str(cwd / "no-user-config.toml")
    clean.update(env or {})
    return subprocess.run(argv, capture_output=True, text=True, env=clean, cwd=cwd, check=False)


def run(
    code: str, paths: list[Path], *, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (see ``run_argv``)."""
    return run_argv([sys.executable, "-c", textwrap.dedent(code)], paths, cwd=cwd, env=env)


def run_json(code: str, paths: list[Path], **kwargs: Any) -> Any:
    done = run(code, paths, **kwargs)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def make_dist(site: Path, dist: str, module: str, source: str) -> Path:
    """A minimal installed distribution: a module plus dist-info with an ``engram`` entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[engram]\n{module} = {module}\n", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{module}\n", encoding="utf-8")
    return site


# Loads the plugins once per environment in ``argv[1]`` (a JSON list of {variable: value or null}):
# ENGRAM_LOAD_PLUGINS and ENGRAM_TRACE_PLUGINS are read by each get_plugin_manager() call, so one
# interpreter can try several settings. Prints one JSON result per environment; stderr gets a
# SECTION line before each so a test can tell which load wrote what.
SECTION = "@@ engram-test load"
LOAD = f"""
    import json, os, sys
    from engram.plugins import build_registry, describe_plugins, get_plugin_manager
    out = []
    for env in json.loads(sys.argv[1]):
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        print({SECTION!r}, file=sys.stderr, flush=True)
        try:
            registry = build_registry(get_plugin_manager())
        except Exception as exc:
            out.append({{"error": f"{{type(exc).__name__}}: {{exc}}"}})
            continue
        missing = {{}}
        for name in ("example", "lancedb"):
            try:
                registry.get("store", name)
            except Exception as exc:
                missing[name] = f"{{type(exc).__name__}}: {{exc}}"
        out.append({{
            "error": None,
            "rows": describe_plugins(registry),
            "stores": registry.names("store"),
            "missing": missing,
        }})
    print(json.dumps(out))
"""


def load(
    paths: list[Path], cwd: Path, *envs: dict[str, str | None]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Results and stderr of loading the plugins under each of ``envs`` (default: as is)."""
    argv = [sys.executable, "-c", textwrap.dedent(LOAD), json.dumps(list(envs) or [{}])]
    done = run_argv(argv, paths, cwd=cwd)
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results, done.stderr.split(SECTION + "\n")[1:]


def row(rows: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matching = [r for r in rows if r["kind"] == kind and r["name"] == name]
    assert len(matching) == 1, f"{kind} {name!r} not listed once in {rows}"
    return matching[0]


# --- (a) the installed plugin is listed --------------------------------------------------------


def test_example_is_an_installed_distribution_with_an_engram_entry_point(
    site: Path, tmp_path: Path
) -> None:
    found = run_json(
        """
        import json
        from importlib import metadata
        dist = metadata.distribution("engram-example-store")
        eps = [(ep.name, ep.value) for ep in dist.entry_points if ep.group == "engram"]
        at = str(dist.locate_file("").resolve())
        print(json.dumps({"version": dist.version, "eps": eps, "at": at}))
        """,
        [site],
        cwd=tmp_path,
    )
    assert found["version"] == EXAMPLE_VERSION
    assert found["eps"] == [["example", "engram_example_store"]]
    assert Path(found["at"]) == site.resolve()


def test_library_lists_the_plugins_parts_with_distribution_and_version(
    site: Path, tmp_path: Path
) -> None:
    [result], _ = load([site], tmp_path)
    rows = result["rows"]
    store = row(rows, "store", "example")
    extractor = row(rows, "extractor", "example-keywords")
    for part in (store, extractor):
        assert part["distribution"] == EXAMPLE_DIST
        assert part["version"] == EXAMPLE_VERSION
        assert part["module"] == "engram_example_store"
    # The built-ins are still there next to it.
    assert row(rows, "store", "memory")["module"].startswith("engram.")


def test_cli_plugins_command_prints_the_plugin_as_json(site: Path, tmp_path: Path) -> None:
    done = run_argv([sys.executable, "-m", "engram", "plugins"], [site], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert row(rows, "store", "example") == {
        "name": "example",
        "kind": "store",
        "distribution": EXAMPLE_DIST,
        "version": EXAMPLE_VERSION,
    }
    assert row(rows, "extractor", "example-keywords")["distribution"] == EXAMPLE_DIST


# --- (b) selectable by config, no core change ------------------------------------------------

BUILD_FROM_CONFIG = """
    import json
    from engram.config import load_config, plugin_options
    from engram.models import Chunk, IndexIdentity
    from engram.plugins import build_registry, get_plugin_manager
    from engram.protocols import Store

    config = load_config()
    registry = build_registry(get_plugin_manager())
    options = plugin_options(
        config, registry, "store", config.store.backend, config.store.options(), "store"
    )
    store = registry.get("store", config.store.backend).build(options)
    store.set_identity(IndexIdentity(embedder="t", model="t", dimension=3, chunker="markdown"))
    store.upsert([
        Chunk(id="a", document_id="n.md", text="We replicate Postgres nightly", vector=[1, 0, 0]),
        Chunk(id="b", document_id="n.md", text="Rust lifetimes explained", vector=[0, 1, 0]),
    ])
    print(json.dumps({
        "class": type(store).__name__,
        "module": type(store).__module__,
        "is_store": isinstance(store, Store),
        "label": store.label,
        "count": store.count(),
        "vector": [h.chunk.id for h in store.vector_search([0.9, 0.1, 0], 1)],
        "keyword": [h.chunk.id for h in store.keyword_search("postgres", 5)],
    }))
"""


def test_store_is_selected_and_configured_by_engram_toml(site: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "engram.toml").write_text('[store]\nbackend = "example"\nlabel = "x"\n')

    got = run_json(BUILD_FROM_CONFIG, [site], cwd=project / "sub")

    assert got == {
        "class": "ExampleStore",
        "module": "engram_example_store",
        "is_store": True,
        "label": "x",
        "count": 2,
        "vector": ["a"],
        "keyword": ["a"],
    }


def test_store_is_selected_by_environment_too(site: Path, tmp_path: Path) -> None:
    env = {"ENGRAM_STORE__BACKEND": "example", "ENGRAM_STORE__LABEL": "from-env"}
    got = run_json(BUILD_FROM_CONFIG, [site], cwd=tmp_path, env=env)
    assert (got["class"], got["label"]) == ("ExampleStore", "from-env")


def test_plugin_option_errors_name_the_store_section(site: Path, tmp_path: Path) -> None:
    (tmp_path / "engram.toml").write_text('[store]\nbackend = "example"\nlable = "x"\n')
    done = run(BUILD_FROM_CONFIG, [site], cwd=tmp_path)
    assert done.returncode != 0
    assert "ConfigError" in done.stderr
    assert "store.lable: unknown setting" in done.stderr


def test_extractor_from_the_plugin_finds_typed_memories(site: Path, tmp_path: Path) -> None:
    got = run_json(
        """
        import json
        from engram.models import Message
        from engram.plugins import build_registry, get_plugin_manager
        from engram.protocols import Extractor
        from engram.registry import NoOptions

        entry = build_registry(get_plugin_manager()).get("extractor", "example-keywords")
        extractor = entry.build(NoOptions())
        found = extractor.extract([
            Message(role="user", content="Hi.\\nI prefer tabs over spaces.\\nThanks"),
            Message(role="assistant", content="Noted."),
            Message(role="user", content="  We decided to ship on Fridays."),
        ])
        print(json.dumps({
            "is_extractor": isinstance(extractor, Extractor),
            "name": extractor.name,
            "found": [m.model_dump(exclude_none=True) for m in found],
        }))
        """,
        [site],
        cwd=tmp_path,
    )
    assert got["is_extractor"] is True
    assert got["name"] == "example-keywords"
    assert got["found"] == [
        {
            "type": "preference",
            "content": "I prefer tabs over spaces.",
            "tags": ["example"],
            "importance": 1.0,
        },
        {
            "type": "decision",
            "content": "We decided to ship on Fridays.",
            "tags": ["example"],
            "importance": 1.0,
        },
    ]


# --- (c) ENGRAM_LOAD_PLUGINS -----------------------------------------------------------------


EXCLUDING = ["", "some-other", " , ", "engram-example", "example-store"]
INCLUDING = [EXAMPLE_DIST, "example", f"some-other, {EXAMPLE_DIST}", f" {EXAMPLE_DIST} ,"]


@pytest.fixture(scope="module")
def allow_lists(site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What each allow-list in EXCLUDING + INCLUDING loads, from one subprocess."""
    allows = EXCLUDING + INCLUDING
    envs: list[dict[str, str | None]] = [{"ENGRAM_LOAD_PLUGINS": a} for a in allows]
    results, _ = load([site], tmp_path_factory.mktemp("allow"), *envs)
    return dict(zip(allows, results, strict=True))


@pytest.mark.parametrize("allow", EXCLUDING)
def test_allow_list_without_the_plugin_excludes_it(allow_lists: dict[str, Any], allow: str) -> None:
    got = allow_lists[allow]
    assert "example" not in got["stores"]
    assert "memory" in got["stores"]  # built-ins always load
    assert all(r["distribution"] != EXAMPLE_DIST for r in got["rows"])
    error = got["missing"]["example"]
    assert error.startswith("PluginNotFound: no store named 'example' is installed")
    assert f"(installed: {', '.join(got['stores'])})" in error


@pytest.mark.parametrize("allow", INCLUDING)
def test_allow_list_naming_the_plugin_includes_it(allow_lists: dict[str, Any], allow: str) -> None:
    got = allow_lists[allow]
    assert "example" not in got["missing"]
    assert row(got["rows"], "store", "example")["distribution"] == EXAMPLE_DIST
    assert row(got["rows"], "extractor", "example-keywords")["distribution"] == EXAMPLE_DIST


# --- (d) a misspelled hook is an error, not a silent no-op ---------------------------------------


class Misspelled:
    @hookimpl
    def register_storez(self, register: Register) -> None:
        register("never", dict)


def test_misspelled_hookimpl_fails_check_pending() -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Misspelled(), name="misspelled")
    with pytest.raises(pluggy.PluginValidationError, match="register_storez"):
        pm.check_pending()


def test_installed_plugin_with_misspelled_hook_fails_at_load(tmp_path: Path) -> None:
    broken = make_dist(
        tmp_path / "site",
        "engram-typo",
        "engram_typo",
        """
        from engram.hookspecs import hookimpl

        @hookimpl
        def register_storez(register):
            register("typo", dict)
        """,
    )
    broken_loaded, left_out = load([broken], tmp_path, {}, {"ENGRAM_LOAD_PLUGINS": ""})[0]
    assert (
        broken_loaded["error"].startswith("PluginError")
        and "register_storez" in broken_loaded["error"]
    )
    assert "register_storez" in broken_loaded["error"]
    # Left out by the allow-list, it does no harm.
    assert left_out["error"] is None


# --- (e) duplicate names ---------------------------------------------------------------------


def test_two_distributions_registering_one_store_name_are_named_both(
    site: Path, tmp_path: Path
) -> None:
    rival = make_dist(
        tmp_path / "site",
        "engram-rival-store",
        "engram_rival_store",
        """
        from engram.default_plugins.memory_store import MemoryStore
        from engram.hookspecs import hookimpl

        class RivalStore(MemoryStore):
            pass

        @hookimpl
        def register_stores(register):
            register("example", RivalStore)
        """,
    )
    both, only_rival = load(
        [site, rival], tmp_path, {}, {"ENGRAM_LOAD_PLUGINS": "engram-rival-store"}
    )[0]
    error = both["error"]
    assert error.startswith("DuplicatePlugin: two plugins register the store 'example'")
    assert EXAMPLE_DIST in error
    assert "engram-rival-store" in error
    assert "ENGRAM_LOAD_PLUGINS" in error
    # The fix the message suggests works: allow only one of them.
    assert row(only_rival["rows"], "store", "example")["distribution"] == "engram-rival-store"


# --- (f) unknown names -----------------------------------------------------------------------


def test_unknown_store_lists_installed_names() -> None:
    registry = build_registry(get_plugin_manager(load_entry_points=False))
    with pytest.raises(PluginNotFound) as info:
        registry.get("store", "qdrant")
    message = str(info.value)
    assert "no store named 'qdrant' is installed" in message
    assert f"(installed: {', '.join(registry.names('store'))})" in message
    assert "memory" in registry.names("store")
    assert "pip install" not in message


@pytest.mark.parametrize(
    ("kind", "name", "dist"),
    [
        ("store", "lancedb", "engram-lancedb"),
        ("store", "sqlite", "engram-sqlite"),
        ("store", "chroma", "engram-chroma"),
        ("store", "postgres", "engram-postgres"),
        ("embedder", "openai", "engram-openai"),
        ("embedder", "voyage", "engram-voyage"),
        ("embedder", "local", "engram-local"),
    ],
)
def test_known_separate_distributions_get_an_install_hint(kind: Kind, name: str, dist: str) -> None:
    registry = build_registry(get_plugin_manager(load_entry_points=False))
    folder = CHECKOUT_PATHS[dist]
    with pytest.raises(PluginNotFound) as info:
        registry.get(kind, name)
    assert str(info.value).endswith(
        f"; install it from an engram checkout: pip install -e ./{folder} "
        f"(once published: pip install {dist})"
    )
    assert (REPO / folder / "pyproject.toml").is_file()


def test_unknown_name_lists_third_party_parts_too(allow_lists: dict[str, Any]) -> None:
    error = allow_lists[EXAMPLE_DIST]["missing"]["lancedb"]
    assert error.startswith("PluginNotFound: no store named 'lancedb' is installed")
    assert "(installed: example, memory)" in error
    assert error.endswith(
        "pip install -e ./backends/lancedb (once published: pip install engram-lancedb)"
    )


# --- (g) tracing -----------------------------------------------------------------------------


def test_trace_plugins_prints_hook_calls_to_stderr(site: Path, tmp_path: Path) -> None:
    only_example: dict[str, str | None] = {"ENGRAM_LOAD_PLUGINS": EXAMPLE_DIST}
    results, (quiet, traced) = load(
        [site], tmp_path, only_example, {**only_example, "ENGRAM_TRACE_PLUGINS": "1"}
    )
    assert [r["error"] for r in results] == [None, None]
    assert "register_stores" not in quiet
    for hook in ("register_stores", "register_embedders", "register_extractors"):
        assert f"{hook} [hook]" in traced
    assert "finish register_stores --> [] [hook]" in traced


# --- (h) hookimpls may take fewer arguments than their spec -----------------------------------


class ConnectionOnly:
    """Implements ``prepare_connection(conn, store)`` with ``conn`` only."""

    @hookimpl
    def prepare_connection(self, conn: sqlite3.Connection) -> None:
        conn.create_function("shout", 1, lambda s: None if s is None else f"{s.upper()}!")


class ConnectionAndStore:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def prepare_connection(self, conn: sqlite3.Connection, store: str) -> None:
        self.seen.append(store)
        conn.execute("PRAGMA user_version = 7")


class NoArguments:
    called = 0

    @hookimpl
    def register_stores(self) -> None:
        NoArguments.called += 1


def test_hookimpl_with_fewer_arguments_than_its_spec_is_called() -> None:
    pm = get_plugin_manager(load_entry_points=False)
    both = ConnectionAndStore()
    pm.register(ConnectionOnly(), name="conn-only")
    pm.register(both, name="conn-and-store")
    pm.register(engram_sqlite, name="sqlite")  # declares prepare_connection, after its users
    pm.check_pending()

    with sqlite3.connect(":memory:") as conn:
        pm.hook.prepare_connection(conn=conn, store="sqlite")
        assert conn.execute("SELECT shout('hi')").fetchone() == ("HI!",)
        assert conn.execute("PRAGMA user_version").fetchone() == (7,)
    conn.close()
    assert both.seen == ["sqlite"]


def test_register_hookimpl_without_arguments_still_loads() -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(NoArguments(), name="no-args")
    pm.check_pending()
    before = NoArguments.called
    registry = build_registry(pm)
    assert NoArguments.called == before + 1
    assert "memory" in registry.names("store")


# --- every register_* hook lands in the registry under its kind -------------------------------


class ProbeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1


class Probe:
    def __init__(self, options: ProbeOptions) -> None:
        self.options = options


class EveryKind:
    @hookimpl
    def register_stores(self, register: Register) -> None:
        register("probe-store", Probe, options=ProbeOptions)

    @hookimpl
    def register_embedders(self, register: Register) -> None:
        register("probe-embedder", Probe, options=ProbeOptions)

    @hookimpl
    def register_extractors(self, register: Register) -> None:
        register("probe-extractor", Probe, options=ProbeOptions)

    @hookimpl
    def register_searchers(self, register: Register) -> None:
        register("probe-searcher", Probe, options=ProbeOptions)


def test_each_register_hook_fills_its_own_kind() -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(EveryKind(), name="every-kind")
    registry = build_registry(pm)
    for kind in KINDS:
        entry = registry.get(kind, f"probe-{kind}")
        assert entry.kind == kind
        assert entry.options is ProbeOptions
        assert entry.plugin == __name__
        built = entry.build(ProbeOptions(size=3))
        assert isinstance(built, Probe)
        assert built.options.size == 3
        others = [k for k in KINDS if k != kind]
        assert all(f"probe-{kind}" not in registry.names(k) for k in others)
    listed = {(r["kind"], r["name"]) for r in describe_plugins(registry)}
    assert {(k, f"probe-{k}") for k in KINDS} <= listed


def test_plugin_managers_are_independent() -> None:
    """Registering into one manager leaves a fresh one untouched (nothing global)."""
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(EveryKind(), name="every-kind")
    assert "probe-store" in build_registry(pm).names("store")
    fresh = build_registry(get_plugin_manager(load_entry_points=False))
    assert "probe-store" not in fresh.names("store")


# --- (i) a plugin's own hooks, and each store calling its own manager ---------------------------

OWN_MANAGERS = """
    import json, os, sys
    from pathlib import Path
    from engram.plugins import build_registry, get_plugin_manager
    from engram_sqlite import SQLiteOptions

    def open_sqlite(allow):
        if allow is None:
            os.environ.pop("ENGRAM_LOAD_PLUGINS", None)
        else:
            os.environ["ENGRAM_LOAD_PLUGINS"] = allow
        pm = get_plugin_manager()
        entry = build_registry(pm).get("store", "sqlite")
        return pm, entry.build(SQLiteOptions(path=Path(sys.argv[1]) / f"{allow}.sqlite"))

    def reverse(store):
        try:
            return store.connection.execute("SELECT example_reverse('abc')").fetchone()[0]
        except Exception as exc:
            return type(exc).__name__ + ": " + str(exc)

    # Two managers alive at once: everything installed, and engram-sqlite alone.
    every_pm, every = open_sqlite(None)
    alone_pm, alone = open_sqlite("engram-sqlite")
    # The example plugin without engram-sqlite: its optional hookimpl does not stop it loading.
    os.environ["ENGRAM_LOAD_PLUGINS"] = "engram-example-store"
    without_sqlite = get_plugin_manager()
    print(json.dumps({
        "every": reverse(every),
        "alone": reverse(alone),
        "spec_from": every_pm.hook.prepare_connection.spec.namespace.__name__,
        "example_loaded": without_sqlite.has_plugin("example"),
        "hook_without_sqlite": hasattr(without_sqlite.hook, "prepare_connection")
        and without_sqlite.hook.prepare_connection.spec is not None,
    }))
    every.close()
    alone.close()
"""


def test_sqlite_stores_call_the_installed_plugins_prepare_connection(
    site: Path, tmp_path: Path
) -> None:
    argv = [sys.executable, "-c", textwrap.dedent(OWN_MANAGERS), str(tmp_path)]
    done = run_argv(argv, [site], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    # The installed example plugin's hookimpl ran on the store its manager opened ...
    assert got["every"] == "cba"
    # ... and not on the store opened at the same time by a manager that left it out.
    assert got["alone"].endswith("no such function: example_reverse")
    # The hook is engram-sqlite's own; without it the example plugin still loads.
    assert got["spec_from"] == "engram_sqlite.hookspecs"
    assert got["example_loaded"] is True
    assert got["hook_without_sqlite"] is False
