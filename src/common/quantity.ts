// Kubernetes resource quantities ("4Gi", "500m", "1.5e3", 2) as plain numbers, and back into the
// API server's canonical form. The emulator sizes and schedules pods with them; the BFF reads nodes'
// allocatable resources and the launcher pods' requests with the same rules.

const binarySuffixes: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const decimalSuffixes: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const quantityPattern =
  /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The value in base units (bytes, cores, devices); undefined for anything that is not a quantity. */
export function parseQuantity(quantity: unknown): number | undefined {
  if (typeof quantity === "number") return Number.isFinite(quantity) ? quantity : undefined;
  if (typeof quantity !== "string") return undefined;
  const match = quantityPattern.exec(quantity.trim());
  if (!match) return undefined;
  const [, number = "", exponent, suffix = ""] = match;
  const scale = exponent
    ? 10 ** Number(exponent.slice(1))
    : (binarySuffixes[suffix] ?? decimalSuffixes[suffix] ?? NaN);
  const value = Number(number) * scale;
  return Number.isFinite(value) ? value : undefined;
}

/** A CPU quantity in millicores, rounded up as Kubernetes does ("0.0001" is 1m). */
export function parseMillicores(quantity: unknown): number | undefined {
  const cores = parseQuantity(quantity);
  // Rounded to whole microcores first, so binary fractions (0.1 * 1000) do not round 100 up to 101.
  return cores === undefined ? undefined : Math.ceil(Math.round(cores * 1e6) / 1e3);
}

/** CPU in the API server's canonical form: "200m", "2". */
export function formatMillicores(millicores: number): string {
  return millicores % 1000 === 0 ? String(millicores / 1000) : `${millicores}m`;
}

/** Bytes in the API server's canonical binary form: "4Gi", "4372Mi", or plain bytes when not whole. */
export function formatBytes(bytes: number): string {
  const rounded = Math.ceil(bytes);
  for (const [suffix, size] of Object.entries(binarySuffixes).reverse()) {
    if (rounded % size === 0 && rounded >= size) return `${rounded / size}${suffix}`;
  }
  return String(rounded);
}
