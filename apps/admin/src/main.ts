import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@kernel/config';
import { AdminModule } from './admin.module';
import { asksForCommandList, checkArgv, CommandArgs, EXIT_FAILED, Output } from '@kernel/cli';
import { CommandContext, helpResult } from './commands';
import { parseCommandLine } from './program';

// stdout carries only the command's answer; TypeORM's console logger prints query errors with
// console.log, so every console method writes to stderr in this process.
console.log = console.info = console.debug = console.warn = console.error.bind(console);

/** Runs one command and returns the exit code; the Nest context, if built, is closed first. */
async function run(argv: string[]): Promise<number> {
  const out = new Output(argv.includes('--json'));
  let context: Promise<INestApplicationContext> | undefined;
  try {
    checkArgv(argv);
    if (asksForCommandList(argv)) return out.print(helpResult());
    const invocation = parseCommandLine(argv);
    if (invocation.kind === 'help') return out.print({ json: { help: invocation.text }, text: [invocation.text.trimEnd()] });
    const { command, operands, options } = invocation;
    const config = AppConfig.fromEnv();
    const ctx: CommandContext = {
      args: new CommandArgs(operands, options),
      config,
      app: () =>
        (context ??= NestFactory.createApplicationContext(AdminModule.forRoot(config), {
          logger: ['error'], // to stderr; stdout stays the command's
          abortOnError: false, // a failed start is reported here, not by process.abort()
        })),
    };
    const result = await command.run(ctx);
    return await close(context).then(() => out.print(result));
  } catch (err) {
    await close(context);
    return out.fail(err);
  }
}

/** Closing runs the shutdown hooks: the pool ends and Redis quits after its replies arrive. */
async function close(context: Promise<INestApplicationContext> | undefined): Promise<void> {
  const app = await context?.catch(() => undefined);
  if (!app) return;
  await app.close().catch((err: Error) => process.stderr.write(`warning: closing: ${err.message}\n`));
}

run(process.argv.slice(2)).then(
  (code) => exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    exit(EXIT_FAILED);
  },
);

/** Everything is closed by now; the timer only ends a process something still holds open. */
function exit(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 2000).unref();
}
