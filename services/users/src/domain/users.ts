// User rules (what a new user must meet, pure so they are tested without a database), and every users write and
// search applied to the store and the peers.
import { badUserInput, declareInvalidation, emailTaken, isAdmin, requireAdmin, toGlobalId, type Viewer } from '@ordergraph/core';
import { SEARCH_LIMIT } from '@ordergraph/subgraph-kit';
import type { Reference } from '../mappers.js';
import type { NodeOwners } from '../peers/nodes.js';
import type { SearchFanOut } from '../peers/search.js';
import { EmailTakenError, type NewUser, type UserDoc, type UserStore } from '../store/users.js';
import { mergeHits } from './search.js';

/** Longest address SMTP allows (RFC 5321 path limit). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 200;
/** Something@something.tld with no spaces: deliverability is the mail server's business, not ours. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** C0 and C1 control characters and DEL (NUL included): never part of a name or an address, trouble in logs and mails. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Throws BAD_USER_INPUT naming the first field that breaks a rule. Cheap checks first: lengths before any pattern,
 * so an oversized value costs nothing however it is made.
 */
export function validateNewUser(input: { email: string; name: string }): void {
  if (input.email.length > MAX_EMAIL_LENGTH || CONTROL_CHARACTERS.test(input.email) || !EMAIL_PATTERN.test(input.email.trim())) {
    throw badUserInput('email must be a valid address', { field: 'email' });
  }
  if (input.name.length > MAX_NAME_LENGTH || input.name.trim().length === 0) {
    throw badUserInput(`name must be 1 to ${MAX_NAME_LENGTH} characters`, { field: 'name' });
  }
  if (CONTROL_CHARACTERS.test(input.name)) throw badUserInput('name must not contain control characters', { field: 'name' });
}

/** What the user rules act on: the users collection, and the subgraphs search and node(id) ask. */
export interface UserDomainDeps {
  store: UserStore;
  search: SearchFanOut;
  nodes: NodeOwners;
}

/**
 * The user rules applied to the store and the peers: what resolvers call for every write and for what spans
 * subgraphs. `authorization` is the caller's header, forwarded to the peers so each applies its own rules.
 */
export function createUserDomain({ store, search, nodes }: UserDomainDeps) {
  return {
    /** Administrators only. */
    async create(viewer: Viewer, input: { email: string; name: string; role?: NewUser['role'] | null | undefined }): Promise<UserDoc> {
      requireAdmin(viewer);
      validateNewUser(input);
      try {
        const user = await store.create({ email: input.email, name: input.name, role: input.role ?? 'USER' });
        // For the gateway's entity cache: the lists of users that may now hold it.
        declareInvalidation({ kind: 'entity', subgraph: 'users', type: 'User', key: { id: toGlobalId('User', user._id) } });
        return user;
      } catch (error) {
        if (error instanceof EmailTakenError) throw emailTaken(input.email.trim().toLowerCase());
        throw error;
      }
    },

    /** Open to everyone: each owner applies its own rules (users for administrators only, orders for their owner). */
    async search(viewer: Viewer, query: string, authorization: string | undefined): Promise<(UserDoc | Reference)[]> {
      const [own, remote] = await Promise.all([
        isAdmin(viewer) ? store.search(query, SEARCH_LIMIT) : Promise.resolve([]),
        search.remote(query, authorization),
      ]);
      const users = new Map(own.map(({ doc }) => [toGlobalId('User', doc._id), doc]));
      const ownHits = [...users.keys()].map((id, i) => ({ id, score: own[i]!.score, typename: 'User' as const }));
      const hits = mergeHits<'User' | 'Order' | 'Product'>([...ownHits, ...remote]);
      // Users are already loaded; references of other types are resolved by their owners through federation.
      return hits.map((hit) => (hit.__typename === 'User' ? users.get(hit.id)! : { __typename: hit.__typename, id: hit.id }));
    },

    /** A node another subgraph owns, once its owner has resolved it for the caller with its own rules. */
    resolveNode: (reference: Reference, authorization: string | undefined): Promise<Reference> => nodes.resolve(reference, authorization),
  };
}

export type UserDomain = ReturnType<typeof createUserDomain>;
