"""What a memory is about: its subject, the attribute it states of it, and the value.

"Alice lives in Paris." is ``(alice, live in, paris)``; "The mother tongue of Danielle Darrieux
is French." is ``(danielle darrieux, mother tongue, french)``; "I like tea." is ``(user, like,
tea)``. The judge compares these slots (``engram.memories.judge.verdicts``): two memories about
different subjects never merge, supersede or conflict. A reading that finds no subject gives
``None`` slots, and the judge is then careful (it never supersedes on a slot it does not have).

Named rules, in the order they apply (each with an example):

- ``label``: "Update: …" / "Correction: …" is not the subject, and says the value changed;
- ``opening clause``: a leading "Yesterday," / "On Tuesday," / "In 2020," is not the subject;
- ``first person``: "I …", "my …" → the user; "we …", "our …", "let's" → the project
  ("We deploy on Tuesdays" is the project's fact);
- ``speaker``: a captured fact "The user …" / "The assistant …" is its speaker's;
- ``noun phrase``: the words before the sentence's first verb are the subject, a name as the
  first word included ("Deborah visited her mother's house" → deborah);
- ``possessive``: "Jolene's mother is a nurse" → jolene, attribute "mother be";
- ``of``: "The capital of France is Paris" → france, attribute "capital";
- ``role``: "Paris is the capital of France" and "Ruud Brood is the head coach of NAC Breda" are
  the named owner's facts (france, capital, paris), and a role with "the" is held by one at a
  time (``Slots.unique``), unless it is kin, a friend or a member ("the daughter of Anna");
- ``names``: initials and titles end no sentence ("Pedro J. Ramírez"), a name may use any
  alphabet ("Śląsk Wrocław"), a capitalised "AS" is part of a name, not a particle;
- ``verb``: the attribute is the verb (as a stem) and its particles, the value what follows
  ("We deploy on Tuesdays" → deploy on, tuesdays); a title after a verb is the value ("holds
  the position of Governor of New York" → hold position of, governor of new york);
- ``alias``: a verb of change names the attribute it changes ("moved to" → "live in",
  "switched to" → "use") and marks the change.

Slots are written to a memory's frontmatter (``subject``, ``attribute``, ``value``), all three
optional: a hand-written note without them is read from its text when judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.memories.judge.reading import stem
from engram.memories.judge.slot_words import (
    ADVERBS,
    AUXILIARIES,
    BASE_VERBS,
    COPULA,
    DETERMINERS,
    FIRST_PLURAL,
    FIRST_SINGULAR,
    HAVE,
    IRREGULAR,
    MODIFIERS,
    NOUN_BEFORE,
    OPENERS,
    POSSESSIVES,
    PREPOSITIONS,
    QUANTIFIERS,
    RELATIONS,
    SPEAKERS,
    USER,
)
from engram.memories.subjects import subject_key

PROJECT = "project"

_WORD = re.compile(r"[\w`][\w.'+#/@`-]*[\w+#/`]|\w")  # \w: "Śląsk Wrocław" is a name too
_CLAUSE_END = re.compile(r"[,;:!?()]|\.(?:\s|$)| - | \u2014 ")

# Two ways to key one attribute.
_SAME_AS = {"live at": "live in", "be now in": "live in"}
# A verb of change names the attribute it changes: "moved to Berlin" is where one lives now.
ALIASES: dict[str, str] = {
    "move to": "live in",
    "move": "live in",
    "relocat to": "live in",
    "be now in": "live in",
    "switch to": "use",
    "migrat to": "use",
    "chang to": "use",
    "replac with": "use",
    "start use": "use",
    "now use": "use",
    "now live in": "live in",
}
CHANGE_WORDS = re.compile(
    r"\b(?:no longer|not any ?more|anymore|switch(?:ed|es|ing)? (?:from|to|over)|"
    r"mov(?:ed|es|ing) to|moved|relocat(?:ed|es|ing)|migrat(?:ed|es|ing)|chang(?:ed|es) to|"
    r"instead of|now|these days|replac(?:ed|es|ing)|from now on|pushed (?:back|out|to)|"
    r"postponed|rescheduled|escalated)\b",
    re.IGNORECASE,
)
# A label that says the statement corrects or updates an earlier one ("Update: ...").
_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z]+(?: [A-Za-z]+)?):\s+(?=\S)")
_CHANGE_LABELS = frozenset(["update", "correction", "change", "changed", "edit", "fix"])
_TRAILING = re.compile(
    r"\s+(?:now|anymore|these days|currently|again|too|as well|instead)$", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Slots:
    """A memory's subject, attribute and value (lowercase keys; None where not read), and
    whether its text says the value changed ("no longer", "moved to", "switched to", "now")."""

    subject: str | None = None
    attribute: str | None = None
    value: str | None = None
    change: bool = False
    # "the head coach of X", "the capital of X": a role only one holds at a time (read from
    # the text, like the change mark; rule ``role``).
    unique: bool = False

    def frontmatter(self) -> dict[str, str]:
        """The slots a memory's frontmatter records (the change mark is read from the text)."""
        out = {"subject": self.subject, "attribute": self.attribute, "value": self.value}
        return {k: v for k, v in out.items() if v}


