export function joinPath(prefix: string, name: string): string {
  return prefix ? `${prefix}.${name}` : name;
}

export function splitPath(path: string): string[] {
  return path.split('.');
}

export function getIn(data: unknown, path: string): unknown {
  let current: any = data;
  for (const part of splitPath(path)) {
    current = current[part];
  }
  return current;
}
