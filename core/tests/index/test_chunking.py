"""Chunkers: frontmatter, heading paths, exact spans, token limits, overlap and stable ids."""

from __future__ import annotations

import bisect
import datetime
import itertools
import warnings

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.chunking import (
    ChunkSpan,
    FrontmatterWarning,
    MarkdownChunker,
    TokenWindowChunker,
    chunk_id,
    chunk_ids,
    make_chunker,
    parse_frontmatter,
    read_frontmatter,
)
from engram.config import ChunkingConfig
from engram.errors import ConfigError
from engram.text.tokens import default_tokenizer

TOK = default_tokenizer()

NOTE = """---
title: Storage notes
created: 2024-03-01
tags: [db, sqlite]
---
Intro paragraph before any heading.

# Projects
## engram
### Storage
SQLite is the default store.
It keeps vectors and text together.

```python
# this is code, not a heading
print("hi")
```

## Other
Something else entirely.
"""


def lines_of(source: str, chunk: ChunkSpan) -> str:
    return "\n".join(source.split("\n")[chunk.start_line - 1 : chunk.end_line])


def assert_exact(source: str, chunks: list[ChunkSpan], max_tokens: int) -> None:
    """Invariants every chunker keeps, whatever the input."""
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert chunk.text == source[chunk.start_char : chunk.end_char]
        assert chunk.text in lines_of(source, chunk)
        assert source.count("\n", 0, chunk.start_char) + 1 == chunk.start_line
        assert source.count("\n", 0, chunk.end_char - 1) + 1 == chunk.end_line
        assert 0 < TOK.count(chunk.text) <= max_tokens
    starts = [c.start_char for c in chunks]
    assert starts == sorted(starts)


def assert_covers(source: str, body_offset: int, chunks: list[ChunkSpan]) -> None:
    """Every token of the body lies inside some chunk."""
    starts = [c.start_char for c in chunks]  # sorted (checked by assert_exact)
    reach = list(itertools.accumulate((c.end_char for c in chunks), max))
    for a, b in TOK.encode_with_offsets(source[body_offset:]):
        a, b = a + body_offset, b + body_offset
        last = bisect.bisect_right(starts, a) - 1  # chunks starting at or before the token
        assert last >= 0, (source[a:b], a)
        assert reach[last] >= b, (source[a:b], a)


# --------------------------------------------------------------------------- frontmatter


def test_frontmatter_becomes_json_safe_metadata() -> None:
    metadata, body, start = parse_frontmatter(NOTE)
    assert metadata == {"title": "Storage notes", "created": "2024-03-01", "tags": ["db", "sqlite"]}
    assert body.startswith("Intro paragraph")
    assert start == 6
    assert NOTE.split("\n")[start - 1] == "Intro paragraph before any heading."


def test_frontmatter_values_of_every_yaml_kind_are_json_safe() -> None:
    text = (
        "---\n"
        "when: 2024-03-01 10:20:30\n"
        "2024-01-01: dated key\n"
        "3: numeric key\n"
        "ratio: .nan\n"
        "members: !!set {b: null, a: null}\n"
        "nested: {deep: [1, {x: 2024-05-06}]}\n"
        "raw: !!binary aGVsbG8=\n"
        "---\n"
        "body\n"
    )
    metadata, body, start = parse_frontmatter(text)
    assert metadata == {
        "when": datetime.datetime(2024, 3, 1, 10, 20, 30).isoformat(),
        "2024-01-01": "dated key",
        "3": "numeric key",
        "ratio": "nan",
        "members": ["a", "b"],
        "nested": {"deep": [1, {"x": "2024-05-06"}]},
        "raw": "aGVsbG8=",
    }
    assert (body, start) == ("body\n", 10)


def test_malformed_frontmatter_is_kept_as_body_with_a_warning() -> None:
    text = "---\ntitle: [unclosed\n---\nbody\n"
    with pytest.warns(FrontmatterWarning, match=r"not valid YAML .*fix the YAML"):
        metadata, body, start = parse_frontmatter(text)
    assert (metadata, body, start) == ({}, text, 1)
    document = MarkdownChunker().chunk_document(text)
    assert document.metadata == {}
    assert len(document.warnings) == 1
    assert "title: [unclosed" in document.chunks[0].text


