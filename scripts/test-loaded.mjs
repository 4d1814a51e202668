/**
 * `npm run test:loaded`: the whole test suite with the CPU kept busy beside it, as on a shared CI machine or a laptop
 * that compiles something meanwhile. A test that passes only on an idle machine is a bug: a timing window shorter than
 * a setting the user controls, or a fixed sleep where an event could be awaited.
 *
 * It starts busy loops (twice as many as there are cores, at normal priority: the tests get about a third of the CPU
 * they would have), runs `npm test`, stops the loops whatever happens, and exits with the tests' status.
 * `TEST_LOAD_PROCESSES` sets how many loops run.
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

const count = Number(process.env.TEST_LOAD_PROCESSES ?? availableParallelism() * 2);
const hogs = Array.from({ length: count }, () => spawn(process.execPath, ["-e", "for (;;);"], { stdio: "ignore" }));
const stopHogs = () => {
  for (const hog of hogs) hog.kill("SIGKILL");
};
process.on("exit", stopHogs);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopHogs();
    process.exit(130);
  });
}
console.log(`test:loaded: ${count} busy loops beside the tests`);
const started = Date.now();
const tests = spawn("npm", ["test"], { stdio: "inherit" });
tests.on("exit", (code, signal) => {
  stopHogs();
  console.log(
    `test:loaded: npm test ${signal ? `ended by ${signal}` : `exited with ${code}`} after ${Math.round((Date.now() - started) / 1000)} s`,
  );
  process.exit(code ?? 1);
});
