// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { benchEnabled, benchHooks } from "../bench.js";

afterEach(() => {
  delete globalThis.__NBAGENT_BENCH__;
});

describe("benchHooks", () => {
  it("only calls through, leaving the element alone, unless the page set the flag", () => {
    for (const flag of [undefined, false, "true", 1]) {
      if (flag === undefined) delete globalThis.__NBAGENT_BENCH__;
      else globalThis.__NBAGENT_BENCH__ = flag;
      expect(benchEnabled()).toBe(false);
      const el = document.createElement("div");
      const bench = benchHooks(el);
      const calls = [];
      bench.render(() => calls.push("render"));
      bench.delta(() => calls.push("delta"));
      expect(calls).toEqual(["render", "delta"]);
      expect(Object.keys(el.dataset)).toEqual([]);
    }
  });

  it("times renders and deltas on the element when the flag is true", () => {
    globalThis.__NBAGENT_BENCH__ = true;
    expect(benchEnabled()).toBe(true);
    const el = document.createElement("div");
    const bench = benchHooks(el);
    expect(Number(el.dataset.renderStart)).toBeGreaterThan(0);
    let ran = 0;
    bench.render(() => (ran += 1));
    expect(ran).toBe(1);
    expect(Number(el.dataset.renderMs)).toBeGreaterThanOrEqual(0);
    bench.delta(() => (ran += 1));
    bench.delta(() => (ran += 1));
    expect(ran).toBe(3);
    expect(el.dataset.deltas).toBe("2");
    expect(Number(el.dataset.deltaMs)).toBeGreaterThanOrEqual(0);
  });

  it("keeps separate counts per view", () => {
    globalThis.__NBAGENT_BENCH__ = true;
    const [a, b] = [document.createElement("div"), document.createElement("div")];
    const [ha, hb] = [benchHooks(a), benchHooks(b)];
    ha.delta(() => {});
    ha.delta(() => {});
    hb.delta(() => {});
    expect([a.dataset.deltas, b.dataset.deltas]).toEqual(["2", "1"]);
  });
});
