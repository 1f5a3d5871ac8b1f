// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { createImageUrls } from "../images.js";
import { renderStep, thoughtText } from "../step.js";
import { PNG, sampleRun, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());
const ctx = () => ({ images: { get: () => PNG, url: createImageUrls().url }, renderRunInto: (run, c) => c.append(run.task) });
const [task, errorStep, imageStep, finalStep, final] = sampleRun().steps;

describe("thoughtText", () => {
  it("drops code blocks that are shown separately, keeps others", () => {
    expect(thoughtText("Thought: x\n```py\na = 1\n```", ["a = 1"])).toBe("Thought: x");
    expect(thoughtText("T\n<code>\na = 1\n</code>", ["a = 1"])).toBe("T");
    expect(thoughtText("T\n```py\nb = 2\n```", ["a = 1"])).toBe("T\n```py\nb = 2\n```");
    expect(thoughtText("", ["a"])).toBe("");
  });
});

describe("renderStep", () => {
  it("renders an action step: number, thought, code, error style, tokens, time", () => {
    const el = renderStep(errorStep, ctx());
    expect(el.classList.contains("nba-step-error")).toBe(true);
    expect(el.dataset.step).toBe("1");
    expect(el.querySelector(".nba-step-title").textContent).toBe("Step 1");
    expect(el.querySelector(".nba-md").textContent).toBe("Thought: divide");
    expect(el.querySelector("pre.nba-code").textContent).toBe("x = 1/0");
    expect(el.querySelector(".nba-error-text").textContent).toContain("ZeroDivisionError");
    expect(el.querySelector(".nba-tokens").textContent).toBe("1.2k in · 40 out tokens");
    expect(el.querySelector(".nba-duration").textContent).toBe("500 ms");
  });

  it("renders logs, images and the returned value", () => {
    const el = renderStep(imageStep, ctx());
    expect(el.querySelector(".nba-logs").textContent).toBe("plotted\n");
    expect(el.querySelectorAll("img.nba-img")).toHaveLength(1);
    expect(el.querySelector(".nba-output")).toBeNull(); // the observation already shows it
    expect(el.classList.contains("nba-step-error")).toBe(false);
  });

  it("does not repeat the final answer as the step's output", () => {
    expect(renderStep(finalStep, ctx()).querySelector(".nba-output")).toBeNull();
  });

  it("renders task, final and planning steps", () => {
    expect(renderStep(task, ctx()).classList.contains("nba-task")).toBe(true);
    expect(renderStep(final, ctx()).querySelector(".nba-md").textContent).toBe("The squares are 1, 4, 9");
    const plan = renderStep({ kind: "planning", step_number: 1, plan: "1. look\n2. answer", token_usage: null, duration: 2 }, ctx());
    expect(plan.querySelector(".nba-step-title").textContent).toBe("Plan");
    expect(plan.querySelectorAll("ol li")).toHaveLength(2);
  });

  it("marks stopped steps and renders nested runs", () => {
    const el = renderStep({ ...imageStep, stopped: true, children: [{ task: "sub", agent_name: "helper", status: "done", steps: [] }] }, ctx());
    expect(el.classList.contains("nba-step-stopped")).toBe(true);
    expect(el.querySelector(".nba-mark-stopped").textContent).toBe("stopped");
    expect(el.querySelector("details.nba-child .nba-nested").textContent).toBe("sub");
  });
});

describe("returned value", () => {
  it("is shown only when there is no observation (which already holds it)", () => {
    const withObs = renderStep({ ...imageStep, observations: "Last output: 3", action_output: "3" }, ctx());
    expect(withObs.querySelector(".nba-output")).toBeNull();
    const without = renderStep({ ...imageStep, observations: null, action_output: "3" }, ctx());
    expect(without.querySelector(".nba-output").textContent).toBe("3");
  });
});