def read_slots(text: str, speaker: str | None = None) -> Slots:
    """The slots of a memory's first statement (see the module docstring). ``speaker``: whose
    words these are when the text says "I" (``user`` in the user's own session; a person's name
    for a captured fact)."""
    first = _first_statement(_straight(text))
    label = _LABEL.match(first)
    change = False
    if label is not None:  # rule ``label``: "Update: order ORTAND-88 has shipped"
        change = label["label"].lower() in _CHANGE_LABELS
        first = first[label.end() :]
    clause = _clause(_expanded(first))
    # A change word counts in the main clause only: "…, such as coconut oil instead of butter"
    # changes nothing of the subject.
    change = change or bool(CHANGE_WORDS.search(clause))
    words = [w.strip("`") for w in _WORD.findall(clause)]
    while words and words[0].lower() in OPENERS:
        words = words[1:]
    if not words:
        return Slots(change=change)
    verb_at = _verb_index(words)
    if verb_at is None:
        return Slots(subject=_name_anywhere(words, speaker), change=change)
    head, rest = words[:verb_at], words[verb_at:]
    role = _role(head, rest, [w.strip("`") for w in _WORD.findall(_expanded(first))])
    if role is not None:  # rule ``role``: "Ruud Brood is the head coach of NAC Breda"
        return Slots(subject=role[0], attribute=role[1], value=role[2], change=change, unique=True)
    return _slots(head, rest, words[verb_at:], speaker, change)


def _slots(
    head: list[str], rest: list[str], after_verb: list[str], speaker: str | None, change: bool
) -> Slots:
    """Rules ``noun phrase`` to ``alias`` on a statement split at its verb."""
    unique = len(head) > 2 and head[0].lower() == "the" and "of" in head[1:]
    subject, attribute_head = _subject(head, speaker)
    if subject is None:
        subject = _name_anywhere(after_verb, speaker)
    attribute, value = _attribute_value(rest)
    if attribute_head:
        # "The mother tongue of S is French": the attribute is the noun, "be" is implied.
        attribute = attribute_head if attribute in ("be", None) else f"{attribute_head} {attribute}"
    key = _SAME_AS.get(attribute or "", attribute)
    if key is not None:
        for alias, target in ALIASES.items():
            if key == alias or key.endswith(" " + alias):
                key, change = target, True
                break
    unique = unique and attribute_head is not None and attribute_head not in RELATIONS
    return Slots(subject=subject, attribute=key, value=value, change=change, unique=unique)


