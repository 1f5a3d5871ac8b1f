// anywidget front-end module of AgentWidget (nbagent/widget.py).
// State: `run` (a JSON run dict, schema in nbagent/views/state.py) and `images` (binary PNG buffers,
// referenced from steps by index). Transient custom messages from Python:
//   {type: "step_start", step_number, kind}   a step began (show the live step)
//   {type: "delta", step_number, text}        model text while it streams
//   {type: "images", start} + buffers         images appended at positions start, start+1, …
// To Python: {type: "request_images", have} when a step refers to an image this model lacks.
import "./widget.css";
import { ControlsView, connectChannel } from "./controls.js";
import { createImageUrls } from "./images.js";
import { RunView } from "./run.js";

/** Merge pushed images into the model's local `images` (not sent back: Python already has them). */
export function mergeImages(current, start, buffers) {
  const merged = [...(current ?? [])];
  buffers.forEach((buffer, k) => {
    merged[start + k] = buffer;
  });
  return merged;
}

function initialize({ model }) {
  const onMessage = (msg, buffers) => {
    if (msg?.type === "images" && Number.isInteger(msg.start) && buffers?.length) {
      model.set("images", mergeImages(model.get("images"), msg.start, buffers));
    }
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

function render({ model, el }) {
  const urls = createImageUrls();
  const requested = new Set();
  const images = {
    get: (index) => (model.get("images") ?? [])[index],
    url: (buffer) => urls.url(buffer),
    missing: () => {
      const have = (model.get("images") ?? []).length;
      if (!requested.has(have)) {
        requested.add(have);
        model.send({ type: "request_images", have });
      }
    },
  };
  const controls = new ControlsView({ send: connectChannel(model) });
  controls.update(model.get("controls"));
  const view = new RunView({ images, send: (message) => model.send(message), controls });
  const stats = { deltas: 0, deltaMs: 0 };
  el.classList.add("nbagent-widget");
  el.dataset.renderStart = performance.now().toFixed(2); // for benchmarks/widget.py
  el.append(view.el);

  const onRun = () => {
    const t0 = performance.now();
    view.update(model.get("run"));
    el.dataset.renderMs = (performance.now() - t0).toFixed(2);
  };
  const onImages = () => view.refreshImages();
  const onMessage = (msg) => {
    if (!view.live || !msg) return;
    if (msg.type === "step_start") view.live.start(msg.step_number, msg.kind);
    else if (msg.type === "delta") {
      const t0 = performance.now();
      view.live.delta(msg.step_number, String(msg.text ?? ""));
      stats.deltas += 1;
      stats.deltaMs += performance.now() - t0;
      el.dataset.deltas = String(stats.deltas);
      el.dataset.deltaMs = stats.deltaMs.toFixed(3);
    }
  };
  const onControls = () => {
    controls.update(model.get("controls"));
    view.update(model.get("run"));
  };
  model.on("change:run", onRun);
  model.on("change:controls", onControls);
  model.on("change:images", onImages);
  model.on("msg:custom", onMessage);
  onRun();
  el.dataset.rendered = "1";
  return () => {
    model.off("change:run", onRun);
    model.off("change:controls", onControls);
    model.off("change:images", onImages);
    model.off("msg:custom", onMessage);
    urls.revokeAll();
  };
}

export default { initialize, render };
