// Child process: the graphql-js floor of a schema build. Reads the shape of Strata's schema
// (schema-shape.mjs, written by schema-build.mjs; read before timing) and builds the same types,
// fields and arguments with graphql-js from plain configs: no catalog query, no naming, no rules.
// A fresh process, as for Strata's first build (cold JIT); then rebuilds with a warm JIT.
// Env: SHAPE (file), REPEAT (2). Prints: SCHEMA_FLOOR {"runsMs":[first, rebuild...],"types":N}
import { readFileSync } from 'node:fs';
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';

const shape = JSON.parse(readFileSync(process.env.SHAPE ?? '', 'utf8'));
const specified = {
  String: GraphQLString,
  Int: GraphQLInt,
  Float: GraphQLFloat,
  Boolean: GraphQLBoolean,
  ID: GraphQLID,
};

function build() {
  /** @type {Map<string, any>} the named types by name (graphql-js' own scalars first) */
  const named = new Map(Object.entries(specified));
  const ref = (s) => {
    if (s.endsWith('!')) return new GraphQLNonNull(ref(s.slice(0, -1)));
    if (s.startsWith('[')) return new GraphQLList(ref(s.slice(1, -1)));
    return named.get(s);
  };
  for (const t of shape.types) {
    let type;
    if (t.kind === 'scalar') type = new GraphQLScalarType({ name: t.name, description: t.d });
    else if (t.kind === 'enum')
      type = new GraphQLEnumType({
        name: t.name,
        description: t.d,
        values: Object.fromEntries(t.values.map((v) => [v, { value: v }])),
      });
    else if (t.kind === 'input')
      type = new GraphQLInputObjectType({
        name: t.name,
        description: t.d,
        fields: () =>
          Object.fromEntries(t.fields.map(([n, ty, d]) => [n, { type: ref(ty), description: d }])),
      });
    else {
      const Ctor = t.kind === 'object' ? GraphQLObjectType : GraphQLInterfaceType;
      type = new Ctor({
        name: t.name,
        description: t.d,
        interfaces: () => t.interfaces.map((i) => named.get(i)),
        fields: () =>
          Object.fromEntries(
            t.fields.map(([n, ty, d, args]) => [
              n,
              {
                type: ref(ty),
                description: d,
                args: Object.fromEntries(
                  args.map(([an, aty, ad, dv]) => [
                    an,
                    { type: ref(aty), description: ad, defaultValue: dv },
                  ]),
                ),
              },
            ]),
          ),
      });
    }
    named.set(t.name, type);
  }
  return new GraphQLSchema({
    query: named.get(shape.query),
    mutation: shape.mutation ? named.get(shape.mutation) : undefined,
    types: [...named.values()],
    assumeValid: true,
  });
}

const runsMs = [];
let types = 0;
for (let i = 0; i <= Number(process.env.REPEAT ?? 2); i++) {
  const t = performance.now();
  const schema = build();
  runsMs.push(performance.now() - t);
  types = Object.keys(schema.getTypeMap()).length;
}
console.log(`SCHEMA_FLOOR ${JSON.stringify({ runsMs, types })}`);
