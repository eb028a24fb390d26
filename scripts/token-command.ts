// What npm run token does, as a function of its command line and environment: the script wraps it, tests call it.
import { parseArgs } from 'node:util';
import { DEV_JWT_SECRET, ROLES, signDevToken, toGlobalId, type Role } from '@ordergraph/core';
import { SEED_ADMIN_LOCAL_ID, SEED_USER_LOCAL_ID } from '@ordergraph/seed';

/** Prints a development token for `args`, signed with the JWT settings of `env`; returns the exit code. */
export async function tokenCommand(args: string[], env: NodeJS.ProcessEnv, out: Pick<Console, 'log' | 'error'>): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      role: { type: 'string', default: 'USER' },
      sub: { type: 'string' },
      expires: { type: 'string', default: '12h' },
    },
  });
  const role = values.role.toUpperCase() as Role;
  if (!ROLES.includes(role)) {
    out.error(`--role must be one of ${ROLES.join(', ')}`);
    return 2;
  }
  // Without --sub, the token speaks for the seeded admin or the first seeded user.
  const sub = values.sub ?? toGlobalId('User', role === 'ADMIN' ? SEED_ADMIN_LOCAL_ID : SEED_USER_LOCAL_ID);
  const secret = env['JWT_SECRET'] || DEV_JWT_SECRET;
  // The issuer and audience the gateway checks, when it is told to.
  const issuer = env['JWT_ISSUER'] || undefined;
  const audience = env['JWT_AUDIENCE'] || undefined;
  out.log(await signDevToken(secret, { sub, role, expiresIn: values.expires, issuer, audience }));
  return 0;
}
