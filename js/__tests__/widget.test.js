// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("../widget.css", () => ({}));
const { default: widget, mergeImages } = await import("../widget.js");
import { PNG, fakeModel, sampleRun, stubObjectUrls } from "./helpers.js";

let revoked;
beforeEach(() => {
  ({ revoked } = stubObjectUrls());
});
afterEach(() => {
  delete globalThis.__NBAGENT_BENCH__;
});

function mount(state) {
  const model = fakeModel(state);
  const stopInit = widget.initialize({ model });
  const el = document.createElement("div");
  const cleanup = widget.render({ model, el });
  return { model, el, cleanup, stopInit };
}

describe("mergeImages", () => {
  it("places pushed buffers at their positions", () => {
    const a = new DataView(new ArrayBuffer(1));
    expect(mergeImages([a], 1, [PNG, PNG])).toEqual([a, PNG, PNG]);
    expect(mergeImages(undefined, 0, [PNG])).toEqual([PNG]);
  });
});

describe("widget", () => {
  it("renders the run from state alone (a view opened later)", () => {
    const { el } = mount({ run: sampleRun(), images: [PNG] });
    expect(el.dataset.rendered).toBe("1");
    expect(el.querySelectorAll(".nba-step")).toHaveLength(3);
    expect(el.querySelectorAll("img.nba-img")).toHaveLength(1);
  });

  it("renders two views of one model identically", () => {
    const model = fakeModel({ run: sampleRun(), images: [PNG] });
    const a = document.createElement("div");
    const b = document.createElement("div");
    widget.render({ model, el: a });
    widget.render({ model, el: b });
    expect(a.querySelector(".nbagent").textContent).toBe(b.querySelector(".nbagent").textContent);
  });

  it("follows run changes", () => {
    const { model, el } = mount({ run: { status: "running", steps: [] }, images: [] });
    expect(el.querySelector(".nba-status").textContent).toBe("running");
    model.set("run", sampleRun());
    expect(el.querySelector(".nba-status").textContent).toBe("done");
  });

  it("streams deltas into a live step that the finished step replaces", () => {
    const { model, el } = mount({ run: { status: "running", steps: [] }, images: [] });
    model.fire("msg:custom", { type: "step_start", step_number: 1, kind: "action" }, []);
    model.fire("msg:custom", { type: "delta", step_number: 1, text: "Thought: " }, []);
    model.fire("msg:custom", { type: "delta", step_number: 1, text: "go" }, []);
    expect(el.querySelector(".nba-streaming").textContent).toBe("Thought: go");
    const run = sampleRun({ status: "running" });
    run.steps = run.steps.slice(0, 2);
    model.set("run", run);
    expect(el.querySelector(".nba-streaming")).toBeNull();
  });

  it("merges pushed images into the model and shows them", () => {
    const run = sampleRun();
    const { model, el } = mount({ run, images: [] });
    expect(el.querySelector(".nba-img-missing")).not.toBeNull();
    expect(model.sent).toEqual([{ type: "request_images", have: 0 }]);
    model.fire("msg:custom", { type: "images", start: 0 }, [PNG]);
    expect(model.get("images")).toEqual([PNG]);
    expect(el.querySelectorAll("img.nba-img")).toHaveLength(1);
    expect(el.querySelector(".nba-img-missing")).toBeNull();
  });

  it("asks for missing images only once per count", () => {
    const run = sampleRun();
    run.steps[1].images = [0];
    const { model } = mount({ run, images: [] });
    expect(model.sent.filter((m) => m.type === "request_images")).toHaveLength(1);
  });

  it("leaves the benchmark's timing out of production renders", () => {
    const { model, el } = mount({ run: { status: "running", steps: [] }, images: [] });
    model.set("run", sampleRun({ status: "running" }));
    model.fire("msg:custom", { type: "step_start", step_number: 4, kind: "action" }, []);
    model.fire("msg:custom", { type: "delta", step_number: 4, text: "Thought" }, []);
    expect(el.querySelector(".nba-streaming").textContent).toBe("Thought");
    for (const key of ["renderStart", "renderMs", "deltas", "deltaMs"]) expect(el.dataset).not.toHaveProperty(key);
    expect(Object.keys(el.dataset)).toEqual(["rendered"]);
  });

  it("times renders and deltas for benchmarks/widget.py when the page sets the flag", () => {
    globalThis.__NBAGENT_BENCH__ = true;
    const { model, el } = mount({ run: { status: "running", steps: [] }, images: [] });
    expect(Number(el.dataset.renderStart)).toBeGreaterThan(0);
    expect(Number(el.dataset.renderMs)).toBeGreaterThanOrEqual(0);
    model.fire("msg:custom", { type: "step_start", step_number: 1, kind: "action" }, []);
    model.fire("msg:custom", { type: "delta", step_number: 1, text: "a" }, []);
    model.fire("msg:custom", { type: "delta", step_number: 1, text: "b" }, []);
    expect(el.dataset.deltas).toBe("2");
    expect(Number(el.dataset.deltaMs)).toBeGreaterThanOrEqual(0);
    expect(el.querySelector(".nba-streaming").textContent).toBe("ab");
  });

  it("cleans up listeners and object URLs", () => {
    const { model, cleanup, stopInit } = mount({ run: sampleRun(), images: [PNG] });
    cleanup();
    stopInit();
    expect(model.listeners("change:run")).toBe(0);
    expect(model.listeners("msg:custom")).toBe(0);
    expect(revoked.length).toBe(1);
  });
});

describe("widget: long runs", () => {
  it("lists earlier runs from the `forks` trait and shows the one Python sends", () => {
    const { model, el } = mount({ run: sampleRun(), images: [], forks: [] });
    const toggle = el.querySelector(".nba-forks-toggle");
    expect(toggle.hidden).toBe(true);
    model.set("forks", [{ index: 0, task: "Plot the squares", steps: 3, status: "done" }]);
    expect(toggle.hidden).toBe(false);
    expect(el.querySelector(".nba-top").contains(toggle)).toBe(true); // in the sticky top
    toggle.click();
    el.querySelector(".nba-fork-open").click();
    expect(model.sent).toContainEqual({ type: "open_fork", index: 0 });
    model.fire("msg:custom", { type: "fork", index: 0, run: sampleRun({ agent_name: "earlier" }) }, [PNG]);
    const panel = el.querySelector(".nba-fork-panel");
    expect(panel.querySelector(".nba-agent").textContent).toBe("earlier");
    expect(panel.querySelectorAll(".nba-step-action")).toHaveLength(3);
    expect(panel.querySelectorAll("img.nba-img")).toHaveLength(1); // its image from the message's buffers
    expect(panel.querySelector(".nba-controls")).toBeNull(); // read-only
  });

  it("counts the live step in the header as soon as it begins", () => {
    const { model, el } = mount({ run: { status: "running", steps: sampleRun().steps.slice(0, 2) }, images: [] });
    expect(el.querySelector(".nba-counter").textContent).toBe("1 step");
    model.fire("msg:custom", { type: "step_start", step_number: 2, kind: "action" }, []);
    expect(el.querySelector(".nba-counter").textContent).toBe("step 2");
  });
});
