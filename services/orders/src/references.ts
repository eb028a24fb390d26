/** An entity another subgraph owns (User, Product): this subgraph knows only its key, the owner resolves the rest. */
export interface EntityReference {
  id: string;
}
