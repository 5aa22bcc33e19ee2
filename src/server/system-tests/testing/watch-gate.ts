// A front for the emulator that can hold watch requests back: with it a test decides
// exactly when a client's watch reaches the API server, so it can change the cluster (and compact its
// history) in the gap between the client's list and its watch, as a slow network or a busy API
// server would. Everything else passes straight through.
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { TestEmulator } from "../../../emulator/testing/start.ts";

export interface WatchGate {
  /** The BFF's kubeconfig, pointed at the gate (same CA, same user). */
  kubeConfig: KubeConfig;
  /** From now on, watch requests wait until release(). */
  hold(): void;
  /** Lets every held watch through, and the ones after it. */
  release(): void;
  /** Watch requests waiting now. */
  readonly held: number;
  close(): Promise<void>;
}

/** Serves with the emulator's own certificate, so the BFF's kubeconfig needs only a new address. */
export async function startWatchGate(emulator: TestEmulator): Promise<WatchGate> {
  const base = emulator.bffKubeConfig();
  const cluster = base.getCurrentCluster();
  if (!cluster?.caData) throw new Error("the BFF's kubeconfig names no cluster CA");
  const upstream = new URL(cluster.server);
  const ca = Buffer.from(cluster.caData, "base64");
  const stateDir = path.join(emulator.dir, "state");

  let holding = false;
  let waiting: (() => void)[] = [];
  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const outgoing = httpsRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: upstream.host },
        ca,
        agent: false,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // A quiet watch sends no body for a while; its client must still see the answer begin.
        response.flushHeaders();
        answer.pipe(response);
      },
    );
    outgoing.on("error", () => response.destroy());
    // A client that gives up on a watch ends it here too.
    response.on("close", () => outgoing.destroy());
    request.pipe(outgoing);
  };
  const tls = {
    cert: readFileSync(path.join(stateDir, "serving.crt")),
    key: readFileSync(path.join(stateDir, "serving.key")),
  };
  const server = createServer(tls, (request, response) => {
    const isWatch = /[?&]watch=(true|1)(&|$)/.test(request.url ?? "");
    if (holding && isWatch) waiting.push(() => forward(request, response));
    else forward(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(base.exportConfig());
  const gateCluster = { ...cluster, server: `https://127.0.0.1:${port}` };
  kubeConfig.clusters = kubeConfig.clusters.map((each) => (each.name === cluster.name ? gateCluster : each));
  return {
    kubeConfig,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      const released = waiting;
      waiting = [];
      for (const go of released) go();
    },
    get held() {
      return waiting.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
