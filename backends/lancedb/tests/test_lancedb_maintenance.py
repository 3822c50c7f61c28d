"""Upkeep: ``optimize()`` compacts and prunes, runs by itself every ``optimize_every`` writes,
and builds an ANN index past ``ann_threshold`` whose recall is measured against exact search."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from engram import Chunk, Eq
from engram.testing.data import IDENTITY, chunk
from engram.testing.host import run_cli
from engram_lancedb.recall import fill, measure_recall, random_units
from engram_lancedb.store import LanceDBStore

MakeStore = Callable[..., LanceDBStore]


def write_one_by_one(store: LanceDBStore, n: int) -> None:
    store.set_identity(IDENTITY)
    for i in range(n):
        store.upsert([chunk(i)])


def test_optimize_compacts_small_files_and_drops_old_versions(make_store: MakeStore) -> None:
    store = make_store(optimize_every=0, keep_versions_minutes=0)
    write_one_by_one(store, 12)
    before = store.diagnostics()
    assert before["fragments"] == 12 and before["versions"] > 12
    with pytest.warns(UserWarning, match="removes every version except the latest"):
        report = store.optimize()  # LanceDB warns about keep_versions_minutes = 0
    after = store.diagnostics()
    assert after["fragments"] == 1 and after["versions"] < before["versions"]
    assert report.tables["engram_chunks"].fragments_before == 12
    assert report.tables["engram_chunks"].rows == 12
    assert "not needed yet: 12 vectors" in report.ann_index
    assert store.count() == 12 and len(store.vector_search(chunk(3).vector or [], 12)) == 12


def test_optimize_runs_by_itself_every_n_writes(make_store: MakeStore, tmp_path: Path) -> None:
    manual = make_store(path=tmp_path / "manual", optimize_every=0)
    automatic = make_store(path=tmp_path / "automatic", optimize_every=5)
    for store in (manual, automatic):
        write_one_by_one(store, 12)
    assert manual.diagnostics()["fragments"] == 12
    assert automatic.diagnostics()["fragments"] < 6, "two automatic runs compact the files"
    assert automatic.count() == manual.count() == 12


def unindexed_keyword_rows(folder: Path) -> int:
    """Rows the keyword (FTS) index does not cover yet, read with LanceDB's own API."""
    import lancedb

    table = lancedb.connect(str(folder)).open_table("engram_chunks")
    (fts,) = [i for i in table.list_indices() if i.index_type == "FTS"]
    stats = table.index_stats(fts.name)
    assert stats is not None
    return int(stats.num_unindexed_rows)


def test_a_few_large_writes_trigger_optimize_by_rows(make_store: MakeStore, tmp_path: Path) -> None:
    """A bulk import of a few big batches (migrate, a large vault) is never left to keyword
    searches that scan every row: ``optimize_rows`` rows trigger an optimize too."""
    manual = make_store(path=tmp_path / "manual", optimize_every=0, optimize_rows=0)
    automatic = make_store(path=tmp_path / "automatic", optimize_every=0, optimize_rows=50)
    for store in (manual, automatic):
        store.set_identity(IDENTITY)
        for start in (0, 20, 40):
            store.upsert([chunk(i) for i in range(start, start + 20)])
    assert unindexed_keyword_rows(tmp_path / "manual") == 60
    assert unindexed_keyword_rows(tmp_path / "automatic") == 0
    assert manual.diagnostics()["fragments"] == 3
    assert automatic.diagnostics()["fragments"] == 1
    hits = automatic.keyword_search(chunk(7).text, 5)
    assert hits and hits[0].chunk.id == chunk(7).id
    assert automatic.count() == manual.count() == 60


