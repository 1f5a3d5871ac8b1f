// A small, safe Markdown renderer: builds DOM nodes (never innerHTML), so raw HTML in model text is
// shown as text. Covers what models write: paragraphs, headings, fenced code, lists, quotes, tables,
// rules, `code`, **bold**, *em*, [links](https://…) (http/https/mailto only, each followed by where it goes, so a
// link cannot carry data out behind its text). Single newlines are kept
// as line breaks, as chat UIs do. The static HTML page renders the same subset with markdown-it-py.
import { h } from "./dom.js";
import { highlightPython } from "./highlight.js";

/** @import { Child } from "./dom.js" */

const PYTHON_LANGS = new Set(["py", "python", "python3", "ipython", "pycon"]);
const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:\s+(.*))?$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const SAFE_URL = /^(?:https?:\/\/[^/\\\s]|mailto:|#)/i; // absolute only: nbagent/views/links.py says the same

/**
 * Render Markdown text into a `<div class="nba-md">`.
 * @param {string} text
 * @returns {HTMLElement}
 */
export function renderMarkdown(text) {
  const root = h("div", { class: "nba-md" });
  for (const block of parseBlocks(String(text ?? "").replace(/\r\n?/g, "\n").split("\n"))) root.append(block);
  return root;
}

/** @param {string} line */
function isBlank(line) {
  return line.trim() === "";
}

/**
 * @param {string} line
 * @param {string | undefined} next the line after it
 */
function startsBlock(line, next) {
  return (
    FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line) ||
    (line.includes("|") && next !== undefined && TABLE_SEP.test(next) && next.includes("-"))
  );
}

/**
 * @param {string[]} lines
 * @returns {HTMLElement[]}
 */
function parseBlocks(lines) {
  /** @type {HTMLElement[]} */
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i += 1;
      continue;
    }
    let m;
    if ((m = FENCE.exec(line))) {
      const [fence, lang] = [m[1], m[2].toLowerCase()];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[0].repeat(fence.length))) body.push(lines[i++]);
      i += 1; // the closing fence (or past the end when the model never closed it)
      out.push(codeBlock(body.join("\n"), lang));
    } else if ((m = HEADING.exec(line))) {
      const level = /** @type {"h3" | "h4" | "h5" | "h6"} */ (`h${Math.min(m[1].length + 2, 6)}`);
      out.push(h(level, null, inline(m[2] || "")));
      i += 1;
    } else if (RULE.test(line)) {
      out.push(h("hr"));
      i += 1;
    } else if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        inner.push(m[1]);
        i += 1;
      }
      out.push(h("blockquote", null, parseBlocks(inner)));
    } else if (ITEM.test(line)) {
      i = parseList(lines, i, out);
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i = parseTable(lines, i, out);
    } else {
      const para = [line];
      i += 1;
      while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i], lines[i + 1])) para.push(lines[i++]);
      out.push(h("p", null, inline(para.map((l) => l.trim()).join("\n"))));
    }
  }
  return out;
}

/**
 * @param {string} code
 * @param {string} lang the fence's language tag, lower case ("" for none)
 */
function codeBlock(code, lang) {
  const codeEl = h("code", { class: lang ? `language-${lang}` : null });
  if (PYTHON_LANGS.has(lang)) codeEl.append(highlightPython(code));
  else codeEl.textContent = code;
  return h("pre", { class: "nba-code" }, codeEl);
}

/**
 * Parse the list that starts at `lines[start]` into `out`.
 * @param {string[]} lines
 * @param {number} start
 * @param {HTMLElement[]} out
 * @returns {number} the index of the first line after the list
 */
function parseList(lines, start, out) {
  const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[start])); // the caller tested it
  const ordered = /\d/.test(first[2]);
  const list = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) list.setAttribute("start", String(parseInt(first[2], 10)));
  let i = start;
  let m;
  while (i < lines.length && (m = ITEM.exec(lines[i])) && /\d/.test(m[2]) === ordered) {
    const content = [m[3] || ""];
    const indent = m[1].length + m[2].length + 1;
    i += 1;
    // continuation: indented lines, or blank lines followed by indented lines
    while (i < lines.length) {
      const next = lines[i];
      if (isBlank(next)) {
        if (i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1])) {
          content.push("");
          i += 1;
          continue;
        }
        break;
      }
      if (/^\s{2,}/.test(next)) content.push(next.slice(Math.min(indent, next.length - next.trimStart().length)));
      else if (!startsBlock(next, lines[i + 1])) content.push(next.trim());
      else break;
      i += 1;
    }
    const blocks = parseBlocks(content);
    const li = h("li");
    if (blocks.length >= 1 && blocks[0].tagName === "P") {
      li.append(...blocks[0].childNodes); // tight item: no <p> around the first paragraph
      li.append(...blocks.slice(1));
    } else li.append(...blocks);
    list.append(li);
    while (i < lines.length && isBlank(lines[i]) && i + 1 < lines.length && ITEM.test(lines[i + 1])) i += 1;
  }
  out.push(list);
  return i;
}

