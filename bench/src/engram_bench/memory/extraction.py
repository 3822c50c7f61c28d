"""Extraction measured on LoCoMo's per-session observation facts (public, CC BY-NC 4.0).

Each session of each LoCoMo conversation is captured twice, once from each speaker's side: the
speaker whose memory it is plays ``user``, the other one ``assistant`` (LoCoMo's two speakers
are both people; a memory is always someone's, so each gets their own). Capture goes through
``engram.memories.capture.extract_windows``, the function ``Memory.capture`` uses: the whole session
in overlapping windows of ``[capture] normal_messages``. A memory is *about* a speaker by its
subject: "The user ..." is the side's own speaker, "The assistant ..." the other one, a memory
still in the first person is read as the user's, anything else is about nobody in particular.

Figures (docs/benchmarks.md):

- ``recall``: share of gold facts some memory of the same session, about the same speaker (or
  about nobody), matches at cosine ≥ 0.7, the subject (speaker name, "The user") removed from
  both; ``precision``: share of memories backed that way by a gold fact at cosine ≥ 0.6.
- ``verbatim``: the same figures for storing every turn verbatim (each speaker's own turns).
- ``seen``: share of messages some capture window read.
- ``wrong_speaker``: memories about a speaker other than the one who said it. Who said it: the
  speaker whose best turn shares more content words and word pairs with the memory than any
  turn of the other speaker (a tie decides nothing and is not counted).
- ``junk``: memories failing an automatic check: a pleasantry, a fragment (under two words
  or ending on a function word), a pronoun subject, a short memory (up to eight words after
  its subject) leaning on a pronoun ("wants to pass it on"), talk to the listener ("you"), or
  a first person left unresolved. The checks are written here, apart from the extractor's filters.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engram.config import CaptureConfig
from engram.embedding.cache import CachedEmbedder, EmbeddingCache
from engram.errors import ConfigError
from engram.memories.capture import extract_windows
from engram.models import Message
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Embedder, Extractor
from engram_bench.datasets import _find_locomo_json
from engram_bench.embedding import build_embedder

RECALL_COSINE = 0.7
PRECISION_COSINE = 0.6
TARGETS = {"seen": 1.0, "wrong_speaker": 0, "junk": 0.10, "precision": 0.5, "recall": 0.10}
_SESSION = re.compile(r"session_(\d+)")
_SUBJECT = re.compile(r"^(?:The (?:user|assistant))(?:'s)?(?: said:)?\s*", re.IGNORECASE)
_STOP = frozenset(
    re.findall(
        r"\S+",
        "the a an and or but to of in on at for with from my your their our is are was were be "
        "been has have had it this that they them he she his her i me you we so just really "
        "user assistant said",
    )
)


@dataclass
class Session:
    """One LoCoMo session: its turns (speaker, text) and its gold facts (speaker, fact)."""

    name: str
    speakers: tuple[str, str]
    turns: list[tuple[str, str]]
    gold: list[tuple[str, str]]

    def turns_as_memories(self) -> list[tuple[str, str | None]]:
        """The verbatim reference: every turn stored as it was said, about its speaker."""
        return [(text, speaker) for speaker, text in self.turns]


@dataclass
class Found:
    text: str
    type: str
    about: str | None
    side: str


@dataclass
class Tally:
    memories: list[Found] = field(default_factory=list)
    messages: int = 0
    seen: int = 0
    windows: int = 0


HALVES = {"dev": 0, "held-out": 1}  # by conversation index parity: even = dev, odd = held-out


def load_sessions(
    data_dir: Path,
    *,
    conversations: int | None = None,
    sessions: int | None = None,
    half: str | None = None,
) -> list[Session]:
    """LoCoMo's sessions with their observation facts, from ``data_dir`` (its ``locomo``
    folder, or a LoCoMo JSON file). ``half`` keeps the conversations of one half: "dev"
    (even index, 0-based, the rules are tuned on it) or "held-out" (odd index, never looked at
    while tuning), so a figure can be checked on conversations the rules were not fitted to."""
    path = data_dir if data_dir.is_file() else _find_locomo_json(data_dir / "locomo")
    if path is None:
        path = _find_locomo_json(data_dir)
    if path is None:
        raise ConfigError(
            f"no LoCoMo data under {data_dir}; put locomo10.json in {data_dir / 'locomo'} "
            "(https://github.com/snap-research/locomo) or pass --data"
        )
    samples = json.loads(path.read_text(encoding="utf-8"))
    out: list[Session] = []
    for index, sample in enumerate(samples[:conversations]):
        if half is not None and index % 2 != HALVES[half]:
            continue
        conv = sample["conversation"]
        speakers = (str(conv["speaker_a"]), str(conv["speaker_b"]))
        observed = sample.get("observation") or {}
        numbers = sorted(
            int(m.group(1))
            for key in conv
            if (m := _SESSION.fullmatch(key)) and isinstance(conv[key], list)
        )
        for number in numbers[:sessions]:
            turns = [(str(t["speaker"]), _turn_text(t)) for t in conv[f"session_{number}"]]
            facts = observed.get(f"session_{number}_observation") or {}
            gold = [
                (str(speaker), str(item[0]))
                for speaker, items in facts.items()
                for item in items
                if item and str(item[0]).strip()
            ]
            out.append(Session(f"{sample.get('sample_id')}/s{number}", speakers, turns, gold))
    return out


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = str(turn.get("text", ""))
    caption = turn.get("blip_caption")
    return f"{text}\n[shares a photo: {caption}]" if caption else text


def capture_session(session: Session, extractor: Extractor, config: CaptureConfig) -> Tally:
    """Both sides of a session captured the way ``Memory.capture`` reads a conversation."""
    tally = Tally()
    keys: set[tuple[str | None, str]] = set()
    for side in session.speakers:
        other = next((s for s in session.speakers if s != side), side)
        messages = [
            Message(role="user" if speaker == side else "assistant", content=text, name=speaker)
            for speaker, text in session.turns
        ]
        found, report = extract_windows(lambda: extractor, messages, "normal", config)
        if report.failed:
            raise RuntimeError("; ".join(report.warnings))
        tally.messages += len([m for m in messages if m.content.strip()])
        tally.seen += report.used
        tally.windows += len(report.windows)
        for memory in found:
            about = _about(memory.content, side, other, memory.subject, session.speakers)
            key = (about, " ".join(memory.content.casefold().split()))
            if key not in keys:
                keys.add(key)
                tally.memories.append(Found(memory.content, memory.type, about, side))
    return tally


def _about(
    text: str, side: str, other: str, subject: str | None = None, names: Sequence[str] = ()
) -> str | None:
    """Whom a memory is about: the subject the extractor gave it when that is a speaker,
    else read from its text."""
    if subject in names:
        return subject
    if text.startswith("The user"):
        return side
    if text.startswith("The assistant"):
        return other
    if re.search(r"\b(?:I|me|my|I'm|I've)\b", text):
        return side
    return None


def body(text: str, names: Sequence[str] = ()) -> str:
    """``text`` without its subject: "The user", "The assistant said:", a speaker's name."""
    out = _SUBJECT.sub("", text.strip())
    for name in names:
        out = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", "", out)
    return " ".join(out.split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.casefold()) if w not in _STOP and len(w) > 2}


