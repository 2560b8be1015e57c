/** The accounts every active namespace gets, as upstream's default options name them. */
export const ENSURED_SERVICE_ACCOUNTS: readonly string[] = ['default'];

/** What a namespace lacks; only active namespaces are owed anything (a terminating one refuses creates). */
export function missingServiceAccounts(active: boolean, present: readonly string[]): string[] {
  if (!active) return [];
  return ENSURED_SERVICE_ACCOUNTS.filter((n) => !present.includes(n));
}
