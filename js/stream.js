// The live step: shown while the model is still writing, fed by transient "step_start"/"delta"
// messages, and dropped once the finished step arrives in the synced `run` state.
import { h } from "./dom.js";
import { RunStatus } from "./status.js";

/** @import { Run, StepFields } from "./types.js" */

const CODE_BLOCK = /```[\w+-]*[ \t]*\n[\s\S]*?(?:\n?```|$)|<code>[\s\S]*?(?:<\/code>|$)/g;

/**
 * Streamed model text without its code blocks (closed or still open), and without the "Code:" line that led to one.
 * @param {string} text
 * @returns {string}
 */
export function withoutCode(text) {
  return text.replace(CODE_BLOCK, "").replace(/^\s*Code:\s*$/gim, "").trim();
}

export class LiveStep {
  constructor() {
    /** @type {HTMLElement | null} */
    this.spinner = null;
    /** @type {HTMLElement | null} */
    this.waitChip = null;
    /** @type {HTMLElement | null} */
    this.pre = null;
    /** @type {HTMLElement | null} */
    this.thought = null;
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
    this.spinner = h("span", { class: "nba-spinner", "aria-label": "running" });
    this.waitChip = h("span", { class: "nba-chip nba-live-waiting", hidden: true }, "waiting for you");
    this.pre = h("pre", { class: "nba-streaming" }, this.textNode);
    this.thought = h("pre", { class: "nba-streaming nba-live-thought", hidden: true });
    this.el.replaceChildren(
      h("div", { class: "nba-step nba-step-live", dataset: { step: stepNumber, kind } },
        h("div", { class: "nba-step-head" }, h("span", { class: "nba-step-title" }, title), this.spinner, this.waitChip),
        this.pre, this.thought),
    );
    return this.textNode;
  }

  /**
   * A person is asked (code to approve, a permission): nothing turns, and the streamed text shows without its code,
   * which the review box or the step shows (once). Back to running, the spinner and the whole text return.
   * @param {boolean} waiting
   */
  setWaiting(waiting) {
    if (!this.spinner || !this.pre || !this.thought || !this.waitChip) return;
    this.spinner.hidden = waiting;
    this.waitChip.hidden = !waiting;
    if (waiting) this.thought.textContent = withoutCode(this.textNode?.data ?? "");
    this.thought.hidden = !waiting || !this.thought.textContent;
    this.pre.hidden = waiting;
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
   * Drop the live step when the run's state already holds it (or the run is no longer running); while a person is
   * asked (`status`, the controls' view of the run), keep it still and without its code.
   * @param {Partial<Run> | null | undefined} run
   * @param {string | undefined} [status] the status shown (js/controls.js effectiveStatus), else the run's own
   */
  sync(run, status = run?.status) {
    if (this.stepNumber === null) return;
    const waiting = status === RunStatus.AWAITING_APPROVAL || status === RunStatus.AWAITING_PERMISSION;
    const running = run?.status === RunStatus.RUNNING || waiting;
    const done = (run?.steps ?? []).some((s) => s.kind === this.kind && s.step_number === this.stepNumber);
    if (!running || done) this.clear();
    else this.setWaiting(waiting);
  }

  clear() {
    this.spinner = this.pre = this.thought = this.waitChip = null;
    this.stepNumber = null;
    this.textNode = null;
    this.logsNode = null;
    this.el.replaceChildren();
  }
}