def test_exponential_yaml_aliases_are_refused_not_expanded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    text = "---\n" + "\n".join(lines) + "\n---\nbody\n"
    fm = read_frontmatter(text)
    assert fm.metadata == {}
    assert fm.warning is not None
    assert "too large" in fm.warning
    assert fm.body == text


@pytest.mark.parametrize(
    "text",
    [
        "---\n- a list\n- not a mapping\n---\nbody\n",
        "---\njust a string\n---\nbody\n",
        "---\ntitle: never closed\nbody\n",
        "no frontmatter\n---\nx: 1\n---\n",
        "",
    ],
)
def test_text_without_mapping_frontmatter_is_all_body(text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metadata, body, start = parse_frontmatter(text)
    assert (metadata, body, start) == ({}, text, 1)


def test_empty_frontmatter_is_stripped() -> None:
    assert parse_frontmatter("---\n---\nbody") == ({}, "body", 3)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**9), 10**9), st.text(max_size=40))


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12),
        st.one_of(_SCALARS, st.lists(_SCALARS, max_size=4)),
        max_size=6,
    )
)
def test_frontmatter_reads_what_the_pure_python_yaml_loader_reads(meta: dict[str, object]) -> None:
    """libyaml's parser (used when PyYAML has it) must read every frontmatter as PyYAML's own."""
    head = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)
    metadata, body, _ = parse_frontmatter(f"---\n{head}---\nbody\n")
    assert (metadata, body) == (yaml.safe_load(head), "body\n")


def test_frontmatter_with_bom_and_crlf() -> None:
    text = "\ufeff---\r\ntitle: x\r\n---\r\nbody\r\n"
    metadata, body, start = parse_frontmatter(text)
    assert (metadata, body, start) == ({"title": "x"}, "body\r\n", 4)


def test_frontmatter_only_document_has_no_chunks() -> None:
    document = MarkdownChunker().chunk_document("---\ntitle: x\n---\n")
    assert document.metadata == {"title": "x"}
    assert document.chunks == []


# --------------------------------------------------------------------------- markdown


def test_markdown_chunks_follow_headings_with_exact_lines() -> None:
    chunks = MarkdownChunker(max_tokens=60, overlap=8).chunk(NOTE)
    assert [(c.heading_path, c.start_line, c.end_line) for c in chunks] == [
        ("", 6, 6),
        ("Projects > engram > Storage", 8, 17),
        ("Projects > Other", 19, 20),
    ]
    storage = chunks[1]
    assert storage.text.startswith("# Projects\n## engram\n### Storage\nSQLite")
    assert storage.text.endswith('print("hi")\n```')
    assert_exact(NOTE, chunks, 60)


def test_hash_lines_inside_fenced_code_are_not_headings() -> None:
    text = "# Real\n\n~~~~\n# fake\n```\n# still fake\n~~~~\n\ntail text\n"
    chunks = MarkdownChunker(max_tokens=16, overlap=0).chunk(text)
    assert {tuple(c.headings) for c in chunks} == {("Real",)}


def test_sibling_sections_are_separate_chunks() -> None:
    text = "# A\n# B\ntext of b\n## B1\ntext of b1\n"
    chunks = MarkdownChunker().chunk(text)
    assert [(c.text, c.headings) for c in chunks] == [
        ("# A", ["A"]),
        ("# B\ntext of b", ["B"]),
        ("## B1\ntext of b1", ["B", "B1"]),
    ]


def test_heading_titles_drop_closing_hashes() -> None:
    chunks = MarkdownChunker().chunk("## Title ##\ntext\n### C# notes\nmore\n")
    assert [c.headings for c in chunks] == [["Title"], ["Title", "C# notes"]]


@pytest.mark.parametrize("text", ["", "   ", "\n\n  \n\t\n", "---\na: 1\n---\n\n  \n"])
def test_empty_bodies_yield_no_chunks(text: str) -> None:
    assert MarkdownChunker().chunk(text) == []


def test_large_block_is_split_between_lines_with_overlap() -> None:
    source = "\n".join(f"line {i} alpha beta gamma" for i in range(40))  # 6 tokens a line
    chunks = MarkdownChunker(max_tokens=30, overlap=12).chunk(source)
    assert len(chunks) > 1
    assert_exact(source, chunks, 30)
    assert_covers(source, 0, chunks)
    for chunk in chunks:
        assert chunk.text == lines_of(source, chunk)  # whole lines only
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line - 1  # two shared lines = 12 tokens


