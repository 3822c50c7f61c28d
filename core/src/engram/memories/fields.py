"""The types a memory's frontmatter fields must have, checked when the memory is indexed.

A memory file is edited by hand too: ``type: [1, 2]`` or ``importance: lots`` must not pass
unnoticed, nor stop the file from being indexed. Each bad field gives one warning naming the
field, what it holds and the type it needs (the index run prefixes the file); the memory is
indexed as text all the same, and readers ignore the bad field (``scalar_text``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from engram.filters import parse_iso
from engram.text.redact import strip_private

__all__ = ["check_fields", "scalar_text", "when_text"]


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_when(value: Any) -> bool:
    if isinstance(value, date):  # YAML reads an unquoted ISO date as a date
        return True
    return isinstance(value, str) and parse_iso(value) is not None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str | int | float) for v in value)


def _is_revisions(value: Any) -> bool:
    """Earlier wordings (``engram.memories.lifecycle.revisions``), or an old file's bare count."""
    if _is_number(value):
        return True
    return isinstance(value, list) and all(
        isinstance(v, dict) and isinstance(v.get("wording"), str) for v in value
    )


# field → (check, the type it needs, in words)
FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (_is_text, "text"),
    "title": (_is_text, "text"),
    "type": (_is_text, "text (a memory type such as note, decision, fact)"),
    "scope": (_is_text, "text (project or user)"),
    "source": (_is_text, "text"),
    "project": (_is_text, "text"),
    "status": (_is_text, "text (live, superseded or archived)"),
    "superseded_by": (_is_text, "text (the id of the newer memory)"),
    "created_at": (_is_when, "an ISO date or time"),
    "updated_at": (_is_when, "an ISO date or time"),
    "importance": (_is_number, "a number"),
    "tags": (_is_text_list, "a list of words"),
    "supersedes": (_is_text_list, "a list of memory ids"),
    "conflicts_with": (_is_text_list, "a list of memory ids"),
    "related": (_is_text_list, "a list of memory ids"),
    "content_hash": (_is_text, "text (the hash of the normalised wording)"),
    "subject": (_is_text, "text (who or what the memory is about)"),
    "attribute": (_is_text, "text (what it says of its subject)"),
    "value": (_is_text, "text (the value it gives)"),
    "revisions": (_is_revisions, "a list of earlier wordings (each with a wording)"),
}


def check_fields(frontmatter: Mapping[str, Any]) -> list[str]:
    """One warning per known field whose value has the wrong type (absent or null is fine)."""
    warnings = []
    for name, (ok, expected) in FIELDS.items():
        value = frontmatter.get(name)
        if value is None or ok(value):
            continue
        warnings.append(
            f"frontmatter field {name!r} should be {expected}, not {_kind(value)}; the field "
            "is ignored and the memory is indexed as text"
        )
    return warnings


def scalar_text(value: object) -> str | None:
    """A frontmatter value as text for display, or None when it is not a single value (a list
    or mapping where text belongs is ignored, never shown as a Python repr)."""
    if value is None or isinstance(value, list | dict | set | tuple):
        return None
    return str(value)


def when_text(value: object) -> str | None:
    """A date field as read paths show it: an ISO date or time, else nothing (a hand-typed
    ``yesterday-ish`` is warned about on index, never shown as if it were a date)."""
    text = scalar_text(value)
    return text if text is not None and parse_iso(text) is not None else None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return f"the text {strip_private(value)[:40]!r}"
    return f"{type(value).__name__} {str(value)[:40]!r}"
