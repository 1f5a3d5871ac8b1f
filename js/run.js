// A whole run: header (agent, model, status, controls), steps, live step, final answer, totals.
// Updates are keyed per step: only steps whose JSON changed are rebuilt, so a step finishing in a
// 100-step run costs one step's DOM, not the run's.
import { renderStatus } from "./controls.js";
import { h } from "./dom.js";
import { renderError } from "./error.js";
import { renderFinalAnswer } from "./final.js";
import { renderMeta } from "./meta.js";
import { renderStep } from "./step.js";
import { LiveStep } from "./stream.js";

export class RunView {
  /**
   * @param {{images: object, send?: (msg: object) => void, live?: boolean, controls?: object}} ctx
   *   `controls`: a ControlsView (js/controls.js), shown under the header and asked for the status
   */
  constructor(ctx) {
    this.ctx = { ...ctx, renderRunInto: (run, container) => renderRunInto(run, container, this.ctx) };
    this.el = h("div", { class: "nbagent" });
    this.header = h("div", { class: "nba-header" });
    this.steps = h("div", { class: "nba-steps" });
    this.live = ctx.live === false ? null : new LiveStep();
    this.tail = h("div", { class: "nba-tail" });
    this.controls = ctx.controls ?? null; // kept across updates: its review box holds the person's edits
    this.el.append(...[this.header, this.controls?.el, this.steps, this.live?.el, this.tail].filter(Boolean));
    this.keys = [];
    this.run = null;
  }

  /** Render `run` (a run dict), rebuilding only what changed. */
  update(run) {
    this.run = run ?? {};
    const r = this.run;
    const status = this.controls ? this.controls.statusOf(r) : (r.status ?? "idle");
    this.el.dataset.status = status;
    this.header.replaceChildren(
      h("span", { class: "nba-agent" }, r.agent_name || "agent"),
      r.model_id ? h("span", { class: "nba-model" }, r.model_id) : null,
      renderStatus(status),
    );
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
    while (this.steps.children.length > steps.length) this.steps.lastChild.remove();
    this.keys.length = steps.length;
    this.live?.sync(r);
    const hasFinalStep = steps.some((s) => s.kind === "final");
    const tail = [
      hasFinalStep ? null : renderFinalAnswer(r.final_answer, this.ctx.images),
      renderError(r.error, { label: "Run error" }),
      footer(r),
    ];
    this.tail.replaceChildren(...tail.filter(Boolean));
    this.controls?.decorate(this.steps);
  }

  /** Rebuild the steps that show images (called when the `images` list changed). */
  refreshImages() {
    this.keys = this.keys.map((key) => (/"images":\[\d/.test(key ?? "") ? null : key));
    if (this.run) this.update(this.run);
  }
}

function footer(run) {
  const actions = (run.steps ?? []).filter((s) => s.kind === "action").length;
  const meta = renderMeta(run.token_usage, run.duration);
  if (!actions && !meta) return null;
  return h("div", { class: "nba-footer" }, h("span", null, `${actions} step${actions === 1 ? "" : "s"}`), meta);
}

/** Render a run (e.g. a nested one) into `container` without live updates. */
export function renderRunInto(run, container, ctx) {
  const view = new RunView({ ...ctx, live: false, send: undefined, controls: undefined });
  view.update(run);
  container.append(...view.el.childNodes);
  container.dataset.status = view.el.dataset.status;
}
