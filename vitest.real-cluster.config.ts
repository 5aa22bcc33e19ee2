// `npm run test:real-cluster`: the BFF's cluster-facing code against a real kube-apiserver and etcd
// (src/**/*.real-cluster.test.ts; docs/real-apiserver.md). The first run builds the server from the
// Go module proxy (minutes); each file starts a control plane of its own in seconds.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.real-cluster.test.ts"],
    testTimeout: 60_000,
    // A cold build of kube-apiserver: about six minutes on two cores.
    hookTimeout: 900_000,
    expect: { poll: { timeout: 10_000 } },
    maxWorkers: 1,
    fileParallelism: false,
  },
});
