// Errors get their own style (and role="alert" would be too loud for history, so a plain labelled block).
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";

/**
 * The error block of a step or run, or null. A step that was stopped, timed out or stuck is no error: `kind` names
 * it, and the block takes that kind's colour (`nba-ended nba-ended-<kind>`) instead of the error's red.
 * @param {string | null | undefined} message
 * @param {{label?: string, kind?: string}} [options]
 * @returns {HTMLElement | null}
 */
export function renderError(message, { label = "Error", kind = "" } = {}) {
  if (!message) return null;
  const text = String(message);
  const pre = h("pre", { class: kind ? "nba-ended-text" : "nba-error-text" }, text);
  const cls = kind ? `nba-block nba-ended nba-ended-${kind}` : "nba-block nba-error";
  return h("div", { class: cls }, h("div", { class: "nba-label" }, label), collapsible(pre, { text }));
}
