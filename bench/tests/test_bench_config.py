"""Bench configuration: scales, the reproducible command line, the quick preset."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.errors import ConfigError
from engram_bench.config import (
    command_for,
    default_config,
    parse_scale,
    quick_config,
    split_list,
)
from engram_bench.machine import machine_slug


@pytest.mark.parametrize(
    ("text", "value"),
    [("10k", 10_000), ("100K", 100_000), ("1m", 1_000_000), ("2500", 2500), ("1.5k", 1500)],
)
def test_scales_read_like_people_write_them(text: str, value: int) -> None:
    assert parse_scale(text) == value


@pytest.mark.parametrize("text", ["ten", "5", "k"])
def test_bad_scales_say_what_is_expected(text: str) -> None:
    with pytest.raises(ConfigError, match="--scale"):
        parse_scale(text)


def test_command_line_reproduces_what_differs_from_the_preset() -> None:
    assert command_for(default_config()) == "engram bench"
    config = quick_config(stores=["memory"], data=Path("/d"), store_options={"x": {"k": 1}})
    assert command_for(config) == (
        "engram bench --quick --stores memory --data /d --store-option x.k=1"
    )
    assert command_for(default_config(peers=[], cold_open=False)) == (
        "engram bench --peers none --no-cold-open"
    )
    assert command_for(default_config(floor_on_every_store=False)) == (
        "engram bench --floor-on-first-store"
    )


def test_quick_preset_is_small_and_needs_no_model() -> None:
    quick = quick_config()
    assert quick.embedders == ["hash"] and quick.scales == [1000] and quick.vault_files == 20
    assert quick.peers == [] and quick.quick
    full = default_config()
    assert full.scales == [10_000, 100_000] and full.embedders == ["local", "hash"]


def test_lists_and_machine_names() -> None:
    assert split_list(" a, b,,c ") == ["a", "b", "c"] and split_list(None) is None
    slug = machine_slug({"cpu": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cores": 2})
    assert slug == "intel-xeon-2c"
