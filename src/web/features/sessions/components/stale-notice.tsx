import type { SessionList } from "../../../../common/api.ts";

export function StaleNotice({ list }: { list: SessionList | undefined }) {
  if (!list?.stale) return null;
  return (
    <p className="notice notice-warning" role="status">
      The cluster is not answering right now; this is the last state Lab Console saw.
    </p>
  );
}
