// Operation documents more than one suite sends, written once so the suites cannot drift apart.

/** updateOrderResult with every member of UpdateOrderResult selected: the order, or the refusal with its fields. */
export const UPDATE_ORDER_RESULT = `mutation UpdateOrderResult($id: ID!, $input: UpdateOrderInput!) {
  updateOrderResult(id: $id, input: $input) {
    __typename
    ... on Order { id status }
    ... on OrderNotFound { message orderId }
    ... on InsufficientPermissions { message requiredRole }
    ... on InvalidOrderTransition { message from to }
  }
}`;
