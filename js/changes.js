// What the agent's code did to the notebook's namespace: one compact line per step ("+ region_data
// (DataFrame 50×6) · ~ sales: +1 column total_revenue · rebinds x") and a summary line for the run.
// The data is each step's `changes` (NamespaceChange in js/types.js, nbagent/sandbox/wire/changes.py). A change to
// one of the person's names (`yours`) is a warning that says what changed ("⚠ changed your orders: column category
// changed"), and the run's end says which of theirs changed and how to undo it, and which names the agent kept in
// its scope (nbagent/views/changes.py says the same for the static HTML and the console).
import { h } from "./dom.js";

/** @import { NamespaceChange, Step } from "./types.js" */

/** Words for a change's kind, as a person reads them (also the tooltip). */
export const CHANGE_TITLES = Object.freeze({
  created: "created by the agent",
  rebound: "bound to a new value by the agent",
  modified: "changed in place by the agent",
  deleted: "deleted by the agent",
});

/** @type {Readonly<Record<string, string>>} how a change to one of the person's names is said */
const YOURS_VERBS = Object.freeze({ modified: "changed", rebound: "replaced", deleted: "deleted" });

/** How a person takes a run's changes back (nbagent/views/changes.py `UNDO_HINT`). */
export const UNDO_HINT = "agent.undo() or %agent --undo puts them back as they were";

/**
 * One change in a few words: "+ region_data (DataFrame 50×6)", "~ sales: +1 column total_revenue",
 * "rebinds x (int)", "deletes tmp".
 * @param {NamespaceChange} change
 * @returns {string}
 */
export function changeText(change) {
  const type = change.type ? ` (${change.type})` : "";
  let text;
  const verb = change.yours ? YOURS_VERBS[change.change] : undefined;
  if (verb) {
    text = `⚠ ${verb} your ${change.name}${change.change === "rebound" || !change.detail ? type : ""}`;
    if (change.detail) text += `: ${change.detail}`;
  } else if (change.change === "created") text = `+ ${change.name}${type}`;
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
    const yours = change.yours ? " nba-change-yours" : "";
    parts.push(
      h("span", { class: `nba-change nba-change-${change.change}${yours}`, title, dataset: { name: change.name } }, changeText(change)),
    );
  });
  return h("div", { class: "nba-changes", role: "note" }, h("span", { class: "nba-label" }, `${label}: `), ...parts);
}

/**
 * Why a kept change did not reach the notebook (the tooltip's second half).
 * @param {NamespaceChange} change
 * @returns {string}
 */
function keptTitle(change) {
  if (change.yours && !change.kept) return ` (your variable: ${UNDO_HINT}, or "Undo this run")`;
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
  if (now.change === "deleted" || before.change === "deleted") return { ...now };
  // changed or replaced twice: what the run did to it is each step's change in turn (a column added, then rows dropped)
  const detail = [before.detail, now.detail].filter(Boolean).join("; ");
  return { ...now, change: before.change === "rebound" ? "rebound" : now.change, detail };
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

/**
 * The person's names the run's code changed, rebound or deleted in the notebook, in order of first change.
 * @param {ReadonlyArray<Partial<Step>>} steps
 * @returns {string[]}
 */
export function yoursChanged(steps) {
  /** @type {Set<string>} */
  const names = new Set();
  for (const step of steps) {
    const changes = /** @type {{changes?: NamespaceChange[]}} */ (step).changes ?? [];
    for (const change of changes) if (change.yours && !change.kept) names.add(change.name);
  }
  return [...names];
}

/**
 * The warning at the run's end when it changed the person's names ("⚠ The run changed your variable: orders; …"),
 * or null.
 * @param {ReadonlyArray<Partial<Step>>} steps
 * @returns {HTMLElement | null}
 */
export function renderYoursChanged(steps) {
  const names = yoursChanged(steps);
  if (!names.length) return null;
  const which = names.length === 1 ? "variable" : "variables";
  return h("div", { class: "nba-changes nba-yours-changed", role: "alert" }, `⚠ The run changed your ${which}: ${names.join(", ")}; ${UNDO_HINT}.`);
}

/**
 * "Kept in the agent's scope: 12 names (tmp, result2, … and 6 more); …" (nbagent/loop/scope.py `scratch_line`).
 * @param {string[] | null | undefined} names
 * @returns {string}
 */
export function scratchText(names) {
  if (!names?.length) return "";
  const shown = names.slice(0, 6).join(", ") + (names.length > 6 ? ` and ${names.length - 6} more` : "");
  const plural = names.length === 1 ? "name" : "names";
  return `Kept in the agent's scope: ${names.length} ${plural} (${shown}); agent.scratch holds them; %agent --keep brings them in.`;
}

/**
 * The run's scratch line, or null when the agent kept no names.
 * @param {string[] | null | undefined} names
 * @returns {HTMLElement | null}
 */
export function renderScratch(names) {
  const text = scratchText(names);
  return text ? h("div", { class: "nba-scratch", role: "note" }, text) : null;
}
