"""The ``with`` block every store and file handle closes, written once; imports nothing heavy,
so light modules (the usage ledger, the access log) can use it too. Public as
``engram.ClosingStore``."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class ClosingStore:
    """A base for stores (and other handles) that ``with`` closes: subclasses define ``close``."""

    def close(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define close()")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
