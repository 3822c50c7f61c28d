"""The markdown file of a collection document, and the chunk fields derived from it.

A collection document is a file ``<collections dir>/<collection>/<slug>-<hash>.md``::

    ---
    engram_collection: langchain
    engram_id: 4f0c…            # the caller's id, any string
    metadata:                   # the caller's metadata, exactly as given
      source: handbook.pdf
      page: 3
    ---
    The text, exactly as given.

The file name is derived from the id alone (a readable slug plus a hash of the id), so a
document is found without an index and two ids never share a file, even on a case-insensitive
file system. Indexing gives its chunks ``collection``, ``collection_id`` and one ``meta_<key>``
field per filterable metadata key, so a filter on the caller's keys never meets engram's own
fields (``path``, ``title``, ``source``…).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory
from engram.filters import FIELD_PATTERN
from engram.text.redact import strip_private

COLLECTION_KEY = "engram_collection"
ID_KEY = "engram_id"
METADATA_KEY = "metadata"
# Chunk fields: which collection, which document, and the caller's keys under a prefix.
COLLECTION_FIELD = "collection"
ID_FIELD = "collection_id"
META_PREFIX = "meta_"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_ID_LENGTH = 1024
_FIELD = re.compile(FIELD_PATTERN)
_SLUG_LENGTH = 40
# Longer strings are kept in the file but not copied into every chunk as a filter field
# (LlamaIndex keeps a node's JSON, kilobytes, in its metadata; nobody filters on that).
MAX_FILTER_STRING = 512


_PRIVATE_TAG = re.compile(r"<\s*/?\s*private\s*>", re.IGNORECASE)


def check_name(name: str) -> str:
    """A collection name is a folder name: letters, digits, ``_`` and ``-``."""
    if not NAME_PATTERN.match(name):
        raise InvalidMemory(
            f"collection name {name!r} is not allowed; use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def check_id(document_id: str) -> str:
    """A document id as every collection call takes it: UTF-8 text without a ``<private>``
    tag. An id is stored in the file's name and frontmatter and in the index, so private text
    cannot be part of one (it is refused, not stripped: two ids differing only in a private
    span would become one, and the second would overwrite the first)."""
    if not isinstance(document_id, str):
        raise InvalidMemory(f"a document id is text, got {type(document_id).__name__}")
    _check_encodable(strip_private(document_id)[:80], [document_id])
    if _PRIVATE_TAG.search(document_id):
        raise InvalidMemory(
            f"document id {strip_private(document_id)[:80]!r} holds a <private> tag; ids are "
            "stored in file names, frontmatter and the index, so they cannot hold private "
            "text: use an id without it"
        )
    return document_id


def check_text(what: str, text: str) -> str:
    """A query or other text given to a collection: UTF-8 text (a clear error otherwise)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidMemory(
            f"the {what} holds a lone surrogate character, which UTF-8 cannot store; decode "
            "the text properly first"
        ) from None
    return text


def file_name(document_id: str) -> str:
    """``<readable slug>-<hash of the id>.md``: stable, portable and unique per id."""
    ascii_id = unicodedata.normalize("NFKD", document_id).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", ascii_id).strip("-_")[:_SLUG_LENGTH].strip("-_")
    digest = hashlib.sha256(document_id.encode("utf-8")).hexdigest()[:16]
    return f"{slug or 'doc'}-{digest}.md"


def render(collection: str, document_id: str, text: str, metadata: dict[str, Any]) -> str:
    """The file for one document; raises ``InvalidMemory`` when it would not read back exactly
    (an id or metadata that is not JSON-like, or metadata past the frontmatter reader's
    budget), so ``get`` always returns what ``add`` was given."""
    _check_document(document_id, metadata)
    _check_encodable(document_id, [document_id, text, *_keys(metadata), *_values(metadata)])
    if "\x00" in text:
        raise InvalidMemory(
            f"document {document_id[:80]!r}: its text holds NUL characters, which a markdown "
            "file cannot; remove them (binary content does not belong in a text collection)"
        )
    header = {COLLECTION_KEY: collection, ID_KEY: document_id, METADATA_KEY: metadata}
    # Escaped, not raw, non-ASCII: YAML reads some characters (NEL, LS, PS) as line breaks.
    dumped = yaml.safe_dump(header, sort_keys=False, allow_unicode=False, width=10_000)
    content = f"---\n{dumped}---\n{text}"
    back = parse(content)
    if back is None or back != (collection, document_id, text, metadata):
        raise InvalidMemory(
            f"document {document_id[:80]!r}: its metadata does not survive being stored as "
            "YAML frontmatter (too large or too deeply nested); flatten it or store less"
        )
    return content


