// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { createImageUrls } from "../images.js";
import { renderTask } from "../task.js";
import { PNG, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());

describe("renderTask", () => {
  it("renders the task as markdown with its images", () => {
    const urls = createImageUrls();
    const el = renderTask({ kind: "task", task: "Describe **this** image", images: [0] }, { get: () => PNG, url: urls.url });
    expect(el.querySelector(".nba-label").textContent).toBe("Task");
    expect(el.querySelector("strong").textContent).toBe("this");
    expect(el.querySelectorAll("img")).toHaveLength(1);
  });

  it("shows a described frame's first rows as a small table between the markdown parts", () => {
    const table = {
      index_name: null, columns: ["region", "unit price"], index: ["0", "1"],
      rows: [["North America", "1.5"], ["South", "NaN"]], more_columns: false,
    };
    const el = renderTask({
      task: "whole text",
      images: [],
      parts: [
        { kind: "markdown", text: "Which region?\n- `sales`: pandas DataFrame\n  first 2 rows:", table: null },
        { kind: "table", text: null, table },
        { kind: "markdown", text: "- `x`: int = 3", table: null },
      ],
    }, { get: () => PNG, url: createImageUrls().url });
    expect(el.textContent).not.toContain("whole text");
    const preview = el.querySelector(".nba-preview table");
    expect([...preview.querySelectorAll("thead th")].map((th) => th.textContent)).toEqual(["", "region", "unit price"]);
    const rows = [...preview.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((cell) => cell.textContent));
    expect(rows).toEqual([["0", "North America", "1.5"], ["1", "South", "NaN"]]);
    expect(el.querySelectorAll(".nba-md")).toHaveLength(2);
    expect(el.querySelector(".nba-md code").textContent).toBe("sales");
  });

  it("marks columns the preview leaves out, names the index, and shows unreadable previews as aligned text", () => {
    const table = { index_name: "key", columns: ["v"], index: ["a"], rows: [["1"]], more_columns: true };
    const el = renderTask({ task: "", images: [], parts: [{ kind: "table", text: null, table }, { kind: "text", text: "   a\n0  1", table: null }] },
      { get: () => PNG, url: createImageUrls().url });
    expect([...el.querySelectorAll("thead th")].map((th) => th.textContent)).toEqual(["key", "v", "…"]);
    expect([...el.querySelectorAll("tbody td")].map((td) => td.textContent)).toEqual(["1", "…"]);
    expect(el.querySelector("pre.nba-preview-text").textContent).toBe("   a\n0  1");
  });
});
