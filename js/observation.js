// Execution logs (what the code printed) and the value the step's code returned.
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";

/**
 * The observation block (execution logs, tool results), or null when there is none.
 * @param {string | null | undefined} text
 * @param {{label?: string}} [options]
 * @returns {HTMLElement | null}
 */
export function renderLogs(text, { label = "Observation" } = {}) {
  if (!text) return null;
  const pre = h("pre", { class: "nba-logs" }, text);
  return h("div", { class: "nba-block nba-block-logs" }, h("div", { class: "nba-label" }, label), collapsible(pre, { text }));
}

/**
 * The step's returned value ("Out: …"), or null.
 * @param {string | null | undefined} text
 * @returns {HTMLElement | null}
 */
export function renderActionOutput(text) {
  if (text === null || text === undefined || text === "") return null;
  const pre = h("pre", { class: "nba-output" }, String(text));
  return h("div", { class: "nba-block nba-block-output" }, h("div", { class: "nba-label" }, "Out"), collapsible(pre, { text: String(text) }));
}
