// The final answer: markdown for text answers, preformatted text for other values (a DataFrame's repr
// must keep its columns), plus images when the answer is one. A final box whose `outcome` is not
// "success" holds no answer (the model's closing reply after max steps, or an error/apology): it is
// drawn in the warning style and its label says why (outcome.css, imported by widget.js).
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";
import { RunOutcome } from "./status.js";

/** @import { ImageSource } from "./images.js" */
/** @import { Answer } from "./types.js" */

/** The label of a final box by outcome; a missing outcome (an older saved run) is an answer. */
export const ANSWER_LABELS = Object.freeze({
  [RunOutcome.SUCCESS]: "Final answer",
  [RunOutcome.MAX_STEPS]: "No answer: max steps reached. The model's closing reply",
  [RunOutcome.ERROR_ANSWER]: "No answer: the final answer reads as an error",
});

/**
 * Whether the final box holds a real answer.
 * @param {Partial<Answer> | null | undefined} answer
 */
export function isAnswer(answer) {
  return !answer?.outcome || answer.outcome === RunOutcome.SUCCESS;
}

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
  const real = isAnswer(answer);
  const outcome = answer.outcome ?? RunOutcome.SUCCESS;
  const label = Object.hasOwn(ANSWER_LABELS, outcome)
    ? ANSWER_LABELS[/** @type {keyof typeof ANSWER_LABELS} */ (outcome)]
    : "No answer";
  return h("div", { class: real ? "nba-final" : "nba-final nba-final-warn", dataset: { outcome } },
    h("div", { class: "nba-label" }, label),
    text ? body : null,
    renderImages(answer.images, imageSource));
}
