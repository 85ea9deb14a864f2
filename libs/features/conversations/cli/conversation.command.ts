import { ConversationIngestService } from '../conversation-ingest.service';
import { UsageError, Command, CommandContext } from '@kernel/cli';

const ingest = async (ctx: CommandContext) => (await ctx.app()).get(ConversationIngestService);

/**
 * What the platform's interpreting app does to a conversation, for operators and demos:
 * start, turns, facts, end (conversation.ended), summary (summary.ready).
 */
export const CONVERSATION_COMMANDS: Command[] = [
  {
    words: ['conversation', 'start'],
    usage: '--case CASE --languages A,B',
    summary: 'start a conversation in an open case, between two languages',
    options: ['case', 'languages'],
    arity: 0,
    async run(ctx) {
      const caseId = ctx.args.requireOption('case');
      const languages = ctx.args
        .requireOption('languages')
        .split(',')
        .map((l) => l.trim());
      if (languages.length !== 2 || languages.some((l) => !l)) throw new UsageError('--languages takes two language codes, such as en,es');
      const conversation = await (await ingest(ctx)).start(caseId, languages[0], languages[1]);
      return {
        json: { id: conversation.id },
        text: [`conversation ${conversation.id} started in case ${conversation.caseId} (${conversation.languageA}/${conversation.languageB})`],
      };
    },
  },
  {
    words: ['conversation', 'turn'],
    usage: 'CONV --speaker S --language L --text T --translation T2',
    summary: "append a turn: what was said in one of the conversation's languages, and its translation",
    options: ['speaker', 'language', 'text', 'translation'],
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'CONV');
      const [speaker, language, text, translation] = ['speaker', 'language', 'text', 'translation'].map((o) => ctx.args.requireOption(o));
      const turn = await (await ingest(ctx)).appendTurn(id, { speaker, language, text, translation });
      return { json: { id: turn.id, seq: turn.seq }, text: [`turn ${turn.seq} added to conversation ${id} (${turn.language} → ${turn.translationLanguage})`] };
    },
  },
  {
    words: ['conversation', 'fact'],
    usage: 'CONV --label L --value V',
    summary: 'record a fact of a conversation',
    options: ['label', 'value'],
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'CONV');
      const fact = await (await ingest(ctx)).recordFact(id, ctx.args.requireOption('label'), ctx.args.requireOption('value'));
      return { json: { id: fact.id }, text: [`fact ${fact.id} recorded in conversation ${id}: ${fact.label}`] };
    },
  },
  {
    words: ['conversation', 'end'],
    usage: 'CONV',
    summary: 'end a conversation (sends conversation.ended when it has turns)',
    arity: 1,
    async run(ctx) {
      const conversation = await (await ingest(ctx)).end(ctx.args.operand(0, 'CONV'));
      return {
        json: { id: conversation.id, status: conversation.status },
        text: [`conversation ${conversation.id}: ${conversation.status}`],
      };
    },
  },
  {
    words: ['conversation', 'summary'],
    usage: 'CONV --text T',
    summary: "write or rewrite a conversation's summary (sends summary.ready)",
    options: ['text'],
    arity: 1,
    async run(ctx) {
      const id = ctx.args.operand(0, 'CONV');
      const summary = await (await ingest(ctx)).writeSummary(id, ctx.args.requireOption('text'));
      return {
        json: { conversation_id: summary.conversationId, revision: summary.revision },
        text: [`summary of conversation ${summary.conversationId} written (revision ${summary.revision})`],
      };
    },
  },
];
