"""Re-indexing a vault trusts a file's stat only where it proves the file unchanged: any change
of size, mtime or inode sends the file to its content hash; a touch costs a hash, not an
embedding; deleted and renamed files leave the store. On the SQLite store (its bulk stamp read)
and on the built-in memory store (core's fallback over ``list_documents``) alike."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.ingest.document_ids import document_id_for
from engram.memory import Memory
from support import MemoryFactory, note, write_vault

STORES = ["sqlite", "memory"]


def _age(path: Path, seconds: float = 60) -> None:
    """Date a file back, as a note written before this session (see ``engram.stamps``)."""
    st_ = path.stat()
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns - int(seconds * 1e9)))


def _keep_mtime(path: Path, mtime_ns: int) -> None:
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _indexed(memory: Memory, vault: Path) -> tuple[int, int, int, int, int]:
    r = memory.index([vault])
    return r.new, r.changed, r.unchanged, r.removed, r.texts_embedded


def _vault(tmp_path: Path, files: int = 4) -> Path:
    vault = write_vault(tmp_path / "vault", {f"n/{i}.md": note(i) for i in range(files)})
    for path in (vault / "n").iterdir():
        _age(path)
    return vault


@pytest.mark.parametrize("store", STORES)
def test_an_edit_within_the_same_mtime_that_changes_the_size_is_read(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    vault = _vault(tmp_path)
    memory = open_memory(store=store)
    memory.index([vault])
    path = vault / "n" / "1.md"
    mtime = path.stat().st_mtime_ns
    path.write_text(path.read_text(encoding="utf-8") + "\nZebrafish appendix.\n", "utf-8")
    _keep_mtime(path, mtime)  # same mtime tick: only the size tells
    new, changed, unchanged, _, embedded = _indexed(memory, vault)
    assert (new, changed, unchanged) == (0, 1, 3) and embedded >= 1
    assert memory.store.keyword_search("zebrafish", 5)


@pytest.mark.parametrize("store", STORES)
def test_a_file_replaced_with_the_same_size_and_mtime_is_read_by_its_new_inode(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    vault = _vault(tmp_path)
    memory = open_memory(store=store)
    memory.index([vault])
    path = vault / "n" / "2.md"
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    swapped = text.replace("This", "Quux", 1)
    assert len(swapped) == len(text) and swapped != text
    # An editor's atomic save: write a new file beside it, rename it over (a new inode).
    spare = vault / "n" / "2.md.tmp"
    spare.write_text(swapped, encoding="utf-8")
    _keep_mtime(spare, before.st_mtime_ns)
    spare.replace(path)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
    assert _indexed(memory, vault)[:3] == (0, 1, 3)
    assert memory.store.keyword_search("quux", 5)


@pytest.mark.parametrize("store", STORES)
def test_a_touched_file_is_hashed_once_not_embedded_and_then_trusted_again(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    vault = _vault(tmp_path)
    memory = open_memory(store=store)
    memory.index([vault])
    path = vault / "n" / "0.md"
    path.touch()
    _age(path)  # a new mtime, older than this run: trusted once the record has it
    assert _indexed(memory, vault) == (0, 0, 4, 0, 0)
    record = memory.store.list_documents()["vault/n/0.md"]
    assert record.metadata["stat"] == [
        path.stat().st_size,
        path.stat().st_mtime_ns,
        path.stat().st_ino,
        path.stat().st_ctime_ns,
    ]
    # The record learnt the new stat: the next run proves the file unchanged without reading
    # it (no ctime moved), but a same-size edit whose mtime was put back moved the ctime.
    assert _indexed(memory, vault) == (0, 0, 4, 0, 0)
    text = path.read_text(encoding="utf-8")
    mtime = path.stat().st_mtime_ns
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("This", "Wxyz", 1))
    _keep_mtime(path, mtime)
    new, changed, unchanged, _, _ = _indexed(memory, vault)
    assert (new, changed, unchanged) == (0, 1, 3)


def _same_size_edit(path: Path, how: str) -> None:
    """Rewrite ``path`` in place (same inode, same size, "alpha" becomes "gamma") with its mtime
    put back: by ``os.utime`` (``touch -r``), or by ``shutil.copy2`` of an edited copy dated
    like the original (``cp -p`` onto the file, as some sync tools write)."""
    st_ = path.stat()
    edited = path.read_text(encoding="utf-8").replace("alpha", "gamma")
    if how == "utime":
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(edited)
        _keep_mtime(path, st_.st_mtime_ns)
    else:
        spare = path.with_name("spare.txt")
        spare.write_text(edited, encoding="utf-8")
        os.utime(spare, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        shutil.copy2(spare, path)
        spare.unlink()
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        st_.st_size,
        st_.st_mtime_ns,
        st_.st_ino,
    )


@pytest.mark.parametrize("how", ["utime", "copy2"])
@pytest.mark.parametrize("store", STORES)
def test_a_same_size_edit_with_its_mtime_put_back_is_indexed_again(
    tmp_path: Path, open_memory: MemoryFactory, store: str, how: str
) -> None:
    """Issue 39, point 6: the stamp's ctime, which ``utime`` cannot set back, sees the edit."""
    vault = write_vault(tmp_path / "vault", {"n/a.md": "# Notes\n\nThe alpha release ships.\n"})
    _age(vault / "n" / "a.md")
    memory = open_memory(store=store)
    memory.index([vault])
    assert _indexed(memory, vault) == (0, 0, 1, 0, 0)  # trusted: not read again
    _same_size_edit(vault / "n" / "a.md", how)
    new, changed, unchanged, _, _ = _indexed(memory, vault)
    assert (new, changed, unchanged) == (0, 1, 0)
    assert memory.store.keyword_search("gamma", 5)
    assert not memory.store.keyword_search("alpha", 5)


