// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { ControlsView, connectChannel, effectiveStatus, renderStatus, STATUS_LABELS } from "../controls.js";
import { RunView } from "../run.js";
import { fakeModel, sampleRun } from "./helpers.js";

const ALL = { run: true, step: true, pause: true, stop: true, approve: true, reject: true, rerun: true };
const NONE = { run: false, step: false, pause: false, stop: false, approve: false, reject: false, rerun: false };

function state(overrides = {}) {
  return {
    status: "paused", mode: "pause", approve_code: false, pending_code: null, pending_step: null,
    stopping: false, active: true, message: "", forks: 0, rerunnable: [], can: { ...NONE }, ...overrides,
  };
}

function view() {
  const sent = [];
  const controls = new ControlsView({ send: (command) => sent.push(command) });
  document.body.replaceChildren(controls.el);
  return { controls, sent };
}

/** The button whose accessible name (aria-label, else its text) is exactly `name`. */
function button(root, name) {
  const found = [...root.querySelectorAll("button")].filter(
    (b) => (b.getAttribute("aria-label") ?? b.textContent.trim()) === name,
  );
  expect(found).toHaveLength(1);
  return found[0];
}

describe("renderStatus", () => {
  it("labels every status of the schema", () => {
    for (const status of ["idle", "running", "paused", "awaiting_approval", "stopped", "done", "error"]) {
      const el = renderStatus(status);
      expect(el.className).toBe(`nba-status nba-status-${status}`);
      expect(el.textContent).toBe(STATUS_LABELS[status]);
    }
  });

  it("treats unknown statuses as idle", () => {
    expect(renderStatus("weird").textContent).toBe("idle");
    for (const other of ["constructor", "toString", undefined, null]) {
      expect(renderStatus(other).className).toBe("nba-status nba-status-idle"); // not Object.prototype's names
      expect(renderStatus(other).textContent).toBe("idle");
    }
  });
});

describe("renderStatus while stopping", () => {
  it("says stopping… for a live run, the outcome once it ended", () => {
    for (const status of ["running", "paused", "awaiting_approval"]) {
      const el = renderStatus(status, true);
      expect(el.textContent).toBe("stopping…");
      expect(el.className).toBe("nba-status nba-status-stopping");
    }
    expect(renderStatus("stopped", true).textContent).toBe("stopped");
    expect(renderStatus("running", false).textContent).toBe("running");
  });
});

describe("effectiveStatus", () => {
  it("shows the controller's status while it has a run, the run's otherwise", () => {
    expect(effectiveStatus({ status: "running" }, state({ status: "paused" }))).toBe("paused");
    expect(effectiveStatus({ status: "running" }, state({ status: "awaiting_approval" }))).toBe("awaiting_approval");
    expect(effectiveStatus({ status: "done" }, {})).toBe("done");
    expect(effectiveStatus({ status: "done" }, state({ status: "done", active: false }))).toBe("done");
    expect(effectiveStatus({ status: "running" }, state({ status: "stopped", active: false }))).toBe("stopped");
    expect(effectiveStatus(undefined, undefined)).toBe("idle");
  });
});

