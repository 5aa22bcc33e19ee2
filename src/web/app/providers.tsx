import { QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";
import { I18nextProvider } from "react-i18next";
import { RouterProvider } from "react-router/dom";
import { createI18n } from "../lib/i18n/create-i18n.ts";
import { useDocumentLanguage } from "../lib/i18n/document-language.ts";
import { initialLanguage } from "../lib/i18n/language-preference.ts";
import { createQueryClient } from "./query-client.ts";
import { createRouter } from "./router.tsx";

export function App() {
  const [i18n] = useState(() => createI18n(initialLanguage()));
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(createRouter);
  useDocumentLanguage(i18n);
  return (
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </I18nextProvider>
  );
}
