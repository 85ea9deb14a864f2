import { ConversationEntity } from '../conversation.entity';
import { FactEntity } from '../fact.entity';
import { SummaryEntity } from '../summary.entity';
import { TurnEntity } from '../turn.entity';
import { ConversationDto, FactDto, SummaryDto, TurnDto } from './dto/conversation.dto';

export const presentConversation = (c: ConversationEntity): ConversationDto => ({
  id: c.id,
  case_id: c.caseId,
  language_a: c.languageA,
  language_b: c.languageB,
  status: c.status,
  started_at: c.startedAt.toISOString(),
  ended_at: c.endedAt?.toISOString() ?? null,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

export const presentTurn = (t: TurnEntity): TurnDto => ({
  seq: t.seq,
  speaker: t.speaker,
  language: t.language,
  text: t.text,
  translation: { language: t.translationLanguage, text: t.translation },
  spoken_at: t.spokenAt.toISOString(),
});

export const presentFact = (f: FactEntity): FactDto => ({ id: f.id, label: f.label, value: f.value, recorded_at: f.createdAt.toISOString() });

export const presentSummary = (s: SummaryEntity): SummaryDto => ({
  conversation_id: s.conversationId,
  text: s.text,
  revision: s.revision,
  updated_at: s.updatedAt.toISOString(),
});
