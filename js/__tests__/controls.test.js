// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderControls, renderStatus, STATUS_LABELS } from "../controls.js";

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
  });
});

describe("renderControls", () => {
  it("is an empty, labelled toolbar for now", () => {
    const el = renderControls({ status: "running" }, () => {});
    expect(el.getAttribute("role")).toBe("toolbar");
    expect(el.getAttribute("aria-label")).toBe("Run controls");
    expect(el.querySelectorAll("button")).toHaveLength(0);
  });
});
