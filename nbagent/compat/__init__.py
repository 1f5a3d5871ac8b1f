"""Layer 7, compat: what smolagents users import that has no other home here.

Modules:
    legacy  ManagedAgent (deprecated in smolagents 1.8) and from_hub
    paths   smolagents' module paths (`nbagent.memory`, `nbagent.agent_types`, …) as aliases of the real modules

Importing this package imports neither module: the package root loads `paths` at
`import nbagent`, and `legacy` (which needs the agents) only when its names are used.
"""
