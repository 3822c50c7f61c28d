"""Two statements about one subject that cannot both be true: "a man is sitting in a barber's
chair" then "the man is standing in the shop", "a boy is asleep" then "the boy is playing
football".

The cosine gate of the other rules misses most of these (a different activity reads as a
different text), so ``judge`` asks this reading out to a wider distance (``incompatible_distance``)
and it must be sure on its own: both statements open with a subject of the same family (a man and
the man, a girl and a person), and the newer one says of it a state, activity or place that
excludes one only the older one said (``scene_words``); or the newer one says nobody is there
where the older one had a person, or puts another animal in the same scene ("a black and white
cat prepares to catch a Frisbee" after the same of a dog). A habit, a taste, a plan or an ability
("the dog sleeps in the kitchen", "the kids like swimming") is not a scene: two of them hold
together. Anything less keeps both memories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations, pairwise

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
_BE = frozenset(["is", "are", "was", "were"])
_SELF = frozenset(["himself", "herself", "itself", "themselves", "myself", "yourself"])

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


def _progressive(reading: Reading) -> bool:
    """Whether a statement says what is going on now ("two men are sitting ... as a crowd
    watches"): a form of *be* before an -ing word. A simple-present verb elsewhere in it is
    then another subject's, not a habit."""
    tokens = reading.tokens
    return any(t.lower in _BE and nxt.lower.endswith("ing") for t, nxt in pairwise(tokens))


def _scene_stems(reading: Reading) -> set[str]:
    """The stems a scene is compared by; "by herself" reads as "alone", "at home" as indoors."""
    stems = {t.stem for t in reading.tokens}
    words = [t.lower for t in reading.tokens]
    for a, b in pairwise(words):
        if a == "by" and b in _SELF:
            stems.add(stem("alone"))
        elif a == "at" and b == "home":
            stems.add(stem("indoors"))
    return stems


def _habit(reading: Reading) -> bool:
    return _habitual(reading) and not _progressive(reading)


def _scene(reading: Reading) -> bool:
    """Whether a statement may describe a moment: no word of habit, taste or plan, and no
    simple-present verb unless it opens like a caption."""
    if reading.words & _NOT_A_SCENE:
        return False
    return not _habit(reading) or _caption(reading)


def _nobody(reading: Reading) -> bool:
    """Whether a statement says no person is there ("nobody is sitting", "there is no one in
    this picture"), not "nobody else"."""
    words = [t.lower for t in reading.tokens]
    return "nobody" in words and "else" not in words and reading.negations == 1


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


def _other_animal(who_new: str, who_old: str, new: Reading, old: Reading) -> str | None:
    """A cat where there was a dog, doing the same: neither text names the other animal, and
    the rest of what they say is mostly shared."""
    if who_new in PERSONS or who_old in PERSONS:
        return None
    if new.words & frozenset(SUBJECTS[who_old].split()) or old.words & frozenset(
        SUBJECTS[who_new].split()
    ):
        return None
    rest_new = new.content - _family_stems(who_new)
    rest_old = old.content - _family_stems(who_old)
    if rest_new and len(rest_new & rest_old) / len(rest_new) >= 0.5:
        return f"a {who_new} subject here, a {who_old} one before"
    return None


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
    if not (_scene(new) and _scene(old)):
        return None
    who_new, who_old = subject(new), subject(old)
    if who_old in PERSONS and not old.negated and _nobody(new):
        return f"no one here, a {who_old} subject before"
    if who_new is None or who_old is None:
        return None
    if not aligned(who_new, who_old):
        return _other_sex(who_new, who_old, new, old) or _other_animal(who_new, who_old, new, old)
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
    stems_new, stems_old = _scene_stems(new), _scene_stems(old)
    for word in sorted(stems_new - stems_old):
        against = sorted(EXCLUDES.get(word, frozenset()) & (stems_old - stems_new))
        if against:
            return f"the same subject ({who_new}) is {word} here and {against[0]} before"
    return None
