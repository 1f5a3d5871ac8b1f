// The run as code (nbagent/loop/program; `run.program`, js/types.js `Program`): under the answer of a finished run,
// the program that gives the answer without the model, with its first comment line ("# checked: reproduces the
// answer" or "# unchecked: <why>") and a "Copy as cell" button.
//
// "Copy as cell" inserts the program as a new code cell right below the widget's own cell. anywidget gives a widget
// no handle on JupyterLab's application, but its model's `widget_manager` is JupyterLab's notebook widget manager,
// whose `context.model` is the notebook's model: the cell is inserted there (`sharedModel.insertCell`), so it is
// part of the document (saved, undoable, collaborative), with the kernel busy or idle, or with no kernel at all
// (a reopened notebook). The widget's cell is the one around its view (its place among the notebook's cells, or
// the index JupyterLab's windowed list gave it when not every cell is in the page). The kernel's `set_next_input` was no way: JupyterLab reads it only from the reply to
// a cell's execution, never from a widget's message. Where there is no notebook model (another front-end, a
// console), the program goes to the clipboard, and the note under the button says which happened.
import "./program.css";
import { h } from "./dom.js";
import { highlightPython } from "./highlight.js";

/** @import { Program } from "./types.js" */

export const COPY_LABEL = "Copy as cell";
export const COPY_TITLE =
  "Insert this program as a new code cell below: the run's answer without the model (agent.to_code(), %agent --code)";
export const SAID = Object.freeze({
  inserted: "Inserted as a new cell below.",
  copied: "Copied to the clipboard: paste it into a new cell.",
  failed: "Could not insert or copy it here: select the code and copy it.",
});

/**
 * Where a program goes when "Copy as cell" is pressed: resolves to one of `SAID`'s keys.
 * @typedef {(text: string, from: HTMLElement) => Promise<keyof typeof SAID>} CopyCell
 */

/**
 * The program of a finished run, or null when the run has none (it did not answer, or an older saved run).
 * @param {Program | null | undefined} program
 * @param {CopyCell | null} [copy] what "Copy as cell" does (no button without it)
 * @returns {HTMLElement | null}
 */
export function renderProgram(program, copy = null) {
  if (!program?.text || program.checked === null || program.checked === undefined) return null;
  const status = program.text.split("\n", 1)[0].replace(/^#\s*/, "");
  const note = h("span", { class: "nba-program-note", role: "status" });
  const box = h("details", { class: "nba-program", dataset: { checked: String(program.checked) } });
  const button = copy
    ? h("button", {
        type: "button",
        class: "nba-btn nba-btn-copy-cell",
        title: COPY_TITLE,
        onclick: (/** @type {Event} */ event) => {
          event.preventDefault(); // a click in the summary must not fold the box
          copy(program.text, box).then(
            (said) => (note.textContent = SAID[said] ?? SAID.failed),
            () => (note.textContent = SAID.failed),
          );
        },
      }, COPY_LABEL)
    : null;
  box.append(
    h("summary", null, h("span", { class: "nba-label" }, `The run as code · ${status}`), button, note),
    h("pre", { class: "nba-code nba-program-code" }, h("code", { class: "language-python" }, highlightPython(program.text))),
  );
  return box;
}

/**
 * The notebook model behind an anywidget model, when the front-end is JupyterLab's (or Notebook 7's), else null.
 * @param {any} model the anywidget model (its `widget_manager`)
 * @returns {any}
 */
export function notebookOf(model) {
  const notebook = model?.widget_manager?.context?.model;
  return typeof notebook?.sharedModel?.insertCell === "function" ? notebook : null;
}

/**
 * The index of the notebook cell whose output holds `el`, or -1: its place among the cells in the page when they
 * are all there (JupyterLab's default windowing keeps them), else the index JupyterLab's windowed list gave it.
 * @param {HTMLElement} el
 * @param {number} count the notebook's number of cells
 * @returns {number}
 */
export function cellIndexOf(el, count) {
  const cell = /** @type {HTMLElement | null} */ (el.closest(".jp-Cell"));
  if (!cell?.parentElement) return -1;
  const cells = [...cell.parentElement.children].filter((c) => c.classList.contains("jp-Cell"));
  if (cells.length === count) return cells.indexOf(cell);
  const index = Number.parseInt(cell.dataset.windowedListIndex ?? "", 10);
  return Number.isInteger(index) ? index : -1;
}

/**
 * Insert `text` as a code cell below the cell around `from`, else copy it to the clipboard.
 * @param {any} model the anywidget model
 * @param {string} text
 * @param {HTMLElement} from the widget's view
 * @returns {Promise<keyof typeof SAID>}
 */
export async function copyAsCell(model, text, from) {
  const notebook = notebookOf(model);
  const count = notebook?.sharedModel?.cells?.length ?? 0;
  const index = notebook ? cellIndexOf(from, count) : -1;
  if (notebook && index >= 0 && index < count) {
    const source = text.replace(/\n+$/, ""); // a cell, not a file: no empty last line
    notebook.sharedModel.insertCell(index + 1, { cell_type: "code", source });
    return "inserted";
  }
  if (!globalThis.navigator?.clipboard?.writeText) return "failed";
  await globalThis.navigator.clipboard.writeText(text);
  return "copied";
}
