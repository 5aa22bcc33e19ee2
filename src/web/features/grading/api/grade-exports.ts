// The exports are plain downloads: the browser sends the session cookie with a same-origin GET.
export const gradeExportUrls = (labId: string) => ({
  csv: `/api/labs/${encodeURIComponent(labId)}/grades.csv`,
  json: `/api/labs/${encodeURIComponent(labId)}/grades.json`,
});