def test_the_rows_trigger_grows_with_the_table(make_store: MakeStore, tmp_path: Path) -> None:
    """Each optimize rewrites the table's small files into one, so a fixed rows trigger would
    make a bulk import quadratic: with ``optimize_growth`` the trigger grows with the table, and
    the rows the keyword index has not seen stay below that share of it."""
    fixed = make_store(
        path=tmp_path / "fixed", optimize_every=0, optimize_rows=20, optimize_growth=0
    )
    growing = make_store(
        path=tmp_path / "growing", optimize_every=0, optimize_rows=20, optimize_growth=1.0
    )
    unindexed: dict[str, list[int]] = {"fixed": [], "growing": []}
    for name, store in (("fixed", fixed), ("growing", growing)):
        store.set_identity(IDENTITY)
        for start in range(0, 140, 20):
            store.upsert([chunk(i) for i in range(start, start + 20)])
            unindexed[name].append(unindexed_keyword_rows(tmp_path / name))
    assert unindexed["fixed"] == [0] * 7
    # optimizes at 20, 40 and 80 rows; the next one is due at 160
    assert unindexed["growing"] == [0, 0, 20, 0, 20, 40, 60]
    assert growing.keyword_search(chunk(130).text, 1)[0].chunk.id == chunk(130).id
    assert growing.count() == fixed.count() == 140


def test_the_ann_index_is_built_past_the_threshold_and_recall_is_measured(
    make_store: MakeStore,
) -> None:
    store = make_store(ann_threshold=300, optimize_every=0)
    fill(store, rows=600, dimension=16, batch=200)
    assert "IvfHnswSq" not in store.diagnostics()["indexes"]
    report = store.optimize()
    assert report.ann_index == "ivf_hnsw_sq created over 600 vectors"
    assert "IvfHnswSq" in store.diagnostics()["indexes"]
    assert store.optimize().ann_index == "ivf_hnsw_sq present"

    recall = measure_recall(store, random_units(30, 16, seed=7), k=10)
    print(f"recall@10 with the index: {recall.recall:.3f} (worst query {recall.worst:.2f})")
    assert recall.queries == 30 and 0.0 < recall.recall <= 1.0
    assert recall.recall >= 0.8, "ef and refine_factor should keep recall high on 600 rows"

    # A row added after the index is built is searched too (flat over unindexed rows).
    fresh = random_units(1, 16, seed=99)[0]
    store.upsert([Chunk(id="late", document_id="d", text="late", vector=fresh)])
    (hit,) = store.vector_search(fresh, 1)
    assert hit.chunk.id == "late" and hit.score == pytest.approx(1.0, abs=1e-5)


def test_a_large_table_gets_an_id_index_and_lookups_stay_exact(make_store: MakeStore) -> None:
    store = make_store(ann_index="none", optimize_every=0)
    fill(store, rows=10_000, dimension=8, batch=10_000)
    report = store.optimize()
    assert report.ann_index == "off (ann_index = none; exact search over 10000 vectors)"
    assert "BTree" in store.diagnostics()["indexes"]
    assert [c.id for c in store.get(["r9999", "nope", "r0"])] == ["r9999", "r0"]
    store.upsert([Chunk(id="r5", document_id="d", text="replaced")])
    assert store.count() == 10_000 and store.get(["r5"])[0].text == "replaced"


def test_filtered_search_with_an_ann_index_still_honours_the_filter(
    make_store: MakeStore,
) -> None:
    store = make_store(ann_threshold=256, ann_index="ivf_pq", optimize_every=0)
    store.set_identity(IDENTITY)
    vectors = random_units(400, IDENTITY.dimension, seed=3)
    store.upsert(
        [
            Chunk(
                id=f"c{i}",
                document_id="d",
                text="t",
                vector=v,
                metadata={"group": "rare" if i % 50 == 0 else "common"},
            )
            for i, v in enumerate(vectors)
        ]
    )
    assert store.optimize().ann_index.startswith("ivf_pq created")
    rare = Eq(field="group", value="rare")
    hits = store.vector_search(vectors[1], 5, rare)
    assert [h.chunk.metadata["group"] for h in hits] == ["rare"] * 5
    exact = store.vector_search(vectors[1], 5, rare, exact=True)
    assert {h.chunk.id for h in hits} == {h.chunk.id for h in exact}


def test_engram_optimize_runs_the_configured_lancedb_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "lancedb"\n\n[embedder]\nprovider = "hash"\n\n'
        '[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    (tmp_path / "notes").mkdir()
    for i in range(5):
        (tmp_path / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\nabout thing {i}\n")
    monkeypatch.chdir(tmp_path)
    assert run_cli(["index"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert run_cli(["optimize"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "optimized the LanceDB store at" in out and "engram_chunks: 5 rows" in out
    assert run_cli(["optimize", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["optimized"] is True
    assert payload["report"]["tables"]["engram_documents"]["rows"] == 5
