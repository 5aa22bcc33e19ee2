// A recording's size as people read it in a table: bytes, kB or MB (powers of 1000, as the units say),
// with the locale's digits and unit names.

export function formatSize(bytes: number, locale: string): string {
  if (bytes < 1000) {
    return new Intl.NumberFormat(locale, { style: "unit", unit: "byte", unitDisplay: "long" }).format(bytes);
  }
  const inUnit = (unit: string, value: number) =>
    new Intl.NumberFormat(locale, {
      style: "unit",
      unit,
      unitDisplay: "short",
      maximumFractionDigits: 1,
    }).format(value);
  // Decided after rounding, so 999,960 bytes reads "1 MB" rather than "1,000 kB".
  const kilobytes = Math.round(bytes / 100) / 10;
  return kilobytes < 1000 ? inUnit("kilobyte", kilobytes) : inUnit("megabyte", bytes / 1_000_000);
}
