"""engram: durable, searchable memory for AI agents.

This module is the public line. Everything a user, the docs or a plugin needs is a name in
``_PUBLIC`` below and imported from ``engram`` (test helpers from ``engram.testing``); every
other module is internal and may move between releases (see docs/architecture.md, "The public
line"). The names load on first use (a module ``__getattr__``), so ``import engram`` (and
``engram --version``, and every host hook that starts the CLI) pays for pydantic and numpy only
when it needs them.

``_PUBLIC`` is the one list: ``__all__``, ``dir(engram)`` and the lazy loading read it. Type
checkers cannot run it, so the ``TYPE_CHECKING`` block names the same imports for them (``X as X``
marks a re-export under mypy's strict mode; a renamed name is an assignment), and
tests/project/test_public_line.py holds the two, and docs/architecture.md's table, equal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.candidates import Candidates as Candidates
    from engram.candidates import Keys as Keys
    from engram.candidates import NameKeys as NameKeys
    from engram.candidates import Scores as Scores
    from engram.closing import ClosingStore as ClosingStore
    from engram.collections import Collection as Collection
    from engram.collections import CollectionDocument as CollectionDocument
    from engram.collections import CollectionHit as CollectionHit
    from engram.config import EngramConfig as EngramConfig
    from engram.config import LifecycleConfig as LifecycleConfig
    from engram.config import SearchConfig as SearchConfig
    from engram.config import load_config as load_config
    from engram.config import parse_overrides as parse_overrides
    from engram.config import plugin_options as plugin_options
    from engram.default_plugins.memory_store import MemoryStore as MemoryStore
    from engram.default_plugins.memory_store import MemoryStoreOptions as MemoryStoreOptions
    from engram.default_plugins.rules_extractor import RulesExtractor as RulesExtractor
    from engram.embedding.api import ApiEmbedder as ApiEmbedder
    from engram.embedding.base import BaseEmbedder as BaseEmbedder
    from engram.errors import CapabilityError as CapabilityError
    from engram.errors import ConfigError as ConfigError
    from engram.errors import DimensionMismatch as DimensionMismatch
    from engram.errors import DuplicatePlugin as DuplicatePlugin
    from engram.errors import EmbedderError as EmbedderError
    from engram.errors import EmptyQuery as EmptyQuery
    from engram.errors import EngramError as EngramError
    from engram.errors import ExtractorError as ExtractorError
    from engram.errors import FilterError as FilterError
    from engram.errors import IdentityMismatch as IdentityMismatch
    from engram.errors import IndexDamaged as IndexDamaged
    from engram.errors import IndexMoved as IndexMoved
    from engram.errors import InvalidMemory as InvalidMemory
    from engram.errors import InvalidVector as InvalidVector
    from engram.errors import MemoryNotFound as MemoryNotFound
    from engram.errors import MissingKeyError as MissingKeyError
    from engram.errors import PluginError as PluginError
    from engram.errors import PluginNotFound as PluginNotFound
    from engram.errors import RemoteIndexDamaged as RemoteIndexDamaged
    from engram.errors import StoreError as StoreError
    from engram.errors import UnsafePath as UnsafePath
    from engram.extraction import prepare
    from engram.filters import FIELD_PATTERN as FIELD_PATTERN
    from engram.filters import And as And
    from engram.filters import Contains as Contains
    from engram.filters import Eq as Eq
    from engram.filters import Filter as Filter
    from engram.filters import In as In
    from engram.filters import Ne as Ne
    from engram.filters import Not as Not
    from engram.filters import Or as Or
    from engram.filters import Range as Range
    from engram.filters import Scalar as Scalar
    from engram.filters import matches as matches
    from engram.filters import parse_filter as parse_filter
    from engram.filters import parse_iso as parse_iso
    from engram.filters import to_utc as to_utc
    from engram.filters import where as where
    from engram.hookspecs import hookimpl as hookimpl
    from engram.hookspecs import hookspec as hookspec
    from engram.memories.judge.verdicts import RELATIONS as RELATIONS
    from engram.memories.judge.verdicts import Candidate
    from engram.memories.judge.verdicts import JudgesMemories as JudgesMemories
    from engram.memories.judge.verdicts import Verdict as Verdict
    from engram.memories.judge.verdicts import judge as judge
    from engram.memories.lifecycle.revisions import revisions_of as revisions_of
    from engram.memory import Memory as Memory
    from engram.models import EXTRACTED_TYPES as EXTRACTED_TYPES
    from engram.models import Chunk as Chunk
    from engram.models import Document as Document
    from engram.models import ExtractedMemory as ExtractedMemory
    from engram.models import ExtractionMode as ExtractionMode
    from engram.models import Hit as Hit
    from engram.models import IndexIdentity as IndexIdentity
    from engram.models import InputType as InputType
    from engram.models import KnownMemory as KnownMemory
    from engram.models import MemoryType as MemoryType
    from engram.models import Message as Message
    from engram.models import Metadata as Metadata
    from engram.models import Revision as Revision
    from engram.models import SearchMode as SearchMode
    from engram.models import SearchResult as SearchResult
    from engram.protocols import CandidateSearch as CandidateSearch
    from engram.protocols import ChecksContradictions as ChecksContradictions
    from engram.protocols import Closes as Closes
    from engram.protocols import Condenses as Condenses
    from engram.protocols import Diagnoses as Diagnoses
    from engram.protocols import Embedder as Embedder
    from engram.protocols import Extractor as Extractor
    from engram.protocols import HasOptions as HasOptions
    from engram.protocols import KeywordCeiling as KeywordCeiling
    from engram.protocols import Optimizes as Optimizes
    from engram.protocols import PrunesDocuments as PrunesDocuments
    from engram.protocols import ReadsStamps as ReadsStamps
    from engram.protocols import ReplacesDocuments as ReplacesDocuments
    from engram.protocols import ReportsFailures as ReportsFailures
    from engram.protocols import Searcher as Searcher
    from engram.protocols import SharedStore as SharedStore
    from engram.protocols import Store as Store
    from engram.protocols import StoreCapability as StoreCapability
    from engram.protocols import Summarises as Summarises
    from engram.protocols import embedder_identity as embedder_identity
    from engram.registry import NoOptions as NoOptions
    from engram.registry import Register as Register
    from engram.stamps import Stamp as Stamp
    from engram.stamps import Stat as Stat
    from engram.stamps import bulk_stamp as bulk_stamp
    from engram.stamps import number_of, text_of
    from engram.stamps import stat_from as stat_from
    from engram.stores.checks import check_dimension as check_dimension
    from engram.stores.checks import check_finite as check_finite
    from engram.stores.checks import check_identity as check_identity
    from engram.stores.checks import check_vector as check_vector
    from engram.text.words import tokenize as tokenize
    from engram.types import TYPES
    from engram.usage import DEFAULT_LEDGER_PATH as DEFAULT_LEDGER_PATH
    from engram.usage import ApiOptions as ApiOptions
    from engram.usage import Failure as Failure
    from engram.usage import MalformedResponse as MalformedResponse
    from engram.usage import Meter as Meter
    from engram.usage import RequestLimits as RequestLimits
    from engram.usage import RetryPolicy as RetryPolicy
    from engram.usage import Tokens as Tokens
    from engram.usage import UsageLedger as UsageLedger
    from engram.usage import check_base_url as check_base_url
    from engram.usage import parse_retry_after as parse_retry_after
    from engram.usage import resolve_api_key as resolve_api_key
    from engram.usage import token_bound as token_bound

    stamp_text = text_of
    stamp_number = number_of
    prepare_messages = prepare
    JudgeCandidate = Candidate
    MEMORY_TYPES = TYPES

__version__ = "0.1.0"

# Public name -> "module:attribute", where it is defined. Grouped as docs/architecture.md's
# table is: a feature's helpers sit with the protocol that needs them.
_PUBLIC: dict[str, str] = {
    # users
    "Memory": "engram.memory:Memory",
    "load_config": "engram.config:load_config",
    "parse_overrides": "engram.config:parse_overrides",
    "EngramConfig": "engram.config:EngramConfig",
    "LifecycleConfig": "engram.config:LifecycleConfig",
    "SearchConfig": "engram.config:SearchConfig",
    "plugin_options": "engram.config:plugin_options",
    "Collection": "engram.collections:Collection",
    "CollectionDocument": "engram.collections:CollectionDocument",
    "CollectionHit": "engram.collections:CollectionHit",
    "revisions_of": "engram.memories.lifecycle.revisions:revisions_of",
    "Revision": "engram.models:Revision",
    # every plugin
    "hookimpl": "engram.hookspecs:hookimpl",
    "hookspec": "engram.hookspecs:hookspec",
    "Register": "engram.registry:Register",
    "NoOptions": "engram.registry:NoOptions",
    # the protocols
    "Store": "engram.protocols:Store",
    "Embedder": "engram.protocols:Embedder",
    "Extractor": "engram.protocols:Extractor",
    "Searcher": "engram.protocols:Searcher",
    "StoreCapability": "engram.protocols:StoreCapability",
    "embedder_identity": "engram.protocols:embedder_identity",
    "Closes": "engram.protocols:Closes",
    "Optimizes": "engram.protocols:Optimizes",
    "Diagnoses": "engram.protocols:Diagnoses",
    "CandidateSearch": "engram.protocols:CandidateSearch",
    "KeywordCeiling": "engram.protocols:KeywordCeiling",
    "HasOptions": "engram.protocols:HasOptions",
    "Summarises": "engram.protocols:Summarises",
    "PrunesDocuments": "engram.protocols:PrunesDocuments",
    "ReplacesDocuments": "engram.protocols:ReplacesDocuments",
    "ReadsStamps": "engram.protocols:ReadsStamps",
    "SharedStore": "engram.protocols:SharedStore",
    "ChecksContradictions": "engram.protocols:ChecksContradictions",
    "Condenses": "engram.protocols:Condenses",
    "ReportsFailures": "engram.protocols:ReportsFailures",
    "JudgesMemories": "engram.memories.judge.verdicts:JudgesMemories",
    # records
    "Chunk": "engram.models:Chunk",
    "Document": "engram.models:Document",
    "Hit": "engram.models:Hit",
    "SearchResult": "engram.models:SearchResult",
    "IndexIdentity": "engram.models:IndexIdentity",
    "Metadata": "engram.models:Metadata",
    "InputType": "engram.models:InputType",
    "SearchMode": "engram.models:SearchMode",
    "Message": "engram.models:Message",
    "ExtractedMemory": "engram.models:ExtractedMemory",
    "KnownMemory": "engram.models:KnownMemory",
    "MemoryType": "engram.models:MemoryType",
    "ExtractionMode": "engram.models:ExtractionMode",
    "EXTRACTED_TYPES": "engram.models:EXTRACTED_TYPES",
    # for CandidateSearch
    "Candidates": "engram.candidates:Candidates",
    "Keys": "engram.candidates:Keys",
    "Scores": "engram.candidates:Scores",
    "NameKeys": "engram.candidates:NameKeys",
    # for ReadsStamps
    "Stamp": "engram.stamps:Stamp",
    "Stat": "engram.stamps:Stat",
    "bulk_stamp": "engram.stamps:bulk_stamp",
    "stat_from": "engram.stamps:stat_from",
    "stamp_text": "engram.stamps:text_of",
    "stamp_number": "engram.stamps:number_of",
    # filters
    "Filter": "engram.filters:Filter",
    "Eq": "engram.filters:Eq",
    "Ne": "engram.filters:Ne",
    "In": "engram.filters:In",
    "Contains": "engram.filters:Contains",
    "Range": "engram.filters:Range",
    "And": "engram.filters:And",
    "Or": "engram.filters:Or",
    "Not": "engram.filters:Not",
    "where": "engram.filters:where",
    "parse_filter": "engram.filters:parse_filter",
    "matches": "engram.filters:matches",
    "parse_iso": "engram.filters:parse_iso",
    "to_utc": "engram.filters:to_utc",
    "FIELD_PATTERN": "engram.filters:FIELD_PATTERN",
    "Scalar": "engram.filters:Scalar",
    # stores (stores.checks)
    "check_identity": "engram.stores.checks:check_identity",
    "check_dimension": "engram.stores.checks:check_dimension",
    "check_finite": "engram.stores.checks:check_finite",
    "check_vector": "engram.stores.checks:check_vector",
    "tokenize": "engram.text.words:tokenize",
    "ClosingStore": "engram.closing:ClosingStore",
    "MemoryStore": "engram.default_plugins.memory_store:MemoryStore",
    "MemoryStoreOptions": "engram.default_plugins.memory_store:MemoryStoreOptions",
    # embedders
    "BaseEmbedder": "engram.embedding.base:BaseEmbedder",
    "ApiEmbedder": "engram.embedding.api:ApiEmbedder",
    "ApiOptions": "engram.usage:ApiOptions",
    "RequestLimits": "engram.usage:RequestLimits",
    "Failure": "engram.usage:Failure",
    "MalformedResponse": "engram.usage:MalformedResponse",
    "check_base_url": "engram.usage:check_base_url",
    "parse_retry_after": "engram.usage:parse_retry_after",
    "token_bound": "engram.usage:token_bound",
    "resolve_api_key": "engram.usage:resolve_api_key",
    # extractors
    "prepare_messages": "engram.extraction:prepare",
    "judge": "engram.memories.judge.verdicts:judge",
    "Verdict": "engram.memories.judge.verdicts:Verdict",
    "JudgeCandidate": "engram.memories.judge.verdicts:Candidate",
    "MEMORY_TYPES": "engram.types:TYPES",
    "RELATIONS": "engram.memories.judge.verdicts:RELATIONS",
    "RulesExtractor": "engram.default_plugins.rules_extractor:RulesExtractor",
    "Meter": "engram.usage:Meter",
    "RetryPolicy": "engram.usage:RetryPolicy",
    "Tokens": "engram.usage:Tokens",
    "UsageLedger": "engram.usage:UsageLedger",
    "DEFAULT_LEDGER_PATH": "engram.usage:DEFAULT_LEDGER_PATH",
    # errors
    "EngramError": "engram.errors:EngramError",
    "ConfigError": "engram.errors:ConfigError",
    "PluginError": "engram.errors:PluginError",
    "PluginNotFound": "engram.errors:PluginNotFound",
    "DuplicatePlugin": "engram.errors:DuplicatePlugin",
    "MissingKeyError": "engram.errors:MissingKeyError",
    "CapabilityError": "engram.errors:CapabilityError",
    "IdentityMismatch": "engram.errors:IdentityMismatch",
    "DimensionMismatch": "engram.errors:DimensionMismatch",
    "InvalidVector": "engram.errors:InvalidVector",
    "FilterError": "engram.errors:FilterError",
    "UnsafePath": "engram.errors:UnsafePath",
    "EmptyQuery": "engram.errors:EmptyQuery",
    "EmbedderError": "engram.errors:EmbedderError",
    "StoreError": "engram.errors:StoreError",
    "IndexDamaged": "engram.errors:IndexDamaged",
    "IndexMoved": "engram.errors:IndexMoved",
    "RemoteIndexDamaged": "engram.errors:RemoteIndexDamaged",
    "ExtractorError": "engram.errors:ExtractorError",
    "MemoryNotFound": "engram.errors:MemoryNotFound",
    "InvalidMemory": "engram.errors:InvalidMemory",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use, then keep the name here."""
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'engram' has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(["__version__", *_PUBLIC])


# Built from the table, so hidden from mypy: it reads a literal ``__all__`` only, and one it
# cannot read would make every name above private. The ``as X`` imports export them instead.
if not TYPE_CHECKING:
    __all__ = ["__version__", *_PUBLIC]
