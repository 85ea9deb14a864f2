import { Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';

interface TxContext {
  manager: EntityManager;
  afterCommit: Array<() => Promise<void> | void>;
  /** Set in a deferred scope: its transaction, once the first `run` has opened it. */
  deferred?: { opening?: Promise<QueryRunner> };
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
    const current = this.als.getStore();
    return current !== undefined && (!current.deferred || current.deferred.opening !== undefined);
  }

  /** Runs `fn` in the current transaction, or in a new one committed when `fn` resolves. */
  async run<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = this.als.getStore();
    if (current?.deferred) {
      current.deferred.opening ??= this.open(current);
      await current.deferred.opening;
    }
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
   * Runs `fn` with its transaction deferred: what it does before its first `run` (a DNS lookup,
   * a POST) holds no pooled connection and its plain queries autocommit; that first `run` opens
   * the transaction, which stays open to the end of `fn`. Then `finish` writes in it (in a short
   * new one if none was opened) and it commits: the Idempotency-Key record and the effect
   * together, without a connection held through the network I/O before.
   */
  async deferred<T>(fn: () => Promise<T>, finish: (result: T, manager: EntityManager) => Promise<void>): Promise<T> {
    const ctx: TxContext = { manager: this.dataSource.manager, afterCommit: [], deferred: {} };
    let result: T;
    try {
      result = await this.als.run(ctx, fn);
    } catch (err) {
      const runner = await ctx.deferred?.opening?.catch(() => undefined);
      if (runner) {
        await runner.rollbackTransaction().catch(() => undefined);
        await runner.release();
      }
      throw err;
    }
    const runner = await ctx.deferred?.opening;
    if (!runner) {
      await this.dataSource.transaction((m) => finish(result, m));
    } else {
      try {
        await finish(result, runner.manager);
        await runner.commitTransaction();
      } catch (err) {
        await runner.rollbackTransaction().catch(() => undefined);
        throw err;
      } finally {
        await runner.release();
      }
    }
    for (const cb of ctx.afterCommit) await this.runHook(cb);
    return result;
  }

  private async open(ctx: TxContext): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
    } catch (err) {
      await runner.release();
      throw err;
    }
    ctx.manager = runner.manager;
    return runner;
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
