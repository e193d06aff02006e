/**
 * A Markdown file imported as its text: the agents' prompts and the models' preamble, bundled by
 * the build (esbuild's text loader) and by the tests' config alike.
 */
declare module "*.md" {
  const text: string;
  export default text;
}
