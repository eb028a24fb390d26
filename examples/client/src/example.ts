// What a client does in its first hour: list products, place an order, and hear its status change. Every document is
// typed by graphql-codegen (src/gql) and sent as a persisted-query hash.
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

export async function runExample({ url, token, log = console.log, subscribed }: ExampleOptions): Promise<ExampleResult> {
  const client = createOrdergraphClient({ url, token, manifest });
  const { apollo, ws } = client;
  const connected = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
  try {
    const { data: catalog } = await apollo.query({ query: ProductsDocument, variables: { limit: 3 } });
    const products = catalog!.products;
    log(`products: ${products.map((product) => `${product.name} (${product.currentPrice})`).join(', ')}`);

    const { data: placed } = await apollo.mutate({
      mutation: PlaceOrderDocument,
      variables: { input: { items: products.slice(0, 2).map((product) => ({ productId: product.id, quantity: 1 })) } },
    });
    const order = placed!.createOrder;
    log(`placed order ${order.id}: ${order.status}, total ${order.total}`);

    const changed = firstValueFrom(
      apollo.subscribe({ query: OrderStatusChangedDocument, variables: { orderId: order.id } }).pipe(filter((event) => event.data != null)),
    );
    await (subscribed ?? (() => connected.then(() => new Promise((resolve) => setTimeout(resolve, 500)))))();
    await apollo.mutate({ mutation: CancelOrderDocument, variables: { id: order.id } });
    const event = await changed;
    if (event.error) throw event.error;
    const to = event.data!.orderStatusChanged.status;
    log(`order ${order.id} is now ${to} (at ${event.data!.orderStatusChanged.updatedAt})`);
    return { products: products.map((product) => product.name), orderId: order.id, total: order.total, statusChange: { from: order.status, to } };
  } finally {
    await client.stop();
  }
}
