import { useTranslation } from "react-i18next";
import { LangText } from "../../../components/lang-text.tsx";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useCapacity } from "../api/get-capacity.ts";
import { formatCpu, formatMemory } from "../lib/format-resources.ts";

/** How many more sessions of each lab fit now, and the room on each VM node. */
export function CapacityPanel({ labTitle }: { labTitle: (labId: string) => LocalText }) {
  const { t } = useTranslation();
  const format = useFormat();
  const query = useCapacity();
  const report = query.data;
  const cpu = (millis: number) => formatCpu(millis, format.locale);
  const memory = (bytes: number) => formatMemory(bytes, format.locale);

  return (
    <section className="section" aria-labelledby="capacity-title">
      <h2 id="capacity-title" className="section-title">
        {t("capacity.title")}
      </h2>
      {query.isPending ? (
        <Loading label={t("capacity.loading")} />
      ) : !report ? (
        <ErrorPanel
          title={t("capacity.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <p className="muted small">{t("capacity.explain", { ratio: report.cpuAllocationRatio })}</p>
          <div className="table-scroll">
            <table className="table" aria-label={t("capacity.labs.label")}>
              <thead>
                <tr>
                  <th scope="col">{t("capacity.labs.lab")}</th>
                  <th scope="col">{t("capacity.labs.needs")}</th>
                  <th scope="col">{t("capacity.labs.fits")}</th>
                </tr>
              </thead>
              <tbody>
                {report.labs.map((lab) => (
                  <tr key={lab.labId} data-fits={lab.fits}>
                    <th scope="row">
                      <LangText text={labTitle(lab.labId)} />
                    </th>
                    <td>
                      {cpu(lab.request.cpuMillis)}, {memory(lab.request.memoryBytes)}
                    </td>
                    <td>{lab.fits >= 999 ? t("capacity.labs.many") : format.number(lab.fits)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="table-scroll">
            <table className="table" aria-label={t("capacity.nodes.label")}>
              <thead>
                <tr>
                  <th scope="col">{t("capacity.nodes.node")}</th>
                  <th scope="col">{t("capacity.nodes.cpu")}</th>
                  <th scope="col">{t("capacity.nodes.memory")}</th>
                </tr>
              </thead>
              <tbody>
                {report.nodes.length === 0 && (
                  <tr>
                    <td colSpan={3}>{t("capacity.nodes.none")}</td>
                  </tr>
                )}
                {report.nodes.map((node) => (
                  <tr key={node.name}>
                    <th scope="row" translate="no">
                      {node.name}
                    </th>
                    <td>
                      {t("capacity.nodes.used", {
                        used: cpu(node.used.cpuMillis),
                        total: cpu(node.allocatable.cpuMillis),
                      })}
                    </td>
                    <td>
                      {t("capacity.nodes.used", {
                        used: memory(node.used.memoryBytes),
                        total: memory(node.allocatable.memoryBytes),
                      })}
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
