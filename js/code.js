// Code blocks of a step: highlighted Python, with the model's original when a person edited it.
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";
import { highlightPython } from "./highlight.js";

/** @import { StepFields, ToolCall } from "./types.js" */

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
 * The code of a step: what ran, plus what the model wrote when it differs (a person edited it).
 * @param {Pick<StepFields, "code" | "model_code">} step
 * @returns {HTMLElement[]}
 */
export function renderStepCode(step) {
  const out = [];
  if (step.code) out.push(renderCode(step.code, { label: step.model_code && step.model_code !== step.code ? "Code (edited, ran)" : "Code" }));
  if (step.model_code && step.model_code !== step.code) {
    out.push(renderCode(step.model_code, { label: "Code written by the model", className: "nba-code-model" }));
  }
  return out;
}

/**
 * Tool calls of a ToolCallingAgent step: name(arguments).
 * @param {ToolCall[] | null | undefined} toolCalls
 * @returns {HTMLElement | null}
 */
export function renderToolCalls(toolCalls) {
  if (!toolCalls || toolCalls.length === 0) return null;
  const items = toolCalls.map((call) => {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}, null, 1);
    return h("li", null, h("span", { class: "nba-tool-name" }, call.name), h("code", { class: "nba-tool-args" }, args));
  });
  return h("div", { class: "nba-block nba-block-tools" }, h("div", { class: "nba-label" }, "Tool calls"), h("ul", { class: "nba-tool-calls" }, items));
}
