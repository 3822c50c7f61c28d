"""``rules``: the offline, dependency-free extractor, and the default.

It reads a conversation sentence by sentence and keeps what patterns recognise
(``rules_patterns``): preferences the user states, decisions, errors with the fix that followed,
configuration facts (commands, ports, environment variables, runtime versions) and progress.
``summary`` mode writes one extractive session summary; ``init`` mode reads project files (a
README's title and first paragraph, the dependencies of pyproject.toml / package.json / Cargo.toml
/ go.mod, the commands a README tells you to run).

Its contradiction check is the offline judge (``engram.memories.judge.verdicts``): a reversal of the
same statement (a polarity flip, an antonym, tabs → spaces, port 8080 → 9090), same type only. It
condenses nothing: old session summaries are archived (an LLM extractor distils them instead).
Recall on the suite's labelled conversations is measured in
core/tests/plugins/test_rules_extractor.py and docs/extractors/rules.md.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Sequence

from engram.config import LifecycleConfig
from engram.default_plugins import rules_patterns as rp
from engram.default_plugins import rules_speaker as rs
from engram.extraction import Window, prepare, unique_memories
from engram.memories.judge.verdicts import judge
from engram.models import ExtractedMemory, ExtractionMode, KnownMemory, Message
from engram.registry import NoOptions
from engram.types import BY_NAME, MemoryType

FIX_LOOKAHEAD = 3  # messages after an error in which its fix may come
SUMMARY_CHARS = 1_200
_FILE = re.compile(r"^# File: (?P<name>[^\n]+)\n\n", re.MULTILINE)


class RulesExtractor:
    """Finds typed memories with patterns; see the module docstring."""

    name = "rules"

    def __init__(self, options: NoOptions | None = None) -> None:
        self.options = options

    # -- extract -------------------------------------------------------------------------------
    def extract(
        self, messages: Sequence[Message], mode: ExtractionMode = "normal"
    ) -> list[ExtractedMemory]:
        # Capture cuts a long conversation into windows; called directly, read it all.
        shown = prepare(messages, mode, Window(None, sys.maxsize) if mode == "normal" else None)
        if not shown:
            return []
        if mode == "summary":
            return [summarise(shown)]
        if mode == "init":
            return unique_memories(project_memories(shown))
        return unique_memories(conversation_memories(shown))

    # -- contradictions ------------------------------------------------------------------------
    def find_contradictions(
        self, new: ExtractedMemory, candidates: Sequence[KnownMemory]
    ) -> list[str]:
        """The candidates the offline judge finds reversed by ``new`` (``supersedes``): a
        polarity flip or antonym of the same statement, a reversed preference, an attribute's
        new value, "switched from X to Y". Candidates come within the contradiction limit, so
        the distance is not known here: they are judged as within it."""
        rules = LifecycleConfig()
        limit = rules.contradiction_limit(new.type)
        return [
            old.id for old in candidates if judge(new, old, limit, rules).relation == "supersedes"
        ]

    def condense(self, summaries: Sequence[KnownMemory]) -> ExtractedMemory | None:
        """Nothing: without a model there is no honest way to distil summaries into a pattern,
        so core archives them."""
        return None


def conversation_memories(messages: Sequence[Message]) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    pending: list[tuple[int, str]] = []  # errors waiting for a fix: (message index, memory text)
    for index, message in enumerate(messages):
        subject = speaker_subject(message)
        for sentence in rp.sentences(message.content):
            if not rp.is_statement(sentence):
                continue
            found.extend(
                m.model_copy(update={"subject": subject})
                for m in _one_sentence(sentence, message.role)
            )
            if rp.is_fix(sentence):
                # The fix of an error met in the last few messages, else one on its own line.
                pending = [(i, e) for i, e in pending if index - i <= FIX_LOOKAHEAD]
                fix = _fix_text(sentence, message.role, messages, pending, index)
                if pending and fix:
                    _, error = pending.pop()
                    found.append(_error_solution(error, fix))
                elif rp.error_and_fix(sentence) and not rs.acknowledgement(sentence):
                    found.append(_error_solution(_said(sentence, message.role), None))
            elif rp.is_error(sentence):
                pending.append((index, _said(sentence, message.role)))
    return [m for m in found if not rs.is_junk(m.content)]


def speaker_subject(message: Message) -> str:
    """Whom a fact taken from ``message`` is about: its speaker, by name when the conversation
    names its speakers, else "user" (the user's own sessions) or "assistant". Never the other
    speaker: the words were this speaker's, so whatever "I" says is about them."""
    if message.name and message.name.strip():
        return message.name.strip()
    return "user" if message.role == "user" else "assistant"


def _said(sentence: str, role: str) -> str:
    """The sentence as a memory states it, with its speaker named instead of "I"."""
    return rs.third_person(rp.clean(sentence), role)


def _fix_text(
    sentence: str,
    role: str,
    messages: Sequence[Message],
    pending: list[tuple[int, str]],
    index: int,
) -> str | None:
    """The fix an error gets: the sentence itself, or, when it only acknowledges ("that fixed
    it, thanks"), the proposal in an earlier message after the error."""
    if not rs.acknowledgement(sentence):
        return _said(sentence, role)
    if not pending:
        return None
    since = pending[-1][0]
    for earlier in range(index - 1, since - 1, -1):
        proposal = rs.proposal(messages[earlier].content, skip_errors=earlier == since)
        if proposal:
            said = _said(proposal, messages[earlier].role)
            lead = "the fix was to " if rs.imperative(said) else "the fix was: "
            return lead + said[0].lower() + said[1:]
    return None


def _one_sentence(sentence: str, role: str) -> list[ExtractedMemory]:
    out = []
    pref = rp.preference(sentence, role)
    if pref is not None and pref[1] > 1.0 and rs.encouragement(sentence):
        pref = None  # "Don't miss a beat!" cheers the listener on; it is no working rule
    if pref is not None and not rs.is_junk(pref[0], "The user"):
        text, importance = pref
        kept = rs.listener(rs.third_person(text, role), sentence)
        if kept:
            out.append(_memory("preference", kept, importance))
    decided = rp.decision(sentence)
    if decided and pref is None:
        out.append(_memory("decision", _attributed(decided, role)))
    config = rp.config_fact(sentence)
    if config and pref is None and not rp.is_error(sentence) and not rp.is_fix(sentence):
        out.append(_memory("project-config", rs.third_person(config, role)))
    done = rp.progress(sentence)
    personal = None
    if not decided and pref is None and role == "user":
        personal = rs.personal_fact(rp.clean(sentence))
    if done and not decided and rs.project_work(sentence):
        out.append(_memory("progress", _attributed(done, role)))
    elif personal:
        out.append(_memory("fact", rs.personal_fact_said(personal, role)))
    elif done and not decided and role == "user":
        out.append(_memory("fact", _said(sentence, role)))
    return out


def _attributed(text: str, role: str) -> str:
    """A decision or progress as its speaker's: "I chose X" → "The user chose X"; the
    assistant's "we"/"let's" is reported as what the assistant said, never as the user's."""
    if role == "user" or rs.first_person_singular(text):
        return rs.third_person(text, role)
    said = rs.third_person(text, role)
    return f"The assistant said: {said[0].lower()}{said[1:]}"


def _error_solution(error: str, fix: str | None) -> ExtractedMemory:
    text = error if fix is None else f"{error.rstrip('.')}: {fix[0].lower()}{fix[1:]}"
    return ExtractedMemory(
        type="error-solution", content=text, title="Error: " + rp.title_of(error, 7)
    )


def _memory(kind: MemoryType, text: str, importance: float | None = None) -> ExtractedMemory:
    """A memory of ``kind`` (an extracted type of the table), its importance the type's default
    unless the pattern rated it."""
    if importance is None:
        importance = BY_NAME[kind].importance
    return ExtractedMemory(type=kind, content=text, title=rp.title_of(text), importance=importance)


# --------------------------------------------------------------------------- summary


def summarise(messages: Sequence[Message]) -> ExtractedMemory:
    """One extractive summary: what was asked first, what was found, where it ended."""
    first = next((m for m in messages if m.role == "user"), messages[0])
    asked = _first_sentence(first.content)
    parts = [f"Session of {len(messages)} messages. Started with: {asked}"]
    facts = unique_memories(conversation_memories(messages))
    for kind, label in (
        ("decision", "Decided"),
        ("error-solution", "Fixed"),
        ("preference", "Preferences"),
        ("project-config", "Configuration"),
        ("progress", "Progress"),
    ):
        items = [m.content for m in facts if m.type == kind]
        if items:
            parts.append(f"{label}: " + " ".join(items))
    last = _first_sentence(messages[-1].content)
    if len(messages) > 1 and last != asked:
        parts.append(f"Ended with: {last}")
    text = "\n".join(parts)
    if len(text) > SUMMARY_CHARS:
        text = text[: SUMMARY_CHARS - 1].rstrip() + "…"
    return ExtractedMemory(
        type="session-summary", content=text, title="Session: " + rp.title_of(asked, 8)
    )


def _first_sentence(text: str) -> str:
    found = rp.sentences(text)
    first = found[0] if found else text.strip()
    return first if len(first) <= 200 else first[:199].rstrip() + "…"


# --------------------------------------------------------------------------- init


def project_memories(messages: Sequence[Message]) -> list[ExtractedMemory]:
    files = _files(messages)
    found: list[ExtractedMemory] = []
    brief = _brief(files)
    if brief:
        found.append(_memory("project-brief", brief))
    tech = _tech(files)
    if tech:
        found.append(_memory("tech-context", tech))
    for name, text in files.items():
        if name.lower().endswith((".md", ".rst", ".txt")) or name.upper().startswith("README"):
            for sentence in rp.sentences(_prose(text)):
                fact = rp.config_fact(sentence)
                if fact and rp.is_statement(sentence):
                    found.append(_memory("project-config", fact))
            commands = _fenced_commands(text)
            if commands:
                listed = "; ".join(f"`{c}`" for c in commands)
                found.append(_memory("project-config", f"Commands in {name}: {listed}."))
    scripts = _npm_scripts(files.get("package.json", ""))
    if scripts:
        found.append(_memory("project-config", scripts))
    return found


SHELLS = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session"})
MAX_COMMANDS = 8


_BLOCK_START = re.compile(r"^\s*(?:#|[-*+]\s|\d+[.)]\s|>|```)")


def _prose(text: str) -> str:
    """A document as one line per paragraph, without its tables: a table row ("| `engram index`
    | what it does |") names commands but states no fact about this project, and a sentence
    wrapped over two lines is one sentence. Headings, list items and fences keep their lines."""
    out: list[str] = []
    joining = False
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            joining = False
            continue
        if not line.strip() or _BLOCK_START.match(line):
            out.append(line)
            joining = bool(line.strip()) and not line.lstrip().startswith(("#", "```"))
            continue
        if joining and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
        joining = True
    return "\n".join(out)


def _fenced_commands(text: str) -> list[str]:
    """The commands of a document's shell code blocks (```bash, ```sh, ```console, ...): what a
    newcomer runs first, as the document spells them. In a console block only the "$ " lines
    are commands (the rest is output)."""
    commands: list[str] = []
    shell: str | None = None  # the open block's language; None outside a block
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            shell = stripped[3:].strip().lower() if shell is None else None
            continue
        if shell not in SHELLS:
            continue
        if shell in ("console", "shell-session") and not stripped.startswith("$ "):
            continue
        command = stripped.removeprefix("$ ").strip()
        if command and not command.startswith("#") and command not in commands:
            commands.append(command if len(command) <= 400 else command[:399] + "…")
    return commands[:MAX_COMMANDS]


def _files(messages: Sequence[Message]) -> dict[str, str]:
    files: dict[str, str] = {}
    for m in messages:
        match = _FILE.match(m.content)
        name = match["name"].strip() if match else f"message-{len(files) + 1}"
        files[name] = m.content[match.end() :] if match else m.content
    return files


def _brief(files: dict[str, str]) -> str | None:
    readme = next((t for n, t in files.items() if n.upper().startswith("README")), None)
    if readme:
        title = next(
            (line.lstrip("# ").strip() for line in readme.splitlines() if line.startswith("# ")),
            None,
        )
        paragraph = _first_paragraph(readme)
        if paragraph:
            return f"{title}: {paragraph}" if title and title not in paragraph else paragraph
    meta = _package_meta(files)
    if meta:
        name, description = meta
        return f"{name}: {description}" if description else None
    return None


def _first_paragraph(text: str) -> str | None:
    block: list[str] = []
    for line in rp.FENCE.sub("\n", text).splitlines():
        stripped = line.strip()
        if not stripped:
            if block:
                break
            continue
        if stripped.startswith(("#", "[!", "![", "<", "|", "---", "===")):
            if block:
                break
            continue
        block.append(stripped)
    paragraph = " ".join(block)
    return paragraph[:600] if len(paragraph.split()) >= 4 else None


def _package_meta(files: dict[str, str]) -> tuple[str, str] | None:
    project = _dict(_toml(files.get("pyproject.toml", "")).get("project"))
    package = _json(files.get("package.json", ""))
    for meta in (project, package):
        name = meta.get("name")
        if isinstance(name, str):
            return name, str(meta.get("description") or "")
    return None


def _tech(files: dict[str, str]) -> str | None:
    parts = []
    pyproject = _toml(files.get("pyproject.toml", ""))
    project = pyproject.get("project")
    if isinstance(project, dict):
        python = project.get("requires-python")
        deps = [_dep_name(d) for d in project.get("dependencies") or [] if isinstance(d, str)]
        text = "Python" + (f" ({python})" if isinstance(python, str) else "")
        parts.append(text + (f" with {', '.join(deps)}" if deps else ""))
    package = _json(files.get("package.json", ""))
    deps = sorted({**_dict(package.get("dependencies")), **_dict(package.get("devDependencies"))})
    if package:
        engines = _dict(package.get("engines")).get("node")
        text = "JavaScript/Node" + (f" ({engines})" if isinstance(engines, str) else "")
        parts.append(text + (f" with {', '.join(deps[:15])}" if deps else ""))
    cargo = _toml(files.get("Cargo.toml", ""))
    if cargo:
        crates = sorted(_dict(cargo.get("dependencies")))
        parts.append("Rust" + (f" with {', '.join(crates[:15])}" if crates else ""))
    gomod = files.get("go.mod", "")
    version = re.search(r"^go (\S+)", gomod, re.MULTILINE)
    if gomod:
        parts.append("Go" + (f" {version.group(1)}" if version else ""))
    return ("The project uses " + "; ".join(parts) + ".") if parts else None


def _npm_scripts(raw: str) -> str | None:
    scripts = _dict(_json(raw).get("scripts"))
    named = [f"`npm run {k}` ({v})" for k, v in scripts.items() if isinstance(v, str)][:8]
    return ("npm scripts: " + "; ".join(named) + ".") if named else None


def _dep_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", spec.strip(), maxsplit=1)[0]


def _toml(raw: str) -> dict[str, object]:
    try:
        return tomllib.loads(raw) if raw.strip() else {}
    except tomllib.TOMLDecodeError:
        return {}


def _json(raw: str) -> dict[str, object]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}
