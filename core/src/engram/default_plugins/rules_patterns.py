"""The patterns of the ``rules`` extractor: which sentences state a preference, a decision, an
error, a fix or a configuration fact. (What a preference chooses and rejects, for the
contradiction check, is read by ``engram.memories.judge.choices``.)

Precision first: a question, a hypothetical ("if we…", "should we…", "would…") or a line of
code states nothing, and a sentence that matches no pattern is left alone. Patterns read plain
English as people type it to coding agents; they are tested one family at a time in
core/tests/plugins/test_rules_extractor.py.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|\n+|;\s+")
_HYPOTHETICAL = re.compile(
    r"^(?:if|what if|should|shall|would|could|can|do|does|did|is|are|maybe|perhaps|how|why|"
    r"what|which|where|when|who)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|well|also|and|but|actually|right|yes|yeah|great|good|noted|"
    r"one more thing|by the way|btw|fyi|note|please|oh|wow|hey|hi|haha|lol|omg|yep|yup|"
    r"honestly|anyway|anyways|cool|awesome|nice|sure|totally|absolutely|thanks|thank you|"
    r"exactly|guess what)\b[,:.!]?\s*)+",
    re.IGNORECASE,
)

# -- preferences -------------------------------------------------------------------------------
_I_PREFER = re.compile(
    r"\bI(?:'d| would)? (?:really |strongly |now |still |also |generally |usually )?"
    r"(?P<verb>prefer|like|love|want|favou?r)s? (?P<rest>.+)",
    re.IGNORECASE,
)
_I_RATHER = re.compile(r"\bI(?:'d| would) rather (?:have |use |see )?(?P<rest>.+)", re.IGNORECASE)
_I_DISLIKE = re.compile(
    r"\bI (?:really |strongly )?(?:(?:don't|do not|never|no longer) (?:like|want|use|prefer|love|"
    r"enjoy)|hate|dislike)s? (?P<rest>.+)",
    re.IGNORECASE,
)
_WISH = re.compile(r"\bI(?:'d| would) (?:really )?(?:love|like) to\b", re.IGNORECASE)
_RULE = re.compile(
    r"^(?:please )?(?:always|never|don't|do not)\b"
    r"(?! (?:mind|here|there|so|such|a|an|the|been|glad|happy|good|great|fun)\b)(?P<rest>.+)",
    re.IGNORECASE,
)
_FROM_NOW_ON = re.compile(r"\bfrom now on\b", re.IGNORECASE)

# -- decisions ---------------------------------------------------------------------------------
_DECIDED = re.compile(
    r"\b(?:we|I|the team)(?:'ve| have)? (?:decided|agreed|chose|picked|settled on|went with|"
    r"opted for|are going with|will go with|'re going with|'ll go with)\b(?P<rest>.+)",
    re.IGNORECASE,
)
_LETS = re.compile(
    r"\blet's (?:go with|use|stick with|switch to|move to|adopt)\b(?P<rest>.+)", re.IGNORECASE
)
_SWITCHING = re.compile(
    r"\b(?:we|I)(?:'re| are| will|'ll| have|'ve)? (?:switching|switched|migrating|migrated|"
    r"moving|moved|replacing|replaced)\b(?P<rest>.+)",
    re.IGNORECASE,
)

# -- errors and fixes --------------------------------------------------------------------------
_ERROR = re.compile(
    r"\b(?:error|errors|exception|traceback|fails?|failed|failing|failure|crash(?:es|ed)?|"
    r"segfault|panic|times? out|timed out|timeout|oomkilled|exit code \d+|broken|"
    r"not found|no space left|refused|denied|cannot|can't|won't start|500)\b|\w+Error\b",
    re.IGNORECASE,
)
_FIX = re.compile(
    r"\b(?:fixed|fixes|fix was|solved|solves|resolved|resolves|the solution (?:is|was)|"
    r"works now|worked around|workaround (?:is|was))\b",
    re.IGNORECASE,
)

# -- configuration -----------------------------------------------------------------------------
_COMMAND = re.compile(r"`([^`\n]{2,120})`")
_RUN_WORDS = re.compile(
    r"\b(?:run|runs|build|builds|apply|start|starts|serve|install|deploy|test|lint|format|"
    r"execute|use)\b",
    re.IGNORECASE,
)
_PORT = re.compile(r"\bport (\d{2,5})\b|\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(\d{2,5})\b", re.I)
_ENV_VAR = re.compile(
    r"\b(?i:set|export|env(?:ironment)? var(?:iable)?|reads)\b.*\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"
)
_VERSION = re.compile(
    r"\b(?:we (?:use|target|run|are on)|uses|targets|runs on|requires)\s+"
    r"(?P<tool>Node(?:\.js)?|Python|Java|Go|Ruby|PHP|Rust|Postgres(?:QL)?|MySQL|Redis|"
    r"Kubernetes|Terraform|Django|Rails|React|Vue|Angular)\s+(?P<version>v?\d+(?:\.\d+)*)",
    re.IGNORECASE,
)
_CONFIG_FILE = re.compile(
    r"\b(?:config|configuration|settings) (?:lives?|is|are) in\b|\.env\b", re.IGNORECASE
)

# -- progress ----------------------------------------------------------------------------------
_PROGRESS = re.compile(
    r"\b(?:we|I)(?:'ve| have)? (?:finished|completed|implemented|shipped|merged|deployed|"
    r"released)\b(?P<rest>.+)",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """The sentences of a message, code blocks left out."""
    plain = FENCE.sub("\n", text)
    parts = (p.strip() for p in _SENTENCE_END.split(plain))
    return [p for p in parts if p and not p.startswith(("    ", ">", "$", "#"))]


def clean(sentence: str) -> str:
    """A sentence as a memory states it: filler words at the start dropped, first letter up,
    one closing full stop."""
    text = _FILLER.sub("", sentence.strip()).strip(" ,;:-")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", ")", "`")) else text + "."


def is_statement(sentence: str) -> bool:
    """Not a question, a hypothetical, or too short to state anything."""
    stripped = _FILLER.sub("", sentence.strip())
    if stripped.endswith("?") or len(stripped.split()) < 3:
        return False
    return not _HYPOTHETICAL.match(stripped)


def preference(sentence: str, role: str) -> tuple[str, float] | None:
    """(the preference as a memory states it, importance) or None."""
    if role == "user":
        match = _RULE.match(_FILLER.sub("", sentence.strip()))
        if match:
            return clean(sentence), 2.0
        for pattern, verb in ((_I_DISLIKE, "does not want"), (_I_RATHER, "would rather have")):
            match = pattern.search(sentence)
            if match:
                return f"The user {verb} {_object(match['rest'])}", 1.0
        match = _I_PREFER.search(sentence)
        if match and _WISH.search(sentence):
            return None  # "I'd love to hear more": a wish of the moment, not a preference
        if match and not re.match(r"to (?:know|ask|see|check)\b", match["rest"], re.I):
            verb = match["verb"].lower()
            third = {"like": "likes", "love": "loves", "want": "wants", "prefer": "prefers"}
            said = third.get(verb, verb + "s")
            return f"The user {said} {_object(match['rest'])}", 1.0
        if _FROM_NOW_ON.search(sentence):
            return clean(sentence), 1.0
    return None


def _object(rest: str) -> str:
    text = rest.strip().rstrip(".!")
    return text + "."


def decision(sentence: str) -> str | None:
    if _DECIDED.search(sentence) or _LETS.search(sentence) or _SWITCHING.search(sentence):
        return clean(sentence)
    return None


def is_error(sentence: str) -> bool:
    return bool(_ERROR.search(sentence)) and not _FIX.search(sentence)


def is_fix(sentence: str) -> bool:
    return bool(_FIX.search(sentence))


def error_and_fix(sentence: str) -> bool:
    """An error and its fix in one sentence ("X failed; raising Y fixed it")."""
    return bool(_ERROR.search(sentence)) and bool(_FIX.search(sentence))


def config_fact(sentence: str) -> str | None:
    """A configuration fact: a command to run, a port, an environment variable, a runtime
    version, where configuration lives."""
    commands = _COMMAND.findall(sentence)
    if commands and _RUN_WORDS.search(sentence):
        return clean(sentence)
    if _PORT.search(sentence) or _ENV_VAR.search(sentence) or _VERSION.search(sentence):
        return clean(sentence)
    if _CONFIG_FILE.search(sentence):
        return clean(sentence)
    return None


def progress(sentence: str) -> str | None:
    return clean(sentence) if _PROGRESS.search(sentence) else None


def title_of(text: str, words: int = 9) -> str:
    """A short title: the first words of the memory."""
    parts = text.rstrip(".").split()
    short = " ".join(parts[:words])
    return short + ("…" if len(parts) > words else "")
