import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { PeopleAdder } from '../people-adder';
import { PeopleService } from '../people.service';
import { DigitsIdPipe, SyncPageQueryDto, SYNC_LIST_NOTE, syncPageRequest, ApiData, ApiErrors } from '@web/http';
import { Idempotent } from '@web/idempotency';
import type { Response } from 'express';
import { CreatePersonDto } from './dto/create-person.dto';
import { InvitationDto } from './dto/invitation.dto';
import { PersonDto } from './dto/person.dto';
import { UpdatePersonDto } from './dto/update-person.dto';
import { ADD_PERSON_RULE, ApiIdParam, ApiStatusData } from './people-api-docs';
import { presentInvitation, presentPerson } from './people.presenter';

type AddAnswer = { data: PersonDto } | { status: 'created'; data: PersonDto } | { status: 'invited'; data: InvitationDto };

@ApiTags('People')
@Controller('v1/users')
export class UsersController {
  constructor(
    private readonly people: PeopleService,
    private readonly adder: PeopleAdder,
  ) {}

  @Get()
  @RequireScopes('users:read')
  @ApiOperation({
    operationId: 'listUsers',
    summary: 'List people',
    description: `Members of the organisation, newest first by \`joined_at\`.${SYNC_LIST_NOTE}`,
  })
  @ApiData(PersonDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() query: SyncPageQueryDto): Promise<{ data: PersonDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await this.people.list(p.organisationId, syncPageRequest(query));
    return { data: items.map(presentPerson), next_cursor: nextCursor };
  }

  @Post()
  @RequireScopes('users:write')
  @Idempotent()
  @ApiOperation({ operationId: 'addUser', summary: 'Add a person by address: created, invited, or already here', description: ADD_PERSON_RULE })
  @ApiData(PersonDto, { status: 200, description: 'Already a member of this organisation; nothing changed.' })
  @ApiStatusData(PersonDto, 201, 'created', 'The address is on a verified domain: the person was added; a welcome email was sent.')
  @ApiStatusData(InvitationDto, 202, 'invited', 'The person was invited (or already had a pending invitation); the email carries the accept link.')
  @ApiErrors('permission_not_grantable', 'in_another_organisation', 'idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async add(@CurrentPrincipal() p: Principal, @Body() body: CreatePersonDto, @Res({ passthrough: true }) res: Response): Promise<AddAnswer> {
    const input = { email: body.email, name: body.name, jobTitle: body.job_title, groupId: body.group_id };
    const result = await this.adder.add(p.organisationId, input, 'api', p.connectionId);
    if (result.outcome === 'invited') {
      res.status(202);
      return { status: 'invited', data: presentInvitation(result.invitation) };
    }
    res.status(result.outcome === 'created' ? 201 : 200);
    return result.outcome === 'created' ? { status: 'created', data: presentPerson(result.person) } : { data: presentPerson(result.person) };
  }

  @Get(':id')
  @RequireScopes('users:read')
  @ApiOperation({ operationId: 'getUser', summary: 'Get a person', description: 'A member of this organisation; anyone else answers 404.' })
  @ApiIdParam('person')
  @ApiData(PersonDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<{ data: PersonDto }> {
    return { data: presentPerson(await this.people.get(p.organisationId, id)) };
  }

  @Patch(':id')
  @RequireScopes('users:write')
  @ApiOperation({
    operationId: 'updateUser',
    summary: 'Edit a person',
    description:
      'Changes name, job title, group and disabled; fields not sent are kept. Moving the person into a group that carries a permission the API ' +
      'cannot grant answers 403 `permission_not_grantable`. A change of group or disabled that would leave no active person able to manage ' +
      'people, or no active owner (`organisation.own`) where there was one, answers 409 `last_people_manager` and changes nothing.',
  })
  @ApiIdParam('person')
  @ApiData(PersonDto)
  @ApiErrors('permission_not_grantable', 'last_people_manager', 'validation_failed')
  async update(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: UpdatePersonDto): Promise<{ data: PersonDto }> {
    const change = { name: body.name, jobTitle: body.job_title, groupId: body.group_id, disabled: body.disabled };
    return { data: presentPerson(await this.people.update(p.organisationId, id, change)) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('users:write')
  @ApiOperation({
    operationId: 'removeUser',
    summary: 'Remove a person from the organisation',
    description:
      'The person leaves the organisation and their group; the account remains and can be added again. Removing the last active person ' +
      'able to manage people, or the last active owner (`organisation.own`), answers 409 `last_people_manager`.',
  })
  @ApiIdParam('person')
  @ApiNoContentResponse({ description: 'Removed from the organisation.' })
  @ApiErrors('last_people_manager')
  async remove(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.people.remove(p.organisationId, id);
  }
}
