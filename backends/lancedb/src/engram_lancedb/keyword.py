"""Keyword search text: what LanceDB's BM25 index sees, and how a user's query becomes terms.

LanceDB's tokenizers split on whitespace or punctuation and cannot segment Chinese or Japanese,
so text is tokenized here with ``engram.search.tokenize`` (the same words the reference store
uses: NFKC, lowercase, one token per CJK character) and stored space-separated in the indexed
``terms`` column. The index splits on whitespace only, then stems and folds accents, and a query
goes through the same steps, so documents and queries always meet on the same terms.

A query is never parsed as query syntax: it becomes a list of words handed to a ``MatchQuery``
with OR semantics, so quotes, operators and field prefixes are just characters.
"""

from __future__ import annotations

from lancedb.index import FTS

from engram import tokenize

MAX_QUERY_TERMS = 256


def index_terms(text: str) -> str:
    """The words of ``text`` as the indexed column holds them."""
    return " ".join(tokenize(text))


def query_terms(query: str) -> list[str]:
    """Distinct words of ``query`` (at most ``MAX_QUERY_TERMS``), in order of appearance."""
    return list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]


def fts_config(language: str, stem: bool) -> FTS:
    """The BM25 index over pre-tokenized terms: whitespace split, stemming, accent folding, no
    stop-word removal (a query for "the" finds "the") and no token length limit."""
    return FTS(
        base_tokenizer="whitespace",
        language=language,
        lower_case=False,
        stem=stem,
        remove_stop_words=False,
        ascii_folding=True,
        max_token_length=None,
    )
