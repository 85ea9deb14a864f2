import { Controller, Delete, Get, Patch, Post, Put, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ScimContentTypeInterceptor } from './scim-content-type.interceptor';
import { ScimNotImplemented } from '../model/scim-error';

const notImplemented = (): never => {
  throw new ScimNotImplemented('/Me is not implemented: a key belongs to a connection, not to a User. Use /Users.');
};

/**
 * RFC 7644 §3.11: `/Me` is the authenticated subject's own User. A key here is a connection's, not
 * a person's, so there is no such User: every method answers 501, as the RFC asks of a service
 * that does not support it (any valid key; no scope needed, as for discovery).
 */
@ApiExcludeController()
@Controller('scim/v2/Me')
@UseInterceptors(ScimContentTypeInterceptor)
export class ScimMeController {
  @Get()
  get(): never {
    return notImplemented();
  }

  @Post()
  create(): never {
    return notImplemented();
  }

  @Put()
  replace(): never {
    return notImplemented();
  }

  @Patch()
  patch(): never {
    return notImplemented();
  }

  @Delete()
  remove(): never {
    return notImplemented();
  }
}
