// Renders one of the SPA's components in the test's browser as the app shows it: in English, inside a
// router, for a signed-in person (as RequireAuth provides one). Queries the page asks are answered by
// stubbing fetch, never by replacing the SPA's own modules.
import type { ReactNode } from "react";
import { I18nextProvider } from "react-i18next";
import { MemoryRouter } from "react-router";
import { render } from "vitest-browser-react";
import type { Me } from "../../common/api.ts";
import { createI18n } from "../lib/i18n/create-i18n.ts";
import { SignedInUserContext } from "../lib/signed-in-user.ts";
import { aUser } from "./data-generators.ts";

export async function renderComponent(
  ui: ReactNode,
  { me = aUser(), address = "/" }: { me?: Me; address?: string } = {},
) {
  const i18n = await createI18n("en");
  return render(
    <I18nextProvider i18n={i18n}>
      <SignedInUserContext value={me}>
        <MemoryRouter initialEntries={[address]}>{ui}</MemoryRouter>
      </SignedInUserContext>
    </I18nextProvider>,
  );
}
