import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import type { LtiCourse } from "../../../../common/lti-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useLtiCourses, useSyncLtiRoster } from "../api/get-courses.ts";
import { RosterPanel } from "./roster-panel.tsx";

/** The LMS courses people launched from, with their rosters as the LMS last gave them. */
export function CoursesSection() {
  const { t } = useTranslation();
  const query = useLtiCourses();
  const courses = query.data?.items;
  const [shownRoster, setShownRoster] = useState<string | null>(null);
  const shownCourse = courses?.find((course) => course.id === shownRoster);
  return (
    <section className="section" aria-labelledby="lti-courses-title">
      <h2 id="lti-courses-title" className="section-title">
        {t("lti.courses.title")}
      </h2>
      {query.isPending ? (
        <Loading label={t("lti.courses.loading")} />
      ) : !courses ? (
        <ErrorPanel
          title={t("lti.courses.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          {courses.length === 0 ? (
            <p className="empty">{t("lti.courses.none")}</p>
          ) : (
            <CourseTable courses={courses} shownRoster={shownRoster} onShowRoster={setShownRoster} />
          )}
          {shownCourse && <RosterPanel course={shownCourse} onClose={() => setShownRoster(null)} />}
        </>
      )}
    </section>
  );
}

function CourseTable({
  courses,
  shownRoster,
  onShowRoster,
}: {
  courses: LtiCourse[];
  shownRoster: string | null;
  onShowRoster: (courseId: string) => void;
}) {
  const { t } = useTranslation();
  const format = useFormat();
  const sync = useSyncLtiRoster();
  const noRosterId = useId();
  return (
    <>
      <div className="table-scroll">
        <table className="table" aria-label={t("lti.courses.title")}>
          <thead>
            <tr>
              <th scope="col">{t("lti.courses.course")}</th>
              <th scope="col">{t("lti.courses.lms")}</th>
              <th scope="col">{t("lti.courses.members")}</th>
              <th scope="col">{t("lti.courses.syncedAt")}</th>
              <th scope="col">{t("lti.courses.actions")}</th>
            </tr>
          </thead>
          <tbody>
            {courses.map((course) => {
              const syncing = sync.isPending && sync.variables === course.id;
              return (
                <tr key={course.id} data-course={course.id}>
                  <th scope="row">
                    <CourseTitle course={course} />
                  </th>
                  <td translate="no">{course.platformName}</td>
                  <td>{format.number(course.members)}</td>
                  <td>
                    {course.rosterSyncedAt ? (
                      <time dateTime={course.rosterSyncedAt}>{format.dateTime(course.rosterSyncedAt)}</time>
                    ) : (
                      t("lti.courses.neverSynced")
                    )}
                  </td>
                  <td className="lti-wrap">
                    <div className="lti-actions">
                      <button
                        type="button"
                        className="button"
                        disabled={!course.hasRoster || sync.isPending}
                        aria-describedby={course.hasRoster ? undefined : `${noRosterId}-${course.id}`}
                        onClick={() => sync.mutate(course.id)}
                      >
                        {syncing ? t("lti.courses.syncing") : t("lti.courses.sync")}
                      </button>
                      <button
                        type="button"
                        className="button"
                        aria-expanded={shownRoster === course.id}
                        onClick={() => onShowRoster(course.id)}
                      >
                        {t("lti.courses.viewRoster")}
                      </button>
                    </div>
                    {!course.hasRoster && (
                      <span id={`${noRosterId}-${course.id}`} className="muted small lti-reason">
                        {t("lti.courses.noRoster")}
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div aria-live="polite">
        {sync.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={sync.error} />
          </p>
        )}
        {sync.isSuccess && <p className="notice">{t("lti.courses.syncDone")}</p>}
      </div>
    </>
  );
}

/** The LMS's title for the course; without one, its id there, which is all the launch gave. */
export function CourseTitle({ course }: { course: Pick<LtiCourse, "title" | "contextId"> }) {
  const { t } = useTranslation();
  if (course.title) return <span translate="no">{course.title}</span>;
  return (
    <span>
      {t("lti.courses.untitled")}{" "}
      <span className="muted small lti-code" translate="no">
        {course.contextId}
      </span>
    </span>
  );
}
