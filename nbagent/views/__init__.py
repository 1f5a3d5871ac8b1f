"""Layer 4, views: what a run looks like — built from events and memory only, nothing of Jupyter.

Modules:
    console    ConsoleView (rich): a run as it happens in a terminal; replay of a memory
    state      the widget's state (a run as JSON-able data + PNGs), from events or from memory
    html       the static HTML of a run (saved notebooks, nbconvert, GitHub)
    highlight  the Python highlighter of the static HTML (the widget's JS has its twin)
    links      which links the static HTML keeps (js/markdown.js `SAFE_URL` says the same)
    thought    the thought a step shows (js/step.js `thoughtText` says the same)
    changes    a namespace change in a few words (js/changes.js `changeText` says the same)
    permissions  what a step asked to be allowed (a refused file or host) and the answer, in a line
    code_diff  who changed a step's code before it ran (nbagent, you), each change with its diff
    task_preview  the task cut into parts: a described DataFrame's first rows as a small table
    gradio     gradio chat messages from a run's events
    tree       `agent.visualize()`: the agent as a rich tree
"""
