import { QueryClientProvider } from "@tanstack/react-query";
import type { i18n as I18n } from "i18next";
import { useState } from "react";
import { I18nextProvider } from "react-i18next";
import { BrowserRouter } from "react-router";
import { useDocumentLanguage } from "../lib/i18n/document-language.ts";
import { AppRoutes } from "./app-routes.tsx";
import { createQueryClient } from "./query-client.ts";
import { RouteErrorBoundary } from "./route-error-boundary.tsx";

/**
 * The app, given an i18n instance whose language is loaded: no page shows before its words are in.
 * The router is the declarative one: no page loads its data through the router (TanStack Query
 * does), and a data router would add about 16 KB gzip to everyone's first download.
 */
export function App({ i18n }: { i18n: I18n }) {
  const [queryClient] = useState(createQueryClient);
  useDocumentLanguage(i18n);
  return (
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <RouteErrorBoundary>
            <AppRoutes />
          </RouteErrorBoundary>
        </BrowserRouter>
      </QueryClientProvider>
    </I18nextProvider>
  );
}
