"""The Python tests: one folder per subpackage of `trainwire`, and `support/` shared by all.

This file's folder holds no `__init__.py`, so pytest puts it on `sys.path` when it loads this
file, before any test: `from support.stream_files import stream_of` works from every folder.
The same import mode needs each test file's name to be unique across the folders.
"""

import os
import signal
import tempfile
from collections.abc import Iterator

import pytest

# the runs cache (`trainwire.reader.run_cache`) of every test and its subprocesses in a folder
# of this session's, never the user's; a test of the cache points it elsewhere itself
os.environ["TRAINWIRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="trainwire-test-cache-")


#: the handlers the session began with: a library that installs its own (Ray's `init` takes
#: SIGTERM, in a fixture that outlives its test) must not change what a later test's `Run` sees
_SIGNALS = [
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGBREAK") if hasattr(signal, name)
]
_SESSION_HANDLERS = {number: signal.getsignal(number) for number in _SIGNALS}


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """Each test starts and ends with the session's own handlers of the signals a run listens
    to (SIGUSR1 stands in for Windows' SIGBREAK in the tests)."""
    _restore_handlers()
    yield
    _restore_handlers()


def _restore_handlers() -> None:
    for number, handler in _SESSION_HANDLERS.items():
        if handler is not None and signal.getsignal(number) is not handler:
            signal.signal(number, handler)
