"""Who said it, and is it worth keeping: the ``rules`` extractor's attribution, junk filter and
the patterns for facts people state about themselves.

A memory is read later without its conversation, so it names its subject: what the user said
about themselves becomes "The user ...", what the assistant did or proposed "The assistant ...";
neither is ever stored in the first person. Pleasantries, encouragement ("Don't miss a beat!"),
fragments ("The user loves to.") and statements whose subject is a pronoun nobody can resolve
later ("It was so cool.") are dropped.
"""

from __future__ import annotations

import re

from engram.default_plugins.rules_junk import junk_rule


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SUBJECTS = {"user": "The user", "assistant": "The assistant", "system": "The assistant"}

# -- facts people state about themselves (user turns only) ---------------------------------------
_ADVERBS = (
    r"(?:just |recently |finally |also |actually |already |still |even |really |totally |"
    r"currently |definitely |super |"
    r"usually |often |always |never |officially |once |last |now )*"
)
_EVENT_VERBS = (
    r"went|visited|travel(?:l)?ed|moved|started|joined|adopted|bought|got|finished|completed|"
    r"graduated|ran|took|signed up|met|attended|volunteered|painted|won|lost|celebrated|"
    r"learned|learnt|began|wrote|received|passed|quit|left|married|created|built|launched|"
    r"opened|booked|found|organi[sz]ed|hosted|performed|published|cooked|baked|planted|"
    r"enrolled|applied|retired|hiked|camped|played|made|picked up|tried out|took up|had|"
    r"love|loved|enjoy|enjoyed|tried|talked|decided|read|saw|dropped|snapped|gave|watched|"
    r"drew|bought|spent|saw|did|shared|collect|need|needed|keep|kept|struggle|struggled"
)
_PERSONAL = [
    # events: "I went to a support group yesterday", "I've just adopted a puppy"
    re.compile(rf"^I(?:'ve| have)? {_ADVERBS}(?:{_EVENT_VERBS})\b\s+\S+.*", re.IGNORECASE),
    # possessions: "I have a dog named Max", "I own two bikes", "I've got three kids"
    re.compile(
        rf"^I(?:'ve got| have got| have| own| got) {_ADVERBS}(?:a|an|two|three|four|five|"
        r"\d+|some|my own)\b\s+\S+.*",
        re.IGNORECASE,
    ),
    # plans and what one does: "I'm going to Paris next month", "I'm a nurse"
    re.compile(
        rf"^I(?:'m| am) {_ADVERBS}(?:going to|going on|planning|hoping to|about to|getting|"
        r"starting|moving|taking|working (?:on|as|at|in|for)|learning|training|volunteering|"
        r"studying|saving|preparing|applying|into|on the hunt|trying|reading|writing|a|an)"
        r"\b\s+\S+.*",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^I {_ADVERBS}(?:work|live|study|teach|volunteer|play|paint|run|plan|grew up|"
        r"was born)\b\s+\S+.*",
        re.IGNORECASE,
    ),
    re.compile(rf"^I(?:'ve| have) been {_ADVERBS}\w+ing\b\s+\S+.*", re.IGNORECASE),
    # anything else a person says they do, did or are, told in three words or more after the
    # verb ("I volunteer at the shelter every Sunday"); not a wish, a guess or a promise
    re.compile(
        rf"^I(?:'ve|'m| have| am)? {_ADVERBS}(?!(?:hope|think|bet|guess|know|wish|mean|agree|"
        r"understand|hear|wonder|can|could|will|would|should|might|must|want|wanna|gotta|"
        r"need|feel|felt|believe|love (?:that|it|how|this|to)|totally|so|here|sorry|glad|sure)\b)"
        r"[a-z]+\b(?:\s+\S+){3,}",
        re.IGNORECASE,
    ),
    # relationships and belongings: "My sister is a nurse", "My dog Max loves the beach"
    re.compile(
        r"^My (?:\w+ ){0,3}?(?:is|are|was|were|has|have|had|just|got|gave|loves|likes|works|"
        r"lives|passed|turned|started|made|took|moved)\b\s+\S+.*",
        re.IGNORECASE,
    ),
    # what someone close does, told with any verb in the present or past and three words more:
    # "My family motivates me to keep going", "My brother coached the team for years"
    re.compile(
        r"^My (?:(?!(?:that|this|it|so|and|but|is|was|has)\b)[\w'-]+ ){1,3}?[a-z]+(?:es|s|ed)\b"
        r"(?:\s+\S+){3,}",
        re.IGNORECASE,
    ),
    # a belief the person states of the world: "I believe chess can improve decision-making"
    re.compile(r"^I (?:really |strongly |truly )?believe (?:that )?(?:\S+\s+){3,}\S+"),
]
# What the speaker did with others, told in the past: "We rented an apartment near the bar",
# "We had a great time at the pride event last month". Only past events: "we deploy on
# Tuesdays" is a project's habit, not a person's fact.
_WE_DID = re.compile(
    rf"^We {_ADVERBS}(?:(?!(?:could|would|should|might|must|can|will|may)\b)[a-z]+ed|"
    r"went|had|took|made|met|saw|got|found|spent|won|ran|built|bought|ate|drove|flew|left|"
    r"began|gave|held|threw|sang|rode|swam|did)\b(?:\s+\S+){2,}",
    re.IGNORECASE,
)
_NOT_PERSONAL = re.compile(
    r"\b(?:you|your|yours|yourself)\b|^I(?:'m| am) (?:so |really |just |totally )*(?:glad|happy|"
    r"sorry|sure|thinking|excited|thrilled|grateful|proud|stoked|curious|feeling|doing)\b",
    re.IGNORECASE,
)


_WHEN = re.compile(
    r"^(?P<when>yesterday|today|tomorrow|tonight|(?:last|next) (?:week|weekend|month|year|night|"
    r"\w+day)|this (?:week|weekend|month|year|morning)|recently|lately|the other day|"
    r"a (?:few|couple of) \w+ ago|\w+ \w+ ago|"
    # a leading time clause told before a comma: "Since our last chat, I've started ..."
    r"(?:since|after|over|during|earlier|later|in) [^,.!?]{2,30}(?=,)),?\s+"
    r"(?P<rest>(?:I|My|We)\b.+?)(?P<end>[.!]*)$",
    re.IGNORECASE,
)


_MARKER = re.compile(
    r"^(?:(?:yeah|yes|yep|oh|well|by the way|also|actually|anyway|so|and|but|overall|honestly|"
    r"my (?:goodness|god|gosh)|as for me|"
    r"plus|wow|haha|lol|btw)[,!.]?\s+)+(?=[A-Za-z])",
    re.IGNORECASE,
)


def personal_fact(sentence: str) -> str | None:
    """A fact a person states about themselves (an event, a possession, a plan, a job, a
    relationship) as they said it, a leading "Yesterday, …" moved to the end and a leading
    "Yeah, " / "By the way, " dropped (a discourse marker, no part of the fact); None for
    anything else. Talk about the listener and feelings of the moment are not facts."""
    text = _MARKER.sub("", sentence.strip())
    text = text[:1].upper() + text[1:]
    when = _WHEN.match(text)
    if when:
        text = f"{when['rest']} {when['when'].lower()}{when['end'] or '.'}"
    if _NOT_PERSONAL.search(text):
        return None
    if _WE_DID.match(text) and not project_work(text):
        return text
    return text if any(p.match(text) for p in _PERSONAL) else None


# -- project work (what ``progress`` is about) ---------------------------------------------------
_WORK = re.compile(
    r"`|\b\w+\.(?:py|js|ts|md|toml|json|yaml|yml|go|rs|sql|sh)\b|\b(?:feature|endpoint|api|"
    r"migration|tests?|pr|pull request|branch|release|build|deploy(?:ment)?|refactor(?:ing)?|"
    r"module|function|class|service|pipeline|ci|parser|schema|database|db|bug|fix|issue|ticket|"
    r"sprint|milestone|prototype|mvp|integration|backend|frontend|ui|docs|documentation|"
    r"script|cli|library|package|server|client|cache|index|query|queries|handler|component|"
    r"v?\d+\.\d+(?:\.\d+)*|version|code|repo|repository|project|app|dashboard|auth|login|"
    r"lint|linter|commits?|push|merge|main|master|format(?:ting)?|style|types?|tabs|spaces|"
    r"emojis?|secrets?|logs?|config(?:uration)?|env|docker|container|tool|command|tests?)\b",
    re.IGNORECASE,
)


def project_work(sentence: str) -> bool:
    """The sentence is about software work (what ``latest_progress_only`` ages), not a
    personal event ("I finished my book")."""
    return bool(_WORK.search(sentence))


# -- rewriting into the third person ---------------------------------------------------------------
_LEAD = re.compile(r"^(?:I'm|I am)\b|^I've\b|^I'd\b|^I'll\b|^My\b|^I\b", re.IGNORECASE)
_LEAD_AS = {"i'm": "is", "i am": "is", "i've": "has", "i'd": "would", "i'll": "will"}
_MODALS = _set(
    "can could will would should might must may shall don't didn't won't can't couldn't "
    "wasn't haven't hadn't doesn't isn't was had did gotta wanna gonna"
)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "don't": "doesn't"}
_PAST = _set(
    "went got had did was made took saw met ran bought began found felt left lost won read "
    "wrote gave came became thought told kept built sent spent taught brought caught held "
    "heard paid sold sat stood understood put let set cut hit grew drew knew threw chose "
    "learnt burnt began swam sang drove rode flew ate fell forgot"
)
_ADVERB_WORDS = _set(
    "just recently finally also actually already still even really totally usually often "
    "always never officially once now"
)
_INNER = [
    (re.compile(r"\bI'm\b|\bI am\b"), "{s} is"),
    (re.compile(r"\bI've\b|\bI have\b"), "{s} has"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI was\b"), "{s} was"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "theirs"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "their"),
    (re.compile(r"\bme\b", re.IGNORECASE), "{s}"),
]
_INNER_I = re.compile(r"\bI ((?:(?:just|really|also|still|never|always|actually) )*)(\S+)")


def third_person(text: str, role: str) -> str:
    """``text`` with a leading first-person subject replaced by the speaker ("I went" → "The
    user went", "My sister" → "The user's sister"), a later "I" / "me" by "the user" and "my"
    by "their"."""
    subject = SUBJECTS.get(role, "The assistant")
    lead = _LEAD.match(text)
    head, tail = "", text
    if lead:
        said = lead.group(0).lower()
        rest = text[lead.end() :]
        if said == "my":
            head, tail = f"{subject}'s", rest
        elif said in _LEAD_AS:
            head, tail = f"{subject} {_LEAD_AS[said]}", rest
        else:
            verb, _, after = _conjugate(rest.strip()).partition(" ")
            head, tail = f"{subject} {verb}", f" {after}" if after else ""
    named = subject[0].lower() + subject[1:]  # "the user", mid-sentence
    for pattern, replacement in _INNER:
        tail = pattern.sub(replacement.format(s=named), tail)
    tail = _INNER_I.sub(lambda m: f"{named} {m[1]}{_conjugate(m[2])}", tail)
    return head + tail


_OURS = [
    (re.compile(r"\bours\b", re.IGNORECASE), "theirs"),
    (re.compile(r"\bour\b", re.IGNORECASE), "their"),
    (re.compile(r"\bus\b"), "them"),
    (re.compile(r"\bwe\b", re.IGNORECASE), "they"),
]


def personal_fact_said(fact: str, role: str) -> str:
    """A fact of ``personal_fact`` as a memory states it: in the third person, and "We rented a
    flat near our office" as "The user and others rented a flat near their office" (the speaker
    took part, with people the sentence does not name)."""
    if not _WE_DID.match(fact):
        return third_person(fact, role)
    subject = SUBJECTS.get(role, "The assistant")
    tail, named = fact[2:], subject[0].lower() + subject[1:]
    for pattern, replacement in [*_OURS, *_INNER]:
        tail = pattern.sub(replacement.format(s=named), tail)
    tail = _INNER_I.sub(lambda m: f"{named} {m[1]}{_conjugate(m[2])}", tail)
    return f"{subject} and others{tail}"


def _conjugate(rest: str) -> str:
    """The verb after "I" in the third person ("love" → "loves"), adverbs before it kept."""
    words = rest.split(" ")
    for i, word in enumerate(words):
        low = word.lower()
        if low in _ADVERB_WORDS:
            continue
        if low in ("are", "were"):  # "my husband and I are" stays plural
            pass
        elif low in _IRREGULAR:
            words[i] = _IRREGULAR[low]
        elif low in _MODALS or low in _PAST or low.endswith("ed") or not low.isalpha():
            pass
        elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
            words[i] = word + "es"
        elif low.endswith("y") and low[-2:-1] not in "aeiou":
            words[i] = word[:-1] + "ies"
        else:
            words[i] = word + "s"
        break
    return " ".join(words)


# -- junk ---------------------------------------------------------------------------------------
_ENCOURAGEMENT = re.compile(
    r"\b(?:give up|miss a beat|worry|forget to|stop (?:believing|dreaming|trying|being)|"
    r"be afraid|hesitate|lose hope|doubt yourself|be (?:so )?hard on|let (?:it|them|anyone)|"
    r"yourself|keep (?:it up|going|up the)|stay (?:strong|positive|safe)|(?:bring|get|let) you "
    r"down|you(?:'ve)? got this|you can do (?:it|this)|you deserve)\b",
    re.IGNORECASE,
)


def encouragement(sentence: str) -> bool:
    """A cheer aimed at the other speaker ("Don't give up!", "Never stop dreaming!") rather than
    a working rule."""
    if _ENCOURAGEMENT.search(sentence):
        return True
    aimed = sentence.rstrip().endswith("!") or re.search(r"\b(?:you|your)\b", sentence, re.I)
    return bool(aimed) and not project_work(sentence)


def is_junk(content: str, subject: str = "") -> bool:
    """Junk by one of the named rules of ``rules_junk.JUNK_RULES`` (a pleasantry, a question
    back, filler, a fragment, an unresolved pronoun)."""
    return junk_rule(content, subject) is not None


_YOU = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)


