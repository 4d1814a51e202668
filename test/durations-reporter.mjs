/**
 * A `node:test` reporter that writes one line for each top-level test or suite that ended: its file and how long it
 * took (`{"file":…,"ms":…}`). ./bundle-tests.mjs balances the test processes on these figures.
 */
export default async function* durations(source) {
  for await (const event of source) {
    if ((event.type === "test:pass" || event.type === "test:fail") && event.data.nesting === 0 && event.data.file)
      yield `${JSON.stringify({ file: event.data.file, ms: event.data.details.duration_ms })}\n`;
  }
}
