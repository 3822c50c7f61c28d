"""Two statements about one subject that cannot both be true: "a man is sitting in a barber's
chair" then "the man is standing in the shop", "a boy is asleep" then "the boy is playing
football".

The cosine gate of the other rules misses most of these (a different activity reads as a
different text), so ``judge`` asks this reading out to a wider distance (``incompatible_distance``)
and it must be sure on its own: both statements open with a subject of the same family (a man and
the man, a girl and a person), and the newer one says of it a state, activity or place that
excludes one only the older one said (``scene_words``). A habit, a taste, a plan or an ability
("the dog sleeps in the kitchen", "the kids like swimming") is not a scene: two of them hold
together. Anything less keeps both memories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from engram.lifecycle.lexicon import FUNCTION_WORDS, NUMBER_WORDS
from engram.lifecycle.reading import Reading, Token, stem
from engram.lifecycle.scene_words import (
    ACTIVITIES,
    AGES,
    ASLEEP,
    AWAKE,
    BODY_STATES,
    COLLECTIVES,
    COLOURS,
    INDOORS,
    NOT_A_SCENE,
    OUTDOORS,
    PERSONS,
    SIZES,
    SPORTS,
    SUBJECTS,
    TERRAINS,
)

# A subject is named in a statement's opening words, before any possessive or preposition:
# "the user's wife" is about the user, "a photo of a dog" about a photo, "my sister" is one
# of many people the same user may speak of (no rule reads a family member's gender).
_OPENING = 5
_NOT_BEFORE_SUBJECT = frozenset(
    [
        "of",
        "with",
        "in",
        "on",
        "at",
        "near",
        "behind",
        "by",
        "for",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "its",
        "whose",
    ]
)


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words.split())


_COLOURS = {colour: colour for colour in COLOURS.split()}
_FAMILY: dict[str, str] = {
    word: family for family, words in SUBJECTS.items() for word in words.split()
}


def _exclusions() -> dict[str, frozenset[str]]:
    """Stem → the stems it excludes."""
    out: dict[str, set[str]] = {}

    def exclude(left: frozenset[str], right: frozenset[str]) -> None:
        for a in left:
            out.setdefault(a, set()).update(right - {a})
        for b in right:
            out.setdefault(b, set()).update(left - {b})

    for words in BODY_STATES + ACTIVITIES + TERRAINS:
        for a, b in combinations([_stems(part) for part in words.split("|")], 2):
            exclude(a - b, b - a)
    exclude(_stems(ASLEEP), _stems(f"{AWAKE} {SPORTS}") - _stems(ASLEEP))
    exclude(_stems(INDOORS), _stems(OUTDOORS))
    return {k: frozenset(v) for k, v in out.items()}


EXCLUDES = _exclusions()
_NOT_A_SCENE = frozenset(NOT_A_SCENE.split())

# Simple-present forms ("sleeps", "sits") of the verbs above.
_PRESENT = frozenset(
    word
    for words in (*BODY_STATES, *ACTIVITIES, AWAKE)
    for word in words.split()
    if word.endswith("s") and not word.endswith(("ss", "ing")) and stem(word) != word
)


def _before_nouns(reading: Reading, words: Mapping[str, str]) -> dict[str, str]:
    """Noun stem → what the word of ``words`` one or two words before it reads as ("a red
    cap" → cap: red, "a large tan dog" → dog: big)."""
    tokens = reading.tokens
    out: dict[str, str] = {}
    for i, token in enumerate(tokens):
        if token.lower not in words:
            continue
        for noun in tokens[i + 1 : i + 3]:
            if noun.lower in FUNCTION_WORDS or noun.lower in words:
                break
            out.setdefault(noun.stem, words[token.lower])
    return out


def _changed(new: Reading, old: Reading, words: Mapping[str, str]) -> str | None:
    """A thing described one way here and another way before ("a green hoodie" / "a pink
    hoodie", "a small dog" / "a large dog"), when neither description is in the other text (a
    black and white dog is also white)."""
    before, now = _before_nouns(old, words), _before_nouns(new, words)
    old_reads = {words[w] for w in old.words if w in words}
    new_reads = {words[w] for w in new.words if w in words}
    for noun, what in sorted(now.items()):
        was = before.get(noun)
        if was and was != what and what not in old_reads and was not in new_reads:
            return f"a {what} {noun} where it was {was}"
    return None


def _recounted(new: Reading, old: Reading) -> str | None:
    """Another number of the same thing ("two dogs" / "three dogs")."""
    before, now = _before_nouns(old, NUMBER_WORDS), _before_nouns(new, NUMBER_WORDS)
    for noun, count in sorted(now.items()):
        was = before.get(noun)
        if was and was != count:
            return f"{count} of {noun} where there were {was}"
    return None


def _habitual(reading: Reading) -> bool:
    """Whether a statement says what its subject does as a habit: a verb this module knows in
    the simple present ("the dog sleeps in the kitchen"), not "is sleeping"."""
    return any(
        t.lower in _PRESENT and t.lower not in _FAMILY and t.lower not in _COLOURS
        for t in reading.tokens
    )


def _caption(reading: Reading) -> bool:
    """Whether a statement opens like a caption of one moment ("A man sits on a bench", "Two
    dogs run"): in the simple present it then describes a scene, not a habit of someone known
    ("The dog sleeps in the kitchen")."""
    first = reading.tokens[0].lower if reading.tokens else ""
    return first in ("a", "an") or first in NUMBER_WORDS


def _family_stems(family: str) -> frozenset[str]:
    return _stems(SUBJECTS[family])


def _other_sex(who_new: str, who_old: str, new: Reading, old: Reading) -> str | None:
    """A woman where there was a man (or the other way round), and neither text names anyone
    of the other's sex."""
    if {who_new, who_old} != {"male", "female"}:
        return None
    new_words, old_words = (
        frozenset(SUBJECTS[who_new].split()),
        frozenset(SUBJECTS[who_old].split()),
    )
    if new.words & old_words or old.words & new_words:
        return None
    return f"a {who_new} subject here, a {who_old} one before"


def subject(reading: Reading) -> str | None:
    """The family of the noun a statement opens with, or None when it opens with no subject
    this module knows."""
    tokens = reading.tokens
    for i, token in enumerate(tokens[:_OPENING]):
        if token.lower in _NOT_BEFORE_SUBJECT or token.lower == "s":  # "the user's son"
            return None
        family = _FAMILY.get(token.lower)
        if family is not None:
            return _members(tokens[i + 1 : i + 4]) if token.lower in COLLECTIVES else family
    return None


def _members(after: Sequence[Token]) -> str:
    """The family of "a group of men" (``male``), or ``people`` for a group of anything else."""
    words = [t.lower for t in after]
    if words[:1] == ["of"]:
        for word in words[1:]:
            if word in _FAMILY:
                return _FAMILY[word]
    return "people"


def aligned(new: str, old: str) -> bool:
    """Whether two subject families can name the same subject."""
    return new == old or (new in PERSONS and old in PERSONS and "people" in (new, old))


def incompatible(new: Reading, old: Reading) -> str | None:
    """Why ``new`` cannot hold together with ``old`` of the same subject, or None."""
    if new.words & _NOT_A_SCENE or old.words & _NOT_A_SCENE:
        return None
    if _habitual(new) or (_habitual(old) and not _caption(old)):
        return None
    who_new, who_old = subject(new), subject(old)
    if who_new is None or who_old is None:
        return None
    if not aligned(who_new, who_old):
        return _other_sex(who_new, who_old, new, old)
    if new.negated and not old.negated:
        shared = new.content & old.content
        if new.content <= old.content and len(shared - _family_stems(who_new)) >= 1:
            return f"the same subject ({who_new}) and words, negated"
    recoloured = (
        _changed(new, old, _COLOURS)
        or _changed(new, old, AGES)
        or _changed(new, old, SIZES)
        or _recounted(new, old)
    )
    if recoloured is not None:
        return f"the same subject ({who_new}) with {recoloured}"
    stems_new = {t.stem for t in new.tokens}
    stems_old = {t.stem for t in old.tokens}
    for word in sorted(stems_new - stems_old):
        against = sorted(EXCLUDES.get(word, frozenset()) & (stems_old - stems_new))
        if against:
            return f"the same subject ({who_new}) is {word} here and {against[0]} before"
    return None
