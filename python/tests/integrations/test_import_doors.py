"""Importing an integration without its framework: an `ImportError` naming the extra to install.

Each import runs in a fresh interpreter where the framework is hidden (`sys.modules[name] =
None`, what Python does for a module that must not be imported), the integration's
other dependencies installed as usual.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

#: (integration module, hidden top-level module, the extra the message must name)
DOORS = [
    ("transformers", "transformers", "transformers"),
    ("transformers", "accelerate", "transformers"),
    ("accelerate", "accelerate", "transformers"),
    ("lightning", "lightning", "lightning"),
    ("keras", "keras", "keras"),
    ("optuna", "optuna", "optuna"),
    ("ray_tune", "ray", "ray"),
]

PROBE = """
import sys
sys.modules[{hidden!r}] = None
try:
    import trainwire.integrations.{integration}
except ImportError as error:
    print(type(error).__name__, error.name, error, sep="|")
else:
    print("imported")
"""


@pytest.mark.parametrize(("integration", "hidden", "extra"), DOORS)
def test_an_integration_without_its_framework_names_the_extra(integration: str, hidden: str, extra: str) -> None:
    code = PROBE.format(hidden=hidden, integration=integration)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    kind, name, message = done.stdout.strip().split("|", 2)
    assert (kind, name) == ("MissingExtra", hidden)
    assert message.endswith(f"pip install 'trainwire[{extra}]'")
