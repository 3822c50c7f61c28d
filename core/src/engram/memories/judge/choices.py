"""What a preference or decision chooses and rejects ("prefers A over B", "use A, not B",
"switched from B to A", "no longer uses B"), and the settings a text states (port 8080).

Read only where a verb of choosing says it is a choice: "A over B" in "holding a bike over his
head" or "all over the world" chooses nothing. (Moved here from the rules extractor's patterns,
which read "over", "with" and "on" anywhere as a preference and so superseded unrelated
memories.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.memories.judge.lexicon import FUNCTION_WORDS
from engram.memories.judge.reading import stem

_CHOOSE = (
    r"(?:prefer(?:s|red)?|lik(?:e|es|ed)|lov(?:e|es|ed)|favou?r(?:s|ed)?|want(?:s|ed)?|"
    r"us(?:e|es|ed|ing)|cho(?:se|ose|oses)|pick(?:s|ed)?|settled on|went with|go(?:es)? with|"
    r"going with|rather have|stick(?:s)? with|opt(?:s|ed)? for|adopt(?:s|ed)?)"
)
_OVER = re.compile(
    rf"\b{_CHOOSE}\s+(?P<chosen>.+?)\s*(?:\bover\b|\binstead of\b|\brather than\b|,?\s*\bnot\b|"
    r"\bbut not\b|\bvs\.?|\bversus\b|(?<=prefers) to\b|(?<=prefer) to\b)\s+(?P<rejected>.+)",
    re.IGNORECASE,
)
_SWITCH = re.compile(
    r"\b(?:switch(?:ed|es|ing)?|mov(?:e|ed|es|ing)|migrat(?:e|ed|es|ing)|replac(?:e|ed|es|ing)|"
    r"chang(?:e|ed|es|ing))\b(?:.*?\bfrom (?P<old>[\w.+#-]+))?.*?\b(?:to|with) (?P<new>[\w.+#-]+)",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\binstead of (?P<old>[\w.+#-]+(?: [\w.+#-]+)?)", re.IGNORECASE)
_NEGATED = re.compile(
    r"\b(?:does not|doesn't|do not|don't|never|no longer|not|stop(?:ped)?|quit)\s+"
    rf"(?:{_CHOOSE}\s+)(?P<what>[\w.+#-]+(?: [\w.+#-]+)?)"
    r"|\bno longer (?P<thing>[\w.+#-]+(?: [\w.+#-]+)?)",
    re.IGNORECASE,
)
_CHOSEN = re.compile(rf"\b{_CHOOSE}\s+(?P<what>.+)", re.IGNORECASE)
_CUT = re.compile(
    r"\s+(?:in|for|on|at|when|because|since|as|like|so|from now on|everywhere|from|anymore)\b.*$"
    r"|[,.;:!].*$",
    re.IGNORECASE,
)
_KEY_VALUE = re.compile(
    r"(?P<key>[\w .-]{2,40}?)\s+(?:listens on|runs on|is on|uses|is served on|binds to)\s+"
    r"port\s+(?P<value>\d{2,5})",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Choice:
    """What a text chooses and rejects (stems of content words), and its port settings."""

    chosen: frozenset[str]
    rejected: frozenset[str]
    settings: tuple[tuple[str, str], ...]


def stems(text: str) -> frozenset[str]:
    found = re.findall(r"[a-z0-9][a-z0-9.+#-]*", text.casefold())
    return frozenset(
        stem(w.strip(".-")) for w in found if w not in FUNCTION_WORDS and len(w.strip(".-")) > 1
    )


def choice(text: str) -> Choice:
    """Read what ``text`` chooses and rejects; empty sets when it states no choice."""
    chosen: set[str] = set()
    rejected: set[str] = set()
    body = text.strip()
    over = _OVER.search(body)
    if over:
        chosen |= stems(_CUT.sub("", over["chosen"]))
        rejected |= stems(_CUT.sub("", over["rejected"]))
    switch = _SWITCH.search(body)
    if switch:
        chosen |= stems(switch["new"])
        if switch["old"]:
            rejected |= stems(switch["old"])
    for instead in _INSTEAD.finditer(body):
        rejected |= stems(_CUT.sub("", instead["old"]))
    for negated in _NEGATED.finditer(body):
        rejected |= stems(_CUT.sub("", negated["what"] or negated["thing"]))
    if not chosen:
        prefers = _CHOSEN.search(body)
        if prefers and not _NEGATED.search(body[: prefers.start() + 40]):
            chosen |= stems(_CUT.sub("", prefers["what"]))
    settings = tuple(
        (" ".join(sorted(stems(m["key"]))), m["value"]) for m in _KEY_VALUE.finditer(body)
    )
    return Choice(
        chosen=frozenset(chosen - rejected), rejected=frozenset(rejected), settings=settings
    )


def reverses(new: Choice, old: Choice) -> str | None:
    """Why the new choice reverses the old one (None when it does not): it rejects what the
    old chose, or chooses what the old rejected, or gives the same setting another value."""
    if new.rejected & old.chosen:
        return f"rejects what was chosen ({', '.join(sorted(new.rejected & old.chosen))})"
    if old.rejected & new.chosen and not new.chosen <= old.chosen:
        return f"chooses what was rejected ({', '.join(sorted(old.rejected & new.chosen))})"
    old_settings = dict(old.settings)
    for key, value in new.settings:
        if key and key in old_settings and old_settings[key] != value:
            return f"{key} port changed from {old_settings[key]} to {value}"
    return None
