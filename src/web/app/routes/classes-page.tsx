// /classes: the scheduled classes with their warm pools; instructors schedule and cancel them.
import { useTranslation } from "react-i18next";
import type { ScheduledClass } from "../../../common/classes-api.ts";
import { ErrorText } from "../../components/error-text.tsx";
import { LangText } from "../../components/lang-text.tsx";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { useCancelClass } from "../../features/classes/api/change-classes.ts";
import { useClasses } from "../../features/classes/api/get-classes.ts";
import { ScheduleClassForm } from "../../features/classes/components/schedule-class-form.tsx";
import { useLabs, useLabTitles } from "../../features/labs/api/get-labs.ts";
import { useClockText } from "../../lib/clock.ts";
import { useFormat } from "../../lib/i18n/use-format.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import "../../features/classes/classes.css";

export function ClassesPage() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const query = useClasses();
  const labs = useLabs();
  const classes = query.data?.items;

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page: t("classes.title") })}</title>
      <h1 className="page-title">{t("classes.title")}</h1>
      <p className="lead">{t("classes.lead")}</p>
      {me.role === "instructor" && <ScheduleClassForm labs={labs.data ?? []} />}
      <section className="section" aria-labelledby="classes-list-title">
        <h2 id="classes-list-title" className="section-title">
          {t("classes.list.title")}
        </h2>
        {query.isPending ? (
          <Loading label={t("classes.list.loading")} />
        ) : !classes ? (
          <ErrorPanel
            title={t("classes.list.loadFailed")}
            error={query.error}
            onRetry={() => void query.refetch()}
          />
        ) : classes.length === 0 ? (
          <p className="muted">{t("classes.list.none")}</p>
        ) : (
          <ClassTable classes={classes} canCancel={me.role === "instructor"} />
        )}
      </section>
    </main>
  );
}

function ClassTable({ classes, canCancel }: { classes: ScheduledClass[]; canCancel: boolean }) {
  const { t } = useTranslation();
  const format = useFormat();
  const labTitle = useLabTitles();
  const cancel = useCancelClass();
  return (
    <>
      <div className="table-scroll">
        <table className="table" aria-label={t("classes.list.title")}>
          <thead>
            <tr>
              <th scope="col">{t("classes.list.lab")}</th>
              <th scope="col">{t("classes.list.when")}</th>
              <th scope="col">{t("classes.list.expected")}</th>
              <th scope="col">{t("classes.list.pool")}</th>
              {canCancel && <th scope="col">{t("classes.list.actions")}</th>}
            </tr>
          </thead>
          <tbody>
            {classes.map((each) => (
              <tr key={each.id} data-class={each.id}>
                <th scope="row">
                  <LangText text={labTitle(each.labId)} />
                </th>
                <td>
                  {t("classes.list.span", {
                    start: format.dateTime(each.startsAt),
                    end: format.shortTime(each.endsAt),
                  })}
                  <br />
                  <BootingFrom warmFrom={each.warmFrom} />
                </td>
                <td>{format.number(each.expected)}</td>
                <td data-ready={each.pool.ready}>
                  {t("classes.list.counts", {
                    ready: each.pool.ready,
                    booting: each.pool.booting,
                    claimed: each.pool.claimed,
                    target: each.target,
                  })}
                </td>
                {canCancel && (
                  <td>
                    <button
                      type="button"
                      className="button"
                      disabled={cancel.isPending}
                      onClick={() => cancel.mutate(each.id)}
                    >
                      {t("classes.list.cancel")}
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {cancel.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={cancel.error} />
        </p>
      )}
    </>
  );
}

/** When the pool boots the class's VMs: "from" a time still to come, "since" one already past. */
function BootingFrom({ warmFrom }: { warmFrom: string }) {
  const { t } = useTranslation();
  const format = useFormat();
  const time = format.dateTime(warmFrom);
  const text = useClockText((now) =>
    Date.parse(warmFrom) > now ? t("classes.list.warmFrom", { time }) : t("classes.list.warmSince", { time }),
  );
  return <span className="muted small">{text}</span>;
}
