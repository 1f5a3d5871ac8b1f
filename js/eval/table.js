// anywidget front-end of nbagent's evaluation view (nbagent/eval/display.py: EvalView).
// State (traitlets), all set by Python:
//   progress  {status, done, total, errors, no_answer, cancelled, input_tokens, output_tokens, elapsed_s,
//              remaining_s, engine, scorers, epochs, note, comparisons: [Comparison],
//              agents: [{agent, done, errors, no_answer, nondeterministic, scores: {name: mean}}]}
//   rows      [{key, agent, id, epoch, task, expected, answer, state, answered, outcome, steps, tokens,
//              duration_s, error, scores: {name: value|null}, scorer_errors, nondeterministic}]
//   scorers   [name, ...]
// and one set here: `selected` (a row's key; Python then shows that run's steps below the table).
// Text goes in through text nodes (textContent), never innerHTML: answers are model output.

/**
 * @typedef {{key: string, agent: string, id: string, epoch: number, task: string, expected: string,
 *   answer: string, state: string, answered?: ?boolean, outcome?: string, steps: number, tokens: number, duration_s: number, error: ?string,
 *   scores: Record<string, ?number>, scorer_errors: ?string, nondeterministic?: ?boolean}} Row
 * @typedef {{agent: string, failing: boolean, varying?: boolean, query: string}} Filter
 * @typedef {{pair: string, scorer: string, tasks: number, difference: string, conclusion: string,
 *   significant: boolean}} Comparison  (the texts of nbagent.eval.compare.display_cells)
 */

/** What the "varies" mark means (nbagent/eval/display.py: VARIES). */
export const VARIES = "answers or scores differ between epochs of this task: the model's sampling, not the agent, may decide";

export const MAX_ROWS = 500;

/** What a "no answer" state means (nbagent/eval/display.py: NO_ANSWER_TITLE). */
export const NO_ANSWER_TITLE = "the run ended without a final answer: a failure for every scorer, its closing reply not scored";

/** The run ended without a final answer (max steps, stopped, timed out, stuck, failed): a failure, never scored. */
export function noAnswer(row) {
  return row.answered === false;
}

/** The state cell: the outcome of a run without an answer ("no answer (max steps)"), else the state. */
export function stateText(row) {
  return noAnswer(row) ? row.outcome || row.state : row.state;
}

