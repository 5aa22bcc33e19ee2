// One node of a Swagger 2.0 / OpenAPI schema, as far as the emulator reads it.
export interface SchemaNode {
  $ref?: string;
  /** A list where KubeVirt's Swagger writes a union: ["string", "number"], ["string", "null"]. */
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  required?: string[];
  nullable?: boolean;
  default?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  [extension: string]: unknown;
}
