// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { renderFinalAnswer } from "../final.js";
import { createImageUrls } from "../images.js";
import { PNG, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());
const images = () => ({ get: () => PNG, url: createImageUrls().url });

describe("renderFinalAnswer", () => {
  it("renders text answers as markdown", () => {
    const el = renderFinalAnswer({ text: "It is **42**", type: "str" }, images());
    expect(el.classList.contains("nba-final")).toBe(true);
    expect(el.querySelector("strong").textContent).toBe("42");
  });

  it("keeps other values preformatted", () => {
    const el = renderFinalAnswer({ text: "   a  b\n0  1  2", type: "DataFrame" }, images());
    expect(el.querySelector("pre").textContent).toBe("   a  b\n0  1  2");
  });

  it("shows image answers", () => {
    const el = renderFinalAnswer({ text: "", type: "Image", images: [0] }, images());
    expect(el.querySelector("img")).not.toBeNull();
  });

  it("returns null without an answer", () => {
    expect(renderFinalAnswer(null, images())).toBeNull();
  });

  it("draws a run that answered as the final answer", () => {
    const el = renderFinalAnswer({ text: "Paris", type: "str", outcome: "success" }, images());
    expect(el.className).toBe("nba-final");
    expect(el.querySelector(".nba-label").textContent).toBe("Final answer");
  });

  it("warns, never as an answer, when the steps ran out", () => {
    const el = renderFinalAnswer({ text: "Sorry, I ran out of steps", type: "str", outcome: "max_steps_error" }, images());
    expect(el.classList.contains("nba-final-warn")).toBe(true);
    expect(el.dataset.outcome).toBe("max_steps_error");
    expect(el.querySelector(".nba-label").textContent).toMatch(/^No answer: max steps reached/);
    expect(el.textContent).toContain("Sorry, I ran out of steps");
  });

  it("warns when the answer reads as an error", () => {
    const el = renderFinalAnswer({ text: "Error: no such column", type: "str", outcome: "error_answer" }, images());
    expect(el.classList.contains("nba-final-warn")).toBe(true);
    expect(el.querySelector(".nba-label").textContent).toBe("No answer: the final answer reads as an error");
  });
});
