import { Link } from "react-router";
import { paths } from "../lib/paths.ts";

export function NotFoundPage() {
  return (
    <main className="page">
      <title>Not found · Lab Console</title>
      <div className="panel" role="alert">
        <h1 className="panel-title">Page not found</h1>
        <p>There is nothing at this address.</p>
        <Link to={paths.home.to()}>Go to your labs</Link>
      </div>
    </main>
  );
}
