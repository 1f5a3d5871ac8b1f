// One step of a run, by kind: "task", "planning", "action" or "final".
import { renderChanges } from "./changes.js";
import { renderStepCode, renderToolCalls } from "./code.js";
import { collapsible } from "./collapse.js";
import { h } from "./dom.js";
import { renderError } from "./error.js";
import { renderFinalAnswer } from "./final.js";
import { renderImages } from "./images.js";
import { renderMarkdown } from "./markdown.js";
import { renderMeta } from "./meta.js";
import { renderChildren } from "./nested.js";
import { renderActionOutput, renderLogs, renderWarnings } from "./observation.js";
import { renderPermissions } from "./permissions.js";
import { STEP_MARK_LABELS, StepMark, stepMark } from "./status.js";
import { renderTask } from "./task.js";

/** @import { ImageSource } from "./images.js" */
/** @import { ActionStep, PlanningStep, Run, Step } from "./types.js" */

/**
 * What rendering a step needs: the run's images, and a way to render a nested run (injected by run.js,
 * which imports this module).
 * @typedef {object} StepContext
 * @property {ImageSource} images
 * @property {(run: Run, container: HTMLElement) => void} renderRunInto
 */

/** The block of a step that was stopped, timed out or stuck: what ended it, in its own colour, not as an error. */
/** @type {Record<string, {label: string, kind: string}>} */
const ENDED = {
  [StepMark.STOPPED]: { label: "Stopped", kind: "stopped" },
  [StepMark.TIMED_OUT]: { label: "Timed out", kind: "timed_out" },
  [StepMark.STUCK]: { label: "Stuck", kind: "stuck" },
};

const CODE_BLOCK = /```[\w+-]*[ \t]*\n([\s\S]*?)\n?```|<code>\n?([\s\S]*?)\n?<\/code>/g;

/**
 * The model's text without the code block(s) that are shown separately as the step's code.
 * @param {string | null | undefined} text
 * @param {ReadonlyArray<string | null | undefined>} codes code shown separately (ran / written by the model)
 * @returns {string}
 */
export function thoughtText(text, codes) {
  if (!text) return "";
  /** @type {Set<string>} */
  const known = new Set();
  for (const code of codes) if (code) known.add(code.trim());
  if (known.size === 0) return text;
  return text.replace(CODE_BLOCK, (whole, fenced, tagged) => (known.has((fenced ?? tagged ?? "").trim()) ? "" : whole)).trim();
}

/**
 * @param {Step} step a step dict (js/types.js, nbagent/views/state.py)
 * @param {StepContext} ctx
 * @returns {HTMLElement}
 */
export function renderStep(step, ctx) {
  if (step.kind === "task") return renderTask(step, ctx.images);
  if (step.kind === "final") {
    const answer = renderFinalAnswer(step.final_answer ?? { text: "" }, ctx.images);
    return /** @type {HTMLElement} */ (answer); // an answer (not null) always renders
  }
  const classes = ["nba-step", `nba-step-${step.kind}`];
  const mark = step.kind === "action" ? stepMark(step) : step.error ? StepMark.ERROR : null;
  if (mark === StepMark.STOPPED || mark === StepMark.TIMED_OUT) classes.push("nba-step-stopped");
  if (mark) classes.push(`nba-step-${mark}`);
  const title = step.kind === "planning" ? "Plan" : `Step ${step.step_number ?? ""}`;
  const fold = h("button", {
    type: "button",
    class: "nba-fold",
    "aria-expanded": "true",
    "aria-label": `Collapse or expand ${title.toLowerCase()}`,
    title: "Collapse or expand this step",
  }, "▾");
  const head = h("div", { class: "nba-step-head" },
    fold,
    h("span", { class: "nba-step-title" }, title),
    mark ? h("span", { class: `nba-chip nba-mark nba-mark-${mark}${mark === StepMark.ERROR ? " nba-chip-error" : ""}` }, STEP_MARK_LABELS[mark]) : null,
    renderMeta(step.token_usage, step.duration));
  const body = step.kind === "planning" ? planningBody(step) : actionBody(step, ctx);
  // the changes line stays visible when the step is folded: a folded run still says what it did
  return h("div", { class: classes.join(" "), dataset: { step: step.step_number ?? "", kind: step.kind } },
    head, renderChanges(step.changes), h("div", { class: "nba-step-body" }, body));
}

/** @param {string | null | undefined} text */
function markdownBlock(text) {
  if (!text) return null;
  return collapsible(renderMarkdown(text), { text, maxLines: 40 });
}

/** @param {PlanningStep} step */
function planningBody(step) {
  return markdownBlock(step.plan || step.model_output);
}

/**
 * @param {ActionStep} step
 * @param {StepContext} ctx
 */
function actionBody(step, ctx) {
  const thought = thoughtText(step.model_output ?? "", [step.code, step.model_code]);
  return [
    markdownBlock(thought),
    renderToolCalls(step.tool_calls),
    renderStepCode(step),
    renderLogs(step.observations),
    renderPermissions(step.permissions),
    renderWarnings(step.warnings),
    renderImages(step.images, ctx.images),
    renderChildren(step.children, ctx.renderRunInto),
    step.is_final_answer || step.observations ? null : renderActionOutput(step.action_output),
    renderError(step.error, ENDED[stepMark(step) ?? ""]),
  ];
}
