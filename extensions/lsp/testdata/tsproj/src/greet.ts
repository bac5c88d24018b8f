/** Returns a greeting for name. */
export function hello(name: string): string {
  return `Hello, ${name}!`;
}
