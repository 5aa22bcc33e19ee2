// Kubernetes resource quantities ("32", "500m", "128Gi", "1.5e3") as plain numbers, for reading a
// node's allocatable resources.

const suffixes: Record<string, number> = {
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
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const quantityPattern =
  /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The value in base units (bytes, cores, devices); undefined for anything that is not a quantity. */
export function parseQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = quantityPattern.exec(text.trim());
  if (!match) return undefined;
  const [, number = "", exponent, suffix = ""] = match;
  const value = Number(number) * (exponent ? 10 ** Number(exponent.slice(1)) : (suffixes[suffix] ?? NaN));
  return Number.isFinite(value) ? value : undefined;
}

/** A CPU quantity in millicores, rounded up as the scheduler does. */
export function parseMillicores(text: string | undefined): number | undefined {
  const cores = parseQuantity(text);
  return cores === undefined ? undefined : Math.ceil(Math.round(cores * 1e6) / 1e3);
}
