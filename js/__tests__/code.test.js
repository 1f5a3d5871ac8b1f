// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderCode, renderStepCode, renderToolCalls } from "../code.js";

describe("renderCode", () => {
  it("shows a labelled, highlighted block", () => {
    const el = renderCode("import os\nprint(os.sep)");
    expect(el.querySelector(".nba-label").textContent).toBe("Code");
    expect(el.querySelector("pre.nba-code code").textContent).toBe("import os\nprint(os.sep)");
    expect(el.querySelector(".nba-k").textContent).toBe("import");
  });

  it("collapses long code", () => {
    const code = Array.from({ length: 60 }, (_, i) => `x${i} = ${i}`).join("\n");
    expect(renderCode(code).querySelector("button.nba-more")).not.toBeNull();
  });
});

describe("renderStepCode", () => {
  it("shows only the code when the model's code ran unchanged", () => {
    const blocks = renderStepCode({ code: "a = 1", model_code: null });
    expect(blocks).toHaveLength(1);
    expect(blocks[0].querySelector(".nba-label").textContent).toBe("Code");
  });

  it("shows both versions when a person edited the code", () => {
    const blocks = renderStepCode({ code: "a = 2", model_code: "a = 1" });
    expect(blocks.map((b) => b.querySelector(".nba-label").textContent)).toEqual(["Code (edited, ran)", "Code written by the model"]);
    expect(blocks[1].querySelector("pre").classList.contains("nba-code-model")).toBe(true);
  });

  it("shows nothing without code", () => {
    expect(renderStepCode({ code: null })).toEqual([]);
  });
});

describe("renderToolCalls", () => {
  it("lists tool names and arguments", () => {
    const el = renderToolCalls([{ name: "web_search", arguments: { query: "x" } }, { name: "f", arguments: "raw" }]);
    const items = el.querySelectorAll("li");
    expect(items[0].querySelector(".nba-tool-name").textContent).toBe("web_search");
    expect(items[0].querySelector(".nba-tool-args").textContent).toContain('"query": "x"');
    expect(items[1].querySelector(".nba-tool-args").textContent).toBe("raw");
  });

  it("returns null for none", () => {
    expect(renderToolCalls([])).toBeNull();
    expect(renderToolCalls(null)).toBeNull();
  });
});
