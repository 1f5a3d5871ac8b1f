// The permission ask: when the sandbox refused a step's code a file, a host or the network, the run waits
// (status "awaiting_permission") and this panel asks "Step 3 wants to write [out/report.csv]" (nbagent's words and
// the target as separate parts, the target one text node, never parsed) with three
// buttons: Allow once (the step's code runs again with the grant, which ends with the step), Allow for this
// run, and Deny (the model is told, and does without). State: the `controls` snapshot's `pending_ask` and
// `can.permission` (nbagent/notebook/driver.py); a click sends {action: "permission", answer}.
import { h } from "./dom.js";
import { RunStatus } from "./status.js";

/** @import { AskPart, ControlCommand, ControlsState, PendingAsk, PermissionAnswer } from "./types.js" */

/** @type {ReadonlyArray<[PermissionAnswer, string, string]>} answer, label, title */
export const ASK_BUTTONS = Object.freeze([
  ["once", "Allow once", "Allow it for this step only: its code runs again, then the grant ends"],
  ["run", "Allow for this run", "Allow it until the run ends: the step's code runs again"],
  ["deny", "Deny", "Do not allow it: the model is told and does without"],
]);

/** Characters a target never shows as they are (nbagent/sandbox/wire/capabilities.py `_UNSAFE_TARGET`). */
export const UNSAFE_TARGET = /[\u0000-\u001f\u007f-\u009f`\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/**
 * A target as it is shown: each control, bidi, zero-width or backtick character written as `\uXXXX` (Python
 * escapes it already; this is the same rule again, idempotent, for a state that did not come through it).
 * @param {string} target
 * @returns {string}
 */
export function shownTarget(target) {
  return String(target).replace(UNSAFE_TARGET, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A question or an answer's line as nodes, part by part: nbagent's words as text, the target as one `<code>` text
 * node and a detail (a reason, what a variable is) as a text span. Nothing is parsed: a target holding backticks or
 * bidi overrides cannot write nbagent's sentence. An older state without parts shows its text as one text node.
 * @param {AskPart[] | null | undefined} parts
 * @param {string} [text] the plain-text line (older states)
 * @returns {Array<Node | string>}
 */
export function askNodes(parts, text = "") {
  if (!Array.isArray(parts)) return [document.createTextNode(String(text ?? ""))];
  return parts.map(([role, part]) => {
    if (role === "target") return h("code", { class: "nba-ask-target" }, document.createTextNode(shownTarget(part)));
    if (role === "detail") return h("span", { class: "nba-ask-detail" }, document.createTextNode(shownTarget(part)));
    return document.createTextNode(String(part));
  });
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
    this.text.replaceChildren(...askNodes(ask.parts, ask.text));
    this.el.dataset.step = String(ask.step ?? "");
    const can = Boolean(state?.can?.permission) && this.answered !== this.key;
    for (const button of this.buttons.values()) button.disabled = !can;
  }
}
