"""Views of a run that are not the console: the widget's state, the static HTML page, notebook display."""
