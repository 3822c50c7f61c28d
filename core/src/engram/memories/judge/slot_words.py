"""The word lists the slot reader (``engram.memories.judge.slots``) reads a sentence with: persons,
determiners, openers, auxiliaries, adverbs, verb forms, quantifiers and prepositions. Kept apart
so the rules read as rules, and the lists can grow without the rules moving."""

from __future__ import annotations

USER = "user"

FIRST_SINGULAR = frozenset(["i", "my", "me", "mine", "i'm", "i've", "i'd", "i'll"])
FIRST_PLURAL = frozenset(["we", "our", "us", "ours", "let's", "we're", "we've", "we'll"])
SPEAKERS = {"user": USER, "assistant": "assistant"}
DETERMINERS = frozenset(["the", "a", "an", "this", "that", "these", "those", "some", "every"])
POSSESSIVES = frozenset(["his", "her", "their", "its", "your"])
OPENERS = frozenset(
    [
        "yesterday",
        "today",
        "tomorrow",
        "recently",
        "lately",
        "now",
        "currently",
        "also",
        "then",
        "later",
        "finally",
        "anyway",
        "so",
        "and",
        "but",
        "however",
        "meanwhile",
        "ok",
        "okay",
    ]
)
# Words between a subject and its verb that are not the verb: auxiliaries, adverbs, negations.
AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "am",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "does",
        "do",
        "did",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "hasn't",
        "haven't",
        "hadn't",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "can't",
        "cannot",
        "'s",
    ]
)
ADVERBS = frozenset(
    [
        "not",
        "no",
        "never",
        "longer",
        "now",
        "currently",
        "still",
        "also",
        "always",
        "usually",
        "often",
        "sometimes",
        "already",
        "just",
        "recently",
        "really",
        "finally",
        "actually",
        "only",
        "mostly",
        "generally",
        "then",
        "anymore",
        "again",
    ]
)
COPULA = frozenset(["is", "are", "was", "were", "am", "be", "been", "being", "'s"])
HAVE = frozenset(["has", "have", "had"])
IRREGULAR = {
    "ran": "run",
    "went": "go",
    "goes": "go",
    "got": "get",
    "made": "make",
    "took": "take",
    "saw": "see",
    "met": "meet",
    "bought": "buy",
    "left": "leave",
    "wrote": "write",
    "spoke": "speak",
    "spoken": "speak",
    "born": "born",
    "gave": "give",
    "found": "find",
    "began": "begin",
    "chose": "choose",
    "built": "build",
    "taught": "teach",
    "felt": "feel",
    "kept": "keep",
    "thought": "think",
}
# Common verbs in their base form, read as verbs after a noun ("our tests run on CI").
BASE_VERBS = frozenset(
    """run use live work deploy like love prefer need want go keep store build host ship release
    write read speak play own lead manage support call test meet visit stay plan teach""".split()  # noqa: SIM905
)
NOUN_BEFORE = (DETERMINERS | POSSESSIVES | FIRST_SINGULAR | FIRST_PLURAL) - {"i", "we"}
# Words that start a modifier of the subject: "A man with a shirt" is about a man.
MODIFIERS = frozenset(["with", "without", "in", "on", "at", "from", "who", "which", "that"])
QUANTIFIERS = frozenset(["any", "no", "some", "many", "much", "several", "few", "more", "all"])
PREPOSITIONS = frozenset(
    [
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "with",
        "by",
        "of",
        "as",
        "into",
        "onto",
        "about",
        "via",
        "under",
        "through",
    ]
)

# Nouns for which "the" does not make a role unique: "the daughter of Anna" may have sisters,
# "the friend of", "the member of" one among many (rule ``role``).
RELATIONS = frozenset(
    [
        "daughter",
        "son",
        "child",
        "kid",
        "mother",
        "father",
        "parent",
        "sister",
        "brother",
        "sibling",
        "wife",
        "husband",
        "partner",
        "spouse",
        "cousin",
        "aunt",
        "uncle",
        "niece",
        "nephew",
        "grandmother",
        "grandfather",
        "grandchild",
        "friend",
        "fan",
        "member",
        "part",
        "one",
        "student",
        "teacher",
        "colleague",
        "neighbor",
        "neighbour",
        "pet",
        "dog",
        "cat",
        "guest",
        "client",
        "customer",
        "author",
    ]
)
