// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { ForksState, ForksView, forkLabel } from "../forks.js";
import { PNG, sampleRun } from "./helpers.js";

function view() {
  const sent = [];
  const rendered = [];
  const commands = [];
  const forks = new ForksView({
    send: (message) => sent.push(message),
    control: (command) => commands.push(command),
    imagesOf: (buffers) => ({ get: (i) => buffers[i], url: () => "blob:x" }),
    renderRun: (run, container, images) => {
      rendered.push({ run, images });
      container.append(`${run.steps.length} steps of ${run.task}`);
    },
  });
  document.body.replaceChildren(forks.toggle, forks.el);
  return { forks, sent, rendered, commands };
}

const FORKS = [
  { index: 0, task: "Plot the squares", steps: 3, status: "done" },
  { index: 1, task: "x".repeat(80), steps: 1, status: "stopped" },
];

describe("forkLabel", () => {
  it("names the run, its task (clipped), its steps and how it ended", () => {
    expect(forkLabel(FORKS[0])).toBe("Run 1: Plot the squares · 3 steps · done");
    expect(forkLabel(FORKS[1])).toBe(`Run 2: ${"x".repeat(59)}… · 1 step · stopped`);
  });
});

describe("ForksView", () => {
  it("shows no button without earlier runs, and a count with them", () => {
    const { forks } = view();
    expect(forks.toggle.hidden).toBe(true);
    forks.update(FORKS);
    expect(forks.toggle.hidden).toBe(false);
    expect(forks.toggle.textContent).toBe("Earlier runs (2)");
    expect(forks.list.hidden).toBe(true);
    forks.toggle.click();
    expect(forks.list.hidden).toBe(false);
    expect(forks.toggle.getAttribute("aria-expanded")).toBe("true");
    expect(forks.list.querySelectorAll("button.nba-fork-open")).toHaveLength(2);
  });

  it("asks Python for a run and shows the answer read-only, with its own images", () => {
    const { forks, sent, rendered } = view();
    forks.update(FORKS);
    forks.list.querySelector('[data-index="0"]').click();
    expect(sent).toEqual([{ type: "open_fork", index: 0 }]);
    expect(forks.panel.hidden).toBe(false);
    expect(forks.panel.textContent).toContain("Opening run 1");
    forks.show({ type: "fork", index: 1, run: sampleRun() }, []); // not the one asked for: ignored
    expect(rendered).toHaveLength(0);
    forks.show({ type: "fork", index: 0, run: sampleRun() }, [PNG]);
    expect(rendered).toHaveLength(1);
    expect(rendered[0].images.get(0)).toBe(PNG);
    expect(forks.panel.textContent).toContain("Earlier run 1 (read-only, kept in agent.forks[0])");
    expect(forks.panel.textContent).toContain("5 steps of Plot the squares");
    forks.panel.querySelector(".nba-fork-close").click();
    expect(forks.panel.hidden).toBe(true);
  });

  it("makes an opened run the live one on request, and closes it", () => {
    const { forks, commands } = view();
    forks.update(FORKS);
    forks.open(1);
    forks.show({ type: "fork", index: 1, run: sampleRun() }, []);
    const restore = forks.panel.querySelector(".nba-fork-restore");
    expect(restore?.textContent).toBe("Make live");
    expect(restore?.getAttribute("title")).toContain("its variables come back");
    restore?.dispatchEvent(new Event("click"));
    expect(commands).toEqual([{ action: "restore_fork", index: 1 }]);
    expect(forks.panel.hidden).toBe(true);
  });
});

describe("views of one model", () => {
  function pair() {
    const state = new ForksState();
    const sent = [];
    const make = () => {
      const forks = new ForksView({
        send: (message) => sent.push(message),
        imagesOf: (buffers) => ({ get: (i) => buffers[i], url: () => "blob:x" }),
        renderRun: (run, container) => container.append(`${run.steps.length} steps of ${run.task}`),
        state,
      });
      forks.update(FORKS);
      return forks;
    };
    return { make, sent };
  }

  it("a view drawn anew keeps the list and the run opened in an earlier one, without asking Python again", () => {
    const { make, sent } = pair();
    const first = make();
    expect(first.list.hidden).toBe(true);
    first.toggle.click();
    first.list.querySelector('[data-index="0"]').click();
    first.show({ type: "fork", index: 0, run: sampleRun() }, [PNG]);
    const second = make();
    expect(second.list.hidden).toBe(false);
    expect(second.panel.hidden).toBe(false);
    expect(second.panel.textContent).toContain("5 steps of Plot the squares");
    expect(sent).toHaveLength(1);
    second.panel.querySelector(".nba-fork-close").click();
    expect(make().panel.hidden).toBe(true);
    expect(first.panel.hidden).toBe(true);
  });

  it("what a person opens in the old view while the new one is being built shows in the new one", () => {
    const { make, sent } = pair();
    const old = make();
    const fresh = make(); // built before the click, put on the page after it
    old.toggle.click();
    old.list.querySelector('[data-index="1"]').click();
    expect(fresh.list.hidden).toBe(false);
    expect(fresh.panel.textContent).toContain("Opening run 2");
    const answer = { type: "fork", index: 1, run: sampleRun() };
    old.show(answer, []);
    fresh.show(answer, []); // every view of the model hears the answer
    expect(fresh.panel.textContent).toContain("Earlier run 2 (read-only");
    expect(sent).toEqual([{ type: "open_fork", index: 1 }]);
    old.dispose();
    fresh.toggle.click();
    expect(fresh.list.hidden).toBe(true);
    expect(old.list.hidden).toBe(false); // a disposed view no longer follows
  });
});
