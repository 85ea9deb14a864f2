import { Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';

interface TxContext {
  manager: EntityManager;
  afterCommit: Array<() => Promise<void> | void>;
}

/**
 * Carries the current transaction through async calls, so a service's writes join the
 * transaction an outer caller opened (the idempotency interceptor opens one per IK request,
 * making the effect and its idempotency record commit or roll back together).
 */
@Injectable()
export class TransactionHost {
  private readonly als = new AsyncLocalStorage<TxContext>();
  private readonly logger = new Logger(TransactionHost.name);

  constructor(private readonly dataSource: DataSource) {}

  /** The manager of the current transaction, or the pool's manager outside one. */
  get manager(): EntityManager {
    return this.als.getStore()?.manager ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return this.als.getStore() !== undefined;
  }

  /** Runs `fn` in the current transaction, or in a new one committed when `fn` resolves. */
  async run<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = this.als.getStore();
    if (current) return fn(current.manager);
    const ctx: TxContext = { manager: this.dataSource.manager, afterCommit: [] };
    const result = await this.dataSource.transaction(async (manager) => {
      ctx.manager = manager;
      return this.als.run(ctx, () => fn(manager));
    });
    for (const cb of ctx.afterCommit) await this.runHook(cb);
    return result;
  }

  /**
   * Runs `cb` once the outermost transaction has committed (at once when there is none). The
   * change is already durable then, so a failing hook is logged, never reported as the change
   * failing (an idempotent replay must answer what the first call answered).
   */
  async afterCommit(cb: () => Promise<void> | void): Promise<void> {
    const current = this.als.getStore();
    if (current) current.afterCommit.push(cb);
    else await this.runHook(cb);
  }

  private async runHook(cb: () => Promise<void> | void): Promise<void> {
    try {
      await cb();
    } catch (err) {
      this.logger.error(`after-commit hook failed: ${(err as Error).message}`);
    }
  }
}
