import "./shared-console.css";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { KeyboardState } from "../lib/connection-status.ts";
import type { KeyboardNews } from "../lib/keyboard-news.ts";

/** Staff taking or giving back the keyboard, said aloud (to the student above all); empty otherwise. */
export function KeyboardNewsLine({ news }: { news: KeyboardNews | null }) {
  const { t } = useTranslation();
  return (
    <p className="console-keyboard-news" role="status" data-testid="console-keyboard-news">
      {news ? newsText(news, t) : ""}
    </p>
  );
}

/** Who types into the VM, and this viewer's take, take back or give back. */
export function KeyboardControls({
  keyboard,
  observe,
  onTake,
  onRelease,
}: {
  keyboard: KeyboardState;
  /** Staff (or the owner's read-only window); otherwise the owner. */
  observe: boolean;
  onTake: () => void;
  onRelease: () => void;
}) {
  const { t } = useTranslation();
  return (
    <p className="console-keyboard">
      <span>{keyboardText(keyboard, t)}</span>
      {keyboard.canTake && (
        <button type="button" className="button button-quiet" onClick={onTake}>
          {observe ? t("console.keyboard.take") : t("console.keyboard.takeBack")}
        </button>
      )}
      {keyboard.canRelease && (
        <button type="button" className="button button-quiet" onClick={onRelease}>
          {t("console.keyboard.giveBack")}
        </button>
      )}
    </p>
  );
}

function newsText(news: KeyboardNews, t: TFunction): string {
  const who = { name: news.username, role: t(`roles.${news.role}`) };
  return news.kind === "taken"
    ? t("console.keyboard.newsTaken", who)
    : t("console.keyboard.newsReturned", who);
}

function keyboardText(keyboard: KeyboardState, t: TFunction): string {
  if (keyboard.canType) return t("console.keyboard.yours");
  if (!keyboard.holderIsOwner) return t("console.keyboard.holder", { holder: keyboard.holder });
  return keyboard.canTake ? t("console.keyboard.studentHas") : t("console.keyboard.readOnly");
}
