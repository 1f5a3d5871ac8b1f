// The task a run was given (markdown), with its images. A DataFrame the task describes shows its first rows as a
// small table: the task comes cut into parts (nbagent/views/task_preview.py); without parts it is Markdown, whole.
import { h } from "./dom.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";

/** @import { ImageSource } from "./images.js" */
/** @import { PreviewTable, TaskPart, TaskStep } from "./types.js" */

/**
 * @param {Pick<TaskStep, "task" | "images" | "parts">} step
 * @param {ImageSource} imageSource
 * @returns {HTMLElement}
 */
export function renderTask(step, imageSource) {
  const parts = step.parts?.length ? step.parts.map(renderPart) : [renderMarkdown(step.task ?? "")];
  return h("div", { class: "nba-task" },
    h("div", { class: "nba-label" }, "Task"),
    parts,
    renderImages(step.images, imageSource));
}

/**
 * @param {TaskPart} part
 * @returns {HTMLElement}
 */
function renderPart(part) {
  if (part.kind === "table" && part.table) return renderPreview(part.table);
  if (part.kind === "text") return h("pre", { class: "nba-logs nba-preview-text" }, part.text ?? "");
  return renderMarkdown(part.text ?? "");
}

/**
 * A DataFrame's first rows as a small table: the index in the first column, the cells as pandas printed them.
 * @param {PreviewTable} table
 * @returns {HTMLElement}
 */
export function renderPreview(table) {
  const more = table.more_columns ? [h("th", { title: "more columns than the preview shows" }, "…")] : [];
  const head = h("tr", null, h("th", { class: "nba-preview-index" }, table.index_name ?? ""),
    table.columns.map((column) => h("th", null, column)), more);
  const rows = table.rows.map((cells, i) => h("tr", null,
    h("th", { class: "nba-preview-index" }, table.index[i] ?? ""),
    cells.map((cell) => h("td", null, cell)),
    table.more_columns ? h("td", null, "…") : null));
  return h("div", { class: "nba-table nba-preview" }, h("table", null, h("thead", null, head), h("tbody", null, rows)));
}