def test_single_long_line_is_cut_inside_with_token_windows() -> None:
    line = " ".join(f"w{i}" for i in range(200))
    source = f"# Title\n\n{line}\n\nafter\n"
    chunks = MarkdownChunker(max_tokens=50, overlap=10).chunk(source)
    inside = [c for c in chunks if c.start_line == 3]
    assert len(inside) > 2
    assert all(c.end_line == 3 and c.headings == ["Title"] for c in inside)
    assert_exact(source, chunks, 50)
    assert_covers(source, 0, chunks)


def test_a_word_longer_than_the_window_is_cut_inside() -> None:
    word = "zq" * 60  # many word pieces, one word
    source = f"start {word} end"
    for chunker in (MarkdownChunker(16, 4), TokenWindowChunker(16, 4)):
        chunks = chunker.chunk(source)
        assert_exact(source, chunks, 16)
        assert_covers(source, 0, chunks)


def test_chunk_document_reports_metadata_and_chunks() -> None:
    document = MarkdownChunker().chunk_document(NOTE)
    assert document.metadata["title"] == "Storage notes"
    assert document.warnings == []
    assert document.chunks[0].start_line == 6


# --------------------------------------------------------------------------- token windows


def test_token_windows_step_and_overlap() -> None:
    source = " ".join(["cat"] * 100)  # one token a word, four characters a step
    chunks = TokenWindowChunker(max_tokens=20, overlap=5).chunk(source)
    assert [TOK.count(c.text) for c in chunks] == [20, 20, 20, 20, 20, 20, 10]
    assert [c.start_char for c in chunks] == [i * 15 * 4 for i in range(7)]


def test_token_windows_map_to_lines_and_skip_frontmatter() -> None:
    source = "---\nk: v\n---\n" + "\n".join(["one two three four"] * 10)
    document = TokenWindowChunker(max_tokens=16, overlap=4).chunk_document(source)
    assert document.metadata == {"k": "v"}
    assert document.chunks[0].start_line == 4
    assert document.chunks[0].end_line == 7
    assert_exact(source, document.chunks, 16)
    assert_covers(source, len("---\nk: v\n---\n"), document.chunks)
    assert all("k: v" not in c.text for c in document.chunks)


def test_token_windows_keep_words_whole() -> None:
    source = " ".join(["unaffable"] * 20)  # three tokens a word
    chunks = TokenWindowChunker(max_tokens=10, overlap=2).chunk(source)
    for chunk in chunks:
        assert set(chunk.text.split(" ")) == {"unaffable"}


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_bad_sizes_are_config_errors(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ConfigError, match="chunking"):
        TokenWindowChunker(max_tokens, overlap)
    with pytest.raises(ConfigError, match="chunking"):
        MarkdownChunker(max_tokens, overlap)


def test_make_chunker_follows_the_config() -> None:
    markdown = make_chunker(ChunkingConfig(strategy="markdown", max_tokens=100, overlap=10))
    tokens = make_chunker(ChunkingConfig(strategy="tokens", max_tokens=64, overlap=0))
    assert isinstance(markdown, MarkdownChunker)
    assert (markdown.max_tokens, markdown.overlap) == (100, 10)
    assert isinstance(tokens, TokenWindowChunker)
    assert (tokens.max_tokens, tokens.overlap) == (64, 0)
    assert markdown.describe() == ChunkingConfig(max_tokens=100, overlap=10).describe()
    assert (
        tokens.describe() == ChunkingConfig(strategy="tokens", max_tokens=64, overlap=0).describe()
    )


# --------------------------------------------------------------------------- ids


def test_chunk_ids_are_stable_across_edits_and_distinct_for_repeats() -> None:
    chunker = MarkdownChunker(max_tokens=16, overlap=0)
    before = "# A\nfirst paragraph\n\n# B\nsecond paragraph\n\n# C\nthird paragraph\n"
    after = before.replace("second paragraph", "second paragraph, edited")
    ids_before = chunk_ids("notes/a.md", chunker.chunk(before))
    ids_after = chunk_ids("notes/a.md", chunker.chunk(after))
    assert ids_before[0] == ids_after[0]
    assert ids_before[2] == ids_after[2]
    assert ids_before[1] != ids_after[1]
    assert chunk_ids("notes/other.md", chunker.chunk(before))[0] != ids_before[0]

    repeated = chunker.chunk("# A\nsame\n\n# A\nsame\n")
    assert repeated[0].text == repeated[1].text
    ids = chunk_ids("doc", repeated)
    assert ids == [chunk_id("doc", "# A\nsame", 0), chunk_id("doc", "# A\nsame", 1)]
    assert len(set(ids)) == 2
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_chunk_id_parts_cannot_be_shifted() -> None:
    assert chunk_id("ab", "c") != chunk_id("a", "bc")


