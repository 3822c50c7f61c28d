"""Privacy: ``<private>…</private>`` spans never reach storage, an embedder, an extractor or a log.

Applied on every path into storage. An unclosed ``<private>`` hides everything after it: when
in doubt, leave it out.
"""

from __future__ import annotations

import re

_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)


def strip_private(text: str) -> str:
    """``text`` with every private span removed (line breaks inside kept, so line numbers hold)."""
    return _PRIVATE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
