/**
 * A model provider that cannot be used at all: bad or missing key, server not answering, unknown
 * model. Thrown only when the user named the provider; the CLI maps it to exit code 5.
 */
export class ProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProviderError";
  }
}
