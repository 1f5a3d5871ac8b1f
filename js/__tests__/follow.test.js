// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { Follower, scrollParent } from "../follow.js";

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
    scroller.scrollTop = 100; // the person scrolls up to read
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

  it("counts a scroll up whose event has not arrived yet, and a wheel turned up", () => {
    const { scroller, widget, rect } = page({ widgetBottom: 900 });
    const follower = new Follower(widget);
    follower.follow();
    scroller.scrollTop = 200; // no scroll event yet
    rect.bottom = 1000;
    follower.follow();
    expect(scroller.scrollTop).toBe(200);
    scroller.scrollTop = 600;
    scroller.dispatchEvent(new Event("scroll"));
    expect(follower.following).toBe(true);
    scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: -40 }));
    expect(follower.following).toBe(false);
  });
});
