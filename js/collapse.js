// "Show more": long blocks (logs, code, model text) are clipped to a few lines with a toggle.
// Length is measured in lines of text, not pixels, so the decision is the same in every front-end
// (and testable without layout).
import { h } from "./dom.js";

export const DEFAULT_MAX_LINES = 24;

/**
 * Number of lines in a text (a trailing newline does not count as a line).
 * @param {string | null | undefined} text
 * @returns {number}
 */
export function countLines(text) {
  if (!text) return 0;
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return body.split("\n").length;
}

/**
 * Wrap `content` so that it shows at most `maxLines` lines until "Show more" is clicked.
 * @param {HTMLElement} content
 * @param {{text?: string, maxLines?: number}} [options] `text` defaults to content.textContent
 * @returns {HTMLElement} the wrapper (or `content` itself when it is short)
 */
export function collapsible(content, { text, maxLines = DEFAULT_MAX_LINES } = {}) {
  const lines = countLines(text ?? content.textContent ?? "");
  if (lines <= maxLines) return content;
  const wrapper = h("div", { class: "nba-collapsible nba-collapsed" }, content);
  wrapper.style.setProperty("--nba-max-lines", String(maxLines));
  const hidden = lines - maxLines;
  const button = h("button", { class: "nba-more", type: "button", "aria-expanded": "false" });
  const sync = () => {
    const collapsed = wrapper.classList.contains("nba-collapsed");
    button.textContent = collapsed ? `Show more (${hidden} more line${hidden === 1 ? "" : "s"})` : "Show less";
    button.setAttribute("aria-expanded", String(!collapsed));
  };
  button.addEventListener("click", () => {
    wrapper.classList.toggle("nba-collapsed");
    sync();
  });
  sync();
  wrapper.append(button);
  return wrapper;
}

// Folding whole steps: a step's head stays, its body hides. The fold state lives in the run view (steps are
// rebuilt when their data changes), keyed by `stepKey`, and is put back on every rebuilt step node.

/**
 * The key a step's fold state is kept under ("action:3", "planning:4"), or null for steps that do not fold.
 * @param {{kind?: string, step_number?: number | null}} step
 * @returns {string | null}
 */
export function stepKey(step) {
  if ((step.kind !== "action" && step.kind !== "planning") || step.step_number == null) return null;
  return `${step.kind}:${step.step_number}`;
}

/**
 * Fold or unfold a rendered step (a `.nba-step` with a `.nba-fold` button in its head).
 * @param {HTMLElement} stepEl
 * @param {boolean} folded
 */
export function setFolded(stepEl, folded) {
  if (stepEl.classList.contains("nba-step-folded") === folded) return; // (a step renders unfolded: most cost nothing)
  stepEl.classList.toggle("nba-step-folded", folded);
  const button = stepEl.querySelector(":scope > .nba-step-head > .nba-fold");
  if (!button) return;
  button.setAttribute("aria-expanded", String(!folded));
  button.textContent = folded ? "▸" : "▾";
}

/** Which steps of a run are folded, by `stepKey`. */
export class StepFolds {
  constructor() {
    /** @type {Set<string>} */
    this.folded = new Set();
  }

  /** @param {string | null} key */
  has(key) {
    return key !== null && this.folded.has(key);
  }

  /**
   * @param {string} key
   * @returns {boolean} whether the step is folded now
   */
  toggle(key) {
    if (this.folded.has(key)) this.folded.delete(key);
    else this.folded.add(key);
    return this.folded.has(key);
  }

  /** @param {Iterable<string | null>} keys fold these (collapse all) */
  foldAll(keys) {
    for (const key of keys) if (key !== null) this.folded.add(key);
  }

  unfoldAll() {
    this.folded.clear();
  }

  get any() {
    return this.folded.size > 0;
  }
}
