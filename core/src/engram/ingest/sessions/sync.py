"""Incremental indexing of agent sessions: one document per session, re-indexed when it grew.

The document record keeps the session's fingerprint (sizes and mtimes of its files), so an
unchanged session is skipped without being read. Sessions are written by the vault's engine
(``engram.ingest.engine``): the same batches, keyword-only fallback and crash-safe order. A
session that cannot be read is skipped with a reason; nothing else stops the run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.chunking import Chunker, TokenWindowChunker, chunk_id
from engram.config import EngramConfig
from engram.errors import ConfigError, EngramError
from engram.ingest.engine import DocumentWriter, Pending, remove_documents
from engram.ingest.report import IndexReport, Progress, Skipped
from engram.ingest.sessions import registry
from engram.ingest.sessions.base import SessionHost, SessionRef, SessionSource, Transcript
from engram.models import Chunk, Document, Excerpt
from engram.protocols import Embedder, Store
from engram.text.redact import strip_private

SOURCE = "sessions"


def session_sources(config: EngramConfig) -> list[SessionSource]:
    """The transcript folders ``[sessions]`` asks for: each host ``agents`` names (every host
    the registry knows when unset), in the folder ``dirs`` gives it or the host's own."""
    cfg = config.sessions
    project = config.root.resolve() if cfg.scope == "project" else None
    unknown = sorted({*(cfg.agents or []), *cfg.dirs} - set(registry.names()))
    if unknown:
        raise ConfigError(
            f"[sessions] names {', '.join(map(repr, unknown))}, which engram does not know; "
            f"its hosts are {', '.join(registry.names())}"
        )
    sources: list[SessionSource] = []
    for name in registry.names() if cfg.agents is None else cfg.agents:
        host: SessionHost = registry.load(name)
        folder = cfg.dirs.get(name)
        root = config.resolve(folder) if folder else host.sessions_dir()
        sources.append(host.session_source(root, project))
    return sources


def session_chunker(config: EngramConfig) -> Chunker:
    """Turns are plain text: token windows of the configured size."""
    return TokenWindowChunker(config.chunking.max_tokens, config.chunking.overlap)


def index_sessions(
    config: EngramConfig, store: Store, embedder: Embedder, *, progress: Progress | None = None
) -> IndexReport:
    """Index every configured agent's sessions into ``store`` (the caller checked that the
    store's identity matches ``embedder``: indexing knows nothing of the memory that asks)."""
    return sync_sessions(
        session_sources(config), store, embedder, session_chunker(config), progress=progress
    )


def sync_sessions(
    sources: Sequence[SessionSource],
    store: Store,
    embedder: Embedder,
    chunker: Chunker,
    *,
    progress: Progress | None = None,
) -> IndexReport:
    """Bring the store's session documents in line with what the sources hold."""
    started = time.perf_counter()
    report = IndexReport()
    known = {
        doc_id: doc
        for doc_id, doc in store.list_documents().items()
        if doc.metadata.get("source") == SOURCE
    }
    for source in sources:
        if not source.root.exists():
            report.warnings.append(
                f"{source.agent}: no transcripts at {source.root} (set [sessions] "
                f'dirs = {{{source.agent} = "..."}})'
            )
            continue
        refs, warnings = source.discover()
        report.warnings.extend(warnings)
        seen: set[str] = set()
        writer = DocumentWriter(store, embedder, report, "sessions")
        for done, ref in enumerate(refs, 1):
            if progress:
                progress(done, len(refs), ref.document_id)
            seen.add(ref.document_id)
            old = known.get(ref.document_id)
            if old is not None and old.hash == ref.fingerprint:
                report.unchanged += 1
                continue
            try:
                transcript = source.load(ref)
            except (OSError, EngramError) as exc:
                report.skipped.append(Skipped(path=ref.document_id, reason=str(exc)))
                continue
            report.warnings.extend(transcript.warnings)
            if old is None:
                report.new += 1
            else:
                report.changed += 1
            chunks = transcript_chunks(ref, transcript, chunker)
            writer.add(
                Pending(ref.document_id, ref.fingerprint, chunks, old, _record(ref, transcript))
            )
        writer.flush()
        removed = [
            d
            for d, doc in known.items()
            if doc.metadata.get("agent") == source.agent and d not in seen
        ]
        remove_documents(store, known, removed, report)
    report.seconds = time.perf_counter() - started
    return report


