// Kubernetes resource quantities ("4Gi", "500m", "1k", 2) as plain numbers.

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

/** The quantity's value in base units (bytes, cores), or undefined when it is not a quantity. */
export function parseQuantity(quantity: unknown): number | undefined {
  if (typeof quantity === "number") return Number.isFinite(quantity) ? quantity : undefined;
  if (typeof quantity !== "string") return undefined;
  const match =
    /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(
      quantity.trim(),
    );
  if (!match) return undefined;
  const number = Number(match[1]);
  if (match[2]) return number * 10 ** Number(match[2].slice(1));
  const suffix = match[3] ?? "";
  return number * (binarySuffixes[suffix] ?? decimalSuffixes[suffix] ?? 1);
}

export function parseMillicores(quantity: unknown): number | undefined {
  const cores = parseQuantity(quantity);
  return cores === undefined ? undefined : Math.round(cores * 1000);
}

/** CPU in the API server's canonical form: "200m", "2". */
export function formatMillicores(millicores: number): string {
  return millicores % 1000 === 0 ? String(millicores / 1000) : `${millicores}m`;
}

/** Bytes in the API server's canonical binary form: "4Gi", "4400Mi", or plain bytes when not whole. */
export function formatBytes(bytes: number): string {
  const rounded = Math.ceil(bytes);
  for (const [suffix, size] of Object.entries(binarySuffixes).reverse()) {
    if (rounded % size === 0 && rounded >= size) return `${rounded / size}${suffix}`;
  }
  return String(rounded);
}
