/**
 * A reader for PostgreSQL's node-tree text (pg_rewrite.ev_action), enough to follow which base
 * column each view column comes from (TARGETENTRY :resorigtbl / :resorigcol), as PostgREST does
 * to carry foreign keys over to views.
 *
 * Grammar: `{NODE :field value ...}` nodes, `(...)` lists, `<>` for NULL, `[ b b b ]` datum bytes,
 * and atoms with backslash escapes.
 */

export type NodeValue = string | null | NodeValue[] | PgNode;

export interface PgNode {
  node: string;
  fields: Record<string, NodeValue>;
}

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === ' ' || ch === '\n' || ch === '\t' || ch === '\r') {
      i++;
    } else if (ch === '{' || ch === '}' || ch === '(' || ch === ')' || ch === '[' || ch === ']') {
      tokens.push(ch);
      i++;
    } else {
      let tok = '';
      while (i < text.length) {
        const c = text.charAt(i);
        if (c === '\\' && i + 1 < text.length) {
          tok += text[i + 1];
          i += 2;
          continue;
        }
        if (
          c === ' ' ||
          c === '\n' ||
          c === '\t' ||
          c === '\r' ||
          c === '{' ||
          c === '}' ||
          c === '(' ||
          c === ')' ||
          c === '[' ||
          c === ']'
        )
          break;
        tok += c;
        i++;
      }
      tokens.push(tok);
    }
  }
  return tokens;
}

/** Parses one value starting at tokens[pos]; returns it and the next position. */
function parseValue(tokens: string[], pos: number): [NodeValue, number] {
  const tok = tokens[pos];
  if (tok === '{') {
    const node: PgNode = { node: tokens[pos + 1] ?? '', fields: {} };
    let p = pos + 2;
    for (let key = tokens[p]; key !== undefined && key !== '}'; key = tokens[p]) {
      if (key.startsWith(':')) {
        const next = tokens[p + 1];
        if (next === undefined || next === '}' || (next.startsWith(':') && next.length > 1)) {
          node.fields[key.slice(1)] = null;
          p += 1;
        } else {
          const [v, np] = parseValue(tokens, p + 1);
          node.fields[key.slice(1)] = v;
          p = np;
        }
      } else {
        // a stray atom (e.g. the length before a datum): skip it
        const [, np] = parseValue(tokens, p);
        p = np;
      }
    }
    return [node, p + 1];
  }
  if (tok === '(' || tok === '[') {
    const close = tok === '(' ? ')' : ']';
    const items: NodeValue[] = [];
    let p = pos + 1;
    while (p < tokens.length && tokens[p] !== close) {
      const [v, np] = parseValue(tokens, p);
      items.push(v);
      p = np;
    }
    return [items, p + 1];
  }
  if (tok === '<>') return [null, pos + 1];
  return [tok ?? null, pos + 1];
}

export function parseNodeTree(text: string): NodeValue {
  const tokens = tokenize(text);
  return tokens.length ? parseValue(tokens, 0)[0] : null;
}

export interface ViewColumnOrigin {
  /** The view column's position (resno = attnum). */
  attnum: number;
  /** The relation and column it is a plain copy of. */
  relid: number;
  relattnum: number;
}

/** The base column of each output column of a view's rule (top-level target list only). */
export function viewColumnOrigins(evAction: string): ViewColumnOrigin[] {
  const tree = parseNodeTree(evAction);
  const query = Array.isArray(tree) ? tree[0] : tree;
  if (!query || typeof query !== 'object' || Array.isArray(query)) return [];
  const targetList = query.fields.targetList;
  if (!Array.isArray(targetList)) return [];
  const out: ViewColumnOrigin[] = [];
  for (const te of targetList) {
    if (!te || typeof te !== 'object' || Array.isArray(te) || te.node !== 'TARGETENTRY') continue;
    if (te.fields.resjunk === 'true') continue;
    const relid = Number(te.fields.resorigtbl);
    const relattnum = Number(te.fields.resorigcol);
    const attnum = Number(te.fields.resno);
    if (relid > 0 && relattnum > 0) out.push({ attnum, relid, relattnum });
  }
  return out;
}
