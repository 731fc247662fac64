// The words of the `leadrun` program: each command's options, its help, how its arguments become an admin command
// (src/admin/commands.ts) or a service to run, and how its result reads. One table drives parsing and help, so
// that `leadrun COMMAND --help` lists exactly the options the command takes.
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { AdminCommand } from './commands.ts';
import { IMPORT_MAX_BYTES } from '../domain/lead-import-format.ts';
import type { LeadImportResult } from '../domain/leads/import.ts';
import { isEmail } from '../domain/validation.ts';

export const USAGE = `leadrun: leads, calls and agent runs that draft sales e-mails

Usage:
  leadrun serve [--no-worker]        HTTP API and web UI, with an in-process run worker
  leadrun worker                     only the run worker (start as many as you like on PostgreSQL)
  leadrun migrate                    apply database migrations
  leadrun setup --name N --admin-email E [--plan free|pro] [--json]
  leadrun workspace create --name N [--plan free|pro] [--admin-email E] [--json]
  leadrun workspace list [--json]
  leadrun key create --workspace ID|NAME --name N --scopes a,b [--replace] [--json]
  leadrun key revoke KEY_ID
  leadrun audit list --workspace ID|NAME [--limit N] [--json]
  leadrun leads import FILE --workspace ID|NAME [--dedupe email] [--dry-run] [--map FIELD:COLUMN] [--json]
  leadrun webhook create --workspace ID|NAME --url URL [--events a,b] [--json]
  leadrun user password --email E [--workspace ID|NAME]  set a user's web UI password (asked for on a terminal)

Scopes: leads:read, leads:write, runs:read, runs:write, webhooks:read, webhooks:write, sequences:read, sequences:write.
Configuration comes from the environment; see README.md.
'leadrun COMMAND --help' tells more about a command; 'leadrun --version' prints the version.`;

/** A mistake in the words given: one line that names it. */
export class UsageError extends Error {}

/** What a command's words ask for: a service to run, an admin command, or a password to read and then set. */
type Request =
  | { kind: 'service'; http: boolean; worker: boolean }
  | { kind: 'admin'; command: AdminCommand }
  | { kind: 'password'; email: string; workspace: string | null };

export type Invocation = Request & { spec: CommandSpec; json: boolean };

interface Option {
  /** As the help shows it: `--name N`, or `--json` for a switch. */
  flag: string;
  meaning: string;
  /** May be given more than once; its values are kept in order. */
  repeatable?: boolean;
}

interface Args {
  values: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
}

export interface CommandSpec {
  words: string;
  usage: string;
  about: string;
  options: Option[];
  /** Names of the positional arguments it takes, in order. */
  positionals?: string[];
  build(args: Args): Request;
  /** The result, for a person. */
  human?(result: any): string;
  /** A line that goes with the result: after it, or on standard error beside --json (stdout keeps only JSON). */
  notice?(result: any, command: AdminCommand): string | null;
}

const JSON_OPTION: Option = { flag: '--json', meaning: 'print the result as JSON' };
const PLAN_OPTION: Option = { flag: '--plan free|pro', meaning: 'its plan (default free)' };

function text(args: Args, name: string): string {
  const value = args.values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

function email(args: Args, name: string): string {
  const value = text(args, name).trim();
  if (!isEmail(value)) throw new UsageError(`--${name} must be an e-mail address (got "${value}")`);
  return value;
}

function plan(args: Args): string {
  const value = args.values.plan ?? 'free';
  if (typeof value !== 'string' || !/^(free|pro)$/i.test(value)) throw new UsageError(`--plan must be free or pro (got "${String(value)}")`);
  return value.toLowerCase();
}

/** Control characters (a name holding an escape sequence, a line break) are not written to a terminal as such. */
export function printable(value: unknown): string {
  return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, '\uFFFD');
}

const passwordHint = (email: string | null) =>
  email ? `To sign in to the web UI, ${email} needs a password: leadrun user password --email ${email}` : null;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n');
}

const admin = (command: AdminCommand): Request => ({ kind: 'admin', command });

