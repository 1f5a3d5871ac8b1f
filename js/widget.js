// anywidget front-end module of AgentWidget (nbagent/notebook/widget.py).
// State: `run` (a JSON run dict), `images` (binary PNG buffers, referenced from steps by index),
// `controls` and `control_channel` — the schema is js/types.js (nbagent/views/state.py's docstring).
// Transient custom messages from Python:
//   {type: "step_start", step_number, kind}   a step began (show the live step)
//   {type: "delta", step_number, text}        model text while it streams
//   {type: "logs", step_number, text}         what the step's code prints while it runs
//   {type: "images", start} + buffers         images appended at positions start, start+1, …
//   {type: "fork", index, run} + buffers      an earlier run (agent.forks[index]) asked for, its PNGs
// To Python: {type: "request_images", have} when a step refers to an image this model lacks;
//   {type: "open_fork", index} to see an earlier run (the `forks` trait lists them).
// While a run is live the page follows its end (js/follow.js) until the person scrolls up, and the header's clock
// (js/clock.js) ticks once this view has heard from the kernel (a widget restored from saved state never does).
// Timing for benchmarks/widget.py is in js/bench.js, off unless the page turns it on.
import "./widget.css";
import "./outcome.css";
import { benchHooks } from "./bench.js";
import { ControlsView, connectChannel } from "./controls.js";
import { Follower, markStickyHosts } from "./follow.js";
import { ForksState, ForksView } from "./forks.js";
import { createImageUrls } from "./images.js";
import { copyAsCell } from "./program.js";
import { RunView, renderRunInto } from "./run.js";
import { LIVE_STATUSES } from "./status.js";

/** @import { AnyWidget, Initialize, Render } from "@anywidget/types" */
/** @import { ImageSource } from "./images.js" */
/** @import { ForkMessage, OpenForkMessage } from "./forks.js" */
/** @import { RequestImagesMessage, WidgetMessage, WidgetModel } from "./types.js" */

/**
 * Merge pushed images into the model's local `images` (not sent back: Python already has them).
 * @param {DataView[] | null | undefined} current
 * @param {number} start
 * @param {DataView[]} buffers
 * @returns {DataView[]}
 */
export function mergeImages(current, start, buffers) {
  const merged = [...(current ?? [])];
  buffers.forEach((buffer, k) => {
    merged[start + k] = buffer;
  });
  return merged;
}

/** @type {Map<string, ForksState>} what the views of each widget share of the earlier runs opened, by `views_key` */
const forksStates = new Map();

/**
 * @param {string | undefined} key the widget's `views_key` (none in a state saved before it existed: not shared)
 * @returns {ForksState}
 */
function forksStateOf(key) {
  if (!key) return new ForksState();
  let state = forksStates.get(key);
  if (!state) forksStates.set(key, (state = new ForksState()));
  return state;
}

/** @type {Initialize<WidgetModel>} */
function initialize({ model }) {
  /**
   * @param {WidgetMessage | null | undefined} msg
   * @param {DataView[]} buffers
   */
  const onMessage = (msg, buffers) => {
    if (msg?.type === "images" && Number.isInteger(msg.start) && buffers?.length) {
      model.set("images", mergeImages(model.get("images"), msg.start, buffers));
    }
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

/** @type {Render<WidgetModel>} */
function render({ model, el }) {
  const bench = benchHooks(el);
  const urls = createImageUrls();
  /** @type {Set<number>} */
  const requested = new Set();
  /** @type {ImageSource} */
  const images = {
    get: (index) => (model.get("images") ?? [])[index],
    url: (buffer) => urls.url(buffer),
    missing: () => {
      const have = (model.get("images") ?? []).length;
      if (!requested.has(have)) {
        requested.add(have);
        /** @type {RequestImagesMessage} */
        const request = { type: "request_images", have };
        model.send(request);
      }
    },
  };
  const control = connectChannel(model);
  const controls = new ControlsView({ send: control });
  controls.update(model.get("controls"));
  const forks = new ForksView({
    send: (/** @type {OpenForkMessage} */ message) => model.send(message),
    control,
    imagesOf: (buffers) => ({ get: (index) => buffers[index], url: (buffer) => urls.url(buffer) }),
    renderRun: (run, container, source) => renderRunInto(run, container, { images: source }),
    state: forksStateOf(model.get("views_key")),
  });
  forks.update(model.get("forks"));
  const copyCell = (/** @type {string} */ text, /** @type {HTMLElement} */ from) => copyAsCell(model, text, from);
  const view = new RunView({ images, controls, forks, copyCell });
  el.classList.add("nbagent-widget");
  el.append(view.el);
  const follower = new Follower(view.el);
  let marked = false; // the output containers around the widget are marked for the sticky top (js/follow.js)
  /** @param {number} tries */
  const mark = (tries) => {
    marked ||= markStickyHosts(el);
    if (!marked && tries > 0) setTimeout(() => mark(tries - 1), 200); // until the view is in the page
  };
  mark(10);
  const followIfLive = () => {
    marked ||= markStickyHosts(el);
    if (LIVE_STATUSES.has(/** @type {any} */ (view.el.dataset.status))) follower.request();
  };

  const onRun = () => {
    bench.render(() => view.update(model.get("run")));
    followIfLive();
  };
  const onRunChange = () => {
    view.heard(); // the kernel is there: a live run's clock ticks (js/clock.js)
    onRun();
  };
  const onImages = () => view.refreshImages();
  /**
   * @param {WidgetMessage | ForkMessage | null | undefined} msg
   * @param {DataView[]} buffers
   */
  const onMessage = (msg, buffers) => {
    if (msg) view.heard();
    if (msg?.type === "fork") {
      forks.show(msg, buffers);
      return;
    }
    const live = view.live;
    if (!live || !msg) return;
    if (msg.type === "step_start") {
      live.start(msg.step_number, msg.kind);
      view.stepStarted(msg.step_number, msg.kind);
      view.update(model.get("run")); // the header's step counter, the review box's place
    } else if (msg.type === "delta") bench.delta(() => live.delta(msg.step_number, String(msg.text ?? "")));
    else if (msg.type === "logs") live.logs(msg.step_number, String(msg.text ?? ""));
    else return;
    followIfLive();
  };
  const markUndone = () => {
    view.el.dataset.undone = model.get("controls")?.undone ? "true" : "false"; // widget.css hides the warning
  };
  markUndone();
  const onControls = () => {
    view.heard();
    markUndone();
    controls.update(model.get("controls"));
    view.update(model.get("run"));
    followIfLive();
  };
  const onForks = () => forks.update(model.get("forks"));
  model.on("change:run", onRunChange);
  model.on("change:controls", onControls);
  model.on("change:images", onImages);
  model.on("change:forks", onForks);
  model.on("msg:custom", onMessage);
  onRun();
  el.dataset.rendered = "1"; // the view is built (browser tests and the benchmark wait for it)
  return () => {
    model.off("change:run", onRunChange);
    model.off("change:controls", onControls);
    model.off("change:images", onImages);
    model.off("change:forks", onForks);
    model.off("msg:custom", onMessage);
    follower.disconnect();
    forks.dispose();
    view.dispose();
    urls.revokeAll();
  };
}

/** @satisfies {AnyWidget<WidgetModel>} */
export default { initialize, render };
