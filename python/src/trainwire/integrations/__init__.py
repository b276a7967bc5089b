"""Integrations with training frameworks.

Each submodule imports its framework on import; this package imports none of them, so
`import trainwire` stays light. Integrations import the core, never each other.
"""