/** @param {string} tag @param {?string} cls @param {...(Node|string|null)} children */
function h(tag, cls, ...children) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  for (const child of children) {
    if (child === null || child === undefined) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

/** Seconds as m:ss or h:mm:ss. */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
  const s = Math.max(0, Math.round(seconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const secs = String(s % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${secs}` : `${minutes}:${secs}`;
}

/** A score for a cell: "–" when not scored. */
export function formatScore(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** 12345 -> "12k". */
export function formatCount(n) {
  if (!n) return "0";
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** A sample failed: an error, a cancel, no final answer, a scorer error, or a score below 1. */
export function isFailing(row, scorers) {
  if (row.state === "error" || row.state === "cancelled" || noAnswer(row) || row.scorer_errors) return true;
  return scorers.some((name) => {
    const value = row.scores?.[name];
    return value !== null && value !== undefined && value < 1;
  });
}

/** @param {Row[]} rows @param {Filter} filter @param {string[]} scorers */
export function filterRows(rows, filter, scorers) {
  const query = (filter.query || "").trim().toLowerCase();
  return rows.filter((row) => {
    if (filter.agent && row.agent !== filter.agent) return false;
    if (filter.failing && !isFailing(row, scorers)) return false;
    if (filter.varying && !row.nondeterministic) return false;
    if (!query) return true;
    return [row.id, row.task, row.answer, row.expected, row.error].some((text) =>
      String(text ?? "").toLowerCase().includes(query),
    );
  });
}

function cellValue(row, column) {
  if (column.startsWith("score:")) return row.scores?.[column.slice(6)] ?? -1;
  return row[column] ?? "";
}

/** A sorted copy (numbers numerically, text alphabetically); `column` "score:<name>" sorts by a scorer. */
export function sortRows(rows, column, descending = false) {
  if (!column) return rows.slice();
  const sign = descending ? -1 : 1;
  return rows.slice().sort((a, b) => {
    const x = cellValue(a, column);
    const y = cellValue(b, column);
    if (typeof x === "number" && typeof y === "number") return sign * (x - y);
    return sign * String(x).localeCompare(String(y));
  });
}

/** The header: status, counts, times and the running score of each agent. */
export function renderProgress(progress) {
  const p = progress || {};
  const total = p.total || 0;
  const done = p.done || 0;
  const status = p.status || "running";
  const bar = h("div", "nbe-bar", h("div", "nbe-bar-fill"));
  bar.firstChild.style.width = `${total ? Math.min(100, (100 * done) / total) : 0}%`;
  const parts = [`${done}/${total} samples`];
  if (p.errors) parts.push(`${p.errors} error${p.errors === 1 ? "" : "s"}`);
  if (p.no_answer) parts.push(`${p.no_answer} no answer`);
  if (p.cancelled) parts.push(`${p.cancelled} cancelled`);
  parts.push(`${formatCount((p.input_tokens || 0) + (p.output_tokens || 0))} tokens`);
  parts.push(`${formatDuration(p.elapsed_s)} elapsed`);
  if (status === "running") parts.push(p.remaining_s === null || p.remaining_s === undefined ? "– left" : `~${formatDuration(p.remaining_s)} left`);
  if (p.engine) parts.push(p.engine);
  const label = { running: "Running", done: "Done", cancelled: "Cancelled" }[status] || status;
  const line = h("div", "nbe-line", h("span", `nbe-status nbe-status-${status}`, label), h("span", "nbe-counts", parts.join(" · ")));
  const agents = h("div", "nbe-agents");
  for (const agent of p.agents || []) {
    const scores = (p.scorers || []).map((name) => `${name} ${formatScore(agent.scores?.[name])}`).join(" · ");
    const varying = agent.nondeterministic ? `, ${agent.nondeterministic} varying` : "";
    const noAnswers = agent.no_answer ? `, ${agent.no_answer} no answer` : "";
    const chip = h("span", "nbe-agent", h("b", null, agent.agent), ` ${scores} (${agent.done} done${agent.errors ? `, ${agent.errors} err` : ""}${noAnswers}${varying})`);
    chip.dataset.agent = agent.agent;
    agents.append(chip);
  }
  const note = p.note ? h("div", "nbe-note nbe-epoch-note", p.note) : null;
  const el = h("div", "nbe-progress", line, bar, agents, note, renderComparisons(p.comparisons || []));
  el.dataset.status = status;
  el.dataset.done = String(done);
  return el;
}

/** The paired comparisons of the agents (set when the evaluation ends), or null. @param {Comparison[]} comparisons */
export function renderComparisons(comparisons) {
  if (!comparisons.length) return null;
  const names = ["pair", "scorer", "tasks", "difference", "conclusion"];
  const titles = ["agent − baseline", "scorer", "tasks", "difference [95%], p", "conclusion"];
  const head = h("tr", null, ...titles.map((title) => h("th", null, title)));
  const body = h("tbody", null);
  for (const c of comparisons) {
    const tr = h("tr", c.significant ? "nbe-sig" : "nbe-nosig");
    for (const name of names) tr.append(h("td", `nbe-c-${name}`, String(c[name] ?? "")));
    body.append(tr);
  }
  return h("table", "nbe-summary nbe-comparisons", h("thead", null, head), body);
}

/** Long texts (task, expected, answer) wrap, clamped to three lines; the whole text is the tooltip. */
const LONG = new Set(["task", "expected", "answer"]);

const COLUMNS = [
  ["agent", "agent"],
  ["id", "id"],
  ["epoch", "epoch"],
  ["task", "task"],
  ["expected", "expected"],
  ["answer", "answer"],
  ["state", "state"],
  ["steps", "steps"],
  ["tokens", "tokens"],
  ["duration_s", "time"],
];

/**
 * The table of samples. Clicking a row calls onSelect(key) (the same row again: onSelect("")).
 * @param {Row[]} rows @param {string[]} scorers @param {string} selected
 * @param {{column: string, descending: boolean}} sort
 * @param {(key: string) => void} onSelect @param {(column: string) => void} onSort
 */
export function renderTable(rows, scorers, selected, sort, onSelect, onSort) {
  const columns = [...COLUMNS, ...scorers.map((name) => [`score:${name}`, name])];
  const head = h("tr", null);
  for (const [column, title] of columns) {
    const mark = sort.column === column ? (sort.descending ? " ▼" : " ▲") : "";
    const th = h("th", null, title + mark);
    th.dataset.column = column;
    th.addEventListener("click", () => onSort(column));
    head.append(th);
  }
  const body = h("tbody", null);
  for (const row of rows.slice(0, MAX_ROWS)) {
    const tr = h("tr", `nbe-row nbe-state-${row.state}${isFailing(row, scorers) ? " nbe-failing" : ""}${noAnswer(row) ? " nbe-no-answer" : ""}${row.nondeterministic ? " nbe-varying" : ""}`);
    tr.dataset.key = row.key;
    if (row.key === selected) tr.classList.add("nbe-selected");
    const cells = [
      row.agent,
      String(row.id),
      String(row.epoch),
      row.task,
      row.expected,
      row.answer,
      stateText(row),
      String(row.steps),
      formatCount(row.tokens),
      `${(row.duration_s ?? 0).toFixed(1)} s`,
    ];
    cells.forEach((text, i) => {
      const name = COLUMNS[i][0];
      const long = LONG.has(name);
      const td = h("td", `nbe-c-${name}`, long ? h("div", "nbe-text", text ?? "") : (text ?? ""));
      if (long && text) td.title = text;
      if (name === "answer" && row.error) td.title = row.error;
      if (name === "state" && noAnswer(row)) td.title = `${NO_ANSWER_TITLE} (state ${row.state})`;
      if (name === "answer" && row.nondeterministic) {
        const mark = h("span", "nbe-varies", " · varies");
        mark.title = VARIES;
        td.append(mark);
      }
      tr.append(td);
    });
    for (const name of scorers) {
      const value = row.scores?.[name];
      const td = h("td", "nbe-score", formatScore(value));
      if (value !== null && value !== undefined) td.classList.add(value >= 1 ? "nbe-pass" : value > 0 ? "nbe-part" : "nbe-fail");
      tr.append(td);
    }
    if (row.error || row.scorer_errors) tr.title = row.error || row.scorer_errors;
    tr.addEventListener("click", () => onSelect(row.key === selected ? "" : row.key));
    body.append(tr);
  }
  const table = h("table", "nbe-table", h("thead", null, head), body);
  const more = rows.length > MAX_ROWS ? h("div", "nbe-more", `${rows.length - MAX_ROWS} more rows: filter to narrow`) : null;
  return h("div", "nbe-table-wrap", table, more);
}

function renderFilters(agents, epochs, filter, onChange) {
  const bar = h("div", "nbe-filters");
  if (agents.length > 1) {
    const select = h("select", "nbe-agent-filter", h("option", null, "all agents"));
    select.firstChild.value = "";
    for (const name of agents) {
      const option = h("option", null, name);
      option.value = name;
      select.append(option);
    }
    select.value = filter.agent;
    select.addEventListener("change", () => onChange({ agent: select.value }));
    bar.append(select);
  }
  const failing = h("input", "nbe-failing-filter");
  failing.type = "checkbox";
  failing.checked = filter.failing;
  failing.addEventListener("change", () => onChange({ failing: failing.checked }));
  bar.append(h("label", null, failing, " failing only"));
  if (epochs > 1) {
    const varying = h("input", "nbe-varying-filter");
    varying.type = "checkbox";
    varying.checked = Boolean(filter.varying);
    varying.addEventListener("change", () => onChange({ varying: varying.checked }));
    const label = h("label", null, varying, " varying only");
    label.title = VARIES;
    bar.append(label);
  }
  const search = h("input", "nbe-search");
  search.type = "search";
  search.placeholder = "search tasks, answers, errors";
  search.value = filter.query;
  search.addEventListener("input", () => onChange({ query: search.value }));
  bar.append(search);
  bar.append(h("span", "nbe-hint", "click a row to open its run"));
  return bar;
}

function render({ model, el }) {
  /** @type {Filter} */
  const filter = { agent: "", failing: false, varying: false, query: "" };
  const sort = { column: "", descending: false };
  const header = h("div", "nbe-header");
  const filters = h("div", "nbe-filter-slot");
  const table = h("div", "nbe-table-slot");
  const root = h("div", "nbe", header, filters, table);
  el.classList.add("nbagent-eval");
  el.append(root);

  const select = (key) => {
    model.set("selected", key);
    model.save_changes();
    drawTable();
  };
  const resort = (column) => {
    sort.descending = sort.column === column ? !sort.descending : false;
    sort.column = column;
    drawTable();
  };
  const drawTable = () => {
    const scorers = model.get("scorers") || [];
    const rows = sortRows(filterRows(model.get("rows") || [], filter, scorers), sort.column, sort.descending);
    table.replaceChildren(renderTable(rows, scorers, model.get("selected") || "", sort, select, resort));
    root.dataset.rows = String((model.get("rows") || []).length);
  };
  const drawFilters = () => {
    const progress = model.get("progress") || {};
    const agents = (progress.agents || []).map((a) => a.agent);
    filters.replaceChildren(
      renderFilters(agents, progress.epochs || 1, filter, (change) => {
        Object.assign(filter, change);
        drawTable();
      }),
    );
  };
  const drawHeader = () => header.replaceChildren(renderProgress(model.get("progress")));
  const onProgress = () => {
    const agents = String(((model.get("progress") || {}).agents || []).length);
    drawHeader();
    if (agents !== filters.dataset.agents) {
      filters.dataset.agents = agents;
      drawFilters();
    }
  };
  model.on("change:progress", onProgress);
  model.on("change:rows", drawTable);
  model.on("change:selected", drawTable);
  onProgress();
  drawFilters();
  drawTable();
  el.dataset.rendered = "1";
  return () => {
    model.off("change:progress", onProgress);
    model.off("change:rows", drawTable);
    model.off("change:selected", drawTable);
  };
}

export default { render };
