/**
 * Whether parsed JSON nests arrays and objects more than `maxDepth` levels deep (a scalar is
 * depth 0, `{}` and `[1]` depth 1). Iterative, with its own stack, so it cannot overflow the call
 * stack on the very input it exists to catch; it stops at the first path past the limit.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<{ node: object; depth: number }> = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > maxDepth) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ node: child as object, depth: depth + 1 });
    }
  }
  return false;
}
