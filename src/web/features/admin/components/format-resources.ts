// CPU and memory as people read them in tables.

export function formatCpu(millis: number): string {
  return millis >= 1000 ? `${Number((millis / 1000).toFixed(2))} CPU` : `${millis}m CPU`;
}

export function formatMemory(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}
