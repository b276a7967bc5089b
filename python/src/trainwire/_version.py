"""The package version: a leaf, so any module may name it without importing the package root."""

__version__ = "0.1.0"
