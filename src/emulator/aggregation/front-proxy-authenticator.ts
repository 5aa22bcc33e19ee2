// Who an aggregated request is from. kube-apiserver, the front proxy, connects with its proxy client
// certificate (--proxy-client-cert-file) and names the user it authenticated in headers; the headers are
// believed only on a connection whose certificate the requestheader CA signed, for an allowed name.
// This follows virt-api (KubeVirt v1.9.0): the TLS layer verifies a presented certificate against the
// requestheader CA (pkg/util/tls/tls.go SetupTLSWithCertManager: ClientCAs, VerifyClientCertIfGiven,
// and the common name against requestheader-allowed-names, any name when the list is empty); a request
// without a certificate is "not authenticated" (pkg/virt-api/rest/authorizer.go isAuthenticated); the
// user is the first value of the first username header present and the groups all values of the first
// group header present, both required; extras come from every header under an extra prefix, the key
// lowercased and %-unescaped (getUserName, getUserGroups, getUserExtras). virt-api never asks for a
// TokenReview: the bearer token was kube-apiserver's to check, and it does not reach this server.
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { RequestHeaderConfig } from "./requestheader-config.ts";

export interface AggregatedUser {
  username: string;
  groups: string[];
  /** SubjectAccessReview's spec.extra: key to values. */
  extra: Record<string, string[]>;
}

export type FrontProxyAuthentication = { user: AggregatedUser } | { refusal: string };

function firstHeader(headers: NodeJS.Dict<string[]>, names: string[]): string[] | undefined {
  for (const name of names) {
    const values = headers[name.toLowerCase()];
    if (values !== undefined) return values;
  }
  return undefined;
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    // virt-api keeps a key it cannot unescape as it came.
    return key;
  }
}

function extras(headers: NodeJS.Dict<string[]>, prefixes: string[]): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const prefix of prefixes.map((name) => name.toLowerCase())) {
    for (const [name, values] of Object.entries(headers)) {
      if (values === undefined || !name.startsWith(prefix)) continue;
      found[unescapeExtraKey(name.slice(prefix.length))] = values;
    }
  }
  return found;
}

/** Why the connection's certificate is not the front proxy's, or undefined when it is. */
function certificateRefusal(socket: TLSSocket, config: RequestHeaderConfig): string | undefined {
  const certificate = socket.getPeerCertificate();
  // Node gives an empty object when the client sent no certificate.
  if (Object.keys(certificate).length === 0) return "request is not authenticated";
  if (!socket.authorized) {
    return `the client certificate is not signed by the requestheader client CA: ${String(socket.authorizationError)}`;
  }
  // A subject with two CNs gives an array; Go's Subject.CommonName is the last one.
  const commonName = [certificate.subject.CN ?? ""].flat().at(-1) ?? "";
  if (config.allowedNames.length > 0 && !config.allowedNames.includes(commonName)) {
    return `the client certificate's common name ${JSON.stringify(commonName)} is not one of requestheader-allowed-names`;
  }
  return undefined;
}

/**
 * The user of a request that came in on the server's TLS socket (the server must request a
 * certificate and trust only the requestheader CA for clients), or why it is refused.
 */
export function authenticateFrontProxy(
  request: IncomingMessage,
  config: RequestHeaderConfig,
): FrontProxyAuthentication {
  const refusal = certificateRefusal(request.socket as TLSSocket, config);
  if (refusal !== undefined) return { refusal };
  const headers = request.headersDistinct;
  const username = firstHeader(headers, config.usernameHeaders)?.[0];
  if (username === undefined) return { refusal: "a valid user header is required for authorization" };
  const groups = firstHeader(headers, config.groupHeaders);
  if (groups === undefined) return { refusal: "a valid group header is required for authorization" };
  return { user: { username, groups, extra: extras(headers, config.extraHeaderPrefixes) } };
}
