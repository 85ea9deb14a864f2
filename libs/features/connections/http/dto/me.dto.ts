import { ApiProperty } from '@nestjs/swagger';
import { SCOPES } from '@kernel/core';
import { ID_SCHEMA_PATTERN } from '@web/http';

export class MeOrganisationDto {
  @ApiProperty({ example: '1', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: 'Northwind Health' })
  name: string;
}

export class MeKeyDto {
  @ApiProperty({ example: '3', pattern: ID_SCHEMA_PATTERN, description: 'Id of the key this call was made with.' })
  id: string;

  @ApiProperty({ example: '9f2c', description: 'Last four characters, to tell keys apart. The key itself is never answered.' })
  last_four: string;
}

/** The connection the key belongs to. */
export class MeDto {
  @ApiProperty({ example: '2', pattern: ID_SCHEMA_PATTERN, description: 'Id of the connection.' })
  id: string;

  @ApiProperty({ example: 'Case management system' })
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, description: 'Scopes the connection holds.' })
  scopes: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({ type: MeOrganisationDto })
  organisation: MeOrganisationDto;

  @ApiProperty({ type: MeKeyDto })
  key: MeKeyDto;
}
