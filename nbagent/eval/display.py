"""The evaluation in a notebook: the live table (anywidget, js/eval/table.js), the rich results
display (summary, a plot of the score per agent, the table whose rows open a run in the step
widget below it) and a static HTML rendering of the same for saved notebooks and exports.

Static HTML is the `text/html` of every display bundle, marked like a finished nbagent run
(`<div class="nbagent nbagent-static" data-nbagent-run=... data-status=...>`), so the server's
save hook (nbagent's notebook save hook) keeps it as the output of a saved notebook once the
evaluation is over; while it runs, the widget view stays.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nbagent.eval.compare import display_cells
from nbagent.eval.intervals import round_ticks
from nbagent.eval.samples import Key

__all__ = [
    "CSS",
    "EvalPanel",
    "bundle",
    "comparisons_html",
    "header_html",
    "header_widget",
    "key_text",
    "note_html",
    "plot_svg",
    "progress_html",
    "results_html",
    "row_for",
    "summary_html",
    "widgets_available",
]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATIC_JS = Path(__file__).resolve().parent.parent / "static" / "eval.js"
MAX_STATIC_ROWS = 500
_TEXT = 300

CSS = """
.nbe { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  color: var(--jp-content-font-color1, #1f2328); --nbe-border: var(--jp-border-color2, #d1d9e0);
  --nbe-muted: var(--jp-content-font-color2, #59636e); --nbe-pass: #1a7f37; --nbe-fail: #cf222e; --nbe-part: #9a6700;
  --nbe-accent: var(--jp-brand-color1, #0969da); }
.nbe .nbe-line { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.nbe .nbe-status { font-weight: 600; }
.nbe .nbe-status-running { color: var(--nbe-accent); }
.nbe .nbe-status-done { color: var(--nbe-pass); }
.nbe .nbe-status-cancelled { color: var(--nbe-part); }
.nbe .nbe-counts { color: var(--nbe-muted); }
.nbe .nbe-bar { height: 4px; background: var(--nbe-border); border-radius: 2px; margin: 4px 0; max-width: 640px; }
.nbe .nbe-bar-fill { height: 100%; background: var(--nbe-accent); border-radius: 2px; }
.nbe .nbe-agents { display: flex; gap: 6px; flex-wrap: wrap; margin: 4px 0; }
.nbe .nbe-agent { border: 1px solid var(--nbe-border); border-radius: 10px; padding: 0 8px; }
.nbe .nbe-filters { display: flex; gap: 10px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
.nbe .nbe-hint { color: var(--nbe-muted); font-size: 0.9em; }
.nbe .nbe-table-wrap { max-height: 420px; max-width: 100%; overflow: auto; border: 1px solid var(--nbe-border);
  border-radius: 4px; box-sizing: border-box; }
/* JupyterLab gives the tables of rendered HTML (a saved notebook) equal fixed columns, right-aligned:
   ours size to their content, the long texts wrap. */
.nbe table.nbe-table, .nbe table.nbe-summary { border-collapse: collapse; width: 100%; table-layout: auto;
  margin: 0; font-size: inherit; }
.nbe table.nbe-summary { width: auto; margin: 4px 0 8px; }
.nbe .nbe-table th, .nbe .nbe-summary th { position: sticky; top: 0; background: var(--jp-layout-color2, #f6f8fa);
  text-align: left; padding: 3px 6px; cursor: pointer; white-space: nowrap; border-bottom: 1px solid var(--nbe-border); }
.nbe .nbe-summary th { position: static; cursor: default; }
.nbe .nbe-table td, .nbe .nbe-summary td { padding: 2px 6px; border-bottom: 1px solid var(--nbe-border);
  text-align: left; white-space: nowrap; vertical-align: top; }
.nbe .nbe-table td.nbe-c-task, .nbe .nbe-table td.nbe-c-expected, .nbe .nbe-table td.nbe-c-answer { white-space: normal; }
.nbe .nbe-text { overflow-wrap: break-word; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 3;
  overflow: hidden; min-width: 4em; max-width: 24em; }
.nbe td.nbe-c-task .nbe-text { min-width: 12em; max-width: 40em; }
.nbe .nbe-varies { color: var(--nbe-part); font-weight: 600; white-space: nowrap; }
.nbe .nbe-epoch-note { color: var(--nbe-part); max-width: 60em; }
.nbe tr.nbe-sig td.nbe-c-conclusion { color: var(--nbe-pass); font-weight: 600; }
.nbe tr.nbe-nosig td.nbe-c-conclusion { color: var(--nbe-muted); }
.nbe tr.nbe-row { cursor: pointer; }
.nbe tr.nbe-row:hover { background: var(--jp-layout-color2, #f6f8fa); }
.nbe tr.nbe-failing td:first-child { box-shadow: inset 3px 0 0 var(--nbe-fail); }
.nbe tr.nbe-selected, .nbe tr.nbe-selected:hover { background: var(--jp-brand-color3, #ddf4ff); }
.nbe tr.nbe-state-error td.nbe-c-state, .nbe tr.nbe-state-cancelled td.nbe-c-state,
.nbe tr.nbe-no-answer td.nbe-c-state { color: var(--nbe-fail); font-weight: 600; }
.nbe td.nbe-pass { color: var(--nbe-pass); font-weight: 600; }
.nbe td.nbe-fail { color: var(--nbe-fail); font-weight: 600; }
.nbe td.nbe-part { color: var(--nbe-part); font-weight: 600; }
.nbe .nbe-more, .nbe .nbe-note { color: var(--nbe-muted); padding: 4px 6px; }
.nbe .nbe-plot { margin: 4px 0 8px; }
.nbe .nbe-plot text { font-family: inherit; font-size: 11px; fill: currentColor; }
"""


# ---------------------------------------------------------------------------------------------- rows


def key_text(key: Key) -> str:
    return json.dumps(list(key))


def text_key(text: str) -> Key:
    agent, sample_id, epoch = json.loads(text)
    return (str(agent), str(sample_id), int(epoch))


def _short(value: Any, limit: int = _TEXT) -> str:
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split()) if len(text) < 10 * limit else " ".join(text[: 10 * limit].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def row_for(record: dict[str, Any], varies: bool | None = None) -> dict[str, Any]:
    """A record as a table row (texts shortened: the full run opens on click); `varies`: its task's answers
    differ between epochs (None: not known, one epoch)."""
    scores = record.get("scores") or {}
    errors = record.get("scorer_errors") or {}
    return {
        "key": key_text((record["agent"], str(record["id"]), int(record["epoch"]))),
        "agent": record["agent"],
        "id": str(record["id"]),
        "epoch": int(record["epoch"]),
        "task": _short(record.get("task")),
        "expected": _short(record.get("expected"), 120),
        "answer": _short(record.get("answer"), 160),
        "state": record.get("state") or "",
        "answered": record.get("answered"),  # False: the run ended without a final answer (scored as a failure)
        "outcome": record.get("outcome") or "",
        "steps": int(record.get("steps") or 0),
        "tokens": int(record.get("input_tokens") or 0) + int(record.get("output_tokens") or 0),
        "duration_s": round(float(record.get("duration_s") or 0.0), 3),
        "error": _short(record.get("error"), 500) or None,
        "scores": {
            k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)) for k, v in scores.items()
        },
        "scorer_errors": "; ".join(f"{k}: {v}" for k, v in errors.items()) or None,
        "nondeterministic": varies,
    }


# ---------------------------------------------------------------------------------------------- static HTML


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _score_cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<td class="nbe-score">–</td>'
    cls = "nbe-pass" if value >= 1 else "nbe-part" if value > 0 else "nbe-fail"
    text = str(int(value)) if float(value).is_integer() else f"{value:.2f}"
    return f'<td class="nbe-score {cls}">{text}</td>'


def _format_duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = max(0, round(seconds))
    h, m = divmod(s, 3600)
    m, s = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def samples_table_html(rows: list[dict[str, Any]], scorers: list[str]) -> str:
    head = "".join(
        f"<th>{_e(c)}</th>"
        for c in ["agent", "id", "epoch", "task", "expected", "answer", "state", "steps", "tokens", "time", *scorers]
    )
    body = []
    for row in rows[:MAX_STATIC_ROWS]:
        failing = (
            row["state"] in ("error", "cancelled")
            or row.get("answered") is False
            or row["scorer_errors"]
            or any(v is not None and v < 1 for v in row["scores"].values())
        )
        title = f' title="{_e(row["error"] or row["scorer_errors"])}"' if row["error"] or row["scorer_errors"] else ""
        cells = [
            row["agent"],
            row["id"],
            row["epoch"],
            row["task"],
            row["expected"],
            row["answer"],
            state_text(row),
            row["steps"],
            row["tokens"],
        ]
        names = ["agent", "id", "epoch", "task", "expected", "answer", "state", "steps", "tokens"]
        tds = "".join(_cell(n, c, row) for n, c in zip(names, cells))
        tds += f'<td class="nbe-c-duration_s">{row["duration_s"]:.1f} s</td>'
        tds += "".join(_score_cell(row["scores"].get(name)) for name in scorers)
        cls = f"nbe-row nbe-state-{_e(row['state'])}" + (" nbe-failing" if failing else "")
        cls += " nbe-no-answer" if row.get("answered") is False else ""
        cls += " nbe-varying" if row.get("nondeterministic") else ""
        body.append(f'<tr class="{cls}" data-key="{_e(row["key"])}"{title}>{tds}</tr>')
    more = len(rows) - MAX_STATIC_ROWS
    note = f'<div class="nbe-more">{more} more rows (see EvalResults.df)</div>' if more > 0 else ""
    return (
        f'<div class="nbe-table-wrap"><table class="nbe-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{note}</div>"
    )


def state_text(row: dict[str, Any]) -> str:
    """The state cell: the outcome of a run that ended without an answer ("no answer (max steps)"), else the state."""
    if row.get("answered") is False:
        return row.get("outcome") or row["state"]
    return row["state"]


VARIES = "answers or scores differ between epochs of this task: the model's sampling, not the agent, may decide"
_LONG = ("task", "expected", "answer")
NO_ANSWER_TITLE = "the run ended without a final answer: a failure for every scorer, its closing reply not scored"


def _cell(name: str, value: Any, row: dict[str, Any]) -> str:
    """A cell of the static table: long texts wrap (at most three lines), a varying answer is marked."""
    text = f'<div class="nbe-text">{_e(value)}</div>' if name in _LONG else _e(value)
    if name == "answer" and row.get("nondeterministic"):
        text += f'<span class="nbe-varies" title="{_e(VARIES)}"> · varies</span>'
    title = f' title="{_e(value)}"' if name in _LONG and value else ""
    if name == "state" and row.get("answered") is False:
        title = f' title="{_e(NO_ANSWER_TITLE)} (state {_e(row["state"])})"'
    return f'<td class="nbe-c-{name}"{title}>{text}</td>'


def note_html(note: str) -> str:
    return f'<div class="nbe-note nbe-epoch-note">{_e(note)}</div>' if note else ""


def comparisons_html(cells: list[dict[str, Any]]) -> str:
    """The paired comparisons (compare.display_cells of each) as a small table."""
    if not cells:
        return ""
    head = "".join(
        f"<th>{h}</th>" for h in ("agent − baseline", "scorer", "tasks", "difference [95%], p", "conclusion")
    )
    rows = []
    for c in cells:
        cls = "nbe-sig" if c["significant"] else "nbe-nosig"
        tds = "".join(
            f'<td class="nbe-c-{name}">{_e(c[name])}</td>'
            for name in ("pair", "scorer", "tasks", "difference", "conclusion")
        )
        rows.append(f'<tr class="{cls}">{tds}</tr>')
    return (
        '<table class="nbe-summary nbe-comparisons"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def progress_line_html(snapshot: dict[str, Any]) -> str:
    status = snapshot.get("status", "running")
    parts = [f"{snapshot.get('done', 0)}/{snapshot.get('total', 0)} samples"]
    if snapshot.get("errors"):
        parts.append(f"{snapshot['errors']} error{'s' if snapshot['errors'] != 1 else ''}")
    if snapshot.get("no_answer"):
        parts.append(f"{snapshot['no_answer']} no answer")
    if snapshot.get("cancelled"):
        parts.append(f"{snapshot['cancelled']} cancelled")
    tokens = int(snapshot.get("input_tokens") or 0) + int(snapshot.get("output_tokens") or 0)
    parts.append(f"{tokens:,} tokens")
    parts.append(f"{_format_duration(snapshot.get('elapsed_s'))} elapsed")
    if status == "running":
        remaining = snapshot.get("remaining_s")
        parts.append("– left" if remaining is None else f"~{_format_duration(remaining)} left")
    if snapshot.get("engine"):
        parts.append(snapshot["engine"])
    label = {"running": "Running", "done": "Done", "cancelled": "Cancelled"}.get(status, status)
    agents = "".join(
        f'<span class="nbe-agent"><b>{_e(a["agent"])}</b> '
        + _e(" · ".join(f"{s} {_fmt(a['scores'].get(s))}" for s in snapshot.get("scorers", [])))
        + f" ({a['done']} done{', ' + str(a['errors']) + ' err' if a['errors'] else ''}"
        + (f", {a['no_answer']} no answer" if a.get("no_answer") else "")
        + (f", {a['nondeterministic']} varying" if a.get("nondeterministic") else "")
        + ")</span>"
        for a in snapshot.get("agents", [])
    )
    return (
        f'<div class="nbe-progress" data-status="{_e(status)}"><div class="nbe-line">'
        f'<span class="nbe-status nbe-status-{_e(status)}">{_e(label)}</span>'
        f'<span class="nbe-counts">{_e(" · ".join(parts))}</span></div>'
        f'<div class="nbe-agents">{agents}</div>'
        f"{note_html(snapshot.get('note', ''))}{comparisons_html(snapshot.get('comparisons') or [])}</div>"
    )


def _fmt(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def _wrap(inner: str, status: str) -> str:
    # The marker of a static nbagent run (see the module docstring): the save hook keys on it.
    return (
        f'<div class="nbagent nbagent-static" data-nbagent-run="eval" data-status="{_e(status)}">'
        f'<style>{CSS}</style><div class="nbe nbe-static">{inner}</div></div>'
    )


def progress_html(snapshot: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The live progress (a tracker's snapshot) as static HTML: a front-end without widgets, a notebook saved mid-run."""
    return _wrap(progress_line_html(snapshot) + samples_table_html(rows, snapshot["scorers"]), snapshot["status"])


def summary_html(summary: Any, scorers: list[str]) -> str:
    """The summary DataFrame (EvalResults.summary()) as a small table: means with their 95% intervals."""
    import pandas as pd

    methods = summary.attrs.get("intervals") or {}
    head = ["agent", "samples", "epochs", "varying tasks"]
    head += [f"{name} [95%{', ' + methods[name] if methods.get(name) else ''}]" for name in scorers]
    head += ["errors", "no answer", "steps", "tokens", "time / sample"]
    rows = []
    for agent, row in summary.iterrows():
        varying = row["nondeterministic"]
        cells = [
            f"<td><b>{_e(agent)}</b></td>",
            f"<td>{int(row['samples'])}</td>",
            f"<td>{int(row['epochs'])}</td>",
            f"<td>{'–' if pd.isna(varying) else int(varying)}</td>",
        ]
        for name in scorers:
            mean, low, high = row[name], row[f"{name}_low"], row[f"{name}_high"]
            interval = "" if math.isnan(low) else f" <span class='nbe-counts'>[{low:.2f}, {high:.2f}]</span>"
            cells.append(f"<td>{_fmt(mean)}{interval}</td>")
        errors = int(row["errors"]) + int(row["scorer_errors"])
        cells.append(
            f"<td>{errors}{' + ' + str(int(row['cancelled'])) + ' cancelled' if row['cancelled'] else ''}</td>"
        )
        cells.append(f"<td>{int(row['no_answer'])}</td>")
        cells.append(f"<td>{_num(row['steps'], 1)}</td>")
        cells.append(f"<td>{_num(row['input_tokens'] + row['output_tokens'], 0)}</td>")
        cells.append(f"<td>{_num(row['duration_s'], 2)} s</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    header = "".join(f"<th{_TITLES.get(h, '')}>{_e(h)}</th>" for h in head)
    return f'<table class="nbe-summary"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


TIME_TITLE = (
    "mean seconds per sample; the agents took turns going first on each task and epoch, so neither always ran on "
    "the cache the other warmed, but samples that ran side by side (max_workers > 1) shared the CPU"
)
_TITLES = {"time / sample": f' title="{_e(TIME_TITLE)}"'}


def header_html(summary: Any, scorers: list[str], comparisons: list[dict[str, Any]], epoch_note: str) -> str:
    """What the results show above their table: the summary, the paired comparisons, the note, the plot."""
    cells = [display_cells(row) for row in comparisons]
    return summary_html(summary, scorers) + comparisons_html(cells) + note_html(epoch_note) + plot_svg(summary, scorers)


def _num(value: float, digits: int) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.{digits}f}"


def plot_svg(summary: Any, scorers: list[str], width: int = 420) -> str:
    """Bars of each scorer's mean per agent with their 95% intervals, as inline SVG (no plotting library)."""
    agents = list(summary.index)
    if not agents or not scorers:
        return ""
    colors = ["#0969da", "#bf8700", "#8250df", "#1a7f37", "#cf222e", "#57606a"]
    label_w, bar_h, gap, top = 110, 14, 6, 18
    group_h = len(scorers) * bar_h + gap
    height = top + len(agents) * group_h + 22
    plot_w = width - label_w - 40
    highs = [float(summary[c].max()) for s in scorers for c in (s, f"{s}_high")]
    maximum, ticks = round_ticks(max([1.0, *(h for h in highs if not math.isnan(h))]))
    x = lambda v: label_w + plot_w * max(0.0, min(v, maximum)) / maximum  # noqa: E731
    parts = [f'<svg class="nbe-plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    parts.append(f"<title>{_e(', '.join(scorers))} per agent, with 95% intervals</title>")
    for value in ticks:  # round numbers (nbagent.eval.intervals.round_ticks)
        parts.append(
            f'<line x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top - 4}" y2="{height - 20}" stroke="#d1d9e0"/>'
        )
        parts.append(f'<text x="{x(value):.1f}" y="{height - 6}" text-anchor="middle">{value:g}</text>')
    for i, agent in enumerate(agents):
        y0 = top + i * group_h
        parts.append(
            f'<text x="{label_w - 6}" y="{y0 + group_h / 2}" text-anchor="end" dominant-baseline="middle">{_e(agent)}</text>'
        )
        for j, name in enumerate(scorers):
            mean = summary.loc[agent, name]
            if math.isnan(mean):
                continue
            y = y0 + j * bar_h
            color = colors[j % len(colors)]
            parts.append(
                f'<rect x="{label_w}" y="{y + 1}" width="{x(mean) - label_w:.1f}" height="{bar_h - 3}" fill="{color}" opacity="0.8"><title>{_e(agent)} {_e(name)}: {mean:.3f}</title></rect>'
            )
            low, high = summary.loc[agent, f"{name}_low"], summary.loc[agent, f"{name}_high"]
            if not math.isnan(low):
                ym = y + bar_h / 2 - 0.5
                parts.append(
                    f'<line x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{ym}" y2="{ym}" stroke="currentColor" stroke-width="1.2"/>'
                )
    for j, name in enumerate(scorers):
        parts.append(f'<rect x="{label_w + j * 110}" y="2" width="10" height="10" fill="{colors[j % len(colors)]}"/>')
        parts.append(f'<text x="{label_w + j * 110 + 14}" y="11">{_e(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def results_html(
    summary: Any,
    records: list[dict[str, Any]],
    scorers: list[str],
    cancelled: bool,
    comparisons: list[dict[str, Any]] = (),
    epoch_note: str = "",
    varying: dict[tuple[str, str], bool | None] | None = None,
) -> str:
    """Summary, comparisons, plot and the table of samples as static HTML (marked as a finished nbagent run)."""
    varying = varying or {}
    rows = [row_for(r, varying.get((r["agent"], str(r["id"])))) for r in records]
    note = (
        '<div class="nbe-note">Cancelled: the samples that had not finished are missing or marked cancelled.</div>'
        if cancelled
        else ""
    )
    inner = header_html(summary, scorers, comparisons, epoch_note) + note + samples_table_html(rows, scorers)
    return _wrap(inner, "cancelled" if cancelled else "done")


# ---------------------------------------------------------------------------------------------- widgets


def widgets_available() -> bool:
    return STATIC_JS.is_file()


def _eval_view_class() -> type:
    global _EvalView
    if _EvalView is None:
        import anywidget
        import traitlets

        if not STATIC_JS.is_file():
            raise ImportError(
                f"The evaluation table's front-end is not built ({STATIC_JS} is missing): run `npm run build`"
            )

        class EvalView(anywidget.AnyWidget):
            """The table of samples with live progress; `selected` is the key of the row clicked."""

            _esm = STATIC_JS
            _css = CSS
            rows = traitlets.List(traitlets.Dict()).tag(sync=True)
            scorers = traitlets.List(traitlets.Unicode()).tag(sync=True)
            progress = traitlets.Dict().tag(sync=True)
            selected = traitlets.Unicode("").tag(sync=True)

        _EvalView = EvalView
    return _EvalView


_EvalView: type | None = None


class EvalPanel:
    """The live table plus the box below it where a clicked sample's run opens."""

    def __init__(self, scorers: list[str], progress: dict[str, Any], opener: Callable[[Key], Any]) -> None:
        import ipywidgets

        self.opener = opener
        self.view = _eval_view_class()(rows=[], scorers=list(scorers), progress=progress)
        self.run_box = ipywidgets.VBox()
        self.box = ipywidgets.VBox([self.view, self.run_box])
        self.view.observe(self._open, names="selected")

    def _open(self, change: dict[str, Any]) -> None:
        import ipywidgets

        text = change["new"]
        if not text:
            self.run_box.children = ()
            return
        try:
            self.run_box.children = (self.opener(text_key(text)),)
        except Exception as error:
            self.run_box.children = (ipywidgets.HTML(f"<pre>Cannot open this run: {_e(error)}</pre>"),)

    def bundle(self, static_html: str, text: str) -> dict[str, Any]:
        return bundle(self.box, static_html, text)


def header_widget(
    summary: Any, scorers: list[str], comparisons: list[dict[str, Any]] = (), epoch_note: str = ""
) -> Any:
    """The summary table, the comparisons, the note and the plot, as an ipywidgets.HTML."""
    import ipywidgets

    return ipywidgets.HTML(
        f'<div class="nbe"><style>{CSS}</style>{header_html(summary, scorers, comparisons, epoch_note)}</div>'
    )


def bundle(widget: Any, static_html: str, text: str) -> dict[str, Any]:
    """The display bundle of a widget: its view, plus static HTML and text for where widgets do not render."""
    data = widget._repr_mimebundle_()
    view = data[0] if isinstance(data, tuple) else data
    return {WIDGET_VIEW: view[WIDGET_VIEW], "text/html": static_html, "text/plain": text}
