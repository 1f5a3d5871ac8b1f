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
 * @property {ForksState} [state] what this model's views share, so a view drawn anew keeps what was open
 */

/**
 * @typedef {object} ShownFork Python's answer for the run asked for
 * @property {ForkMessage} message
 * @property {DataView[]} buffers
 */

/**
 * What a person opened, kept per widget model rather than per view, and shown alike in every view of it: a
 * finished run's output is drawn anew (its display refreshed with the static HTML), the new view built while the
 * old one is still on the page, and the list or run a person opens in either must stay open.
 */
export class ForksState {
  constructor() {
    this.listOpen = false;
    /** @type {number | null} the run shown, or asked for */
    this.openIndex = null;
    /** @type {ShownFork | null} */
    this.shown = null;
    /** @type {Set<() => void>} */
    this.listeners = new Set();
  }

  /**
   * @param {() => void} listener called after every change
   * @returns {() => void} stop listening
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @param {{listOpen?: boolean, openIndex?: number | null, shown?: ShownFork | null}} change */
  set(change) {
    Object.assign(this, change);
    for (const listener of this.listeners) listener();
  }
}

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
    this.state = ctx.state ?? new ForksState();
    /** @type {ShownFork | number | null} what the panel holds: an answer, the index being asked for, or nothing */
    this.drawn = null;
    this.toggle = h("button", {
      type: "button",
      class: "nba-btn nba-forks-toggle",
      "aria-expanded": "false",
      title: "Runs kept by \"Re-run from here\" (agent.forks)",
      onclick: () => this.state.set({ listOpen: !this.state.listOpen }),
    });
    this.list = h("ul", { class: "nba-forks-list", "aria-label": "Earlier runs" });
    this.panel = h("div", { class: "nba-fork-panel", role: "region", "aria-label": "Earlier run (read-only)" });
    this.el = h("div", { class: "nba-forks" }, this.list, this.panel);
    this.unsubscribe = this.state.subscribe(() => this.sync());
    this.toggle.hidden = true;
    this.sync(); // nothing listed yet: hidden, and the shared state untouched until `update` lists the runs
  }

  /** @returns {number | null} the run shown, or asked for */
  get openIndex() {
    return this.state.openIndex;
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
    if (n === 0 && (this.state.listOpen || this.state.openIndex !== null)) {
      this.state.set({ listOpen: false, openIndex: null, shown: null });
    } else this.sync();
  }

  /** @param {number} index ask Python for earlier run `index` */
  open(index) {
    this.state.set({ openIndex: index, shown: null });
    this.ctx.send({ type: "open_fork", index });
  }

  close() {
    this.state.set({ openIndex: null, shown: null });
  }

  /**
   * Python's answer (every view of the model hears it; the first one keeps it).
   * @param {ForkMessage} message
   * @param {DataView[]} buffers
   */
  show(message, buffers) {
    if (message.index !== this.openIndex || this.state.shown?.message === message) return; // an earlier request's
    this.state.set({ shown: { message, buffers: buffers ?? [] } });
  }

  /** Draw what the shared state says: the list open or not, the run shown, asked for, or none. */
  sync() {
    const { listOpen, openIndex, shown } = this.state;
    this.list.hidden = !listOpen || this.forks.length === 0;
    this.toggle.setAttribute("aria-expanded", String(!this.list.hidden));
    const want =
      openIndex === null || this.forks.length === 0 ? null : shown?.message.index === openIndex ? shown : openIndex;
    if (want !== this.drawn) {
      this.drawn = want;
      if (want === null) this.panel.replaceChildren();
      else if (typeof want === "number") {
        this.panel.replaceChildren(h("div", { class: "nba-fork-loading" }, `Opening run ${want + 1}…`));
      } else this.drawRun(want);
    }
    this.panel.hidden = want === null;
    this.el.hidden = this.list.hidden && this.panel.hidden; // no room taken while neither is shown
  }

  /** @param {ShownFork} shown the run, read-only, under a title with "Make live" and "Close" */
  drawRun({ message, buffers }) {
    const run = h("div", { class: "nbagent nba-fork-run" });
    this.ctx.renderRun(message.run, run, this.ctx.imagesOf(buffers));
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

  /** Stop following the shared state (the view is gone). */
  dispose() {
    this.unsubscribe();
  }
}
