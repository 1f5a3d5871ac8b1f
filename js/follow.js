// Auto-follow of a live run: while the run grows, the page scrolls so that the widget's end (the live
// step) stays in view — as long as the person is there. Scrolling up stops it; scrolling back down to
// the widget's end resumes it. The scroller is the widget's nearest scrolling ancestor (JupyterLab's
// notebook panel), or the page.

/** How close (px) to the widget's end counts as "at the end". */
export const END_SLACK = 48;

/**
 * The nearest ancestor of `el` that scrolls vertically, or the document's scrolling element.
 * @param {Element} el
 * @returns {Element}
 */
export function scrollParent(el) {
  for (let node = el.parentElement; node; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll" || overflow === "overlay") && node.scrollHeight > node.clientHeight) {
      return node;
    }
  }
  return document.scrollingElement ?? document.documentElement;
}

/**
 * The bottom edge (viewport coordinates) of what the scroller shows.
 * @param {Element} scroller
 */
function viewBottom(scroller) {
  const page = scroller === document.scrollingElement || scroller === document.documentElement;
  return page ? window.innerHeight : scroller.getBoundingClientRect().bottom;
}

export class Follower {
  /** @param {HTMLElement} el the element whose end is followed */
  constructor(el) {
    this.el = el;
    /** whether the view follows the end (true until the person scrolls away from it) */
    this.following = true;
    /** @type {Element | null} */
    this.scroller = null;
    /** @type {EventTarget | null} */
    this.target = null;
    /** @type {number | null} where this follower last scrolled to (a lower scrollTop since: the person scrolled up) */
    this.lastTop = null;
    this.onScroll = () => {
      this.following = this.atEnd();
    };
    /** @param {Event} event */
    this.onWheel = (event) => {
      if (/** @type {WheelEvent} */ (event).deltaY < 0) this.following = false; // up: the person wants to read
    };
  }

  /** Whether the widget's end is in view (or above the view's bottom). */
  atEnd() {
    const scroller = this.scroller ?? scrollParent(this.el);
    return this.el.getBoundingClientRect().bottom <= viewBottom(scroller) + END_SLACK;
  }

  /** Find the scroller and listen to it (again, if the widget moved, e.g. into another panel). */
  connect() {
    if (!this.el.isConnected) return;
    const scroller = scrollParent(this.el);
    if (scroller === this.scroller) return;
    this.disconnect();
    this.scroller = scroller;
    this.target = scroller === document.scrollingElement || scroller === document.documentElement ? window : scroller;
    this.target.addEventListener("scroll", this.onScroll, { passive: true });
    this.target.addEventListener("wheel", this.onWheel, { passive: true });
  }

  disconnect() {
    this.target?.removeEventListener("scroll", this.onScroll);
    this.target?.removeEventListener("wheel", this.onWheel);
    this.target = null;
    this.scroller = null;
  }

  /** The run grew: bring the widget's end into view if the person follows it. */
  follow() {
    this.connect();
    if (!this.scroller) return;
    // a scroll up whose event has not arrived yet (events come a frame later) still counts
    if (this.lastTop !== null && this.scroller.scrollTop < this.lastTop - 2 && !this.atEnd()) this.following = false;
    if (!this.following) return;
    const below = this.el.getBoundingClientRect().bottom - viewBottom(this.scroller);
    if (below > 0) this.scroller.scrollTop += below;
    this.lastTop = this.scroller.scrollTop;
  }
}
