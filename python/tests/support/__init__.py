"""What the tests of every folder share: stream readers and builders, the tiny trainers, processes.

Importable as `support` from any test: pytest puts `python/tests` (the folder of the shared
`conftest.py`, which holds no `__init__.py`) on `sys.path` before it collects a test.
"""
