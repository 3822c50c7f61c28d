"""The report's cells and tables: how a number, a time and a size are written (a dash for what
was not measured), and a Markdown table of rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Row = Sequence[object]


def fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.{digits}f}"
    return str(value)


def ms(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def table(header: Row, rows: Iterable[Row]) -> str:
    lines = [
        "| " + " | ".join(str(h) for h in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def mib(value: int | None) -> str:
    return "—" if value is None else f"{value / 2**20:.1f}"
