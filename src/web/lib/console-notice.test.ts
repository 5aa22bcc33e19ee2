import { describe, expect, it } from "vitest";
import { createI18n } from "./i18n/create-i18n.ts";
import { consoleNoticeText } from "./console-notice.ts";

describe("consoleNoticeText", () => {
  it("says why the console waits in the reader's language", async () => {
    const { t } = await createI18n("zh");
    const notice = { reason: "reopened_too_often", params: { seconds: 9 } };
    expect(consoleNoticeText(notice, "This console was reopened too often…", t, "zh")).toEqual({
      text: "这个控制台重新打开的次数过多。请在 9 秒后重新加载此页面。",
      lang: "zh",
    });
  });

  it("ends a failed session's console with the session's own notice", async () => {
    const { t } = await createI18n("ja");
    const notice = {
      reason: "session_failed",
      params: { sessionNotice: "stopped_because", cause: "PodFailed" },
    };
    expect(consoleNoticeText(notice, "The VM stopped unexpectedly (PodFailed).", t, "ja").text).toBe(
      "VM が予期せず停止しました（PodFailed）。",
    );
    const unknownCause = { reason: "session_failed", params: {} };
    expect(consoleNoticeText(unknownCause, "The VM failed.", t, "ja").text).toBe("VM に障害が発生しました。");
  });

  it("shows the BFF's English words for a reason it does not know, or none", async () => {
    const { t } = await createI18n("ja");
    expect(consoleNoticeText({ reason: "brand_new", params: {} }, "Something new.", t, "ja")).toEqual({
      text: "Something new.",
      lang: "en",
    });
    expect(consoleNoticeText(undefined, "Plain words.", t, "ja").lang).toBe("en");
  });
});