export const COMMANDS: CommandSpec[] = [
  {
    words: 'serve',
    usage: 'leadrun serve [--no-worker]',
    about: 'Serves the HTTP API and the web UI, with an in-process run worker. Listening on an address other than\n'
      + 'loopback (HOST) on an installation not set up yet, it prints a one-time setup token that setup then needs.',
    options: [{ flag: '--no-worker', meaning: 'no in-process worker: run `leadrun worker` processes instead (PostgreSQL)' }],
    build: (args) => ({ kind: 'service', http: true, worker: args.values['no-worker'] !== true }),
  },
  {
    words: 'worker',
    usage: 'leadrun worker',
    about: 'Runs only the run worker; start as many as you like on PostgreSQL.',
    options: [],
    build: () => ({ kind: 'service', http: false, worker: true }),
  },
  {
    words: 'migrate',
    usage: 'leadrun migrate [--json]',
    about: 'Applies the database migrations not applied yet (serve and worker apply them too).',
    options: [JSON_OPTION],
    build: () => admin({ command: 'migrate' }),
    human: (r: { applied: string[] }) => (r.applied.length ? `Applied ${r.applied.join(', ')}` : 'The database is up to date.'),
  },
  {
    words: 'setup',
    usage: 'leadrun setup --name N --admin-email E [--plan free|pro] [--json]',
    about: 'Sets up an empty installation, as the web UI does on a first visit: its first workspace and that\n'
      + "workspace's admin. On an installation set up already (in the browser, or by an earlier setup) it changes\n"
      + 'nothing and prints the workspace setup made, so that what follows it works the same either way.',
    options: [
      { flag: '--name N', meaning: 'the name of the workspace, if it is made now (required)' },
      { flag: '--admin-email E', meaning: "the e-mail of its admin, if it is made now (required)" },
      PLAN_OPTION,
      JSON_OPTION,
    ],
    build: (args) => admin({ command: 'setup', name: text(args, 'name'), adminEmail: email(args, 'admin-email'), plan: plan(args) }),
    human: (r) => (r.created
      ? `Set up leadrun: workspace ${r.id} (${printable(r.name)}, plan ${r.plan}), admin ${printable(r.adminEmail)}.`
      : `leadrun is set up already: workspace ${r.id} (${printable(r.name)}, plan ${r.plan}), admin ${printable(r.adminEmail ?? 'none')}. Nothing was changed.`),
    notice: (r) => (r.created ? passwordHint(r.adminEmail) : null),
  },
  {
    words: 'workspace create',
    usage: 'leadrun workspace create --name N [--plan free|pro] [--admin-email E] [--json]',
    about: 'Creates a workspace and its admin user.',
    options: [
      { flag: '--name N', meaning: 'the name of the workspace (required)' },
      PLAN_OPTION,
      { flag: '--admin-email E', meaning: 'the e-mail of its admin user, who can then be given a web UI password' },
      JSON_OPTION,
    ],
    build: (args) => admin({
      command: 'workspace.create', name: text(args, 'name'), plan: plan(args),
      adminEmail: args.values['admin-email'] === undefined ? null : email(args, 'admin-email'),
    }),
    human: (r) => `Created workspace ${r.id} (${printable(r.name)}, plan ${r.plan}); admin user ${r.adminUserId}`,
    notice: (_, command) => (command.command === 'workspace.create' ? passwordHint(command.adminEmail?.trim().toLowerCase() || null) : null),
  },
  {
    words: 'workspace list',
    usage: 'leadrun workspace list [--json]',
    about: 'Lists the workspaces, oldest first: id, name, plan, admin e-mail, created.',
    options: [JSON_OPTION],
    build: () => admin({ command: 'workspace.list' }),
    human: (rows: Array<Record<string, string | null>>) => (rows.length === 0
      ? '(no workspaces: leadrun setup, or the web UI, makes the first)'
      : table([['ID', 'NAME', 'PLAN', 'ADMIN', 'CREATED'], ...rows.map((w) => [w.id!, printable(w.name), w.plan!, printable(w.adminEmail ?? '-'), w.createdAt!])])),
  },
  {
    words: 'key create',
    usage: 'leadrun key create --workspace ID|NAME --name N --scopes a,b [--replace] [--json]',
    about: 'Creates an API key and prints it; this is the only time it is shown.',
    options: [
      { flag: '--workspace ID|NAME', meaning: "the key's workspace: its id or its exact name (required)" },
      { flag: '--name N', meaning: 'a name that says who uses the key (required)' },
      { flag: '--scopes a,b', meaning: 'comma-separated: leads:read, leads:write, runs:read, runs:write, webhooks:read, webhooks:write, sequences:read, sequences:write (required)' },
      { flag: '--replace', meaning: "revoke the workspace's other keys of this name (a script run again keeps one)" },
      JSON_OPTION,
    ],
    build: (args) => admin({
      command: 'key.create',
      workspace: text(args, 'workspace'),
      name: text(args, 'name'),
      scopes: text(args, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
      replace: args.values.replace === true,
    }),
    human: (r) => {
      const revoked = r.revoked as string[];
      const created = `Created key ${r.id} with scopes ${(r.scopes as string[]).join(', ')}.\n\n  ${r.key}\n\n`
        + 'This is the only time the key is shown: store it now.';
      if (revoked.length === 0) return created;
      return `${created}\nRevoked the earlier key${revoked.length > 1 ? 's' : ''} of this name: ${revoked.join(', ')}.`;
    },
  },
  {
    words: 'key revoke',
    usage: 'leadrun key revoke KEY_ID [--json]',
    about: 'Revokes an API key at once; revoking it again keeps the first time.',
    options: [JSON_OPTION],
    positionals: ['KEY_ID'],
    build: (args) => {
      if (args.positionals[0] === undefined) throw new UsageError('KEY_ID is required');
      return admin({ command: 'key.revoke', keyId: args.positionals[0] });
    },
    human: (r) => `Revoked key ${r.id} at ${r.revokedAt}`,
  },
  {
    words: 'audit list',
    usage: 'leadrun audit list --workspace ID|NAME [--limit N] [--json]',
    about: "Lists a workspace's audit entries, newest first.",
    options: [
      { flag: '--workspace ID|NAME', meaning: 'the workspace: its id or its exact name (required)' },
      { flag: '--limit N', meaning: 'how many entries, 1 to 1000 (default 50)' },
      JSON_OPTION,
    ],
    build: (args) => {
      const raw = args.values.limit;
      const limit = raw === undefined ? 50 : /^\d{1,4}$/.test(String(raw)) ? Number(raw) : NaN;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
      return admin({ command: 'audit.list', workspace: text(args, 'workspace'), limit });
    },
    human: (entries: Array<Record<string, any>>) => entries.map((e) =>
      `${e.occurredAt}  ${String(e.source).padEnd(3)}  ${String(e.outcome).padEnd(7)}  ${e.status ?? '-'}  ${printable(e.action)}${e.target ? `  ${printable(e.target.type)}:${printable(e.target.id)}` : ''}`).join('\n') || '(no entries)',
  },
  {
    words: 'leads import',
    usage: 'leadrun leads import FILE --workspace ID|NAME [--dedupe email] [--dry-run] [--map FIELD:COLUMN]... '
      + '[--status-map VALUE:STATUS]... [--json]',
    about: 'Imports a CSV file (a header row, then a row per lead) or a JSON file ({"leads": […]}, named *.json) of\n'
      + 'leads, as POST /api/v1/leads/import does: valid rows are written in one transaction, invalid rows are\n'
      + 'reported and skipped.',
    positionals: ['FILE'],
    options: [
      { flag: '--workspace ID|NAME', meaning: 'the workspace to import into: its id or its exact name (required)' },
      { flag: '--dedupe email', meaning: 'update the lead with the same e-mail (any case) instead of creating a second' },
      { flag: '--dry-run', meaning: 'check the file and count, write nothing' },
      { flag: '--map FIELD:COLUMN', meaning: 'read a field from the column with that header, e.g. --map "email:Work E-mail" (repeatable)', repeatable: true },
      {
        flag: '--status-map VALUE:STATUS',
        meaning: 'read a status value that is not a lead status as one, e.g. --status-map Cold:DISCOVERY (repeatable)',
        repeatable: true,
      },
      JSON_OPTION,
    ],
    build: (args) => {
      const path = args.positionals[0];
      if (path === undefined) throw new UsageError('FILE is required');
      const workspace = text(args, 'workspace');
      const dedupe = args.values.dedupe;
      if (dedupe !== undefined && dedupe !== 'email') throw new UsageError('--dedupe takes one value: email');
      const map = args.values.map;
      const statusMap = args.values['status-map'];
      return admin({
        command: 'leads.import',
        workspace,
        format: path.toLowerCase().endsWith('.json') ? 'json' : 'csv',
        content: readImportFile(path).toString('base64'),
        dedupe: dedupe ?? null,
        dryRun: args.values['dry-run'] === true,
        map: Array.isArray(map) ? map : [],
        statusMap: Array.isArray(statusMap) ? statusMap : [],
      });
    },
    human: (result: LeadImportResult) => humanImport(result),
  },
  {
    words: 'webhook create',
    usage: 'leadrun webhook create --workspace ID|NAME --url URL [--events a,b] [--description D] [--json]',
    about: 'Adds a webhook endpoint and prints its id and signing secret; this is the only time the secret is shown.\n'
      + 'The URL must be http or https on a public address (unless ALLOW_PRIVATE_HOSTS=true).',
    options: [
      { flag: '--workspace ID|NAME', meaning: "the endpoint's workspace: its id or its exact name (required)" },
      { flag: '--url URL', meaning: 'where events are POSTed (required)' },
      { flag: '--events a,b', meaning: `comma-separated event types, e.g. run.completed,draft.sent; left out: every type` },
      { flag: '--description D', meaning: 'what the endpoint is for' },
      JSON_OPTION,
    ],
    build: (args) => {
      const events = args.values.events;
      const description = args.values.description;
      return admin({
        command: 'webhook.create',
        workspace: text(args, 'workspace'),
        url: text(args, 'url').trim(),
        events: typeof events === 'string' ? events.split(',').map((e) => e.trim()).filter(Boolean) : [],
        description: typeof description === 'string' ? description : null,
      });
    },
    human: (r) => `Created webhook endpoint ${r.id}. Its signing secret:\n\n  ${r.secret}\n\nThis is the only time the secret is shown: store it now.`,
  },
  {
    words: 'user password',
    usage: 'leadrun user password --email E [--workspace ID|NAME] [--json]',
    about: "Sets a user's web UI password and signs them out everywhere. On a terminal it asks for the password\n"
      + 'twice, without showing it; otherwise it reads the first line of standard input. It is never taken\n'
      + 'from the command line, where others can read it.',
    options: [
      { flag: '--email E', meaning: 'the e-mail of the user (required)' },
      { flag: '--workspace ID|NAME', meaning: "the user's workspace, when the address is someone's in more than one" },
      JSON_OPTION,
    ],
    build: (args) => {
      const workspace = typeof args.values.workspace === 'string' ? text(args, 'workspace') : null;
      return { kind: 'password', email: email(args, 'email'), workspace };
    },
    human: (r) => `Set the password of ${printable(r.email)}; they can sign in to the web UI now.`,
  },
];

/** The file of `leads import`, refused at once when it is not a readable file within the import's size limit. */
function readImportFile(path: string): Buffer {
  let size: number;
  try {
    size = statSync(path).size;
    if (size <= IMPORT_MAX_BYTES) return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new UsageError(`cannot read ${path}: ${why}`);
  }
  throw new UsageError(`${path} is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MiB, the most one import takes; split it into several`);
}

/** An import's answer for a person: the counts, and the first errors by row. */
function humanImport(result: LeadImportResult): string {
  const lines = [`${result.dryRun ? 'Dry run (nothing written): would create' : 'Created'} ${result.created}, `
    + `${result.dryRun ? 'update' : 'updated'} ${result.updated}, skipped ${result.skipped} of ${result.rows} rows.`];
  const ignored = (result.columns ?? []).filter((c) => c.field === null).map((c) => printable(c.header));
  if (ignored.length > 0) lines.push(`Ignored columns: ${ignored.join(', ')}`);
  for (const w of result.warnings) {
    lines.push(`  ${w.rows} row(s) with ${printable(w.field)} "${printable(w.value)}": ${printable(w.message)}`);
  }
  for (const e of result.errors.slice(0, 20)) lines.push(`  row ${e.row}: ${printable(e.field)} ${printable(e.message)}`);
  if (result.errorCount > 20) lines.push(`  … and ${result.errorCount - 20} more (--json lists up to ${result.errors.length})`);
  return lines.join('\n');
}

const nameOf = (flag: string) => flag.split(' ')[0]!.slice(2);

/** The help of the command the words name (`key` names both key commands); null for no known command. */
export function commandHelp(words: string[]): string | null {
  const named = words.filter((word) => !word.startsWith('-')).slice(0, 2);
  const exact = COMMANDS.find((c) => c.words === named.join(' ')) ?? COMMANDS.find((c) => c.words === named[0]);
  const matches = exact ? [exact] : COMMANDS.filter((c) => c.words.split(' ')[0] === named[0]);
  if (matches.length === 0) return null;
  return matches.map(({ usage, about, options }) => {
    const width = Math.max(0, ...options.map(({ flag }) => flag.length)) + 2;
    const lines = [`Usage: ${usage}`, '', about];
    if (options.length) lines.push('', 'Options:', ...options.map(({ flag, meaning }) => `  ${flag.padEnd(width)}${meaning}`));
    return lines.join('\n');
  }).join('\n\n');
}

/** The command the first words name, and the words after them. */
function findCommand(argv: string[]): { spec: CommandSpec; rest: string[] } {
  const [first = '', second = ''] = argv;
  const two = COMMANDS.find((c) => c.words === `${first} ${second}`);
  if (two) return { spec: two, rest: argv.slice(2) };
  const one = COMMANDS.find((c) => c.words === first);
  if (one) return { spec: one, rest: argv.slice(1) };
  const group = COMMANDS.filter((c) => c.words.startsWith(`${first} `)).map((c) => c.words.split(' ')[1]);
  if (group.length > 0 && (second === '' || second.startsWith('-'))) {
    throw new UsageError(`"${first}" needs one of: ${group.join(', ')} (see leadrun ${first} --help)`);
  }
  throw new UsageError(`unknown command "${[first, second].filter(Boolean).join(' ')}" (see leadrun --help)`);
}

/**
 * Parses the words after `leadrun`. Each command takes only its own options: anything else is refused in one line
 * that names it and points at the command's help.
 */
export function parseCommandLine(argv: string[]): Invocation {
  const { spec, rest } = findCommand(argv);
  const see = `see leadrun ${spec.words} --help`;
  const types = new Map(spec.options.map(({ flag }) => [nameOf(flag), flag.includes(' ') ? 'string' as const : 'boolean' as const]));
  const options = Object.fromEntries([...types].map(([name, type]) => [name, { type }]));
  // Not strict: every token is judged here, so that each mistake gets its own words.
  const { tokens } = parseArgs({ args: rest, options, strict: false, allowPositionals: true, tokens: true });
  const values: Args['values'] = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') {
      if (spec.words === 'user password') {
        throw new UsageError(`a password is never taken on the command line, where others can read it; type it when asked, or give it on standard input (${see})`);
      }
      if (positionals.length >= (spec.positionals?.length ?? 0)) throw new UsageError(`unexpected argument "${token.value}" (${see})`);
      positionals.push(token.value);
      continue;
    }
    const type = types.get(token.name);
    if (type === undefined) {
      if (spec.words === 'user password' && token.name === 'password') {
        throw new UsageError(`--password is not taken: a password on the command line can be read by others; type it when asked, or give it on standard input (${see})`);
      }
      throw new UsageError(`unknown option ${token.rawName} for leadrun ${spec.words} (${see})`);
    }
    if (type === 'boolean' && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value (${see})`);
    // `--name --json` is a forgotten value, not a name: a value that starts with a dash is given as --name=-x.
    if (type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      throw new UsageError(`${token.rawName} needs a value (${see})`);
    }
    const repeatable = spec.options.some((o) => o.repeatable && nameOf(o.flag) === token.name);
    if (repeatable) {
      const earlier = values[token.name];
      values[token.name] = [...(Array.isArray(earlier) ? earlier : []), token.value!];
    } else {
      values[token.name] = token.value ?? true;
    }
  }
  try {
    return { ...spec.build({ values, positionals }), spec, json: values.json === true };
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${error.message} (${see})`);
    throw error;
  }
}
