"""What more than one framework's integration uses: the run's lifecycle (`lifecycle`), the
shielded hooks (`hooks`), the loop's progress and memory (`loop_progress`, `memory_probe`),
the ranks' agreed stop (`distributed`) and a search's run (`search`, `study`, `tune_search`).

The core imports no framework folder; a framework folder imports the core and never another
framework folder (import-linter's `integrations-*` contracts). This package imports nothing,
so a module that needs a library (`tune_search`: ray) costs only its importer.
"""
