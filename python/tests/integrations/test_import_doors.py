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
    ("ray.tune", "ray", "ray"),
    ("lightning_logger", "lightning", "lightning"),
    ("lightning.logger", "lightning", "lightning"),
    ("transformers.callback", "transformers", "transformers"),
]

#: the paths users import (the framework folders and the paths from before them) and the
#: names each must give
PUBLIC_NAMES = {
    "transformers": ["attach", "TrainwireCallback", "checkpoint_origin", "CHECKPOINT_ORIGIN_FILE"],
    "lightning": ["TrainwireCallback", "TrainwireLogger", "CHECKPOINT_KEY"],
    "lightning_logger": ["TrainwireLogger"],
    "keras": ["attach", "TrainwireCallback"],
    "accelerate": ["TrainwireTracker"],
    "optuna": ["OptunaSearch"],
    "ray.tune": ["TuneSearch"],
    "ray.train": ["TrainDriver"],
    "ray_tune": ["TuneSearch"],
    "ray_train": ["TrainDriver"],
    "distributed": ["agreed_stop", "all_ranks_agree", "all_ranks_max"],
}

NAMES_PROBE = """
import importlib, os
os.environ.setdefault("KERAS_BACKEND", "torch")
for path, names in {names!r}.items():
    module = importlib.import_module("trainwire.integrations." + path)
    print(path, *[name for name in names if not hasattr(module, name)])
"""

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


def test_every_public_path_gives_its_names() -> None:
    code = NAMES_PROBE.format(names=PUBLIC_NAMES)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    missing = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert sorted(line.split(" ")[0] for line in done.stdout.splitlines()) == sorted(PUBLIC_NAMES)
    assert missing == {}
