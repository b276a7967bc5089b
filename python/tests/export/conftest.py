"""What the export tests share: one MLflow store for the modules that only add experiments to it
(creating a store's tables takes MLflow several seconds)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shared_tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store; each test uses experiments of its own names."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow-shared') / 'store.db'}"
