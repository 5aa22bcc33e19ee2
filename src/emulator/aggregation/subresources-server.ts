// subresources.kubevirt.io served as virt-api serves it, for a real kube-apiserver to aggregate: HTTPS
// with a serving certificate for the name kube-aggregator verifies (virt-api.kubevirt.svc), signed by
// a CA made at each start and handed to the APIService as its caBundle (api-service-registration.ts).
// The server asks every client for a certificate but lets the front door decide (Node's requestCert
// without rejectUnauthorized, as virt-api's VerifyClientCertIfGiven): kube-aggregator's availability
// check and its proxy present the front-proxy certificate, which is verified against the requestheader
// CA read from kube-system/extension-apiserver-authentication at start.
import { createServer } from "node:https";
import type { Socket } from "node:net";
import type { KubeConfig } from "@kubernetes/client-node";
import { createCertificateAuthority, signCertificate } from "../cluster/tls.ts";
import { Connections } from "../http/connections.ts";
import { listen } from "../http/listen.ts";
import type { KubevirtSubresources } from "../subresources/routes.ts";
import { createAggregatedFrontDoor } from "./aggregated-front-door.ts";
import { RemoteApi } from "../remote/remote-api.ts";
import { readRequestHeaderConfig } from "./requestheader-config.ts";
import { virtApiServingNames } from "./virt-api-service.ts";

export interface SubresourcesServerOptions {
  /**
   * The real API server, as an account that may read kube-system/extension-apiserver-authentication
   * and create SubjectAccessReviews (virt-api's kubevirt-apiserver account may).
   */
  kubeConfig: KubeConfig;
  /** Default 127.0.0.1; kube-apiserver must reach it there. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The emulator's handlers (createKubevirtSubresources over its Registry). */
  subresources: KubevirtSubresources;
}

export interface SubresourcesServer {
  host: string;
  port: number;
  /** The CA of the serving certificate: the APIServices' caBundle. */
  caBundlePem: string;
  /** Stops listening and drops every connection, websockets included. */
  close(): Promise<void>;
}

export async function startSubresourcesServer(
  options: SubresourcesServerOptions,
): Promise<SubresourcesServer> {
  const host = options.host ?? "127.0.0.1";
  const api = new RemoteApi(options.kubeConfig);
  const kubeRequest = api.request;
  const requestHeader = await readRequestHeaderConfig(kubeRequest).catch((error: unknown) => {
    api.close();
    throw error;
  });
  const ca = createCertificateAuthority("lab-console-virt-api-ca");
  const serving = signCertificate(ca, {
    commonName: virtApiServingNames[0] ?? "virt-api",
    usage: { server: virtApiServingNames },
  });
  const server = createServer({
    key: serving.keyPem,
    cert: serving.certPem,
    ca: requestHeader.clientCaPem,
    requestCert: true,
    rejectUnauthorized: false,
  });
  const connections = new Connections(server);
  const frontDoor = createAggregatedFrontDoor({
    requestHeader,
    kubeRequest,
    subresources: options.subresources,
  });
  server.on("request", frontDoor.onRequest);
  server.on("upgrade", frontDoor.onUpgrade);
  server.on("clientError", (_error, socket: Socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  const port = await listen(server, options.port ?? 0, host);
  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    caBundlePem: ca.certPem,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        connections.closeAll();
        api.close();
      });
      return closing;
    },
  };
}