def source_speaker(memory: str, session: Session) -> str | None:
    """Who said it: the speaker whose turns share the most content words (and word pairs) with
    ``memory``; None when both speakers' best turns share as much (nothing to tell them by)."""
    words = _content_words(body(memory))
    best: dict[str, int] = {}
    for who, text in session.turns:
        shared = len(words & _content_words(text)) + len(_pairs(body(memory)) & _pairs(text))
        best[who] = max(best.get(who, 0), shared)
    ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
    if not ranked or ranked[0][1] == 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


def _pairs(text: str) -> set[tuple[str, str]]:
    found = re.findall(r"[a-z0-9']+", text.casefold())
    return set(itertools.pairwise(found))


# -- junk: the bench's own checks --------------------------------------------------------------
_PLEASANTRY = re.compile(
    r"^(?:thanks|thank you|congrat\w*|wow|awesome|great|good luck|take care|see you|have fun|"
    r"sounds|glad|nice|cool|hey|hi|hello|bye|haha|lol|yay|omg|sure|of course)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(
    r"^(?:it|it's|this|that|that's|these|those|he|she|they|they're|there|here)\b", re.IGNORECASE
)
_VAGUE = re.compile(
    r"\b(?:it|them|(?:this|that|these|those)(?! (?:week|weekend|month|year|morning|evening|"
    r"summer|winter|spring|fall|time|day|night)))\b",
    re.IGNORECASE,
)
_FUNCTION_END = frozenset(
    re.findall(
        r"\S+", "to the a an of and or but for with in on at my your their our about from as than"
    )
)


def junk_reason(text: str) -> str | None:
    """Why a memory is junk by the bench's automatic checks, or None."""
    rest = body(text)
    words = re.findall(r"[\w'-]+", rest)
    if len(words) < 2 or words[-1].casefold() in _FUNCTION_END:
        return "fragment"
    if _PLEASANTRY.match(rest) or _PLEASANTRY.match(text):
        return "pleasantry"
    if _PRONOUN.match(rest):
        return "pronoun subject"
    if len(words) <= 8 and _VAGUE.search(rest):
        return "vague reference"
    if re.search(r"\b(?:you|your|yourself)\b", rest, re.IGNORECASE):
        return "aimed at the listener"
    if re.search(r"\b(?:I|me|my|I'm|I've)\b", rest):
        return "first person"
    return None