# --------------------------------------------------------------------------- properties

WORD = st.sampled_from(
    ["the", "cat", "sat", "on", "mat", "engram", "unaffable", "日本", "x9", "é", ",", "."]
)
PHRASE = st.lists(WORD, min_size=1, max_size=12).map(" ".join)
ODD = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\n"),
    max_size=30,
)
LINE = st.one_of(
    PHRASE,
    PHRASE.map(lambda p: "#" * 2 + " " + p),
    st.tuples(st.integers(1, 7), PHRASE).map(lambda t: "#" * t[0] + " " + t[1]),
    st.just(""),
    st.just("   "),
    st.sampled_from(["```", "```python", "~~~", "    # indented"]),
    st.tuples(PHRASE, st.integers(4, 16)).map(lambda t: " ".join([t[0]] * t[1])),  # long line
    st.just("zq" * 40),
    ODD,
)
FRONTMATTER = st.sampled_from(["", "---\ntitle: t\n---\n", "---\n[bad\n---\n", "---\n---\n"])
DOCUMENT = st.tuples(FRONTMATTER, st.lists(LINE, max_size=40)).map(lambda t: t[0] + "\n".join(t[1]))
SIZES = st.integers(8, 64).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m // 2)))


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENT, SIZES)
def test_markdown_chunker_properties(source: str, sizes: tuple[int, int]) -> None:
    max_tokens, overlap = sizes
    chunker = MarkdownChunker(max_tokens, overlap)
    document = chunker.chunk_document(source)
    fm = read_frontmatter(source)
    assert_exact(source, document.chunks, max_tokens)
    assert_covers(source, fm.body_offset, document.chunks)
    assert all(c.start_char >= fm.body_offset for c in document.chunks)
    ids = chunk_ids("doc.md", document.chunks)
    assert len(set(ids)) == len(ids)
    assert chunk_ids("doc.md", chunker.chunk(source)) == ids


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENT, SIZES)
def test_token_window_chunker_properties(source: str, sizes: tuple[int, int]) -> None:
    max_tokens, overlap = sizes
    chunks = TokenWindowChunker(max_tokens, overlap).chunk(source)
    assert_exact(source, chunks, max_tokens)
    assert_covers(source, 0, chunks)
    for before, after in itertools.pairwise(chunks):
        assert before.start_char < after.start_char
        assert before.end_char < after.end_char
    ids = chunk_ids("doc.md", chunks)
    assert len(set(ids)) == len(ids)


SINGLE_TOKEN_WORDS = st.lists(
    st.sampled_from(["the", "cat", "sat", "on", "mat", ",", ".", "river", "blue"]), max_size=300
)


@settings(deadline=None, max_examples=100)
@given(SINGLE_TOKEN_WORDS, st.lists(st.sampled_from([" ", "\n", " \n "]), min_size=1), SIZES)
def test_token_windows_share_exactly_overlap_tokens(
    words: list[str], separators: list[str], sizes: tuple[int, int]
) -> None:
    max_tokens, overlap = sizes
    source = "".join(w + separators[i % len(separators)] for i, w in enumerate(words))
    spans = TOK.encode_with_offsets(source)
    chunks = TokenWindowChunker(max_tokens, overlap).chunk(source)
    token_sets = [
        [i for i, (a, b) in enumerate(spans) if c.start_char <= a and b <= c.end_char]
        for c in chunks
    ]
    for tokens in token_sets[:-1]:
        assert len(tokens) == max_tokens
    for before, after in itertools.pairwise(token_sets):
        assert after[0] - before[0] == max_tokens - overlap
        assert len(set(before) & set(after)) == overlap
    if chunks:
        assert token_sets[-1][-1] == len(spans) - 1
