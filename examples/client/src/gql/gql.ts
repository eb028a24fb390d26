/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "mutation CancelOrder($id: ID!) {\n  cancelOrder(id: $id) {\n    id\n    status\n  }\n}": typeof types.CancelOrderDocument,
    "subscription OrderStatusChanged($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    id\n    status\n    updatedAt\n  }\n}": typeof types.OrderStatusChangedDocument,
    "mutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    status\n    total\n    items {\n      quantity\n      unitPrice\n      product {\n        name\n      }\n    }\n  }\n}": typeof types.PlaceOrderDocument,
    "query Products($limit: Int!) {\n  products(limit: $limit) {\n    id\n    name\n    currentPrice\n  }\n}": typeof types.ProductsDocument,
};
const documents: Documents = {
    "mutation CancelOrder($id: ID!) {\n  cancelOrder(id: $id) {\n    id\n    status\n  }\n}": types.CancelOrderDocument,
    "subscription OrderStatusChanged($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    id\n    status\n    updatedAt\n  }\n}": types.OrderStatusChangedDocument,
    "mutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    status\n    total\n    items {\n      quantity\n      unitPrice\n      product {\n        name\n      }\n    }\n  }\n}": types.PlaceOrderDocument,
    "query Products($limit: Int!) {\n  products(limit: $limit) {\n    id\n    name\n    currentPrice\n  }\n}": types.ProductsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CancelOrder($id: ID!) {\n  cancelOrder(id: $id) {\n    id\n    status\n  }\n}"): (typeof documents)["mutation CancelOrder($id: ID!) {\n  cancelOrder(id: $id) {\n    id\n    status\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription OrderStatusChanged($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    id\n    status\n    updatedAt\n  }\n}"): (typeof documents)["subscription OrderStatusChanged($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    id\n    status\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    status\n    total\n    items {\n      quantity\n      unitPrice\n      product {\n        name\n      }\n    }\n  }\n}"): (typeof documents)["mutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    status\n    total\n    items {\n      quantity\n      unitPrice\n      product {\n        name\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Products($limit: Int!) {\n  products(limit: $limit) {\n    id\n    name\n    currentPrice\n  }\n}"): (typeof documents)["query Products($limit: Int!) {\n  products(limit: $limit) {\n    id\n    name\n    currentPrice\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;