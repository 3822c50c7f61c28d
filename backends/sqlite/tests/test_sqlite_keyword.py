"""Keyword search: hostile queries, many scripts, exact filters, and BM25 computed independently."""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterator

import pluggy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Chunk, Eq
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite.fts import MAX_QUERY_TERMS, MAX_REPEATS, TOKENIZER, match_expression
from engram_sqlite.unicode61 import SEPARATOR_RANGES


@pytest.fixture
def mem(pm: pluggy.PluginManager) -> Iterator[SQLiteStore]:
    with SQLiteStore(SQLiteOptions(path=":memory:"), plugin_manager=pm) as s:
        yield s


def put(store: SQLiteStore, *texts: str, **meta: object) -> None:
    start = store.count()
    store.upsert(
        [
            Chunk(id=f"c{start + i}", document_id="d", text=t, metadata=dict(meta))
            for i, t in enumerate(texts)
        ]
    )


def found(store: SQLiteStore, query: str, k: int = 10) -> list[str]:
    return [h.chunk.text for h in store.keyword_search(query, k)]


HOSTILE = [
    '"',
    '""',
    '"unbalanced quote',
    "a\"b'c",
    "NEAR(alpha beta, 2)",
    "alpha AND",
    "OR alpha OR",
    "NOT alpha",
    "alpha NOT beta",
    "^alpha",
    "alpha*",
    "*",
    "text:alpha",
    "{text}: alpha",
    "(alpha OR (beta",
    "alpha)",
    "-alpha",
    "alpha-beta",
    "+alpha",
    "alpha'); DROP TABLE chunks; --",
    "x' OR '1'='1",
    "\\",
    "\x00alpha",
    "alpha\nbeta\tgamma",
    "AND OR NOT NEAR",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_plain_words(mem: SQLiteStore, query: str) -> None:
    put(mem, "alpha beta", "gamma delta", "and or not near", "text column")
    hits = mem.keyword_search(query, 10)
    words = {w.lower() for w in "".join(c if c.isalnum() else " " for c in query).split()}
    for hit in hits:
        assert hit.score > 0
        assert words & set(hit.chunk.text.split())
    assert mem.count() == 4


def test_operators_are_searched_as_words(mem: SQLiteStore) -> None:
    put(mem, "alpha beta", "and or not near", "unrelated")
    assert found(mem, "NEAR") == ["and or not near"]
    assert set(found(mem, "alpha NOT beta")) == {"alpha beta", "and or not near"}


@pytest.mark.parametrize(
    "query", ["", "   ", "!!! ??? ...", "*", '"" ()', "🍕", "---", "«»\u2039\u203a"]
)
def test_queries_without_words_return_nothing(mem: SQLiteStore, query: str) -> None:
    put(mem, "alpha", "🙂🍕 ---")
    assert mem.keyword_search(query, 5) == []
    assert match_expression(query) is None


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=40))
def test_any_text_is_a_valid_query(mem: SQLiteStore, query: str) -> None:
    if mem.count() == 0:
        put(mem, "alpha beta gamma", "東京タワー", "café", "NEAR AND OR NOT")
    hits = mem.keyword_search(query, 3)
    assert len(hits) <= 3
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=40))
def test_a_text_finds_itself(mem: SQLiteStore, text: str) -> None:
    mem.reset()
    put(mem, text, "unrelated filler")
    if tokenised([text])[0]:
        assert text in found(mem, text)
    else:
        assert mem.keyword_search(text, 5) == []


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("東京タワーに行きました", "東京"),
        ("東京タワーに行きました", "タワー"),
        ("東京タワーに行きました", "京"),
        ("我爱北京天安门", "北京"),
        ("我爱北京天安门", "天安门"),
        ("학교에서 공부했다", "학교"),
        ("ภาษาไทยง่าย", "ไทย"),
        ("café crème brûlée", "cafe creme"),
        ("cafe\u0301 au lait", "café"),
        ("naïve Ünïcödé", "NAIVE unicode"),
        ("Straße", "straße"),
        ("I ❤️ pizza 🍕", "pizza"),
        ("שָׁלוֹם עוֹלָם", "שלום"),
        ("مَرْحَبًا بالعالم", "مرحبا"),
        ("هذا نص عربي", "عربي"),
        ("हिन्दी भाषा", "हिन्दी"),
        ("Привет, мир", "привет"),
        ("running dogs", "run dog"),
        ("x²y and ½", "x²y"),
    ],
)
def test_scripts_and_diacritics(mem: SQLiteStore, text: str, query: str) -> None:
    put(mem, text, "unrelated filler words")
    assert found(mem, query) == [text]


