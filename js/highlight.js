// A small Python syntax highlighter: one sticky regular expression, tokens -> <span class="nba-…">.
// The static HTML page (nbagent/views/html.py) emits the same classes.

const KEYWORDS = new Set(
  ("False None True and as assert async await break class continue def del elif else except finally for " +
    "from global if import in is lambda nonlocal not or pass raise return try while with yield match case")
    .split(" "),
);
const BUILTINS = new Set(
  ("abs all any ascii bin bool bytearray bytes callable chr dict dir divmod enumerate filter float format " +
    "frozenset getattr hasattr hash hex id int isinstance issubclass iter len list map max min next object oct " +
    "ord pow print range repr reversed round set setattr slice sorted str sum super tuple type zip self " +
    "Exception ValueError TypeError KeyError IndexError RuntimeError final_answer")
    .split(" "),
);

// Order matters: comments and strings first so that '#' or keywords inside them are not split.
const TOKEN = new RegExp(
  [
    "(?<comment>#[^\\n]*)",
    "(?<string>(?:[rRbBuUfF]{1,2})?(?:\"\"\"[\\s\\S]*?(?:\"\"\"|$(?![\\s\\S]))|'''[\\s\\S]*?(?:'''|$(?![\\s\\S]))|\"(?:\\\\.|[^\"\\\\\\n])*(?:\"|$)|'(?:\\\\.|[^'\\\\\\n])*(?:'|$)))",
    "(?<decorator>@[A-Za-z_][\\w.]*)",
    "(?<number>\\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\\d[\\d_]*\\.?[\\d_]*(?:[eE][+-]?\\d+)?j?)|\\.\\d+(?:[eE][+-]?\\d+)?j?)",
    "(?<name>[A-Za-z_][A-Za-z0-9_]*)",
    "(?<space>\\s+)",
    "(?<other>.)",
  ].join("|"),
  "gmy",
);

/**
 * Split Python source into [className|null, text] tokens. Joining the texts gives back the source.
 * @param {string} code
 * @returns {Array<[string|null, string]>}
 */
export function tokenizePython(code) {
  /** @type {Array<[string | null, string]>} */
  const tokens = [];
  let previousName = "";
  TOKEN.lastIndex = 0;
  let match;
  while (TOKEN.lastIndex < code.length && (match = TOKEN.exec(code)) !== null) {
    const g = match.groups ?? {}; // every alternative is a named group
    const text = match[0];
    /** @type {string | null} */
    let cls = null;
    if (g.comment !== undefined) cls = "nba-c";
    else if (g.string !== undefined) cls = "nba-s";
    else if (g.decorator !== undefined) cls = "nba-d";
    else if (g.number !== undefined) cls = "nba-n";
    else if (g.name !== undefined) {
      if (previousName === "def" || previousName === "class") cls = "nba-f";
      else if (KEYWORDS.has(text)) cls = "nba-k";
      else if (BUILTINS.has(text)) cls = "nba-b";
    }
    if (g.space === undefined) previousName = g.name !== undefined ? text : "";
    const last = tokens[tokens.length - 1];
    if (cls === null && last && last[0] === null) last[1] += text;
    else tokens.push([cls, text]);
  }
  return tokens;
}

/**
 * Highlighted Python as a fragment of text nodes and spans.
 * @param {string} code
 * @returns {DocumentFragment}
 */
export function highlightPython(code) {
  const fragment = document.createDocumentFragment();
  for (const [cls, text] of tokenizePython(code)) {
    if (cls === null) {
      fragment.append(document.createTextNode(text));
    } else {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = text;
      fragment.append(span);
    }
  }
  return fragment;
}
