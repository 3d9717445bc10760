/**
 * A `flink-operator` command line with only the migrate, inspect and validate commands registered, for tests
 * that run them as a separate process (flags, output, exit status), independent of src/cli/main.ts.
 */
import { Command } from 'commander';
import { registerInspectCommand } from '../../src/cli/inspect-command.js';
import { registerMigrateCommand } from '../../src/cli/migrate-command.js';
import { registerValidateCommand } from '../../src/cli/validate-command.js';

const program = new Command('flink-operator').exitOverride((error) => {
  process.exit(error.exitCode);
});
registerMigrateCommand(program);
registerInspectCommand(program);
registerValidateCommand(program);
program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
