/**
 * Runs `dev-cluster` through a commander program exactly as src/cli/main.ts registers it, so the
 * command can be tested without the rest of the CLI. Usage: node --import tsx <this> dev-cluster ...
 */
import { Command } from 'commander';
import { registerDevClusterCommand } from '../../../src/cli/dev-cluster-command.js';

const program = new Command('flink-operator');
registerDevClusterCommand(program);
await program.parseAsync(process.argv);
