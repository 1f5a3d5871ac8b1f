// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { highlightPython, tokenizePython } from "../highlight.js";

const classOf = (code, text) => tokenizePython(code).find(([, t]) => t === text)?.[0];

describe("tokenizePython", () => {
  it("round-trips the source exactly", () => {
    const code = 'def f(x=1.5e3):\n    # comment "q"\n    return f"{x}" + \'\'\'a\nb\'\'\'  # end\n';
    expect(tokenizePython(code).map(([, t]) => t).join("")).toBe(code);
  });

  it("classifies keywords, builtins, strings, numbers, comments, defs and decorators", () => {
    const code = "@cache\ndef area(r):\n    return 3.14 * r ** 2  # pi r squared\nprint('x', len(y), 0x1F)";
    expect(classOf(code, "def")).toBe("nba-k");
    expect(classOf(code, "area")).toBe("nba-f");
    expect(classOf(code, "return")).toBe("nba-k");
    expect(classOf(code, "3.14")).toBe("nba-n");
    expect(classOf(code, "0x1F")).toBe("nba-n");
    expect(classOf(code, "# pi r squared")).toBe("nba-c");
    expect(classOf(code, "'x'")).toBe("nba-s");
    expect(classOf(code, "print")).toBe("nba-b");
    expect(classOf(code, "@cache")).toBe("nba-d");
  });

  it("keeps keywords inside strings and comments unhighlighted", () => {
    const tokens = tokenizePython("s = 'for x in y'  # if else");
    expect(tokens.filter(([c]) => c === "nba-k")).toEqual([]);
  });

  it("treats an unterminated string as running to the end of its line", () => {
    const tokens = tokenizePython("a = 'oops\nb = 2");
    expect(tokens.find(([c]) => c === "nba-s")[1]).toBe("'oops");
    expect(tokens.find(([c]) => c === "nba-n")[1]).toBe("2");
  });

  it("handles empty input", () => {
    expect(tokenizePython("")).toEqual([]);
  });
});

describe("highlightPython", () => {
  it("produces spans whose text is the code", () => {
    const div = document.createElement("div");
    div.append(highlightPython("import math\nx = '<b>'"));
    expect(div.textContent).toBe("import math\nx = '<b>'");
    expect(div.querySelector("b")).toBeNull();
    expect(div.querySelector("span.nba-k").textContent).toBe("import");
  });
});

describe("unterminated triple-quoted strings", () => {
  it("run to the end of the code (as in nbagent/views/highlight.py)", () => {
    const tokens = tokenizePython('s = """a\nb = 2');
    expect(tokens[tokens.length - 1]).toEqual(["nba-s", '"""a\nb = 2']);
  });
});
