import { describe, expect, it } from "vitest";
import { ApiError, describeError } from "./api-error.ts";
import { createI18n } from "./i18n/create-i18n.ts";

const conflict = new ApiError(409, "conflict", 'You already have a session for "Linux basics".');

describe("describeError", () => {
  it("shows the BFF's own message in English: it is the most specific there is", async () => {
    const { t } = await createI18n("en");
    expect(describeError(conflict, t, "en")).toEqual({
      text: { text: 'You already have a session for "Linux basics".', lang: "en" },
      detail: null,
    });
  });

  it("translates the code in other languages and keeps the English message as the detail", async () => {
    const { t } = await createI18n("ja");
    expect(describeError(conflict, t, "ja")).toEqual({
      text: { text: "現在の状態では、この操作は行えません。", lang: "ja" },
      detail: 'You already have a session for "Linux basics".',
    });
  });

  it("translates the page's own codes fully, with their values", async () => {
    const { t } = await createI18n("zh");
    expect(describeError(new ApiError(418, "http", "The request failed (HTTP 418)."), t, "zh")).toEqual({
      text: { text: "请求失败（HTTP 418）。", lang: "zh" },
      detail: null,
    });
  });

  it("falls back to the English message for a code it does not know, marked as English", async () => {
    const { t } = await createI18n("zh");
    const error = new ApiError(409, "brand_new_code", "Something new happened.");
    expect(describeError(error, t, "zh")).toEqual({
      text: { text: "Something new happened.", lang: "en" },
      detail: null,
    });
  });

  it("lets a page say a code in its own words, and covers errors that are not the API's", async () => {
    const { t } = await createI18n("ja");
    const wrongPassword = new ApiError(401, "unauthenticated", "Wrong user name or password.");
    expect(describeError(wrongPassword, t, "ja", { unauthenticated: "違います" }).text.text).toBe("違います");
    expect(describeError(new TypeError("x is undefined"), t, "ja").text.text).toMatch(
      /^このページで問題が発生しました/,
    );
  });
});
