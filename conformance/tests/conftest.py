"""Fixtures of the conformance tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance_support import ROOT


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
