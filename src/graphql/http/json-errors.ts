/** The HTTP layer's own error responses: JSON, readable by gateways (`message`) and GraphQL clients (`errors`). */

export function jsonErrorBody(message: string): string {
  return JSON.stringify({ message, errors: [{ message }] });
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonErrorResponse(
  ResponseCtor: typeof Response,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new ResponseCtor(jsonErrorBody(message), {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
  });
}
