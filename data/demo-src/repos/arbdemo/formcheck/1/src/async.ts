export type AsyncRule = (value: unknown) => Promise<string | undefined>;

export async function validateAsync(
  value: unknown,
  rules: AsyncRule[],
): Promise<string | undefined> {
  const codes = await Promise.all(rules.map((rule) => rule(value)));
  return codes.find((code) => code !== undefined);
}

export function debounce<T extends unknown[]>(fn: (...args: T) => void, ms: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: T) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
