/** A mistake in how the command was called: exit code 2 and a hint to run `help`. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Options that never take a value; every other `--option` takes the next word (or `=value`). */
export const SWITCHES = new Set(['json', 'help', 'revert']);

/**
 * The checks commander does not make, run on argv before it: an option given twice is refused
 * (commander keeps the last), and an option that takes a value refuses to take the next
 * `--option` as its value (commander would). An empty value (`--scopes ""`) is a value.
 */
export function checkArgv(argv: string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return;
    if (!arg.startsWith('--') || arg.length === 2) continue;
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (seen.has(name)) throw new UsageError(`--${name} is given twice`);
    seen.add(name);
    if (SWITCHES.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
    } else if (eq === -1) {
      if (i + 1 >= argv.length || argv[i + 1].startsWith('--')) throw new UsageError(`--${name} needs a value`);
      i++;
    }
  }
}

/** Whether argv names no command (only options, or the word `help`): the full command list is the answer. */
export function asksForCommandList(argv: string[]): boolean {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words.length === 0 || words[0] === 'help';
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
