"""Text that cannot be stored: lone surrogates, which Python makes of bytes that are not UTF-8
(``engram remember "$(printf '\\xff')"``, a file decoded with ``surrogateescape``). No store, no
file and no JSON can hold them, so they are refused where text comes in, with a message that
says which text, instead of a validation error or a store error deep inside."""

from __future__ import annotations

from engram.errors import EngramError


class InvalidText(EngramError):
    """A text given to engram is not valid Unicode (bytes that were not UTF-8)."""


def is_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def require_unicode(text: str, what: str, error: type[EngramError] = InvalidText) -> None:
    """Raise ``error`` naming ``what`` and where, unless ``text`` is valid Unicode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(
            f"{what} is not valid UTF-8 text (a byte that is not UTF-8 at character "
            f"{exc.start}); give it as UTF-8"
        ) from None
