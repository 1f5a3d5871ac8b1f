// A whole run: header (agent, model, status, controls, the clock), steps, live step, final answer, totals.
// Updates are keyed per step: only steps whose JSON changed are rebuilt, so a step finishing in a
// 100-step run costs one step's DOM, not the run's.
import { renderRunChanges, renderScratch, renderYoursChanged } from "./changes.js";
import { RunClock } from "./clock.js";
import { StepFolds, setFolded, stepKey } from "./collapse.js";
import { renderStatus } from "./controls.js";
import { append, clear, h } from "./dom.js";
import { renderError } from "./error.js";
import { renderFinalAnswer } from "./final.js";
import { renderLimit, renderMeta } from "./meta.js";
import { renderProgram } from "./program.js";
import { RunStatus } from "./status.js";
import { renderStep } from "./step.js";
import { LiveStep } from "./stream.js";

/** @import { ControlsView } from "./controls.js" */
/** @import { ForksView } from "./forks.js" */
/** @import { ImageSource } from "./images.js" */
/** @import { StepContext } from "./step.js" */
/** @import { Run } from "./types.js" */

/**
 * What a run view needs.
 * @typedef {object} RunContext
 * @property {ImageSource} images
 * @property {boolean} [live] show a live step fed by streamed text (default true)
 * @property {ControlsView} [controls] shown under the header and asked for the status
 * @property {ForksView} [forks] the earlier runs (re-runs): a button in the header, the list under it
 * @property {import("./program.js").CopyCell} [copyCell] what "Copy as cell" does under the run's program
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
    /** the step's and the run's time (js/clock.js): ticks once the widget heard from the kernel (`heard()`) */
    this.clock = new RunClock();
    this.tail = h("div", { class: "nba-tail" });
    this.controls = ctx.controls ?? null; // kept across updates: its review box holds the person's edits
    this.folds = new StepFolds();
    this.foldAllButton = h("button", {
      type: "button",
      class: "nba-btn nba-fold-all",
      title: "Collapse or expand every step",
      onclick: () => this.toggleAll(),
    }, "Collapse all");
    // the top stays in view while a long run scrolls (sticky): status, step counter, Stop/Pause
    this.top = h("div", { class: "nba-top" },
      h("div", { class: "nba-top-row" }, this.header, h("span", { class: "nba-top-tools" }, this.foldAllButton, ctx.forks?.toggle)),
      this.controls?.el);
    append(this.el, [this.top, ctx.forks?.el, this.steps, this.live?.el, this.tail]);
    this.steps.addEventListener("click", (event) => this.onStepsClick(event));
    /** @type {Array<string | null>} each shown step's JSON, to tell which changed */
    this.keys = [];
    /** @type {Partial<Run> | null} */
    this.run = null;
    /** @type {string | null} */
    this.programKey = null;
    /** @type {HTMLElement | null} */
    this.programNode = null;
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
    this.clock.update(r, status);
    // (dom.js's append skips nulls; replaceChildren would show a null as the text "null")
    append(clear(this.header), [
      h("span", { class: "nba-agent" }, r.agent_name || "agent"),
      r.model_id ? h("span", { class: "nba-model" }, r.model_id) : null,
      renderStatus(status, this.controls?.stopping ?? false),
      renderLimit(r.max_time),
      h("span", { class: "nba-counter" }, this.clock.stepLabel ?? stepCounter(r, this.live?.stepNumber ?? null)),
      this.clock.el,
      r.message ? h("span", { class: "nba-message", role: "status" }, r.message) : null,
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
    this.applyFolds();
    this.live?.sync(r, status);
    const hasFinalStep = steps.some((s) => s.kind === "final");
    append(clear(this.tail), [
      hasFinalStep ? null : renderFinalAnswer(r.final_answer, this.ctx.images),
      renderError(r.error, { label: "Run error" }),
      renderRunChanges(steps),
      renderYoursChanged(steps),
      renderScratch(r.scratch),
      this.programBox(r.program),
      footer(r),
    ]);
    this.controls?.decorate(this.steps);
    this.placeReview();
  }

  /**
   * The run's program box, kept while the program is the same (it stays open, its note stays said).
   * @param {Run["program"]} program
   */
  programBox(program) {
    const key = JSON.stringify(program ?? null);
    if (key !== this.programKey) {
      this.programKey = key;
      this.programNode = renderProgram(program, this.ctx.copyCell ?? null);
    }
    return this.programNode;
  }

  /** Put the folded class back on rebuilt steps; the "Collapse all" button says what it will do. */
  applyFolds() {
    const nodes = this.stepNodes();
    for (const node of nodes) setFolded(node, this.folds.any && this.folds.has(nodeKey(node)));
    const label = this.folds.any ? "Expand all" : "Collapse all";
    if (this.foldAllButton.textContent !== label) this.foldAllButton.textContent = label;
    this.foldAllButton.hidden = nodes.length === 0;
  }

  /** Collapse every step shown (or, when some are collapsed, expand them all). */
  toggleAll() {
    if (this.folds.any) this.folds.unfoldAll();
    else this.folds.foldAll(this.stepNodes().map(nodeKey));
    this.applyFolds();
  }

  /** @param {Event} event a click in the steps: the fold button of a step toggles it */
  onStepsClick(event) {
    const target = /** @type {HTMLElement | null} */ (event.target);
    const button = target?.closest?.(".nba-fold");
    const node = /** @type {HTMLElement | null | undefined} */ (button?.closest(".nba-step"));
    const key = node ? nodeKey(node) : null;
    if (!node || key === null || node.parentElement !== this.steps) return;
    this.folds.toggle(key);
    this.applyFolds();
  }

  /** @returns {HTMLElement[]} the rendered steps that fold (action and planning steps) */
  stepNodes() {
    return /** @type {HTMLElement[]} */ ([...this.steps.querySelectorAll(":scope > .nba-step")]);
  }

  /**
   * The review box (code awaiting approval) and the permission ask go right after the step they belong to: the
   * live step while it is shown, else the step of that number, else the end of the steps.
   */
  placeReview() {
    const controls = this.controls;
    if (!controls) return;
    this.placeAfterStep(controls.review, controls.state.pending_step);
    this.placeAfterStep(controls.ask, controls.state.pending_ask?.step);
  }

  /**
   * @param {HTMLElement} box
   * @param {number | null | undefined} number the step it belongs to
   */
  placeAfterStep(box, number) {
    if (box.hidden) return;
    const live = this.live && this.live.stepNumber === number && this.live.el.firstChild ? this.live.el : null;
    const shown = /** @type {HTMLElement | null} */ (this.steps.querySelector(`:scope > .nba-step-action[data-step="${number}"]`));
    const after = live ?? shown ?? this.live?.el ?? this.steps;
    if (after.nextSibling !== box) after.after(box);
  }

  /**
   * Word came from the kernel (a change of the run or the controls, a message): the clock of a live run ticks from
   * now on. A widget restored from saved state never hears, so it never ticks.
   */
  heard() {
    if (this.clock.isHeard) return;
    this.clock.heard();
    if (this.run) this.update(this.run); // the step counter may now name the running step
  }

  /**
   * A step began ("step_start"): its clock counts from now.
   * @param {number | null} number
   * @param {"action" | "planning"} kind
   */
  stepStarted(number, kind) {
    this.clock.stepStarted(number, kind);
  }

  /** The view is gone: stop the clock's timer. */
  dispose() {
    this.clock.dispose();
  }

  /** Rebuild the steps that show images (called when the `images` list changed). */
  refreshImages() {
    this.keys = this.keys.map((key) => (/"images":\[\d/.test(key ?? "") ? null : key));
    if (this.run) this.update(this.run);
  }
}

/**
 * The header's step counter: "step 7" while a step runs, "15 steps" otherwise ("" before any step).
 * @param {Partial<Run>} run
 * @param {number | null} liveStep the step streaming now, if any
 * @returns {string}
 */
export function stepCounter(run, liveStep) {
  const actions = (run.steps ?? []).filter((s) => s.kind === "action");
  const last = actions.length ? actions[actions.length - 1].step_number ?? actions.length : 0;
  if (liveStep !== null && liveStep > last) return `step ${liveStep}`;
  if (!actions.length) return "";
  return `${actions.length} step${actions.length === 1 ? "" : "s"}`;
}

/** @param {HTMLElement} node a rendered step */
function nodeKey(node) {
  return stepKey({ kind: node.dataset.kind, step_number: node.dataset.step ? Number(node.dataset.step) : null });
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
