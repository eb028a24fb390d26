import { normalizedExecutor } from '@graphql-tools/executor';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { parse, GraphQLSchema } from 'graphql';
let schema = makeExecutableSchema({ typeDefs: `
 interface Node { id: ID! }
 type Item implements Node { id: ID! name: String subs: [Item!]! }
 type Query { items: [Item!]! item: Item node: Node }`, resolvers: {
   Query: { items: () => [1,2,3].map(i=>({id:i, name:'n'+i})), item: () => ({id: 9, name: 'x'}), node: () => ({id: 1, name: 'a', __typename: 'Item'}) },
   Item: { subs: (p: any) => [{id: p.id*10, name: 's'}] } } });
schema = new GraphQLSchema({ ...schema.toConfig(), directives: [...schema.getDirectives(), GraphQLDeferDirective, GraphQLStreamDirective] });
const doc = parse(process.argv[2]!);
const r: any = await normalizedExecutor({ schema, document: doc });
if (Symbol.asyncIterator in r) for await (const p of r) console.log(JSON.stringify(p)); else console.log(JSON.stringify(r));
