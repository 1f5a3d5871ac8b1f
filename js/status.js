// The run statuses, as nbagent/record/status.py's RunStatus says them (tests/views/test_parity.py keeps
// the two equal), with the words the badge shows.

/** @typedef {"idle" | "running" | "paused" | "awaiting_approval" | "stopped" | "done" | "error"} RunStatus */

/** @type {readonly RunStatus[]} */
export const STATUSES = Object.freeze(["idle", "running", "paused", "awaiting_approval", "stopped", "done", "error"]);

/** Statuses of a run that is under way (the loop's thread is in it or waits in it). */
export const LIVE_STATUSES = new Set(["running", "paused", "awaiting_approval"]);

/** @type {Readonly<Record<RunStatus, string>>} */
export const STATUS_LABELS = Object.freeze({
  idle: "idle",
  running: "running",
  paused: "paused",
  awaiting_approval: "awaiting approval",
  stopped: "stopped",
  done: "done",
  error: "error",
});
