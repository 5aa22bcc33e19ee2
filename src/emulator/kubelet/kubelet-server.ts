// The nodes' kubelet API, as much of it as a real kube-apiserver asks of a node here: pod logs
// (`kubectl logs`, the BFF's boot log). kube-apiserver answers pods/NAME/log by validating the request
// and then calling the kubelet of the pod's node at GET /containerLogs/NAMESPACE/POD/CONTAINER
// (k8s.io/kubernetes pkg/registry/core/pod/rest/log.go, pkg/kubelet/client/kubelet_client.go: the
// node's preferred address and status.daemonEndpoints.kubeletEndpoint.Port, https), and passes a
// refusal on as a 400 with the kubelet's plain-text words (k8s.io/apiserver
// pkg/registry/generic/rest/response_checker.go). One server plays every emulated node.
//
// Authentication is the kubelet's x509 one: the client certificate must chain to the cluster's CA
// and be kube-apiserver's kubelet client (--kubelet-client-certificate, cluster/real-apiserver), in
// group system:masters. The kubelet would then ask for nodes/proxy with a SubjectAccessReview, which
// that group always passes, so none is made. Its own serving certificate is not
// checked by kube-apiserver without --kubelet-certificate-authority (kubeadm's default too).
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Registry } from "../apiserver/registry.ts";
import { createCertificateAuthority, signCertificate } from "../cluster/tls.ts";
import { pods } from "../cluster/resources.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import { Connections } from "../http/connections.ts";
import { listen } from "../http/listen.ts";
import { ApiError } from "../http/status.ts";
import { containerLog, countParameter } from "../subresources/pod-log.ts";

/** The common name of kube-apiserver's kubelet client certificate (kubeadm's, and ours). */
export const kubeletClientName = "kube-apiserver-kubelet-client";

export interface KubeletServerOptions {
  registry: Registry;
  guests: GuestRuntime;
  /** The cluster CA, which signs kube-apiserver's kubelet client certificate. */
  clusterCaPem: string;
  host: string;
  port?: number;
}

export interface KubeletServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

function answer(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  response.end(text);
}

function refusal(request: IncomingMessage): string | undefined {
  const socket = request.socket as TLSSocket;
  if (!socket.authorized) return "Unauthorized";
  const { subject } = socket.getPeerCertificate();
  const commonName = [subject?.CN ?? ""].flat().at(-1);
  const groups = [subject?.O ?? []].flat();
  // The group is what makes the skipped review's answer certain.
  return commonName === kubeletClientName && groups.includes("system:masters") ? undefined : "Forbidden";
}

function serve(options: KubeletServerOptions, request: IncomingMessage, response: ServerResponse): void {
  const denied = refusal(request);
  if (denied) return answer(response, denied === "Unauthorized" ? 401 : 403, denied);
  const url = new URL(request.url ?? "/", "https://kubelet.invalid");
  const [root, namespace, podName, container] = url.pathname.split("/").filter((part) => part !== "");
  if (root !== "containerLogs" || !namespace || !podName || !container)
    return answer(response, 404, "404 page not found");
  if (request.method !== "GET") return answer(response, 405, "Method Not Allowed");
  const pod = options.registry.find(pods, namespace, podName);
  if (!pod) return answer(response, 404, `pod "${podName}" not found`);
  try {
    const body = containerLog(pod, container, options.guests, {
      tailLines: countParameter(url.searchParams.get("tailLines"), "tailLines"),
      limitBytes: countParameter(url.searchParams.get("limitBytes"), "limitBytes"),
    });
    response.writeHead(200, { "Content-Type": "text/plain", "Content-Length": body.length });
    response.end(body);
  } catch (error) {
    if (error instanceof ApiError) return answer(response, error.code, error.message);
    console.error("emulator: kubelet: reading a container log failed:", error);
    answer(response, 500, "Internal Server Error");
  }
}

export async function startKubeletServer(options: KubeletServerOptions): Promise<KubeletServer> {
  const ca = createCertificateAuthority("lab-console-kubelet-ca");
  const serving = signCertificate(ca, {
    commonName: "kubelet",
    usage: { server: ["localhost", options.host] },
  });
  const server: Server = createServer({
    key: serving.keyPem,
    cert: serving.certPem,
    ca: options.clusterCaPem,
    requestCert: true,
    rejectUnauthorized: false,
  });
  const connections = new Connections(server);
  server.on("request", (request: IncomingMessage, response: ServerResponse) =>
    serve(options, request, response),
  );
  const port = await listen(server, options.port ?? 0, options.host);
  let closing: Promise<void> | undefined;
  return {
    host: options.host,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        connections.closeAll();
      });
      return closing;
    },
  };
}
