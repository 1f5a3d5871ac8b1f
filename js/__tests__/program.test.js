// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import { COPY_LABEL, SAID, cellIndexOf, copyAsCell, notebookOf, renderProgram } from "../program.js";
import { RunView } from "../run.js";

const TEXT = "# checked: reproduces the answer\n# inputs: sales (DataFrame 4×3) — notebook variables the run read\n"
  + "totals = sales.groupby('region')['revenue'].sum()\nanswer = totals.idxmax()\n";
const program = { text: TEXT, checked: true, reason: "reproduces the answer", inputs: ["sales"], tools: [] };

/** A notebook page: cells `from`… in the page, the widget's view inside the output of cell `at`. */
function page(count, at, { from = 0 } = {}) {
  const notebook = document.createElement("div");
  notebook.className = "jp-Notebook";
  let view = null;
  for (let i = from; i < count; i++) {
    const cell = document.createElement("div");
    cell.className = "jp-Cell";
    cell.dataset.windowedListIndex = String(i);
    if (i === at) {
      view = document.createElement("div");
      cell.append(view);
    }
    notebook.append(cell);
  }
  document.body.replaceChildren(notebook);
  return view;
}

/** JupyterLab's notebook model as the widget manager's document context holds it. */
function lab(count) {
  const cells = Array.from({ length: count }, (_, i) => ({ source: `cell ${i}` }));
  const insertCell = vi.fn((index, cell) => cells.splice(index, 0, cell));
  return { widget_manager: { context: { model: { sharedModel: { cells, insertCell } } } }, cells, insertCell };
}

afterEach(() => vi.unstubAllGlobals());

describe("renderProgram", () => {
  it("shows the program with its status and a Copy as cell button", async () => {
    const copy = vi.fn(async () => "inserted");
    const box = renderProgram(program, copy);
    expect(box.dataset.checked).toBe("true");
    expect(box.querySelector("summary .nba-label").textContent).toBe("The run as code · checked: reproduces the answer");
    expect(box.querySelector(".nba-program-code").textContent).toBe(TEXT);
    const button = box.querySelector(".nba-btn-copy-cell");
    expect(button.textContent).toBe(COPY_LABEL);
    button.click();
    await Promise.resolve();
    await Promise.resolve();
    expect(copy).toHaveBeenCalledWith(TEXT, box);
    expect(box.querySelector(".nba-program-note").textContent).toBe(SAID.inserted);
  });

  it("says unchecked programs as such, and nothing without a program", () => {
    const unchecked = { ...program, checked: false, text: "# unchecked: run again it gives 2, not 1\nanswer = 2\n" };
    const box = renderProgram(unchecked, null);
    expect(box.dataset.checked).toBe("false");
    expect(box.querySelector("summary").textContent).toBe("The run as code · unchecked: run again it gives 2, not 1");
    expect(box.querySelector("button")).toBeNull(); // no way to copy: no button
    expect(renderProgram(null)).toBeNull();
    expect(renderProgram({ ...program, checked: null, text: "# no program: no answer\n" })).toBeNull();
  });

  it("keeps its box (open, with its note) while the run view updates with the same program", () => {
    const view = new RunView({ images: { get: () => undefined, url: () => "" }, live: false, copyCell: async () => "copied" });
    view.update({ status: "done", steps: [], program });
    const box = view.el.querySelector(".nba-program");
    box.open = true;
    view.update({ status: "done", steps: [], program, message: "undone" });
    expect(view.el.querySelector(".nba-program")).toBe(box);
    view.update({ status: "done", steps: [], program: { ...program, checked: false } });
    expect(view.el.querySelector(".nba-program")).not.toBe(box);
  });
});

describe("copyAsCell", () => {
  it("inserts a code cell right below the widget's cell in JupyterLab's notebook model", async () => {
    const view = page(4, 1);
    const model = lab(4);
    expect(cellIndexOf(view, 4)).toBe(1);
    expect(await copyAsCell(model, TEXT, view)).toBe("inserted");
    const source = TEXT.slice(0, -1); // without the file's last newline: no empty last line in the cell
    expect(model.insertCell).toHaveBeenCalledWith(2, { cell_type: "code", source });
    expect(model.cells.map((c) => c.source)).toEqual(["cell 0", "cell 1", source, "cell 2", "cell 3"]);
  });

  it("reads the windowed list's index when not every cell is in the page", async () => {
    const view = page(6, 4, { from: 3 }); // cells 0-2 scrolled out of the page
    const model = lab(6);
    expect(cellIndexOf(view, 6)).toBe(4);
    expect(await copyAsCell(model, TEXT, view)).toBe("inserted");
    expect(model.insertCell).toHaveBeenCalledWith(5, { cell_type: "code", source: TEXT.trimEnd() });
  });

  it("copies to the clipboard where there is no notebook model, and says when it cannot", async () => {
    const view = page(1, 0);
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    expect(notebookOf({ widget_manager: {} })).toBeNull();
    expect(await copyAsCell({ widget_manager: {} }, TEXT, view)).toBe("copied");
    expect(writeText).toHaveBeenCalledWith(TEXT);
    vi.stubGlobal("navigator", {});
    expect(await copyAsCell({}, TEXT, view)).toBe("failed");
    const outside = document.createElement("div"); // a view in no notebook cell: not inserted anywhere
    expect(await copyAsCell(lab(2), TEXT, outside)).toBe("failed");
  });
});
