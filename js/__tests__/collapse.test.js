// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { collapsible, countLines } from "../collapse.js";
import { h } from "../dom.js";

describe("countLines", () => {
  it("counts lines, ignoring one trailing newline", () => {
    expect(countLines("")).toBe(0);
    expect(countLines("a")).toBe(1);
    expect(countLines("a\nb\n")).toBe(2);
    expect(countLines("a\n\n")).toBe(2);
  });
});

describe("collapsible", () => {
  it("leaves short content alone", () => {
    const pre = h("pre", null, "one\ntwo");
    expect(collapsible(pre, { maxLines: 5 })).toBe(pre);
  });

  it("clips long content behind a toggle that says how much is hidden", () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
    const wrapper = collapsible(h("pre", null, text), { maxLines: 10 });
    const button = wrapper.querySelector("button.nba-more");
    expect(wrapper.classList.contains("nba-collapsed")).toBe(true);
    expect(wrapper.style.getPropertyValue("--nba-max-lines")).toBe("10");
    expect(button.textContent).toBe("Show more (20 more lines)");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    button.click();
    expect(wrapper.classList.contains("nba-collapsed")).toBe(false);
    expect(button.textContent).toBe("Show less");
    expect(button.getAttribute("aria-expanded")).toBe("true");
    button.click();
    expect(wrapper.classList.contains("nba-collapsed")).toBe(true);
  });

  it("uses the given text to measure (e.g. markdown whose DOM text differs)", () => {
    const el = h("div", null, "short");
    expect(collapsible(el, { text: "a\nb\nc", maxLines: 2 })).not.toBe(el);
  });

  it("is a real button (keyboard reachable)", () => {
    const wrapper = collapsible(h("pre", null, "1\n2\n3"), { maxLines: 1 });
    const button = wrapper.querySelector("button");
    expect(button.type).toBe("button");
    expect(button.textContent).toBe("Show more (2 more lines)");
  });
});