describe("ControlsView", () => {
  it("has real buttons named exactly Run, Step, Pause, Stop, Approve, Reject, disabled when they cannot act", () => {
    const { controls } = view();
    controls.update(state({ can: { ...NONE, step: true, run: true, stop: true } }));
    for (const name of ["Run", "Step", "Pause", "Stop", "Approve", "Reject"]) {
      const b = button(controls.el, name);
      expect(b.tagName).toBe("BUTTON");
      expect(b.getAttribute("type")).toBe("button");
    }
    expect(button(controls.el, "Step").disabled).toBe(false);
    expect(button(controls.el, "Run").disabled).toBe(false);
    expect(button(controls.el, "Stop").disabled).toBe(false);
    expect(button(controls.el, "Pause").disabled).toBe(true);
    expect(button(controls.el, "Approve").disabled).toBe(true);
    expect(controls.el.querySelector("[role=toolbar]").getAttribute("aria-label")).toBe("Run controls");
  });

  it("is hidden without a controller and every button is disabled", () => {
    const { controls } = view();
    controls.update({});
    expect(controls.el.hidden).toBe(true);
    expect([...controls.el.querySelectorAll("button")].every((b) => b.disabled)).toBe(true);
  });

  it("sends the command of the clicked button", () => {
    const { controls, sent } = view();
    controls.update(state({ can: { ...ALL } }));
    button(controls.el, "Step").click();
    button(controls.el, "Stop").click();
    expect(sent).toEqual([{ action: "step" }, { action: "stop" }]);
  });

  it("is reachable with the keyboard: buttons, toggle and review fields are focusable in order", () => {
    const { controls } = view();
    controls.update(state({ status: "awaiting_approval", pending_code: "x = 1", pending_step: 1, can: { ...ALL } }));
    const focusable = [...controls.el.querySelectorAll("button, input, textarea")].filter((el) => !el.disabled);
    expect(focusable.map((el) => el.getAttribute("aria-label") ?? el.textContent.trim() ?? el.type)).toEqual([
      "Run", "Step", "Pause", "Stop", null, "Code to run", "Approve", "Reject", "Note for the model",
    ].map((n) => (n === null ? "" : n)));
    for (const el of focusable) {
      el.focus();
      expect(document.activeElement).toBe(el);
      expect(el.tabIndex).toBeGreaterThanOrEqual(0);
    }
  });

  it("shows the pending code in an editable box; Approve, Run and Step send the edit, Reject the note", () => {
    const { controls, sent } = view();
    controls.update(state({ status: "awaiting_approval", pending_code: "x = 1", pending_step: 3, can: { ...ALL } }));
    const box = controls.el.querySelector("textarea");
    expect(controls.review.hidden).toBe(false);
    expect(box.value).toBe("x = 1");
    expect(controls.el.textContent).toContain("Step 3: the model wrote this code");
    box.value = "x = 2";
    button(controls.el, "Approve").click();
    button(controls.el, "Run").click();
    button(controls.el, "Step").click();
    controls.el.querySelector(".nba-review-note").value = "not that file";
    button(controls.el, "Reject").click();
    expect(sent).toEqual([
      { action: "approve", code: "x = 2" },
      { action: "run", code: "x = 2" },
      { action: "step", code: "x = 2" },
      { action: "reject", note: "not that file" },
    ]);
  });

  it("keeps the person's edit across updates of the same pending code, and resets for new code", () => {
    const { controls } = view();
    const pending = state({ status: "awaiting_approval", pending_code: "a()", pending_step: 1, can: { ...ALL } });
    controls.update(pending);
    const box = controls.el.querySelector("textarea");
    box.value = "a(safe=True)";
    controls.update({ ...pending, message: "something else changed" });
    expect(box.value).toBe("a(safe=True)");
    controls.update({ ...pending, pending_code: "b()", pending_step: 2 });
    expect(box.value).toBe("b()");
    controls.update(state({ status: "running" }));
    expect(controls.review.hidden).toBe(true);
  });

  it("toggles approve mode", () => {
    const { controls, sent } = view();
    controls.update(state({ approve_code: false, can: { ...NONE } }));
    const toggle = controls.el.querySelector("input[type=checkbox]");
    expect(toggle.closest("label").textContent).toBe("approve code before it runs");
    expect(toggle.disabled).toBe(false);
    toggle.checked = true;
    toggle.dispatchEvent(new Event("change"));
    expect(sent).toEqual([{ action: "approve_mode", on: true }]);
    controls.update(state({ approve_code: true }));
    expect(toggle.checked).toBe(true);
  });

  it("shows the controller's message", () => {
    const { controls } = view();
    controls.update(state({ message: "Re-running from step 2: variables are as they were before step 2." }));
    expect(controls.message.textContent).toContain("as they were before step 2");
  });

  it("puts 'Re-run from here' on finished action steps and sends their number", () => {
    const { controls, sent } = view();
    const run = new RunView({ images: { get: () => undefined, url: () => "", missing: () => {} }, controls });
    document.body.replaceChildren(run.el);
    controls.update(state({ status: "done", active: false, rerunnable: [1, 2], can: { ...NONE, rerun: true } }));
    run.update(sampleRun());
    const reruns = run.el.querySelectorAll(".nba-rerun");
    expect(reruns).toHaveLength(2); // steps 1 and 2; step 3 is not in `rerunnable`
    const second = button(run.el, "Re-run from here (step 2)");
    expect(second.textContent).toBe("Re-run from here");
    expect(second.title).toContain("variables go back");
    second.click();
    expect(sent).toEqual([{ action: "rerun", step: 2 }]);
    controls.update(state({ status: "running", rerunnable: [1, 2], can: { ...NONE, rerun: false } }));
    run.update(sampleRun());
    expect([...run.el.querySelectorAll(".nba-rerun")].every((b) => b.disabled)).toBe(true);
    expect(run.el.querySelectorAll(".nba-rerun")).toHaveLength(2); // not duplicated by a second update
  });

  it("lets the run view show the controller's status", () => {
    const { controls } = view();
    const run = new RunView({ images: { get: () => undefined, url: () => "", missing: () => {} }, controls });
    controls.update(state({ status: "paused" }));
    run.update(sampleRun({ status: "running" }));
    expect(run.el.dataset.status).toBe("paused");
    expect(run.el.querySelector(".nba-status").textContent).toBe("paused");
    expect(run.top.lastElementChild).toBe(controls.el); // right under the header, in the sticky top
  });

  it("shows stopping… from the Stop until the run has ended, with Stop still pressable", () => {
    const { controls } = view();
    const run = new RunView({ images: { get: () => undefined, url: () => "", missing: () => {} }, controls });
    controls.update(state({ status: "running", mode: "run", stopping: true, can: { ...NONE, stop: true } }));
    run.update(sampleRun({ status: "running" }));
    expect(run.el.querySelector(".nba-status").textContent).toBe("stopping…");
    expect(button(controls.el, "Stop").disabled).toBe(false);
    controls.update(state({ status: "stopped", stopping: false, active: false }));
    run.update(sampleRun({ status: "stopped" }));
    expect(run.el.querySelector(".nba-status").textContent).toBe("stopped");
  });
});

