import { Command as Program, CommanderError } from 'commander';
import { UsageError } from '@kernel/cli';
import { Command, COMMANDS } from './commands';

/** What the command line asks for: a command to run, or a help text commander wrote. */
export type Invocation = { kind: 'run'; command: Command; operands: string[]; options: Map<string, string | true> } | { kind: 'help'; text: string };

/**
 * Parses argv with commander, built from the command table: one commander command per noun
 * (`org`), one subcommand per verb (`org create`), each with its options and `--help`. Parsing
 * only picks the command; running it stays with the caller, so exit codes and the `--json`
 * output are decided in one place. Commander's own errors become UsageErrors (exit 2).
 */
export function parseCommandLine(argv: string[]): Invocation {
  let invocation: Invocation | undefined;
  let written = '';
  const program = new Program('npm run admin --')
    .exitOverride()
    .configureOutput({ writeOut: (s) => (written += s), writeErr: () => undefined, outputError: () => undefined })
    .configureHelp({ showGlobalOptions: true, subcommandTerm: (cmd) => `${cmd.name()} ${cmd.usage()}`.trim() })
    .helpCommand(false)
    .option('--json', 'print exactly one JSON object on stdout')
    .argument('[command...]')
    .action((words: string[]) => {
      throw new UsageError(`unknown command "${words[0]}"`);
    });

  const nouns = new Map<string, Program>();
  for (const c of COMMANDS) {
    const [noun, verb] = c.words;
    let parent = program;
    if (verb !== undefined) {
      parent = nouns.get(noun) ?? nounCommand(program, noun);
      nouns.set(noun, parent);
    }
    const leaf = parent
      .command(verb ?? noun)
      .description(c.summary)
      .usage(c.usage || '[options]')
      .argument('[operands...]')
      .action((operands: string[], _opts: unknown, cmd: Program) => {
        if (operands.length > c.arity) throw new UsageError(`unexpected argument "${operands[c.arity]}" for ${c.words.join(' ')}`);
        invocation = { kind: 'run', command: c, operands, options: optionsOf(cmd, c, argv) };
      });
    for (const name of c.options ?? []) leaf.option(name === 'revert' ? `--${name}` : `--${name} <${placeholder(c, name)}>`);
  }

  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return { kind: 'help', text: written };
    throw new UsageError(err.message.replace(/^error: /, ''));
  }
  if (!invocation) throw new UsageError('no command');
  return invocation;
}

/** `org`, `key`, …: only a holder of verbs; a word that is none of them is an unknown command. */
function nounCommand(program: Program, noun: string): Program {
  const verbs = () => COMMANDS.filter((c) => c.words[0] === noun).map((c) => c.words[1]);
  return program
    .command(noun)
    .description(`${noun} ${verbs().join('|')}: run "${noun} <command> --help" for one of them`)
    .usage('<command> [operands] [options]')
    .argument('[command...]')
    .action((words: string[]) => {
      throw new UsageError(`unknown command "${[noun, ...words.slice(0, 1)].join(' ')}"; "${noun}" takes ${verbs().join('|')}`);
    });
}

/** The value's name in the usage text (`--org ORG`: ORG), for the help. */
function placeholder(c: Command, name: string): string {
  return new RegExp(`--${name} ([A-Z][A-Z0-9_]*)\\b`).exec(c.usage)?.[1] ?? 'value';
}

/** The options given to the command, by their flag names (`job-title`), with `--json` and `--help` kept as switches. */
function optionsOf(cmd: Program, c: Command, argv: string[]): Map<string, string | true> {
  const options = new Map<string, string | true>();
  for (const name of c.options ?? []) {
    const option = cmd.options.find((o) => o.long === `--${name}`);
    const value = option && cmd.getOptionValue(option.attributeName());
    if (value !== undefined) options.set(name, value === true ? true : String(value));
  }
  if (argv.includes('--json')) options.set('json', true);
  return options;
}
