"""A file's ``source`` label and the name stats give its record agree for every path: memory
folders and collections are ``memory`` (memories, collections), everything else ``vault`` (vault
notes), and a record from before the ``vault`` label (``memory`` on a vault note) is still named
a vault note."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from engram.filters import matches
from engram.ingest.sources import (
    COLLECTIONS,
    MEMORIES,
    NOTES,
    SourceNamer,
    label_files,
    source_filter,
)
from engram.ingest.vault import VaultFile

ROOT = Path("/project")
MEMORY_DIR, USER_DIR, COLLECTION_DIR = ROOT / "memory", Path("/home/u/mem"), ROOT / "collections"
PARENTS = {
    "vault": ROOT / "notes",
    "vault-lookalike": ROOT / "memory-notes",  # shares a prefix with the memory folder
    "project": MEMORY_DIR,
    "user": USER_DIR,
    "collections": COLLECTION_DIR / "docs",
}
EXPECTED = {
    "vault": NOTES,
    "vault-lookalike": NOTES,
    "project": MEMORIES,
    "user": MEMORIES,
    "collections": COLLECTIONS,
}
names = st.text("abcxyz-", min_size=1, max_size=8)


@given(st.sampled_from(sorted(PARENTS)), st.lists(names, min_size=1, max_size=3))
def test_label_and_name_agree_and_old_labels_are_named_right(where: str, parts: list[str]) -> None:
    path = PARENTS[where].joinpath(*parts[:-1], parts[-1] + ".md")
    doc_id = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
    found = VaultFile(path, PARENTS[where], doc_id)
    (labelled,) = label_files([found], [MEMORY_DIR, USER_DIR, COLLECTION_DIR])
    assert labelled.source == ("vault" if EXPECTED[where] == NOTES else "memory")
    name_of = SourceNamer(ROOT, [MEMORY_DIR, USER_DIR], COLLECTION_DIR)
    record = {"source": labelled.source, "path": path.as_posix()}
    assert name_of(record) == EXPECTED[where]
    assert name_of({**record, "source": "memory"}) == EXPECTED[where]  # before the label
    assert name_of({"source": "sessions", "path": "sessions/x"}) == "sessions"
    # A search limited to memory still finds every markdown file; vault only the notes.
    assert matches(source_filter("memory"), record)
    assert matches(source_filter("vault"), record) == (labelled.source == "vault")
    assert not matches(source_filter("sessions"), record)
