// The task a run was given (markdown), with its images.
import { h } from "./dom.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";

/**
 * @param {{task?: string, images?: number[]}} step a step of kind "task"
 * @param {object} imageSource see images.js
 */
export function renderTask(step, imageSource) {
  return h("div", { class: "nba-task" },
    h("div", { class: "nba-label" }, "Task"),
    renderMarkdown(step.task ?? ""),
    renderImages(step.images, imageSource));
}
