// Preloaded into a measured process (node --import): at exit, appends the process's own CPU time (user + system,
// in ms) as one line to the file in BENCH_CPU_FILE, so a bench can read what a whole CLI run cost without its children.
import { appendFileSync } from "node:fs";

const file = process.env.BENCH_CPU_FILE;
if (file) {
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(file, `${(user + system) / 1000}\n`);
  });
}
