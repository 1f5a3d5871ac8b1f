"""Layer 4, views: what a run looks like — built from events and memory only, nothing of Jupyter.

Modules:
    console    ConsoleView (rich): a run as it happens in a terminal; replay of a memory
    state      the widget's state (a run as JSON-able data + PNGs), from events or from memory
    html       the static HTML of a run (saved notebooks, nbconvert, GitHub)
    highlight  the Python highlighter of the static HTML (the widget's JS has its twin)
    gradio     gradio chat messages from a run's events
    tree       `agent.visualize()`: the agent as a rich tree
"""
