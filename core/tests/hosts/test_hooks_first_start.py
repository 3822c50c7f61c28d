"""The first-start shortcut of the session-start hook reads the memory folders from the config
files with tomllib alone; here it is held to the real config: for every shape of file it takes,
its folders equal ``memory_folders(load_config(...))`` (so the two can never drift), and every
shape it does not read surely gives None (the hook then takes the full path)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.config import EngramConfig, MemoryFolderConfig, load_config
from engram.hosts import first_start, quiet
from engram.hosts.job import HookJob
from engram.memories.scopes import memory_folders

# Path spellings a user writes; ABS becomes an absolute folder of the test's own.
SPELLINGS = ["memory", "notes/mem", "", ".", "./m", "~/mem", "ABS/x", "../up", "a/../b", "link"]


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith(("ENGRAM_", "XDG_")):
            monkeypatch.delenv(name)


class World:
    """A home, a project with its engram.toml, a user config file and a linked folder."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.root = base / "project"
        self.user_file = base / "config" / "engram" / "config.toml"
        for folder in (self.home, self.root, self.user_file.parent, base / "real"):
            folder.mkdir(parents=True, exist_ok=True)
        (self.root / "link").symlink_to(base / "real")

    def env(self, monkeypatch: pytest.MonkeyPatch, *, xdg: bool) -> None:
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.base / "config"))
        if xdg:
            monkeypatch.setenv("XDG_DATA_HOME", str(self.base / "data"))
        else:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)

    def spell(self, raw: str) -> str:
        return raw.replace("ABS", str(self.base / "abs"))

    def write(self, path: Path, memory: dict[str, Any] | None, extra: str = "") -> None:
        lines = ['[store]\nbackend = "sqlite"\n', extra]
        if memory is not None:
            lines.append("[memory]\n")
            for key, value in memory.items():
                lines.append(f"{key} = {_toml(value, self.spell)}\n")
        path.write_text("".join(lines), encoding="utf-8")

    def job(self, **extra: Any) -> HookJob:
        return HookJob("session-start", self.root, self.root).but(**extra)

    def real(self, job: HookJob) -> list[Path]:
        """What the worker's recall reads: the folders of the config it loads for this job."""
        config = load_config(None, project_file=job.config_file, start=job.project)
        return [folder.path for folder in memory_folders(config)]


def _toml(value: Any, spell: Callable[[str], str]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v, spell) for v in value) + "]"
    return '"' + spell(str(value)) + '"'


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_the_tables_it_reads_are_the_configs_own() -> None:
    assert set(EngramConfig.model_fields) - {"root"} == first_start.SECTIONS
    assert set(first_start.MEMORY_KEYS) == set(MemoryFolderConfig.model_fields)


