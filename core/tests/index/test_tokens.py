"""The offline tokenizer: counts without special tokens, exact spans, no network."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import ConfigError
from engram.text.tokens import Tokenizer, default_tokenizer

TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\n"),
    max_size=80,
)
ASCII = st.text(alphabet=st.characters(max_codepoint=127, exclude_characters="\n"), max_size=80)
LINE = st.one_of(TEXT, ASCII, st.sampled_from(["unaffable", "The cat's mat", "x" * 120, "a-b_c"]))


def test_count_has_no_special_tokens() -> None:
    tok = default_tokenizer()
    assert tok.count("hello world") == 2
    assert tok.count("") == 0
    assert tok.count("   \n\t ") == 0


def test_no_padding_and_no_truncation_from_the_bundled_file() -> None:
    # The file ships padding and truncation at 128; both must be off.
    tok = default_tokenizer()
    assert tok.count("a") == 1
    assert tok.count(" ".join(["word"] * 1000)) == 1000


def test_offsets_point_into_the_original_text() -> None:
    text = "Héllo WORLD, unaffable 日本"
    spans = default_tokenizer().encode_with_offsets(text)
    assert [text[a:b] for a, b in spans] == [
        "Héllo",
        "WORLD",
        ",",
        "una",
        "ffa",
        "ble",
        "日",
        "本",
    ]


def test_words_group_the_pieces_of_one_word() -> None:
    spans = default_tokenizer().spans("unaffable cat")
    assert spans.words[0] == spans.words[1] == spans.words[2]
    assert spans.words[3] != spans.words[2]


def test_count_many_matches_count() -> None:
    tok = default_tokenizer()
    texts = ["one two", "", "unaffable", "日本語 text"]
    assert tok.count_many(texts) == [tok.count(t) for t in texts]
    assert tok.count_many([]) == []


def test_default_tokenizer_is_shared() -> None:
    assert default_tokenizer() is default_tokenizer()


def test_bundled_file_is_package_data() -> None:
    bundled = resources.files("engram") / "_data" / "wordpiece-uncased.json"
    assert bundled.is_file()
    assert Tokenizer(str(bundled)).count("hello world") == 2


def test_unreadable_tokenizer_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot load tokenizer file .*reinstall engram"):
        Tokenizer(bad).count("x")


def test_loading_needs_no_network() -> None:
    # A fresh process where any socket use fails still loads and counts.
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network used')\n"
        "socket.socket = refuse\n"
        "socket.create_connection = refuse\n"
        "from engram.text.tokens import default_tokenizer\n"
        "print(default_tokenizer().count('offline tokenizer works'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert int(result.stdout) == default_tokenizer().count("offline tokenizer works")


@settings(deadline=None)
@given(TEXT)
def test_spans_are_ordered_and_inside_the_text(text: str) -> None:
    """Each token spans characters of the text, in order, without overlapping another; the
    pieces of one character the tokenizer splits (a Hangul syllable into its jamo: '긔' is
    two tokens) share that character's span."""
    tok = default_tokenizer()
    spans = tok.encode_with_offsets(text)
    assert len(spans) == tok.count(text)
    previous = (0, 0)
    for a, b in spans:
        assert a < b <= len(text)
        assert (a, b) == previous or previous[1] <= a
        previous = (a, b)


def test_the_pieces_of_one_split_character_share_its_span() -> None:
    assert default_tokenizer().encode_with_offsets("a 긔 b") == [(0, 1), (2, 3), (2, 3), (4, 5)]


@settings(deadline=None)
@given(TEXT, TEXT)
def test_counts_add_up_across_a_newline(first: str, second: str) -> None:
    # The markdown chunker counts lines separately and adds them up; this is why it may.
    tok = default_tokenizer()
    assert tok.count(first + "\n" + second) == tok.count(first) + tok.count(second)


def test_lone_surrogates_count_and_keep_offsets() -> None:
    # Text read with errors="surrogateescape" must not crash the tokenizer or shift offsets.
    tok = default_tokenizer()
    text = "caf\udce9 time"
    assert [text[a:b] for a, b in tok.encode_with_offsets(text)] == ["caf", "time"]
    assert tok.count(text) == 2
    assert tok.count_many([text]) == [2]


def _line_counts_of_the_whole(lines: list[str]) -> list[tuple[int, int]]:
    """The reference: the tokens of the lines joined by newlines, each given to the line it
    starts in, and the end of each line's last token (relative to the line)."""
    body = "\n".join(lines)
    offsets = default_tokenizer().spans(body).offsets if body else []
    out, begin = [], 0
    for line in lines:
        mine = [(a, b) for a, b in offsets if begin <= a < begin + len(line)]
        out.append((len(mine), mine[-1][1] - begin if mine else 0))
        begin += len(line) + 1
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(LINE, max_size=12), st.lists(LINE, max_size=6))
def test_line_counts_equal_the_tokens_of_the_whole_text(
    lines: list[str], seen_before: list[str]
) -> None:
    """Counting line by line, remembered or not, is what tokenizing the joined lines says:
    no token crosses a newline, whatever the characters (accents, CJK, controls, symbols)."""
    tok = Tokenizer()
    want = _line_counts_of_the_whole(lines)
    assert tok.line_counts(lines) == want  # nothing remembered yet
    tok.line_counts(seen_before + lines[::2])
    assert tok.line_counts(lines) == want  # partly or wholly remembered


def test_line_counts_remember_a_bounded_number_of_words(monkeypatch: pytest.MonkeyPatch) -> None:
    import engram.text.tokens as tokens

    monkeypatch.setattr(tokens, "WORDS_KEPT", 3)
    tok = Tokenizer()
    assert tok.line_counts(["one", "Two words,", "unaffable", "", " \t "]) == [
        (1, 3),
        (3, 10),
        (3, 9),
        (0, 0),
        (0, 0),
    ]
    assert list(tok._words) == ["words", ",", "unaffable"]  # the newest, oldest dropped


@settings(max_examples=100, deadline=None)
@given(st.lists(st.from_regex(r"[!-~]{1,120}", fullmatch=True), max_size=30))
def test_new_words_counted_in_one_call_count_as_each_alone(words: list[str]) -> None:
    """A document's new words go to the tokenizer joined in one call; each must cost what it
    costs alone (WordPiece cuts words apart, and a word past its length limit is one [UNK])."""
    lines = [" ".join(words), *words, "x" * 150]
    want = [_line_counts_of_the_whole([line])[0] for line in lines]
    assert Tokenizer().line_counts(lines) == want
