import { useEffect, useRef } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { LtiCourse, LtiRosterMember } from "../../../../common/lti-api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useLtiRoster } from "../api/get-courses.ts";
import { CourseTitle } from "./courses-section.tsx";

/** One course's members as the LMS last gave them (NRPS), with the name each signs in to Lab Console as. */
export function RosterPanel({ course, onClose }: { course: LtiCourse; onClose: () => void }) {
  const { t } = useTranslation();
  const query = useLtiRoster(course.id);
  const headingRef = useRef<HTMLHeadingElement>(null);
  // The roster opens below the table: take the reader there, as a new view would.
  useEffect(() => headingRef.current?.focus(), [course.id]);
  return (
    <section className="panel lti-roster" aria-labelledby="lti-roster-title">
      <div className="lti-roster-header">
        <h3 id="lti-roster-title" className="panel-title" tabIndex={-1} ref={headingRef}>
          <Trans i18nKey="lti.roster.title" components={{ course: <CourseTitle course={course} /> }} />
        </h3>
        <button type="button" className="button button-quiet" onClick={onClose}>
          {t("lti.roster.close")}
        </button>
      </div>
      {query.isPending ? (
        <Loading label={t("lti.roster.loading")} />
      ) : !query.data ? (
        <ErrorPanel
          title={t("lti.roster.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {query.data.members.length === 0 ? (
            <p className="empty">
              {course.hasRoster ? t("lti.roster.noneYet") : t("lti.roster.noneOffered")}
            </p>
          ) : (
            <RosterTable members={query.data.members} />
          )}
        </>
      )}
    </section>
  );
}

function RosterTable({ members }: { members: LtiRosterMember[] }) {
  const { t } = useTranslation();
  return (
    <div className="table-scroll">
      <table className="table" aria-label={t("lti.roster.table")}>
        <thead>
          <tr>
            <th scope="col">{t("lti.roster.name")}</th>
            <th scope="col">{t("lti.roster.email")}</th>
            <th scope="col">{t("lti.roster.username")}</th>
            <th scope="col">{t("lti.roster.role")}</th>
            <th scope="col">{t("lti.roster.sections")}</th>
            <th scope="col">{t("lti.roster.status")}</th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.userId} data-member-status={member.status}>
              <th scope="row" translate="no">
                {member.name ?? member.userId}
              </th>
              <td translate="no">{member.email ?? "—"}</td>
              <td translate="no">{member.username ?? "—"}</td>
              <td>{member.role ? t(`roles.${member.role}`) : t("lti.roster.noRole")}</td>
              <td translate="no">{member.sections.join(", ") || "—"}</td>
              <td>{t(`lti.roster.statuses.${member.status}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
