"""The named rules by which ``rules`` drops a would-be memory as junk, each one a reader can
check by hand against its example (issue 36, point 4).

A memory is junk when a reader coming back later would learn nothing from it: a greeting or
pleasantry, a question handed back to the listener, filler or an acknowledgement, a fragment,
or a statement about something it never names. The rules read the memory's text with its
subject ("The user", "The assistant said:") taken off, so "The user said: thanks!" is the
pleasantry it is. ``JUNK_RULES`` lists them in the order they are tried; ``junk_rule`` names the
first that fires, so a dropped memory can always say why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_NAMED = re.compile(r"^The (?:user|assistant)(?:'s| said:)?\s+", re.IGNORECASE)
_REPORTED = re.compile(r"^The (?:user|assistant) said:\s*", re.IGNORECASE)
_DANGLING = frozenset(
    [
        "to",
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "but",
        "for",
        "with",
        "in",
        "on",
        "at",
        "my",
        "your",
        "their",
        "our",
        "about",
        "from",
        "as",
        "than",
    ]
)
_VAGUE_END = frozenset(["it", "that", "this", "them", "so", "these", "those", "one"])
_PLEASANTRY = re.compile(
    r"^(?:thanks|thank you|thx|congrats|congratulations|wow|awesome|great|good luck|take care|"
    r"see you|have fun|have a|sounds (?:good|great)|glad|happy to|nice|cool|love (?:it|that|"
    r"this)|no problem|no worries|you're welcome|welcome|hey|hi|hello|bye|omg|haha|lol|yay|"
    r"sure|of course|absolutely|totally|exactly|same here|me too|good to|so good|so cool)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\?\s*$|^(?:what|how|why|when|where|who|which|do you|did you|are you|have you|would you|"
    r"could you|can you|will you|what about|how about)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:(?:yeah|yep|yup|yes|no|nope|ok|okay|hmm+|well|oh|ah|um+|uh+|right|true|i see|i know|"
    r"i guess|i think so|i agree|agreed|totally agree|got it|makes sense|fair enough|indeed|"
    r"definitely|for sure)\b[\s,.!]*)+$",
    re.IGNORECASE,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:it|it's|this|that|that's|these|those|he|she|they|they're|he's|she's|there|here|"
    r"him|her|them)\b",
    re.IGNORECASE,
)


def _body(content: str, subject: str) -> str:
    body = content.removeprefix(subject).strip() if subject else content.strip()
    return _NAMED.sub("", body)


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text)


_FAREWELL = re.compile(
    r"\b(?:bye|gotta go|got to go|has to go|have to go|talk (?:to you )?(?:later|soon)|"
    r"catch (?:you|ya) later|see (?:you|ya))\b",
    re.IGNORECASE,
)


def _pleasantry(content: str, body: str) -> bool:
    return bool(_FAREWELL.search(body)) or bool(
        _PLEASANTRY.match(_REPORTED.sub("", content.strip())) or _PLEASANTRY.match(body)
    )


def _question(content: str, body: str) -> bool:
    return bool(_QUESTION.search(body))


def _filler(content: str, body: str) -> bool:
    return bool(_FILLER.match(body))


def _fragment(content: str, body: str) -> bool:
    words = _words(body)
    return len(words) < 2 or words[-1].lower() in _DANGLING


def _pronoun_subject(content: str, body: str) -> bool:
    return bool(_PRONOUN_SUBJECT.match(_REPORTED.sub("", content.strip())))


_CLAUSE_END = re.compile(r"\s*(?:[,;:!]|\s-\s|\s\u2013\s|\band\b|\bbut\b|\bso\b)\s*")
_TIME_NOUNS = (
    r"(?:week|weekend|month|year|morning|afternoon|evening|night|day|time|summer|winter|spring|"
    r"fall|autumn|season|semester|term|decade|century|moment|hour|minute|\w+day)s?"
)
_SCOPE_NOUNS = r"(?:repo|repository|project|codebase|code|app|service|team|machine|package)s?"
# Nothing after it in its clause but a word of time or emphasis.
_CLAUSE_TAIL = r"(?=\s*(?:too|again|now|so|though|lately|recently|anymore|as well)?\s*[.!]*$)"
_BARE = re.compile(
    r"\b(?:it|them|him|her)\b|\b(?:more|these ones|those ones)(?=\s*(?:soon|later)?[.!]*$)|"
    r"\b(?:this|that|these|those)\b(?=\s+(?:for|with|now|too|again|and|but|"
    r"in|at|to|on|lately|recently|as|happen)\b|\s*[.!]*$)|\ba (?:\w+ )?fan[.!]*$|"
    # a thing pointed at and never described: "has photos from this activity", "loves those
    # games too" (not "is reading this series about friendship", which tells what it is; not
    # "this repo", which the memory's project scope names)
    rf"\b(?:this|these|those)\s+(?!(?:{_TIME_NOUNS}|{_SCOPE_NOUNS})\b)[a-z]+{_CLAUSE_TAIL}|"
    # "one" standing for a thing the memory never names: "played one with friends"
    r"\b(?:a|an|the|this|that|new|big|good|great)?\s?one(?=\s+(?:with|for|at|in|on|from|too|"
    r"again|yesterday|today|last|next)\b|\s*[.!]*$)|"
    # things that are no things: "is starting some big new things"
    rf"\bsome (?:\w+ ){{0,2}}(?:things|stuff){_CLAUSE_TAIL}",
    re.IGNORECASE,
)


def _vague(content: str, body: str) -> bool:
    words = _words(body)
    last = words[-1].lower() if words else ""
    if last in ("this", "these", "those") or (len(words) <= 6 and last in _VAGUE_END):
        return True  # "The user is trying out some strategy games like this.", "... loves that."
    # The memory's main statement (up to its first comma or "and") leans on a thing it never
    # names: "The user had a blast with it when ...", "The user is a huge fan."
    return bool(_BARE.search(_CLAUSE_END.split(body, maxsplit=1)[0]))


@dataclass(frozen=True, slots=True)
class JunkRule:
    name: str
    check: Callable[[str, str], bool]  # (content, content without its subject) -> junk?
    example: str  # a memory the rule drops


JUNK_RULES: tuple[JunkRule, ...] = (
    JunkRule("greeting or pleasantry", _pleasantry, "The user said: thanks, that sounds great!"),
    JunkRule("question back", _question, "The user said: what about you?"),
    JunkRule("filler or acknowledgement", _filler, "The user said: yeah, makes sense."),
    JunkRule("fragment", _fragment, "The user went to the"),
    JunkRule("pronoun subject", _pronoun_subject, "The user said: that is so true."),
    JunkRule("unnamed reference", _vague, "The user had a blast with it when the user was a kid."),
)


def junk_rule(content: str, subject: str = "") -> str | None:
    """The name of the first rule of ``JUNK_RULES`` that calls ``content`` junk, or None."""
    body = _body(content, subject)
    for rule in JUNK_RULES:
        if rule.check(content, body):
            return rule.name
    return None
