// Shared test helpers: a fake anywidget model and a stubbed object-URL API (jsdom has none).
import { vi } from "vitest";

export function stubObjectUrls() {
  let n = 0;
  const revoked = [];
  URL.createObjectURL = vi.fn(() => `blob:nba-${++n}`);
  URL.revokeObjectURL = vi.fn((url) => revoked.push(url));
  return { revoked };
}

/** A minimal stand-in for anywidget's model: get/set/on/off/send plus a way to fire events. */
export function fakeModel(state) {
  const values = { ...state };
  const handlers = new Map();
  const sent = [];
  const fire = (event, ...args) => (handlers.get(event) ?? []).slice().forEach((fn) => fn(...args));
  return {
    sent,
    get: (key) => values[key],
    set: (key, value) => {
      values[key] = value;
      fire(`change:${key}`);
    },
    on: (event, fn) => handlers.set(event, [...(handlers.get(event) ?? []), fn]),
    off: (event, fn) => handlers.set(event, (handlers.get(event) ?? []).filter((f) => f !== fn)),
    send: (msg) => sent.push(msg),
    fire,
    listeners: (event) => (handlers.get(event) ?? []).length,
  };
}

export const PNG = new DataView(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).buffer);

/** A run dict like nbagent/views/state.py produces: task, an error step, an image step, a final answer. */
export function sampleRun(overrides = {}) {
  return {
    task: "Plot the squares",
    agent_name: "analyst",
    model_id: "scripted",
    status: "done",
    steps: [
      { kind: "task", step_number: null, task: "Plot the **squares**", images: [] },
      {
        kind: "action", step_number: 1, model_output: "Thought: divide\n```py\nx = 1/0\n```", code: "x = 1/0",
        model_code: null, tool_calls: [], observations: "", error: "ZeroDivisionError: division by zero",
        images: [], action_output: null, is_final_answer: false,
        token_usage: { input_tokens: 1200, output_tokens: 40 }, duration: 0.5, stopped: false, plan: null, children: [],
      },
      {
        kind: "action", step_number: 2, model_output: "Thought: plot", code: "print('plotted')\nimg", model_code: null,
        tool_calls: [], observations: "plotted\n", error: null, images: [0], action_output: "<image>",
        is_final_answer: false, token_usage: { input_tokens: 1300, output_tokens: 50 }, duration: 1.25,
        stopped: false, plan: null, children: [],
      },
      {
        kind: "action", step_number: 3, model_output: "Thought: done", code: "final_answer('The squares are 1, 4, 9')",
        model_code: null, tool_calls: [], observations: "", error: null, images: [],
        action_output: "The squares are 1, 4, 9", is_final_answer: true,
        token_usage: { input_tokens: 1400, output_tokens: 30 }, duration: 0.25, stopped: false, plan: null, children: [],
      },
      { kind: "final", step_number: null, final_answer: { text: "The squares are 1, 4, 9", type: "str", images: [] } },
    ],
    final_answer: { text: "The squares are 1, 4, 9", type: "str", images: [] },
    token_usage: { input_tokens: 3900, output_tokens: 120 },
    duration: 2.0,
    error: null,
    ...overrides,
  };
}
