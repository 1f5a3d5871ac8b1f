// Auto-follow of a live run: while the run grows, the page scrolls so that the widget's end (the live
// step) stays in view — as long as the person is there. Scrolling up (wheel, keys, scrollbar) stops it;
// scrolling back down to the widget's end resumes it. The scroller is the widget's nearest scrolling ancestor (JupyterLab's
// notebook panel), or the page.

/** How close (px) to the widget's end counts as "at the end". */
export const END_SLACK = 48;

/** Keys that scroll up: pressed in the notebook, they stop the following. */
const UP_KEYS = new Set(["PageUp", "ArrowUp", "Home"]);

/** The deltas of this long are followed with one layout. */
export const FOLLOW_DELAY_MS = 50;

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

/** JupyterLab's output containers that are scroll containers (see widget.css, `.nba-sticky-host`). */
const OUTPUT_CONTAINERS = ["jp-OutputArea", "jp-OutputArea-child", "jp-OutputArea-output"];

/**
 * Mark the output containers around `el` so that widget.css can stop them being scroll containers (which would
 * pin the sticky top inside the output). A class set once, not a `:has()` rule: `:has()` over the output's
 * descendants made Chromium re-check styles on every streamed delta (7× slower renders, measured).
 * @param {Element} el
 * @returns {boolean} whether `el` is in the page (marked, or nothing to mark)
 */
export function markStickyHosts(el) {
  if (!el.isConnected) return false;
  for (let node = el.parentElement; node && !node.classList.contains("jp-Cell"); node = node.parentElement) {
    if (OUTPUT_CONTAINERS.some((name) => node.classList.contains(name))) node.classList.add("nba-sticky-host");
  }
  return true;
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
    /** a follow is scheduled */
    this.pending = false;
    // Only the person's own input stops following (JupyterLab scrolls by itself too, e.g. to the cell being run);
    // any scroll that reaches the widget's end resumes it.
    this.onScroll = () => {
      if (this.atEnd()) this.following = true;
    };
    /** @param {Event} event */
    this.onWheel = (event) => {
      if (/** @type {WheelEvent} */ (event).deltaY < 0) this.following = false;
    };
    /** @param {Event} event */
    this.onKey = (event) => {
      if (UP_KEYS.has(/** @type {KeyboardEvent} */ (event).key)) this.following = false;
    };
    /** @param {Event} event a press on the scroller itself: its scrollbar */
    this.onPointer = (event) => {
      if (event.target === this.scroller) this.following = false;
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
    for (const [name, handler] of this.handlers()) this.target.addEventListener(name, handler, { passive: true });
  }

  /** @returns {Array<[string, (event: Event) => void]>} */
  handlers() {
    return [["scroll", this.onScroll], ["wheel", this.onWheel], ["keydown", this.onKey], ["pointerdown", this.onPointer]];
  }

  disconnect() {
    for (const [name, handler] of this.handlers()) this.target?.removeEventListener(name, handler);
    this.target = null;
    this.scroller = null;
  }

  /** The run grew: follow it shortly (a burst of deltas costs one layout, not one each). */
  request() {
    if (this.pending) return;
    this.pending = true;
    const run = () => {
      this.pending = false;
      this.follow();
    };
    // a timer, not requestAnimationFrame: that one does not fire in a tab the browser deems hidden
    setTimeout(run, FOLLOW_DELAY_MS);
  }

  /** The run grew: bring the widget's end into view if the person follows it. */
  follow() {
    this.connect();
    this.el.dataset.follow = this.following ? "on" : "off"; // (for tests and a person's devtools)
    if (!this.scroller || !this.following) return;
    const below = this.el.getBoundingClientRect().bottom - viewBottom(this.scroller);
    if (below > 0) this.scroller.scrollTop += below;
  }
}
