"""The conformance suite: one bar every backend, ours or a third party's, must clear.

Subclass a suite in your own tests and provide one fixture; see docs/plugins/testing.md::

    from engram.testing import StoreSuite

    class TestMyStore(StoreSuite):
        @pytest.fixture
        def store(self, tmp_path):
            s = MyStore(MyOptions(path=tmp_path / "db"))
            yield s
            s.close()

Installed with ``pip install "engram[testing]"``. Core registers no pytest11 plugin: nothing
loads until you import this package.
"""

import pytest

# Editable installs skip pytest's automatic assertion rewriting for non-test modules; ask for it
# so suite failures show the compared values.
pytest.register_assert_rewrite(
    "engram.testing.store_suite",
    "engram.testing.embedder_suite",
    "engram.testing.searcher_suite",
    "engram.testing.extractor_suite",
    "engram.testing.integrity",
    "engram.testing.state_machine",
    "engram.testing.migration",
    "engram.testing.origin_suite",
    "engram.testing.host_suite",
)

from engram.testing.embedder_suite import EmbedderSuite  # noqa: E402
from engram.testing.extractor_suite import ExtractorSuite  # noqa: E402
from engram.testing.host_suite import HostSuite  # noqa: E402
from engram.testing.integrity import SuiteIntegrity  # noqa: E402
from engram.testing.origin_suite import OriginViewSuite  # noqa: E402
from engram.testing.searcher_suite import SearcherSuite  # noqa: E402
from engram.testing.store_suite import StoreSuite  # noqa: E402

__all__ = [
    "EmbedderSuite",
    "ExtractorSuite",
    "HostSuite",
    "OriginViewSuite",
    "SearcherSuite",
    "StoreSuite",
    "SuiteIntegrity",
]
