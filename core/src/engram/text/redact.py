"""Privacy: ``<private>…</private>`` spans never reach storage, an embedder, an extractor or a log.

Applied on every path into storage. Spans nest (``<private>a <private>b</private> c</private>``
hides ``c`` too), and the tags tolerate case and inner whitespace (``< PRIVATE >``,
``</private >``). An unclosed ``<private>`` hides everything after it: when in doubt, leave it
out. A stray closing tag hides nothing and is dropped.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"<\s*(/?)\s*private\s*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """``text`` with every private span removed (line breaks inside kept, so line numbers hold)."""
    if "<" not in text:
        return text
    out: list[str] = []
    depth = 0
    at = 0
    for tag in _TAG.finditer(text):
        piece = text[at : tag.start()]
        out.append(piece if depth == 0 else "\n" * piece.count("\n"))
        if tag.group(1):
            depth = max(0, depth - 1)
        else:
            depth += 1
        at = tag.end()
    rest = text[at:]
    out.append(rest if depth == 0 else "\n" * rest.count("\n"))
    return "".join(out)


def strip_private_data(value: object) -> object:
    """``value`` (frontmatter: strings, lists, mappings) with every string's private spans
    removed, keys included: what a read path shows of data a person may have typed a span into."""
    if isinstance(value, str):
        return strip_private(value)
    if isinstance(value, list | tuple):
        return [strip_private_data(v) for v in value]
    if isinstance(value, dict):
        return {strip_private(str(k)): strip_private_data(v) for k, v in value.items()}
    return value


def has_private_tag(text: str) -> bool:
    """Whether ``text`` holds a ``<private>`` or ``</private>`` tag (names must not)."""
    return _TAG.search(text) is not None
