// The layers of src/ (docs/ARCHITECTURE.md), checked by test/architecture.test.ts on every `npm test`.
/** Modules of constants and plain functions the web UI imports too (web/src), so they stay where web/ finds them. */
const SHARED_LEAVES = ['validation', 'lead-import-format'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle, type-only imports included, means two modules cannot be read or changed one without the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-knows-no-transport',
      severity: 'error',
      comment: 'Domain code is called by HTTP routes, admin commands and jobs alike: it never imports http/ or mail/.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|mail)/' },
    },
    {
      name: 'schemas-are-typebox-only',
      severity: 'error',
      comment: 'src/schemas/ describes the API in TypeBox; it imports TypeBox, itself and the leaf modules of constants it '
        + 'shares with the web UI, nothing else.',
      from: { path: '^src/schemas/' },
      to: { pathNot: ['^src/schemas/', '^typebox$', '^node_modules/typebox/', `^src/domain/(${SHARED_LEAVES.join('|')})[.]ts$`] },
    },
    {
      name: 'shared-leaves-import-nothing',
      severity: 'error',
      comment: 'The modules the web UI and the schemas share are plain constants and functions: they import nothing.',
      from: { path: `^src/domain/(${SHARED_LEAVES.join('|')})[.]ts$` },
      to: {},
    },
    {
      name: 'net-and-text-stand-alone',
      severity: 'error',
      comment: 'src/net/ (the address guard) and src/text/ (the HTML walk) are tools every layer uses: they import no other part of src/.',
      from: { path: '^src/(net|text)/' },
      to: { path: '^src/', pathNot: '^src/(net|text)/' },
    },
    {
      name: 'agent-knows-no-transport',
      severity: 'error',
      comment: 'The pipeline is handed what a step needs: it imports neither the HTTP layer, mail, nor the job machinery.',
      from: { path: '^src/agent/' },
      to: { path: '^src/(http|mail|jobs|worker)/' },
    },
    {
      name: 'db-knows-no-product',
      severity: 'error',
      comment: 'src/db/ opens the database and migrates it; it knows nothing of what the product stores there.',
      from: { path: '^src/db/' },
      to: { path: '^src/(domain|http|mail|agent|jobs|worker|admin|schemas)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through a type is still a cycle for a reader.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
