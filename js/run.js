// A whole run: header (agent, model, status, controls), steps, live step, final answer, totals.
// Updates are keyed per step: only steps whose JSON changed are rebuilt, so a step finishing in a
// 100-step run costs one step's DOM, not the run's.
import { renderStatus } from "./controls.js";
import { append, clear, h } from "./dom.js";
import { renderError } from "./error.js";
import { renderFinalAnswer } from "./final.js";
import { renderMeta } from "./meta.js";
import { RunStatus } from "./status.js";
import { renderStep } from "./step.js";
import { LiveStep } from "./stream.js";

/** @import { ControlsView } from "./controls.js" */
/** @import { ImageSource } from "./images.js" */
/** @import { StepContext } from "./step.js" */
/** @import { Run } from "./types.js" */

/**
 * What a run view needs.
 * @typedef {object} RunContext
 * @property {ImageSource} images
 * @property {boolean} [live] show a live step fed by streamed text (default true)
 * @property {ControlsView} [controls] shown under the header and asked for the status
 */

export class RunView {
  /** @param {RunContext} ctx */
  constructor(ctx) {
    /** @type {RunContext & StepContext} */
    this.ctx = { ...ctx, renderRunInto: (run, container) => renderRunInto(run, container, this.ctx) };
    this.el = h("div", { class: "nbagent" });
    this.header = h("div", { class: "nba-header" });
    this.steps = h("div", { class: "nba-steps" });
    this.live = ctx.live === false ? null : new LiveStep();
    this.tail = h("div", { class: "nba-tail" });
    this.controls = ctx.controls ?? null; // kept across updates: its review box holds the person's edits
    append(this.el, [this.header, this.controls?.el, this.steps, this.live?.el, this.tail]);
    /** @type {Array<string | null>} each shown step's JSON, to tell which changed */
    this.keys = [];
    /** @type {Partial<Run> | null} */
    this.run = null;
  }

  /**
   * Render `run` (a run dict), rebuilding only what changed.
   * @param {Partial<Run> | null | undefined} run
   */
  update(run) {
    this.run = run ?? {};
    const r = this.run;
    const status = this.controls ? this.controls.statusOf(r) : (r.status ?? RunStatus.IDLE);
    this.el.dataset.status = status;
    // (dom.js's append skips nulls; replaceChildren would show a null as the text "null")
    append(clear(this.header), [
      h("span", { class: "nba-agent" }, r.agent_name || "agent"),
      r.model_id ? h("span", { class: "nba-model" }, r.model_id) : null,
      renderStatus(status),
    ]);
    const steps = r.steps ?? [];
    const nodes = this.steps.children;
    steps.forEach((step, i) => {
      const key = JSON.stringify(step);
      if (this.keys[i] === key && nodes[i]) return;
      const node = renderStep(step, this.ctx);
      if (nodes[i]) this.steps.replaceChild(node, nodes[i]);
      else this.steps.append(node);
      this.keys[i] = key;
    });
    while (this.steps.lastElementChild && this.steps.children.length > steps.length) this.steps.lastElementChild.remove();
    this.keys.length = steps.length;
    this.live?.sync(r);
    const hasFinalStep = steps.some((s) => s.kind === "final");
    append(clear(this.tail), [
      hasFinalStep ? null : renderFinalAnswer(r.final_answer, this.ctx.images),
      renderError(r.error, { label: "Run error" }),
      footer(r),
    ]);
    this.controls?.decorate(this.steps);
  }

  /** Rebuild the steps that show images (called when the `images` list changed). */
  refreshImages() {
    this.keys = this.keys.map((key) => (/"images":\[\d/.test(key ?? "") ? null : key));
    if (this.run) this.update(this.run);
  }
}

/**
 * Step count, tokens and time of a run, or null when there is nothing to count.
 * @param {Partial<Run>} run
 */
function footer(run) {
  const actions = (run.steps ?? []).filter((s) => s.kind === "action").length;
  const meta = renderMeta(run.token_usage, run.duration);
  if (!actions && !meta) return null;
  return h("div", { class: "nba-footer" }, h("span", null, `${actions} step${actions === 1 ? "" : "s"}`), meta);
}

/**
 * Render a run (e.g. a nested one) into `container` without live updates.
 * @param {Run} run
 * @param {HTMLElement} container
 * @param {RunContext} ctx
 */
export function renderRunInto(run, container, ctx) {
  const view = new RunView({ ...ctx, live: false, controls: undefined });
  view.update(run);
  container.append(...view.el.childNodes);
  container.dataset.status = view.el.dataset.status;
}
