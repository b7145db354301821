"""toolsight's version, in a module of its own so any layer can name it without importing the package root."""

__version__ = "0.1.0"
