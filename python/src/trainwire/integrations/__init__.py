"""Integrations with training frameworks: one folder per framework above a shared core.

`core/` holds what more than one framework uses; `transformers/`, `lightning/`, `keras/`,
`accelerate/`, `optuna/` and `ray/` each import their framework on import, the core, and
never each other (import-linter's `integrations-frameworks` and `integrations-layers`
contracts). `distributed`, `lightning_logger`, `ray_tune` and `ray_train` keep the paths
users import. This package imports none of them, so `import trainwire` stays light.
"""
