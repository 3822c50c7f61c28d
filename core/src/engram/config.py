"""One configuration, from (lowest to highest precedence): defaults, the user file
(``~/.config/engram/config.toml``), the project file (``engram.toml``, found upwards from the
working directory), ``ENGRAM_*`` environment variables (``ENGRAM_STORE__BACKEND=lancedb``), and
CLI flags.

Validation has two phases: the plugin is picked by name (``[store] backend = "sqlite"``), then the
section's other keys are validated against that plugin's own options model. Errors name the field
path and the file, and say how to fix it.
"""

from __future__ import annotations

import os
import re
import tomllib
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from engram.errors import ConfigError
from engram.locations import find_project_file as find_project_file  # re-exported
from engram.locations import user_config_path as user_config_path  # re-exported
from engram.models import FusionBalance, FusionMethod, KeywordScale, OnCollision, SearchMode
from engram.registry import Kind, Registry
from engram.types import EXTRACTED_TYPES, STRUCTURAL_TYPES, MemoryType

SECRET_NAME = re.compile(r"key|secret|token|password|credential", re.IGNORECASE)
DEFAULT_STORE = "sqlite"
DEFAULT_EMBEDDER = "local"
DEFAULT_EXTRACTOR = "rules"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _PluginSection(BaseModel):
    """A section that names a plugin; every other key belongs to that plugin's options model."""

    model_config = ConfigDict(extra="allow")

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class StoreConfig(_PluginSection):
    backend: str = DEFAULT_STORE


class EmbedderConfig(_PluginSection):
    provider: str = DEFAULT_EMBEDDER


class ExtractorConfig(_PluginSection):
    """The extractor that turns conversations into memories and judges contradictions."""

    provider: str = DEFAULT_EXTRACTOR


class VaultConfig(_Section):
    paths: list[Path] = Field(default_factory=lambda: [Path(".")])
    include: list[str] = Field(default_factory=lambda: ["**/*.md", "**/*.markdown"])
    exclude: list[str] = Field(default_factory=list)
    respect_gitignore: bool = True
    max_file_bytes: int = Field(default=5_000_000, gt=0)


class ChunkingConfig(_Section):
    strategy: Literal["markdown", "tokens"] = "markdown"
    max_tokens: int = Field(default=400, ge=16, le=8192)
    overlap: int = Field(default=80, ge=0)

    @model_validator(mode="after")
    def _overlap_smaller(self) -> ChunkingConfig:
        if self.overlap >= self.max_tokens:
            raise ValueError(
                f"overlap ({self.overlap}) must be smaller than max_tokens ({self.max_tokens})"
            )
        return self

    def describe(self) -> str:
        """The chunker part of a store's index identity."""
        return f"{self.strategy}:{self.max_tokens}/{self.overlap}"


class SearchConfig(_Section):
    mode: SearchMode = "hybrid"
    fusion: FusionMethod = "weighted"
    vector_weight: float = Field(default=0.5, ge=0)
    keyword_weight: float = Field(default=0.5, ge=0)
    # ceiling: each BM25 score over the query's ceiling (the score of a chunk holding each query
    # word once; engram.protocols.KeywordCeiling), relative where the store cannot tell it.
    # Chosen with the weights on the dev halves of the bench's ten sets (docs/benchmarks.md).
    keyword_scale: KeywordScale = "ceiling"
    # fixed: vector_weight / keyword_weight, the keyword one scaled by keyword_standout_floor
    # below; standout: both set per query by how far each side's best hit stands out of its own
    # candidates (engram.search.fusion.balance_weights). Measured in docs/benchmarks.md: fixed
    # is never significantly worse than the better single mode on four sets and holds SciFact /
    # LoCoMo at 0.740 / 0.455; standout ties or wins on all four too but gives LoCoMo 0.437.
    balance: FusionBalance = "fixed"
    # The keyword weight is scaled by how much the best keyword hit stands out of the keyword
    # list, never below this share of it (1 turns the scaling off; see engram.search).
    keyword_standout_floor: float = Field(default=0.35, ge=0, le=1)
    limit: int = Field(default=6, ge=1, le=1000)
    # One hit per document (its best chunk), so `limit` counts documents, not chunks.
    per_document: bool = False
    min_score: float = Field(default=0.35, ge=0, le=1)
    candidate_multiplier: int = Field(default=4, ge=1, le=50)
    rrf_k: int = Field(default=60, ge=1)
    searcher: str = "default"
    # Recency as a search option: score * (1 - w) + w * exp(-decay * age_days); 0 turns it off.
    recency_weight: float = Field(default=0.0, ge=0, le=1)
    recency_decay: float = Field(default=0.1, ge=0)


