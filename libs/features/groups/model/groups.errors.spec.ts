import { GroupNameTakenError, groupNameTaken } from './groups.errors';

describe('groupNameTaken', () => {
  it('is a typed error (SCIM answers it as 409 uniqueness by its type), with the REST answer unchanged', () => {
    const err = groupNameTaken();
    expect(err).toBeInstanceOf(GroupNameTakenError);
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'validation_failed',
      message: 'name: already used by another group in this organisation',
    });
  });
});
