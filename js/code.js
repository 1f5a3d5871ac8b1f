// Code blocks of a step: highlighted Python, and who changed the model's code before it ran, each change with
// its diff ("rewritten by nbagent", "edited by you"). The changes come from the state (nbagent/views/code_diff.py).
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";
import { highlightPython } from "./highlight.js";

/** @import { CodeChange, StepFields, ToolCall } from "./types.js" */

/** Who changed the code -> its label, as nbagent/views/code_diff.py's CHANGE_LABELS. */
export const CHANGE_LABELS = Object.freeze({
  nbagent: "rewritten by nbagent",
  you: "edited by you",
  unknown: "changed before it ran",
});

/** What a diff compares (removed lines → added lines), by who changed the code. */
const DIFF_SIDES = /** @type {Record<string, string>} */ ({
  nbagent: "the model's code (−) → nbagent's (+)",
  you: "the code you were shown (−) → yours (+)",
  unknown: "the model's code (−) → the code that ran (+)",
});

/**
 * A highlighted, collapsible code block.
 * @param {string} code
 * @param {{label?: string, className?: string}} [options]
 */
export function renderCode(code, { label = "Code", className = "" } = {}) {
  const pre = h("pre", { class: `nba-code ${className}`.trim() }, h("code", { class: "language-python" }, highlightPython(code)));
  return h("div", { class: "nba-block nba-block-code" }, h("div", { class: "nba-label" }, label), collapsible(pre, { text: code }));
}

/**
 * The code of a step: what ran, labelled with who changed it, then each change as a diff. A step saved in a widget
 * before steps said who changed their code has only `model_code`: it is a change of unknown origin.
 * @param {Pick<StepFields, "code" | "model_code"> & {code_changes?: CodeChange[]}} step
 * @returns {HTMLElement[]}
 */
export function renderStepCode(step) {
  if (!step.code) return [];
  /** @type {CodeChange[]} */
  let changes = step.code_changes ?? [];
  if (changes.length === 0 && step.model_code && step.model_code !== step.code) {
    changes = [{ by: "unknown", label: CHANGE_LABELS.unknown, diff: null }];
  }
  if (changes.length === 0) return [renderCode(step.code)];
  const code = renderCode(step.code, { label: "Code that ran" });
  const label = /** @type {HTMLElement} */ (code.querySelector(".nba-label"));
  for (const change of changes) label.append(" ", h("span", { class: "nba-chip nba-code-change", dataset: { by: change.by } }, change.label));
  const diffs = changes.map((change) => (change.diff
    ? renderDiff(change)
    : renderCode(step.model_code ?? "", { label: "Code written by the model", className: "nba-code-model" })));
  return [code, ...diffs];
}

/**
 * One change of the code as a diff: every line, removed ones marked "-", added ones "+".
 * @param {CodeChange} change
 * @returns {HTMLElement}
 */
export function renderDiff(change) {
  const lines = change.diff ?? [];
  const pre = h("pre", { class: "nba-code nba-diff" }, lines.map(([op, line]) => h("span", {
    class: op === "-" ? "nba-diff-line nba-diff-del" : op === "+" ? "nba-diff-line nba-diff-add" : "nba-diff-line",
  }, `${op} ${line}\n`)));
  const heading = `${change.label[0].toUpperCase()}${change.label.slice(1)}: ${DIFF_SIDES[change.by] ?? DIFF_SIDES.unknown}`;
  return h("div", { class: "nba-block nba-block-diff", dataset: { by: change.by } },
    h("div", { class: "nba-label" }, heading),
    collapsible(pre, { text: lines.map(([, line]) => line).join("\n") }));
}

/**
 * How long a tool call took, as nbagent/views/html.py's call_time: "12 ms", "1.5 s".
 * @param {number} seconds
 * @returns {string}
 */
export function callTime(seconds) {
  return seconds < 1 ? `${Math.floor(seconds * 1000 + 0.5)} ms` : `${seconds.toFixed(1)} s`;
}

/**
 * What a call of the step's code gave: "→ result" or "✗ error", its time, the calls not listed.
 * @param {ToolCall} call
 * @returns {HTMLElement[]}
 */
function callOutcome(call) {
  const parts = [];
  if (call.error != null) parts.push(h("code", { class: "nba-tool-error" }, `✗ ${call.error}`));
  else if (call.result != null) parts.push(h("code", { class: "nba-tool-result" }, `→ ${call.result}`));
  if (call.seconds != null) parts.push(h("span", { class: "nba-tool-time" }, callTime(call.seconds)));
  if (call.more) parts.push(h("span", { class: "nba-tool-more" }, `and ${call.more} more calls`));
  return parts;
}

/**
 * Tool calls of a step: name(arguments) — a ToolCallingAgent's, and the tools a CodeAgent's code called, with
 * their result (or error) and time.
 * @param {ToolCall[] | null | undefined} toolCalls
 * @returns {HTMLElement | null}
 */
export function renderToolCalls(toolCalls) {
  if (!toolCalls || toolCalls.length === 0) return null;
  const items = toolCalls.map((call) => {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}, null, 1);
    return h("li", null, h("span", { class: "nba-tool-name" }, call.name), h("code", { class: "nba-tool-args" }, args),
      ...callOutcome(call));
  });
  return h("div", { class: "nba-block nba-block-tools" }, h("div", { class: "nba-label" }, "Tool calls"), h("ul", { class: "nba-tool-calls" }, items));
}
