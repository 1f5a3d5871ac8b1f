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

  it("labels nbagent's rewrite and the person's edit apart, each with its diff", () => {
    const blocks = renderStepCode({
      code: "t = (a * b).sum()\nprint(t)",
      model_code: "t = a * b.sum()",
      code_changes: [
        { by: "nbagent", label: "rewritten by nbagent", diff: [["-", "t = a * b.sum()"], ["+", "t = (a * b).sum()"]] },
        { by: "you", label: "edited by you", diff: [[" ", "t = (a * b).sum()"], ["+", "print(t)"]] },
      ],
    });
    const chips = [...blocks[0].querySelectorAll(".nba-code-change")].map((chip) => chip.textContent);
    expect(chips).toEqual(["rewritten by nbagent", "edited by you"]);
    expect(blocks[0].querySelector(".nba-label").textContent).toContain("Code that ran");
    expect(blocks[0].querySelector("pre code").textContent).toBe("t = (a * b).sum()\nprint(t)");
    const [rewrite, edit] = blocks.slice(1);
    expect(rewrite.dataset.by).toBe("nbagent");
    expect(rewrite.querySelector(".nba-label").textContent).toBe("Rewritten by nbagent: the model's code (−) → nbagent's (+)");
    expect(rewrite.querySelector(".nba-diff-del").textContent).toBe("- t = a * b.sum()\n");
    expect(rewrite.querySelector(".nba-diff-add").textContent).toBe("+ t = (a * b).sum()\n");
    expect(edit.querySelector(".nba-label").textContent).toMatch(/^Edited by you: the code you were shown/);
    expect([...edit.querySelectorAll(".nba-diff-line")].map((line) => line.textContent)).toEqual(["  t = (a * b).sum()\n", "+ print(t)\n"]);
  });

  it("shows only the person's edit when nbagent changed nothing", () => {
    const blocks = renderStepCode({
      code: "a = 2", model_code: "a = 1", code_changes: [{ by: "you", label: "edited by you", diff: [["-", "a = 1"], ["+", "a = 2"]] }],
    });
    expect([...blocks[0].querySelectorAll(".nba-code-change")].map((c) => c.dataset.by)).toEqual(["you"]);
    expect(blocks).toHaveLength(2);
    expect(blocks[0].textContent).not.toContain("nbagent");
  });

  it("says a change of unknown origin for a widget saved before steps said who changed the code", () => {
    const blocks = renderStepCode({ code: "a = 2", model_code: "a = 1" });
    expect(blocks[0].querySelector(".nba-code-change").textContent).toBe("changed before it ran");
    expect(blocks[1].querySelector(".nba-label").textContent).toBe("Code written by the model");
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

  it("shows what a call of the code gave and how long it took", () => {
    const el = renderToolCalls([
      { name: "add", arguments: { a: "2" }, result: "5", seconds: 0.0123 },
      { name: "hang", arguments: {}, error: "ToolCallAbandoned: given up", seconds: 2.04, more: 3 },
    ]);
    const [ok, failed] = el.querySelectorAll("li");
    expect(ok.querySelector(".nba-tool-result").textContent).toBe("→ 5");
    expect(ok.querySelector(".nba-tool-time").textContent).toBe("12 ms");
    expect(failed.querySelector(".nba-tool-error").textContent).toBe("✗ ToolCallAbandoned: given up");
    expect(failed.querySelector(".nba-tool-result")).toBeNull();
    expect(failed.querySelector(".nba-tool-time").textContent).toBe("2.0 s");
    expect(failed.querySelector(".nba-tool-more").textContent).toBe("and 3 more calls");
  });

  it("returns null for none", () => {
    expect(renderToolCalls([])).toBeNull();
    expect(renderToolCalls(null)).toBeNull();
  });
});
