import { useNavigate } from "react-router";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { paths } from "../../../lib/paths.ts";
import { useSignedInUser } from "./signed-in-user.ts";
import { useSignOut } from "../api/sign-out.ts";
import { roleLabels } from "./role-label.ts";

export function UserMenu() {
  const me = useSignedInUser();
  const signOut = useSignOut();
  const navigate = useNavigate();

  return (
    <div className="user-menu">
      <span className="user-name" data-testid="current-user">
        {me.username} <span className="role-badge">{roleLabels[me.role]}</span>
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
        Sign out
      </button>
      {signOut.isError && (
        <p className="notice notice-error" role="alert">
          {getErrorMessage(signOut.error)}
        </p>
      )}
    </div>
  );
}
