"""Vault indexing end to end over the built-in memory store: incremental, rebuildable,
forgiving."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.models import Chunk, Document
from support import MemoryFactory, note, write_vault


class CountingStore:
    """Delegates to a real store and counts writes: proof that a no-op run touches nothing."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes: list[str] = []

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        self.writes.append("upsert")
        self.inner.upsert(chunks)

    def delete(self, ids: Sequence[str]) -> None:
        self.writes.append("delete")
        self.inner.delete(ids)

    def delete_documents(self, ids: Sequence[str]) -> None:
        self.writes.append("delete_documents")
        self.inner.delete_documents(ids)

    def put_document(self, document: Document) -> None:
        self.writes.append("put_document")
        self.inner.put_document(document)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _snapshot(memory: Any) -> dict[str, Chunk]:
    return {c.id: c for batch in memory.store.iter_chunks() for c in batch}


def test_unchanged_vault_of_1000_files_embeds_nothing_and_touches_no_chunk(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(tmp_path / "vault", {f"n/{i:04}.md": note(i) for i in range(1000)})
    # Notes written earlier, as a vault's are: a file indexed within 2 s of being written is
    # hashed once more on the next run and its record restamped (one record write, no chunk).
    _age(list((vault / "n").iterdir()), 60)
    memory = open_memory()
    first = memory.index([vault])
    assert (first.new, first.changed, first.unchanged) == (1000, 0, 0)
    assert first.chunks_written >= 1000
    before = _snapshot(memory)

    spy = CountingStore(memory.store)
    memory.store = spy  # type: ignore[assignment]  # a delegating spy, not a Store class
    calls_before = memory.embedder.calls
    again = memory.index([vault])
    assert (again.new, again.changed, again.unchanged, again.removed) == (0, 0, 1000, 0)
    assert again.chunks_written == 0 and again.texts_embedded == 0
    assert memory.embedder.calls == calls_before, "the embedder was called on an unchanged vault"
    assert spy.writes == [], f"a no-op run wrote to the store: {spy.writes[:5]}"
    assert _snapshot(memory) == before


def test_changed_file_reembeds_only_new_text_and_removed_file_is_dropped(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(
        tmp_path / "v",
        {"a.md": "# A\n\nalpha text\n\n## B\n\nbeta text\n", "b.md": "# Other\n\ngamma\n"},
    )
    memory = open_memory()
    memory.index([vault])
    (vault / "a.md").write_text(
        "# A\n\nalpha text\n\n## B\n\nbeta text changed\n", encoding="utf-8"
    )
    (vault / "b.md").unlink()
    report = memory.index([vault])
    assert (report.changed, report.removed, report.unchanged) == (1, 1, 0)
    assert set(memory.store.list_documents()) == {"v/a.md"}
    texts = [c.text for batch in memory.store.iter_chunks() for c in batch]
    assert any("beta text changed" in t for t in texts)
    assert not any("gamma" in t for t in texts)
    assert memory.search("gamma", mode="keyword").hits == []


def test_dry_run_writes_nothing(tmp_path: Path, open_memory: MemoryFactory) -> None:
    vault = write_vault(tmp_path / "v", {"a.md": "# A\n\nsome words\n"})
    memory = open_memory()
    report = memory.index([vault], dry_run=True)
    assert report.new == 1 and report.dry_run
    assert memory.store.count() == 0 and memory.store.list_documents() == {}


def test_binary_and_non_utf8_files_are_skipped_with_a_reason(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(
        tmp_path / "v",
        {
            "good.md": "# Good\n\nreadable note\n",
            "bin.md": b"\x89PNG\x00\x01\x02",
            "latin.md": "caf\xe9".encode("latin-1"),
        },
    )
    memory = open_memory()
    report = memory.index([vault])
    reasons = {s.path: s.reason for s in report.skipped}
    assert set(reasons) == {"v/bin.md", "v/latin.md"}
    assert "binary" in reasons["v/bin.md"] and "UTF-8" in reasons["v/latin.md"]
    assert report.new == 1
    assert memory.search("readable", mode="keyword").hits


def test_empty_vault_warns_and_indexes_nothing(tmp_path: Path, open_memory: MemoryFactory) -> None:
    (tmp_path / "empty").mkdir()
    memory = open_memory()
    report = memory.index([tmp_path / "empty"])
    assert report.new == 0 and memory.store.count() == 0
    assert any("no markdown files" in w for w in report.warnings)


def test_gitignore_hidden_folders_and_globs_are_respected(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(
        tmp_path / "v",
        {
            ".gitignore": "drafts/\nsecret.md\n",
            "keep.md": "# keep\n",
            "secret.md": "# secret\n",
            "drafts/wip.md": "# wip\n",
            ".obsidian/workspace.md": "# obsidian internals\n",
            "sub/.gitignore": "*.tmp.md\n",
            "sub/x.tmp.md": "# temp\n",
            "sub/y.md": "# y\n",
            "notes.txt": "not markdown",
            "archive/old.md": "# old\n",
        },
    )
    memory = open_memory(vault={"exclude": ["archive/**"]})
    memory.index([vault])
    assert set(memory.store.list_documents()) == {"v/keep.md", "v/sub/y.md"}


def test_rebuild_recreates_the_store_from_markdown_alone(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(tmp_path / "v", {f"{i}.md": note(i) for i in range(20)})
    memory = open_memory()
    memory.index([vault])
    before = sorted((c.id, c.text) for b in memory.store.iter_chunks() for c in b)
    memory.store.reset()
    assert memory.store.count() == 0
    report = memory.rebuild()
    assert report.new == 20
    after = sorted((c.id, c.text) for b in memory.store.iter_chunks() for c in b)
    assert after == before


def test_private_spans_never_reach_the_store(tmp_path: Path, open_memory: MemoryFactory) -> None:
    vault = write_vault(
        tmp_path / "v", {"a.md": "# Keys\n\nour token is <private>sk-SECRET-123</private> ok\n"}
    )
    memory = open_memory()
    memory.index([vault])
    texts = " ".join(c.text for b in memory.store.iter_chunks() for c in b)
    assert "sk-SECRET-123" not in texts and "token is" in texts


def test_embedder_failure_keeps_keyword_search_and_next_run_embeds_what_is_missing(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(tmp_path / "v", {"a.md": "# A\n\nresilient indexing\n"})
    memory = open_memory()
    real = memory.embedder.inner

    class Down:
        name, model, dimension = real.name, real.model, real.dimension

        def embed(self, texts: Sequence[str], input_type: str = "document") -> list[list[float]]:
            raise ConnectionError("embedding API unreachable")

    memory.embedder.inner = Down()
    report = memory.index([vault])
    assert report.pending_embeddings == 1 and any(
        "keyword search only" in w for w in report.warnings
    )
    assert memory.search("resilient", mode="keyword").hits
    degraded = memory.search("resilient indexing", mode="hybrid")
    assert degraded.degraded and degraded.hits
    memory.embedder.inner = real
    again = memory.index([vault])
    assert again.changed == 1 and again.pending_embeddings == 0 and again.texts_embedded >= 1
    assert memory.search("resilient indexing", mode="vector").hits


def _age(paths: Sequence[Path], seconds: float) -> None:
    """Set the files' mtime ``seconds`` in the past (as files not edited during indexing)."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def _same_size_edit(path: Path, word: str, keep_mtime: bool) -> None:
    """Replace "This" in the note with ``word`` (four letters), in place, same size."""
    st = path.stat()
    old = path.read_text(encoding="utf-8")
    new = old.replace("This", word, 1)
    assert len(new.encode()) == len(old.encode()) and new != old
    with open(path, "r+", encoding="utf-8") as handle:  # same inode
        handle.write(new)
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_file_whose_stat_is_unchanged_is_not_read(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(tmp_path / "vault", {f"n/{i}.md": note(i) for i in range(5)})
    _age(list((vault / "n").iterdir()), 60)
    memory = open_memory()
    memory.index([vault])
    # Same size, mtime, inode and ctime: the record's stat says unchanged, so the file is not
    # read: a record whose content hash no longer matches it is still taken as current.
    record = memory.store.list_documents()["vault/n/0.md"]
    memory.store.put_document(record.model_copy(update={"hash": "0" * 64}))
    again = memory.index([vault])
    assert (again.changed, again.unchanged) == (0, 5)
    # A same-size edit with its mtime put back moved the ctime (``utime`` cannot set it): read.
    _same_size_edit(vault / "n" / "0.md", "Xylo", keep_mtime=True)
    hidden = memory.index([vault])
    assert (hidden.changed, hidden.unchanged) == (1, 4)
    assert memory.store.keyword_search("Xylo", 5)
    # Any stat change falls back to the content hash: a real edit is indexed...
    _same_size_edit(vault / "n" / "1.md", "Yarn", keep_mtime=False)
    edited = memory.index([vault])
    assert (edited.changed, edited.unchanged) == (1, 4)
    assert memory.store.keyword_search("Yarn", 5)
    # ...and a touch (same content) is not, though its record learns the new stat.
    (vault / "n" / "2.md").touch()
    touched = memory.index([vault])
    assert (touched.changed, touched.unchanged, touched.chunks_written) == (0, 5, 0)
    stat = memory.store.list_documents()["vault/n/2.md"].metadata["stat"]
    assert isinstance(stat, list) and stat[1] == (vault / "n" / "2.md").stat().st_mtime_ns


def test_a_file_edited_right_after_its_indexing_is_hashed_not_trusted(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    vault = write_vault(tmp_path / "vault", {"n/fresh.md": note(1)})
    memory = open_memory()
    memory.index([vault])  # its mtime is within STABLE_S of the indexing: racily clean
    _same_size_edit(vault / "n" / "fresh.md", "Zarf", keep_mtime=True)
    again = memory.index([vault])
    assert again.changed == 1 and memory.store.keyword_search("Zarf", 5)
    # Once old enough, the racily clean file's record is restamped by the next run (so later
    # runs trust its stat); the restamp writes the record only.
    _age([vault / "n" / "fresh.md"], 60)
    spy = CountingStore(memory.store)
    memory.store = spy  # type: ignore[assignment]  # a delegating spy, not a Store class
    settled = memory.index([vault])
    assert (settled.changed, settled.unchanged) == (0, 1) and spy.writes == ["put_document"]
    spy.writes.clear()
    assert memory.index([vault]).unchanged == 1 and spy.writes == []


def _by_pathspec(vault: Path, include: list[str]) -> set[str]:
    """The files gitignore-style ``include`` selects, by pathspec itself (the reference)."""
    from pathspec import PathSpec

    spec = PathSpec.from_lines("gitignore", include)
    found = {p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file()}
    return {f"v/{rel}" for rel in found if spec.match_file(rel)}


def test_include_patterns_select_what_gitignore_rules_select_on_both_paths(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    """The default patterns are tested by suffix (one ``endswith`` a file), any others by
    their regex; both select exactly what pathspec does, odd names included: a file named
    ``.md``, upper case, a suffix not at the end, and a folder named ``x.md`` (gitignore's
    ``*.md`` matches the folder, so everything in it)."""
    vault = write_vault(
        tmp_path / "v",
        {
            name: "# a note\n\nwords\n"
            for name in [
                "a.md",
                "b.markdown",
                "c.MD",
                "d.md.txt",
                "e.txt",
                "f.mdx",
                "n/.md",
                "n/deep/g.md",
                "x.md/inside.txt",
                "n/y.markdown/z/w.txt",
                "notes/h.md",
                "notes/sub/i.md",
            ]
        },
    )
    for include in (["**/*.md", "**/*.markdown"], ["*.md"], ["notes/**/*.md", "e.txt"]):
        memory = open_memory(vault={"include": include})
        memory.index([vault])
        want = _by_pathspec(vault, include)
        assert want and set(memory.store.list_documents()) == want, include
