// The run's status and, later, its controls (issue 6: Run, Step, Pause, Stop, Approve, Reject).
// For now this renders the status badge and an empty toolbar; control buttons will send
// `model.send({type: "control", action})` and be enabled from `run.controls`.
import { h } from "./dom.js";

export const STATUS_LABELS = {
  idle: "idle",
  running: "running",
  paused: "paused",
  awaiting_approval: "awaiting approval",
  stopped: "stopped",
  done: "done",
  error: "error",
};

/** The status badge. */
export function renderStatus(status) {
  const key = STATUS_LABELS[status] ? status : "idle";
  return h("span", { class: `nba-status nba-status-${key}`, role: "status" }, STATUS_LABELS[key]);
}

/**
 * The toolbar slot: empty until issue 6 adds its buttons.
 * @param {object} _run
 * @param {(message: object) => void} _send
 */
export function renderControls(_run, _send) {
  return h("div", { class: "nba-controls", role: "toolbar", "aria-label": "Run controls" });
}
