// npm run token -- --role ADMIN [--sub <user global ID>] [--expires 1h]: mints a development (HS256) token, with the
// JWT_SECRET, JWT_ISSUER and JWT_AUDIENCE of the environment when they are set.
import { parseArgs } from 'node:util';
import { DEV_JWT_SECRET, ROLES, signDevToken, toGlobalId, type Role } from '@ordergraph/common';
import { SEED_ADMIN_LOCAL_ID, SEED_USER_LOCAL_ID } from '@ordergraph/seed';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'USER' },
    sub: { type: 'string' },
    expires: { type: 'string', default: '12h' },
  },
});
const role = values.role?.toUpperCase() as Role;
if (!ROLES.includes(role)) {
  console.error(`--role must be one of ${ROLES.join(', ')}`);
  process.exit(2);
}
// Without --sub, the token speaks for the seeded admin or the first seeded user.
const sub = values.sub ?? toGlobalId('User', role === 'ADMIN' ? SEED_ADMIN_LOCAL_ID : SEED_USER_LOCAL_ID);
const secret = process.env['JWT_SECRET'] || DEV_JWT_SECRET;
// The issuer and audience the gateway checks, when it is told to.
const issuer = process.env['JWT_ISSUER'] || undefined;
const audience = process.env['JWT_AUDIENCE'] || undefined;
console.log(await signDevToken(secret, { sub, role, expiresIn: values.expires ?? '12h', issuer, audience }));
