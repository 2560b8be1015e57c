import type { Command } from 'commander';

/** Parses args with exactly `env` as the environment of cmd's variables (the test process's own are hidden). */
export function parseWithEnv(cmd: Command, args: string[], env: NodeJS.ProcessEnv): Command {
  cmd.exitOverride().configureOutput({ writeErr: () => undefined });
  const names = cmd.options.map((o) => o.envVar).filter((v): v is string => v !== undefined);
  const saved = names.map((n) => [n, process.env[n]] as const);
  for (const n of names) {
    if (env[n] === undefined) delete process.env[n];
    else process.env[n] = env[n];
  }
  try {
    return cmd.parse(args, { from: 'user' });
  } finally {
    for (const [n, v] of saved) {
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
    }
  }
}
