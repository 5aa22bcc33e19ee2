// Just enough of a browser for a sign-in through an OpenID provider: a cookie jar shared by every
// host (cookies ignore ports, as in a browser), redirects followed one hop at a time so that tests
// can see where they went, and HTML forms read back for the next step.
import { csrfHeader } from "../../../../common/api.ts";

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export interface Visit {
  response: Response;
  /** The URL of the last request. */
  url: string;
  /** Every URL requested, the first one included. */
  trail: string[];
  body: string;
}

export class CookieJarClient {
  private cookies: StoredCookie[] = [];

  cookie(name: string): string | undefined {
    return this.cookies.find((cookie) => cookie.name === name)?.value;
  }

  setCookie(name: string, value: string, path = "/"): void {
    this.cookies = this.cookies.filter((cookie) => !(cookie.name === name && cookie.path === path));
    this.cookies.push({ name, value, path });
  }

  /** One request, redirects not followed. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookieHeader = this.cookies
      .filter((cookie) => target.pathname.startsWith(cookie.path))
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ");
    if (cookieHeader) headers.set("cookie", cookieHeader);
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) this.store(line);
    return response;
  }

  /** Requests `url` and follows redirects (as GETs, like a browser after a form POST). */
  async visit(url: string, init: RequestInit = {}): Promise<Visit> {
    const trail = [url];
    let response = await this.request(url, init);
    while (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get("location") ?? "", trail.at(-1)).href;
      if (trail.length > 20) throw new Error(`too many redirects: ${trail.join(" -> ")}`);
      trail.push(next);
      await response.body?.cancel();
      response = await this.request(next);
    }
    return { response, url: trail.at(-1) ?? url, trail, body: await response.text() };
  }

  /** Submits the page's form with the given fields added to its own (hidden) ones. */
  submitForm(page: Visit, fields: Record<string, string>, formId?: string): Promise<Visit> {
    const form = readForm(page.body, formId);
    const body = new URLSearchParams({ ...form.fields, ...fields });
    return this.visit(new URL(form.action, page.url).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
  }

  /** A JSON API mutation as the SPA sends it. */
  postApi(url: string, body?: unknown): Promise<Response> {
    return this.request(url, {
      method: "POST",
      headers: {
        [csrfHeader.name]: csrfHeader.value,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  private store(line: string): void {
    const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
    const separator = pair.indexOf("=");
    const name = pair.slice(0, separator);
    const value = pair.slice(separator + 1);
    const attribute = (key: string) =>
      attributes.find((each) => each.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
    const path = attribute("path") ?? "/";
    const expires = attribute("expires");
    const maxAge = attribute("max-age");
    const gone =
      value === "" || maxAge === "0" || (expires !== undefined && Date.parse(expires) <= Date.now());
    this.cookies = this.cookies.filter((cookie) => !(cookie.name === name && cookie.path === path));
    if (!gone) this.cookies.push({ name, value, path });
  }
}

function readForm(html: string, formId?: string): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)];
  const form = forms.find(([, attributes]) => formId === undefined || attributes?.includes(`id="${formId}"`));
  if (!form) throw new Error(`no form${formId ? ` #${formId}` : ""} in the page:\n${html}`);
  const [, attributes = "", inner = ""] = form;
  const fields: Record<string, string> = {};
  for (const [, input = ""] of inner.matchAll(/<input\b([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input)?.[1];
    const value = /value="([^"]*)"/.exec(input)?.[1];
    if (name && /type="hidden"/.test(input)) fields[name] = decodeEntities(value ?? "");
  }
  return { action: decodeEntities(/action="([^"]*)"/.exec(attributes)?.[1] ?? ""), fields };
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, "&");
}
