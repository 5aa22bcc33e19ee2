// CPU and memory as people read them in tables, with the locale's digits and separators.

export function formatCpu(millis: number, locale: string): string {
  return millis >= 1000
    ? `${new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(millis / 1000)} CPU`
    : `${new Intl.NumberFormat(locale).format(millis)}m CPU`;
}

export function formatMemory(bytes: number, locale: string): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1
    ? `${new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(gib)} GiB`
    : `${new Intl.NumberFormat(locale).format(Math.round(bytes / 2 ** 20))} MiB`;
}
