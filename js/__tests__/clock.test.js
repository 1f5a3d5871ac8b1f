// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RunClock, formatClock, runningStep } from "../clock.js";
import { createImageUrls } from "../images.js";
import { RunView } from "../run.js";
import { PNG, fakeModel, sampleRun, stubObjectUrls } from "./helpers.js";

vi.mock("../widget.css", () => ({}));
const { default: widget } = await import("../widget.js");

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0); // the browser's "now" when a test begins
const seconds = (ms) => ms / 1000;

beforeEach(() => {
  stubObjectUrls();
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => vi.useRealTimers());

const makeView = () => new RunView({ images: { get: () => PNG, url: createImageUrls().url } });
const task = { kind: "task", step_number: null, task: "t", images: [] };
const action = (n, duration) => ({ ...sampleRun().steps[1], step_number: n, duration });
/** A live run that started `ago` seconds before T0. */
const liveRun = (ago, extra = {}) => ({ status: "running", steps: [task], started_at: seconds(T0) - ago, step_started_at: null, duration: null, ...extra });
const clockText = (view) => view.header.querySelector(".nba-clock").textContent;
const counter = (view) => view.header.querySelector(".nba-counter").textContent;

describe("formatClock", () => {
  it("says minutes:seconds, hours when there are some", () => {
    expect(formatClock(0)).toBe("0:00");
    expect(formatClock(42.9)).toBe("0:42"); // whole seconds, rounded down (a clock does not round up)
    expect(formatClock(135)).toBe("2:15");
    expect(formatClock(3725)).toBe("1:02:05");
    expect(formatClock(null)).toBeNull();
    expect(formatClock(-1)).toBeNull();
    expect(formatClock(Number.NaN)).toBeNull();
  });
});

describe("runningStep", () => {
  it("is the last step without a duration, else the one after the last action step", () => {
    expect(runningStep({ steps: [task, action(1, 2), action(2, null)] })).toEqual({ number: 2, kind: "action" });
    expect(runningStep({ steps: [task, action(1, 2)] })).toEqual({ number: 2, kind: "action" });
    expect(runningStep({ steps: [task] })).toEqual({ number: 1, kind: "action" });
    const plan = { ...action(3, null), kind: "planning" };
    expect(runningStep({ steps: [task, action(2, 1), plan] })).toEqual({ number: 3, kind: "planning" });
  });
});

describe("the header's clock", () => {
  it("ticks the run's and the running step's time while the run is live", () => {
    const view = makeView();
    view.heard();
    view.update(liveRun(75));
    expect(clockText(view)).toBe("run 1:15");
    vi.advanceTimersByTime(1000);
    expect(clockText(view)).toBe("run 1:16");

    view.stepStarted(1, "action"); // the "step_start" message
    view.update(view.run);
    expect(counter(view)).toBe("step 1");
    expect(clockText(view)).toBe("0:00 · run 1:16");
    vi.advanceTimersByTime(42_000);
    expect(clockText(view)).toBe("0:42 · run 1:58");
    expect(view.header.textContent).toContain("step 10:42 · run 1:58"); // "step 1", then the times
  });

  it("freezes at the run's total when it ends, with no timer left", () => {
    const view = makeView();
    view.heard();
    view.update(liveRun(10, { step_started_at: seconds(T0) - 4, steps: [task, action(1, null)] }));
    expect(clockText(view)).toBe("0:04 · run 0:10");
    vi.advanceTimersByTime(3000);
    view.update({ ...liveRun(10), status: "done", steps: [task, action(1, 7)], duration: 13.4 });
    expect(clockText(view)).toBe("run 0:13");
    expect(counter(view)).toBe("1 step");
    expect(view.clock.timer).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(clockText(view)).toBe("run 0:13");
    expect(view.header.querySelector(".nba-clock-total").title).toBe("the run's total time");
  });

  it("holds the last time when the run ends before its duration arrives", () => {
    const view = makeView();
    view.heard();
    const run = liveRun(20);
    view.update(run);
    vi.advanceTimersByTime(5000);
    view.update({ ...run, status: "stopped" }); // e.g. the controller said so first
    expect(clockText(view)).toBe("run 0:25");
    vi.advanceTimersByTime(5000);
    expect(clockText(view)).toBe("run 0:25");
  });

  it("stops the step clock while the run waits, and goes on from there", () => {
    const view = makeView();
    view.heard();
    const steps = [task, action(1, 3), action(2, null)];
    view.update(liveRun(30, { steps, step_started_at: seconds(T0) - 10 }));
    expect(clockText(view)).toBe("0:10 · run 0:30");
    view.update(liveRun(30, { steps, step_started_at: seconds(T0) - 10, status: "awaiting_approval" }));
    expect(clockText(view)).toBe("0:10 paused · run 0:30");
    expect(view.header.querySelector(".nba-clock-held")).not.toBeNull();
    vi.advanceTimersByTime(120_000); // the person reads the code for two minutes
    expect(clockText(view)).toBe("0:10 paused · run 2:30"); // the run's wall time goes on, the step's does not
    view.update(liveRun(30, { steps, step_started_at: seconds(T0) - 10 })); // approved: running again
    expect(clockText(view)).toBe("0:10 · run 2:30");
    vi.advanceTimersByTime(5000);
    expect(clockText(view)).toBe("0:15 · run 2:35");
    expect(view.header.querySelector(".nba-clock-held")).toBeNull();
  });

  it("shows a paused run between steps without a step clock", () => {
    const view = makeView();
    view.heard();
    view.update(liveRun(50, { status: "paused", steps: [task, action(1, 3)] }));
    expect(counter(view)).toBe("1 step");
    expect(clockText(view)).toBe("run 0:50");
  });

  it("counts from the state's step start when it saw no step_start (a view opened mid-step)", () => {
    const view = makeView();
    view.heard();
    view.update(liveRun(90, { steps: [task, action(1, 3), action(2, 4), action(3, null)], step_started_at: seconds(T0) - 20 }));
    expect(counter(view)).toBe("step 3");
    expect(clockText(view)).toBe("0:20 · run 1:30");
  });

  it("corrects the run's start by the kernel's clock, learned from a step's message and state", () => {
    const view = makeView();
    view.heard();
    const ahead = 30; // the kernel's clock is 30 s ahead of the browser's
    const run = liveRun(60 - ahead, { steps: [task] }); // started 60 s ago, said on the kernel's clock
    view.update(run);
    view.stepStarted(1, "action");
    view.update(run);
    view.update({ ...run, step_started_at: seconds(T0) + ahead, steps: [task, action(1, null)] });
    expect(clockText(view)).toBe("0:00 · run 1:00");
    vi.advanceTimersByTime(2000);
    expect(clockText(view)).toBe("0:02 · run 1:02");
  });

  it("never goes below zero", () => {
    const view = makeView();
    view.heard();
    view.update(liveRun(-5)); // a start in the future: a kernel clock ahead, not yet corrected
    expect(clockText(view)).toBe("run 0:00");
  });

  it("does not tick in a view that never heard from the kernel (a restored saved widget)", () => {
    const view = makeView();
    view.update(liveRun(3600, { step_started_at: seconds(T0) - 100, steps: [task, action(1, null)] }));
    expect(view.header.querySelector(".nba-clock").hidden).toBe(true);
    expect(clockText(view)).toBe("");
    expect(vi.getTimerCount()).toBe(0);
    view.update(sampleRun({ duration: 135 })); // a finished run still shows its total
    expect(clockText(view)).toBe("run 2:15");
  });

  it("stops its timer when disposed", () => {
    const clock = new RunClock();
    clock.heard();
    clock.update(liveRun(1), "running");
    expect(vi.getTimerCount()).toBe(1);
    clock.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the widget's clock", () => {
  function mount(state) {
    const model = fakeModel(state);
    const el = document.createElement("div");
    const cleanup = widget.render({ model, el });
    return { model, el, cleanup };
  }
  const text = (el) => el.querySelector(".nba-header .nba-clock").textContent;

  it("ticks once the kernel is heard from, counts the step from its message, and stops with the view", () => {
    const { model, el, cleanup } = mount({ run: liveRun(5), images: [], controls: {} });
    vi.advanceTimersByTime(2000);
    expect(text(el)).toBe(""); // state alone (restored): no ticking
    model.fire("msg:custom", { type: "step_start", step_number: 1, kind: "action" }, []);
    expect(el.querySelector(".nba-counter").textContent).toBe("step 1");
    expect(text(el)).toBe("0:00 · run 0:07");
    vi.advanceTimersByTime(3000);
    expect(text(el)).toBe("0:03 · run 0:10");
    model.set("run", { ...liveRun(5), status: "done", duration: 10.2 });
    expect(text(el)).toBe("run 0:10");
    cleanup();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("shows the pause the controller reports", () => {
    const { model, el } = mount({ run: liveRun(5, { step_started_at: seconds(T0) - 2, steps: [task, action(1, null)] }), images: [] });
    model.set("controls", { status: "awaiting_approval", active: true, can: {} });
    expect(text(el)).toBe("0:02 paused · run 0:05");
    vi.advanceTimersByTime(10_000);
    expect(text(el)).toBe("0:02 paused · run 0:15");
  });
});
