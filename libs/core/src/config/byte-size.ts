/** `1048576`, `512KB`, `1.5 GB`, `1GiB` → bytes (KB = 1024). Null when unreadable. */
export function parseByteSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$/i.exec(text);
  if (!m) return null;
  const power = { b: 0, k: 1, m: 2, g: 3, t: 4 }[(m[2] ?? 'b')[0]!.toLowerCase() as 'b'];
  return Math.floor(Number(m[1]) * 1024 ** power);
}
