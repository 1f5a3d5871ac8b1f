// Timing hooks for benchmarks/widget.py, off in production: they act only when the page has set
// `globalThis.__NBAGENT_BENCH__ = true` before a view renders (the benchmark does; nothing else does).
// Then they write what they measure on the view's element:
//   data-render-start            performance.now() when render() began
//   data-render-ms               the last update of the run's DOM after a `run` change, ms
//   data-deltas, data-delta-ms   streamed deltas handled, and the JS time they took in all, ms
// Without the flag the hooks only call through, and the element is left alone.

/**
 * @typedef {object} BenchHooks
 * @property {(update: () => void) => void} render runs an update of the run's DOM (timed when on)
 * @property {(handle: () => void) => void} delta runs the handling of one streamed delta (timed when on)
 */

/** Whether the page asked for the timing hooks. */
export function benchEnabled() {
  return /** @type {{__NBAGENT_BENCH__?: unknown}} */ (globalThis).__NBAGENT_BENCH__ === true;
}

/** @type {BenchHooks} */
const OFF = Object.freeze({ render: (update) => update(), delta: (handle) => handle() });

/**
 * The timing hooks of one view (its render() calls this first).
 * @param {HTMLElement} el the view's element
 * @returns {BenchHooks}
 */
export function benchHooks(el) {
  if (!benchEnabled()) return OFF;
  el.dataset.renderStart = performance.now().toFixed(2);
  let deltas = 0;
  let deltaMs = 0;
  return {
    render(update) {
      const t0 = performance.now();
      update();
      el.dataset.renderMs = (performance.now() - t0).toFixed(2);
    },
    delta(handle) {
      const t0 = performance.now();
      handle();
      deltas += 1;
      deltaMs += performance.now() - t0;
      el.dataset.deltas = String(deltas);
      el.dataset.deltaMs = deltaMs.toFixed(3);
    },
  };
}
