// The run's status badge and its controls: Run, Step, Pause, Stop, the "approve code before it runs"
// toggle, the review box (editable code, Approve, Reject with a note), the permission ask (js/asks.js:
// Allow once, Allow for this run, Deny), "Undo this run" on a finished run and "Re-run from here" on steps.
// State comes from the widget's `controls` trait (a RunDriver snapshot, nbagent/notebook/driver.py;
// `ControlsSnapshot` in js/types.js):
//   {status, mode, approve_code, pending_code, pending_step, pending_ask, stopping, active, message, forks,
//    rerunnable: [step numbers], can: {run, step, pause, stop, approve, reject, rerun, permission, undo}}
// Commands (`ControlCommand`) go out as {type: "control", action, code?, note?, step?, on?, answer?} on the
// ControlChannel comm,
// which the kernel hears even while a cell runs (see nbagent/notebook/channel.py).
import "./controls.css";
import "./asks.css";
import { AskView } from "./asks.js";
import { h } from "./dom.js";
import { LIVE_STATUSES as LIVE, RunStatus, STATUS_LABELS, isRunStatus } from "./status.js";

/** @import { AnyModel } from "@anywidget/types" */
/** @import { ControlAction, ControlCommand, ControlsCan, ControlsState, Run, WidgetModel } from "./types.js" */

/** @typedef {"run" | "step" | "pause" | "stop" | "approve" | "reject" | "undo"} ButtonAction an action with its own button */

export { STATUS_LABELS };
/** @type {Array<[ButtonAction, string, string]>} action, label, title */
const BUTTONS = [
  ["run", "Run", "Run to the end (with edited code, if any)"],
  ["step", "Step", "Run exactly one step, then pause"],
  ["pause", "Pause", "Pause after the current step"],
  ["stop", "Stop", "Stop now: the running model call or code is cancelled"],
];
export const UNDO_TITLE =
  "Undo this run: every variable it created, rebound or changed goes back to what it was before the run " +
  "(agent.undo(), %agent --undo); files it wrote and what tools did are not undone.";
export const RERUN_TITLE =
  "Re-run from this step: variables go back to what they were before it, the earlier run is kept " +
  "(agent.forks) and the run continues live.";

/** What the badge says from the moment Stop is asked until the run has ended (the snapshot's `stopping`). */
export const STOPPING_LABEL = "stopping…";

/**
 * The status badge.
 * @param {string | null | undefined} status a run status (anything else shows as idle)
 * @param {boolean} [stopping] a stop was asked and the run has not ended yet: "stopping…" for a live status
 * @returns {HTMLElement}
 */
export function renderStatus(status, stopping = false) {
  const key = isRunStatus(status) ? status : RunStatus.IDLE;
  if (stopping && LIVE.has(key)) {
    return h("span", { class: "nba-status nba-status-stopping", role: "status" }, STOPPING_LABEL);
  }
  return h("span", { class: `nba-status nba-status-${key}`, role: "status" }, STATUS_LABELS[key]);
}

/**
 * The status to show: the controller's while it knows of a run (paused, awaiting approval), else the run's.
 * @param {Partial<Run> | null | undefined} run
 * @param {ControlsState | null | undefined} controls
 * @returns {RunStatus}
 */
export function effectiveStatus(run, controls) {
  const own = run?.status ?? RunStatus.IDLE;
  if (!controls || !controls.status) return own;
  if (controls.active || LIVE.has(controls.status)) return controls.status;
  return LIVE.has(own) ? controls.status : own;
}

/**
 * Send commands on the widget's ControlChannel once it is resolved; until then (or without one) on the
 * widget's own comm, which Python also listens to (heard only between cells). A resolved channel first says
 * "shown": a front end renders the widget, so the kernel may ask a person here.
 * @param {AnyModel<WidgetModel>} model the AgentWidget's anywidget model
 * @returns {(command: ControlCommand) => void}
 */
export function connectChannel(model) {
  /** @type {AnyModel | null} */
  let channel = null;
  const resolve = async () => {
    const ref = model.get("control_channel");
    const id = typeof ref === "string" ? ref.replace(/^IPY_MODEL_/, "") : null;
    channel = null;
    if (!id || !model.widget_manager?.get_model) return;
    try {
      channel = await model.widget_manager.get_model(id);
    } catch {
      channel = null; // e.g. a saved notebook without its kernel
    }
    // tell the kernel a person can see this widget: its asks wait for an answer here (driver.person_can_answer)
    channel?.send({ type: "control", action: "shown" });
  };
  resolve();
  model.on?.("change:control_channel", resolve);
  return (command) => {
    const message = { type: "control", ...command };
    if (channel) channel.send(message);
    else model.send(message);
  };
}

