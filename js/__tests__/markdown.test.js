// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { inline, linkDestination, renderMarkdown } from "../markdown.js";

const md = (text) => renderMarkdown(text);

describe("renderMarkdown", () => {
  it("renders paragraphs, headings, emphasis and inline code", () => {
    const el = md("# Title\n\nSome **bold** and *em* and `x = 1`.");
    expect(el.querySelector("h3").textContent).toBe("Title");
    expect(el.querySelector("strong").textContent).toBe("bold");
    expect(el.querySelector("em").textContent).toBe("em");
    expect(el.querySelector("p code").textContent).toBe("x = 1");
  });

  it("never turns raw HTML into elements", () => {
    const el = md('<script>alert(1)</script>\n<img src=x onerror="alert(2)">\n**<b>x</b>**');
    expect(el.querySelector("script, img, b")).toBeNull();
    expect(el.textContent).toContain("<script>alert(1)</script>");
  });

  it("only links safe URLs", () => {
    const el = md("[ok](https://example.org) [bad](javascript:alert(1)) <http://a.b/c>");
    const links = [...el.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(links).toEqual(["https://example.org", "http://a.b/c"]);
    expect(el.textContent).toContain("bad");
    expect(el.querySelector("a").getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("shows where a link goes next to its text: host, path and the query a link would carry out", () => {
    const el = md("Open [the full report](https://attacker.example/r?k=s3cr3t-t0ken) now.");
    const a = el.querySelector("a");
    expect(a.textContent).toBe("the full report");
    expect(a.nextSibling.textContent).toBe(" (attacker.example/r?k=s3cr3t-t0ken)");
    expect(el.textContent).toBe("Open the full report (attacker.example/r?k=s3cr3t-t0ken) now.");
    // inside emphasis, lists and tables alike
    const nested = md("- **[report](https://x.example/a/b#frag)**\n\n| c |\n|---|\n| [t](https://y.example) |");
    expect(nested.querySelector("li").textContent).toBe("report (x.example/a/b#frag)");
    expect(nested.querySelector("td").textContent).toBe("t (y.example)");
  });

  it("says a link's destination as the browser will open it, and not twice", () => {
    expect(linkDestination("https://Attacker.Example:8443/a b?q=1")).toBe("attacker.example:8443/a%20b?q=1");
    expect(linkDestination("https://user:pw@evil.example/")).toBe("user:pw@evil.example");
    expect(linkDestination("https://bücher.example/x")).toBe("xn--bcher-kva.example/x"); // no look-alike host
    expect(linkDestination("mailto:a@b.example?body=secret")).toBe("a@b.example?body=secret");
    expect(linkDestination("#section")).toBe("");
    const auto = md("<https://a.example/x> [https://a.example/y](https://a.example/y) [in page](#top)");
    expect(auto.querySelectorAll(".nba-link-dest")).toHaveLength(0);
    expect(auto.textContent).toBe("https://a.example/x https://a.example/y in page");
    expect(md("[a.example/z](https://a.example/z)").textContent).toBe("a.example/z");
  });

  it("never links relative URLs, which would act on Jupyter's own origin", () => {
    const el = md("[a](/api/kernels) [b](../tree) [c](//evil.example) [d](https:/api/kernels) [e](http:api)");
    expect(el.querySelector("a")).toBeNull();
    expect(el.textContent).toBe("a b c d e");
  });

  it("highlights python fences and keeps other fences plain", () => {
    const el = md("```py\nfor i in range(3):\n    print(i)\n```\n\n```\nfor plain\n```");
    const [py, plain] = el.querySelectorAll("pre");
    expect(py.querySelector(".nba-k").textContent).toBe("for");
    expect(py.textContent).toBe("for i in range(3):\n    print(i)");
    expect(plain.querySelector("span")).toBeNull();
  });

  it("renders an unclosed fence (model still streaming) as code to the end", () => {
    const el = md("Thought:\n```python\nx = 1");
    expect(el.querySelector("pre").textContent).toBe("x = 1");
  });

  it("renders lists (ordered with start, nested) and quotes", () => {
    const el = md("- a\n- b\n  - c\n\n3. three\n4. four\n\n> quoted *text*");
    expect([...el.querySelectorAll("ul > li")].length).toBe(3);
    expect(el.querySelector("ul ul li").textContent).toBe("c");
    expect(el.querySelector("ol").getAttribute("start")).toBe("3");
    expect(el.querySelector("blockquote em").textContent).toBe("text");
  });

  it("renders tables with alignment", () => {
    const el = md("| a | b |\n|:--|--:|\n| 1 | 2 |\n| 3 | 4 |");
    expect([...el.querySelectorAll("th")].map((t) => t.textContent)).toEqual(["a", "b"]);
    expect(el.querySelectorAll("tbody tr").length).toBe(2);
    expect(el.querySelectorAll("td")[1].style.textAlign).toBe("right");
  });

  it("keeps single newlines as line breaks", () => {
    const el = md("Thought: one\nCode: two");
    expect(el.querySelectorAll("p").length).toBe(1);
    expect(el.querySelectorAll("br").length).toBe(1);
  });

  it("handles empty, null and CRLF input", () => {
    expect(md("").childNodes.length).toBe(0);
    expect(md(null).childNodes.length).toBe(0);
    expect(md("a\r\n\r\nb").querySelectorAll("p").length).toBe(2);
  });
});

describe("inline", () => {
  it("handles escapes and snake_case words without emphasis", () => {
    const div = document.createElement("div");
    div.append(...inline("\\*not em\\* and my_var_name"));
    expect(div.querySelector("em")).toBeNull();
    expect(div.textContent).toBe("*not em* and my_var_name");
  });
});
