"""What a benchmark run covers. ``default_config()`` is the full run (``nox -s bench``);
``quick_config()`` is the smoke configuration CI runs in seconds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engram.errors import ConfigError

Section = Literal["quality", "peers", "speed", "pipeline", "memory"]
SECTIONS: tuple[Section, ...] = ("quality", "peers", "speed", "pipeline", "memory")
DEFAULT_SCALES = (10_000, 100_000)
ONE_MILLION = 1_000_000


def default_cache_dir() -> Path:
    """Where embeddings of the datasets are kept between runs (they never change)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "engram" / "bench"


class BenchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sections: list[Section] = Field(default_factory=lambda: list(SECTIONS))
    stores: list[str] | None = None  # None: every installed store
    embedders: list[str] = Field(default_factory=lambda: ["local", "hash"])
    embedder_options: dict[str, dict[str, Any]] = Field(
        default_factory=lambda: {"hash": {"dimension": 384}}
    )
    store_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    datasets: list[str] = Field(default_factory=lambda: ["scifact", "locomo"])
    data: Path = Path("../shared/data")
    out: Path = Path("bench/results")
    cache: Path = Field(default_factory=default_cache_dir)
    max_queries: int | None = Field(default=None, ge=1)
    quality_latency_queries: int = Field(default=30, ge=1)
    candidates: int = Field(default=40, ge=1, le=1000)
    floor_on_every_store: bool = True  # False: the embedders after the first on one store only
    scales: list[int] = Field(default_factory=lambda: list(DEFAULT_SCALES))
    dimension: int = Field(default=384, ge=8)
    speed_queries: int = Field(default=200, ge=5)
    batch_size: int = Field(default=1000, ge=1)
    cold_open: bool = True
    vault_files: int = Field(default=1000, ge=1)
    throughput_texts: int = Field(default=256, ge=8)
    peers: list[str] = Field(default_factory=lambda: ["txtai"])
    peer_python: Path | None = None
    plots: bool = True
    # The memory section: NLI pairs (None: the committed SNLI sample), at most this many per gold
    # label (None: all), the embedder its write path uses, and the llm extractor's options
    # (None: llm runs only when OPENAI_API_KEY is set).
    nli_pairs: Path | None = None
    nli_per_label: int | None = Field(default=None, ge=1)
    memory_embedder: str = "local"
    llm_options: dict[str, Any] | None = None
    quick: bool = False


def default_config(**changes: Any) -> BenchConfig:
    return BenchConfig(**changes)


def quick_config(**changes: Any) -> BenchConfig:
    """Every section on a small scale: hash embedder, 1,000 synthetic chunks, a 20-file vault."""
    values: dict[str, Any] = {
        "quick": True,
        "embedders": ["hash"],
        "max_queries": 50,
        "quality_latency_queries": 5,
        "scales": [1000],
        "speed_queries": 20,
        "batch_size": 250,
        "vault_files": 20,
        "throughput_texts": 16,
        "peers": [],
        "cold_open": False,
        "nli_per_label": 3,
        "memory_embedder": "hash",
    }
    values.update(changes)
    return BenchConfig(**values)


def parse_scale(text: str) -> int:
    """``10k`` → 10000, ``1m`` → 1000000, ``2500`` → 2500."""
    raw = text.strip().lower().replace("_", "").replace(",", "")
    factor = 1
    if raw.endswith("k"):
        raw, factor = raw[:-1], 1000
    elif raw.endswith("m"):
        raw, factor = raw[:-1], 1_000_000
    try:
        value = int(float(raw) * factor)
    except ValueError:
        raise ConfigError(
            f"--scale takes chunk counts like 10k,100k or 2500, got {text!r}"
        ) from None
    if value < 100:
        raise ConfigError(f"--scale {text!r} is too small; use at least 100 chunks")
    return value


def split_list(text: str | None) -> list[str] | None:
    """``"a, b"`` → ``["a", "b"]``; None stays None."""
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


_FLAGS = {
    "stores": "--stores",
    "embedders": "--embedders",
    "datasets": "--datasets",
    "sections": "--sections",
    "peers": "--peers",
    "data": "--data",
    "out": "--out",
    "cache": "--cache",
    "peer_python": "--peer-python",
    "max_queries": "--max-queries",
    "candidates": "--candidates",
    "vault_files": "--vault-files",
    "scales": "--scale",
    "nli_per_label": "--nli-per-label",
}


def command_for(config: BenchConfig) -> str:
    """The ``engram bench`` command line that reproduces ``config``."""
    base = quick_config() if config.quick else default_config()
    parts = ["engram", "bench"] + (["--quick"] if config.quick else [])
    for field, flag in _FLAGS.items():
        value = getattr(config, field)
        if value == getattr(base, field) or value is None:
            continue
        if isinstance(value, list):
            parts += [flag, ",".join(str(v) for v in value) or "none"]
        else:
            parts += [flag, str(value)]
    if config.floor_on_every_store != base.floor_on_every_store:
        parts.append(
            "--floor-on-every-store" if config.floor_on_every_store else "--floor-on-first-store"
        )
    if config.cold_open != base.cold_open:
        parts.append("--cold-open" if config.cold_open else "--no-cold-open")
    for name, options in sorted(config.store_options.items()):
        parts += [f"--store-option {name}.{key}={value}" for key, value in options.items()]
    if not config.plots:
        parts.append("--no-plots")
    return " ".join(parts)