# -- scoring ----------------------------------------------------------------------------------
def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def _vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    rows: list[list[float]] = []
    for start in range(0, len(texts), 256):
        rows.extend(embedder.embed(list(texts[start : start + 256])))
    return _unit(np.asarray(rows, dtype=np.float32))


def score(
    session: Session, memories: Sequence[tuple[str, str | None]], embedder: Embedder
) -> tuple[list[bool], list[bool]]:
    """(each gold fact: matched at ≥ 0.7, each memory: backed at ≥ 0.6), speakers respected: a
    memory about a speaker answers only that speaker's facts; one about nobody answers anyone's."""
    if not session.gold or not memories:
        return [False] * len(session.gold), [False] * len(memories)
    gold = _vectors(embedder, [body(f, session.speakers) for _, f in session.gold])
    mine = _vectors(embedder, [body(t, session.speakers) for t, _ in memories])
    cos = gold @ mine.T
    allowed = np.array([[about in (None, who) for _, about in memories] for who, _ in session.gold])
    cos = np.where(allowed, cos, -1.0)
    matched = (cos.max(axis=1) >= RECALL_COSINE).tolist()
    backed = (cos.max(axis=0) >= PRECISION_COSINE).tolist()
    return [bool(x) for x in matched], [bool(x) for x in backed]


def run_extraction(
    data_dir: Path,
    *,
    extractor: str = "rules",
    extractor_options: Mapping[str, object] | None = None,
    embedder: str = "local",
    conversations: int | None = None,
    sessions: int | None = None,
    cache: Path | None = None,
    examples: int = 8,
    half: str | None = None,
    sample: int = 0,
    seed: int = 36,
) -> dict[str, Any]:
    """Capture every LoCoMo session with ``extractor`` and measure it (module docstring)."""
    registry = build_registry(get_plugin_manager())
    entry = registry.get("extractor", extractor)
    built: Extractor = entry.build(entry.options.model_validate(dict(extractor_options or {})))
    vectors = CachedEmbedder(
        build_embedder(registry, embedder), EmbeddingCache(cache) if cache else None
    )
    config = CaptureConfig()
    all_sessions = load_sessions(
        data_dir, conversations=conversations, sessions=sessions, half=half
    )
    gold = matched = backed = verbatim_matched = verbatim_backed = turns = 0
    seen = messages = windows = wrong = 0
    junk: Counter[str] = Counter()
    types: Counter[str] = Counter()
    memories: list[Found] = []
    backed_by_type: Counter[str] = Counter()
    shown: dict[str, list[str]] = {"junk": [], "wrong speaker": [], "not backed": []}
    for session in all_sessions:
        tally = capture_session(session, built, config)
        seen, messages = seen + tally.seen, messages + tally.messages
        windows += tally.windows
        memories.extend(tally.memories)
        gold += len(session.gold)
        turns += len(session.turns)
        hit, good = score(session, [(m.text, m.about) for m in tally.memories], vectors)
        matched, backed = matched + sum(hit), backed + sum(good)
        v_hit, v_good = score(session, session.turns_as_memories(), vectors)
        verbatim_matched += sum(v_hit)
        verbatim_backed += sum(v_good)
        for m, ok in zip(tally.memories, good, strict=True):
            types[m.type] += 1
            backed_by_type[m.type] += ok
            if not ok:
                _keep(shown["not backed"], m.text, examples)
            reason = junk_reason(m.text)
            if reason:
                junk[reason] += 1
                _keep(shown["junk"], f"{m.text} ({reason})", examples)
            said_by = source_speaker(m.text, session) if m.about else None
            if m.about and said_by and said_by != m.about:
                wrong += 1
                _keep(shown["wrong speaker"], f"{m.text} (said by {said_by})", examples)
    if vectors.cache is not None:
        vectors.cache.close()
    count = len(memories)
    result: dict[str, Any] = {
        "extractor": extractor,
        "embedder": embedder,
        "half": half or "all",
        "matched": matched,
        "sessions": len(all_sessions),
        "gold_facts": gold,
        "turns": turns,
        "memories": count,
        "types": dict(types.most_common()),
        "windows": windows,
        "seen": seen / messages if messages else 0.0,
        "recall": matched / gold if gold else 0.0,
        "precision": backed / count if count else 0.0,
        "precision_by_type": {t: backed_by_type[t] / n for t, n in types.most_common()},
        "verbatim": {
            "memories": turns,
            "recall": verbatim_matched / gold if gold else 0.0,
            "precision": verbatim_backed / turns if turns else 0.0,
        },
        "wrong_speaker": wrong,
        "junk": sum(junk.values()) / count if count else 0.0,
        "junk_by_check": dict(junk.most_common()),
        "targets": TARGETS,
        "examples": shown,
        "sample": _sample(memories, sample, seed),
    }
    result["met"] = {
        "seen": result["seen"] >= TARGETS["seen"],
        "wrong_speaker": wrong <= TARGETS["wrong_speaker"],
        "junk": result["junk"] <= TARGETS["junk"],
        "precision": result["precision"] >= TARGETS["precision"],
        "recall": result["recall"] >= TARGETS["recall"],
    }
    return result


