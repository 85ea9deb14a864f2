import { ApiProperty } from '@nestjs/swagger';

/** A code of the fixed permission catalogue. */
export class PermissionDto {
  @ApiProperty({ example: 'people.manage', description: "The code used in a group's `permissions`." })
  code: string;

  @ApiProperty({ example: 'Manage people and groups' })
  name: string;

  @ApiProperty({
    example: true,
    description: 'Whether a connection may grant (or remove) the code. Granting one that is not answers 403 `permission_not_grantable`.',
  })
  grantable: boolean;
}
