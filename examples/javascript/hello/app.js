// A wasi:cli command in JavaScript: `run` is the command's entry point.
export const run = {
  run() {
    console.log("hello from javascript");
  },
};
