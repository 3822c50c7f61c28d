"""The dashboard's HTML and its chart, for any text a memory, a query or a ledger may hold
(hypothesis): user strings never add an element or an attribute, and come back as text; the
chart draws one bar per day, scaled to the largest; and only loopback is served unasked."""

from __future__ import annotations

import ipaddress
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.dashboard import pages
from engram.dashboard.chart import HEIGHT, PAD, bar_chart
from engram.dashboard.server import check_host
from engram.errors import ConfigError

Shape = list[tuple[str, tuple[str, ...]]]


class Structure(HTMLParser):
    """The elements of a page (tag and attribute names, in order) and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shape: Shape = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.shape.append((tag, tuple(name for name, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.shape.append((f"/{tag}", ()))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Structure:
    parser = Structure()
    parser.feed(html)
    parser.close()
    return parser


def memory(value: str) -> dict[str, Any]:
    return {
        "id": value,
        "path": value,
        "title": value,
        "type": value,
        "scope": value,
        "created_at": value,
        "status": value,
        "superseded_by": value,
    }


def rendered(value: str) -> list[str]:
    """Every page, with ``value`` in each field a user (or a file) controls."""
    listing = {"by_type": {value: 1}, "by_scope": {value: 2}, "history": 0}
    listing["memories"] = [memory(value)]
    hit = {"title": value, "path": value, "source": value, "score": 0.5, "snippet": value}
    results = {"query": value, "degraded": True, "warnings": [value], "hits": [hit]}
    source = {"documents": 1, "chunks": 2, "pending": 0, "last_indexed": value}
    index = {"store": value, "embedder": value, "identity": value, "documents": 1, "chunks": 2}
    index |= {"sources": {value: source}, "embedding_cache": None}
    day = {"day": value, "requests": 1, "errors": 0, "tokens": 10, "cost_usd": 0.1}
    usage = {"ledger": value, "error": value, "days": [day]}
    event = {"when": value, "kind": value, "what": value, "error": value}
    activity = {"events": [event], "errors": 1, "not_recorded": value}
    entry = {"when": value, "memory_id": value, "path": value, "status": value}
    entry |= {"why": value, "wording": value}
    return [
        pages.memories_page(listing, value, results),
        pages.memory_page(
            {
                "memory": memory(value),
                "frontmatter": {value: value},
                "text": value,
                "chain": [],
                "entries": [entry],
            }
        ),
        pages.index_page(index),
        pages.usage_page(usage),
        pages.activity_page(activity),
        pages.not_found(value),
    ]


PLAIN = [parse(html).shape for html in rendered("x")]
# Text built mostly from markup's own pieces, so tags, attributes and entities come up often.
MARKUP = st.sampled_from(["<", ">", "&", '"', "'", "=", "/", "!--", "a", "b ", "script", "#x3c;"])
HOSTILE = st.lists(MARKUP | st.text(max_size=3), min_size=1).map("".join).filter(bool)


@settings(max_examples=150, deadline=None)
@given(HOSTILE)
def test_user_strings_add_no_element_and_read_back_as_text(value: str) -> None:
    for html, plain in zip(rendered(value), PLAIN, strict=True):
        page = parse(html)
        assert page.shape == plain
        assert value in "".join(page.text)


def test_a_script_title_is_text() -> None:
    html = rendered("<script>alert(1)</script>")[1]
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=60))
def test_the_chart_draws_one_bar_per_day_scaled_to_the_largest(tokens: list[int]) -> None:
    days = [{"day": f"2026-01-{i:02d}", "tokens": t} for i, t in enumerate(tokens)]
    svg = bar_chart(days, "tokens", "tokens")
    if not any(tokens):
        assert "<svg" not in svg and "No tokens recorded" in svg
        return
    heights = [float(attrs["height"] or 0) for tag, attrs in svg_rects(svg) if tag == "rect"]
    assert len(heights) == len(tokens)
    tallest = HEIGHT - 2 * PAD
    assert max(heights) == pytest.approx(tallest)
    for height, value in zip(heights, tokens, strict=True):
        assert height == pytest.approx(tallest * value / max(tokens), abs=0.06)


def svg_rects(svg: str) -> list[tuple[str, dict[str, str | None]]]:
    found: list[tuple[str, dict[str, str | None]]] = []

    class Rects(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, dict(attrs)))

    Rects().feed(svg)
    return found


LOOPBACK_V4 = ipaddress.ip_network("127.0.0.0/8")


@given(st.ip_addresses())
def test_only_loopback_is_served_unless_remote_is_allowed(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    loopback = address in LOOPBACK_V4 if address.version == 4 else str(address) == "::1"
    if loopback:
        assert check_host(str(address), allow_remote=False) is None
    else:
        with pytest.raises(ConfigError, match="--allow-remote"):
            check_host(str(address), allow_remote=False)
        warning = check_host(str(address), allow_remote=True)
        assert warning and "reads every memory" in warning


def test_a_host_name_other_than_localhost_is_refused() -> None:
    assert check_host("localhost", allow_remote=False) is None
    with pytest.raises(ConfigError, match="not a loopback address"):
        check_host("example.org", allow_remote=False)


def test_frontmatter_lists_read_as_items_and_memory_ids_as_links() -> None:
    html = pages.memory_page(
        {
            "memory": memory("m"),
            "frontmatter": {
                "tags": ["billing", "<ops>"],
                "supersedes": ["fact-old-1", "fact/old 2"],
                "revisions": [{"wording": "Was 8080.", "at": "2026-01-02"}],
                "pinned": True,
                "expires": None,
            },
            "text": "t",
            "chain": [],
            "entries": [],
        }
    )
    front = html.split("<h2>Frontmatter</h2><table>", 1)[1].split("</table>", 1)[0]
    assert "[" not in front and "{" not in front, "no Python list or dict text"
    assert "billing, &lt;ops&gt;" in html
    assert '<a href="/memory/fact-old-1">fact-old-1</a>' in html
    assert '<a href="/memory/fact%2Fold%202">fact/old 2</a>' in html
    assert "wording: Was 8080.; at: 2026-01-02" in html
    assert "<td>true</td>" in html and "<td></td>" in html