/** The controls of one view. `update(state)` keeps the review box's edits while the same code is pending. */
export class ControlsView {
  /** @param {{send: (command: ControlCommand) => void}} ctx */
  constructor(ctx) {
    this.send = ctx.send;
    /** @type {ControlsState} */
    this.state = {};
    /** @type {string | null} the step and code under review, to keep the person's edits */
    this.reviewKey = null;
    /** @type {Map<ButtonAction, HTMLButtonElement>} */
    this.buttons = new Map();
    const toolbar = h("div", { class: "nba-controls", role: "toolbar", "aria-label": "Run controls" });
    for (const [action, label, title] of BUTTONS) {
      const button = h(
        "button",
        { type: "button", class: `nba-btn nba-btn-${action}`, title, onclick: () => this.command(action) },
        label,
      );
      this.buttons.set(action, button);
      toolbar.append(button);
    }
    this.toggle = h("input", {
      type: "checkbox",
      class: "nba-approve-toggle",
      onchange: () => this.send({ action: "approve_mode", on: this.toggle.checked }),
    });
    toolbar.append(h("label", { class: "nba-approve-label" }, this.toggle, "approve code before it runs"));
    this.undo = h(
      "button",
      { type: "button", class: "nba-btn nba-btn-undo", title: UNDO_TITLE, onclick: () => this.command("undo") },
      "Undo this run",
    );
    this.buttons.set("undo", this.undo);
    toolbar.append(this.undo);

    this.code = h("textarea", {
      class: "nba-review-code",
      "aria-label": "Code to run",
      spellcheck: "false",
      rows: "6",
    });
    this.note = h("input", {
      type: "text",
      class: "nba-review-note",
      "aria-label": "Note for the model",
      placeholder: "Why not? This note goes back to the model.",
    });
    const approve = h(
      "button",
      { type: "button", class: "nba-btn nba-btn-approve", onclick: () => this.command("approve") },
      "Approve",
    );
    const reject = h(
      "button",
      { type: "button", class: "nba-btn nba-btn-reject", onclick: () => this.command("reject") },
      "Reject",
    );
    this.buttons.set("approve", approve).set("reject", reject);
    this.reviewTitle = h("div", { class: "nba-review-title" });
    this.review = h(
      "div",
      { class: "nba-review", role: "group", "aria-label": "Review the code before it runs" },
      this.reviewTitle,
      this.code,
      h("div", { class: "nba-review-actions" }, approve, reject, this.note),
    );
    this.asks = new AskView({ send: (command) => this.send(command) });
    this.message = h("div", { class: "nba-control-message", "aria-live": "polite" });
    this.el = h("div", { class: "nba-control-area" }, toolbar, this.review, this.asks.el, this.message);
    this.update({});
  }

  /**
   * Send `action` with what it needs: the (edited) code while code awaits approval, the note for Reject.
   * @param {ControlAction} action
   */
  command(action) {
    /** @type {ControlCommand} */
    const command = { action };
    if (this.state.status === RunStatus.AWAITING_APPROVAL && ["run", "step", "approve"].includes(action)) {
      command.code = this.code.value;
    }
    if (action === "reject") command.note = this.note.value;
    this.send(command);
  }

  /**
   * Show `state` (a controller snapshot; empty: no controller, e.g. a saved or reloaded run).
   * @param {ControlsState | null | undefined} state
   */
  update(state) {
    this.state = state ?? {};
    const s = this.state;
    const connected = Boolean(s.status);
    this.el.hidden = !connected;
    /** @type {Partial<ControlsCan>} */
    const can = s.can ?? {};
    for (const [action, button] of this.buttons) button.disabled = !can[action];
    this.undo.hidden = !can.undo; // only on a finished run whose changes can still be undone
    this.toggle.checked = Boolean(s.approve_code);
    this.toggle.disabled = !connected;
    const pending = s.status === RunStatus.AWAITING_APPROVAL ? s.pending_code : null; // code awaiting approval
    this.review.hidden = typeof pending !== "string";
    if (typeof pending === "string") {
      const key = `${s.pending_step}\u0000${pending}`;
      if (key !== this.reviewKey) {
        this.reviewKey = key; // new code to review: show it; later updates keep the person's edits
        this.code.value = pending;
        this.note.value = "";
      }
      this.reviewTitle.textContent =
        `Step ${s.pending_step ?? ""}: the model wrote this code. Edit it if you like, then ` +
        "Approve (or Run/Step) to run it, or Reject with a note.";
    } else {
      this.reviewKey = null;
    }
    this.asks.update(s);
    this.message.textContent = s.message ?? "";
  }

  /** The ask panel (a permission the run waits for), placed by the run view after its step. */
  get ask() {
    return this.asks.el;
  }

  /**
   * The status the run's badge shows.
   * @param {Partial<Run> | null | undefined} run
   * @returns {RunStatus}
   */
  statusOf(run) {
    return effectiveStatus(run, this.state);
  }

  /** Whether a stop was asked and the run has not ended yet (the badge then says "stopping…"). */
  get stopping() {
    return Boolean(this.state.stopping && this.state.active);
  }

  /**
   * Put a "Re-run from here" button on each finished action step rendered in `stepsEl`.
   * @param {HTMLElement} stepsEl
   */
  decorate(stepsEl) {
    const rerunnable = new Set(this.state.rerunnable ?? []);
    const enabled = Boolean(this.state.can?.rerun);
    const nodes = /** @type {NodeListOf<HTMLElement>} */ (stepsEl.querySelectorAll(":scope > .nba-step-action"));
    for (const node of nodes) {
      const number = Number(node.dataset.step);
      const head = node.querySelector(".nba-step-head");
      /** @type {HTMLButtonElement | null | undefined} */
      let button = head?.querySelector(":scope > .nba-rerun");
      if (!head || !rerunnable.has(number)) {
        button?.remove();
        continue;
      }
      if (!button) {
        button = h(
          "button",
          {
            type: "button",
            class: "nba-btn nba-rerun",
            "aria-label": `Re-run from here (step ${number})`,
            title: RERUN_TITLE,
            onclick: () => this.send({ action: "rerun", step: number }),
          },
          "Re-run from here",
        );
        head.append(button);
      }
      button.disabled = !enabled;
    }
  }
}
