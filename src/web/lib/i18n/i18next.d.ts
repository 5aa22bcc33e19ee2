// Typed keys: t("a.missing.key") fails the typecheck instead of showing the key on the page.
import "i18next";
import type en from "../../locales/en.json";

declare module "i18next" {
  interface CustomTypeOptions {
    defaultNS: "translation";
    resources: { translation: typeof en };
  }
}
