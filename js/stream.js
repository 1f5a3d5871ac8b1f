// The live step: shown while the model is still writing, fed by transient "step_start"/"delta"
// messages, and dropped once the finished step arrives in the synced `run` state.
import { h } from "./dom.js";

export class LiveStep {
  constructor() {
    this.el = h("div", { class: "nba-live" });
    this.stepNumber = null;
    this.textNode = null;
  }

  /** A new step began: show its placeholder. */
  start(stepNumber, kind = "action") {
    this.stepNumber = stepNumber;
    this.textNode = document.createTextNode("");
    const title = kind === "planning" ? "Planning" : `Step ${stepNumber}`;
    this.el.replaceChildren(
      h("div", { class: "nba-step nba-step-live", dataset: { step: stepNumber, kind } },
        h("div", { class: "nba-step-head" }, h("span", { class: "nba-step-title" }, title), h("span", { class: "nba-spinner", "aria-label": "running" })),
        h("pre", { class: "nba-streaming" }, this.textNode)),
    );
  }

  /** Append model text. Appending to one text node keeps each delta O(length of the delta). */
  delta(stepNumber, text) {
    if (this.textNode === null || stepNumber !== this.stepNumber) this.start(stepNumber);
    this.textNode.appendData(text);
  }

  /** Drop the live step when the run's state already holds it (or the run is no longer running). */
  sync(run) {
    if (this.stepNumber === null) return;
    const running = run?.status === "running";
    const done = (run?.steps ?? []).some((s) => s.kind !== "task" && s.kind !== "final" && s.step_number === this.stepNumber && s.kind === (this.el.firstChild?.dataset.kind ?? s.kind));
    if (!running || done) this.clear();
  }

  clear() {
    this.stepNumber = null;
    this.textNode = null;
    this.el.replaceChildren();
  }
}
