// @vitest-environment jsdom
// A long run stays usable: steps fold one by one or all at once (and stay folded when rebuilt), the header
// counts the steps, the review box sits next to the step whose code awaits approval.
import { describe, expect, it } from "vitest";
import { StepFolds, setFolded, stepKey } from "../collapse.js";
import { ControlsView } from "../controls.js";
import { RunView, stepCounter } from "../run.js";
import { sampleRun } from "./helpers.js";

const images = { get: () => undefined, url: () => "", missing: () => {} };

function makeView(controls) {
  const view = new RunView({ images, controls });
  document.body.replaceChildren(view.el);
  return view;
}

const folded = (view) => [...view.steps.querySelectorAll(":scope > .nba-step")].map((n) => n.classList.contains("nba-step-folded"));

describe("stepKey and StepFolds", () => {
  it("keys action and planning steps by kind and number; others do not fold", () => {
    expect(stepKey({ kind: "action", step_number: 3 })).toBe("action:3");
    expect(stepKey({ kind: "planning", step_number: 3 })).toBe("planning:3");
    expect(stepKey({ kind: "task", step_number: null })).toBeNull();
    const folds = new StepFolds();
    expect(folds.toggle("action:1")).toBe(true);
    expect(folds.has("action:1") && folds.any).toBe(true);
    expect(folds.toggle("action:1")).toBe(false);
    folds.foldAll(["action:1", null, "action:2"]);
    expect([...folds.folded]).toEqual(["action:1", "action:2"]);
  });

  it("setFolded flips the class and the button", () => {
    const view = makeView();
    view.update(sampleRun());
    const node = view.steps.querySelector(".nba-step");
    setFolded(node, true);
    expect(node.querySelector(".nba-fold").getAttribute("aria-expanded")).toBe("false");
    expect(node.querySelector(".nba-fold").textContent).toBe("▸");
  });
});

describe("RunView folding", () => {
  it("folds one step with its button, all with Collapse all, and keeps them folded across updates", () => {
    const view = makeView();
    view.update(sampleRun());
    expect(folded(view)).toEqual([false, false, false]);
    view.steps.querySelectorAll(".nba-fold")[1].click();
    expect(folded(view)).toEqual([false, true, false]);
    expect(view.foldAllButton.textContent).toBe("Expand all");
    const run = sampleRun();
    run.steps[2] = { ...run.steps[2], duration: 9 }; // step 2 changed: rebuilt, still folded
    view.update(run);
    expect(folded(view)).toEqual([false, true, false]);
    view.foldAllButton.click(); // some folded: expand all
    expect(folded(view)).toEqual([false, false, false]);
    view.foldAllButton.click();
    expect(folded(view)).toEqual([true, true, true]);
    expect(view.foldAllButton.textContent).toBe("Expand all");
  });

  it("shows a step's changes line even when it is folded (outside its body)", () => {
    const view = makeView();
    const run = sampleRun();
    run.steps[2] = { ...run.steps[2], changes: [{ name: "sales", change: "modified", type: "DataFrame 2×3", detail: "+1 column t" }] };
    view.update(run);
    const step = view.steps.querySelector('[data-step="2"]');
    expect(step.querySelector(":scope > .nba-changes").textContent).toContain("~ sales: +1 column t");
    expect(step.querySelector(".nba-step-body .nba-changes")).toBeNull();
    expect(view.tail.querySelector(".nba-run-changes").textContent).toBe("The run changed: ~ sales: +1 column t");
  });
});

describe("the sticky top", () => {
  it("holds the header and the controls (Stop, Pause)", () => {
    const controls = new ControlsView({ send: () => {} });
    const view = makeView(controls);
    expect(view.top.contains(view.header)).toBe(true);
    expect(view.top.contains(controls.el)).toBe(true);
    expect(view.top.querySelector(".nba-btn-stop")).not.toBeNull();
    expect(view.top.querySelector(".nba-fold-all")).not.toBeNull();
  });

  it("counts the steps: the live one while it runs, the total otherwise", () => {
    expect(stepCounter({ steps: [] }, null)).toBe("");
    const run = sampleRun();
    expect(stepCounter(run, null)).toBe("3 steps");
    expect(stepCounter(run, 4)).toBe("step 4");
    expect(stepCounter({ steps: [run.steps[1]] }, null)).toBe("1 step");
  });
});

describe("the review box", () => {
  it("sits right after the step whose code awaits approval", () => {
    const controls = new ControlsView({ send: () => {} });
    const view = makeView(controls);
    const pending = { status: "awaiting_approval", pending_code: "x = 2", pending_step: 4, can: {} };
    const run = sampleRun({ status: "running", steps: sampleRun().steps.slice(0, 4) });
    view.live.start(4);
    controls.update(pending);
    view.update(run);
    expect(controls.review.hidden).toBe(false);
    expect(view.live.el.nextElementSibling).toBe(controls.review); // after the live step 4
    expect(controls.el.contains(controls.review)).toBe(false); // not up in the controls
    view.live.clear();
    controls.update({ ...pending, pending_step: 2 });
    view.update(run);
    expect(view.steps.querySelector('[data-step="2"]').nextElementSibling).toBe(controls.review);
  });
});
