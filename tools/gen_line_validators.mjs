// The line validators of trainwire v1 as small JavaScript, generated from the bundle
// (without its annotation keywords: any keyword not listed here is refused).
//
// ajv's standalone code for the same schemas is several times larger: every error is an
// object literal with its message, shared definitions are inlined or compiled once per
// export, and evaluated-property bookkeeping rides along. The contract uses few keywords,
// so this generator writes one function per definition for exactly those keywords and
// throws on any other. It follows ajv's order of checks (the rule groups of the ajv
// instance passed in) and reports the same first error ajv reports with allErrors off:
// instancePath, schemaPath, keyword, params and message. typescript/test/validators.test.ts
// holds it to the ajv-compiled schemas on every conformance line and mutations of them.

const DEF_REF = /^#\/\$defs\/([A-Za-z0-9_]+)$/;

/** ajv's type tests, with strictNumbers (a number must be finite); the longer ones are RUNTIME's. */
const TYPE_TESTS = {
  null: (x) => `${x} === null`,
  boolean: (x) => `typeof ${x} == "boolean"`,
  string: (x) => `typeof ${x} == "string"`,
  number: (x) => `isNumber(${x})`,
  integer: (x) => `isInteger(${x})`,
  object: (x) => `isObject(${x})`,
  array: (x) => `Array.isArray(${x})`,
};

/** The failing condition of ajv's number limits (RUNTIME's COMPARISONS hold their error params). */
const LIMITS = {
  maximum: (x, limit) => `${x} > ${limit}`,
  minimum: (x, limit) => `${x} < ${limit}`,
  exclusiveMaximum: (x, limit) => `${x} >= ${limit}`,
  exclusiveMinimum: (x, limit) => `${x} <= ${limit}`,
};

