// The front proxy's settings, as kube-apiserver publishes them for aggregated servers in ConfigMap
// kube-system/extension-apiserver-authentication: the CA that signs its client certificate, the
// certificate names allowed, and the headers carrying the user. virt-api reads the same ConfigMap at
// start (KubeVirt v1.9.0 pkg/virt-api/api.go readRequestHeader; pkg/util/tls/ca-manager.go for the CA
// and the allowed names) and, like it, this refuses to start without the client CA.
import { statusMessage, type KubeRequest } from "../remote/remote-api.ts";

export interface RequestHeaderConfig {
  /** PEM, one or more certificates. */
  clientCaPem: string;
  /** The client certificate's allowed common names; empty means any name the CA signed. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

export const authenticationConfigMapPath =
  "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

/** A JSON list of strings as the ConfigMap holds them; a missing or empty value is an empty list. */
function stringList(data: Record<string, string>, key: string): string[] {
  const value = data[key];
  if (value === undefined || value === "") return [];
  const parsed = JSON.parse(value) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === "string")) {
    throw new Error(`extension-apiserver-authentication's ${key} is not a JSON list of strings: ${value}`);
  }
  return parsed;
}

export async function readRequestHeaderConfig(request: KubeRequest): Promise<RequestHeaderConfig> {
  const answer = await request("GET", authenticationConfigMapPath);
  if (answer.status !== 200) {
    throw new Error(
      `Reading kube-system/extension-apiserver-authentication failed (HTTP ${answer.status}): ${statusMessage(answer)}`,
    );
  }
  const data = (answer.body as { data?: Record<string, string> }).data ?? {};
  const clientCaPem = data["requestheader-client-ca-file"];
  if (clientCaPem === undefined || clientCaPem.trim() === "") {
    throw new Error(
      "kube-system/extension-apiserver-authentication has no requestheader-client-ca-file: start kube-apiserver with --requestheader-client-ca-file (the aggregation layer) to serve aggregated APIs",
    );
  }
  return {
    clientCaPem,
    allowedNames: stringList(data, "requestheader-allowed-names"),
    usernameHeaders: stringList(data, "requestheader-username-headers"),
    groupHeaders: stringList(data, "requestheader-group-headers"),
    extraHeaderPrefixes: stringList(data, "requestheader-extra-headers-prefix"),
  };
}
