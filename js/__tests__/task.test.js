// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from "vitest";
import { createImageUrls } from "../images.js";
import { renderTask } from "../task.js";
import { PNG, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());

describe("renderTask", () => {
  it("renders the task as markdown with its images", () => {
    const urls = createImageUrls();
    const el = renderTask({ kind: "task", task: "Describe **this** image", images: [0] }, { get: () => PNG, url: urls.url });
    expect(el.querySelector(".nba-label").textContent).toBe("Task");
    expect(el.querySelector("strong").textContent).toBe("this");
    expect(el.querySelectorAll("img")).toHaveLength(1);
  });
});
