// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Follower, markStickyHosts, scrollParent } from "../follow.js";

/** A scroller of height 400 whose content's rectangles are given by hand (jsdom has no layout). */
function page({ widgetBottom }) {
  const scroller = document.createElement("div");
  scroller.style.overflowY = "auto";
  Object.defineProperty(scroller, "scrollHeight", { value: 2000 });
  Object.defineProperty(scroller, "clientHeight", { value: 400 });
  scroller.getBoundingClientRect = () => ({ top: 0, bottom: 400 });
  const widget = document.createElement("div");
  const rect = { bottom: widgetBottom };
  widget.getBoundingClientRect = () => ({ bottom: rect.bottom - scroller.scrollTop });
  scroller.append(widget);
  document.body.replaceChildren(scroller);
  return { scroller, widget, rect };
}

describe("scrollParent", () => {
  it("is the nearest ancestor that scrolls, else the page", () => {
    const { scroller, widget } = page({ widgetBottom: 100 });
    expect(scrollParent(widget)).toBe(scroller);
    const loose = document.createElement("div");
    document.body.append(loose);
    expect(scrollParent(loose)).toBe(document.scrollingElement ?? document.documentElement);
  });
});

describe("Follower", () => {
  it("scrolls the widget's end into view while the person is at the end", () => {
    const { scroller, widget, rect } = page({ widgetBottom: 380 });
    const follower = new Follower(widget);
    follower.follow();
    expect(scroller.scrollTop).toBe(0); // the end is in view already
    rect.bottom = 900; // the run grew
    follower.follow();
    expect(scroller.scrollTop).toBe(500);
  });

  it("stops when the person scrolls up, and resumes back at the end", () => {
    const { scroller, widget, rect } = page({ widgetBottom: 900 });
    const follower = new Follower(widget);
    follower.follow();
    expect(scroller.scrollTop).toBe(500);
    scroller.scrollTop = 100; // JupyterLab scrolls by itself: that does not stop the following
    scroller.dispatchEvent(new Event("scroll"));
    expect(follower.following).toBe(true);
    scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: -100 })); // the person scrolls up to read
    scroller.dispatchEvent(new Event("scroll"));
    expect(follower.following).toBe(false);
    rect.bottom = 1200;
    follower.follow();
    expect(scroller.scrollTop).toBe(100); // left where the person is
    scroller.scrollTop = 800; // back down at the end
    scroller.dispatchEvent(new Event("scroll"));
    expect(follower.following).toBe(true);
    rect.bottom = 1500;
    follower.follow();
    expect(scroller.scrollTop).toBe(1100);
    follower.disconnect();
  });

  it("stops when a wheel turns up", () => {
    const { scroller, widget } = page({ widgetBottom: 900 });
    const follower = new Follower(widget);
    follower.follow();
    expect(widget.dataset.follow).toBe("on");
    scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: -40 }));
    expect(follower.following).toBe(false);
    follower.follow();
    expect(widget.dataset.follow).toBe("off");
  });

  it("stops on an up key or a press on the scrollbar", () => {
    const { scroller, widget } = page({ widgetBottom: 900 });
    const follower = new Follower(widget);
    follower.follow();
    scroller.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown" }));
    expect(follower.following).toBe(true);
    scroller.dispatchEvent(new KeyboardEvent("keydown", { key: "PageUp" }));
    expect(follower.following).toBe(false);
    follower.following = true;
    widget.dispatchEvent(new Event("pointerdown", { bubbles: true })); // a click in the widget: no
    expect(follower.following).toBe(true);
    scroller.dispatchEvent(new Event("pointerdown"));
    expect(follower.following).toBe(false);
  });
});

describe("markStickyHosts", () => {
  it("marks JupyterLab's output containers up to the cell, not beyond, once the widget is in the page", () => {
    const widget = document.createElement("div");
    expect(markStickyHosts(widget)).toBe(false); // not in the page yet
    const cellEl = document.createElement("div");
    cellEl.className = "jp-Cell";
    cellEl.innerHTML =
      '<div class="jp-OutputArea"><div class="jp-OutputArea-child"><div class="jp-OutputArea-output"><div class="x"></div></div></div></div>';
    const outer = document.createElement("div");
    outer.className = "jp-OutputArea"; // an output area around the cell: not ours
    outer.append(cellEl);
    document.body.replaceChildren(outer);
    cellEl.querySelector(".x").append(widget);
    expect(markStickyHosts(widget)).toBe(true);
    expect([...document.querySelectorAll(".nba-sticky-host")].map((n) => n.className.split(" ")[0])).toEqual([
      "jp-OutputArea",
      "jp-OutputArea-child",
      "jp-OutputArea-output",
    ]);
    expect(outer.classList.contains("nba-sticky-host")).toBe(false);
  });
});

describe("Follower.request", () => {
  it("follows once per burst of deltas", async () => {
    const { scroller, widget, rect } = page({ widgetBottom: 900 });
    const follower = new Follower(widget);
    let follows = 0;
    const follow = follower.follow.bind(follower);
    follower.follow = () => {
      follows += 1;
      follow();
    };
    for (let i = 0; i < 20; i++) follower.request();
    rect.bottom = 1000;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(follows).toBe(1);
    expect(scroller.scrollTop).toBe(600);
  });
});