def test_cjk_does_not_match_unrelated_cjk(mem: SQLiteStore) -> None:
    put(mem, "東京タワー", "大阪城")
    assert found(mem, "大阪") == ["大阪城"]
    assert found(mem, "京都") == []


def test_filters_are_exact_not_post_filtered(mem: SQLiteStore) -> None:
    put(mem, *(["apple apple apple"] * 50), kind="common")
    put(mem, "apple and many other words that dilute the score", kind="rare")
    [hit] = mem.keyword_search("apple", 1, Eq(field="kind", value="rare"))
    assert hit.chunk.metadata == {"kind": "rare"}
    assert len(mem.keyword_search("apple", 100)) == 51


def test_a_repeated_query_word_keeps_its_weight(mem: SQLiteStore) -> None:
    """BM25 counts a query term as often as the query says it: three "apple"s outweigh one
    rarer "banana" (merging repeats ranked the banana chunk first)."""
    put(mem, *[f"filler text number {i}" for i in range(15)])
    put(mem, "apple crumble", "apple pie", "apple juice", "apple tart", "banana split")
    assert found(mem, "apple banana", 1) == ["banana split"]
    assert found(mem, "apple apple apple banana", 1)[0].startswith("apple")
    assert match_expression("Apple apple APPLE") == '"Apple" OR "Apple" OR "Apple"'
    assert match_expression("a " * 50) == " OR ".join(['"a"'] * MAX_REPEATS)


def test_long_queries_are_capped_not_failing(mem: SQLiteStore) -> None:
    put(mem, "w1 w2", f"w{MAX_QUERY_TERMS + 50}")
    query = " ".join(f"w{i}" for i in range(MAX_QUERY_TERMS * 4))
    assert found(mem, query) == ["w1 w2"]
    assert found(mem, "word " * 200_000 + "w1") == ["w1 w2"]


def test_separator_table_matches_the_running_sqlite() -> None:
    """Both ends of every range and their neighbours, plus a sample of all code points."""
    import sqlean

    edges = {cp + d for a, b in SEPARATOR_RANGES for cp in (a, b) for d in (-1, 0, 1)}
    sample = set(range(0, 0x110000, 29)) | {0x1F355, 0x1F642, 0xE0001, 0xE0020}
    points = sorted(
        cp for cp in edges | sample if 0 <= cp < 0x110000 and not 0xD800 <= cp <= 0xDFFF
    )
    conn = sqlean.connect(":memory:")
    tokenize = TOKENIZER.replace("'", "''")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenize}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.executemany(
        "INSERT INTO t(rowid, x) VALUES (?, ?)", ((cp, f"a{chr(cp)}a") for cp in points)
    )
    live = {doc for (doc,) in conn.execute("SELECT doc FROM v GROUP BY doc HAVING count(*) = 2")}
    conn.close()
    starts = [a for a, _ in SEPARATOR_RANGES]
    table = {
        cp
        for cp in points
        if (i := bisect.bisect_right(starts, cp) - 1) >= 0 and cp <= SEPARATOR_RANGES[i][1]
    }
    assert table == live


