export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value.replace(',', '.'));
  return Number.isNaN(n) ? undefined : n;
}

export function toBoolean(value: unknown): boolean {
  return value === true || value === 'on' || value === 'true' || value === '1';
}

export function toTrimmed(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}
