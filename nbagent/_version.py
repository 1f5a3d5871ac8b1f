"""The package's identity, in one place (pyproject.toml reads the version from here)."""

__version__ = "0.1.0"
# What `pip install` takes: "nbagent" on the package index is an unrelated project. The import name,
# the command and `%load_ext` stay `nbagent`.
DISTRIBUTION_NAME = "jupyter-nbagent"
