// @vitest-environment jsdom
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createImageUrls, renderImages, sniffType } from "../images.js";
import { PNG, stubObjectUrls } from "./helpers.js";

let revoked;
beforeEach(() => {
  ({ revoked } = stubObjectUrls());
});

describe("createImageUrls", () => {
  it("makes one URL per buffer and revokes them all", () => {
    const urls = createImageUrls();
    const a = urls.url(PNG);
    expect(urls.url(PNG)).toBe(a);
    expect(URL.createObjectURL).toHaveBeenCalledTimes(1);
    urls.revokeAll();
    expect(revoked).toEqual([a]);
    expect(urls.size()).toBe(0);
  });
});

describe("sniffType", () => {
  it("recognises PNG and JPEG", () => {
    expect(sniffType(PNG)).toBe("image/png");
    expect(sniffType(new DataView(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]).buffer))).toBe("image/jpeg");
    expect(sniffType(new Uint8Array([0x47, 0x49, 0x46, 0x38]))).toBe("image/gif");
  });
});

describe("renderImages", () => {
  it("renders an <img> per index from the widget's buffers", () => {
    const urls = createImageUrls();
    const el = renderImages([0, 1], { get: (i) => [PNG, PNG][i], url: urls.url });
    const imgs = el.querySelectorAll("img.nba-img");
    expect(imgs).toHaveLength(2);
    expect(imgs[0].getAttribute("src")).toMatch(/^blob:/);
    expect(imgs[1].dataset.image).toBe("1");
  });

  it("shows a placeholder and reports a missing image", () => {
    const missing = vi.fn();
    const el = renderImages([3], { get: () => undefined, url: () => "", missing });
    expect(el.querySelector(".nba-img-missing").textContent).toContain("image 3");
    expect(missing).toHaveBeenCalledWith(3);
  });

  it("returns null without images", () => {
    expect(renderImages([], { get: () => null, url: () => "" })).toBeNull();
    expect(renderImages(undefined, { get: () => null, url: () => "" })).toBeNull();
  });
});
