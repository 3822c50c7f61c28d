"""``rules``: the offline, dependency-free extractor, and the default.

It reads a conversation sentence by sentence and keeps what patterns recognise
(``rules_patterns``): preferences the user states, decisions, errors with the fix that followed,
configuration facts (commands, ports, environment variables, runtime versions) and progress.
``summary`` mode writes one extractive session summary; ``init`` mode reads project files (a
README's title and first paragraph, the dependencies of pyproject.toml / package.json / Cargo.toml
/ go.mod, the commands a README tells you to run).

Its contradiction check is the offline judge (``engram.lifecycle.judge``): a reversal of the same
statement (a polarity flip, an antonym, tabs → spaces, port 8080 → 9090), same type only. It
condenses nothing: old session summaries are archived (an LLM extractor distils them instead).
Recall on the suite's labelled conversations is measured in core/tests/test_rules_extractor.py
and docs/extractors/rules.md.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence

from engram.config import LifecycleConfig
from engram.default_plugins import rules_patterns as rp
from engram.extraction import prepare
from engram.hookspecs import hookimpl
from engram.lifecycle.judge import judge
from engram.models import ExtractedMemory, ExtractionMode, KnownMemory, Message
from engram.registry import NoOptions, Register

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
        shown = prepare(messages, mode)
        if not shown:
            return []
        if mode == "summary":
            return [summarise(shown)]
        if mode == "init":
            return _unique(project_memories(shown))
        return _unique(conversation_memories(shown))

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
    pending: list[tuple[int, str]] = []  # errors waiting for a fix: (message index, sentence)
    for index, message in enumerate(messages):
        for sentence in rp.sentences(message.content):
            if not rp.is_statement(sentence):
                continue
            found.extend(_one_sentence(sentence, message.role))
            if rp.is_fix(sentence):
                # The fix of an error met in the last few messages, else one on its own line.
                pending = [(i, e) for i, e in pending if index - i <= FIX_LOOKAHEAD]
                if pending:
                    _, error = pending.pop()
                    found.append(_error_solution(error, rp.clean(sentence)))
                elif rp.error_and_fix(sentence):
                    found.append(_error_solution(rp.clean(sentence), None))
            elif rp.is_error(sentence):
                pending.append((index, rp.clean(sentence)))
    return found


def _one_sentence(sentence: str, role: str) -> list[ExtractedMemory]:
    out = []
    pref = rp.preference(sentence, role)
    if pref is not None:
        text, importance = pref
        out.append(_memory("preference", text, importance))
    decided = rp.decision(sentence)
    if decided and pref is None:
        out.append(_memory("decision", decided))
    config = rp.config_fact(sentence)
    if config and pref is None and not rp.is_error(sentence) and not rp.is_fix(sentence):
        out.append(_memory("project-config", config))
    done = rp.progress(sentence)
    if done and not decided:
        out.append(_memory("progress", done))
    return out


def _error_solution(error: str, fix: str | None) -> ExtractedMemory:
    text = error if fix is None else f"{error.rstrip('.')}: {fix[0].lower()}{fix[1:]}"
    return ExtractedMemory(
        type="error-solution", content=text, title="Error: " + rp.title_of(error, 7)
    )


def _memory(kind: str, text: str, importance: float = 1.0) -> ExtractedMemory:
    return ExtractedMemory.model_validate(
        {"type": kind, "content": text, "title": rp.title_of(text), "importance": importance}
    )


def _unique(memories: list[ExtractedMemory]) -> list[ExtractedMemory]:
    seen: set[tuple[str, str]] = set()
    out = []
    for m in memories:
        key = (m.type, " ".join(m.content.casefold().split()))
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


# --------------------------------------------------------------------------- summary


def summarise(messages: Sequence[Message]) -> ExtractedMemory:
    """One extractive summary: what was asked first, what was found, where it ended."""
    first = next((m for m in messages if m.role == "user"), messages[0])
    asked = _first_sentence(first.content)
    parts = [f"Session of {len(messages)} messages. Started with: {asked}"]
    facts = _unique(conversation_memories(messages))
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
            for sentence in rp.sentences(text):
                fact = rp.config_fact(sentence)
                if fact and rp.is_statement(sentence):
                    found.append(_memory("project-config", fact))
    scripts = _npm_scripts(files.get("package.json", ""))
    if scripts:
        found.append(_memory("project-config", scripts))
    return found


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


@hookimpl
def register_extractors(register: Register) -> None:
    """The built-in offline extractor."""
    register("rules", RulesExtractor)