def _role(head: list[str], rest: list[str], whole: list[str]) -> tuple[str, str, str] | None:
    """Rule ``role``: "<name> is the <role> of <Name>" is a fact about the named owner, whose
    <role> only one holds at a time: "Ruud Brood is the head coach of NAC Breda" is (nac breda,
    head coach, ruud brood), as "The capital of France is Paris" is (france, capital, paris).
    Not for kin, friends or members ("Deborah is the daughter of Anna" is Deborah's fact), and
    only when a name follows "of". The owner is the name after the first such "of", to the end
    of the statement ("the chair of Embassy of Ukraine, Ottawa" is the Ottawa embassy's)."""
    if len(rest) < 4 or rest[0].lower() not in COPULA or rest[1].lower() != "the":
        return None
    at = next((i for i in range(3, len(rest)) if _names_after_of(rest, i)), 0)
    role = [w.lower() for w in rest[2:at] if w.lower() not in DETERMINERS]
    # Where the clause's verb phrase sits in the whole statement (whose end may be past a comma).
    start = next((k for k in range(len(whole)) if whole[k : k + at + 1] == rest[: at + 1]), None)
    if not at or not role or not head or start is None:
        return None
    owner = _strip_determiners(whole[start + at + 1 :])
    if role[0] in RELATIONS or role[-1] in RELATIONS:
        return None
    holder = _strip_determiners(head)
    if not holder:
        return None
    return _phrase(owner), " ".join(role), _phrase(holder)