class CacheConfig(_Section):
    enabled: bool = True
    path: Path = Path(".engram/embeddings.sqlite")


class MemoryFolderConfig(_Section):
    """Where memories live: the project's folder (written by default), the user's folder
    (``scope = "user"``, shared by every project) and read-only external folders."""

    dir: Path = Path("memory")
    # None: $XDG_DATA_HOME/engram/memory, i.e. ~/.local/share/engram/memory.
    user_dir: Path | None = None
    user_scope: bool = True
    external_paths: list[Path] = Field(default_factory=list)
    # Collections (LangChain / LlamaIndex stores): one folder per collection, one file per document.
    collections_dir: Path = Path("collections")
    # A new memory whose file name is taken: new (keep both), update (a revision of it), fail.
    on_collision: OnCollision = "new"


class LifecycleConfig(_Section):
    """Write-time dedup and contradiction, and aging (docs/memory-lifecycle.md)."""

    neighbours: int = Field(default=25, ge=1, le=500)
    duplicate_distance: float = Field(default=0.12, ge=0, le=2)
    structural_duplicate_distance: float = Field(default=0.25, ge=0, le=2)
    contradiction_distance: float = Field(default=0.5, ge=0, le=2)
    structural_contradiction_distance: float = Field(default=0.75, ge=0, le=2)
    structural_types: list[MemoryType] = Field(default_factory=lambda: list(STRUCTURAL_TYPES))
    keep_session_summaries: int = Field(default=3, ge=0)
    latest_progress_only: bool = True

    @model_validator(mode="after")
    def _duplicates_inside_candidates(self) -> LifecycleConfig:
        pairs = (
            ("duplicate_distance", "contradiction_distance"),
            ("structural_duplicate_distance", "structural_contradiction_distance"),
        )
        for low, high in pairs:
            if getattr(self, low) > getattr(self, high):
                raise ValueError(f"{low} must not be larger than {high}")
        return self

    def duplicate_limit(self, type: str | None) -> float:
        structural = type in self.structural_types
        return self.structural_duplicate_distance if structural else self.duplicate_distance

    def contradiction_limit(self, type: str | None) -> float:
        structural = type in self.structural_types
        return self.structural_contradiction_distance if structural else self.contradiction_distance

    def judged_limit(self, type: str | None) -> float:
        """How far a stored memory may be and still be judged against a new one: the
        contradiction limit, the judge's similarity floor."""
        return self.contradiction_limit(type)


DEFAULT_INIT_FILES = (
    "README.md",
    "README.rst",
    "README.txt",
    "README",
    "AGENTS.md",
    "CLAUDE.md",
    "CONTRIBUTING.md",
    "pyproject.toml",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "Gemfile",
    "composer.json",
    "Makefile",
    "docker-compose.yml",
    "compose.yaml",
    ".env.example",
)


class CaptureConfig(_Section):
    """What capture extracts, from how much of a conversation, and how often."""

    types: list[MemoryType] = Field(default_factory=lambda: list(EXTRACTED_TYPES))
    normal_messages: int = Field(default=8, ge=1, le=1000)
    normal_chars: int = Field(default=8_000, ge=200, le=1_000_000)
    summary_messages: int = Field(default=20, ge=1, le=1000)
    summary_chars: int = Field(default=4_000, ge=200, le=1_000_000)
    init_chars: int = Field(default=7_000, ge=200, le=1_000_000)
    init_files: list[str] = Field(default_factory=lambda: list(DEFAULT_INIT_FILES))
    # A conversation shorter than this is not worth an extraction (seed: 2 messages, 100 chars;
    # a summary needs 4 messages).
    min_messages: int = Field(default=2, ge=1)
    min_chars: int = Field(default=100, ge=0)
    summary_min_messages: int = Field(default=4, ge=1)
    # engram sessions --capture: a session is captured again only once it grew and this long
    # after its last capture.
    cooldown_seconds: float = Field(default=15.0, ge=0)
    summaries: bool = True


