import { Suspense } from "react";
import { Outlet } from "react-router";
import { LanguageSwitcher } from "../components/language-switcher.tsx";
import { PageLoading } from "./page-loading.tsx";

/**
 * Pages for someone not signed in, often inside another site's frame (an LMS's "add content"): no
 * header, for its links and user menu would lead to pages that want a sign-in. Only the language
 * switcher, above the page.
 */
export function BareLayout() {
  return (
    <div className="app-content">
      <div className="bare-language">
        <LanguageSwitcher />
      </div>
      <Suspense fallback={<PageLoading />}>
        <Outlet />
      </Suspense>
    </div>
  );
}
