// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { LiveStep } from "../stream.js";

describe("LiveStep", () => {
  it("shows a step as it streams", () => {
    const live = new LiveStep();
    live.start(2, "action");
    live.delta(2, "Thought: ");
    live.delta(2, "<b>hi</b>");
    expect(live.el.querySelector(".nba-step-title").textContent).toBe("Step 2");
    expect(live.el.querySelector(".nba-streaming").textContent).toBe("Thought: <b>hi</b>");
    expect(live.el.querySelector("b")).toBeNull();
  });

  it("starts a new step when a delta names another step", () => {
    const live = new LiveStep();
    live.delta(1, "a");
    live.delta(2, "b");
    expect(live.el.querySelector(".nba-streaming").textContent).toBe("b");
    expect(live.el.querySelector("[data-step]").dataset.step).toBe("2");
  });

  it("shows what the code prints while it runs, as text, under the model's text", () => {
    const live = new LiveStep();
    live.start(3, "action");
    live.delta(3, "Thought: count");
    live.logs(3, "1\n");
    live.logs(3, "<i>2</i>\n");
    expect(live.el.querySelector(".nba-streaming").textContent).toBe("Thought: count");
    expect(live.el.querySelector(".nba-live-logs").textContent).toBe("1\n<i>2</i>\n");
    expect(live.el.querySelector("i")).toBeNull();
    live.start(4, "action");
    expect(live.el.querySelector(".nba-live-logs")).toBeNull();
  });

  it("labels planning steps", () => {
    const live = new LiveStep();
    live.start(1, "planning");
    expect(live.el.querySelector(".nba-step-title").textContent).toBe("Planning");
  });

  it("goes away once the run state holds the step, or the run stops", () => {
    const live = new LiveStep();
    live.start(3);
    live.sync({ status: "running", steps: [{ kind: "action", step_number: 2 }] });
    expect(live.el.childNodes.length).toBe(1);
    live.sync({ status: "running", steps: [{ kind: "action", step_number: 3 }] });
    expect(live.el.childNodes.length).toBe(0);
    live.start(4);
    live.sync({ status: "stopped", steps: [] });
    expect(live.el.childNodes.length).toBe(0);
  });
});