def listener(text: str, sentence: str) -> str | None:
    """A user's statement that mentions "you": about the work, "you" is the assistant ("The
    user wants the assistant to run the tests first"); otherwise it is talk to the listener
    that means nothing later (None)."""
    if not _YOU.search(text):
        return text
    if not project_work(sentence):
        return None
    text = re.sub(r"\byour\b", "the assistant's", text, flags=re.IGNORECASE)
    return re.sub(r"\byou(?:rs)?\b", "the assistant", text, flags=re.IGNORECASE)


def first_person_singular(text: str) -> bool:
    """The statement's subject is its speaker ("I ...", "My ...")."""
    return bool(_LEAD.match(text.strip()))


# -- fixes ----------------------------------------------------------------------------------------
_ACK_WORDS = _set(
    "that this it which yes yep yeah ok okay thanks thank you so great perfect awesome fixed "
    "fix fixes solved solves resolved resolves works worked working now problem issue error "
    "trick did does do is was has have finally really totally indeed it's that's all good cool "
    "wow for helping help much a lot your suggestion idea tip change the solution workaround "
    "and nice again everything just like charm"
)
_IMPERATIVE = (
    r"try|run|set|add|raise|increase|lower|install|use|change|delete|remove|restart|"
    r"clear|upgrade|downgrade|pin|update|rename|move|switch|enable|disable|export|reinstall|"
    r"rebuild|reboot|give|mount|bump|drop|replace|pass|point|make sure"
)
_PROPOSE = re.compile(
    r"`|^(?:try|run|set|add|raise|increase|lower|install|use|change|delete|remove|restart|"
    r"clear|upgrade|downgrade|pin|update|rename|move|switch|enable|disable|export|reinstall|"
    r"rebuild|reboot|give|mount|bump|drop|replace|pass|point|make sure)\b|"
    r"\b(?:you (?:need|can|should|could|have) to|I'd (?:try|suggest)|the cause is|"
    r"it's because|caused by)\b",
    re.IGNORECASE,
)


def imperative(sentence: str) -> bool:
    """The sentence tells someone what to do ("Raise the limit ...")."""
    return bool(re.match(rf"(?:{_IMPERATIVE})\b", sentence.strip(), re.IGNORECASE))


def acknowledgement(sentence: str) -> bool:
    """ "That fixed it, thanks!": it says a fix worked but not what the fix was."""
    found = re.findall(r"[\w'-]+", sentence.casefold())
    return sum(1 for w in found if w not in _ACK_WORDS) < 2


def proposal(text: str, *, skip_errors: bool) -> str | None:
    """The sentence of an earlier message that proposed a fix (a command, an instruction),
    or None when there is none to name."""
    from engram.default_plugins import rules_patterns as rp

    for sentence in rp.sentences(text):
        if sentence.rstrip().endswith("?") or (skip_errors and rp.is_error(sentence)):
            continue
        body = rp.clean(sentence)
        if _PROPOSE.search(body) and not is_junk(body):
            return body
    return None
