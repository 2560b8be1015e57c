import { Command, InvalidArgumentError } from 'commander';

/** Exit code for usage errors, as kube-controller-manager (cobra) and most CLIs use. */
export const USAGE_EXIT_CODE = 2;

/**
 * An action's argument checks throw InvalidArgumentError; commander reports only its own parse
 * errors as usage errors, so the action's are turned into one here: message, usage, exit code 2.
 */
export function withUsageErrors<A extends unknown[]>(cmd: Command, action: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (e) {
      if (e instanceof InvalidArgumentError) cmd.error(`error: ${e.message}`, { exitCode: USAGE_EXIT_CODE, code: 'temporal-kcm.invalidArgument' });
      throw e;
    }
  };
}
