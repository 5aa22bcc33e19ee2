// The sandbox is driven by generated sh scripts; every value that lands in one (paths, user data, runcmd
// arguments) goes through here so the guest's own input can never become shell syntax.

export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}