paths = st.sampled_from(SPELLINGS)
tables = st.fixed_dictionaries(
    {},
    optional={
        "dir": paths,
        "user_dir": paths,
        "user_scope": st.booleans(),
        "external_paths": st.lists(paths, max_size=3),
        "collections_dir": paths,
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    project=st.none() | tables,
    user=st.none() | tables,
    project_file=st.booleans(),
    explicit=st.booleans(),
    xdg=st.booleans(),
)
def test_its_folders_are_the_configs_for_every_file_it_reads(
    monkeypatch: pytest.MonkeyPatch,
    project: dict[str, Any] | None,
    user: dict[str, Any] | None,
    project_file: bool,
    explicit: bool,
    xdg: bool,
) -> None:
    with _world() as world:
        world.env(monkeypatch, xdg=xdg)
        job = world.job()
        if project_file:
            toml = world.root / "engram.toml"
            world.write(toml, project)
            if explicit:  # --config names it
                job = world.job(config_file=toml)
        if user is not None:
            world.write(world.user_file, user)
        assert first_start.memory_folders(job) == world.real(job)


@pytest.fixture
def plain(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    world.env(monkeypatch, xdg=True)
    world.write(world.root / "engram.toml", {"dir": "notes"})
    return world


def test_a_named_config_file_elsewhere_roots_the_folders_at_its_own_folder(
    plain: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = plain.base / "conf" / "engram.toml"
    elsewhere.parent.mkdir()
    plain.write(elsewhere, {"dir": "kept", "external_paths": ["../team"]})
    for job in (plain.job(config_file=elsewhere), plain.job()):
        if job.config_file is None:
            monkeypatch.setenv("ENGRAM_CONFIG", str(elsewhere))  # found through the variable
        folders = first_start.memory_folders(job)
        assert folders == plain.real(job)
        assert folders[0] == elsewhere.parent / "kept"


@pytest.mark.parametrize(
    "variable", ["ENGRAM_MEMORY__DIR", "engram_memory__dir", "ENGRAM_SEARCH__LIMIT"]
)
def test_a_setting_from_the_environment_is_left_to_the_full_path(
    plain: World, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "elsewhere")
    assert first_start.memory_folders(plain.job()) is None


def test_overrides_are_left_to_the_full_path(plain: World) -> None:
    assert first_start.memory_folders(plain.job(overrides={"memory": {"dir": "x"}})) is None


@pytest.mark.parametrize(
    "text",
    [
        'root = "/elsewhere"\n',
        "[memorry]\ndir = 'x'\n",
        "memory = 'x'\n",
        "[memory]\ndir = 3\n",
        "[memory]\nuser_scope = 'false'\n",
        "[memory]\nexternal_paths = ['a', 2]\n",
        "[memory]\nfolder = 'x'\n",
        "[memory]\ndir = { path = 'x' }\n",
        "[memory\ndir = 'x'\n",
    ],
)
def test_a_file_of_another_shape_is_left_to_the_full_path(
    plain: World, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for where in (plain.root / "engram.toml", plain.user_file):
        where.write_text(text, encoding="utf-8")
        assert first_start.memory_folders(plain.job()) is None
        where.write_text("", encoding="utf-8")


def test_a_file_that_is_no_utf8_is_left_to_the_full_path(plain: World) -> None:
    (plain.root / "engram.toml").write_bytes(b"[memory]\ndir = '\xff'\n")
    assert first_start.memory_folders(plain.job()) is None


def test_it_answers_and_stamps_only_for_folders_without_memory(plain: World) -> None:
    job = plain.job()
    stamp = quiet.stamp_path(job)
    assert first_start.nothing_to_recall(job) and stamp.is_file()
    assert quiet.nothing_to_recall(job)  # the stamp holds for the next start
    stamp.unlink()
    notes = plain.root / "notes" / "decision"
    notes.mkdir(parents=True)
    (notes / "readme.txt").write_text("no memory", encoding="utf-8")
    assert first_start.nothing_to_recall(job)
    stamp.unlink()
    (notes / "Ship.MD").write_text("# Ship on Tuesdays\n", encoding="utf-8")
    assert not first_start.nothing_to_recall(job) and not stamp.exists()


def test_a_memory_in_the_users_folder_takes_the_full_path(plain: World) -> None:
    user = plain.base / "data" / "engram" / "memory" / "preference"
    user.mkdir(parents=True)
    (user / "tabs.md").write_text("Tabs, never spaces.\n", encoding="utf-8")
    assert not first_start.nothing_to_recall(plain.job())


def test_after_a_failed_worker_neither_shortcut_answers(plain: World) -> None:
    job = plain.job()
    assert first_start.nothing_to_recall(job)
    quiet.note_outcome(job, False)
    assert not quiet.nothing_to_recall(job) and not first_start.nothing_to_recall(job)
    quiet.note_outcome(job, True)
    assert quiet.nothing_to_recall(job) and first_start.nothing_to_recall(job)


@contextlib.contextmanager
def _world() -> Iterator[World]:
    """A World in a fresh temporary folder, one per hypothesis example."""
    with tempfile.TemporaryDirectory() as tmp:
        yield World(Path(tmp).resolve())
