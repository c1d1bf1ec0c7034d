/** pg_graphql's naming rules (inflection), used only by the catalog loader. */

export function isValidGraphQLName(name: string): boolean {
  return /^[_A-Za-z][_0-9A-Za-z]*$/.test(name);
}

/** snake_case → PascalCase: each character after an underscore is upper-cased, underscores dropped. */
export function toPascal(name: string): string {
  let out = '';
  let upper = true;
  for (const ch of name) {
    if (ch === '_') {
      upper = true;
      continue;
    }
    out += upper ? ch.toUpperCase() : ch;
    upper = false;
  }
  return out;
}

export function lowerFirst(name: string): string {
  return name.length ? name.charAt(0).toLowerCase() + name.slice(1) : name;
}

export function toCamel(name: string): string {
  return lowerFirst(toPascal(name));
}

export function typeNameFor(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  return inflect ? toPascal(sqlName) : sqlName;
}

export function fieldNameFor(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  return inflect ? toCamel(sqlName) : sqlName;
}

export function functionFieldName(sqlName: string, inflect: boolean, override?: unknown): string {
  if (typeof override === 'string') return override;
  // pg_graphql strips ONE leading underscore (`__x` → `_x`).
  const trimmed = sqlName.replace(/^_/, '');
  return lowerFirst(inflect ? toCamel(trimmed) : trimmed);
}

/** Name of the to-one field pointing from a table with `cols` to `targetTypeName`. */
export function toOneFieldName(cols: string[], inflect: boolean, targetTypeName: string): string {
  const c = cols.length === 1 ? cols[0] : undefined;
  if (c !== undefined) {
    if (inflect && c.endsWith('_id') && c.length > 3) return toCamel(c.slice(0, -3));
    if (!inflect && c.endsWith('Id') && c.length > 2) return c.slice(0, -2);
  }
  return lowerFirst(targetTypeName);
}
