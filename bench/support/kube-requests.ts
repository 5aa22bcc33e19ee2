// What the BFF says it sent to the Kubernetes API, from its /metrics: requests by verb so far.
export async function kubeRequestsByVerb(
  baseUrl: string,
  metricsToken: string,
): Promise<Record<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
  });
  const byVerb: Record<string, number> = {};
  for (const line of (await response.text()).split("\n")) {
    const match = /^lab_console_kube_requests_total\{(.*)\} (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) continue;
    const verb = /verb="([^"]+)"/.exec(match[1]!)?.[1] ?? "?";
    byVerb[verb] = (byVerb[verb] ?? 0) + Number(match[2]);
  }
  return byVerb;
}
