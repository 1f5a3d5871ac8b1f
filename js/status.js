// The run statuses, as nbagent/record/status.py's RunStatus says them (tests/views/test_parity.py keeps
// the two equal), with the words the badge shows. Compare with `RunStatus.PAUSED`, not "paused".

/** The status values by name, like Python's `RunStatus.AWAITING_APPROVAL`. */
export const RunStatus = Object.freeze({
  IDLE: "idle",
  RUNNING: "running",
  PAUSED: "paused",
  AWAITING_APPROVAL: "awaiting_approval",
  AWAITING_PERMISSION: "awaiting_permission",
  STOPPED: "stopped",
  DONE: "done",
  ERROR: "error",
  MAX_STEPS: "max_steps",
  NO_ANSWER: "no_answer",
  TIMED_OUT: "timed_out",
  STUCK: "stuck",
});

/**
 * Where a run is, as shown to a person: one of the values of `RunStatus`.
 * @typedef {(typeof RunStatus)[keyof typeof RunStatus]} RunStatus
 */

/** Every status, in the order of Python's enum. @type {readonly RunStatus[]} */
export const STATUSES = Object.freeze(Object.values(RunStatus));

/**
 * Statuses of a run that is under way (the loop's thread is in it or waits in it).
 * @type {ReadonlySet<RunStatus>}
 */
export const LIVE_STATUSES = new Set([
  RunStatus.RUNNING,
  RunStatus.PAUSED,
  RunStatus.AWAITING_APPROVAL,
  RunStatus.AWAITING_PERMISSION,
]);

/** @type {Readonly<Record<RunStatus, string>>} */
export const STATUS_LABELS = Object.freeze({
  idle: "idle",
  running: "running",
  paused: "paused",
  awaiting_approval: "awaiting approval",
  awaiting_permission: "awaiting permission",
  stopped: "stopped",
  done: "done",
  error: "failed",
  max_steps: "max steps",
  no_answer: "no answer",
  timed_out: "timed out",
  stuck: "stuck",
});

/**
 * How a run ended, as nbagent/record/status.py's RunOutcome says it. Anything but SUCCESS means the
 * final box holds no answer (the model's closing reply after max steps, or an error/apology).
 */
export const RunOutcome = Object.freeze({
  SUCCESS: "success",
  MAX_STEPS: "max_steps_error",
  STOPPED: "stopped",
  ERROR: "error",
  TIMED_OUT: "timed_out",
  STUCK: "stuck",
  MODEL_ERROR: "model_error",
  ERROR_ANSWER: "error_answer",
});

/**
 * Whether `value` is one of the statuses (a run dict from an older or hand-made source may say anything).
 * @param {unknown} value
 * @returns {value is RunStatus}
 */
export function isRunStatus(value) {
  return typeof value === "string" && Object.hasOwn(STATUS_LABELS, value);
}

/**
 * How a step ended when it did not end in the plain way, as nbagent/record/status.py's StepMark says it: the badge
 * on the step. Stopped, timed out and rejected are no errors (their own colours); a test keeps the two equal.
 */
export const StepMark = Object.freeze({
  ERROR: "error",
  STOPPED: "stopped",
  TIMED_OUT: "timed_out",
  STUCK: "stuck",
  REJECTED: "rejected",
});

/** @typedef {(typeof StepMark)[keyof typeof StepMark]} StepMark */

/** @type {Readonly<Record<StepMark, string>>} */
export const STEP_MARK_LABELS = Object.freeze({
  error: "error",
  stopped: "stopped",
  timed_out: "timed out",
  stuck: "stuck",
  rejected: "rejected",
});

/**
 * The mark of a step dict: its own `mark` (Python decides it from the error's class), or for a state saved before
 * steps had one, "stopped" for a stopped step and "error" for one with an error.
 * @param {{mark?: string | null, stopped?: boolean, error?: string | null}} step
 * @returns {StepMark | null}
 */
export function stepMark(step) {
  const mark = step.mark;
  if (typeof mark === "string" && Object.hasOwn(STEP_MARK_LABELS, mark)) return /** @type {StepMark} */ (mark);
  if (step.stopped) return StepMark.STOPPED;
  return step.error ? StepMark.ERROR : null;
}
