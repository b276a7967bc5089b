"""Optuna integration: one trainwire stream per study (`search`)."""

from trainwire.integrations.optuna.search import OptunaSearch

__all__ = ["OptunaSearch"]
