// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderActionOutput, renderLogs } from "../observation.js";

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
