import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app/providers.tsx";
import { createI18n } from "./lib/i18n/create-i18n.ts";
import { initialLanguage } from "./lib/i18n/language-preference.ts";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

// Rendering waits for a Japanese or Chinese catalog rather than flash the page in English first.
const i18n = await createI18n(initialLanguage());

createRoot(root).render(
  <StrictMode>
    <App i18n={i18n} />
  </StrictMode>,
);
