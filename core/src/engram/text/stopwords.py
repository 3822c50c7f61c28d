"""English function words, which say nothing about what a text is about, and the keyword
query a search runs without them.

Keyword search ORs every word of the query, so a question's "what", "the" and "my" each bring in
every note that has them: in a vault of short notes a note that shares one of those words with
the query outranks the note about the question's subject on the keyword side, and the fused
list follows. Lucene's and Elasticsearch's English analysers drop such words for the same
reason. Measured on the bench's ten public sets (MiniLM, SQLite): keyword nDCG@10 rises on
LoCoMo by 0.04, the Temporal Memory set by 0.06, REALTALK by 0.02, and moves by less than 0.01
on SciFact, Cranfield and CISI; docs/benchmarks.md has the report.

One list serves hybrid search and the per-prompt hook's keyword index (``engram.hosts
.prompt_index``), so both agree on which words count.
"""

from __future__ import annotations

import re

from engram.text.words import tokenize

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "get",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "let",
        "lets",
        "make",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "please",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "up",
        "us",
        "use",
        "using",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
"""Lower-case English function words (question words, pronouns, articles, auxiliaries) and the
verbs nearly every request carries ("please", "use", "make", "get")."""

_WORD = re.compile(r"\w+")


def keyword_query(query: str) -> str:
    """``query`` with its stop words blanked out, for the keyword side of a search.

    Everything else is kept as typed (punctuation, a CJK run, a hyphenated word), so each
    store's own word splitting sees what it saw before. A stop word written in capitals in a
    query that has lower-case letters ("US", "IT", "WHO") is a name, and kept. A query made of
    stop words only ("who am I") is returned whole: a search for those words still finds them.
    """
    names_in_capitals = any(c.islower() for c in query)

    def blank(match: re.Match[str]) -> str:
        word = match.group()
        if word.lower() not in STOPWORDS:
            return word
        return word if names_in_capitals and len(word) > 1 and word.isupper() else " "

    kept = _WORD.sub(blank, query)
    return kept if tokenize(kept) else query
