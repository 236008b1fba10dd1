// A `plugin` world component: counts how often each input was seen, in
// the tenant's kv. `run` returning a string is `ok`; throwing is `err`.
import { get, set } from "workbooks:engine/kv@0.1.0";

export function run(input) {
  const key = `seen:${input}`;
  const current = get(key);
  const count = current === undefined ? 1 : Number(new TextDecoder().decode(current)) + 1;
  set(key, new TextEncoder().encode(String(count)));
  return `${input} seen ${count} time(s)`;
}