def test_words_split_where_the_tokenizer_splits(mem: SQLiteStore) -> None:
    put(mem, "price ₺100 today", "0\U00018d09 glyph", "wörter-mit—strichen")
    assert found(mem, "₺100") == ["price ₺100 today"]
    assert found(mem, "100") == []
    assert found(mem, "0\U00018d09") == ["0\U00018d09 glyph"]
    assert found(mem, "strichen") == ["wörter-mit—strichen"]


def test_marks_only_query_finds_nothing(mem: SQLiteStore) -> None:
    put(mem, "cafe\u0301", "alpha")
    assert mem.keyword_search("\u0301\u0301", 5) == []


# -- BM25, computed independently ---------------------------------------------------------------

CORPUS = [
    "The quick brown fox jumps over the lazy dog",
    "A fast brown fox leaped over sleeping dogs in the field",
    "Foxes are small omnivorous mammals",
    "The dog barked at the mailman every morning",
    "Running with dogs is good exercise for people and dogs",
    "Databases store rows in tables; SQLite stores a whole database in one file",
    "Vector search finds nearest neighbours by cosine similarity",
    "Keyword search ranks documents with BM25 over an inverted index",
    "The lazy cat sleeps all day in the sun",
    "Brown bears and brown foxes live in the forest",
    "An index maps each term to the documents containing it",
    "Quick sort and merge sort are classic sorting algorithms",
]
QUERIES = [
    "brown fox",
    "lazy dog",
    "dogs running",
    "search index",
    "quick sort",
    "sqlite database file",
    "the",
    "fox mammals forest",
]


def tokenised(texts: list[str]) -> list[list[str]]:
    """Each text as FTS5's tokenizer (porter unicode61) sees it, read from an fts5vocab table."""
    import sqlean

    conn = sqlean.connect(":memory:")
    tokenize = TOKENIZER.replace("'", "''")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{tokenize}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    docs: list[list[str]] = [[] for _ in texts]
    for term, doc, _col, _offset in conn.execute("SELECT * FROM v ORDER BY doc, offset"):
        docs[doc - 1].append(term)
    conn.close()
    return docs


def bm25(
    docs: list[list[str]], query_terms: list[str], k1: float = 1.2, b: float = 0.75
) -> list[float]:
    """FTS5's bm25(): idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    n_docs = len(docs)
    avgdl = sum(len(d) for d in docs) / n_docs
    scores = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for term in query_terms:
            n = sum(1 for d in docs if term in d)
            idf = math.log((n_docs - n + 0.5) / (n + 0.5))
            idf = idf if idf > 0 else 1e-6
            f = tf[term]
            score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


@pytest.mark.parametrize("query", QUERIES)
def test_ranking_matches_an_independent_bm25(mem: SQLiteStore, query: str) -> None:
    put(mem, *CORPUS)
    docs = tokenised(CORPUS)
    terms = list(dict.fromkeys(t for q in tokenised([query]) for t in q))
    scores = bm25(docs, terms)
    expected = sorted(
        ((CORPUS[i], s) for i, s in enumerate(scores) if any(t in docs[i] for t in terms)),
        key=lambda pair: -pair[1],
    )
    hits = mem.keyword_search(query, len(CORPUS))
    assert [h.chunk.text for h in hits] == [text for text, _ in expected]
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)
        assert hit.keyword_score == hit.score


def test_bm25_statistics_follow_deletes(mem: SQLiteStore) -> None:
    put(mem, *CORPUS)
    mem.delete([f"c{i}" for i in range(0, len(CORPUS), 2)])
    remaining = CORPUS[1::2]
    docs = tokenised(remaining)
    terms = tokenised(["brown dogs"])[0]
    scores = bm25(docs, terms)
    hits = mem.keyword_search("brown dogs", 20)
    expected = sorted(
        (s, t) for t, s, d in zip(remaining, scores, docs, strict=True) if set(terms) & set(d)
    )
    assert sorted((round(h.score, 9), h.chunk.text) for h in hits) == [
        (round(s, 9), t) for s, t in expected
    ]