# The fields older configs named each host's folder with, and the host each one means.
_OLD_SESSION_DIRS = {"opencode_dir": "opencode", "claude_dir": "claude-code"}


class SessionsConfig(_Section):
    """Agent transcripts indexed as a second source (``source = "sessions"``); opt-in. Hosts are
    named as ``engram.ingest.sessions.registry`` names them; an unknown name is an error when
    the sessions are read (this floor cannot import the hosts)."""

    enabled: bool = False
    # The hosts whose transcripts are read; None: every host engram knows.
    agents: list[str] | None = None
    # project: only sessions that ran in this project's folder (or one inside it); all: every
    # session the agents kept, whichever project it belonged to.
    scope: Literal["project", "all"] = "project"
    # A host's transcript folder, by host name; a host not named reads its own default
    # ($XDG_DATA_HOME/opencode, $CLAUDE_CONFIG_DIR/projects, ...).
    dirs: dict[str, Path] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _old_dirs(cls, data: Any) -> Any:
        """``opencode_dir`` / ``claude_dir`` (older configs): still read, into ``dirs``, with a
        warning that names the new spelling; both spellings for one host is an error."""
        if not isinstance(data, dict) or not set(data) & set(_OLD_SESSION_DIRS):
            return data
        data = dict(data)
        dirs = dict(data.get("dirs") or {})
        for old, host in _OLD_SESSION_DIRS.items():
            if old not in data:
                continue
            value = data.pop(old)
            if host in dirs:
                raise ValueError(f"{old} and dirs.{host} both set; keep dirs.{host} only")
            warnings.warn(
                f"[sessions] {old} is deprecated: write dirs = {{{host} = {str(value)!r}}} instead",
                FutureWarning,
                stacklevel=2,
            )
            if value is not None:
                dirs[host] = value
        data["dirs"] = dirs
        return data


class OriginConfig(_Section):
    """This vault on a store that many machines share (``engram.stores.origins``): its id is kept in
    ``.engram/origin.json``; ``name`` is what teammates see (default ``<host>:<folder>``)."""

    name: str | None = Field(default=None, max_length=120)


class RecallConfig(_Section):
    """The context block an agent gets at session start."""

    budget: int = Field(default=2000, ge=0, le=1_000_000)
    candidates: int = Field(default=20, ge=1, le=500)


