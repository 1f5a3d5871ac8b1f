// The final answer: markdown for text answers, preformatted text for other values (a DataFrame's repr
// must keep its columns), plus images when the answer is one.
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";

/** @import { ImageSource } from "./images.js" */
/** @import { Answer } from "./types.js" */

/**
 * @param {Partial<Answer> | null | undefined} answer
 * @param {ImageSource} imageSource
 * @returns {HTMLElement | null}
 */
export function renderFinalAnswer(answer, imageSource) {
  if (!answer) return null;
  const text = answer.text ?? "";
  const body = !answer.type || answer.type === "str"
    ? renderMarkdown(text)
    : collapsible(h("pre", { class: "nba-output" }, text), { text });
  return h("div", { class: "nba-final" },
    h("div", { class: "nba-label" }, "Final answer"),
    text ? body : null,
    renderImages(answer.images, imageSource));
}
