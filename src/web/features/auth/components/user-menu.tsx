import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router";
import { ErrorText } from "../../../components/error-text.tsx";
import { paths } from "../../../lib/paths.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { useSignOut } from "../api/sign-out.ts";

export function UserMenu() {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const signOut = useSignOut();
  const navigate = useNavigate();

  return (
    <div className="user-menu">
      <span className="user-name" data-testid="current-user">
        <span className="user-name-text" title={me.username} translate="no">
          {me.username}
        </span>{" "}
        <span className="role-badge">{t(`roles.${me.role}`)}</span>
      </span>
      <button
        type="button"
        className="button button-quiet"
        disabled={signOut.isPending}
        onClick={() =>
          signOut.mutate(undefined, {
            onSuccess: (result) => {
              // Signed in through a provider: its session ends too, and it sends the browser back.
              if (result) window.location.assign(result.providerSignOutUrl);
              else void navigate(paths.signIn.to(), { replace: true });
            },
          })
        }
      >
        {t("auth.signOut")}
      </button>
      {signOut.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={signOut.error} />
        </p>
      )}
    </div>
  );
}
