// Execution logs (what the code printed), the warnings raised meanwhile (folded: the model never saw them) and the
// value the step's code returned.
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
 * The warnings raised while the code ran (a library's DeprecationWarning, …), folded under their count: they are
 * kept out of the observation the model reads. Null when there are none.
 * @param {string[] | null | undefined} warnings
 * @returns {HTMLElement | null}
 */
export function renderWarnings(warnings) {
  if (!warnings || warnings.length === 0) return null;
  const count = `${warnings.length} warning${warnings.length === 1 ? "" : "s"} (not shown to the model)`;
  return h("details", { class: "nba-block nba-warnings" },
    h("summary", { class: "nba-label" }, count),
    h("pre", { class: "nba-logs nba-warnings-text" }, warnings.join("\n")));
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
