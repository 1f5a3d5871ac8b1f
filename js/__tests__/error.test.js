// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderError } from "../error.js";

describe("renderError", () => {
  it("renders the message in the error style", () => {
    const el = renderError("line 3: x = 1/0\nZeroDivisionError: division by zero");
    expect(el.classList.contains("nba-error")).toBe(true);
    expect(el.querySelector("pre.nba-error-text").textContent).toContain("ZeroDivisionError");
    expect(el.querySelector(".nba-label").textContent).toBe("Error");
  });

  it("takes a label and returns null without an error", () => {
    expect(renderError("boom", { label: "Run error" }).querySelector(".nba-label").textContent).toBe("Run error");
    expect(renderError(null)).toBeNull();
    expect(renderError("")).toBeNull();
  });
});
