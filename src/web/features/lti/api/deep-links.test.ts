import { describe, expect, it } from "vitest";
import { ApiError } from "../../../lib/api-error.ts";
import { isDeepLinkGone } from "./deep-links.ts";

describe("a deep-linking request that is gone", () => {
  it("is one the BFF no longer knows or has answered already", () => {
    expect(isDeepLinkGone(new ApiError(404, "not_found", "no such request"))).toBe(true);
    expect(isDeepLinkGone(new ApiError(410, "gone", "answered already"))).toBe(true);
  });

  it("is not one that failed for another reason, which trying again may mend", () => {
    expect(isDeepLinkGone(new ApiError(0, "network", "offline"))).toBe(false);
    expect(isDeepLinkGone(new ApiError(503, "unavailable", "busy"))).toBe(false);
    expect(isDeepLinkGone(new Error("boom"))).toBe(false);
  });
});