/**
 * @param {string} line
 * @returns {string[]}
 */
function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

/**
 * Parse the table whose header is `lines[start]` into `out`.
 * @param {string[]} lines
 * @param {number} start
 * @param {HTMLElement[]} out
 * @returns {number} the index of the first line after the table
 */
function parseTable(lines, start, out) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : null,
  );
  /** @type {(tag: "th" | "td", text: string, col: number) => HTMLElement} */
  const cell = (tag, text, col) => h(tag, { style: aligns[col] ? `text-align: ${aligns[col]}` : null }, inline(text));
  const thead = h("thead", null, h("tr", null, header.map((t, c) => cell("th", t, c))));
  const tbody = h("tbody");
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|")) {
    const cells = splitRow(lines[i]);
    tbody.append(h("tr", null, header.map((_, c) => cell("td", cells[c] ?? "", c))));
    i += 1;
  }
  out.push(h("div", { class: "nba-table" }, h("table", null, thead, tbody)));
  return i;
}

const INLINE = new RegExp(
  [
    "(?<code>(`+)([^`]|[^`][\\s\\S]*?[^`])\\2(?!`))",
    "(?<link>\\[(?<ltext>[^\\]]*)\\]\\((?<href>[^)\\s]+)(?:\\s+\"[^\"]*\")?\\))",
    "(?<auto><(?<aurl>https?:\\/\\/[^>\\s]+)>)",
    "(?<strong>\\*\\*(?<stext>[^*\\s](?:[\\s\\S]*?[^*\\s])?)\\*\\*|__(?<utext>[^_\\s](?:[\\s\\S]*?[^_\\s])?)__)",
    "(?<em>\\*(?<etext>[^*\\s](?:[^*]*?[^*\\s])?)\\*|(?<![\\w])_(?<ftext>[^_\\s](?:[^_]*?[^_\\s])?)_(?![\\w]))",
    "(?<escape>\\\\([\\\\`*_{}\\[\\]()#+\\-.!|>~]))",
    "(?<br>\\n)",
  ].join("|"),
  "g",
);

/**
 * Inline Markdown as a list of nodes.
 * @param {string} text
 * @returns {Node[]}
 */
export function inline(text) {
  /** @type {Node[]} */
  const nodes = [];
  let last = 0;
  // matchAll works on a copy of the regex: the recursive calls below cannot disturb this loop.
  for (const m of String(text).matchAll(INLINE)) {
    if (m.index > last) nodes.push(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    const g = m.groups ?? {}; // every alternative is a named group
    if (g.code !== undefined) {
      const inner = m[3];
      nodes.push(h("code", null, inner.length > 2 && inner.startsWith(" ") && inner.endsWith(" ") ? inner.slice(1, -1) : inner));
    } else if (g.link !== undefined) {
      nodes.push(link(g.href, inline(g.ltext)));
    } else if (g.auto !== undefined) {
      nodes.push(link(g.aurl, [g.aurl]));
    } else if (g.strong !== undefined) {
      nodes.push(h("strong", null, inline(g.stext ?? g.utext)));
    } else if (g.em !== undefined) {
      nodes.push(h("em", null, inline(g.etext ?? g.ftext)));
    } else if (g.escape !== undefined) {
      nodes.push(document.createTextNode(m[0].slice(1)));
    } else {
      nodes.push(h("br"));
    }
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

/**
 * Where a link goes, as a person should read it next to its text: host and path, and the query, fragment and user
 * part when there is one (`attacker.example/r?k=…` in full: data a link carries out is never hidden behind its
 * text); the address of a mailto link; "" for an in-page `#fragment`. The browser's own URL parser normalises it
 * (an international host as punycode, spaces and controls percent-encoded), so what is shown is what is opened.
 * nbagent/views/links.py `link_destination` says the same for the static page.
 * @param {string} href a URL that passed SAFE_URL
 * @returns {string}
 */
export function linkDestination(href) {
  if (href.startsWith("#")) return "";
  let url;
  try {
    url = new URL(href);
  } catch {
    return href;
  }
  if (url.protocol === "mailto:") return url.href.slice("mailto:".length);
  const shown = url.href.slice(url.protocol.length + 2); // past "https://"
  return url.pathname === "/" && !url.search && !url.hash && shown.endsWith("/") ? shown.slice(0, -1) : shown;
}

/**
 * A link followed by its destination ("Open the report (attacker.example/r?k=…)"), or its text alone when the URL
 * is not http(s)/mailto/#.
 * @param {string} href
 * @param {Child[]} children
 */
function link(href, children) {
  if (!SAFE_URL.test(href)) return h("span", null, children);
  const anchor = h("a", { href, target: "_blank", rel: "noopener noreferrer" }, children);
  const destination = linkDestination(href);
  const text = anchor.textContent ?? "";
  if (!destination || text === href || text === destination) return anchor;
  const frame = document.createDocumentFragment();
  frame.append(anchor, h("span", { class: "nba-link-dest" }, ` (${destination})`));
  return frame;
}
