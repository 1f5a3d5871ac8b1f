// The permission ask: when the sandbox refused a step's code a file, a host or the network, the run waits
// (status "awaiting_permission") and this panel asks "Step 3 wants to write `out/report.csv`" with three
// buttons: Allow once (the step's code runs again with the grant, which ends with the step), Allow for this
// run, and Deny (the model is told, and does without). State: the `controls` snapshot's `pending_ask` and
// `can.permission` (nbagent/notebook/driver.py); a click sends {action: "permission", answer}.
import { h } from "./dom.js";
import { RunStatus } from "./status.js";

/** @import { ControlCommand, ControlsState, PendingAsk, PermissionAnswer } from "./types.js" */

/** @type {ReadonlyArray<[PermissionAnswer, string, string]>} answer, label, title */
export const ASK_BUTTONS = Object.freeze([
  ["once", "Allow once", "Allow it for this step only: its code runs again, then the grant ends"],
  ["run", "Allow for this run", "Allow it until the run ends: the step's code runs again"],
  ["deny", "Deny", "Do not allow it: the model is told and does without"],
]);

/**
 * A question or an answer's line as nodes: text, with each `backticked` part (a path, a host) as code.
 * @param {string} text e.g. "Step 3 wants to write `out/report.csv`"
 * @returns {Array<Node | string>}
 */
export function askNodes(text) {
  return String(text)
    .split("`")
    .map((part, index) => (index % 2 === 1 ? h("code", { class: "nba-ask-target" }, part) : part))
    .filter((part) => part !== "");
}

/**
 * The permission asked for in `state`, or null (nothing asked, or no driver attached).
 * @param {ControlsState | null | undefined} state
 * @returns {PendingAsk | null}
 */
export function pendingAsk(state) {
  return state?.status === RunStatus.AWAITING_PERMISSION && state.pending_ask ? state.pending_ask : null;
}

/** The ask panel of one view; `update(state)` shows the pending ask, or hides the panel. */
export class AskView {
  /** @param {{send: (command: ControlCommand) => void}} ctx */
  constructor(ctx) {
    this.send = ctx.send;
    /** @type {PendingAsk | null} */
    this.ask = null;
    /** @type {string | null} the ask already answered here (its buttons stay disabled until the next one) */
    this.answered = null;
    /** @type {Map<PermissionAnswer, HTMLButtonElement>} */
    this.buttons = new Map();
    for (const [answer, label, title] of ASK_BUTTONS) {
      const button = h(
        "button",
        { type: "button", class: `nba-btn nba-ask-${answer}`, title, onclick: () => this.answer(answer) },
        label,
      );
      this.buttons.set(answer, button);
    }
    this.text = h("div", { class: "nba-ask-text" });
    this.el = h(
      "div",
      { class: "nba-ask", role: "group", "aria-label": "Permission asked for" },
      this.text,
      h("div", { class: "nba-ask-actions" }, ...this.buttons.values()),
    );
    this.update({});
  }

  /** @returns {string | null} what identifies the ask shown (a second, equal ask is a new one only by its step) */
  get key() {
    return this.ask ? `${this.ask.step}\u0000${this.ask.kind}\u0000${this.ask.target}` : null;
  }

  /**
   * Answer the ask shown (once: the buttons are disabled until the run asks again).
   * @param {PermissionAnswer} answer
   */
  answer(answer) {
    if (!this.ask || this.answered === this.key) return;
    this.answered = this.key;
    for (const button of this.buttons.values()) button.disabled = true;
    this.send({ action: "permission", answer });
  }

  /**
   * Show the ask of `state` (a controller snapshot), or hide the panel when nothing is asked.
   * @param {ControlsState | null | undefined} state
   */
  update(state) {
    const ask = pendingAsk(state);
    const before = this.key;
    this.ask = ask;
    this.el.hidden = !ask;
    if (!ask) {
      this.answered = null;
      for (const button of this.buttons.values()) button.disabled = true;
      return;
    }
    if (this.key !== before) this.answered = null; // a new question
    this.text.replaceChildren(...askNodes(ask.text));
    this.el.dataset.step = String(ask.step ?? "");
    const can = Boolean(state?.can?.permission) && this.answered !== this.key;
    for (const button of this.buttons.values()) button.disabled = !can;
  }
}
