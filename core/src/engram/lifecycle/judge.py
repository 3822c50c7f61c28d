"""The judge: what a new memory is to a stored one close to it.

One of five relations, with a reason a person can read:

- ``same``: the same fact (merge): close, same type, and nothing that carries meaning differs:
  no polarity flip, no antonym, no differing number, date, identifier, path, version or name, and
  the same content words;
- ``supersedes``: a confident reversal of the same statement (a polarity flip, an antonym, a
  preference reversed, an attribute's new value, "switched from X to Y");
- ``conflicts``: a reversal signal, but the statements differ too much to be sure: both stay;
- ``related``: close, but something that carries meaning differs: both stay;
- ``distinct``: not close enough to matter.

The offline judge (``judge``) needs no model. An extractor may judge instead by implementing
``JudgesMemories`` (the ``llm`` extractor does); core falls back to the offline judge when it does
not, or when it fails. Figures on public NLI pairs: ``engram bench --sections memory``
(docs/benchmarks.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from engram.config import LifecycleConfig
from engram.lifecycle.choices import choice, reverses
from engram.lifecycle.lexicon import ATTRIBUTES, FUNCTION_WORDS, OPPOSITES
from engram.lifecycle.reading import Reading, read
from engram.lifecycle.scenes import incompatible
from engram.models import ExtractedMemory, KnownMemory

Relation = Literal["same", "supersedes", "conflicts", "related", "distinct"]
RELATIONS: tuple[Relation, ...] = ("same", "supersedes", "conflicts", "related", "distinct")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The judge's answer for one stored memory, and why."""

    relation: Relation
    reason: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A stored memory close to the new one, and its cosine distance to it."""

    memory: KnownMemory
    distance: float


@runtime_checkable
class JudgesMemories(Protocol):
    """Optional for an extractor: its own verdict on each candidate (one per candidate, in
    order). Core checks a ``same`` against the offline judge's reading of values, identifiers
    and polarity before merging, and uses the offline judge when this raises."""

    def judge_memories(
        self, new: ExtractedMemory, candidates: Sequence[Candidate], rules: LifecycleConfig
    ) -> list[Verdict]: ...


def judge(
    new: ExtractedMemory, old: KnownMemory, distance: float, rules: LifecycleConfig
) -> Verdict:
    """The offline verdict on ``old`` for ``new`` (see the module docstring)."""
    same_type = old.type == new.type
    old_text = body(old)
    a, b = read(new.content), read(old_text)
    if distance > rules.contradiction_limit(new.type):
        scene = _scene(a, b) if distance <= rules.incompatible_distance else None
        if scene is not None:
            return _superseding(scene, same_type, old)
        return Verdict("distinct", f"distance {distance:.2f} is past the contradiction limit")
    near = distance <= rules.duplicate_limit(new.type)
    reversal = _reversal(new.content, old_text, a, b)
    if reversal is None and distance <= rules.incompatible_distance:
        scene = _scene(a, b)
        reversal = None if scene is None else ("supersedes", scene)
    if reversal is not None:
        kind, reason = reversal
        if kind == "supersedes":
            return _superseding(reason, same_type, old)
        return Verdict(kind, reason)
    difference = meaning_difference(a, b)
    if difference is not None:
        return Verdict("related" if near else "distinct", difference)
    if not near:
        return Verdict("distinct", f"distance {distance:.2f} is past the duplicate limit")
    if not same_type:
        return Verdict("related", f"the same words, but another type ({old.type})")
    return Verdict("same", "the same content words, values and polarity")


def _superseding(reason: str, same_type: bool, old: KnownMemory) -> Verdict:
    if not same_type:
        return Verdict("conflicts", f"{reason}, but the types differ ({old.type})")
    return Verdict("supersedes", reason)


def _scene(a: Reading, b: Reading) -> str | None:
    """A statement excluding what the same subject did or where it was (``scenes``), when no
    identifier or path says the two are about different things."""
    if a.identifiers != b.identifiers or a.paths != b.paths:
        return None
    return incompatible(a, b)


def body(memory: KnownMemory) -> str:
    """A stored memory's text without the ``# title`` heading engram writes above it (the new
    memory has none, and a title's words are not a difference in the fact)."""
    text = memory.content.lstrip()
    if text.startswith("#"):
        heading, _, rest = text.partition("\n")
        if memory.title is None or heading.lstrip("# ").strip() == memory.title.strip():
            return rest.strip() or text
    return text


def meaning_difference(a: Reading, b: Reading) -> str | None:
    """What differs between two readings that carries meaning, or None when nothing does."""
    for label, new, old in (
        ("identifier", a.identifiers, b.identifiers),
        ("path", a.paths, b.paths),
        ("number, date or version", a.values, b.values),
        ("name", a.names, b.names),
    ):
        if new != old:
            return f"a different {label}: {_show(new - old)} vs {_show(old - new)}"
    if a.negated != b.negated:
        return "a polarity flip"
    swapped = _swaps(a, b)
    if swapped:
        return f"opposite words: {swapped[0][0]} vs {swapped[0][1]}"
    if a.content != b.content:
        return f"different words: {_show(a.content - b.content)} vs {_show(b.content - a.content)}"
    return None


