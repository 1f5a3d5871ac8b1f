// Errors get their own style (and role="alert" would be too loud for history, so a plain labelled block).
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";

/**
 * The error block of a step or run, or null.
 * @param {string | null | undefined} message
 * @param {{label?: string}} [options]
 * @returns {HTMLElement | null}
 */
export function renderError(message, { label = "Error" } = {}) {
  if (!message) return null;
  const text = String(message);
  const pre = h("pre", { class: "nba-error-text" }, text);
  return h("div", { class: "nba-block nba-error" }, h("div", { class: "nba-label" }, label), collapsible(pre, { text }));
}
