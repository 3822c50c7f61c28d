"""A memory's earlier wordings: kept in its own frontmatter under ``revisions``, oldest first.

Why the frontmatter and not a sibling file: a merge or a restore then changes one file with one
atomic replace, so a crash can never leave a wording in neither place; ``engram rebuild`` reads
them back from the markdown like everything else; and the body (the only part chunked and
embedded) stays the current wording, so a revision is history, never a live search result.

Each entry: ``wording`` (the text), ``title``, ``when`` (when that wording was written),
``replaced_at`` and ``why`` (``merged``: the same fact written again in other words; ``restored``:
an earlier version was brought back). Older files hold a bare count (``revisions: 2``) from
before wordings were kept; that reads as no revisions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.models import Revision

REVISIONS_KEY = "revisions"

__all__ = ["REVISIONS_KEY", "Revision", "revisions_from", "revisions_of", "with_revision"]


def revisions_of(path: Path) -> list[Revision]:
    """Every earlier wording of the memory stored at ``path``, oldest first."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return revisions_from(read_frontmatter(text).metadata)


def revisions_from(meta: dict[str, Any]) -> list[Revision]:
    """The ``revisions`` of a frontmatter mapping (entries that are not revisions are skipped)."""
    raw = meta.get(REVISIONS_KEY)
    if not isinstance(raw, list):
        return []
    out = []
    for entry in raw:
        if isinstance(entry, dict) and isinstance(entry.get("wording"), str):
            out.append(
                Revision(
                    wording=entry["wording"],
                    title=_text(entry.get("title")),
                    when=_text(entry.get("when")),
                    replaced_at=_text(entry.get("replaced_at")),
                    why=_text(entry.get("why")) or "merged",
                )
            )
    return out


def with_revision(meta: dict[str, Any], revision: Revision) -> list[Any]:
    """The ``revisions`` list of ``meta`` with ``revision`` appended (as frontmatter data).
    Entries that are not revisions (a hand edit) are kept as they are: nothing written there
    is dropped."""
    raw = meta.get(REVISIONS_KEY)
    kept = list(raw) if isinstance(raw, list) else []
    return [*kept, revision.model_dump(exclude_none=True)]


def _text(value: object) -> str | None:
    return None if value is None else str(value)
