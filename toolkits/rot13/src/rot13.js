// rot13: stdin with every ASCII letter rotated by 13 places.
const text = std.in.readAsString();
std.out.puts(
  text.replace(/[a-z]/gi, (c) => {
    const base = c <= "Z" ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  }),
);
