import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';

/** `{id}` of a person or invitation route. */
export { ApiIdParam } from '@web/http';

/** `{status: "<value>", data: Model}`: the 201 and 202 answers of adding a person by address. */
export function ApiStatusData(model: Type<unknown>, status: number, value: string, description: string) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description,
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['status', 'data'],
        properties: { status: { type: 'string', enum: [value] }, data: { $ref: getSchemaPath(model) } },
      },
    }),
  );
}

/** The adding-by-address rule, as the operation's description. */
export const ADD_PERSON_RULE = `
Adds a person by email address. One address has at most one account platform-wide, and an account is in at most one organisation.
The answer depends on where the address stands:

- **Already a member of this organisation** → 200 \`{data: Person}\`, unchanged (the other fields of the request are not applied; use PATCH).
- **A member of another organisation** → 409 \`in_another_organisation\`; nothing changes.
- **No account (or an account in no organisation), and the address's domain is one of the organisation's verified domains** →
  the account is made (or joins) as a member with the given name, job title and group → 201 \`{status: "created", data: Person}\`,
  and a welcome email is sent.
- **Otherwise** → an invitation → 202 \`{status: "invited", data: Invitation}\`; an email with an accept link is sent. The link
  opens a page where the person accepts; they then become a member, and the \`user.joined\` event is sent. An address that already
  has a pending invitation gets that invitation back (no second invitation, no second email); an expired one is replaced.

\`group_id\`, when given, must be a group of this organisation (else 422 \`validation_failed\`); a group carrying a permission the
API cannot grant (such as \`organisation.own\`) answers 403 \`permission_not_grantable\`. Verified domains are set by the service's operator.
Emails are sent once the change is committed, so a failed or replayed request sends none.
`.trim();
