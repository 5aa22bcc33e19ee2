// The pages a person sees in the test LMS: a course with its links, and the gradebook. Plain HTML with
// readable text, so Chromium tests find things by role and name.
import type { PlatformContext } from "./platform-context.ts";
import { resultView } from "./platform-ags.ts";
import { escapeHtml, page } from "./platform-http.ts";
import { roles } from "./platform-state.ts";

export function coursePagePath(sub: string, courseId: string): string {
  return `/as/${encodeURIComponent(sub)}/courses/${encodeURIComponent(courseId)}`;
}

export function coursePage(platform: PlatformContext, sub: string, courseId: string): string {
  const { state } = platform;
  const user = state.user(sub);
  const course = state.course(courseId);
  const base = coursePagePath(sub, courseId);
  const links = state.courseLinks(courseId).map((link) => {
    const launch = `${base}/links/${encodeURIComponent(link.id)}/launch`;
    return `<li><span class="link-title">${escapeHtml(link.title)}</span>
<a href="${escapeHtml(launch)}" aria-label="Open ${escapeHtml(link.title)}">Open</a>
<a href="${escapeHtml(`${launch}?frame=1`)}" aria-label="Open ${escapeHtml(link.title)} in a frame">Open in a frame</a></li>`;
  });
  return page(
    course.title,
    `<p>Signed in as ${escapeHtml(user.name)}${course.published ? "" : " · This course is not published"}</p>
<h2>Content</h2>
${links.length > 0 ? `<ul>${links.join("\n")}</ul>` : "<p>No content yet.</p>"}
<form method="post" action="${escapeHtml(`${base}/deep-linking`)}"><button type="submit">Add content from Lab Console</button></form>
<form method="post" action="${escapeHtml(`${base}/deep-linking?frame=1`)}"><button type="submit">Add content from Lab Console in a frame</button></form>
<p><a href="/courses/${encodeURIComponent(courseId)}/gradebook">Gradebook</a></p>`,
  );
}

function formatNumber(value: number): string {
  return String(Math.round(value * 100) / 100);
}

export function gradebookPage(platform: PlatformContext, courseId: string): string {
  const { state } = platform;
  const course = state.course(courseId);
  const items = state.courseLineItems(courseId);
  const students = state.enrolments.filter(
    (enrolment) => enrolment.courseId === courseId && enrolment.roles.includes(roles.learner),
  );
  const header = ["Student", ...items.map((item) => item.label)].map(
    (text) => `<th scope="col">${escapeHtml(text)}</th>`,
  );
  const rows = students.map((student) => {
    const user = state.user(student.sub);
    const cells = items.map((item) => {
      const result = state.results.get(item.id)?.get(student.sub);
      if (!result) return "<td></td>";
      const view = resultView(item, result);
      const score =
        typeof view.resultScore === "number"
          ? `${formatNumber(view.resultScore)} / ${formatNumber(item.scoreMaximum)}`
          : "—";
      const pending = result.gradingProgress === "FullyGraded" ? "" : ` (${result.gradingProgress})`;
      return `<td>${escapeHtml(score + pending)}</td>`;
    });
    return `<tr><th scope="row">${escapeHtml(user.name)}</th>${cells.join("")}</tr>`;
  });
  return page(
    `${course.title}: Gradebook`,
    `<table>
<thead><tr>${header.join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`,
  );
}
