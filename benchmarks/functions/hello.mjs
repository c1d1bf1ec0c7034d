// The hello-world handler of the functions bench, as Deno source: Strata runs it as a deployed
// function (HELLO_FUNCTION), the proxied floor (proxied-floor.mjs) serves the same handler itself.
export const HELLO_HANDLER = `() => {
  const body = JSON.stringify({ message: 'Hello World' });
  return new Response(body, { headers: { 'content-type': 'application/json' } });
}`;

/** The function's source as deployed to Strata. */
export const HELLO_FUNCTION = `Deno.serve(${HELLO_HANDLER});\n`;
