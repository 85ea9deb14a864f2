import { DeliveryLogService, LoggedDelivery } from '../delivery-log.service';
import { Command, CommandContext } from '@kernel/cli';
import { LISTEN_COMMAND } from './listen.command';

const log = async (ctx: CommandContext) => (await ctx.app()).get(DeliveryLogService);

const present = ({ delivery: d, attempts }: LoggedDelivery) => ({
  id: d.id,
  event: d.event,
  state: d.state,
  series: d.series,
  attempts: d.attempts,
  give_up_reason: d.giveUpReason,
  occurred_at: d.occurredAt.toISOString(),
  created_at: d.createdAt.toISOString(),
  finished_at: d.finishedAt?.toISOString() ?? null,
  attempt_log: attempts.map((a) => ({
    series: a.series,
    number: a.number,
    attempted_at: a.attemptedAt.toISOString(),
    succeeded: a.succeeded,
    status: a.status,
    duration_ms: a.durationMs,
    error: a.error,
  })),
});

/** The delivery log of a webhook and the resend a manager can ask for (the console will call the same service). */
export const WEBHOOK_COMMANDS: Command[] = [
  {
    words: ['webhook', 'deliveries'],
    usage: 'WEBHOOK [--limit N] [--cursor C]',
    summary: "a webhook's deliveries, newest first, each with every attempt (status, duration, error)",
    options: ['limit', 'cursor'],
    arity: 1,
    async run(ctx) {
      const limit = ctx.args.option('limit');
      const page = await (
        await log(ctx)
      ).list(ctx.args.operand(0, 'WEBHOOK'), {
        limit: limit === undefined ? undefined : Number(limit),
        cursor: ctx.args.option('cursor'),
      });
      const deliveries = page.items.map(present);
      return {
        json: { deliveries, next_cursor: page.nextCursor },
        text: deliveries.length
          ? deliveries.flatMap((d) => [
              `${d.id} ${d.event} ${d.state}${d.give_up_reason ? ` (${d.give_up_reason})` : ''} series ${d.series}, ${d.attempts} attempt(s)`,
              ...d.attempt_log.map(
                (a) =>
                  `  #${a.series}.${a.number} ${a.attempted_at} ${a.succeeded ? 'ok' : 'failed'} ${a.status ?? '-'} ${a.duration_ms} ms${a.error ? ` ${a.error}` : ''}`,
              ),
            ])
          : ['no deliveries'],
      };
    },
  },
  {
    words: ['webhook', 'resend'],
    usage: 'DELIVERY',
    summary: 'send a delivery again: a new series of attempts under the same delivery id',
    arity: 1,
    async run(ctx) {
      const d = await (await log(ctx)).resend(ctx.args.operand(0, 'DELIVERY'));
      return { json: { id: d.id, state: d.state, series: d.series }, text: [`delivery ${d.id}: ${d.state}, series ${d.series}`] };
    },
  },
  LISTEN_COMMAND,
];
