// Package tools owns the partner tool registry: PUT/GET/DELETE
// /v1/tools/{name} (scope tools:write), and the check of every proposed
// action's input against its tool's JSON Schema before the person sees it.
//
// Invariants:
//   - A tool's input_schema compiles (JSON Schema 2020-12 by default, or the
//     draft its $schema names) with santhosh-tekuri/jsonschema and is an
//     object schema (the OpenAI tools format needs one). References resolve
//     only inside the schema: no file or network is ever read.
//   - A partner has at most Config.MaxPerPartner tools (the Partner API's 25);
//     another partner's tools are invisible (404), never merely forbidden.
//   - Errors name the JSON path of the fault: input_schema/... for a bad
//     schema, input/... for a bad proposal; an input's errors never quote
//     its values (they are logged).
//   - Work per request is bounded before it is spent: a schema's depth,
//     value count and numbers are checked on its bytes before it is
//     decoded (tools.max_schema_depth, tools.max_schema_nodes), each
//     pattern's program size and all patterns' together before they
//     compile, and the compiled schema's $ref fan-out before it is
//     accepted; an input's size, depth and numbers likewise, then the
//     evaluations its check would take (maxInputCost) before the
//     validator runs. Worst accepted cases: BenchmarkCompileWorst and
//     BenchmarkValidateWorst (target < 50 ms of CPU each).
//   - Compiled schemas (and refusals) are cached by partner and SHA-256 of
//     the compact schema, at most maxCached; at most half the CPUs compile
//     at once.
package tools
