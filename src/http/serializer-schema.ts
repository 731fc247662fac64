// The shape of an answer as fast-json-stringify is given it; the OpenAPI document and the request validators keep the
// schemas as they are. Two unions cost the serializer a validator of each branch, compiled for each route on its first
// answer and run on every value, for it to choose the branch to write with:
// - A nullable field, `anyOf: [X, {type: 'null'}]` (`Nullable` in ./schemas.ts). Where X has a single JSON type (or is
//   an enum of strings), it is X with `type: [X's type, 'null']`, which the serializer tells apart by the value's
//   JavaScript type. An answer that fits its schema is written to the same bytes.
// - A step's output, the union of the four nodes' outputs. It was validated against its node's schema before it was
//   stored (src/agent/output-check.ts), and is written as it is stored, as GET /api/v1/runs/{id} writes it. The
//   serializer compiled and ran the four outputs' validators on each route that lists runs: 0.1-0.2 s of CPU each on
//   its first answer.
import { StepOutput } from '../schemas/index.ts';

type Schema = Record<string, unknown>;

const WRITTEN_AS_STORED = new Set([JSON.stringify(StepOutput)]);

const isNull = (schema: Schema): boolean => schema.type === 'null' && Object.keys(schema).length === 1;

/** A copy of `schema` for the serializer, as above. */
export function forSerializer<T>(schema: T): T {
  return rewrite(schema) as T;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (node === null || typeof node !== 'object') return node;
  if ('anyOf' in node && WRITTEN_AS_STORED.has(JSON.stringify(node))) return {};
  const copy: Schema = {};
  for (const [key, value] of Object.entries(node)) copy[key] = rewrite(value);
  const branches = copy.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return copy;
  const nullAt = branches.findIndex((branch: Schema) => isNull(branch));
  const other = branches[1 - nullAt] as Schema | undefined;
  if (nullAt === -1 || !other || 'anyOf' in other) return copy;
  const { anyOf: _, ...siblings } = copy;
  // Null or anything: anything.
  if (Object.keys(other).length === 0) return siblings;
  const type = typeof other.type === 'string' ? other.type
    : other.type === undefined && Array.isArray(other.enum) && other.enum.every((value) => typeof value === 'string') ? 'string' : null;
  if (type === null || type === 'null') return copy;
  return { ...other, ...siblings, type: [type, 'null'] };
}
