// wordfreq [N]: the N (default 10) most frequent words of stdin, one
// "count word" line each, most frequent first, ties in word order.
const arg = scriptArgs.length > 0 ? Number(scriptArgs[0]) : 10;
const limit = Number.isInteger(arg) && arg > 0 ? arg : 10;
const text = std.in.readAsString();
const counts = new Map();
for (const word of text.toLowerCase().match(/[a-z0-9']+/g) || []) {
  counts.set(word, (counts.get(word) || 0) + 1);
}
const rows = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
for (const [word, count] of rows.slice(0, limit)) {
  std.out.puts(`${count} ${word}\n`);
}
