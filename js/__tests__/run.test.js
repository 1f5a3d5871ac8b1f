// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { createImageUrls } from "../images.js";
import { RunView } from "../run.js";
import { PNG, sampleRun, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());
const makeView = (images = [PNG]) => new RunView({ images: { get: (i) => images[i], url: createImageUrls().url }, send: () => {} });

describe("RunView", () => {
  it("renders header, task, steps, final answer and totals", () => {
    const view = makeView();
    view.update(sampleRun());
    const el = view.el;
    expect(el.dataset.status).toBe("done");
    expect(el.querySelector(".nba-agent").textContent).toBe("analyst");
    expect(el.querySelector(".nba-model").textContent).toBe("scripted");
    expect(el.querySelector(".nba-status").textContent).toBe("done");
    expect(el.querySelector(".nba-task strong").textContent).toBe("squares");
    expect(el.querySelectorAll(".nba-step")).toHaveLength(3);
    expect(el.querySelectorAll(".nba-final")).toHaveLength(1);
    expect(el.querySelector(".nba-footer").textContent).toContain("3 steps");
  });

  it("shows no model when the run has none (not the text 'null')", () => {
    const view = makeView();
    view.update(sampleRun({ model_id: null, agent_name: null }));
    expect(view.el.querySelector(".nba-model")).toBeNull();
    expect(view.header.textContent).toBe("agentdone3 stepsrun 0:02"); // agent, status, step counter, total time
    view.update({ status: "running", steps: [] });
    expect(view.tail.textContent).not.toContain("null");
  });

  it("says the run's time limit in the header, and a run that timed out by its badge", () => {
    const view = makeView();
    view.update(sampleRun({ status: "running", max_time: 600 }));
    expect(view.header.querySelector(".nba-limit").textContent).toBe("stops after 10 min");
    view.update(sampleRun({ status: "timed_out", outcome: "timed_out", max_time: 600 }));
    expect(view.el.dataset.status).toBe("timed_out");
    expect(view.header.querySelector(".nba-status").textContent).toBe("timed out");
    view.update(sampleRun({ max_time: null }));
    expect(view.header.querySelector(".nba-limit")).toBeNull();
  });

  it("rebuilds only the steps that changed", () => {
    const view = makeView();
    const run = sampleRun();
    view.update(run);
    const before = [...view.steps.children];
    const changed = structuredClone(run);
    changed.steps[2].observations = "plotted again\n";
    view.update(changed);
    const after = [...view.steps.children];
    expect(after[1]).toBe(before[1]);
    expect(after[2]).not.toBe(before[2]);
    expect(after[2].querySelector(".nba-logs").textContent).toBe("plotted again\n");
  });

  it("removes steps when the run shrinks (a new run)", () => {
    const view = makeView();
    view.update(sampleRun());
    view.update({ task: "new", status: "running", steps: [{ kind: "task", task: "new", images: [] }] });
    expect(view.steps.children).toHaveLength(1);
    expect(view.el.querySelector(".nba-final")).toBeNull();
  });

  it("shows the run's final answer when no final step exists, and a run error", () => {
    const view = makeView();
    view.update({ status: "error", steps: [], final_answer: { text: "partial", type: "str" }, error: "model unreachable" });
    expect(view.el.querySelector(".nba-final").textContent).toContain("partial");
    expect(view.el.querySelector(".nba-tail .nba-error .nba-label").textContent).toBe("Run error");
  });

  it("re-renders image steps when images arrive", () => {
    const images = [];
    const view = makeView(images);
    view.update(sampleRun());
    expect(view.el.querySelector(".nba-img-missing")).not.toBeNull();
    images.push(PNG);
    view.refreshImages();
    expect(view.el.querySelector(".nba-img-missing")).toBeNull();
    expect(view.el.querySelectorAll("img.nba-img")).toHaveLength(1);
  });

  it("renders a 100-step run with 20 images", () => {
    const run = sampleRun();
    const step = run.steps[2];
    run.steps = Array.from({ length: 100 }, (_, i) => ({ ...step, step_number: i + 1, images: i % 5 === 0 ? [0] : [] }));
    const view = makeView();
    const t0 = performance.now();
    view.update(run);
    expect(view.el.querySelectorAll(".nba-step")).toHaveLength(100);
    expect(view.el.querySelectorAll("img")).toHaveLength(20);
    // a functional deadline only (a quadratic render would blow it); the speed is measured in benchmarks/widget.py
    expect(performance.now() - t0).toBeLessThan(30000);
  });
});
