/**
 * Whole numbers with thousands separators ("1,000"), as en-US writes them, without Intl: its first
 * use loads locale data and cost an analysis about 20 ms.
 */
export function thousands(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const sign = n < 0 ? "-" : "";
  const [whole, fraction] = Math.abs(n).toString().split(".");
  const grouped = (whole ?? "").replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${grouped}${fraction ? `.${fraction}` : ""}`;
}

/** "a", "a and b", "a, b and c". */
export function listed(items: readonly (string | number)[]): string {
  return items.length <= 1 ? String(items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** "1 thread", "2 threads", "1,000 frames"; `many` for words that do not just take an s. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${thousands(n)} ${n === 1 ? one : many}`;
}
