// The public door to the generated standalone validators (ajv, compiled at build time).

export * from "./generated/validate-harness.js";
export * from "./generated/validate-line.js";
export * from "./generated/validate-reader-state.js";
export * from "./generated/validate-verdict.js";
export type { ValidationError, Validator } from "./generated/validator.js";