def _names_after_of(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is an "of" followed by a name (after any determiners)."""
    after = _strip_determiners(words[i + 1 :])
    return words[i].lower() == "of" and bool(after) and after[0][:1].isupper()


def says_a_change(text: str) -> bool:
    """Whether a text says in so many words that something changed: a change word other than
    "now" (too common in plain statements: "she is now ready to help"), or an "Update:" label."""
    first = _first_statement(_straight(text))
    label = _LABEL.match(first)
    if label is not None and label["label"].lower() in _CHANGE_LABELS:
        return True
    clause = _clause(_expanded(first))
    return any(m.group().lower() not in _WEAK for m in CHANGE_WORDS.finditer(clause))


_WEAK = frozenset(["now", "these days"])


def same_subject(a: str | None, b: str | None) -> bool | None:
    """Whether two subjects are one (None when either is unknown): the same words, or one the
    other with words before or after it ("the black dog" / "a dog", "Danielle Darrieux" /
    "Darrieux", "the Q3 report deadline" / "the Q3 report")."""
    if not a or not b:
        return None
    one, two = subject_key(a).split(), subject_key(b).split()
    short, long = sorted((one, two), key=len)
    if not short:
        return False
    # "the black dog" / "the dog"; "the Q3 report deadline" / "the Q3 report".
    return long[len(long) - len(short) :] == short or long[: len(short)] == short


def _straight(text: str) -> str:
    """Typographic apostrophes as plain ones ("Jolene\u2019s" is "Jolene's")."""
    return text.replace("\u2019", "'")


# A period that ends no sentence: an initial ("Pedro J. Ramírez") or a title ("Steve Smith Sr.").
_ABBREVIATION = re.compile(r"\b([A-Z]|Mr|Mrs|Ms|Dr|Sr|Jr|St|Mt|Prof|Inc|Ltd|Co|Corp|vs)\.(?=\s|$)")


def _first_statement(text: str) -> str:
    body = _ABBREVIATION.sub(r"\1", text.strip())
    if body.startswith("#"):  # a memory file's "# title" heading
        _, _, rest = body.partition("\n")
        body = rest.strip() or body.lstrip("# ")
    end = re.search(r"[.!?](?:\s|$)|\n", body)
    return body[: end.start()] if end else body


def _expanded(text: str) -> str:
    """Contractions as words: "I'm" is "I am", "don't" is "do not"."""
    for short, full in (("'m", " am"), ("'re", " are"), ("'ve", " have"), ("'ll", " will")):
        text = re.sub(rf"(?<=\w){short}\b", full, text, flags=re.IGNORECASE)
    return re.sub(r"n't\b", " not", text, flags=re.IGNORECASE)


def _clause(sentence: str) -> str:
    """Rule ``opening clause``: the statement's main clause: the first one, unless it opens
    with a preposition or a time word ("On Tuesday, Alice …", "Yesterday, …") and another
    follows. A value ends with its clause ("I am vegetarian, please …" → vegetarian)."""
    clauses = [c.strip() for c in _CLAUSE_END.split(sentence) if c.strip()]
    if not clauses:
        return ""
    lead = _WORD.findall(clauses[0])
    opener = PREPOSITIONS | OPENERS | {"after", "before", "when", "last", "this"}
    if len(clauses) > 1 and lead and lead[0].lower() in opener:
        return clauses[1]
    return clauses[0]


def _verb_index(words: list[str]) -> int | None:
    """Where the verb phrase starts: the first auxiliary, or the first word read as a verb
    after at least one subject word."""
    for i, word in enumerate(words[:12]):
        low = word.lower()
        if low in AUXILIARIES:
            return i if i > 0 else None
        if i == 0 and low in BASE_VERBS:
            return None  # an imperative: "Use spaces, not tabs" has no subject
        if i == 0 or low in PREPOSITIONS or not low.isalpha():
            continue
        if low in ADVERBS and i + 1 < len(words):
            continue
        prev = words[i - 1].lower()
        if prev in NOUN_BEFORE:
            continue  # "the tests", "my sister": a noun after a determiner
        if prev.endswith("'s") or word[0].isupper():
            continue
        if _is_verb(low, prev):
            return i
    return None


def _is_verb(low: str, prev: str) -> bool:
    if low in IRREGULAR or low in COPULA or low in HAVE:
        return True
    if prev in ("i", "we", "you", "they", "he", "she", "it", "user", "assistant"):
        return True  # "I like", "we deploy"
    if prev in ADVERBS:
        return True  # "Alice now lives", "Bob never drinks"
    if low in BASE_VERBS:
        return True
    return low.endswith(("ed", "es")) or (low.endswith("s") and not low.endswith(("ss", "us")))


def _subject(head: list[str], speaker: str | None) -> tuple[str | None, str | None]:
    """(subject, an attribute the subject phrase holds): rules ``first person``, ``speaker``,
    ``possessive``, ``of`` and ``noun phrase``."""
    low = [w.lower() for w in head]
    first_person = _first_person(low[0], speaker) if low else None
    if first_person is not None:
        rest = [w for w in low[1:] if w not in ADVERBS]
        return first_person, " ".join(rest) or None  # "my sister" → (user, sister)
    if len(low) >= 2 and low[0] == "the" and low[1] in SPEAKERS:
        whose = SPEAKERS[low[1]]
        rest = low[2:]
        if low[1].endswith("'s") or (rest and rest[0] in ("'s",)):
            rest = rest[1:]
        return whose, " ".join(w for w in rest if w not in ADVERBS) or None
    if len(low) >= 2 and low[0] == "the" and low[1] in ("user's", "assistant's"):
        return SPEAKERS[low[1][:-2]], " ".join(low[2:]) or None
    if "of" in low[1:]:
        at = low.index("of", 1)
        owner = _strip_determiners(head[at + 1 :])
        attribute = _strip_determiners(head[:at])
        if owner and attribute:
            return _phrase(owner), _phrase(attribute).lower()
    for i, word in enumerate(low):
        if word.endswith(("'s", "'")) and i + 1 < len(low):
            owner = _strip_determiners(head[: i + 1])
            owner[-1] = re.sub(r"'s?$", "", owner[-1])
            first_person = _first_person(owner[0].lower(), speaker) if owner else None
            return first_person or _phrase(owner), " ".join(low[i + 1 :])
    phrase = _strip_determiners(head)
    cut = next((i for i, w in enumerate(phrase) if i and w.lower() in MODIFIERS), len(phrase))
    words = [w for w in phrase[:cut] if w.lower() not in ADVERBS | OPENERS]
    return (_phrase(words) or None), None  # an imperative ("Always run ruff") has none


def _first_person(word: str, speaker: str | None) -> str | None:
    if word in FIRST_SINGULAR:
        return (speaker or USER).casefold()
    if word in FIRST_PLURAL:
        return PROJECT
    return None


def _strip_determiners(words: list[str]) -> list[str]:
    out = list(words)
    while out and out[0].lower() in DETERMINERS:
        out = out[1:]
    return out


def _phrase(words: list[str]) -> str:
    return " ".join(words).casefold()


def _name_anywhere(words: list[str], speaker: str | None) -> str | None:
    """The first name in a sentence with no subject before its verb (the first word included,
    unless it is a first-person word: then the speaker)."""
    for i, word in enumerate(words):
        low = word.lower()
        if i == 0:
            person = _first_person(low, speaker)
            if person is not None:
                return person
            if low in DETERMINERS | OPENERS | PREPOSITIONS or _is_verb(low, ""):
                continue  # "Lives in Berlin": a verb, capitalised as the first word
        if word[:1].isupper() and low not in FIRST_SINGULAR:
            run = [word]
            for nxt in words[i + 1 :]:
                if not nxt[:1].isupper():
                    break
                run.append(nxt)
            return _phrase(run).removesuffix("'s")
    return None


def _attribute_value(rest: list[str]) -> tuple[str | None, str | None]:
    """Rule ``verb``: (the verb's stem and its particles, the words after them)."""
    parts, i = _verb(rest)
    if not parts:
        return None, _value(rest[i:])
    # A particle is lowercase: "plays for AS Monaco" keeps "AS" in the name.
    while (
        i < len(rest) and rest[i].lower() in PREPOSITIONS and rest[i].islower() and len(parts) < 4
    ):
        parts.append(rest[i].lower())
        i += 1
    value = _value(rest[i:])
    if value and parts[-1] == "from" and " to " in value:
        # "switched from MySQL to Postgres": the value is what it is now.
        parts[-1], value = "to", value.split(" to ", 1)[1]
    elif value and parts == ["use"] and " for " in value:
        # "We use PostgreSQL for billing": what is used for billing.
        value, purpose = value.split(" for ", 1)
        parts = ["use", "for", purpose]
    elif value and parts != ["be"] and (title := _title_of(rest[i:])):
        # "holds the position of Governor of New York": the title is the value.
        return " ".join([*parts, *title[0]]), title[1]
    elif value and parts == ["be"]:
        # "is a citizen of Japan": the role is the attribute, what it is of the value.
        role = re.match(r"^((?:\w+ ){1,3}?)(of|in|at|for) (.+)$", value)
        if role:
            return f"be {role[1].strip()} {role[2]}", role[3]
    return " ".join(parts), value


# Nouns that name a role or rank, whatever follows their "of": "holds the position of sheriff".
_ROLE_NOUNS = frozenset(["position", "role", "title", "job", "post", "office", "rank", "status"])


def _title_of(words: list[str]) -> tuple[list[str], str] | None:
    """(["position", "of"], "governor of new york") for "the position of Governor of New York":
    one or two lowercase nouns, "of", then a name (or anything, after a role noun)."""
    body = _strip_determiners(words)
    for n in (1, 2):
        if len(body) > n + 1 and body[n].lower() == "of":
            nouns = body[:n]
            named = body[n + 1][:1].isupper() or nouns[0] in _ROLE_NOUNS
            if named and all(w.islower() and w.isalpha() for w in nouns):
                return [*nouns, "of"], _value(body[n + 1 :]) or ""
    return None


def _verb(rest: list[str]) -> tuple[list[str], int]:
    """The verb phrase's words as the attribute keys them ("be", "now", a verb's stem) and
    where the words after it start."""
    now: list[str] = []
    i = 0
    main: str | None = None
    while i < len(rest) and (rest[i].lower() in AUXILIARIES or rest[i].lower() in ADVERBS):
        low = rest[i].lower()
        if low in COPULA or low in HAVE:
            main = main or ("be" if low in COPULA else "have")
        elif low == "now":
            now.append("now")
        i += 1
    if i < len(rest):
        low = rest[i].lower()
        noun_like = low in PREPOSITIONS | DETERMINERS | QUANTIFIERS | POSSESSIVES
        verb = main is None or low.endswith(("ed", "ing")) or main == "have"
        if low.isalpha() and not noun_like and verb:
            main = IRREGULAR.get(low) or stem(low)
            i += 1
    if main is None:
        return [], i
    return ([main, *now] if main == "be" else [*now, main]), i


def _value(words: list[str]) -> str | None:
    value = _phrase(_strip_determiners(words))
    value = _TRAILING.sub("", value).strip()
    return value or None
