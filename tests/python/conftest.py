"""pytest set-up for the Python module's tests: the host fixture, and a
summary line in doctest's format so that tools/run-tests.sh counts every
test case of this target."""
import pytest

import support


@pytest.fixture
def host():
    """A PMIxServer in this process (finalized afterwards, whatever happened)."""
    h = support.Host()
    yield h
    h.close()


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    skipped = len(stats.get("skipped", []))
    terminalreporter.write_line("[doctest] test cases: %d | %d passed | %d failed | %d skipped"
                                % (passed + failed + skipped, passed, failed, skipped))
