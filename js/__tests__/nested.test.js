// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { renderChildren } from "../nested.js";

describe("renderChildren", () => {
  it("renders each managed run in a collapsible <details>", () => {
    const renderInto = vi.fn((run, container) => container.append(`run ${run.task}`));
    const el = renderChildren(
      [
        { task: "a", agent_name: "searcher", status: "done", steps: [{ kind: "task" }, { kind: "action" }, { kind: "action" }] },
        { task: "b", agent_name: null, status: "running", steps: [] },
      ],
      renderInto,
    );
    const details = el.querySelectorAll("details.nba-child");
    expect(details).toHaveLength(2);
    expect(details[0].querySelector("summary").textContent).toBe("searcher · 2 steps · done");
    expect(details[0].open).toBe(false);
    expect(details[1].open).toBe(true);
    expect(details[1].querySelector(".nba-nested").textContent).toBe("run b");
    expect(renderInto).toHaveBeenCalledTimes(2);
  });

  it("returns null without children", () => {
    expect(renderChildren([], () => {})).toBeNull();
  });
});
