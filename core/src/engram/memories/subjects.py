"""A memory's subject as search filters it: the same match as ``engram list --subject``.

A subject is written as given ("Caroline" for a captured fact, "alice" read from the text), and
store filters are exact, so indexing gives a memory's chunks two derived fields:

- ``subject_key``: the subject casefolded, whitespace collapsed, a trailing "'s" off
  ("Caroline" → ``caroline``, "Jolene\u2019s" → ``jolene``);
- ``subject_keys``: that key and each run of its words from its first or its last word
  ("danielle darrieux" → ``danielle darrieux``, ``danielle``, ``darrieux``).

``subject_filter("Darrieux")`` then matches, with typed filters only (``Contains`` and ``In``,
never text spliced into a query), exactly the memories ``same_subject``
(``engram.memories.judge.slots``) calls the same subject: one key a run of the other's words
from either end, whatever the case. Memories indexed before these fields existed are
found by a subject typed exactly as stored until ``engram rebuild`` (or their next change)
indexes them again: an unchanged file is not read again by ``engram index``.
"""

from __future__ import annotations

from typing import Any

from engram.filters import Contains, Eq, Filter, In, Or

KEY_FIELD = "subject_key"
KEYS_FIELD = "subject_keys"


def subject_key(subject: str) -> str:
    """The subject as compared: casefolded, whitespace collapsed, typographic apostrophes
    straightened and a trailing possessive off ("Jolene\u2019s" is ``jolene``)."""
    text = subject.replace("\u2019", "'").casefold().removesuffix("'s")
    return " ".join(text.split())


def affixes(key: str) -> list[str]:
    """The runs of ``key``'s words from its first word or its last, the whole key first."""
    words = key.split()
    runs = [" ".join(words[:n]) for n in range(len(words), 0, -1)]
    runs += [" ".join(words[n:]) for n in range(1, len(words))]
    return list(dict.fromkeys(runs))


def subject_fields(subject: object) -> dict[str, Any]:
    """The chunk fields a memory with frontmatter ``subject`` gets (none for a missing, empty
    or non-text subject)."""
    if not isinstance(subject, str):
        return {}
    key = subject_key(subject)
    if not key:
        return {}
    return {KEY_FIELD: key, KEYS_FIELD: affixes(key)}


def subject_filter(subject: str) -> Filter:
    """Chunks of memories about ``subject`` (any case; a name finds a longer one ending or
    starting with it, and the other way round). A subject with no words matches nothing."""
    key = subject_key(subject)
    if not key:
        return In(field=KEY_FIELD, values=[])
    return Or(
        filters=[
            Contains(field=KEYS_FIELD, value=key),  # the stored subject is the longer
            In(field=KEY_FIELD, values=list(affixes(key))),  # the asked one is the longer
            Eq(field="subject", value=subject),  # indexed before the keys: as stored
        ]
    )
