// @vitest-environment jsdom
// Changes you can see and undo (issue 28): a change to one of the person's names is a warning that says what
// changed, the run's end names them and the agent's scratch names, and "Undo this run" sends the undo.
import { beforeEach, describe, expect, it } from "vitest";
import {
  changeText,
  renderChanges,
  renderRunChanges,
  renderScratch,
  renderYoursChanged,
  scratchText,
  yoursChanged,
} from "../changes.js";
import { ControlsView, UNDO_TITLE } from "../controls.js";
import { createImageUrls } from "../images.js";
import { RunView } from "../run.js";
import { PNG, sampleRun, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());

const inPlace = { name: "orders", change: "modified", type: "DataFrame 400×6", detail: "column category changed", yours: true };
const replaced = {
  name: "orders",
  change: "rebound",
  type: "DataFrame 352×6",
  detail: "column price object → float64; rows 400 → 352",
  yours: true,
};
const made = { name: "tmp", change: "created", type: "DataFrame 352×6", detail: "" };

describe("a change to the person's variable", () => {
  it("is a warning that says what changed, not only the name", () => {
    expect(changeText(inPlace)).toBe("⚠ changed your orders: column category changed");
    expect(changeText(replaced)).toBe("⚠ replaced your orders (DataFrame 352×6): column price object → float64; rows 400 → 352");
    expect(changeText({ ...inPlace, detail: "" })).toBe("⚠ changed your orders (DataFrame 400×6)");
    expect(changeText({ name: "config", change: "deleted", type: "", detail: "", yours: true })).toBe("⚠ deleted your config");
    expect(changeText({ ...inPlace, yours: undefined })).toBe("~ orders: column category changed"); // the agent's own
    expect(changeText({ ...inPlace, kept: true })).toBe("⚠ changed your orders: column category changed [agent's copy]");
  });

  it("is marked as a warning, with how to undo it in the tooltip", () => {
    const chip = renderChanges([made, inPlace]).querySelector(".nba-change-yours");
    expect(chip.dataset.name).toBe("orders");
    expect(chip.title).toContain("agent.undo()");
    expect(renderChanges([made]).querySelector(".nba-change-yours")).toBeNull();
  });

  it("is named again at the run's end, once per name, with the way back", () => {
    const steps = [{ kind: "action", changes: [inPlace, made] }, { kind: "action", changes: [replaced, { ...inPlace, name: "cfg", kept: true }] }];
    expect(yoursChanged(steps)).toEqual(["orders"]); // a change kept in the agent's copy did not touch the notebook
    expect(renderYoursChanged(steps).textContent).toBe(
      "⚠ The run changed your variable: orders; agent.undo() or %agent --undo puts them back as they were.",
    );
    expect(renderYoursChanged([{ kind: "action", changes: [made] }])).toBeNull();
  });

  it("says at the run's end every change the run made to it, a column added and then rows dropped", () => {
    const added = { ...inPlace, detail: "+1 column total" };
    const fewer = { ...replaced, type: "DataFrame 2×3", detail: "rows 3 → 2" };
    const line = renderRunChanges([{ kind: "action", changes: [added] }, { kind: "action", changes: [fewer] }]);
    expect(line.querySelector(".nba-change-yours").textContent).toBe(
      "⚠ replaced your orders (DataFrame 2×3): +1 column total; rows 3 → 2",
    );
  });
});

describe("the agent's scratch names", () => {
  it("are counted and named, with where they are and how to bring them in", () => {
    const names = ["tmp", "result2", "filtered_orders", "a", "b", "c", "d", "e"];
    expect(scratchText(names)).toBe(
      "Kept in the agent's scope: 8 names (tmp, result2, filtered_orders, a, b, c and 2 more); " +
        "agent.scratch holds them; %agent --keep brings them in.",
    );
    expect(scratchText(["tmp"])).toContain("1 name (tmp)");
    expect(renderScratch([])).toBeNull();
    expect(renderScratch(undefined)).toBeNull();
  });

  it("show in the run view with the warnings", () => {
    const view = new RunView({ images: { get: () => PNG, url: createImageUrls().url }, send: () => {} });
    const run = sampleRun();
    run.steps[1] = { ...run.steps[1], changes: [inPlace, made] };
    view.update({ ...run, scratch: ["tmp"] });
    expect(view.el.querySelector(".nba-scratch").textContent).toContain("Kept in the agent's scope: 1 name (tmp)");
    expect(view.el.querySelector(".nba-yours-changed").textContent).toContain("your variable: orders");
    expect(view.el.querySelector(".nba-step .nba-change-yours").textContent).toBe("⚠ changed your orders: column category changed");
  });
});

describe("Undo this run", () => {
  const snapshot = (undo) => ({
    status: "done", mode: "run", approve_code: false, pending_code: null, pending_step: null, stopping: false,
    active: false, message: "", forks: 0, rerunnable: [1],
    can: { run: false, step: false, pause: false, stop: false, approve: false, reject: false, rerun: true, undo },
  });

  it("shows only on a finished run that can be undone, and sends the undo", () => {
    const sent = [];
    const controls = new ControlsView({ send: (command) => sent.push(command) });
    document.body.replaceChildren(controls.el);
    const undo = [...controls.el.querySelectorAll("button")].find((b) => b.textContent === "Undo this run");
    controls.update(snapshot(false));
    expect(undo.hidden).toBe(true);
    expect(undo.disabled).toBe(true);
    controls.update(snapshot(true));
    expect(undo.hidden).toBe(false);
    expect(undo.title).toBe(UNDO_TITLE);
    undo.click();
    expect(sent).toEqual([{ action: "undo" }]);
  });

  it("says what the undo restored and what not, in the message line", () => {
    const controls = new ControlsView({ send: () => {} });
    const note = "Undone: your variables are as they were before the run (restored orders). Not undone: files the code wrote and what tools did.";
    controls.update({ ...snapshot(false), message: note });
    expect(controls.el.querySelector(".nba-control-message").textContent).toBe(note);
  });
});
