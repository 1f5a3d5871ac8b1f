// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { changeText, renderChanges, renderRunChanges, runChanges } from "../changes.js";

const created = { name: "region_data", change: "created", type: "DataFrame 50×6", detail: "" };
const modified = { name: "sales", change: "modified", type: "DataFrame 50×7", detail: "+1 column total_revenue" };
const rebound = { name: "x", change: "rebound", type: "int", detail: "" };
const deleted = { name: "tmp", change: "deleted", type: "", detail: "" };

describe("changeText", () => {
  it("says each kind of change in a few words", () => {
    expect(changeText(created)).toBe("+ region_data (DataFrame 50×6)");
    expect(changeText(modified)).toBe("~ sales: +1 column total_revenue");
    expect(changeText({ ...modified, detail: "" })).toBe("~ sales (DataFrame 50×7)");
    expect(changeText(rebound)).toBe("rebinds x (int)");
    expect(changeText(deleted)).toBe("deletes tmp");
    expect(changeText({ ...modified, kept: true })).toBe("~ sales: +1 column total_revenue [agent's copy]");
    expect(changeText({ ...created, name: "print", type: "function", kept: true, reason: "it would shadow print" })).toBe(
      "+ print (function) [kept in the worker]",
    );
  });

  it("says in the tooltip why the worker kept a name", () => {
    const kept = { ...created, name: "print", type: "function", kept: true, reason: "it would shadow the builtin print" };
    expect(renderChanges([kept]).querySelector(".nba-change").title).toBe(
      "created by the agent (kept in the worker: it would shadow the builtin print)",
    );
  });
});

describe("renderChanges", () => {
  it("is one line with one span per name, nothing when nothing changed", () => {
    expect(renderChanges([])).toBeNull();
    expect(renderChanges(undefined)).toBeNull();
    const line = renderChanges([created, modified, rebound]);
    expect(line.textContent).toBe(
      "Namespace: + region_data (DataFrame 50×6) · ~ sales: +1 column total_revenue · rebinds x (int)",
    );
    expect([...line.querySelectorAll(".nba-change")].map((s) => s.dataset.name)).toEqual(["region_data", "sales", "x"]);
    expect(line.querySelector(".nba-change-modified").title).toBe("changed in place by the agent");
  });
});

describe("runChanges", () => {
  const step = (changes) => ({ kind: "action", changes });

  it("folds the steps' changes into one per name, in order of first change", () => {
    const summary = runChanges([
      step([created, { ...modified, detail: "+1 column a", type: "DataFrame 50×7" }]),
      { kind: "task" },
      step([{ ...created, change: "modified", type: "DataFrame 40×6", detail: "shape 50×6 → 40×6" }, rebound]),
      step([{ ...modified, detail: "+1 column b", type: "DataFrame 50×8" }]),
    ]);
    expect(summary.map(changeText)).toEqual([
      "+ region_data (DataFrame 40×6)", // created, then changed: still new, with its last type
      "~ sales: +1 column a; +1 column b",
      "rebinds x (int)",
    ]);
  });

  it("drops a name created and deleted in the run; a rebinding wins over later in-place changes", () => {
    const summary = runChanges([
      step([{ ...created, name: "tmp" }, rebound]),
      step([deleted, { ...modified, name: "x" }]),
    ]);
    expect(summary.map(changeText)).toEqual(["rebinds x (DataFrame 50×7)"]);
  });

  it("renders as the run's line", () => {
    expect(renderRunChanges([step([])])).toBeNull();
    const line = renderRunChanges([step([modified])]);
    expect(line.classList.contains("nba-run-changes")).toBe(true);
    expect(line.textContent).toBe("The run changed: ~ sales: +1 column total_revenue");
  });
});
