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
});
