import { useTranslation } from "react-i18next";
import type { ConsoleTerminalState } from "../lib/console-terminal.ts";

/**
 * Over a console with nothing on it: why, and what to press. A serial console shows only what the
 * VM prints while it is attached, so a waiting shell looks like a dead one; the BFF says why the
 * screen is empty as a code, said here in the page's language. The paragraph stays in the page,
 * empty when there is nothing to say, so that screen readers announce the hint when it comes.
 */
export function BlankScreenHint({ state }: { state: ConsoleTerminalState }) {
  const { t } = useTranslation();
  const { blankScreen, status, keyboard } = state;
  // Pressing a key helps only while the VM's console is connected.
  const shown = blankScreen !== null && status.kind === "connected";
  return (
    <p className="console-blank-hint" data-testid="console-blank-hint" aria-live="polite">
      {shown && (
        <>
          {t(`console.blankScreen.${blankScreen}`)}{" "}
          {keyboard?.canType
            ? t("console.blankScreen.pressEnter")
            : t("console.blankScreen.holderPressesEnter")}
        </>
      )}
    </p>
  );
}
