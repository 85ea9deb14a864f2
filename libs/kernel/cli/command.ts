import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { CommandArgs } from './args';
import { CommandResult } from './output';

export interface CommandContext {
  args: CommandArgs;
  config: AppConfig;
  /** Builds the Nest context on first use; the entry point closes it. Not for `migrate`. */
  app: () => Promise<INestApplicationContext>;
}

export interface Command {
  /** The words that name it: `['org', 'create']`. */
  words: string[];
  /** Operands and options after the words, for the usage text. */
  usage: string;
  summary: string;
  /** Options it accepts besides `--json` and `--help`. */
  options?: string[];
  /** How many operands it takes at most. */
  arity: number;
  run: (ctx: CommandContext) => Promise<CommandResult>;
}

/** `on|off` and `accept|withdraw` operands as booleans. */
export const ON_OFF = ['on', 'off'] as const;
