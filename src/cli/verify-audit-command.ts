import { verifyAuditChain } from '../policy/audit-log/audit-chain-verification';
import { assertAuditLogSchema } from '../policy/audit-log/audit-log.schema';
import { databaseUrlOf, parseCommand } from './cli-arguments';
import { withDataSource, type CliCommand } from './cli-command';
import { CliExit, CliFailure } from './cli-failure';

/** `verify-audit`: checks the hash chain of the policy audit log. */
export const verifyAuditCommand: CliCommand = {
  name: 'verify-audit',
  summary: 'verify the hash chain of the policy audit log (exit 1 when it is broken)',
  help: [
    'usage: nest-agent-runtime verify-audit [--url <postgres url>]',
    '',
    'Validates the audit-log tables, then reads the whole chain in one read-only snapshot and checks',
    'every row: sequence, previous hash, row hash, canonical decision, digest, copied columns, head.',
    'Prints the report as JSON on stdout (it holds no decision content).',
    '',
    'options:',
    '  --url <url>        the database (default: DATABASE_URL)',
    '',
    'exit: 0 intact, 1 broken, 2 usage, 3 database unreachable or schema problem',
  ].join('\n'),
  async run(args, env, io) {
    const { values } = parseCommand(args, { strings: ['url'] });
    const url = databaseUrlOf(values.url, env);
    const report = await withDataSource(url, ['audit-log'], async (dataSource) => {
      await assertAuditLogSchema(dataSource);
      return verifyAuditChain(dataSource);
    });
    io.out(JSON.stringify(report, null, 2));
    if (report.ok) return CliExit.ok;
    const at = report.first_broken === null ? '' : ` at seq ${report.first_broken.seq} (${report.first_broken.reason})`;
    throw new CliFailure('audit_chain_broken', `the audit chain is broken${at}`, CliExit.checkFailed);
  },
};
