import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { useLabTitles } from "../../labs/api/get-labs.ts";
import { useCapacity } from "../api/get-capacity.ts";
import { formatCpu, formatMemory } from "./format-resources.ts";

/** How many more sessions of each lab fit now, and the room on each VM node. */
export function CapacityPanel() {
  const query = useCapacity();
  const labTitles = useLabTitles();
  const report = query.data;

  return (
    <section className="section" aria-labelledby="capacity-title">
      <h2 id="capacity-title" className="section-title">
        Capacity
      </h2>
      {query.isPending ? (
        <Loading label="Reading the nodes…" />
      ) : !report ? (
        <ErrorPanel
          title="Could not read the capacity"
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <p className="muted small">
            From the nodes that can run VMs (Ready, schedulable, with KVM), minus what Lab Console's sessions
            hold, with KubeVirt's launcher-pod formula at cpuAllocationRatio {report.cpuAllocationRatio}.
            Other workloads on those nodes are not counted.
          </p>
          <div className="table-scroll">
            <table className="table" aria-label="Room per lab">
              <thead>
                <tr>
                  <th scope="col">Lab</th>
                  <th scope="col">One VM needs</th>
                  <th scope="col">More that fit now</th>
                </tr>
              </thead>
              <tbody>
                {report.labs.map((lab) => (
                  <tr key={lab.labId} data-fits={lab.fits}>
                    <th scope="row">{labTitles.get(lab.labId) ?? lab.labId}</th>
                    <td>
                      {formatCpu(lab.request.cpuMillis)}, {formatMemory(lab.request.memoryBytes)}
                    </td>
                    <td>{lab.fits >= 999 ? "999 or more" : lab.fits}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="table-scroll">
            <table className="table" aria-label="VM nodes">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">CPU in use</th>
                  <th scope="col">Memory in use</th>
                </tr>
              </thead>
              <tbody>
                {report.nodes.length === 0 && (
                  <tr>
                    <td colSpan={3}>No node can run VMs: see the KVM check above.</td>
                  </tr>
                )}
                {report.nodes.map((node) => (
                  <tr key={node.name}>
                    <th scope="row">{node.name}</th>
                    <td>
                      {formatCpu(node.used.cpuMillis)} of {formatCpu(node.allocatable.cpuMillis)}
                    </td>
                    <td>
                      {formatMemory(node.used.memoryBytes)} of {formatMemory(node.allocatable.memoryBytes)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
