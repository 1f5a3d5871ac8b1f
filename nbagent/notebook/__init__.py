"""Layer 5, notebook: everything that needs Jupyter — the widget, its display, its buttons, the save hook.

Importing this package imports nothing of Jupyter; each module does, when used.

Modules:
    kernel     the one "are we in a kernel?" check (without importing IPython)
    display    which views watch a run (widget, console or none) and showing the live widget
    widget     AgentWidget: the anywidget that shows a run (state in traitlets, events as messages)
    bundle     how an AgentMemory shows itself in a notebook (widget view + static HTML + text)
    driver     RunDriver: the widget's buttons and prepared runs (a worker thread drives them)
    channel    ControlChannel: the receive-only comm the buttons use, heard while a cell runs
    save_hook  the Jupyter server pre-save hook that keeps finished runs as static HTML
    magic_input  what %%agent checks before a run: options, usage line, `--help`, `%agent …?`, sensitive imports
    hint       the opt-in startup hint for %%agent before %load_ext nbagent (`nbagent hint install`)
    answer_display  the `%%agent --quiet` cell's answer shown as a plain value (25124.05), the value unchanged
    scratch    `%agent --undo` and `%agent --keep`: the last run undone (its -o variable too), scratch names brought in
"""
