"""The judge: what a new memory is to a stored one close to it.

One of five relations, with a reason a person can read: ``same`` (merge), ``supersedes`` (the
newer replaces the older, kept as history), ``conflicts`` (maybe a change: both stay, newest
shown first), ``related`` (close, both stay, linked) or ``distinct``.

It compares the two memories' slots (``engram.memories.judge.slots``: subject, attribute, value),
then their wording (``engram.memories.judge.reading``). The rules, in the order they apply:

1. ``floor``: past the contradiction distance (0.5; 0.75 for structural types), nothing:
   "The man is aiming a gun" and "A girl is playing on a toy phone" are ``distinct``;
2. ``other subject``: two subjects are never merged, superseded or conflicting, at most
   related: "Deborah visited her mother's house" / "Jolene has a room in her mother's house";
3. ``explicit change``: the newer says it changed ("no longer", "moved to", "switched from X to
   Y", "now", "instead of", "Update: …") the same attribute of the same subject: "Alice lives in
   Paris" → "Alice moved to Berlin" supersedes;
4. ``reversed choice``: between two choices (prefers, likes, uses, wants, switched …), the
   newer rejects what the older chose: "prefers tabs over spaces" → "prefers spaces over tabs";
5. ``setting``: one setting's value after its key changes: "port 8080" → "port 9090";
6. ``same fact``: within the duplicate distance, same type, and nothing that carries meaning
   differs (number, identifier, path, name, polarity, content words): "The user prefers tabs
   for indentation." / "... indentation!" merge;
7. ``polarity flip`` / ``opposite word``: the same statement negated or with one antonym, the
   remaining words the same: "The cache is enabled in CI" → "... disabled in CI";
8. ``new value``: same subject and attribute, another value: a single-valued attribute ("lives
   in", "mother tongue", "deploy on", a role held by one: "the head coach of NAC Breda")
   supersedes; a many-valued one ("likes", "visited", "has")
   is related; another attribute conflicts when only a short value or a name differs
   ("Deploys are approved by Alice" → "... by Bob"), else is related; a change the newer says
   of the same subject's other attribute conflicts when the two are close
   (``CHANGE_DISTANCE``, 0.3) and the older mentions what changed:
   "Order ORTAND-88 is pending" → "Update: order ORTAND-88 has shipped";
9. ``differs``: anything else close is related (within the duplicate distance) or distinct.

The offline judge (``judge``) needs no model. An extractor may judge instead by implementing
``JudgesMemories`` (the ``llm`` extractor does); core falls back to the offline judge when it does
not, or when it fails. Figures on public NLI pairs: ``engram bench --sections memory``
(docs/benchmarks.md).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from engram.config import LifecycleConfig
from engram.memories.judge.choices import choice, reverses
from engram.memories.judge.lexicon import (
    ATTRIBUTES,
    FUNCTION_WORDS,
    MANY_VALUED,
    OPPOSITES,
    SINGLE_VALUED,
)
from engram.memories.judge.reading import Reading, read
from engram.memories.judge.slots import Slots, read_slots, same_subject, says_a_change
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
    """The offline verdict on ``old`` for ``new``: the first of the module docstring's rules
    that applies."""
    if distance > rules.contradiction_limit(new.type):
        return Verdict("distinct", f"floor: distance {distance:.2f} is past the limit")
    old_text = body(old)
    mine, theirs = slots_of(new), slots_of(old)
    near = distance <= rules.duplicate_limit(new.type)
    if same_subject(mine.subject, theirs.subject) is False:
        why = f"other subject: {mine.subject} vs {theirs.subject}"
        return Verdict("related" if near or _shares_value(mine, theirs) else "distinct", why)
    a, b = read(new.content), read(old_text)
    difference = meaning_difference(a, b)
    rules_ = (_explicit_change, _reversed_choice, _setting, None, _flip, _new_value, _unsure_change)
    for rule in rules_:
        if rule is None:  # rule 6, same fact: it needs the distance and the types
            if difference is None and near:
                if old.type != new.type:
                    return Verdict("related", f"the same words, but another type ({old.type})")
                return Verdict("same", "same fact: the same content words, values and polarity")
            continue
        found = rule(_Pair(new.content, old_text, a, b, mine, theirs, distance))
        if found is not None:
            kind, reason = found
            if kind == "supersedes":
                return _superseding(reason, old.type == new.type, old)
            return Verdict(kind, reason)
    if difference is None:
        return Verdict("distinct", f"differs: distance {distance:.2f} is past the duplicate limit")
    return Verdict("related" if near else "distinct", f"differs: {difference}")


def slots_of(memory: ExtractedMemory | KnownMemory) -> Slots:
    """A memory's slots: those its frontmatter (or extractor) gives, the rest read from its
    text; whether it says a change is always read from the text."""
    text = memory.content if isinstance(memory, ExtractedMemory) else body(memory)
    read_ = read_slots(text)
    return Slots(
        subject=memory.subject or read_.subject,
        attribute=memory.attribute or read_.attribute,
        value=memory.value or read_.value,
        change=read_.change,
        unique=read_.unique,
    )


def _shares_value(a: Slots, b: Slots) -> bool:
    return a.value is not None and a.value == b.value


_Found = tuple[Relation, str] | None

# A change's new value is a value, not a sentence: past this many words it is not read as one.
CHANGED_VALUE_WORDS = 6
# How close a memory about the same subject must be for a change said of another attribute to
# be linked ``conflicts_with`` (LoCoMo's facts about one person are 0.2 to 0.5 apart: past 0.3
# a "his new job" linked a dozen unrelated facts about him).
CHANGE_DISTANCE = 0.3


@dataclass(frozen=True, slots=True)
class _Pair:
    """What every rule looks at: both texts, their readings and slots, and their distance."""

    new_text: str
    old_text: str
    a: Reading
    b: Reading
    mine: Slots
    theirs: Slots
    distance: float


def _explicit_change(p: _Pair) -> _Found:
    """Rule 3: "Alice moved to Berlin" after "Alice lives in Paris". The change must be the
    statement's: a change word inside a long value ("offers tips … such as using coconut oil
    instead of butter") changes nothing of its subject."""
    if (
        not p.mine.change
        or p.mine.attribute is None
        or not same_subject(p.mine.subject, p.theirs.subject)
        or len((p.mine.value or "").split()) > CHANGED_VALUE_WORDS
    ):
        return None
    if p.mine.attribute == p.theirs.attribute or _head_of(p.mine.attribute, p.theirs.attribute):
        return "supersedes", f"explicit change of {p.mine.subject}'s {p.mine.attribute}"
    return None