const RUNTIME = String.raw`
// A pattern test that remembers the last string it matched: consecutive lines repeat their
// event name, run id and phase, and comparing two strings is cheaper than running the pattern.
function lastMatch(pattern) {
  let last;
  return (text) => {
    if (text === last) return true;
    if (!pattern.test(text)) return false;
    last = text;
    return true;
  };
}

// The length of a string in code points, as ajv counts it for minLength and maxLength.
function ucs2length(text) {
  let length = 0;
  for (let at = 0; at < text.length; length++) {
    const code = text.charCodeAt(at++);
    if (code >= 0xd800 && code <= 0xdbff && at < text.length && (text.charCodeAt(at) & 0xfc00) === 0xdc00) at++;
  }
  return length;
}

/** A JSON Pointer segment (a data key in an error's instancePath). */
function pointer(key) {
  return "/" + key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isNumber(x) {
  return typeof x == "number" && isFinite(x);
}

function isInteger(x) {
  return typeof x == "number" && !(x % 1) && !isNaN(x) && isFinite(x);
}

function isObject(x) {
  return x && typeof x == "object" && !Array.isArray(x);
}

// The error params of each keyword, from the keyword's value in the schema.
const PARAM = {
  type: "type",
  required: "missingProperty",
  const: "allowedValue",
  enum: "allowedValues",
  pattern: "pattern",
  format: "format",
  maxLength: "limit",
  minLength: "limit",
  maxItems: "limit",
  minItems: "limit",
  items: "limit",
};
const COMPARISONS = { maximum: "<=", minimum: ">=", exclusiveMaximum: "<", exclusiveMinimum: ">" };

/**
 * ajv's error object, with ajv's English message. The keyword is the schema path's last
 * segment and its params follow from the keyword's value: each check names only the two.
 */
function fail(instancePath, schemaPath, value) {
  const keyword = schemaPath.slice(schemaPath.lastIndexOf("/") + 1);
  const params =
    keyword in COMPARISONS ? { comparison: COMPARISONS[keyword], limit: value } : { [PARAM[keyword]]: value };
  return { instancePath, schemaPath, keyword, params, message: message(keyword, params) };
}

/** fail() of a definition's own required property. */
function failRequired(instancePath, name) {
  return fail(instancePath, "#/required", name);
}

/** fail() of a keyword of a definition's own property: its name is written once. */
function failProperty(instancePath, name, keyword, value) {
  return fail(instancePath + "/" + name, "#/properties/" + name + "/" + keyword, value);
}

function message(keyword, params) {
  switch (keyword) {
    case "type":
      return "must be " + params.type;
    case "required":
      return "must have required property '" + params.missingProperty + "'";
    case "const":
      return "must be equal to constant";
    case "enum":
      return "must be equal to one of the allowed values";
    case "pattern":
    case "format":
      return "must match " + keyword + ' "' + params[keyword] + '"';
    case "maxLength":
      return "must NOT have more than " + params.limit + " characters";
    case "minLength":
      return "must NOT have fewer than " + params.limit + " characters";
    case "maxItems":
    case "items":
      return "must NOT have more than " + params.limit + " items";
    case "minItems":
      return "must NOT have fewer than " + params.limit + " items";
    default:
      return "must be " + params.comparison + " " + params.limit;
  }
}

/** A validator in ajv's shape: a type guard leaving the first error in ${"`errors`"}. */
function validator(check) {
  function validate(data) {
    const error = check(data, "");
    validate.errors = error === undefined ? null : [error];
    return error === undefined;
  }
  return validate;
}
`;

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** The instance path of a definition's own property (`p + "/name"`), its name needing no escape. */
const OWN_PROPERTY = /^p \+ "\/([^"\\~/]+)"$/;
const member = (x, name) => (identifier.test(name) ? `${x}.${name}` : `${x}[${JSON.stringify(name)}]`);
const escapePointer = (segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1");
const literal = (value) => JSON.stringify(value);
const indent = (lines) => lines.map((line) => `  ${line}`);

/**
 * Source of an ES module exporting `validate<Name>` for each name in `exported` (definitions
 * of `bundle`), built on the rule groups `rules` of the ajv instance whose behaviour it copies.
 * `formatsSource` is a CommonJS module exporting the format functions by name.
 */
export function lineValidatorsSource({ bundle, exported, rules, formatsSource }) {
  const defs = bundle.$defs;
  const groups = [...rules.rules, rules.post];
  const known = new Set(groups.flatMap((group) => group.rules.map((rule) => rule.keyword)));
  const hoisted = []; // helper functions (anyOf branches, propertyNames), in order of creation
  const patterns = new Map(); // pattern source -> constant name
  const pending = [...exported];
  const emitted = new Set();
  let loops = 0;

  const checkName = (def) => `check${def}`;
  const refName = (ref) => {
    const match = DEF_REF.exec(ref);
    if (match === null || !(match[1] in defs)) throw new Error(`unsupported $ref ${ref}`);
    if (!emitted.has(match[1]) && !pending.includes(match[1])) pending.push(match[1]);
    return checkName(match[1]);
  };
  const patternName = (source) => {
    if (!patterns.has(source)) patterns.set(source, `pattern${patterns.size}`);
    return patterns.get(source);
  };

  /** A function `(d, p) => error | undefined` for a subschema checked apart (anyOf, propertyNames). */
  const subcheck = (schema, schemaPath) => {
    const keys = Object.keys(schema);
    if (keys.length === 1 && keys[0] === "$ref") return refName(schema.$ref);
    const index = hoisted.length;
    hoisted.push(""); // the name is taken before nested subchecks take the next ones
    hoisted[index] = functionSource(`branch${index}`, schema, schemaPath);
    return `branch${index}`;
  };

  const functionSource = (name, schema, schemaPath) => {
    const body = statements(schema, "d", "p", schemaPath);
    const usesError = body.some((line) => line.includes("(e = "));
    return [`function ${name}(d, p) {`, ...indent([...(usesError ? ["let e;"] : []), ...body]), "}"].join("\n");
  };

  /** Statements that return the first error of `x` (at instancePath expression `p`) against `schema`. */
  function statements(schema, x, p, schemaPath) {
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
      throw new Error(`${schemaPath}: only object schemas are supported`);
    }
    const keys = Object.keys(schema);
    if (keys.includes("$ref")) {
      if (keys.length !== 1) throw new Error(`${schemaPath}: $ref beside other keywords is not supported`);
      return [`if ((e = ${refName(schema.$ref)}(${x}, ${p}))) return e;`];
    }
    for (const key of keys) {
      if (key !== "type" && !(key in KEYWORDS)) throw new Error(`${schemaPath}: keyword ${key} is not supported`);
      if (!known.has(key)) throw new Error(`${schemaPath}: keyword ${key} is unknown to ajv`);
    }
    if (schema.properties !== undefined && schema.additionalProperties !== undefined) {
      throw new Error(`${schemaPath}: properties beside additionalProperties is not supported`);
    }
    const types = schema.type === undefined ? [] : [].concat(schema.type);
    const applies = (rule) => rule.keyword !== "type" && schema[rule.keyword] !== undefined;
    const used = (group) => group.rules.some(applies);
    const typeGroup = types.length === 1 ? groups.find((group) => group.type === types[0]) : undefined;
    // ajv tests a single type with keywords of its own in that type's group, after the untyped keywords.
    const deferred = typeGroup !== undefined && used(typeGroup);
    const typeError = `return fail(${p}, ${literal(`${schemaPath}/type`)}, ${literal(schema.type)});`;
    const out = [];
    if (types.length > 0 && !deferred) out.push(`if (!(${types.map((type) => `(${TYPE_TESTS[type](x)})`).join(" || ")})) ${typeError}`);
    for (const group of groups) {
      if (!used(group)) continue;
      const body = group.rules
        .filter(applies)
        .flatMap((rule) => KEYWORDS[rule.keyword]({ schema, value: schema[rule.keyword], group: group.type, x, p, schemaPath: `${schemaPath}/${rule.keyword}` }));
      const elseType = deferred && group === typeGroup;
      if (group.type === undefined) out.push(...body);
      else if (body.length > 0 || elseType) out.push(`if (${TYPE_TESTS[group.type](x)}) {`, ...indent(body), elseType ? `} else ${typeError}` : "}");
    }
    return out;
  }

  // the schema path ends with the keyword: \`fail\` finds it there, and its params from \`value\`
  const failWith = (p, schemaPath, value) => {
    if (p === "p" && schemaPath === "#/required") return `return failRequired(p, ${literal(value)});`;
    const property = OWN_PROPERTY.exec(p);
    const keyword = property && schemaPath.startsWith(`#/properties/${property[1]}/`) && schemaPath.slice(`#/properties/${property[1]}/`.length);
    if (keyword && !keyword.includes("/")) return `return failProperty(p, ${literal(property[1])}, ${literal(keyword)}, ${literal(value)});`;
    return `return fail(${p}, ${literal(schemaPath)}, ${literal(value)});`;
  };
  const primitive = (value, schemaPath) => {
    if (value !== null && typeof value === "object") throw new Error(`${schemaPath}: only primitive values are supported`);
    return literal(value);
  };

  const KEYWORDS = {
    const: ({ value, x, p, schemaPath }) => [`if (${x} !== ${primitive(value, schemaPath)}) ${failWith(p, schemaPath, value)}`],
    enum: ({ value, x, p, schemaPath }) => [
      `if (!(${value.map((item) => `${x} === ${primitive(item, schemaPath)}`).join(" || ")})) ${failWith(p, schemaPath, value)}`,
    ],
    allOf: ({ value, x, p, schemaPath }) => value.flatMap((sub, index) => statements(sub, x, p, `${schemaPath}/${index}`)),
    // The first branch's first error, when no branch holds (ajv's errors[0] then).
    anyOf: ({ value, x, p, schemaPath }) => {
      const [first, ...rest] = value.map((sub, index) => `${subcheck(sub, `${schemaPath}/${index}`)}(${x}, ${p})`);
      return [`if ((e = ${first})${rest.map((call) => ` && ${call}`).join("")}) return e;`];
    },
    ...Object.fromEntries(
      Object.entries(LIMITS).map(([keyword, failing]) => [
        keyword,
        ({ value, group, x, p, schemaPath }) => (group !== "number" ? [] : [`if (${failing(x, literal(value))}) ${failWith(p, schemaPath, value)}`]),
      ]),
    ),
    maxLength: ({ value, x, p, schemaPath }) => [`if (ucs2length(${x}) > ${literal(value)}) ${failWith(p, schemaPath, value)}`],
    minLength: ({ value, x, p, schemaPath }) => [`if (ucs2length(${x}) < ${literal(value)}) ${failWith(p, schemaPath, value)}`],
    maxItems: ({ value, x, p, schemaPath }) => [`if (${x}.length > ${literal(value)}) ${failWith(p, schemaPath, value)}`],
    minItems: ({ value, x, p, schemaPath }) => [`if (${x}.length < ${literal(value)}) ${failWith(p, schemaPath, value)}`],
    // a tuple: each item present against its own schema (ajv's order), at its index
    prefixItems: ({ value, x, p, schemaPath }) =>
      value.flatMap((sub, index) => [`if (${x}.length > ${index}) {`, ...indent(statements(sub, `${x}[${index}]`, `${p} + "/${index}"`, `${schemaPath}/${index}`)), "}"]),
    // every item against one schema (2020-12 `items`), each error at the item's index
    items: ({ schema, value, x, p, schemaPath }) => {
      // `items: false` after `prefixItems`: no item past the tuple's
      if (value === false && Array.isArray(schema.prefixItems)) {
        return [`if (${x}.length > ${schema.prefixItems.length}) ${failWith(p, schemaPath, schema.prefixItems.length)}`];
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${schemaPath}: only a single items schema is supported`);
      const index = `item${loops++}`;
      return [`for (let ${index} = 0; ${index} < ${x}.length; ${index}++) {`, ...indent(statements(value, `${x}[${index}]`, `${p} + "/" + ${index}`, schemaPath)), "}"];
    },
    pattern: ({ value, x, p, schemaPath }) => [`if (!${patternName(value)}(${x})) ${failWith(p, schemaPath, value)}`],
    format: ({ value, group, x, p, schemaPath }) => {
      if (group !== "string") return [];
      if (value !== "date-time") throw new Error(`${schemaPath}: format ${value} is not supported`);
      return [`if (!formats[${literal(value)}](${x})) ${failWith(p, schemaPath, value)}`];
    },
    required: ({ value, x, p, schemaPath }) => value.map((name) => `if (${member(x, name)} === void 0) ${failWith(p, schemaPath, name)}`),
    properties: ({ value, x, p, schemaPath }) =>
      Object.entries(value).flatMap(([name, sub]) => {
        if (Object.keys(sub).length === 0) return []; // always valid (ajv skips it too)
        // the value in a local: a minifier shortens its name, not the property's
        const data = `value${loops++}`;
        return [
          `const ${data} = ${member(x, name)};`,
          `if (${data} !== void 0) {`,
          ...indent(statements(sub, data, `${p} + ${literal(`/${escapePointer(name)}`)}`, `${schemaPath}/${escapePointer(name)}`)),
          "}",
        ];
      }),
    additionalProperties: ({ value, x, p, schemaPath }) => {
      const key = `key${loops++}`;
      return [`for (const ${key} in ${x}) {`, ...indent(statements(value, `${x}[${key}]`, `${p} + pointer(${key})`, schemaPath)), "}"];
    },
    // ajv reports the name's error at the object, with the name in `propertyName`.
    propertyNames: ({ value, x, p, schemaPath }) => {
      const key = `key${loops++}`;
      const check = subcheck(value, schemaPath);
      return [`for (const ${key} in ${x}) {`, `  if ((e = ${check}(${key}, ${p}))) return e.propertyName = ${key}, e;`, "}"];
    },
  };

  const definitions = [];
  while (pending.length > 0) {
    const def = pending.shift();
    emitted.add(def);
    definitions.push(functionSource(checkName(def), defs[def], "#"));
  }

  return [
    "const formats = (() => {",
    "  const module = { exports: {} };",
    ...indent(formatsSource.trim().split("\n")),
    "  return module.exports;",
    "})();",
    RUNTIME,
    ...[...patterns].map(([source, name]) => `const ${name} = lastMatch(new RegExp(${literal(source)}, "u"));`),
    "",
    ...definitions.flatMap((source) => [source, ""]),
    ...hoisted.flatMap((source) => [source, ""]),
    ...exported.map((def) => `export const validate${def} = /* @__PURE__ */ validator(${checkName(def)});`),
  ].join("\n");
}
