"""Chunks of a file get their memory folder's scope: by where the file really is (symlinks
followed), the deepest folder winning, a sibling folder with a longer name never taken."""

from __future__ import annotations

from pathlib import Path

from engram.chunking import MarkdownChunker
from engram.memories.chunks import scoped_chunks
from engram.memories.scopes import MemoryFolder


def test_a_file_gets_the_scope_of_the_memory_folder_it_really_lies_in(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    nested = memory / "team"
    sibling = tmp_path / "mem2"
    for folder in (nested, sibling, tmp_path / "vault"):
        folder.mkdir(parents=True)
    (tmp_path / "vault" / "link").symlink_to(nested, target_is_directory=True)
    folders = [MemoryFolder("project", memory), MemoryFolder("external", nested)]
    make = scoped_chunks(MarkdownChunker(), folders, tmp_path)

    def scope(document_id: str) -> object:
        chunks, _ = make(document_id, "# Note\n\nSome words.", "h")
        return chunks[0].metadata.get("memory_scope")

    assert scope("mem/a.md") == "project"
    assert scope("mem/team/b.md") == "external"  # the deepest folder
    assert scope("vault/link/c.md") == "external"  # through the link
    assert scope(str(tmp_path / "mem" / "d.md")) == "project"  # an absolute id
    assert scope("mem2/e.md") is None  # "mem" is a prefix of its text, not its folder
    assert scope("vault/f.md") is None
    assert scope("vault/../mem/g.md") == "project"