def _reversal(new_text: str, old_text: str, a: Reading, b: Reading) -> tuple[Relation, str] | None:
    """("supersedes" or "conflicts", why) when ``new`` reverses ``old``, else None."""
    reason = reverses(choice(new_text), choice(old_text))
    if reason is not None:
        return "supersedes", f"a reversed choice: {reason}"
    changed = _attribute_change(a, b)
    if changed is not None:
        return "supersedes", changed
    if (a.identifiers != b.identifiers) or (a.paths != b.paths) or (a.values != b.values):
        return None  # another invoice, host or count: a different thing, not a reversal
    swaps = _swaps(a, b)
    flipped = a.negated != b.negated
    if not flipped and not swaps:
        return None
    if flipped and len(swaps) % 2 == 1:
        return None  # "not open" vs "closed": the same claim said two ways
    reason = "a polarity flip" if flipped else f"opposite words: {swaps[0][0]} vs {swaps[0][1]}"
    gone = {w for pair in swaps for w in pair}
    new_core = a.content - {_stem_of(a, w) for w in gone}
    old_core = b.content - {_stem_of(b, w) for w in gone}
    if a.names == b.names and _same_statement(new_core, old_core, flipped, a.negated):
        return "supersedes", f"{reason} of the same statement"
    shared = new_core & old_core
    if shared and len(shared) / len(new_core | old_core) >= 0.3:
        return "conflicts", f"{reason}, but the statements differ"
    return None


def _same_statement(new: frozenset[str], old: frozenset[str], flipped: bool, negated: bool) -> bool:
    """Whether a flip or an antonym applies to the same statement. A negation must sit on the
    statement that the other one contains ("a man in a red shirt plays" → "the man is not
    playing"; not "... which doesn't look like a bathroom" → "a man is shaving"). An antonym
    needs half of the new statement's other words in the old one ("a red scarf" → "a black
    scarf")."""
    if new == old:
        return True
    shared = new & old
    if flipped:
        negated_side, other = (new, old) if negated else (old, new)
        return negated_side <= other and len(shared) >= 2
    return bool(shared) and len(shared) / max(1, len(new)) >= 0.5


def _swaps(a: Reading, b: Reading) -> list[tuple[str, str]]:
    """Antonyms or exclusive words: (a word only the new text has, its opposite only the old
    text has)."""
    only_new, only_old = a.words - b.words, b.words - a.words
    out = []
    for word in sorted(only_new):
        opposite = sorted(OPPOSITES.get(word, frozenset()) & only_old)
        if opposite:
            out.append((word, opposite[0]))
    return out


def _stem_of(reading: Reading, word: str) -> str:
    for token in reading.tokens:
        if token.lower == word:
            return token.stem
    return word


def _attribute_change(a: Reading, b: Reading) -> str | None:
    """The same statement with one value replaced after an attribute word ("port 8080" →
    "port 9090", "owner is alice" → "owner is bob"): that attribute's new value."""
    new = [t.lower for t in a.tokens if t.lower not in ("now", "currently", "anymore")]
    old = [t.lower for t in b.tokens if t.lower not in ("now", "currently", "anymore")]
    ops = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()]
    changes = [op for op in ops if op[0] != "equal"]
    if len(changes) != 1 or changes[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changes[0]
    if i2 - i1 > 3 or j2 - j1 > 3:
        return None
    before = [w for w in new[max(0, j1 - 3) : j1] if w not in FUNCTION_WORDS or w in ATTRIBUTES]
    key = next((w for w in reversed(before) if w.rstrip(":") in ATTRIBUTES), None)
    if key is None:
        return None
    was, now = " ".join(old[i1:i2]), " ".join(new[j1:j2])
    return f"{key.rstrip(':')} changed from {was} to {now}"


def _show(items: frozenset[str]) -> str:
    return ", ".join(sorted(items)) or "nothing"


def offline_verdicts(
    new: ExtractedMemory, candidates: Sequence[Candidate], rules: LifecycleConfig
) -> list[Verdict]:
    return [judge(new, c.memory, c.distance, rules) for c in candidates]


def keep_safe(
    new: ExtractedMemory, candidate: Candidate, verdict: Verdict, rules: LifecycleConfig
) -> Verdict:
    """Another judge's ``same`` stands only where the offline reading finds no difference in
    values, identifiers, paths, names or polarity, and the distance is within the duplicate
    limit: a merge is never decided on a model's word alone."""
    if verdict.relation != "same":
        return verdict
    if candidate.distance > rules.duplicate_limit(new.type) or candidate.memory.type != new.type:
        return Verdict("related", f"{verdict.reason} (kept apart: not close enough to merge)")
    a, b = read(new.content), read(body(candidate.memory))
    difference = meaning_difference(a, b)
    if difference is not None and not difference.startswith("different words"):
        return Verdict("related", f"{verdict.reason} (kept apart: {difference})")
    return verdict