describe("connectChannel", () => {
  it("sends on the ControlChannel model once resolved, on the widget's comm before", async () => {
    const channelSent = [];
    const model = fakeModel({ control_channel: "IPY_MODEL_abc" });
    let release;
    model.widget_manager = {
      get_model: vi.fn(() => new Promise((resolve) => (release = () => resolve({ send: (m) => channelSent.push(m) })))),
    };
    const send = connectChannel(model);
    send({ action: "stop" });
    expect(model.sent).toEqual([{ type: "control", action: "stop" }]);
    release();
    await new Promise((r) => setTimeout(r, 0));
    send({ action: "step" });
    expect(model.widget_manager.get_model).toHaveBeenCalledWith("abc");
    // a resolved channel first tells the kernel a front end shows the widget (its asks may wait for a person)
    expect(channelSent).toEqual([
      { type: "control", action: "shown" },
      { type: "control", action: "step" },
    ]);
  });

  it("falls back to the widget's comm when the channel cannot be found", async () => {
    const model = fakeModel({ control_channel: "IPY_MODEL_gone" });
    model.widget_manager = { get_model: () => Promise.reject(new Error("model not found")) };
    const send = connectChannel(model);
    await new Promise((r) => setTimeout(r, 0));
    send({ action: "run" });
    expect(model.sent).toEqual([{ type: "control", action: "run" }]);
  });
});