@pytest.mark.parametrize("store", STORES)
def test_deleted_and_renamed_files_leave_the_store_and_the_new_name_is_indexed(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    vault = _vault(tmp_path)
    memory = open_memory(store=store)
    memory.index([vault])
    (vault / "n" / "0.md").unlink()
    (vault / "n" / "1.md").rename(vault / "n" / "renamed.md")
    new, changed, unchanged, removed, _ = _indexed(memory, vault)
    assert (new, changed, unchanged, removed) == (1, 0, 2, 2)
    assert set(memory.store.list_documents()) == {
        "vault/n/2.md",
        "vault/n/3.md",
        "vault/n/renamed.md",
    }
    chunk_docs = {c.document_id for batch in memory.store.iter_chunks() for c in batch}
    assert chunk_docs == set(memory.store.list_documents())


def test_what_remember_wrote_and_indexed_is_left_alone_by_the_next_index(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    """``remember`` indexes the text it wrote without reading it back (core/tests/
    test_remember_index.py, on the memory store); on SQLite's bulk stamp read too, the records
    it leaves are the ones a re-index expects: nothing embedded, written or deleted."""
    memory = open_memory(cache={"enabled": False})
    memory.remember("The user prefers tabs over spaces in Go code.", type="preference")
    memory.remember("The user prefers spaces over tabs in Go code.", type="preference")
    memory.remember("Releases are tagged from main.", type="decision")
    memory.remember("releases are tagged  from MAIN", type="decision")
    records = memory.store.list_documents()
    assert len(records) == 3  # one merged into, one superseded (kept), one new
    for doc_id, record in records.items():
        path = tmp_path / doc_id
        assert record.hash == hashlib.sha256(path.read_bytes()).hexdigest()
        st_ = path.stat()
        assert record.metadata["stat"] == [
            st_.st_size,
            st_.st_mtime_ns,
            st_.st_ino,
            st_.st_ctime_ns,
        ]
    report = memory.index()
    assert (report.new, report.changed, report.unchanged) == (0, 0, 3)
    assert (report.texts_embedded, report.chunks_written, report.chunks_deleted) == (0, 0, 0)


def test_records_dropped_elsewhere_are_indexed_again_not_hidden_by_the_stamp_cache(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    """SQLite keeps the stamps a no-op reads in a cache (in memory and in a file beside the
    index). A change to the records made elsewhere (another Memory on the same index, as
    another process would) shows at the next run: in the Memory that holds the cache, and in
    one that starts from a cache file written before that change."""
    vault = _vault(tmp_path)
    mine = open_memory()
    assert _indexed(mine, vault)[:4] == (4, 0, 0, 0)
    assert _indexed(mine, vault)[:4] == (0, 0, 4, 0)  # the stamps are cached now
    other = open_memory()
    other.store.delete_documents(["vault/n/1.md"])
    assert _indexed(mine, vault)[:4] == (1, 0, 3, 0)
    other.store.delete_documents(["vault/n/2.md"])
    mine.close()  # writes its cache file, older than the deletion just made
    third = open_memory()
    assert _indexed(third, vault)[:4] == (1, 0, 3, 0)
    assert _indexed(third, vault)[:4] == (0, 0, 4, 0)
    assert set(third.store.list_documents()) == {f"vault/n/{i}.md" for i in range(4)}


@pytest.mark.parametrize("store", STORES)
def test_indexing_one_folder_leaves_the_records_of_a_sibling_folder_alone(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    """Roots are compared as paths: indexing ``vault/n`` never takes ``vault/n2`` for part
    of it (and so never removes its records)."""
    vault = write_vault(tmp_path / "vault", {"n/a.md": note(1), "n2/b.md": note(2)})
    memory = open_memory(store=store)
    memory.index([vault / "n2"])
    report = memory.index([vault / "n"])
    assert (report.new, report.removed) == (1, 0)
    assert set(memory.store.list_documents()) == {"vault/n/a.md", "vault/n2/b.md"}


@pytest.mark.parametrize("store", STORES)
def test_a_vault_reached_through_a_symlink_is_one_vault_whichever_path_is_given(
    tmp_path: Path, open_memory: MemoryFactory, store: str
) -> None:
    """``index`` resolves its roots once and the walk and the stamp read share them: through
    the link or the real folder, the second run reads nothing and removes nothing."""
    vault = _vault(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(vault, target_is_directory=True)
    memory = open_memory(store=store)
    assert _indexed(memory, link)[:4] == (4, 0, 0, 0)
    assert _indexed(memory, link) == (0, 0, 4, 0, 0)
    assert _indexed(memory, vault) == (0, 0, 4, 0, 0)
    paths = {d.metadata["path"] for d in memory.store.list_documents().values()}
    assert paths == {(vault / "n" / f"{i}.md").resolve().as_posix() for i in range(4)}


# -- the invariant: after any edits, the store holds exactly the files, at their content ------

OPS = st.lists(
    st.tuples(
        st.sampled_from(["edit-same-mtime", "edit", "touch", "delete", "rename", "create"]),
        st.integers(0, 5),
    ),
    max_size=6,
)


@pytest.mark.parametrize("store", STORES)
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rounds=st.lists(OPS, min_size=1, max_size=2))
def test_after_any_edits_the_store_holds_exactly_the_files_at_their_content(
    tmp_path_factory: pytest.TempPathFactory,
    open_memory: MemoryFactory,
    store: str,
    rounds: list[list[tuple[str, int]]],
) -> None:
    """Every change a stat can see (size, mtime, inode) is indexed; a same-size edit within the
    same mtime is left out, being the one change a stat cannot see (as for make and git)."""
    root = tmp_path_factory.mktemp("vault")
    vault = write_vault(root, {f"f{i}.md": note(i) for i in range(3)})
    for path in vault.iterdir():
        _age(path)
    memory = open_memory(store=store)
    memory.index([vault])
    serial = 0
    for ops in rounds:
        for op, pick in ops:
            serial += 1
            files = sorted(vault.glob("*.md"))
            if op == "create" or not files:
                write_vault(vault, {f"new{serial}.md": note(serial) + f"\nCreated {serial}.\n"})
                continue
            path = files[pick % len(files)]
            mtime = path.stat().st_mtime_ns
            if op == "edit-same-mtime":  # grows the file: its size tells
                path.write_text(path.read_text("utf-8") + f"\nAdded {serial}.\n", "utf-8")
                _keep_mtime(path, mtime)
            elif op == "edit":
                path.write_text(note(serial) + f"\nRewritten {serial}.\n", encoding="utf-8")
            elif op == "touch":
                path.touch()
            elif op == "delete":
                path.unlink()
            else:
                path.rename(vault / f"moved{serial}.md")
        memory.index([vault])
        on_disk = {
            document_id_for(p.resolve(), memory.config.root): hashlib.sha256(
                p.read_bytes()
            ).hexdigest()
            for p in vault.glob("*.md")
        }
        # The store outlives one example (the fixture is the test's): look at this vault's part.
        mine = document_id_for(vault.resolve(), memory.config.root) + "/"
        records = memory.store.list_documents()
        assert {i: d.hash for i, d in records.items() if i.startswith(mine)} == on_disk
        chunks = {c.document_id for batch in memory.store.iter_chunks() for c in batch}
        assert {i for i in chunks if i.startswith(mine)} == set(on_disk)


def test_a_record_indexed_before_the_ctime_is_hashed_once_and_never_trusted(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    """A SQLite index of an engram that kept (size, mtime_ns, inode): migration 6 leaves its
    records unvouched, so a same-size edit with the mtime put back (which the old stamp took as
    unchanged) is indexed, every other file hashed once, then all trusted with their ctime."""
    vault = write_vault(
        tmp_path / "vault",
        {"n/a.md": "# Notes\n\nThe alpha release ships.\n", "n/b.md": note(1)},
    )
    for path in (vault / "n").iterdir():
        _age(path)
    with Memory.open(open_memory(store="sqlite").config) as first:
        first.index([vault])
    index = tmp_path / ".engram" / "index.sqlite"
    with sqlite3.connect(index) as conn:  # as the engram before the ctime wrote it
        conn.execute("UPDATE documents SET metadata = json_remove(metadata, '$.stat[3]')")
        conn.execute("ALTER TABLE documents DROP COLUMN ctime_ns")
        conn.execute("PRAGMA user_version = 5")
    conn.close()
    _same_size_edit(vault / "n" / "a.md", "utime")
    memory = open_memory(store="sqlite")
    new, changed, unchanged, _, _ = _indexed(memory, vault)
    assert (new, changed, unchanged) == (0, 1, 1)
    assert memory.store.keyword_search("gamma", 5)
    assert not memory.store.keyword_search("alpha", 5)
    for doc_id, record in memory.store.list_documents().items():
        st_ = (tmp_path / doc_id).stat()
        assert record.metadata["stat"] == [
            st_.st_size,
            st_.st_mtime_ns,
            st_.st_ino,
            st_.st_ctime_ns,
        ]
    assert _indexed(memory, vault) == (0, 0, 2, 0, 0)
