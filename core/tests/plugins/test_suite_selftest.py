"""The conformance suite catches broken backends.

Each store below is the reference ``MemoryStore`` with ONE behaviour broken on purpose. pytest runs
the real ``StoreSuite`` over it in a subprocess (pytester), the way a third party runs the suite on
their backend, and the run must fail: in the suite tests that pin that behaviour down, with a
report that names what broke. The unbroken store, run the same way, must pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.filters import Filter, matches
from engram.models import Chunk, Hit
from engram.search import tokenize
from engram.testing import StoreSuite
from engram.testing.integrity import CHECK

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parents[2]
EXAMPLE = REPO / "tests" / "example_plugin"

# --- stores that break one behaviour each ------------------------------------------------------


class ForgetsDeletes(MemoryStore):
    """``delete`` and ``delete_documents`` do nothing."""

    def delete(self, ids: Sequence[str]) -> None:
        """Deletes nothing."""

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Deletes nothing."""


class StaleKeywordIndex(MemoryStore):
    """``delete`` removes the row and its vector but not its keyword-index entry (an FTS table
    left out of the delete): deleted chunks keep turning up in keyword search."""

    def __init__(self, options: MemoryStoreOptions | None = None) -> None:
        super().__init__(options)
        self._ghosts: dict[str, Chunk] = {}

    def delete(self, ids: Sequence[str]) -> None:
        self._ghosts.update((c.id, c) for c in self.get(ids))
        super().delete(ids)

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        super().upsert(chunks)
        for c in chunks:
            self._ghosts.pop(c.id, None)

    def reset(self) -> None:
        super().reset()
        self._ghosts.clear()

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        words = set(tokenize(query))
        ghosts = [
            Hit(chunk=c, score=0.01)
            for c in self._ghosts.values()
            if words & set(tokenize(c.text)) and (filter is None or matches(filter, c.metadata))
        ]
        return (super().keyword_search(query, k, filter) + ghosts)[:k]


class IgnoresFilters(MemoryStore):
    """Vector and keyword search drop the filter argument."""

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        return super().vector_search(vector, k)

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        return super().keyword_search(query, k)


class PostFiltersTopK(MemoryStore):
    """Vector search takes the unfiltered top k, then drops the hits the filter rejects."""

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        hits = super().vector_search(vector, k)
        return [h for h in hits if filter is None or matches(filter, h.chunk.metadata)]


class ReversesHits(MemoryStore):
    """Both searches return the right hits, worst first."""

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        return super().vector_search(vector, k, filter)[::-1]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        return super().keyword_search(query, k, filter)[::-1]


def _without_metadata(chunk: Chunk) -> Chunk:
    return chunk.model_copy(update={"metadata": {}})


class DropsMetadata(MemoryStore):
    """``get`` and both searches return chunks with ``metadata={}`` (filters still work)."""

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        return [_without_metadata(c) for c in super().get(ids)]

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        hits = super().vector_search(vector, k, filter)
        return [h.model_copy(update={"chunk": _without_metadata(h.chunk)}) for h in hits]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        hits = super().keyword_search(query, k, filter)
        return [h.model_copy(update={"chunk": _without_metadata(h.chunk)}) for h in hits]


class StringifiesNumbers(MemoryStore):
    """``get`` returns numeric metadata as strings (a text column without a JSON round trip)."""

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        return [
            c.model_copy(
                update={
                    "metadata": {
                        key: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                        for key, v in c.metadata.items()
                    }
                }
            )
            for c in super().get(ids)
        ]


class MutatesInputs(MemoryStore):
    """``upsert`` stamps a key into the metadata dict of each chunk it is handed."""

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        for c in chunks:
            c.metadata["indexed"] = True
        super().upsert(chunks)


class FitsAnyDimension(MemoryStore):
    """Pads or truncates vectors to the index dimension instead of refusing another length."""

    def _fit(self, vector: Sequence[float]) -> list[float]:
        identity = self.get_identity()
        if identity is None:
            return list(vector)
        return (list(vector) + [0.0] * identity.dimension)[: identity.dimension]

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        super().upsert(
            [
                c if c.vector is None else c.model_copy(update={"vector": self._fit(c.vector)})
                for c in chunks
            ]
        )

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        return super().vector_search(self._fit(vector), k, filter)


# --- running the suite in a subprocess ----------------------------------------------------------

# What a third party writes: one StoreSuite subclass and a fixture yielding a fresh, empty store.
HARNESS = """
import pytest

from engram.testing import StoreSuite
from test_suite_selftest import {store}


class TestStore(StoreSuite):
    @pytest.fixture
    def store(self):
        store = {store}()
        yield store
        store.close()
{extra}
"""

# The suite's state machine keeps its own budget (examples, steps); a failing run here skips
# hypothesis's shrink and explain phases, which only polish the report and take minutes.
CONFTEST = """
from hypothesis import Phase, settings

settings.register_profile(
    "selftest",
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    report_multiple_bugs=False,
)
settings.load_profile("selftest")
"""

FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) \S+?::\w+::(test_\w+)", re.MULTILINE)
SECTION_HEADER = re.compile(
    r"^_+ (?:ERROR at \w+ of )?\w+\.(test_\w+)(?:\[.*\])? _+$", re.MULTILINE
)


@dataclass
class SuiteRun:
    """A finished pytest run, read the way a developer reads it: failed tests and their reports."""

    result: pytest.RunResult
    output: str = field(init=False)

    def __post_init__(self) -> None:
        self.output = self.result.stdout.str()

    @property
    def outcomes(self) -> dict[str, int]:
        return self.result.parseoutcomes()

    @property
    def failed(self) -> set[str]:
        """Suite test names (without parameters) listed as FAILED or ERROR in the summary."""
        return set(FAILED_LINE.findall(self.output))

    def report(self, test: str) -> str:
        """The failure reports of ``test`` (every parameter set), as printed by pytest."""
        body = self.output.split("short test summary info")[0]
        parts = SECTION_HEADER.split(body)
        # split() alternates [preamble, name, text, name, text, ...]
        return "\n".join(
            text for name, text in zip(parts[1::2], parts[2::2], strict=True) if name == test
        )


def suite_size(suite: type) -> int:
    """How many test items one subclass of ``suite`` yields (one per parameter set)."""
    total = 0
    for name in dir(suite):
        if not name.startswith("test_"):
            continue
        items = 1
        for mark in getattr(getattr(suite, name), "pytestmark", []):
            if mark.name == "parametrize":
                items *= len(mark.args[1])
        total += items
    return total


@pytest.fixture
def quick_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pytest subprocess does only its own work: the default state-machine budget, and no
    unrelated pytest plugins that happen to be installed (pytest rewrites their modules on every
    start when bytecode is not written, which costs seconds per run)."""
    monkeypatch.delenv("ENGRAM_THOROUGH", raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


# hypothesis's own pytest plugin stays on, as in any project that installs hypothesis.
PYTEST_ARGS = ("-p", "_hypothesis_pytestplugin", "-p", "no:cacheprovider", "-rfE")

RunSuite = Callable[..., SuiteRun]


@pytest.fixture
def run_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, quick_subprocess: None
) -> RunSuite:
    """``run_suite(store_class, *pytest_args, extra=...)`` runs the StoreSuite over that store;
    ``extra`` is appended to the body of the StoreSuite subclass."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makeconftest(CONFTEST)

    def run(store: type[MemoryStore], *args: str, extra: str = "") -> SuiteRun:
        pytester.makepyfile(test_store=HARNESS.format(store=store.__name__, extra=extra))
        result = pytester.runpytest_subprocess(
            *PYTEST_ARGS, "--import-mode=importlib", *args, timeout=300
        )
        return SuiteRun(result)

    return run


# --- the broken stores fail ---------------------------------------------------------------------


@dataclass(frozen=True)
class Breakage:
    store: type[MemoryStore]
    #: suite test that must fail → a pattern its failure report must show (from the test's
    #: docstring, its assertion message, or the state machine's failing step)
    must_fail: dict[str, str]
    #: a ``-k`` expression; None runs the full suite
    select: str | None = None


BREAKAGES = [
    Breakage(
        ForgetsDeletes,
        {
            "test_delete_removes_from_vector_and_keyword_results": "Deleted chunks vanish",
            "test_delete_unknown_ids_is_not_an_error": "Deleting what is not there",
            "test_delete_documents_removes_their_chunks_and_records": "removes every chunk",
            "test_state_machine_against_the_reference": r"state\.delete(_documents)?\(",
        },
    ),
    Breakage(
        IgnoresFilters,
        {
            "test_filters_follow_the_written_semantics": "honour filters exactly",
            "test_filtered_vector_search_is_exact_not_post_filtered": "post-filters",
            "test_filter_values_are_never_spliced_into_the_query": "never widens",
            "test_state_machine_against_the_reference": r"(\d+ hits|matched .*), reference",
        },
    ),
    Breakage(
        ReversesHits,
        {
            "test_vector_search_matches_the_exact_reference": "hits unsorted",
            "test_keyword_search_ranks_more_matching_terms_higher": "ranks above",
            "test_state_machine_against_the_reference": r"id-\d+=\S+ vs id-\d+=",
        },
    ),
    Breakage(
        DropsMetadata,
        {
            "test_upsert_then_get_returns_what_was_written": "metadata must round-trip exactly",
            "test_metadata_values_round_trip": "Metadata keeps its JSON types",
            "test_upsert_overwrites_text_vector_and_metadata": "replaces everything",
            "test_state_machine_against_the_reference": r"\{\}\)\} != ",
        },
    ),
    Breakage(
        StringifiesNumbers,
        {"test_metadata_values_round_trip": "stringifies"},
        select="metadata or upsert_then_get",
    ),
    Breakage(
        StaleKeywordIndex,
        {
            "test_delete_removes_from_vector_and_keyword_results": "FTS table keeps rows",
            "test_state_machine_against_the_reference": r"keyword '.*' matched",
        },
        select="delete or state_machine",
    ),
    Breakage(
        PostFiltersTopK,
        {"test_filtered_vector_search_is_exact_not_post_filtered": "truncated top-k"},
        select="filter",
    ),
    Breakage(
        MutatesInputs,
        {"test_upsert_does_not_mutate_inputs": "must copy what it keeps"},
        select="upsert",
    ),
    Breakage(
        FitsAnyDimension,
        {"test_wrong_dimension_is_refused_and_nothing_changes": "DimensionMismatch"},
        select="dimension",
    ),
]


