// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderActionOutput, renderLogs, renderWarnings } from "../observation.js";

describe("renderLogs", () => {
  it("shows printed text verbatim", () => {
    const el = renderLogs("a <b>\n  indented\n");
    expect(el.querySelector("pre.nba-logs").textContent).toBe("a <b>\n  indented\n");
    expect(el.querySelector(".nba-label").textContent).toBe("Observation");
    expect(el.querySelector("b")).toBeNull();
  });

  it("collapses long logs and is absent when empty", () => {
    expect(renderLogs("x\n".repeat(100)).querySelector(".nba-more")).not.toBeNull();
    expect(renderLogs("")).toBeNull();
    expect(renderLogs(null)).toBeNull();
  });
});

describe("renderActionOutput", () => {
  it("shows the value, including falsy ones like 0", () => {
    expect(renderActionOutput("42").querySelector("pre").textContent).toBe("42");
    expect(renderActionOutput(0).querySelector("pre").textContent).toBe("0");
    expect(renderActionOutput(null)).toBeNull();
    expect(renderActionOutput("")).toBeNull();
  });
});

describe("renderWarnings", () => {
  it("folds the warnings under their count, saying the model never saw them", () => {
    const el = renderWarnings(["FutureWarning: 'M' is deprecated (line 2)", "UserWarning: no data (line 5)"]);
    expect(el.tagName).toBe("DETAILS");
    expect(el.open).toBe(false);
    expect(el.querySelector("summary").textContent).toBe("2 warnings (not shown to the model)");
    expect(el.querySelector("pre").textContent).toBe("FutureWarning: 'M' is deprecated (line 2)\nUserWarning: no data (line 5)");
    expect(renderWarnings(["one"]).querySelector("summary").textContent).toBe("1 warning (not shown to the model)");
  });

  it("is absent without warnings (and in widgets saved before steps kept them)", () => {
    expect(renderWarnings([])).toBeNull();
    expect(renderWarnings(undefined)).toBeNull();
  });
});
