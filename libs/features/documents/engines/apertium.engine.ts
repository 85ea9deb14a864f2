import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseLanguage, LANGUAGES } from '../model/languages';
import { callEngine } from './engine-http';
import { EngineLimits, expectTranslations, LanguagePair, TranslationEngine, TranslationEngineError } from './translation-engine';

export interface ApertiumOptions {
  /** apertium-apy's base address; without it the local `apertium` command is run. */
  url?: string;
  /** The command (default `apertium`, from Debian's apertium package). */
  command?: string;
  timeoutMs?: number;
  limits?: Partial<EngineLimits>;
}

/** Between segments in one run of the command: a paragraph of its own that Apertium passes through. */
const marker = (i: number) => `\n\n@@${i}@@\n\n`;
const MARKER = /\n*[ \t]*@@(\d+)@@[ \t]*\n*/g;

const iso3 = (tag: string): string | undefined => LANGUAGES[baseLanguage(tag)]?.iso3;

/** Runs a command; resolves its stdout. */
function run(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    // Our own timer (spawn's `timeout` leaves one behind when the command cannot be started).
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        e.code === 'ENOENT'
          ? new TranslationEngineError(`The ${command} command is not installed (Debian: apt-get install apertium apertium-eng-spa).`, true)
          : new TranslationEngineError(`Apertium could not be run: ${e.message}`, false),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) return reject(new TranslationEngineError(`Apertium did not finish within ${timeoutMs} ms.`, false));
      if (code !== 0)
        return reject(new TranslationEngineError(`Apertium exited with ${code}: ${Buffer.concat(err).toString('utf8').trim().slice(0, 300)}`, true));
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
}

/**
 * Runs `apertium <args> <file>` on `input`. The input goes through a file: the apertium script
 * reads /dev/stdin, which cannot be opened when stdin is a socket (as Node's pipes are).
 */
async function runOn(command: string, args: string[], input: string, timeoutMs: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'apertium-'));
  try {
    const file = join(dir, 'input.txt');
    await writeFile(file, input, 'utf8');
    return await run(command, [...args, file], timeoutMs);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Apertium (offline, rule-based; Debian's apertium packages) for air-gapped deployments,
 * through its command (`apertium -u <pair>`, several segments per run, kept apart by marker
 * paragraphs) or through apertium-apy over HTTP (`POST /translate` with `langpair` and `q`).
 * Apertium works per installed pair, so it needs the source language.
 */
export class ApertiumEngine extends TranslationEngine {
  readonly name = 'Apertium';
  readonly limits: EngineLimits;
  override readonly needsSourceLanguage = true;
  private modes?: Promise<string[]>;

  constructor(private readonly options: ApertiumOptions = {}) {
    super();
    this.limits = { maxSegmentChars: 2000, maxRequestChars: 20000, maxBatchSize: 100, ...options.limits };
  }

  private get command(): string {
    return this.options.command ?? 'apertium';
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? 120_000;
  }

  async translate(texts: string[], languages: LanguagePair): Promise<string[]> {
    if (!languages.source) throw new TranslationEngineError('Apertium needs the source language: send source_language.', true);
    const source = iso3(languages.source);
    const target = iso3(languages.target);
    if (!source || !target) throw new TranslationEngineError(`Apertium has no code for ${languages.source} → ${languages.target}.`, true);
    return this.options.url ? this.viaHttp(texts, source, target) : this.viaCommand(texts, source, target, languages.target);
  }

  /** Installed pairs, as `apertium -l` lists them. */
  listModes(): Promise<string[]> {
    this.modes ??= run(this.command, ['-l'], 30_000).then((out) => out.split(/\s+/).filter(Boolean));
    this.modes.catch(() => (this.modes = undefined));
    return this.modes;
  }

  private async viaCommand(texts: string[], source: string, target: string, targetTag: string): Promise<string[]> {
    const modes = await this.listModes();
    const region = targetTag.split('-')[1];
    const mode = [region ? `${source}-${target}_${region}` : null, `${source}-${target}`].find((m) => m && modes.includes(m));
    if (!mode) {
      throw new TranslationEngineError(`Apertium has no ${source}-${target} pair installed (installed: ${modes.join(', ') || 'none'}).`, true);
    }
    const input = texts.map((t, i) => (i === 0 ? t : marker(i) + t)).join('');
    const output = await runOn(this.command, ['-u', mode], input, this.timeoutMs);
    const pieces = output.split(MARKER);
    // split() with a capture group: text, index, text, index, ...
    const found = pieces.filter((_, i) => i % 2 === 1).map(Number);
    if (found.length === texts.length - 1 && found.every((n, i) => n === i + 1)) {
      return pieces.filter((_, i) => i % 2 === 0);
    }
    // The markers did not come through as sent: one run per segment is slower but certain.
    const one: string[] = [];
    for (const t of texts) one.push(await runOn(this.command, ['-u', mode], t, this.timeoutMs));
    return one;
  }

  private async viaHttp(texts: string[], source: string, target: string): Promise<string[]> {
    const url = `${this.options.url!.replace(/\/+$/, '')}/translate`;
    const out: string[] = [];
    for (const q of texts) {
      const answer = await callEngine<{ responseData?: { translatedText?: unknown }; responseStatus?: number }>({
        engine: 'apertium-apy',
        method: 'POST',
        url,
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams({ langpair: `${source}|${target}`, q, markUnknown: 'no' }).toString(),
        timeoutMs: this.timeoutMs,
      });
      out.push(answer.responseData?.translatedText as string);
    }
    return expectTranslations('apertium-apy', texts.length, out);
  }
}