def _unsure_change(p: _Pair) -> _Found:
    """Rule 8, last case: a change said in so many words of the same subject, another
    attribute ("Order ORTAND-88 is pending" → "Update: order ORTAND-88 has shipped"): maybe a
    change. Only for a close pair (``CHANGE_DISTANCE``): "Nate's game tournament got pushed
    back, so he tried making ice cream" changes none of Nate's other facts, and "Caroline is now
    ready to help others" says no change of anything in particular."""
    if p.distance > CHANGE_DISTANCE or not same_subject(p.mine.subject, p.theirs.subject):
        return None
    if not says_a_change(p.new_text) or not _mentions_what_changed(p):
        return None
    return "conflicts", f"explicit change of {p.mine.subject} ({p.mine.attribute}), unsure of what"


def _mentions_what_changed(p: _Pair) -> bool:
    """A change told of something the subject has ("Nate's game tournament got pushed back")
    is a change of that thing: it can only conflict with a memory that mentions it."""
    if not re.search(r"\w's\s", p.new_text) or not p.mine.attribute:
        return True
    owned = p.mine.attribute.split()[:-1]  # "game tournament get": the thing, then its verb
    old = p.old_text.casefold()
    return not owned or any(word in old for word in owned if len(word) > 2)


def _head_of(short: str | None, long: str | None) -> bool:
    """ "use" heads "use for storage": "switched to Postgres" changes what is used for it."""
    return bool(short and long and long.startswith(short + " "))


def _reversed_choice(p: _Pair) -> _Found:
    """Rule 4: "prefers spaces over tabs" after "prefers tabs over spaces"."""
    if not (_chooses(p.mine.attribute) and _chooses(p.theirs.attribute)):
        return None  # "Audrey believes in reinforcement rather than punishment" chooses nothing
    reason = reverses(choice(p.new_text), choice(p.old_text))
    if reason is None:
        return None
    if reason.startswith("chooses what was rejected") and p.mine.attribute != p.theirs.attribute:
        # "likes cycling with friends" after "prefers running rather than cycling": maybe a
        # change of mind, maybe another occasion ("prefers spaces" after "prefers tabs over
        # spaces" is the same choice made again, the other way).
        return "conflicts", f"reversed choice, unsure: {reason}"
    return "supersedes", f"reversed choice: {reason}"


# Attributes that state a choice (verb stems): only between two of these is a choice reversed.
_CHOICE_VERBS = (
    "prefer",
    "like",
    "love",
    "want",
    "use",
    "choos",
    "choose",
    "pick",
    "switch",
    "favor",
    "favour",
    "go with",
    "stick with",
    "opt for",
    "adopt",
    "settl on",
    "migrat",
    "replac",
)