def _sample(memories: Sequence[Found], size: int, seed: int) -> list[dict[str, str | None]]:
    """``size`` memories drawn at random (``seed``: a new one gives a reader a fresh, blind
    draw) for a reader to judge by eye."""
    import random

    chosen = random.Random(seed).sample(list(memories), min(size, len(memories)))
    return [{"text": m.text, "about": m.about, "junk": junk_reason(m.text)} for m in chosen]


def _keep(bucket: list[str], text: str, limit: int) -> None:
    if len(bucket) < limit:
        bucket.append(text)


def render_extraction(result: Mapping[str, Any]) -> str:
    """The figures as a markdown section."""
    if result.get("skipped"):
        return f"### Extraction on LoCoMo ({result.get('extractor')})\n\n{result['skipped']}\n"
    met = result["met"]

    def mark(key: str) -> str:
        return "met" if met[key] else "**not met**"

    verbatim = result["verbatim"]
    lines = [
        f"### Extraction on LoCoMo ({result['extractor']}, {result['embedder']} embedder)",
        "",
        f"{result['sessions']} sessions, {result['turns']} turns, {result['gold_facts']} gold "
        f"observation facts; {result['memories']} memories in {result['windows']} windows "
        f"({', '.join(f'{k} {v}' for k, v in result['types'].items()) or 'none'}).",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| messages seen | {result['seen']:.1%} | 100% | {mark('seen')} |",
        f"| wrong-speaker memories | {result['wrong_speaker']} | 0 | {mark('wrong_speaker')} |",
        f"| junk (automatic checks) | {result['junk']:.1%} | ≤ 10% | {mark('junk')} |",
        f"| precision (backed at cos ≥ {PRECISION_COSINE}) | {result['precision']:.3f} | ≥ 0.5 "
        f"| {mark('precision')} |",
        f"| recall (cos ≥ {RECALL_COSINE}) | {result['recall']:.3f} | ≥ 0.10 | {mark('recall')} |",
        f"| verbatim turns: recall / precision | {verbatim['recall']:.3f} / "
        f"{verbatim['precision']:.3f} | reference | |",
        "",
    ]
    by_type = result.get("precision_by_type") or {}
    if by_type:
        lines += [
            "Precision by type: " + ", ".join(f"{t} {v:.2f}" for t, v in by_type.items()) + ".",
            "",
        ]
    if result["junk_by_check"]:
        checks = ", ".join(f"{k} {v}" for k, v in result["junk_by_check"].items())
        lines += [f"Junk by check: {checks}.", ""]
    for label, items in result["examples"].items():
        if items:
            lines += [f"Examples ({label}):", "", *[f"- {item}" for item in items], ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m engram_bench.memory.extraction``: the figures for ``rules`` (and ``llm``
    when ``--llm-base-url`` names an OpenAI-compatible endpoint)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--llm-base-url", default=None)
    parser.add_argument("--llm-model", default="gpt-4o-mini")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--half", choices=sorted(HALVES), default=None)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=36, help="the draw of --sample")
    args = parser.parse_args(argv)
    runs: list[tuple[str, dict[str, object]]] = [("rules", {})]
    if args.llm_base_url:
        provider = {"base_url": args.llm_base_url, "model": args.llm_model}
        runs.append(("llm", {"providers": [provider]}))
    try:
        results = [
            run_extraction(
                args.data,
                extractor=name,
                extractor_options=options,
                embedder=args.embedder,
                conversations=args.conversations,
                sessions=args.sessions,
                cache=args.cache,
                half=args.half,
                sample=args.sample,
                seed=args.seed,
            )
            for name, options in runs
        ]
    except ConfigError as exc:
        print(f"error: {exc}")
        return 2
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("\n".join(render_extraction(r) for r in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
