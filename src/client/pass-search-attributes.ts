import type { Client } from '@temporalio/client';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../contracts/search-attributes.ts';

const registered = new WeakMap<Client, Promise<boolean>>();

/** Whether the client's namespace has both attributes (asked once per client; any error = no). */
export function passSearchAttributesRegistered(client: Client): Promise<boolean> {
  let answer = registered.get(client);
  if (!answer) {
    answer = client.connection.operatorService
      .listSearchAttributes({ namespace: client.options.namespace })
      .then(({ customAttributes }) => Object.keys(PASS_SEARCH_ATTRIBUTE_TYPES).every((name) => customAttributes?.[name] !== undefined))
      .catch(() => false);
    registered.set(client, answer);
  }
  return answer;
}
