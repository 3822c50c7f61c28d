"""What one indexing run did, for every source: the summary line, the JSON, the warnings."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

Progress = Callable[[int, int, str], None]  # (done, total, current path)

# The counters that add up when one run covers several sources (a rebuild: vault + sessions).
COUNTS = (
    "new",
    "changed",
    "unchanged",
    "removed",
    "empty",
    "chunks_written",
    "chunks_deleted",
    "texts_embedded",
    "pending_embeddings",
)


class Skipped(BaseModel):
    path: str
    reason: str


class IndexReport(BaseModel):
    """What one ``engram index`` run did; printed as the summary line and returned as JSON."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    empty: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0
    pending_embeddings: int = 0
    skipped: list[Skipped] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    dry_run: bool = False

    def summary(self) -> str:
        verb = "would index" if self.dry_run else "indexed"
        parts = [
            f"{verb}: {self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.removed} removed files",
            f"{self.chunks_written} chunks written, {self.chunks_deleted} deleted",
            f"{self.texts_embedded} texts embedded",
        ]
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.pending_embeddings:
            parts.append(f"{self.pending_embeddings} files still need embeddings (run index again)")
        parts.append(f"{self.seconds:.2f}s")
        return "; ".join(parts)


class IndexInterrupted(KeyboardInterrupt):
    """Ctrl+C during a run, with the report so far: the chunk and embedding counts are what was
    written; new and changed count the files looked at, whose last batch may not have been.
    Nothing is lost: a document's record is written last, so the next run redoes what was cut."""

    def __init__(self, report: IndexReport) -> None:
        super().__init__("interrupted")
        self.report = report


def merge_reports(into: IndexReport, other: IndexReport) -> IndexReport:
    """Add ``other``'s counts, skips and warnings to ``into`` (a rebuild runs both sources)."""
    for name in COUNTS:
        setattr(into, name, getattr(into, name) + getattr(other, name))
    into.skipped.extend(other.skipped)
    into.warnings.extend(other.warnings)
    into.seconds += other.seconds
    return into
