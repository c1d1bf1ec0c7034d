/**
 * A small layout printer producing the same text Prettier (TypeScript parser, `semi: false`,
 * width 80) gives for the shapes the type generator emits: type literals, unions, tuples,
 * object and array literals. As in Prettier, a group prints on one line when it fits and has no
 * forced break; an object written "expanded" in the source always breaks, and a forced break
 * propagates to the enclosing groups.
 */

export const PRINT_WIDTH = 80;

export type Doc = string | ObjectDoc | UnionDoc | TupleDoc | SeqDoc | MemberDoc;

export interface ObjectDoc {
  kind: 'object';
  members: Doc[];
  /** Always printed one member per line (Prettier keeps objects expanded when the source was). */
  expand: boolean;
  /** A JS object literal (members end with `,` when broken) instead of a type literal (`;` when flat). */
  literal?: boolean;
}

export interface UnionDoc {
  kind: 'union';
  items: Doc[];
}

export interface TupleDoc {
  kind: 'tuple';
  items: Doc[];
}

export interface SeqDoc {
  kind: 'seq';
  parts: Doc[];
}

export interface MemberDoc {
  kind: 'member';
  key: string;
  value: Doc;
  optional?: boolean;
}

export const obj = (members: Doc[], expand = true): ObjectDoc => ({ kind: 'object', members, expand });
export const literalObj = (members: Doc[]): ObjectDoc => ({
  kind: 'object',
  members,
  expand: true,
  literal: true,
});
export const union = (items: Doc[]): Doc => {
  const [only] = items;
  return items.length === 1 && only !== undefined ? only : { kind: 'union', items };
};
export const tuple = (items: Doc[]): TupleDoc => ({ kind: 'tuple', items });
export const seq = (...parts: Doc[]): SeqDoc => ({ kind: 'seq', parts });
export const member = (key: string, value: Doc, optional = false): MemberDoc => ({
  kind: 'member',
  key: propertyKey(key),
  value,
  optional,
});

/** A string literal as Prettier prints it: double quotes unless the text holds more double than single quotes. */
export function stringLiteral(s: string): string {
  const json = JSON.stringify(s);
  const doubles = (s.match(/"/g) ?? []).length;
  const singles = (s.match(/'/g) ?? []).length;
  if (doubles <= singles) return json;
  const content = json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'");
  return `'${content}'`;
}

/** Property names are unquoted when they are identifiers (Prettier's quoteProps "as-needed"). */
export function propertyKey(name: string): string {
  return /^[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*$/u.test(name) ? name : stringLiteral(name);
}

/** Prettier keeps `{ ... } | null` (one object type plus null/undefined) attached to its key. */
function huggedObject(doc: Doc): { object: ObjectDoc; others: Doc[] } | undefined {
  if (typeof doc === 'string' || doc.kind !== 'union') return undefined;
  const objects = doc.items.filter((i): i is ObjectDoc => typeof i !== 'string' && i.kind === 'object');
  const others = doc.items.filter((i) => i === 'null' || i === 'undefined');
  const [object] = objects;
  if (
    object === undefined ||
    objects.length !== 1 ||
    objects.length + others.length !== doc.items.length ||
    doc.items[0] !== object
  )
    return undefined;
  return { object, others };
}

export function mustBreak(doc: Doc): boolean {
  if (typeof doc === 'string') return doc.includes('\n');
  switch (doc.kind) {
    case 'object':
      return (doc.expand && doc.members.length > 0) || doc.members.some(mustBreak);
    case 'union':
      return doc.items.some(mustBreak);
    case 'tuple':
      return doc.items.some(mustBreak);
    case 'seq':
      return doc.parts.some(mustBreak);
    case 'member':
      return mustBreak(doc.value);
  }
}

export function flat(doc: Doc): string {
  if (typeof doc === 'string') return doc;
  switch (doc.kind) {
    case 'object':
      if (doc.members.length === 0) return '{}';
      return `{ ${doc.members.map(flat).join(doc.literal ? ', ' : '; ')} }`;
    case 'union':
      return doc.items.map(flat).join(' | ');
    case 'tuple':
      return `[${doc.items.map(flat).join(', ')}]`;
    case 'seq':
      return doc.parts.map(flat).join('');
    case 'member':
      return `${doc.key}${doc.optional ? '?' : ''}: ${flat(doc.value)}`;
  }
}

const fits = (doc: Doc, col: number, suffix: number) =>
  !mustBreak(doc) && col + flat(doc).length + suffix <= PRINT_WIDTH;
const pad = (n: number) => ' '.repeat(n);
const lastLineLength = (s: string, col: number) => {
  const i = s.lastIndexOf('\n');
  return i < 0 ? col + s.length : s.length - i - 1;
};

/**
 * Prints `doc` starting at column `col`; broken lines are indented from `indent`; `suffix`
 * characters follow it on its last line.
 */
export function render(doc: Doc, indent: number, col: number, suffix = 0): string {
  if (typeof doc === 'string') return doc;
  if (fits(doc, col, suffix)) return flat(doc);
  switch (doc.kind) {
    case 'object': {
      const sep = doc.literal ? ',' : '';
      const lines = doc.members.map(
        (m) => pad(indent + 2) + render(m, indent + 2, indent + 2, sep.length) + sep,
      );
      return `{\n${lines.join('\n')}\n${pad(indent)}}`;
    }
    case 'tuple': {
      const lines = doc.items.map((m) => pad(indent + 2) + render(m, indent + 2, indent + 2, 1) + ',');
      return `[\n${lines.join('\n')}\n${pad(indent)}]`;
    }
    case 'union':
      // Outside a member (where the leading-| layout is chosen), a union stays on one line.
      return doc.items.map((i) => render(i, indent, col)).join(' | ');
    case 'seq': {
      let out = '';
      let c = col;
      doc.parts.forEach((part, i) => {
        const rest = doc.parts.slice(i + 1).reduce<number>((n, p) => n + flat(p).length, 0) + suffix;
        const s = render(part, indent, c, rest);
        out += s;
        c = lastLineLength(s, c);
      });
      return out;
    }
    case 'member': {
      const head = `${doc.key}${doc.optional ? '?' : ''}:`;
      const value = doc.value;
      const hugged = huggedObject(value);
      if (hugged) {
        // key: {
        //   ...
        // } | null
        const rest = ' | ' + hugged.others.map(flat).join(' | ');
        return `${head} ${render(hugged.object, indent, col + head.length + 1, suffix + rest.length)}${rest}`;
      }
      if (typeof value !== 'string' && value.kind === 'union') {
        // key:
        //   | a
        //   | { ... }
        const items = value.items.map(
          (item) => `\n${pad(indent + 2)}| ${render(item, indent + 4, indent + 4, 0)}`,
        );
        return head + items.join('');
      }
      return `${head} ${render(value, indent, col + head.length + 1, suffix)}`;
    }
  }
}
