// What the agent's code did to the notebook's namespace: one compact line per step ("+ region_data
// (DataFrame 50×6) · ~ sales: +1 column total_revenue · rebinds x") and a summary line for the run.
// The data is each step's `changes` (NamespaceChange in js/types.js, nbagent/sandbox/changes.py).
import { h } from "./dom.js";

/** @import { NamespaceChange, Step } from "./types.js" */

/** Words for a change's kind, as a person reads them (also the tooltip). */
export const CHANGE_TITLES = Object.freeze({
  created: "created by the agent",
  rebound: "bound to a new value by the agent",
  modified: "changed in place by the agent",
  deleted: "deleted by the agent",
});

/**
 * One change in a few words: "+ region_data (DataFrame 50×6)", "~ sales: +1 column total_revenue",
 * "rebinds x (int)", "deletes tmp".
 * @param {NamespaceChange} change
 * @returns {string}
 */
export function changeText(change) {
  const type = change.type ? ` (${change.type})` : "";
  let text;
  if (change.change === "created") text = `+ ${change.name}${type}`;
  else if (change.change === "modified") text = change.detail ? `~ ${change.name}: ${change.detail}` : `~ ${change.name}${type}`;
  else if (change.change === "rebound") text = `rebinds ${change.name}${type}`;
  else text = `deletes ${change.name}`;
  if (change.kept && change.reason) return `${text} [kept in the worker]`;
  return change.kept ? `${text} [agent's copy]` : text;
}

/**
 * The line of one step's changes, or null when it changed nothing.
 * @param {NamespaceChange[] | null | undefined} changes
 * @param {string} [label]
 * @returns {HTMLElement | null}
 */
export function renderChanges(changes, label = "Namespace") {
  if (!changes?.length) return null;
  /** @type {Array<HTMLElement | string>} */
  const parts = [];
  changes.forEach((change, i) => {
    if (i) parts.push(" · ");
    const title = CHANGE_TITLES[change.change] + keptTitle(change);
    parts.push(h("span", { class: `nba-change nba-change-${change.change}`, title, dataset: { name: change.name } }, changeText(change)));
  });
  return h("div", { class: "nba-changes", role: "note" }, h("span", { class: "nba-label" }, `${label}: `), ...parts);
}

/**
 * Why a kept change did not reach the notebook (the tooltip's second half).
 * @param {NamespaceChange} change
 * @returns {string}
 */
function keptTitle(change) {
  if (!change.kept) return "";
  return change.reason ? ` (kept in the worker: ${change.reason})` : " (in its copy: your object is untouched)";
}

/**
 * What the whole run did to each name: the steps' changes folded into one per name, in order of first change.
 * created then changed stays "created" (with the last type); created then deleted drops out; a rebinding
 * wins over in-place changes; details of successive in-place changes are joined.
 * @param {ReadonlyArray<Partial<Step>>} steps
 * @returns {NamespaceChange[]}
 */
export function runChanges(steps) {
  /** @type {Map<string, NamespaceChange>} */
  const byName = new Map();
  for (const step of steps) {
    const changes = /** @type {{changes?: NamespaceChange[]}} */ (step).changes ?? [];
    for (const change of changes) {
      const merged = mergeChange(byName.get(change.name), change);
      if (merged) byName.set(change.name, merged);
      else byName.delete(change.name);
    }
  }
  return [...byName.values()];
}

/**
 * @param {NamespaceChange | undefined} before
 * @param {NamespaceChange} now
 * @returns {NamespaceChange | null}
 */
function mergeChange(before, now) {
  if (!before) return { ...now };
  if (before.change === "created") return now.change === "deleted" ? null : { ...now, change: "created", detail: "" };
  if (now.change === "modified" && before.change === "modified") {
    const detail = [before.detail, now.detail].filter(Boolean).join("; ");
    return { ...now, detail };
  }
  if (now.change === "modified" && before.change === "rebound") return { ...now, change: "rebound", detail: "" };
  return { ...now };
}

/**
 * The run's summary line ("The run changed: …"), or null when it changed nothing.
 * @param {ReadonlyArray<Partial<Step>>} steps
 * @returns {HTMLElement | null}
 */
export function renderRunChanges(steps) {
  const line = renderChanges(runChanges(steps), "The run changed");
  line?.classList.add("nba-run-changes");
  return line;
}
