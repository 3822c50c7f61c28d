"""Chunks, documents and the identity as Chroma records, and back, without losing a type.

Chroma metadata holds only non-empty flat values (str, int, float, bool, homogeneous lists), so
each record keeps the chunk's whole metadata as one JSON string (``engram:json``, the only thing
read back) plus typed copies that Chroma's ``where`` can filter on (see ``where.py``):

- a scalar (str, number, bool) under its own key, when the key is a valid filter field name;
  numbers as floats (see ``number``);
- a string that is an ISO date or datetime also as microseconds since the epoch (UTC) under
  ``engram:date:<key>``, so date ranges compare instants, not text;
- the strings, numbers (as floats) and booleans of a list under ``engram:list:s|n|b:<key>``, so
  ``Contains`` is an array lookup.

None, nested objects and empty lists live in the JSON only. Engram's own fields sit under the
``engram:`` prefix, which no filter field name can take (a colon is not allowed in one).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from engram import FIELD_PATTERN, Document, IndexIdentity, Metadata, StoreError, parse_iso

JSON_KEY = "engram:json"
DOCUMENT_KEY = "engram:document"
HASH_KEY = "engram:hash"
VECTOR_KEY = "engram:vector"  # True when the chunk has a vector of its own (not a placeholder)
NORM_KEY = "engram:norm"  # the length of the vector, which Chroma is given scaled to length 1
STAMP_KEY = "engram:stamp"  # the write (change-log stamp) that last wrote this record
KIND_KEY = "engram:kind"
ID_KEY = "engram:id"
IDENTITY_KEY = "engram:identity"

IDENTITY_ID = "identity"
DOCUMENT_PREFIX = "doc:"
DOCUMENT_KIND = "document"

_FIELD = re.compile(FIELD_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def date_key(field: str) -> str:
    return f"engram:date:{field}"


def list_key(field: str, kind: str) -> str:
    """``kind`` is ``s`` (strings), ``n`` (numbers, as floats) or ``b`` (booleans)."""
    return f"engram:list:{kind}:{field}"


def to_json(metadata: Metadata, owner: str) -> str:
    """Metadata as strict JSON; NaN and infinities are refused because JSON cannot hold them."""
    try:
        return json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        raise StoreError(
            f"the metadata of {owner} cannot be stored as JSON ({exc}); replace NaN or infinite "
            "numbers with null or a string"
        ) from None


class Unreadable(ValueError):
    """A record engram wrote can no longer be read (its metadata gone or garbage): the
    collection is damaged, which ``connection.chroma_errors`` reports as such."""


def from_json(record: Mapping[str, Any] | None) -> Metadata:
    """The metadata a chunk or document record carries (every record engram writes has it)."""
    if not record or not isinstance(record.get(JSON_KEY), str):
        raise Unreadable("a record has lost the metadata engram wrote")
    try:
        value = json.loads(record[JSON_KEY])
    except ValueError:
        raise Unreadable("a record's metadata is not JSON") from None
    if not isinstance(value, dict):
        raise Unreadable("a record's metadata is not a JSON object")
    return value


def micros(moment: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch: exact, and ordered like time."""
    return (moment - _EPOCH) // _MICROSECOND


def number(value: int | float) -> float:
    """A number as its filter copy: always a float. Chroma compares an int-valued field with a
    float operand by truncating the operand (``$eq 0.1`` matches ``0``), but float fields
    compare exactly with int and float operands alike. Integers beyond float range are clamped
    to the largest finite float, so ranges with ordinary bounds still see them on the right
    side (and equality with them is never claimed exact, see ``where.py``)."""
    try:
        return float(value)
    except OverflowError:
        return sys.float_info.max if value > 0 else -sys.float_info.max


def shadows(metadata: Metadata) -> dict[str, Any]:
    """The typed copies of ``metadata`` that Chroma filters on (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if not _FIELD.match(key):
            continue
        if isinstance(value, bool | str):
            out[key] = value
            if isinstance(value, str) and (moment := parse_iso(value)) is not None:
                out[date_key(key)] = micros(moment)
        elif isinstance(value, int | float):
            out[key] = number(value)
        elif isinstance(value, list):
            strings = [v for v in value if isinstance(v, str)]
            flags = [v for v in value if isinstance(v, bool)]
            numbers = [
                number(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool)
            ]
            for kind, items in (("s", strings), ("n", numbers), ("b", flags)):
                if items:
                    out[list_key(key, kind)] = items
    return out


def chunk_metadata(
    metadata: Metadata,
    *,
    owner: str,
    document_id: str,
    document_hash: str,
    has_vector: bool,
) -> dict[str, Any]:
    """Everything a chunk record carries besides its id, text, embedding and write stamp."""
    record = shadows(metadata)
    record.update(
        {
            JSON_KEY: to_json(metadata, owner),
            DOCUMENT_KEY: document_id,
            HASH_KEY: document_hash,
            VECTOR_KEY: has_vector,
        }
    )
    return record


def document_record(document: Document) -> tuple[str, dict[str, Any]]:
    """(record id, metadata) of a document record in the meta collection."""
    return DOCUMENT_PREFIX + document.id, {
        KIND_KEY: DOCUMENT_KIND,
        ID_KEY: document.id,
        HASH_KEY: document.hash,
        JSON_KEY: to_json(document.metadata, f"document {document.id!r}"),
    }


def to_document(record: Mapping[str, Any]) -> Document:
    try:
        return Document(id=record[ID_KEY], hash=record[HASH_KEY], metadata=from_json(record))
    except (KeyError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise Unreadable(f"a document record cannot be read ({_short(exc)})") from None


def identity_record(identity: IndexIdentity) -> dict[str, Any]:
    return {KIND_KEY: "identity", IDENTITY_KEY: identity.model_dump_json()}


def to_identity(record: Mapping[str, Any] | None) -> IndexIdentity | None:
    if not record or IDENTITY_KEY not in record:
        return None
    try:
        return IndexIdentity.model_validate_json(record[IDENTITY_KEY])
    except ValueError:
        raise Unreadable("its index identity record is not an identity engram wrote") from None


def written_by_engram(record: Mapping[str, Any] | None) -> bool:
    """Whether a chunk record carries engram's own keys (a foreign collection's do not)."""
    return bool(record) and DOCUMENT_KEY in (record or {})


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    return " ".join(line.strip() for line in lines[:2])[:200]
