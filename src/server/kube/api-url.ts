// Where an API path is on the kubeconfig's server. The server URL may carry a path of its own, as
// Rancher's cluster proxy (https://rancher.example/k8s/clusters/c-1) and API gateways hand out, and
// every request must keep it: `new URL("/apis/...", server)` would not, since an absolute path
// replaces the base's. client-node's generated clients and client-go append the path the same way.

/** `path` starts with "/" and may carry a query string. */
export function apiUrl(server: string, path: string): URL {
  return new URL(`${server.replace(/\/+$/, "")}${path}`);
}
