import { Controller, Get, Param, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AppConfig } from '@kernel/config';
import { notFound } from '@kernel/core';
import { ScimContentTypeInterceptor } from './scim-content-type.interceptor';
import { SCIM_URN } from '../model/scim-schemas';
import { ScimJson } from '../model/scim-patch';
import { scimResourceTypes, scimSchemas, scimServiceProviderConfig } from '../model/scim-discovery';

const list = (items: ScimJson[]): ScimJson => ({
  schemas: [SCIM_URN.listResponse],
  totalResults: items.length,
  startIndex: 1,
  itemsPerPage: items.length,
  Resources: items,
});

/** RFC 7644 §4 discovery: any valid key reads it; query parameters are ignored (nothing to filter). */
@ApiExcludeController()
@Controller('scim/v2')
@UseInterceptors(ScimContentTypeInterceptor)
export class ScimDiscoveryController {
  constructor(private readonly config: AppConfig) {}

  @Get('ServiceProviderConfig')
  serviceProviderConfig(): ScimJson {
    return scimServiceProviderConfig(this.config.publicBaseUrl);
  }

  @Get('ResourceTypes')
  resourceTypes(): ScimJson {
    return list(scimResourceTypes(this.config.publicBaseUrl));
  }

  @Get('ResourceTypes/:name')
  resourceType(@Param('name') name: string): ScimJson {
    const found = scimResourceTypes(this.config.publicBaseUrl).find((r) => r.id === name);
    if (!found) throw notFound('resource type');
    return found;
  }

  @Get('Schemas')
  schemas(): ScimJson {
    return list(scimSchemas(this.config.publicBaseUrl));
  }

  @Get('Schemas/:id')
  schema(@Param('id') id: string): ScimJson {
    const found = scimSchemas(this.config.publicBaseUrl).find((s) => s.id === id);
    if (!found) throw notFound('schema');
    return found;
  }
}