class EngramConfig(BaseSettings):
    """The whole configuration. ``root`` is the project folder; relative paths resolve there."""

    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_",
        env_nested_delimiter="__",
        extra="forbid",
        nested_model_default_partial_update=True,
    )

    # The files this config was read from, for error messages about plugin options.
    _files: list[Path] = PrivateAttr(default_factory=list)

    root: Path = Field(default_factory=Path.cwd, exclude=True)
    store: StoreConfig = Field(default_factory=StoreConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    extractor: ExtractorConfig = Field(default_factory=ExtractorConfig)
    vault: VaultConfig = Field(default_factory=VaultConfig)
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    memory: MemoryFolderConfig = Field(default_factory=MemoryFolderConfig)
    sessions: SessionsConfig = Field(default_factory=SessionsConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    lifecycle: LifecycleConfig = Field(default_factory=LifecycleConfig)
    capture: CaptureConfig = Field(default_factory=CaptureConfig)
    origin: OriginConfig = Field(default_factory=OriginConfig)

    def resolve(self, path: Path | str) -> Path:
        """A configured path made absolute against the project root."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.root / p)


def load_config(
    overrides: dict[str, Any] | None = None,
    *,
    project_file: Path | None = None,
    start: Path | None = None,
) -> EngramConfig:
    """Read every source, validate, and return the config in effect."""
    project = project_file.resolve() if project_file else find_project_file(start)
    if project is not None and not project.is_file():
        raise ConfigError(f"config file {project} does not exist")
    user = user_config_path()
    files = [f for f in (project, user) if f is not None and f.is_file()]
    for f in files:
        _check_toml(f)
    root = project.parent if project else (start or Path.cwd()).resolve()
    _check_env_sections(os.environ)
    try:
        env = EnvSettingsSource(EngramConfig)()
    except SettingsError as exc:
        raise ConfigError(
            f"an ENGRAM_* variable cannot be read ({exc.__cause__ or exc}); write lists and tables "
            f"as JSON, e.g. ENGRAM_VAULT__PATHS='[\"notes\"]'"
        ) from None
    # Lowest to highest: user file, project file, environment, CLI overrides.
    layers = [TomlConfigSettingsSource(EngramConfig, toml_file=f)() for f in reversed(files)]
    layers += [env, dict(overrides or {})]
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _merge_layer(merged, layer)
    merged.setdefault("root", root)
    try:
        config = EngramConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, files)) from None
    config._files = files
    return config


def _check_env_sections(environ: Mapping[str, str]) -> None:
    """Refuse an ``ENGRAM_<SECTION>__<KEY>`` whose section does not exist: pydantic-settings
    reads only the sections it knows and would drop it silently (a misspelt ``ENGRAM_SERCH__``
    would do nothing). An unknown key of a known section is refused by validation."""
    sections = [name for name in EngramConfig.model_fields if name != "root"]
    for name in environ:
        upper = name.upper()
        if not upper.startswith("ENGRAM_") or "__" not in upper:
            continue
        section = upper[len("ENGRAM_") :].split("__", 1)[0].lower()
        if section not in sections:
            raise ConfigError(
                f"{name} names no section of the configuration ({section!r}); the sections are "
                f"{', '.join(sections)} (ENGRAM_<SECTION>__<KEY>, see docs/configuration.md)"
            )


_PLUGIN_KEYS = {"store": "backend", "embedder": "provider", "extractor": "provider"}


def _merge_layer(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``layer`` over ``base``; a layer that picks another plugin starts that
    section afresh, so options meant for the old plugin are not handed to the new one."""
    out = dict(base)
    for key, value in layer.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            switch = _PLUGIN_KEYS.get(key)
            if switch and switch in value and value[switch] != old.get(switch):
                out[key] = dict(value)
            else:
                out[key] = _merge_layer(old, value)
        else:
            out[key] = value
    return out


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["store.backend=lancedb", "search.limit=10"]`` → nested dict (values parsed as TOML)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE (e.g. store.backend=sqlite), got {pair!r}")
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(
                    f"--set {pair}: {part} was already given a plain value; it cannot hold keys"
                )
            node = child
        node[parts[-1]] = value
    return out


def plugin_options(
    config: EngramConfig,
    registry: Registry,
    kind: Kind,
    name: str,
    raw: dict[str, Any],
    section: str,
) -> BaseModel:
    """Phase two: validate a section's extra keys against the chosen plugin's options model."""
    entry = registry.get(kind, name)
    try:
        options = entry.options.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, config._files, prefix=section)) from None
    return _resolve_paths(options, config.root)


def _resolve_paths(options: BaseModel, root: Path) -> BaseModel:
    """Relative ``Path`` options are relative to the project root, not the working directory."""
    updates: dict[str, Any] = {}
    for name in type(options).model_fields:
        value = getattr(options, name)
        if isinstance(value, Path) and not value.is_absolute() and str(value) != ":memory:":
            updates[name] = root / value.expanduser()
    return options.model_copy(update=updates) if updates else options


def _check_toml(path: Path) -> None:
    try:
        tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}; fix the file and run again") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; save it as UTF-8") from None


def _explain(exc: ValidationError, files: list[Path], prefix: str = "") -> str:
    lines = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown setting (check the spelling; see docs/configuration.md)"
        given = err.get("input")
        shown = f" (got {given!r})" if given is not None and not isinstance(given, dict) else ""
        if SECRET_NAME.search(loc):
            shown = ""  # never echo a key back into a terminal or a log
        lines.append(f"{loc or 'config'}: {msg}{shown}")
    where = f" in {', '.join(str(f) for f in files)}" if files else ""
    return f"invalid configuration{where}: " + "; ".join(lines)
