// The live step: shown while the model is still writing, fed by transient "step_start"/"delta"
// messages, and dropped once the finished step arrives in the synced `run` state.
import { h } from "./dom.js";
import { RunStatus } from "./status.js";

/** @import { Run, StepFields } from "./types.js" */

export class LiveStep {
  constructor() {
    this.el = h("div", { class: "nba-live" });
    /** @type {number | null} the step shown; null when none */
    this.stepNumber = null;
    /** @type {StepFields["kind"]} */
    this.kind = "action";
    /** @type {Text | null} */
    this.textNode = null;
    /** @type {Text | null} what the step's code printed so far */
    this.logsNode = null;
  }

  /**
   * A new step began: show its placeholder.
   * @param {number | null} stepNumber
   * @param {StepFields["kind"]} [kind]
   * @returns {Text} the node the step's text goes into
   */
  start(stepNumber, kind = "action") {
    this.stepNumber = stepNumber;
    this.kind = kind;
    this.textNode = document.createTextNode("");
    this.logsNode = null;
    const title = kind === "planning" ? "Planning" : `Step ${stepNumber}`;
    this.el.replaceChildren(
      h("div", { class: "nba-step nba-step-live", dataset: { step: stepNumber, kind } },
        h("div", { class: "nba-step-head" }, h("span", { class: "nba-step-title" }, title), h("span", { class: "nba-spinner", "aria-label": "running" })),
        h("pre", { class: "nba-streaming" }, this.textNode)),
    );
    return this.textNode;
  }

  /**
   * Append model text. Appending to one text node keeps each delta O(length of the delta).
   * @param {number | null} stepNumber
   * @param {string} text
   */
  delta(stepNumber, text) {
    const node = this.textNode !== null && stepNumber === this.stepNumber ? this.textNode : this.start(stepNumber);
    node.appendData(text);
  }

  /**
   * Append what the step's code printed while it runs (shown under the model's text).
   * @param {number | null} stepNumber
   * @param {string} text
   */
  logs(stepNumber, text) {
    if (this.textNode === null || stepNumber !== this.stepNumber) this.start(stepNumber);
    if (this.logsNode === null) {
      this.logsNode = document.createTextNode("");
      const step = this.el.querySelector(".nba-step-live");
      step?.append(h("div", { class: "nba-label" }, "Output so far"), h("pre", { class: "nba-live-logs" }, this.logsNode));
    }
    this.logsNode.appendData(text);
  }

  /**
   * Drop the live step when the run's state already holds it (or the run is no longer running).
   * @param {Partial<Run> | null | undefined} run
   */
  sync(run) {
    if (this.stepNumber === null) return;
    const running = run?.status === RunStatus.RUNNING;
    const done = (run?.steps ?? []).some((s) => s.kind === this.kind && s.step_number === this.stepNumber);
    if (!running || done) this.clear();
  }

  clear() {
    this.stepNumber = null;
    this.textNode = null;
    this.logsNode = null;
    this.el.replaceChildren();
  }
}
