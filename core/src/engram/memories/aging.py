"""``engram age``: the aging rules (``engram.memories.judge.aging``) applied to the memory folders,
a folder at a time under its write lock: older statements superseded by the latest, old session
summaries condensed into a learned pattern (by an extractor that condenses) or archived. Every
change keeps the words: a superseded or archived memory stays on disk, marked. A learned
pattern is written with the ``remember`` it is given (``engram.memories.agent.remember``, which ages
a type that ages as it writes: given, not imported, so the two do not import each other)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from engram.ingest.sync import IndexReport
from engram.memories.files import memory_files, read_info
from engram.memories.judge.aging import plan_aging
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import index_documents, mark, now_ms, read_known, retire
from engram.memories.scopes import MemoryFolder
from engram.memories.writer import Writer
from engram.models import MemoryInfo, StoredMemory

# remember(writer, content, *, title, type, scope, tags, source, importance, now, on_collision)
Remember = Callable[..., StoredMemory]


class AgingReport(IndexReport):
    """What ``engram age`` did (or would do): memories superseded, condensed, archived."""

    superseded: list[str] = []
    condensed: list[str] = []
    archived: list[str] = []
    learned: list[str] = []


def age(
    writer: Writer,
    remember: Remember,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    folders: Sequence[MemoryFolder] | None = None,
) -> AgingReport:
    """Apply the aging rules to the given memory folders (default: every writable one)."""
    when = now_ms(now)
    report = AgingReport(dry_run=dry_run)
    for folder in (f for f in folders or writer.folders if f.writable):
        with write_lock(folder.path):
            _age_folder(writer, remember, folder, report, dry_run, when)
    return report


def _age_folder(
    writer: Writer,
    remember: Remember,
    folder: MemoryFolder,
    report: AgingReport,
    dry_run: bool,
    when: datetime,
) -> None:
    infos = [read_info(p, writer.config.root) for p in memory_files(folder.path)]
    plan = plan_aging(infos, writer.config.lifecycle)
    changed: list[str] = []
    for old, newer in plan.superseded:
        report.superseded.append(old.path)
        if not dry_run and newer.id:
            retire(writer, [old.path], newer.path, newer.id, when)
            changed.extend([old.path, newer.path])
    for group in plan.condense:
        changed.extend(_condense(writer, remember, folder, group, report, dry_run, when))
    if changed:
        _add(report, index_documents(writer, changed))


def _condense(
    writer: Writer,
    remember: Remember,
    folder: MemoryFolder,
    group: list[MemoryInfo],
    report: AgingReport,
    dry_run: bool,
    when: datetime,
) -> list[str]:
    """Condense old session summaries into a learned pattern, or archive them."""
    from engram.protocols import Condenses

    extractor = writer.extractor
    learned = None
    if isinstance(extractor, Condenses) and not dry_run:
        known = [k for k in (read_known(writer, m.path) for m in group) if k is not None]
        try:
            learned = extractor.condense(known)
        except Exception as exc:  # someone else's code: archive instead of failing the write
            report.warnings.append(f"condensing session summaries failed ({exc}); archived them")
    paths = [m.path for m in group]
    if dry_run:
        report.condensed.extend(paths)
        return []
    if learned is not None:
        stored = remember(
            writer,
            learned.content,
            title=learned.title,
            type="learned-pattern",
            scope="user" if folder.scope == "user" else "project",
            tags=learned.tags,
            source="condense",
            importance=learned.importance,
            now=when,
            on_collision="new",  # a condensed pattern is never refused nor folded into another
        )
        report.learned.append(stored.path)
        report.condensed.extend(paths)
        retire(writer, paths, stored.path, stored.id, when)
        paths = [*paths, stored.path]
    else:
        report.archived.extend(paths)
        mark(writer, paths, {"status": "archived"}, when)
    return paths


def _add(report: IndexReport, other: IndexReport) -> None:
    report.chunks_written += other.chunks_written
    report.chunks_deleted += other.chunks_deleted
    report.texts_embedded += other.texts_embedded
    report.warnings.extend(other.warnings)