def transcript_chunks(ref: SessionRef, transcript: Transcript, chunker: Chunker) -> list[Chunk]:
    """Chunks of a session's turns; each keeps session id, role, turn number and timestamp.

    ``start_line`` / ``end_line`` hold the turn number, so ``memory_get`` can show the turns
    around a hit the way it shows lines of a file.
    """
    doc_id = ref.document_id
    seen: dict[str, int] = {}
    chunks: list[Chunk] = []
    for number, turn in enumerate(transcript.turns, 1):
        text = strip_private(turn.text)
        if not text.strip():
            continue
        for span in chunker.chunk(text):
            occurrence = seen.get(span.text, 0)
            seen[span.text] = occurrence + 1
            metadata: dict[str, Any] = {
                "source": SOURCE,
                "agent": ref.agent,
                "session_id": ref.session_id,
                "role": turn.role,
                "turn": number,
                "part": span.index,
                "path": doc_id,
                "start_line": number,
                "end_line": number,
            }
            optional = {
                "timestamp": turn.timestamp,
                "message_id": turn.message_id,
                "title": transcript.title,
                "project": transcript.project,
            }
            metadata.update({k: strip_private(v) for k, v in optional.items() if v is not None})
            chunks.append(
                Chunk(
                    id=chunk_id(doc_id, span.text, occurrence),
                    document_id=doc_id,
                    document_hash=ref.fingerprint,
                    text=span.text,
                    metadata=metadata,
                )
            )
    return chunks


def _record(ref: SessionRef, transcript: Transcript) -> dict[str, Any]:
    """A session's record: which agent and session, and where its transcript lives."""
    metadata: dict[str, Any] = {
        "source": SOURCE,
        "agent": ref.agent,
        "session_id": ref.session_id,
        # Where the transcript lives. Deliberately not "root": vault roots are readable by
        # memory_get, raw transcripts (private spans and all) must not be.
        "transcript": ref.path.as_posix(),
        "turns": len(transcript.turns),
    }
    if transcript.title:
        metadata["title"] = strip_private(transcript.title)
    return metadata


def session_document(store: Store, doc_id: str) -> Document | None:
    """The record of the indexed session ``doc_id`` names (``sessions/<agent>/<id>``), or None
    when it names none."""
    doc = store.list_documents().get(doc_id) if doc_id.startswith("sessions/") else None
    return doc if doc is not None and doc.metadata.get("source") == SOURCE else None


def session_excerpt(doc: Document, config: EngramConfig, turns: tuple[int, int] | None) -> Excerpt:
    """Turns of an indexed session, read again from its transcript (private spans removed).

    The transcript location comes from the store's own record (``doc``), never from the caller.
    """
    doc_id = doc.id
    agent = doc.metadata.get("agent")
    location = doc.metadata.get("transcript")
    session_id = doc.metadata.get("session_id")
    source = next((s for s in session_sources(config) if s.agent == agent), None)
    if source is None or not isinstance(location, str) or not isinstance(session_id, str):
        raise ConfigError(
            f"{doc_id} comes from {agent!r} sessions, which [sessions] agents no longer lists; "
            "add it back to read this session"
        )
    transcript = source.load(SessionRef(source.agent, session_id, Path(location), doc.hash))
    rendered = [
        f"[{n}] {t.role}{f' ({t.timestamp})' if t.timestamp else ''}: {strip_private(t.text)}"
        for n, t in enumerate(transcript.turns, 1)
    ]
    total = len(rendered)
    start, end = turns or (1, max(total, 1))
    if start < 1 or end < start:
        raise ConfigError(f"turn range {start}:{end} is invalid; use 1 <= START <= END")
    return Excerpt(
        path=doc_id,
        start_line=start,
        end_line=min(end, total),
        total_lines=total,
        text="\n\n".join(rendered[start - 1 : end]),
    )