@pytest.mark.parametrize("case", BREAKAGES, ids=lambda case: case.store.__name__)
def test_a_broken_store_fails_the_tests_that_pin_its_behaviour(
    run_suite: RunSuite, case: Breakage
) -> None:
    args = ("-k", case.select) if case.select else ()
    run = run_suite(case.store, *args)

    assert run.result.ret != 0, f"{case.store.__name__} passed the suite:\n{run.output}"
    missing = set(case.must_fail) - run.failed
    assert not missing, f"{sorted(missing)} did not fail; failed: {sorted(run.failed)}"
    for test, pattern in case.must_fail.items():
        assert re.search(pattern, run.report(test)), f"the report of {test} lacks {pattern!r}"
    assert CHECK not in run.failed
    if case.select is None:
        # Every suite test ran, and most passed: the failures point at the one breakage.
        assert run.outcomes["passed"] + run.outcomes["failed"] == suite_size(StoreSuite)
        assert run.outcomes["passed"] > 2 * run.outcomes["failed"]


def test_the_reference_store_passes_the_same_harness(run_suite: RunSuite) -> None:
    run = run_suite(MemoryStore)
    assert run.result.ret == 0, run.output
    assert run.outcomes == {"passed": suite_size(StoreSuite)}


# --- the integrity check --------------------------------------------------------------------------


def test_deleting_a_suite_test_fails_the_integrity_check(run_suite: RunSuite) -> None:
    run = run_suite(MemoryStore, "-k", CHECK, extra="    test_upsert_is_idempotent = None\n")
    assert run.result.ret != 0
    assert run.failed == {CHECK}
    assert "test_upsert_is_idempotent was removed" in run.report(CHECK)


def test_gutting_a_suite_test_fails_the_integrity_check(run_suite: RunSuite) -> None:
    gutted = """
    def test_upsert_is_idempotent(self):
        pass
"""
    run = run_suite(MemoryStore, "-k", f"{CHECK} or test_upsert_is_idempotent", extra=gutted)
    assert run.result.ret != 0
    assert run.failed == {CHECK}
    report = run.report(CHECK)
    assert "test_upsert_is_idempotent is overridden without @pytest.mark.xfail" in report
    assert "weakens the conformance suite" in report


def test_an_xfailed_override_with_a_reason_passes_the_integrity_check(
    run_suite: RunSuite,
) -> None:
    """The sanctioned way to live with a known gap: xfail with a reason, strict, still running."""
    known_gap = """
    @pytest.mark.xfail(reason="deletes are not implemented yet", strict=True)
    def test_delete_removes_from_vector_and_keyword_results(self, ready):
        super().test_delete_removes_from_vector_and_keyword_results(ready)
"""
    run = run_suite(
        ForgetsDeletes,
        "-k",
        f"{CHECK} or test_delete_removes_from_vector_and_keyword_results",
        extra=known_gap,
    )
    assert run.result.ret == 0, run.output
    assert run.outcomes == {"passed": 1, "xfailed": 1, "deselected": suite_size(StoreSuite) - 2}


def test_overriding_the_integrity_check_itself_is_refused_at_class_creation() -> None:
    with pytest.raises(TypeError, match=f"may not override the suite's integrity check {CHECK}"):

        class Sneaky(StoreSuite):
            def test_no_suite_test_is_removed_or_overridden(self) -> None:
                """Always passes."""


# --- the example plugin, as a third party runs it ----------------------------------------------


def test_the_example_plugin_conformance_file_passes_as_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, quick_subprocess: None
) -> None:
    """tests/example_plugin/tests/test_conformance.py, copied verbatim next to nothing else, with
    only the plugin's source on the path (as after ``pip install engram-example-store``)."""
    monkeypatch.setenv("PYTHONPATH", str(EXAMPLE / "src"))
    source = (EXAMPLE / "tests" / "test_conformance.py").read_text(encoding="utf-8")
    pytester.makepyfile(test_conformance=source)
    result = pytester.runpytest_subprocess(*PYTEST_ARGS, timeout=300)
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes() == {"passed": suite_size(StoreSuite)}


def test_the_testing_guide_shows_the_example_file_verbatim() -> None:
    guide = (REPO / "docs" / "plugins" / "testing.md").read_text(encoding="utf-8")
    shown = re.search(
        r"<!-- example: tests/example_plugin/tests/test_conformance.py -->\n```python\n(.*?)```",
        guide,
        flags=re.DOTALL,
    )
    assert shown, "docs/plugins/testing.md lost the marked example block"
    example = (EXAMPLE / "tests" / "test_conformance.py").read_text(encoding="utf-8")
    assert shown.group(1) == example
