"""Incremental indexing of agent sessions: one document per session, re-indexed when it grew.

The document record keeps the session's fingerprint (sizes and mtimes of its files), so an
unchanged session is skipped without being read. Write order is the vault's: chunks, then stale
chunks deleted, then the record, so a crash only means "index that session again". A session
that cannot be read is skipped with a reason; nothing else stops the run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.chunking import Chunker, TokenWindowChunker, chunk_id
from engram.config import EngramConfig
from engram.errors import ConfigError, EngramError
from engram.ingest.sessions import claude_code, opencode
from engram.ingest.sessions.base import SessionRef, SessionSource, Transcript
from engram.ingest.sync import EMBED_BATCH, IndexReport, Progress, Skipped
from engram.memory_files import MemoryNotFound
from engram.models import Chunk, Document
from engram.protocols import Embedder, Store
from engram.redact import strip_private

if TYPE_CHECKING:
    from engram.memory import Excerpt, Memory

SOURCE = "sessions"


def session_sources(config: EngramConfig) -> list[SessionSource]:
    """The transcript folders ``[sessions]`` asks for (agent defaults when unset)."""
    cfg = config.sessions
    sources: list[SessionSource] = []
    for agent in cfg.agents:
        if agent == "opencode":
            root = config.resolve(cfg.opencode_dir) if cfg.opencode_dir else opencode.default_root()
            sources.append(opencode.OpenCodeSource(root))
        else:
            root = config.resolve(cfg.claude_dir) if cfg.claude_dir else claude_code.default_root()
            sources.append(claude_code.ClaudeCodeSource(root))
    return sources


def session_chunker(config: EngramConfig) -> Chunker:
    """Turns are plain text: token windows of the configured size."""
    return TokenWindowChunker(config.chunking.max_tokens, config.chunking.overlap)


def index_sessions(memory: Memory, *, progress: Progress | None = None) -> IndexReport:
    """Index every configured agent's sessions into ``memory``'s store."""
    memory.check_identity(writing=True)
    return sync_sessions(
        session_sources(memory.config),
        memory.store,
        memory.embedder,
        session_chunker(memory.config),
        progress=progress,
    )


@dataclass
class _Pending:
    ref: SessionRef
    transcript: Transcript
    chunks: list[Chunk]
    old: Document | None


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
        if not source.root.is_dir():
            report.warnings.append(
                f"{source.agent}: no transcripts at {source.root} (set [sessions] "
                f"{'opencode_dir' if source.agent == 'opencode' else 'claude_dir'})"
            )
            continue
        refs, warnings = source.discover()
        report.warnings.extend(warnings)
        seen: set[str] = set()
        batch: list[_Pending] = []
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
            batch.append(
                _Pending(ref, transcript, transcript_chunks(ref, transcript, chunker), old)
            )
            if sum(len(p.chunks) for p in batch) >= EMBED_BATCH:
                _flush(batch, store, embedder, report)
                batch = []
        if batch:
            _flush(batch, store, embedder, report)
        removed = sorted(
            d
            for d, doc in known.items()
            if doc.metadata.get("agent") == source.agent and d not in seen
        )
        if removed:
            report.removed += len(removed)
            report.chunks_deleted += sum(len(_chunk_ids(known[d])) for d in removed)
            store.delete_documents(removed)
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


def _flush(batch: list[_Pending], store: Store, embedder: Embedder, report: IndexReport) -> None:
    texts = [c.text for p in batch for c in p.chunks]
    vectors: list[list[float]] | None
    try:
        vectors = embedder.embed(texts, input_type="document") if texts else []
    except Exception as exc:  # someone else's code, maybe over a network: keep the run going
        vectors = None
        report.warnings.append(
            f"embedder failed ({type(exc).__name__}: {exc}); {len(batch)} sessions stored for "
            "keyword search only"
        )
    if vectors is not None:
        report.texts_embedded += len(texts)
    offset = 0
    for pending in batch:
        chunks = pending.chunks
        if vectors is not None:
            chunks = [
                c.model_copy(update={"vector": v})
                for c, v in zip(chunks, vectors[offset : offset + len(chunks)], strict=True)
            ]
        offset += len(pending.chunks)
        _write(pending, chunks, store, report, complete=vectors is not None)


def _write(
    pending: _Pending, chunks: list[Chunk], store: Store, report: IndexReport, *, complete: bool
) -> None:
    keep = {c.id for c in chunks}
    if chunks:
        store.upsert(chunks)
    stale = [i for i in _chunk_ids(pending.old) if i not in keep]
    if stale:
        store.delete(stale)
    report.chunks_written += len(chunks)
    report.chunks_deleted += len(stale)
    if not chunks:
        report.empty += 1
    if not complete:
        report.pending_embeddings += 1
    ref, transcript = pending.ref, pending.transcript
    metadata: dict[str, Any] = {
        "source": SOURCE,
        "agent": ref.agent,
        "session_id": ref.session_id,
        # Where the transcript lives. Deliberately not "root": vault roots are readable by
        # memory_get, raw transcripts (private spans and all) must not be.
        "transcript": ref.path.as_posix(),
        "turns": len(transcript.turns),
        "chunk_ids": [c.id for c in chunks],
        "indexed_at": time.time(),
    }
    if transcript.title:
        metadata["title"] = transcript.title
    store.put_document(
        Document(
            id=ref.document_id,
            hash=ref.fingerprint if complete else "",
            metadata=metadata,
        )
    )


def _chunk_ids(doc: Document | None) -> list[str]:
    if doc is None:
        return []
    ids = doc.metadata.get("chunk_ids")
    return [str(i) for i in ids] if isinstance(ids, list) else []


def merge_reports(into: IndexReport, other: IndexReport) -> IndexReport:
    """Add ``other``'s counts, skips and warnings to ``into`` (a rebuild runs both sources)."""
    for name in (
        "new",
        "changed",
        "unchanged",
        "removed",
        "empty",
        "chunks_written",
        "chunks_deleted",
        "texts_embedded",
        "pending_embeddings",
    ):
        setattr(into, name, getattr(into, name) + getattr(other, name))
    into.skipped.extend(other.skipped)
    into.warnings.extend(other.warnings)
    into.seconds += other.seconds
    return into


def session_excerpt(memory: Memory, doc_id: str, turns: tuple[int, int] | None) -> Excerpt:
    """Turns of an indexed session, read again from its transcript (private spans removed).

    The transcript location comes from the store's own record, never from the caller.
    """
    from engram.memory import Excerpt

    doc = memory.store.list_documents().get(doc_id)
    if doc is None or doc.metadata.get("source") != SOURCE:
        raise MemoryNotFound(f"{doc_id} is not an indexed session; use a path from search results")
    agent = doc.metadata.get("agent")
    location = doc.metadata.get("transcript")
    session_id = doc.metadata.get("session_id")
    source = next((s for s in session_sources(memory.config) if s.agent == agent), None)
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
