import { UsageError } from '@kernel/cli';
import { parseCommandLine } from './program';

describe('admin command line (commander)', () => {
  const help = (argv: string[]) => {
    const invocation = parseCommandLine(argv);
    if (invocation.kind !== 'help') throw new Error(`expected help for ${argv.join(' ')}`);
    return invocation.text;
  };

  it('--help on a command lists its subcommands with their operands', () => {
    const text = help(['org', '--help']);
    expect(text).toContain('Usage: npm run admin -- org');
    expect(text).toContain('create --name NAME');
    expect(text).toContain('allowlist ORG [CIDR...]');
    expect(text).not.toContain('connection create');
  });

  it('--help (and -h) on a subcommand shows its usage and options, and the global --json', () => {
    for (const flag of ['--help', '-h']) {
      const text = help(['person', 'add', flag]);
      expect(text).toContain('Usage: npm run admin -- person add --org ORG --email E');
      expect(text).toMatch(/--org <ORG>/);
      expect(text).toMatch(/--job-title <T>/);
      expect(text).toMatch(/--json/);
    }
  });

  it('picks the command, its operands and its options by flag name', () => {
    const invocation = parseCommandLine(['person', 'add', '--org', '7', '--email', 'a@example.org', '--job-title', '', '--json']);
    expect(invocation.kind).toBe('run');
    if (invocation.kind !== 'run') return;
    expect(invocation.command.words).toEqual(['person', 'add']);
    expect(invocation.operands).toEqual([]);
    expect(Object.fromEntries(invocation.options)).toEqual({ org: '7', email: 'a@example.org', 'job-title': '', json: true });
  });

  it.each([
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['org'], 'unknown command "org"; "org" takes create|module|policy|allowlist|review|domain'],
    [['org', 'explode'], 'unknown command "org explode"'],
    [['org', 'create', '--name', 'x', '--colour', 'red'], "unknown option '--colour'"],
    [['org', 'domain', '1', 'list', 'x', 'y'], 'unexpected argument "y" for org domain'],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});
