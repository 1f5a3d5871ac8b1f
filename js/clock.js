// The header's clock: the running step's time and the whole run's, ticking in the browser while a run is live
// ("step 3 · 0:42 · run 2:15": js/run.js puts the step's label in the step counter, the times here), frozen at the
// run's total when it ends ("run 2:15").
import { h } from "./dom.js";
import { LIVE_STATUSES, RunStatus } from "./status.js";

/** @import { Run, StepFields } from "./types.js" */

/** How often a live clock redraws (ms): twice a second, so no second is skipped. */
export const TICK_MS = 500;

/**
 * The statuses in which the run waits (Pause, or a person asked for approval or a permission): the step clock stops.
 * @type {ReadonlySet<string>}
 */
export const WAITING_STATUSES = new Set([RunStatus.PAUSED, RunStatus.AWAITING_APPROVAL, RunStatus.AWAITING_PERMISSION]);

/**
 * 42 -> "0:42", 135 -> "2:15", 3725 -> "1:02:05" (whole seconds, rounded down); null for anything but a number ≥ 0.
 * @param {number | null | undefined} seconds
 * @returns {string | null}
 */
export function formatClock(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return null;
  const whole = Math.floor(seconds);
  const s = whole % 60;
  const m = Math.floor(whole / 60) % 60;
  const hours = Math.floor(whole / 3600);
  const ss = String(s).padStart(2, "0");
  return hours ? `${hours}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/**
 * The step a run's state says is running: the last action or planning step still without a duration, else the one
 * after the last action step (its model is still writing; the state holds it once its code or tool call is known).
 * @param {Partial<Run>} run
 * @returns {{number: number | null, kind: StepFields["kind"]}}
 */
export function runningStep(run) {
  const steps = run.steps ?? [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i];
    if (step.kind !== "action" && step.kind !== "planning") continue;
    if (step.duration === null || step.duration === undefined) return { number: step.step_number, kind: step.kind };
    break;
  }
  const actions = steps.filter((s) => s.kind === "action");
  const last = actions.length ? actions[actions.length - 1].step_number : null;
  return { number: typeof last === "number" ? last + 1 : actions.length + 1, kind: "action" };
}

/**
 * The running step, as the clock counts it.
 * @typedef {object} StepAnchor
 * @property {number | null} number
 * @property {StepFields["kind"]} kind
 * @property {number} at when it started, on the browser's clock (ms)
 * @property {number | null} kernel when it started on the kernel's clock (ms): the state's `step_started_at`
 * @property {boolean} local started by a "step_start" message this view received (`at` is its arrival)
 * @property {number} waited ms of this step spent waiting (paused, awaiting approval or permission), seen by this view
 */

/**
 * The header's clock of a run. The rules:
 *
 * - **What it counts from.** The run's start is the state's `started_at`, the running step's its `step_started_at`
 *   (nbagent/views/state.py; Unix time on the kernel's clock). A step whose "step_start" message this view received
 *   counts from the message's arrival instead (on the browser's clock, before the state says the step began); the
 *   first state of that step then tells the difference between the two clocks, which the run's start is corrected
 *   by (a kernel on another machine whose clock is off). Elapsed times never go below 0.
 * - **When it ticks.** Only while the run is live (`LIVE_STATUSES`) and this view has heard from the kernel since it
 *   was built (`heard()`: a change of the run or the controls, or a message). A widget restored from a notebook's
 *   saved widget state hears nothing, so a run saved while it was going never ticks there, whatever its state says;
 *   it shows no times (a finished run shows its total, below).
 * - **Paused (the pause rule).** While the run waits — paused by Pause or Step, awaiting approval of code,
 *   awaiting a permission (`WAITING_STATUSES`) — the step clock stops and says "paused"; when the run goes on, the
 *   step clock goes on from where it stopped: it counts the step's working time, the waits this view saw left out
 *   (the finished step's own duration, in its header, is wall time and includes them). The run clock is wall time
 *   since the run started, waits included, as the run's total is: it keeps counting through a pause (the status
 *   badge says the run is paused), and it does not jump when the run ends. Pause takes effect between steps, so a
 *   paused run usually shows no step clock at all, only the run's.
 * - **Ended** (any status not live): frozen at the run's `duration` ("run 2:15"; until that arrives, the last time
 *   shown), no step clock, no timer. Nothing is shown for a run that has no duration and never ticked here.
 */
export class RunClock {
  /**
   * @param {object} [options]
   * @param {() => number} [options.now] the browser's clock (ms), `Date.now` by default
   */
  constructor({ now = () => Date.now() } = {}) {
    this.el = h("span", { class: "nba-clock" });
    this.el.hidden = true;
    this.now = now;
    /** whether this view heard from the kernel since it was built (only then a live run ticks) */
    this.isHeard = false;
    /** @type {Partial<Run> | null} the run state last seen (a new object: a new state from the kernel) */
    this.run = null;
    /** @type {string} the status shown (the controller's while it knows of a run) */
    this.status = RunStatus.IDLE;
    /** @type {StepAnchor | null} the running step, null between steps */
    this.step = null;
    /** the browser's clock minus the kernel's (ms), learned from a step's message and state */
    this.offset = 0;
    /** @type {number | null} when the current wait began (browser ms), null while the run does not wait */
    this.waitSince = null;
    /** @type {number | null} the run's elapsed seconds last shown (the frozen value until the run's duration arrives) */
    this.lastRunSeconds = null;
    /** @type {ReturnType<typeof setInterval> | null} */
    this.timer = null;
    /** @type {string} what is shown, to redraw only when it changes */
    this.shown = "";
  }

  /** The label of the running step for the header's step counter ("step 3", "plan"), or null when none is shown. */
  get stepLabel() {
    if (!this.step || !this.ticking) return null;
    if (this.step.kind === "planning") return "plan";
    return this.step.number === null ? "step" : `step ${this.step.number}`;
  }

  /** Whether the clock counts now: a live run this view has heard from the kernel about. */
  get ticking() {
    return this.isHeard && LIVE_STATUSES.has(/** @type {any} */ (this.status));
  }

  /** Word came from the kernel (a state change or a message): a live run may tick from now on. */
  heard() {
    if (this.isHeard) return;
    this.isHeard = true;
    this.render();
  }

  /**
   * A "step_start" message: the step counts from now.
   * @param {number | null} number
   * @param {StepFields["kind"]} [kind]
   */
  stepStarted(number, kind = "action") {
    const at = this.now();
    this.step = { number, kind, at, kernel: null, local: true, waited: 0 };
    if (this.waitSince !== null) this.waitSince = at;
    this.render();
  }

  /**
   * The run's state and the status shown (call on every render; a new `run` object is a new state).
   * @param {Partial<Run>} run
   * @param {string} status
   */
  update(run, status) {
    if (run !== this.run) {
      const newRun = this.run?.started_at !== run.started_at;
      this.run = run;
      if (newRun) this.lastRunSeconds = null;
      this.readStep(run);
    }
    this.setStatus(status);
    this.render();
  }

  /** @param {Partial<Run>} run a new state: is a step running, since when? */
  readStep(run) {
    const started = run.step_started_at;
    if (typeof started !== "number") {
      this.step = null; // states come in order after the messages: null means the step ended
      return;
    }
    const kernel = started * 1000;
    if (this.step?.local && this.step.kernel === null) {
      this.step.kernel = kernel; // the step of the last "step_start" message (a later step would have sent one)
      this.offset = this.step.at - kernel;
      return;
    }
    if (this.step && this.step.kernel === kernel) return; // the same step
    const { number, kind } = runningStep(run);
    this.step = { number, kind, at: kernel + this.offset, kernel, local: false, waited: 0 };
  }

  /** @param {string} status */
  setStatus(status) {
    const now = this.now();
    const waiting = WAITING_STATUSES.has(status);
    if (waiting && this.waitSince === null) this.waitSince = now;
    else if (!waiting && this.waitSince !== null) {
      if (this.step) this.step.waited += Math.max(0, now - Math.max(this.waitSince, this.step.at));
      this.waitSince = null;
    }
    this.status = status;
  }

  /** @returns {number | null} the running step's seconds (its waits left out), null without one */
  stepSeconds() {
    if (!this.step) return null;
    const end = this.waitSince === null ? this.now() : Math.max(this.waitSince, this.step.at);
    return Math.max(0, end - this.step.at - this.step.waited) / 1000;
  }

  /** @returns {number | null} seconds since the run started (wall time), null when the state has no start */
  runSeconds() {
    const started = this.run?.started_at;
    if (typeof started !== "number") return null;
    return Math.max(0, this.now() - (started * 1000 + this.offset)) / 1000;
  }

  /** Redraw the times; start the timer while the clock ticks, stop it when it no longer does. */
  render() {
    /** @type {Array<{cls: string, text: string, title: string}>} */
    const parts = [];
    if (this.ticking) {
      const step = formatClock(this.stepSeconds());
      if (step !== null) {
        const held = this.waitSince !== null;
        parts.push({
          cls: held ? "nba-clock-step nba-clock-held" : "nba-clock-step",
          text: held ? `${step} paused` : step,
          title: held
            ? "the running step's time, stopped while the run waits (paused, or for your approval or permission)"
            : "the running step's time (it stops while the run waits)",
        });
      }
      const seconds = this.runSeconds();
      if (seconds !== null) {
        this.lastRunSeconds = seconds;
        parts.push({ cls: "nba-clock-run", text: `run ${formatClock(seconds)}`, title: "time since the run started" });
      }
      this.startTimer();
    } else {
      this.stopTimer();
      const live = LIVE_STATUSES.has(/** @type {any} */ (this.status));
      const duration = this.run?.duration;
      const total = live ? null : typeof duration === "number" ? duration : this.lastRunSeconds;
      const text = formatClock(total);
      if (text !== null) parts.push({ cls: "nba-clock-run nba-clock-total", text: `run ${text}`, title: "the run's total time" });
    }
    const key = JSON.stringify(parts);
    if (key === this.shown) return;
    this.shown = key;
    this.el.replaceChildren(...parts.flatMap((part, i) => {
      const span = h("span", { class: part.cls, title: part.title }, part.text);
      return i ? [" · ", span] : [span];
    }));
    this.el.hidden = parts.length === 0;
  }

  startTimer() {
    this.timer ??= setInterval(() => this.render(), TICK_MS);
  }

  stopTimer() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stop ticking for good (the view is gone). */
  dispose() {
    this.stopTimer();
    this.isHeard = false;
  }
}
