/** A size as people read it (1.5 MiB, 12 KiB, 300 B), its number in the page's language. */
export function formatSize(bytes: number, formatNumber: (value: number) => string): string {
  if (bytes >= 1024 * 1024) return `${formatNumber(Math.round((bytes / 1024 / 1024) * 10) / 10)} MiB`;
  if (bytes >= 1024) return `${formatNumber(Math.round(bytes / 1024))} KiB`;
  return `${formatNumber(bytes)} B`;
}
