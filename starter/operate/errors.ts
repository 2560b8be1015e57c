/** A finding the user must act on (no such object, nothing running): one `error:` line, exit 1. */
export class OperateError extends Error {}
