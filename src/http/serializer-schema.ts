// The shape of an answer as fast-json-stringify is given it. A nullable field is written in the API's schemas as
// `anyOf: [X, {type: 'null'}]` (`Nullable` in ./schemas.ts), which the serializer can only resolve by running an Ajv
// validator of each branch on each value: a validator compiled on the first answer of each route, and a full
// validation of X (its formats and lengths) for every field of every answer. Where X has a single JSON type (or is an
// enum of strings), the same field is `X` with `type: [X's type, 'null']`, which the serializer resolves by the value's
// JavaScript type. The bytes written for an answer that fits its schema are the same; the OpenAPI document and the
// request validators keep the schemas as they are.
type Schema = Record<string, unknown>;

const isNull = (schema: Schema): boolean => schema.type === 'null' && Object.keys(schema).length === 1;

/** A copy of `schema` for the serializer, each nullable field of a single type written with a type list. */
export function forSerializer<T>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (node === null || typeof node !== 'object') return node;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(node)) copy[key] = rewrite(value);
  const branches = copy.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return copy;
  const nullAt = branches.findIndex((branch: Schema) => isNull(branch));
  const other = branches[1 - nullAt] as Schema | undefined;
  if (nullAt === -1 || !other || 'anyOf' in other) return copy;
  const type = typeof other.type === 'string' ? other.type
    : other.type === undefined && Array.isArray(other.enum) && other.enum.every((value) => typeof value === 'string') ? 'string' : null;
  if (type === null || type === 'null') return copy;
  const { anyOf: _, ...siblings } = copy;
  return { ...other, ...siblings, type: [type, 'null'] };
}
