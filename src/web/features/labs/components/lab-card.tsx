import type { ReactNode } from "react";
import type { LabSummary } from "../../../../common/api.ts";
import { LabDescription } from "./lab-description.tsx";

/** One lab in the catalog; `action` is what the person can do with it (launch, or go to their session). */
export function LabCard({ lab, action }: { lab: LabSummary; action: ReactNode }) {
  const titleId = `lab-${lab.id}-title`;
  const points = lab.checks.reduce((sum, check) => sum + check.points, 0);
  return (
    <article className="card lab-card" aria-labelledby={titleId}>
      <h3 id={titleId} className="card-title">
        {lab.title}
      </h3>
      <LabDescription source={lab.description} />
      <ul className="lab-facts" aria-label="Lab details">
        <li>{lab.session.minutes} min</li>
        <li>
          {lab.vm.cpu} CPU · {lab.vm.memory}
        </li>
        {lab.checks.length > 0 && (
          <li>
            {lab.checks.length} {lab.checks.length === 1 ? "check" : "checks"} · {points} pts
          </li>
        )}
      </ul>
      <div className="card-actions">{action}</div>
    </article>
  );
}
