// A real OpenID Connect provider (oidc-provider) for tests, on 127.0.0.1 over plain HTTP: test
// accounts with passwords and groups, a small sign-in page of its own, consent taken as given (the
// console is a first-party client), and RP-initiated sign-out.
import { generateKeyPairSync } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";

export interface TestAccount {
  username: string;
  password: string;
  groups: string[];
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
}

export interface TestProvider {
  /** The issuer URL, e.g. http://127.0.0.1:40123 */
  issuer: string;
  close(): Promise<void>;
}

export async function startTestProvider(options: {
  accounts: TestAccount[];
  client: TestClient;
  /** Default 0: any free port. */
  port?: number;
}): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, providerConfiguration(options.accounts, options.client));
  const handleProvider = provider.callback();
  const handleInteraction = interactionHandler(provider, options.accounts);
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith("/interaction/")) {
      handleInteraction(request, response).catch((error: unknown) => {
        response.writeHead(500, { "content-type": "text/plain" }).end(String(error));
      });
    } else {
      void handleProvider(request, response);
    }
  });
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function providerConfiguration(accounts: TestAccount[], client: TestClient): Configuration {
  const signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  return {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [client.redirectUri],
        post_logout_redirect_uris: [client.postLogoutRedirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...signingKey, use: "sig", alg: "RS256" }] },
    cookies: { keys: ["test-provider-cookie-key"] },
    pkce: { required: () => true },
    // Set rather than defaulted: the defaults print a notice each.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      groups: ["groups"],
    },
    scopes: ["openid", "profile", "groups"],
    async findAccount(_context, sub) {
      const account = accounts.find((each) => each.username === sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          name: `${account.username} (test)`,
          preferred_username: account.username,
          groups: account.groups,
        }),
      };
    },
    // Consent is taken as given: the console is the organisation's own application.
    async loadExistingGrant(context: KoaContextWithOIDC) {
      const { oidc } = context;
      const existing = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(oidc.client?.clientId ?? "");
      if (existing) return oidc.provider.Grant.find(existing);
      const grant = new oidc.provider.Grant({
        clientId: oidc.client?.clientId,
        accountId: oidc.session?.accountId,
      });
      grant.addOIDCScope(String(oidc.params?.scope ?? "openid"));
      await grant.save();
      return grant;
    },
    interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (context, form) => {
          context.body = page(
            "Sign out",
            `${form}<p>Sign out of the test provider?</p>
             <button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>`,
          );
        },
        postLogoutSuccessSource: async (context) => {
          context.body = page("Signed out", "<p>You are signed out of the test provider.</p>");
        },
      },
    },
    renderError: async (context, out) => {
      context.type = "html";
      context.body = page(
        "Error",
        `<p role="alert">${escape(String(out.error_description ?? out.error))}</p>`,
      );
    },
  };
}

/** The provider's own sign-in page: GET shows the form, POST checks the password. */
function interactionHandler(provider: Provider, accounts: TestAccount[]) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://provider.invalid");
    const details = await provider.interactionDetails(request, response);
    const send = (html: string) =>
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);

    if (url.pathname.endsWith("/abort")) {
      await provider.interactionFinished(
        request,
        response,
        { error: "access_denied", error_description: "The user cancelled the sign-in." },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (details.prompt.name !== "login") {
      // Consent never asks (see loadExistingGrant); any other prompt is a test setup mistake.
      send(page("Unexpected", `<p role="alert">Unexpected prompt ${escape(details.prompt.name)}.</p>`));
      return;
    }
    if (request.method === "POST") {
      const form = new URLSearchParams(await readBody(request));
      const account = accounts.find((each) => each.username === form.get("username"));
      if (account && account.password === form.get("password")) {
        await provider.interactionFinished(
          request,
          response,
          { login: { accountId: account.username } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      send(signInPage(details.uid, "Wrong username or password."));
      return;
    }
    send(signInPage(details.uid));
  };
}

function signInPage(uid: string, error?: string): string {
  return page(
    "Test provider sign-in",
    `<h1>Test provider</h1>
     ${error ? `<p role="alert">${escape(error)}</p>` : ""}
     <form method="post" action="/interaction/${escape(uid)}">
       <label>Username <input name="username" autocomplete="username" required></label>
       <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
       <button type="submit">Sign in</button>
     </form>
     <a href="/interaction/${escape(uid)}/abort">Cancel</a>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
