// /: everyone's start page, in the first download. The sessions feature's cards and launch buttons
// meet the labs feature's catalog here.
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { isStaff } from "../../lib/roles.ts";
import { useLabs, useLabTitles } from "../../features/labs/api/get-labs.ts";
import { LabCatalog } from "../../features/labs/components/lab-catalog.tsx";
import { useSessions } from "../../features/sessions/api/get-sessions.ts";
import { LaunchLabButton } from "../../features/sessions/components/launch-lab-button.tsx";
import { MySessions } from "../../features/sessions/components/my-sessions.tsx";
import { PastSessions } from "../../features/sessions/components/past-sessions.tsx";
import { visibleSessions } from "../../features/sessions/lib/visible-sessions.ts";

/**
 * Everyone's start page: their own sessions on top, the ended ones under them (a student who just
 * ended one finds its record where it was), then the catalog to launch from.
 */
export function HomePage() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  // Staff see every session in the API; here they want their own, like a student.
  const sessions = useSessions(isStaff(me.role) ? { owner: me.username } : {});
  const active = visibleSessions(sessions.data);
  const labs = useLabs();
  const labTitle = useLabTitles();
  // A launch from an LMS course lands here with its lab: that lab alone, until they ask for all.
  const [searchParams] = useSearchParams();

  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("home.title") })}</title>
      <h1 className="page-title">{t("home.title")}</h1>
      <p className="lead">{t("home.lead")}</p>
      <MySessions query={sessions} labs={labs.data} labTitle={labTitle} />
      {sessions.data && <PastSessions live={active} labTitle={labTitle} />}
      <LabCatalog
        only={searchParams.get("lab")}
        renderAction={(lab) => (
          <LaunchLabButton lab={lab} activeSession={active.find((session) => session.labId === lab.id)} />
        )}
      />
    </main>
  );
}
