// How the benches print their tables: figures to a fixed number of digits, right-aligned in columns.
export const fixed = (value: number, digits = 1) => value.toFixed(digits);
export const pad = (text: string, width: number) => text.padStart(width);
