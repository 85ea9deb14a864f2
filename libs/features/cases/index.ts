export * from './case.entity';
export * from './cases.module';
export * from './cases.service';
export * from './cli/case.command';
export * from './http/cases-http.module';
export * from './http/no-body.pipe';
