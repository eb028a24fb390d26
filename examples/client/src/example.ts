// What a client does in its first hour: list products, place an order, and hear its status change. Every document is
// typed by graphql-codegen (src/gql) and sent as a persisted-query hash.
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { firstValueFrom, filter } from 'rxjs';
import manifest from '../persisted-query-manifest.json' with { type: 'json' };
import { createOrdergraphClient } from './client.js';
import { CancelOrderDocument, OrderStatusChangedDocument, PlaceOrderDocument, ProductsDocument, type OrderStatus } from './gql/graphql.js';

export interface ExampleOptions {
  url: string;
  token: string;
  log?: (line: string) => void;
  /**
   * Resolves once the gateway serves the status subscription, so the cancellation cannot overtake it (graphql-ws
   * acknowledges a connection, not a subscription). Default: once the WebSocket is connected, plus a moment.
   */
  subscribed?: () => Promise<void>;
}

export interface ExampleResult {
  products: string[];
  orderId: string;
  total: number;
  statusChange: { from: OrderStatus; to: OrderStatus };
}

/** Why a step failed, in one line: the gateway's codes when it answered with errors, else the error's own message. */
export class ExampleError extends Error {
  constructor(step: string, cause: unknown) {
    super(`${step} failed: ${ExampleError.describe(cause)}`.replace(/\s*\n\s*/g, ' '), { cause });
    this.name = 'ExampleError';
  }

  private static describe(cause: unknown): string {
    if (CombinedGraphQLErrors.is(cause)) {
      const errors = cause.errors.map((error) => `${error.message}${error.extensions?.['code'] ? ` (${String(error.extensions['code'])})` : ''}`).join('; ');
      const persisted = cause.errors.some((error) => String(error.extensions?.['code'] ?? '').startsWith('PERSISTED_QUERY'));
      // The documents are the manifest's: a gateway that still refuses them runs another manifest, or none in allow-list mode.
      return persisted ? `${errors}; the gateway takes neither the hash nor the document (is it in required mode with another manifest?)` : errors;
    }
    if (cause instanceof Error) return cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message;
    return String(cause);
  }
}

/** Runs `action`, failing as ExampleError naming `step`. */
async function step<T>(name: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw error instanceof ExampleError ? error : new ExampleError(name, error);
  }
}

export async function runExample({ url, token, log = console.log, subscribed }: ExampleOptions): Promise<ExampleResult> {
  const client = createOrdergraphClient({ url, token, manifest });
  const { apollo, ws } = client;
  const connected = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
  try {
    const { data: catalog } = await step(`listing products at ${url}`, () => apollo.query({ query: ProductsDocument, variables: { limit: 3 } }));
    const products = catalog!.products;
    log(`products: ${products.map((product) => `${product.name} (${product.currentPrice})`).join(', ')}`);

    const { data: placed } = await step('placing an order', () =>
      apollo.mutate({
        mutation: PlaceOrderDocument,
        variables: { input: { items: products.slice(0, 2).map((product) => ({ productId: product.id, quantity: 1 })) } },
      }),
    );
    const order = placed!.createOrder;
    log(`placed order ${order.id}: ${order.status}, total ${order.total}`);

    // The first event or refusal; the subscription ending without either is a failure too, not an empty sequence.
    const changed = step('subscribing to the order\'s status', async () => {
      const event = await firstValueFrom(
        apollo.subscribe({ query: OrderStatusChangedDocument, variables: { orderId: order.id } }).pipe(filter((event) => event.data != null || event.error != null)),
        { defaultValue: undefined },
      );
      if (!event) throw new Error('the subscription ended without an event');
      if (event.error) throw event.error;
      return event.data!.orderStatusChanged;
    });
    // Awaited below, after the cancellation; a refusal meanwhile must not count as an unhandled rejection.
    changed.catch(() => undefined);
    await Promise.race([changed, (subscribed ?? (() => connected.then(() => new Promise((resolve) => setTimeout(resolve, 500)))))()]);
    await step('cancelling the order', () => apollo.mutate({ mutation: CancelOrderDocument, variables: { id: order.id } }));
    const { status: to, updatedAt } = await changed;
    log(`order ${order.id} is now ${to} (at ${updatedAt})`);
    return { products: products.map((product) => product.name), orderId: order.id, total: order.total, statusChange: { from: order.status, to } };
  } finally {
    await client.stop();
  }
}
