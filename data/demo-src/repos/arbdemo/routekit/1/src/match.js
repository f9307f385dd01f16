const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)(\?)?$/;

export function compilePattern(pattern) {
  const segments = pattern.split('/').filter(Boolean);
  const keys = [];
  const parts = segments.map((segment) => {
    if (segment === '*') {
      keys.push({ name: 'wildcard', optional: false });
      return '(.*)';
    }
    const param = PARAM.exec(segment);
    if (!param) return escapeSegment(segment);
    keys.push({ name: param[1], optional: Boolean(param[2]) });
    return param[2] ? '(?:/([^/]+))?' : '/([^/]+)';
  });
  const joined = parts.map((p) => (p.startsWith('(?:') || p.startsWith('/') ? p : '/' + p));
  const source = joined.join('');
  return { pattern, keys, regex: new RegExp('^' + (source || '/') + '/?$') };
}

export function escapeSegment(segment) {
  return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function matchPath(compiled, path) {
  const found = compiled.regex.exec(path);
  if (!found) return null;
  const params = {};
  compiled.keys.forEach((key, i) => {
    const value = found[i + 1];
    if (value !== undefined) params[key.name] = decodeURIComponent(value);
  });
  return params;
}
