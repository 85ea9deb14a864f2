export * from './api-exception.filter';
export * from './api-validation.pipe';
export * from './body-check';
export * from './body-parsing';
export * from './client-error';
export * from './compose-middleware';
export * from './digits-id.pipe';
export * from './error-render';
export * from './header-limit';
export * from './pagination/page-query.dto';
export * from './request-id';
export * from './route-table';
export * from './slow-clients';
// Pagination itself lives in the domain lib (services page their own queries); re-exported here.
export { paginate, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@app/domain';
export type { CursorPosition, Page, PageRequest, PaginateOptions } from '@app/domain';
