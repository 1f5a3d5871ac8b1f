// Earlier runs: the runs kept when a person chose "Re-run from here" (`agent.forks`, the loop's
// RunSession). The widget's `forks` trait lists them; opening one asks Python for it
// ({type: "open_fork", index}) and Python answers {type: "fork", index, run} with the run's PNGs as the
// message's buffers. An opened run is shown read-only (no controls, no live step) under the header.
import { h } from "./dom.js";

/** @import { ImageSource } from "./images.js" */
/** @import { Run } from "./types.js" */

/**
 * One earlier run, as the `forks` trait lists it (nbagent/notebook/widget.py `fork_summaries`).
 * @typedef {object} ForkSummary
 * @property {number} index its place in agent.forks
 * @property {string} task
 * @property {number} steps action steps it ran
 * @property {string} status how it ended
 */

/**
 * An opened earlier run (Python -> JS; its images are the message's buffers).
 * @typedef {object} ForkMessage
 * @property {"fork"} type
 * @property {number} index
 * @property {Run} run
 */

/**
 * "Send me earlier run `index`" (JS -> Python).
 * @typedef {object} OpenForkMessage
 * @property {"open_fork"} type
 * @property {number} index
 */

/**
 * What the list needs: a way to ask for a run, to make an image source over a message's buffers, and to
 * render a run read-only.
 * @typedef {object} ForksContext
 * @property {(message: OpenForkMessage) => void} send
 * @property {(command: {action: "restore_fork", index: number}) => void} [control] the driver's command channel
 * @property {(buffers: DataView[]) => ImageSource} imagesOf
 * @property {(run: Run, container: HTMLElement, images: ImageSource) => void} renderRun
 */

/**
 * The label of one earlier run in the list.
 * @param {ForkSummary} fork
 * @returns {string}
 */
export function forkLabel(fork) {
  const task = fork.task.length > 60 ? `${fork.task.slice(0, 59)}…` : fork.task;
  return `Run ${fork.index + 1}: ${task} · ${fork.steps} step${fork.steps === 1 ? "" : "s"} · ${fork.status}`;
}

export const RESTORE_TITLE =
  "Make this run the live one again: its steps and its variables come back; the live run is kept among the " +
  "earlier runs (agent.restore_fork)";

export class ForksView {
  /** @param {ForksContext} ctx */
  constructor(ctx) {
    this.ctx = ctx;
    /** @type {ForkSummary[]} */
    this.forks = [];
    /** @type {number | null} the run shown, or asked for */
    this.openIndex = null;
    this.toggle = h("button", {
      type: "button",
      class: "nba-btn nba-forks-toggle",
      "aria-expanded": "false",
      title: "Runs kept by \"Re-run from here\" (agent.forks)",
      onclick: () => this.setListOpen(this.list.hidden === true),
    });
    this.list = h("ul", { class: "nba-forks-list", "aria-label": "Earlier runs" });
    this.list.hidden = true;
    this.panel = h("div", { class: "nba-fork-panel", role: "region", "aria-label": "Earlier run (read-only)" });
    this.panel.hidden = true;
    this.el = h("div", { class: "nba-forks" }, this.list, this.panel);
    this.el.hidden = true;
    this.update([]);
  }

  /** @param {boolean} open */
  setListOpen(open) {
    this.list.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    this.syncHidden();
  }

  /** The container takes no room while neither the list nor a run is shown. */
  syncHidden() {
    this.el.hidden = this.list.hidden === true && this.panel.hidden === true;
  }

  /**
   * Show the list of earlier runs (the `forks` trait).
   * @param {ForkSummary[] | null | undefined} forks
   */
  update(forks) {
    this.forks = Array.isArray(forks) ? forks : [];
    const n = this.forks.length;
    this.toggle.hidden = n === 0;
    this.toggle.textContent = `Earlier runs (${n})`;
    this.list.replaceChildren(
      ...this.forks.map((fork) =>
        h("li", null, h("button", {
          type: "button",
          class: "nba-fork-open",
          dataset: { index: fork.index },
          onclick: () => this.open(fork.index),
        }, forkLabel(fork))),
      ),
    );
    if (n === 0) {
      this.setListOpen(false);
      this.close();
    }
  }

  /** @param {number} index ask Python for earlier run `index` */
  open(index) {
    this.openIndex = index;
    this.panel.hidden = false;
    this.syncHidden();
    this.panel.replaceChildren(h("div", { class: "nba-fork-loading" }, `Opening run ${index + 1}…`));
    this.ctx.send({ type: "open_fork", index });
  }

  close() {
    this.openIndex = null;
    this.panel.hidden = true;
    this.panel.replaceChildren();
    this.syncHidden();
  }

  /**
   * Python's answer: show the run read-only.
   * @param {ForkMessage} message
   * @param {DataView[]} buffers
   */
  show(message, buffers) {
    if (message.index !== this.openIndex) return; // an answer to an earlier request
    const run = h("div", { class: "nbagent nba-fork-run" });
    this.ctx.renderRun(message.run, run, this.ctx.imagesOf(buffers ?? []));
    const close = h("button", { type: "button", class: "nba-btn nba-fork-close", onclick: () => this.close() }, "Close");
    const control = this.ctx.control;
    const restore = control
      ? h("button", {
        type: "button",
        class: "nba-btn nba-fork-restore",
        title: RESTORE_TITLE,
        onclick: () => {
          control({ action: "restore_fork", index: message.index });
          this.close();
        },
      }, "Make live")
      : null;
    const title = h("div", { class: "nba-fork-title" },
      h("span", null, `Earlier run ${message.index + 1} (read-only, kept in agent.forks[${message.index}])`),
      restore, close);
    this.panel.replaceChildren(title, run);
  }
}
