// The task a run was given (markdown), with its images.
import { h } from "./dom.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";

/** @import { ImageSource } from "./images.js" */
/** @import { TaskStep } from "./types.js" */

/**
 * @param {Pick<TaskStep, "task" | "images">} step
 * @param {ImageSource} imageSource
 * @returns {HTMLElement}
 */
export function renderTask(step, imageSource) {
  return h("div", { class: "nba-task" },
    h("div", { class: "nba-label" }, "Task"),
    renderMarkdown(step.task ?? ""),
    renderImages(step.images, imageSource));
}
