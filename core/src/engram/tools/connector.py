"""``search`` and ``fetch``: the pair of tools ChatGPT's connectors (and deep research) call,
with the shapes OpenAI documents for them.

- ``search`` takes one ``query`` string and answers ``{"results": [{"id", "title", "url"}]}``;
- ``fetch`` takes one ``id`` from those results and answers ``{"id", "title", "text", "url",
  "metadata"}``.

Both answer with exactly one text content item holding that JSON (what the connector reads) and
the same object as structured content. An id is a memory's id when the hit is a stored memory,
else the path search shows (a vault note, a session). The url is the MCP resource the same
memory is served as (``engram://memory/ID``, ``engram://file/PATH``): engram has no web pages.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from engram.memories import agent as memories
from engram.memories.files import MEMORY_ID, read_body, read_info
from engram.memory import Memory
from engram.text.redact import strip_private
from engram.tools.get import MemoryGetInput
from engram.tools.get import get as get_excerpt

MEMORY_URI = "engram://memory/"
FILE_URI = "engram://file/"
SEARCH_LIMIT = 10


def memory_uri(memory_id: str) -> str:
    return MEMORY_URI + memory_id


def file_uri(path: str) -> str:
    return FILE_URI + path


class SearchInput(BaseModel):
    """Search this user's memory (stored memories, notes, past sessions) for a query; returns
    ids, titles and urls. Read one in full with fetch."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="What to look for, in words.")


class SearchResultItem(BaseModel):
    id: str
    title: str
    url: str


class ConnectorSearchOutput(BaseModel):
    results: list[SearchResultItem]


class FetchInput(BaseModel):
    """Read one search result in full, by the id search returned."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=1000, description="An id from search results.")


class FetchOutput(BaseModel):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, str] = Field(default_factory=dict)


def search(memory: Memory, args: SearchInput) -> ConnectorSearchOutput:
    result = memory.search(args.query, limit=SEARCH_LIMIT, per_document=True)
    items: list[SearchResultItem] = []
    seen: set[str] = set()
    for hit in result.hits:
        meta = hit.chunk.metadata
        path = hit.chunk.document_id
        memory_id = meta.get("id")
        if isinstance(memory_id, str) and MEMORY_ID.match(memory_id):
            ref, url = memory_id, memory_uri(memory_id)
        else:
            ref, url = path, file_uri(path)
        if ref in seen:
            continue
        seen.add(ref)
        title = meta.get("title")
        items.append(
            SearchResultItem(id=ref, title=title if isinstance(title, str) else path, url=url)
        )
    return ConnectorSearchOutput(results=items)


def fetch(memory: Memory, args: FetchInput) -> FetchOutput:
    if MEMORY_ID.match(args.id):
        path = memories.find(memory.writer, args.id)[0]
        info = read_info(path, memory.config.root)
        metadata = {
            k: str(v)
            for k, v in {
                "path": info.path,
                "type": info.type,
                "scope": info.scope,
                "tags": ", ".join(info.tags) or None,
                "created_at": info.created_at,
                "updated_at": info.updated_at,
                "status": info.status,
            }.items()
            if v
        }
        return FetchOutput(
            id=args.id,
            title=info.title,
            text=strip_private(read_body(path)).strip(),
            url=memory_uri(args.id),
            metadata=metadata,
        )
    excerpt = get_excerpt(memory, MemoryGetInput(path=args.id))
    return FetchOutput(
        id=args.id,
        title=args.id,
        text=excerpt.text,
        url=file_uri(args.id),
        metadata={"path": args.id, "lines": str(excerpt.total_lines)},
    )


def render_json(out: BaseModel) -> str:
    """The one text item the connector reads: the result as JSON."""
    return json.dumps(out.model_dump(mode="json"), ensure_ascii=False)