def parse(content: str) -> tuple[str, str, str, dict[str, Any]] | None:
    """(collection, id, text, metadata) of a collection file, or None when it is not one."""
    fm = read_frontmatter(content)
    meta = fm.metadata
    collection, document_id = meta.get(COLLECTION_KEY), meta.get(ID_KEY)
    metadata = meta.get(METADATA_KEY, {})
    if not (isinstance(collection, str) and isinstance(document_id, str)):
        return None
    if not isinstance(metadata, dict):
        return None
    return collection, document_id, fm.body, metadata


def read(path: Path) -> tuple[str, str, str, dict[str, Any]] | None:
    """``parse`` of a file on disk; None when it is missing or not a collection file."""
    try:
        content = path.read_bytes().decode("utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return parse(content)


def clean_metadata(value: Any) -> Any:
    """``value`` with ``<private>`` spans removed from every string in it (keys included)."""
    if isinstance(value, str):
        return strip_private(value)
    if isinstance(value, dict):
        return {strip_private(str(k)): clean_metadata(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_metadata(v) for v in value]
    return value


def chunk_fields(frontmatter: dict[str, Any]) -> dict[str, Any]:
    """The metadata every chunk of a file carries: its frontmatter, except that a collection
    file's nested ``metadata`` becomes ``collection``, ``collection_id`` and ``meta_<key>`` for
    each key a filter can name (a scalar, or a list of scalars, under a key matching
    ``FIELD_PATTERN``; strings up to ``MAX_FILTER_STRING`` characters)."""
    collection, document_id = frontmatter.get(COLLECTION_KEY), frontmatter.get(ID_KEY)
    if not (isinstance(collection, str) and isinstance(document_id, str)):
        return dict(frontmatter)
    fields = {k: v for k, v in frontmatter.items() if k != METADATA_KEY}
    fields.update({COLLECTION_FIELD: collection, ID_FIELD: document_id})
    metadata = frontmatter.get(METADATA_KEY)
    if isinstance(metadata, dict):
        for key, value in metadata.items():
            if filterable(key) and _flat(value):
                fields[META_PREFIX + key] = value
    return fields


def filterable(key: object) -> bool:
    """Whether a metadata key can be named in a filter (the field name rules of filters)."""
    return isinstance(key, str) and len(key) <= 120 and bool(_FIELD.match(key))


def _flat(value: object) -> bool:
    if isinstance(value, list):
        return all(_scalar(v) for v in value)
    return _scalar(value)


def _scalar(value: object) -> bool:
    if isinstance(value, str):
        return len(value) <= MAX_FILTER_STRING
    return isinstance(value, int | float | bool | type(None))


def _check_document(document_id: str, metadata: dict[str, Any]) -> None:
    if not isinstance(document_id, str) or not document_id or len(document_id) > MAX_ID_LENGTH:
        raise InvalidMemory(
            f"a collection document id must be a non-empty string of at most {MAX_ID_LENGTH} "
            f"characters, got {str(document_id)[:80]!r}"
        )
    try:
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidMemory(
            f"document {document_id[:80]!r}: metadata must be JSON values (strings, numbers, "
            f"booleans, null, lists, string-keyed objects; no NaN): {exc}"
        ) from None
    if any(not isinstance(k, str) for k in _keys(metadata)):
        raise InvalidMemory(f"document {document_id[:80]!r}: metadata keys must be strings")
    if any(isinstance(v, float) and not math.isfinite(v) for v in _values(metadata)):
        raise InvalidMemory(f"document {document_id[:80]!r}: metadata numbers must be finite")


def _check_encodable(document_id: str, strings: list[object]) -> None:
    """Lone surrogates (``"\\ud800"``) cannot be written as UTF-8: refuse them before any file
    is written, not halfway through."""
    for value in strings:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidMemory(
                    f"document {document_id[:80]!r}: {value[:40]!r} holds a lone surrogate "
                    "character, which UTF-8 cannot store; decode the text properly first"
                ) from None


def _keys(value: Any) -> list[object]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


def _values(value: Any) -> list[object]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list):
        return [v for item in value for v in _values(item)]
    return [value]
