/** A mistake in how the command was called: exit code 2 and a hint to run `help`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Options that never take a value; every other `--option` takes the next word (or `=value`). */
export const SWITCHES = new Set(['json', 'help', 'revert']);

export interface ParsedArgv {
  words: string[];
  options: Map<string, string | true>;
}

/**
 * Splits argv into positional words and options: `--opt value`, `--opt=value`, `--switch`, and
 * `--` to end options. An empty value (`--scopes ""`) is a value, not a missing one.
 */
export function parseArgv(argv: string[]): ParsedArgv {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      options.set('help', true);
      continue;
    }
    if (!arg.startsWith('--') || arg.length === 2) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (options.has(name)) throw new UsageError(`--${name} is given twice`);
    if (SWITCHES.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      options.set(name, true);
    } else if (eq !== -1) {
      options.set(name, arg.slice(eq + 1));
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      options.set(name, argv[++i]);
    } else {
      throw new UsageError(`--${name} needs a value`);
    }
  }
  return { words, options };
}

/** What a command reads: its operands (the words after the command's own) and its options. */
export class CommandArgs {
  constructor(
    readonly operands: string[],
    private readonly options: Map<string, string | true>,
  ) {}

  has(name: string): boolean {
    return this.options.has(name);
  }

  option(name: string): string | undefined {
    const value = this.options.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  requireOption(name: string): string {
    const value = this.option(name);
    if (value === undefined) throw new UsageError(`missing --${name}`);
    return value;
  }

  operand(index: number, label: string): string {
    const value = this.operands[index];
    if (value === undefined || value === '') throw new UsageError(`missing ${label}`);
    return value;
  }

  /** The operand at `index`, which must be one of `choices`. */
  choice<T extends string>(index: number, choices: readonly T[]): T {
    const label = choices.join('|');
    const value = this.operand(index, label);
    if (!(choices as readonly string[]).includes(value)) throw new UsageError(`expected ${label}, got "${value}"`);
    return value as T;
  }
}
