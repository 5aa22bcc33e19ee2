import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError, describeError } from "./api-error.ts";
import { createI18n } from "./i18n/create-i18n.ts";

const conflict = new ApiError(409, "conflict", 'You already have a session for "Linux basics".');
const alreadyRunning = new ApiError(409, "conflict", 'You already have a session for "Linux basics".', {
  reason: "session_already_running",
  params: { lab: "Linux basics" },
});

describe("describeError", () => {
  it("shows the BFF's own message in English when it names no reason: it is the most specific there is", async () => {
    const { t } = await createI18n("en");
    expect(describeError(conflict, t, "en")).toEqual({
      text: 'You already have a session for "Linux basics".',
      lang: "en",
    });
  });

  it("translates the code in other languages, and shows them no English sentence of the BFF's", async () => {
    const { t } = await createI18n("ja");
    expect(describeError(conflict, t, "ja")).toEqual({
      text: "現在の状態では、この操作は行えません。",
      lang: "ja",
    });
  });

  it("says a reason in the reader's language, with its parameters", async () => {
    for (const [language, expected] of [
      ["en", 'You already have a session for "Linux basics". End it before starting another.'],
      ["ja", "「Linux basics」のセッションはすでにあります。新しく始める前に終了してください。"],
      ["zh", "你已经有一个“Linux basics”的会话。请先结束它再开始新的会话。"],
    ] as const) {
      const { t } = await createI18n(language);
      expect(describeError(alreadyRunning, t, language)).toEqual({ text: expected, lang: language });
    }
  });

  it("shows the message of a reason it does not know in English, and the code's meaning otherwise", async () => {
    const newer = new ApiError(409, "conflict", "Something newer.", { reason: "brand_new_reason" });
    expect(describeError(newer, (await createI18n("en")).t, "en")).toEqual({
      text: "Something newer.",
      lang: "en",
    });
    expect(describeError(newer, (await createI18n("zh")).t, "zh").lang).toBe("zh");
  });

  describe("when the next session ends", () => {
    beforeEach(() => vi.useFakeTimers({ now: Date.parse("2030-01-01T10:00:00Z") }));
    afterEach(() => vi.useRealTimers());

    it("says it as a duration in the reader's language", async () => {
      const full = new ApiError(429, "quota", '"Linux basics" is full…', {
        reason: "quota_per_lab",
        params: { lab: "Linux basics", limit: 2, endsAt: "2030-01-01T10:12:00Z" },
      });
      expect(describeError(full, (await createI18n("en")).t, "en").text).toBe(
        '"Linux basics" is full: it allows 2 active sessions at once. Try again when one ends. ' +
          "The next one ends in 12 min.",
      );
      expect(describeError(full, (await createI18n("ja")).t, "ja").text).toMatch(
        /次のセッションはあと 12\s?分/,
      );
    });
  });

  it("translates the page's own codes fully, with their values", async () => {
    const { t } = await createI18n("zh");
    expect(describeError(new ApiError(418, "http", "The request failed (HTTP 418)."), t, "zh")).toEqual({
      text: "请求失败（HTTP 418）。",
      lang: "zh",
    });
  });

  it("falls back to the English message for a code it does not know, marked as English", async () => {
    const { t } = await createI18n("zh");
    const error = new ApiError(409, "brand_new_code", "Something new happened.");
    expect(describeError(error, t, "zh")).toEqual({ text: "Something new happened.", lang: "en" });
  });

  it("lets a page say a code in its own words, and covers errors that are not the API's", async () => {
    const { t } = await createI18n("ja");
    const wrongPassword = new ApiError(401, "unauthenticated", "Wrong user name or password.", {
      reason: "wrong_password",
    });
    expect(describeError(wrongPassword, t, "ja", { unauthenticated: "違います" }).text).toBe("違います");
    expect(describeError(new TypeError("x is undefined"), t, "ja").text).toMatch(
      /^このページで問題が発生しました/,
    );
  });
});
