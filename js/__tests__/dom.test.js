// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { append, clear, h } from "../dom.js";

describe("h", () => {
  it("sets class, dataset, attributes and skips null/false", () => {
    const el = h("div", { class: "a b", dataset: { step: 3 }, title: "t", hidden: false, id: null });
    expect(el.className).toBe("a b");
    expect(el.dataset.step).toBe("3");
    expect(el.getAttribute("title")).toBe("t");
    expect(el.hasAttribute("hidden")).toBe(false);
    expect(el.hasAttribute("id")).toBe(false);
  });

  it("adds text as text nodes, never as markup", () => {
    const el = h("p", null, "<img src=x onerror=alert(1)>", ["a", null, ["b"]]);
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toBe("<img src=x onerror=alert(1)>ab");
  });

  it("wires on<event> handlers", () => {
    const fn = vi.fn();
    h("button", { onclick: fn }).click();
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe("append/clear", () => {
  it("appends nested children and clears them", () => {
    const el = append(h("div"), [h("span"), "x", [h("b")]]);
    expect(el.childNodes.length).toBe(3);
    expect(clear(el).childNodes.length).toBe(0);
  });
});
