// The part of fastify's logger the coordination code writes to.
export interface CoordinationLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}
