"""The integrity check (the langchain-tests pattern): a backend may not quietly delete or gut a
suite test. Overriding a suite test is allowed only with an explicit ``xfail(reason=...)``.
"""

from __future__ import annotations

import inspect
from typing import Any

CHECK = "test_no_suite_test_is_removed_or_overridden"


class SuiteIntegrity:
    """Base of every suite; its one test compares the subclass with the suites it claims."""

    _conformance_suite = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if CHECK in vars(cls) and not cls.__dict__.get("_conformance_suite"):
            raise TypeError(f"{cls.__name__} may not override the suite's integrity check {CHECK}")

    def test_no_suite_test_is_removed_or_overridden(self) -> None:
        """Every suite test must still be the suite's own, or be marked ``xfail(reason=...)``.
        Failure: a subclass deleted a test (``test_x = None``) or overrode it with ``pass``;
        mark a test you cannot pass with ``@pytest.mark.xfail(reason="why", strict=True)``."""
        problems = []
        for suite in inspect.getmro(type(self)):
            if not suite.__dict__.get("_conformance_suite"):
                continue
            for name, original in vars(suite).items():
                if not name.startswith("test_") or not callable(original):
                    continue
                current = getattr(type(self), name, None)
                if current is original:
                    continue
                if current is None or not callable(current):
                    problems.append(f"{name} was removed")
                    continue
                marks = [m for m in getattr(current, "pytestmark", []) if m.name == "xfail"]
                if not any(
                    m.kwargs.get("reason") and m.kwargs.get("strict") is True for m in marks
                ):
                    problems.append(
                        f"{name} is overridden without @pytest.mark.xfail(reason=..., strict=True)"
                    )
        assert not problems, f"{type(self).__name__} weakens the conformance suite: " + "; ".join(
            problems
        )