def _chooses(attribute: str | None) -> bool:
    """Whether an attribute states a choice; an imperative ("Use spaces, not tabs") has none
    read, and may."""
    if attribute is None:
        return True
    return any(attribute == v or attribute.startswith(v + " ") for v in _CHOICE_VERBS)


def _setting(p: _Pair) -> _Found:
    """Rule 5: "listens on port 9090" after "listens on port 8080"."""
    changed = _attribute_change(p.a, p.b)
    return None if changed is None else ("supersedes", f"setting: {changed}")


def _flip(p: _Pair) -> _Found:
    """Rule 7: the same statement negated, or with one word for its opposite, and every other
    word the same ("The cache is enabled in CI" → "The cache is disabled in CI"). "Andrew has
    no pets" → "Andrew loves pets" says something else: not a flip."""
    if (p.a.identifiers, p.a.paths, p.a.values) != (p.b.identifiers, p.b.paths, p.b.values):
        return None
    swaps = _swaps(p.a, p.b)
    flipped = p.a.negated != p.b.negated
    if not flipped and not swaps:
        return None
    if flipped and len(swaps) % 2 == 1:
        return None  # "not open" vs "closed": the same claim said two ways
    if len(swaps) > 1:
        return None
    gone = {w for pair in swaps for w in pair}
    new_core = p.a.content - {_stem_of(p.a, w) for w in gone}
    old_core = p.b.content - {_stem_of(p.b, w) for w in gone}
    if new_core != old_core or not new_core:
        return None
    what = "polarity flip" if flipped else f"opposite word: {swaps[0][0]} vs {swaps[0][1]}"
    return "supersedes", f"{what} of the same statement"


def _new_value(p: _Pair) -> _Found:
    """Rule 8: same subject, same attribute, another value."""
    attribute = p.mine.attribute
    if attribute is None or attribute != p.theirs.attribute or p.a.negated != p.b.negated:
        return None
    if not same_subject(p.mine.subject, p.theirs.subject) and (p.mine.subject or p.theirs.subject):
        return None
    new_value, old_value = p.mine.value or "", p.theirs.value or ""
    if not new_value or not old_value or new_value == old_value:
        return None
    if new_value in old_value or old_value in new_value:
        return "related", f"new value: {new_value} adds to {old_value} ({attribute})"
    who = p.mine.subject or "it"
    if attribute in MANY_VALUED:
        return "related", f"new value: {who} {attribute} {new_value} as well as {old_value}"
    if attribute in SINGLE_VALUED or (p.mine.unique and p.theirs.unique):
        return "supersedes", f"new value: {who}'s {attribute} is {new_value}, was {old_value}"
    short = len(new_value.split()) <= _VALUE_WORDS and len(old_value.split()) <= _VALUE_WORDS
    names = _a_name(new_value, p.new_text) and _a_name(old_value, p.old_text)
    if (short or names) and _only_value_differs(p.new_text, p.old_text, new_value, old_value):
        return "conflicts", f"new value: {who} {attribute} {new_value}, was {old_value} (unsure)"
    return None


_VALUE_WORDS = 3  # a longer "value" is a statement of its own ("values family time and …")


def _a_name(value: str, text: str) -> bool:
    """Whether ``value`` is written as a name in ``text`` (its first letter a capital): a name
    is one value however many words it has ("Attorney General of New York"); a long lowercase
    "value" is a statement of its own."""
    bare = re.sub(r"^(?:the|a|an) ", "", value)
    at = text.casefold().find(bare)
    if at < 0:
        return False
    words = re.findall(r"[^\W_][\w'.-]*", text[at : at + len(bare)])
    # Every word a capital but the small words inside a name ("Governor of New York").
    return bool(words) and all(
        w[0].isupper() or w[0].isdigit() or w in _NAME_JOINERS for w in words
    )


_NAME_JOINERS = frozenset(
    ["of", "the", "and", "for", "to", "in", "on", "de", "da", "del", "von", "van", "la", "le"]
)


def _only_value_differs(new_text: str, old_text: str, new_value: str, old_value: str) -> bool:
    def rest(text: str, value: str) -> str:
        return " ".join(text.casefold().replace(value, " ").replace(".", " ").split())

    return rest(new_text, new_value) == rest(old_text, old_value)


def _superseding(reason: str, same_type: bool, old: KnownMemory) -> Verdict:
    if not same_type:
        return Verdict("conflicts", f"{reason}, but the types differ ({old.type})")
    return Verdict("supersedes", reason)


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
